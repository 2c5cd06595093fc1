//! What a newcomer broke (issue 44): every command bounded in memory and
//! work, checks that check nothing fail, readers that refuse a run they
//! cannot trust, positions no game reaches said so, tests that read no host
//! Slurm, and the messages a newcomer met. One test per row it guards.

use std::path::Path;

use crate::support::{
    exits, gt, in_own_process, job_path, ok, output_with_rusage, plan_cmd, run_cmd, show, text,
    write_job,
};

/// A `chomp-boxes` job file listing `boxes`.
fn boxes_job(
    dir: &Path,
    name: &str,
    boxes: impl Iterator<Item = (u32, u32)>,
) -> std::path::PathBuf {
    let list: Vec<String> = boxes.map(|(r, c)| format!("[{r}, {c}]")).collect();
    write_job(
        dir,
        name,
        &format!("kind = \"chomp-boxes\"\nboxes = [{}]\n", list.join(", ")),
    )
}

/// Row 1: `plan` kept the ranking tables of every box, so its memory grew
/// with the square of the boxes (10,000 boxes `[1, k]`: 1.97 GB). Now
/// 10,000 boxes plan, and 60,000 are refused, each within 100 MB.
#[test]
fn plan_memory_is_linear_in_the_boxes_and_60000_boxes_are_refused_within_100_mb() {
    if !in_own_process(
        "newcomer::plan_memory_is_linear_in_the_boxes_and_60000_boxes_are_refused_within_100_mb",
    ) {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = boxes_job(t.path(), "b10k.toml", (1..=10_000).map(|k| (1, k)));
    let (o, ru) = output_with_rusage(gt().arg("plan").arg(&job));
    assert!(o.status.success(), "{}", show(&o));
    assert!(text(&o).contains("10000 job(s)"), "{}", show(&o));
    assert!(
        ru.ru_maxrss < 100 << 10,
        "10,000 boxes: {} KiB",
        ru.ru_maxrss
    );

    let job = boxes_job(
        t.path(),
        "b60k.toml",
        (1..=3).flat_map(|r| (1..=20_000).map(move |c| (r, c))),
    );
    let (o, ru) = output_with_rusage(gt().arg("plan").arg(&job));
    assert!(!o.status.success());
    assert!(
        text(&o).contains("20000 jobs a plan may have"),
        "{}",
        show(&o)
    );
    assert!(
        ru.ru_maxrss < 100 << 10,
        "60,000 boxes: {} KiB",
        ru.ru_maxrss
    );
}

/// Row 1: job files have a size cap; `plan /dev/zero` read 2.1 GB.
#[test]
fn a_job_file_over_1_mib_is_refused_unread() {
    let out = exits(gt().args(["plan", "/dev/zero"]), 1);
    assert!(out.contains("larger than 1 MiB"), "{out}");
    // The place of an error without one is not printed as ":0:0".
    assert!(!out.contains(":0:0"), "{out}");
}

/// Row 1: a small job file whose boxes split into more jobs, or more
/// input references, than a plan may have is refused before they are
/// listed, each limit saying its own name.
#[test]
fn a_plan_of_more_than_20000_jobs_or_500000_inputs_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let with_window = |name: &str, boxes: Vec<(u32, u32)>, window: u64| {
        let job = boxes_job(t.path(), name, boxes.into_iter());
        let mut text = std::fs::read_to_string(&job).unwrap();
        text.push_str(&format!("window_positions = {window}\n"));
        std::fs::write(&job, text).unwrap();
        job
    };
    // 1×c boxes, c = 14,000 … 19,999, in windows of 5,056 ranks (5,000
    // rounded up to 64): 3 or 4 parts each, about 22,800 jobs, but few
    // input references (at most 6 a box).
    let job = with_window(
        "jobs.toml",
        (14_000..20_000).map(|c| (1, c)).collect(),
        5000,
    );
    let out = exits(gt().arg("plan").arg(&job), 1);
    assert!(
        out.contains("above the 20000 jobs a plan may have"),
        "{out}"
    );
    // Two boxes of 45,000–64,000 staircases in windows of 64: about 700
    // parts each, each reading every earlier part of its box.
    let job = with_window("inputs.toml", vec![(2, 300), (2, 356)], 64);
    let out = exits(gt().arg("plan").arg(&job), 1);
    assert!(out.contains("above the 500000 a plan may have"), "{out}");
}

/// Row 2: an octal query said "more than about a second" and ran for
/// hours (n = 4,000,000 was accepted). Its time model now refuses at once
/// what it estimates to take over `--time-limit`, and answers what fits.
#[test]
fn an_octal_query_over_its_time_limit_is_refused_by_its_estimate() {
    let out = exits(gt().args(["query", "octal", "0.76", "--n", "4000000"]), 1);
    assert!(out.contains("by its estimate"), "{out}");
    assert!(out.contains("run an `octal` job"), "{out}");
    assert!(!out.contains("computing"), "nothing computed: {out}");
    let out = exits(
        gt().args([
            "query",
            "octal",
            "0.76",
            "--n",
            "100000",
            "--time-limit",
            "5",
        ]),
        1,
    );
    assert!(out.contains("more than the 5 s allowed"), "{out}");
    // Kayles to 20,000 is well within the default limit.
    let o = ok(gt().args(["query", "octal", "0.77", "--n", "20000", "--json"]));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["n"], 20000);
}

/// Row 5: `verify --full --jobs reach-…` printed "Quixo positions of 0 of
/// the run's layers … 0 of 0 checked (100.0%)", a line that reads as
/// success; a kind of value none of which was selected now says so.
#[test]
fn verify_full_says_none_selected_instead_of_100_percent_of_nothing() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("q3");
    ok(&mut run_cmd(&job_path("quixo-3"), &run));
    let o = ok(gt()
        .arg("verify")
        .arg(&run)
        .args(["--full", "--jobs", "reach-0-0"]));
    let out = text(&o);
    assert!(out.contains("none selected, nothing checked"), "{out}");
    assert!(!out.contains("0 of 0 checked"), "{out}");
    assert!(out.contains("reachable bits"), "{out}");
}

/// Row 6: `report` exited 0 on an unmerged or damaged run, and `status`
/// said "merged" after a table was edited. Now `status` names the table,
/// and `report` and `plot` refuse such a run.
#[test]
fn report_plot_and_status_notice_an_unmerged_or_edited_run() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    // Planned only: not merged.
    ok(&mut plan_cmd(&job_path("octal-kayles"), &run));
    for cmd in ["report", "plot"] {
        let out = exits(gt().arg(cmd).arg(&run), 1);
        assert!(out.contains("not merged yet"), "{cmd}: {out}");
    }
    ok(&mut run_cmd(&job_path("octal-kayles"), &run));
    ok(gt().arg("report").arg(&run));
    let table = std::fs::read_dir(run.join("tables"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes.push(b'\n');
    std::fs::write(&table, bytes).unwrap();
    let o = gt().arg("status").arg(&run).output().unwrap();
    let out = text(&o);
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        out.contains(&format!("{name} (changed)")) && !out.contains("; merged, root"),
        "{out}"
    );
    for cmd in ["report", "plot"] {
        let out = exits(gt().arg(cmd).arg(&run), 1);
        assert!(out.contains("not the merge of its shards"), "{cmd}: {out}");
    }
}

/// Row 7: `query quixo --n 3 --position "X:XXX/XXX/XXX"` answered "win in
/// 0" as if the board could arise. It is said unreachable (the value is
/// still given), from memory and from a run's reachability jobs.
#[test]
fn a_quixo_position_no_game_reaches_is_said_unreachable() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("q3");
    ok(&mut run_cmd(&job_path("quixo-3"), &run));
    let q = |pos: &str, run_dir: Option<&Path>| {
        let mut c = gt();
        c.args(["query", "quixo", "--n", "3", "--position", pos, "--json"]);
        if let Some(d) = run_dir {
            c.arg("--run-dir").arg(d);
        }
        let o = ok(&mut c);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    for dir in [None, Some(run.as_path())] {
        assert_eq!(q("X:XXX/XXX/XXX", dir)["reachable"], false, "{dir:?}");
        assert_eq!(q("O:X../.../...", dir)["reachable"], true, "{dir:?}");
    }
    let o = ok(gt().args(["query", "quixo", "--n", "3", "--position", "X:XXX/XXX/XXX"]));
    assert!(text(&o).contains("unreachable"), "{}", show(&o));
}

/// Row 9: a test read the host's `sinfo` (a cluster's login node has one)
/// and failed there. The binary the tests run finds no Slurm command of the
/// host; a dry run with a `sinfo` that hangs goes on after a few seconds,
/// saying so, and asks for the memory the plan says.
#[test]
fn tests_read_no_host_slurm_and_a_hanging_sinfo_is_not_waited_for() {
    // With no PATH of its own, the command finds no Slurm: the dry run
    // assumes the default array size and names no node limit. (Unless the
    // tests were told to keep the host's PATH, for a real cluster.)
    if std::env::var_os(crate::support::HOST_PATH_ENV).is_none() {
        let t = tempfile::tempdir().unwrap();
        let o = ok(gt()
            .arg("run")
            .arg(job_path("dodgem-3"))
            .arg("--run-dir")
            .arg(t.path().join("run"))
            .args(["--executor", "slurm", "--dry-run"]));
        let out = text(&o);
        assert!(out.contains("(assumed: no `scontrol` on PATH)"), "{out}");
        assert!(!out.contains("node limits unknown"), "{out}");
    }
    let t = tempfile::tempdir().unwrap();
    let bin = t.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["sinfo", "scontrol"] {
        let p = bin.join(name);
        std::fs::write(&p, "#!/bin/sh\nexec sleep 60\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let o = ok(gt()
        .arg("run")
        .arg(job_path("dodgem-6"))
        .arg("--run-dir")
        .arg(t.path().join("run"))
        .args(["--executor", "slurm", "--dry-run"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display())));
    let out = text(&o);
    assert!(out.contains("`sinfo` did not answer within 5 s"), "{out}");
    assert!(out.contains("`scontrol show config` failed"), "{out}");
    // The (5, 5) layer's ~180 GB, not capped by any node.
    let mem = out
        .split("# ---- ")
        .find(|s| s.contains("# layer-5-5\n"))
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("#SBATCH --mem=")))
        .and_then(|m| m.trim_end_matches('M').parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no --mem for layer-5-5: {out}"));
    assert!(mem > 150_000, "{mem} MiB");
}

/// Row 11: the text a newcomer met.
#[test]
fn the_messages_a_newcomer_met_are_plain() {
    // A stray backtick and an unclosed parenthesis.
    let out = exits(gt().args(["query", "dodgem", "--n", "6"]), 1);
    assert!(
        out.contains("dodgem-6-endgame.toml` first (`query` then finds runs/dodgem-6-endgame), or pass --run-dir"),
        "{out}"
    );
    // A Quixo position without a side names the notation.
    let out = exits(
        gt().args(["query", "quixo", "--n", "3", "--position", "XXX/XXX/XXX"]),
        2,
    );
    assert!(out.contains("`X:` or `O:` before the ranks"), "{out}");
    let t = tempfile::tempdir().unwrap();
    // A quoted number, in a Quixo and a Dodgem job file.
    let q = write_job(t.path(), "q.toml", "kind = \"quixo\"\nn = \"4\"\n");
    let out = exits(gt().arg("plan").arg(&q), 1);
    assert!(
        out.contains("`n`: invalid type: string") && out.contains("without quotes"),
        "{out}"
    );
    let d = write_job(t.path(), "d.toml", "kind = \"dodgem\"\nn = \"4\"\n");
    let out = exits(gt().arg("plan").arg(&d), 1);
    assert!(out.contains("without quotes"), "{out}");
    // An integer above what TOML holds.
    let o = write_job(
        t.path(),
        "o.toml",
        "kind = \"octal\"\ncode = \"0.77\"\nn_max = 18446744073709551615\n",
    );
    let out = exits(gt().arg("plan").arg(&o), 1);
    assert!(
        out.contains("number too large") && out.contains("9223372036854775807"),
        "{out}"
    );
    // A run directory that does not exist.
    let out = exits(
        gt().args([
            "query",
            "dodgem",
            "--n",
            "5",
            "--run-dir",
            "/nonexistent/run",
        ]),
        1,
    );
    assert!(out.contains("does not exist"), "{out}");
}

/// Row 1, found again by a newcomer: a census job file of `n_max = 130`
/// planned 3,600 jobs reading millions of shards in 1.46 GB; every kind's
/// counted plan now has the same bounds as a box list.
#[test]
fn a_census_plan_over_the_input_bound_is_refused_at_once() {
    if !in_own_process("newcomer::a_census_plan_over_the_input_bound_is_refused_at_once") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let job = write_job(
        t.path(),
        "c130.toml",
        "kind = \"chomp-census\"\nn_max = 130\n",
    );
    let (o, ru) = output_with_rusage(gt().arg("plan").arg(&job));
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        text(&o).contains("above the 500000 a plan may have"),
        "{}",
        show(&o)
    );
    assert!(ru.ru_maxrss < 100 << 10, "{} KiB", ru.ru_maxrss);
}

/// Left over from the newcomer's list: `plot` on a kind that draws no
/// pictures (here `chomp-boxes`) made an empty `plots/` folder. It says so
/// and leaves none.
#[test]
fn plot_of_a_kind_without_pictures_leaves_no_empty_folder() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("boxes");
    let job = t.path().join("boxes.toml");
    std::fs::write(&job, "kind = \"chomp-boxes\"\nboxes = [[3, 4]]\n").unwrap();
    ok(&mut run_cmd(&job, &run));
    let o = ok(gt().arg("plot").arg(&run));
    assert!(text(&o).contains("draws no pictures"), "{}", text(&o));
    assert!(!run.join("plots").exists(), "an empty plots/ was made");
}
