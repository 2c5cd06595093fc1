//! Chomp boxes split into rank windows (`box-RxC-part-K`): the same tables
//! as one job, for any split and thread count; the parts' bits laid end to
//! end are the single job's bits; resume after a killed coordinator; the
//! plans of the 20×20 and 22×22 boxes.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use gametables::pipeline::shard::ShardFile;

use crate::support::{
    assert_plan_summary, gt, job_path, ok, plan, plan_cmd, repo, result, run_cmd, run_job_ok,
    shard_times, sigkill, table_digests, text, wait_until, write_job,
};

/// Writes a `chomp-boxes` job file with `extra` lines into `root`.
fn job_file(root: &Path, name: &str, boxes: &str, extra: &str) -> PathBuf {
    write_job(
        root,
        &format!("{name}.toml"),
        &format!("kind = \"chomp-boxes\"\nboxes = {boxes}\n{extra}"),
    )
}

fn run(job: &Path, dir: &Path) -> Output {
    run_job_ok(job, dir)
}

fn table(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join("tables").join(name)).unwrap()
}

/// The box's P-bits: the `p-positions` sections of its jobs, in plan order,
/// laid end to end (windows start at multiples of 64 ranks).
fn box_bits(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for j in &plan(dir).jobs {
        let f = ShardFile::open(&dir.join("shards").join(format!("{}.shard", j.id))).unwrap();
        out.extend(f.read_section("p-positions").unwrap());
    }
    out
}

/// The job file `root/split.toml`: the box `[[n, n]]` in windows of `window` ranks.
fn split_job(root: &Path, n: u32, window: u64) -> PathBuf {
    let extra = format!("window_positions = {window}\n");
    job_file(root, "split", &format!("[[{n}, {n}]]"), &extra)
}

/// Runs the box `[[n, n]]` as one job into `root/one`, and split into
/// windows of `window` ranks into `root/split`: the two run directories and
/// the split run's output.
fn one_and_split(root: &Path, n: u32, window: u64) -> (PathBuf, PathBuf, Output) {
    let one = job_file(root, "one", &format!("[[{n}, {n}]]"), "");
    let split = split_job(root, n, window);
    let (a, b) = (root.join("one"), root.join("split"));
    run(&one, &a);
    let o = run(&split, &b);
    (a, b, o)
}

/// The `n`×`n` box's tables of runs `a` and `b` are the same bytes.
fn assert_same_box_tables(a: &Path, b: &Path, n: u32) {
    for name in [
        "rectangles.csv".to_string(),
        "multi-winning.csv".to_string(),
        "boxes.csv".to_string(),
        format!("sizes-{n}x{n}.csv"),
    ] {
        assert!(table(a, &name) == table(b, &name), "{name} differs");
    }
}

/// Acceptance 1 (issue 12): the 14×14 box solved in 3 parts gives the
/// single job's `rectangles.csv`, `multi-winning.csv`, P-position count
/// and per-size table, byte for byte.
#[test]
fn split_14x14_gives_the_single_jobs_tables() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, o) = one_and_split(t.path(), 14, 14_000_000);
    let names: Vec<String> = plan(&b).jobs.iter().map(|j| j.name.clone()).collect();
    assert_eq!(
        names,
        ["box-14x14-part-1", "box-14x14-part-2", "box-14x14-part-3"],
        "{}",
        text(&o)
    );
    assert_eq!(
        plan(&b).jobs[2].inputs.len(),
        2,
        "part 3 reads parts 1 and 2"
    );
    assert_same_box_tables(&a, &b, 14);
    // 40,116,600 ranks, the empty board excluded; the P count is the sum of
    // the parts' counts.
    let boxes = String::from_utf8(table(&b, "boxes.csv")).unwrap();
    assert!(boxes.contains("box-14x14,14,14,40116599,"), "{boxes}");
    assert_eq!(table_digests(&a), table_digests(&b));
}

/// Acceptance 1: the split and the unsplit solver agree on every rank of
/// the 12×12 box (2,704,156 ranks in five unequal windows), and `verify
/// --full` checks every rank of the split run.
#[test]
fn split_12x12_agrees_with_one_job_on_every_rank() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, _) = one_and_split(t.path(), 12, 600_000);
    assert_eq!(plan(&b).jobs.len(), 5);
    let (x, y) = (box_bits(&a), box_bits(&b));
    assert_eq!(x.len(), 2_704_156usize.div_ceil(64) * 8);
    assert!(x == y, "the P-bits differ");
    let v = ok(gt().arg("verify").arg(&b).arg("--full"));
    let s = text(&v);
    assert!(
        s.contains("0 bad value(s)") && s.contains("2,704,156 of 2,704,156 checked"),
        "{s}"
    );
    // A staircase whose bites land in several parts.
    for dir in [&a, &b] {
        let q = ok(gt()
            .args(["query", "chomp", "--position", "12,12,11,9,4,4,2,1"])
            .arg("--run-dir")
            .arg(dir));
        let first = String::from_utf8_lossy(&q.stdout)
            .lines()
            .next()
            .unwrap()
            .to_string();
        assert!(first.starts_with("12,12,11,9,4,4,2,1: "), "{first}");
    }
    let qa = ok(gt()
        .args(["query", "chomp", "12x12", "--json", "--run-dir"])
        .arg(&a));
    let qb = ok(gt()
        .args(["query", "chomp", "12x12", "--json", "--run-dir"])
        .arg(&b));
    let ja: serde_json::Value = serde_json::from_slice(&qa.stdout).unwrap();
    let jb: serde_json::Value = serde_json::from_slice(&qb.stdout).unwrap();
    assert_eq!(ja["winning_moves"], serde_json::json!([[1, 1]]));
    assert_eq!(ja["winning_moves"], jb["winning_moves"]);
    assert_eq!(
        jb["source"].as_str().unwrap().split(' ').next(),
        Some("box-12x12")
    );
}

/// Plans `job` into `dir` and runs every job by hand with `gametables
/// worker --threads N`, in plan order, then merges.
fn run_by_hand(job: &Path, dir: &Path, threads: u32) {
    ok(&mut plan_cmd(job, dir));
    for j in &plan(dir).jobs {
        ok(gt()
            .arg("worker")
            .arg(dir.join("manifests").join(format!("{}.toml", j.id)))
            .args(["--threads", &threads.to_string()]));
    }
    ok(gt().arg("merge").arg(dir));
}

/// Acceptance 1: one and two threads per worker give the same shard bytes;
/// two different splits give the same table digests.
#[test]
fn threads_and_splits_do_not_change_the_digests() {
    let t = tempfile::tempdir().unwrap();
    let [a, b] = [("a", 700_000), ("b", 1_500_000)].map(|(name, window)| {
        let extra = format!("window_positions = {window}\n");
        job_file(t.path(), name, "[[11, 13], [13, 11]]", &extra)
    });
    let (d1, d2, d3) = (t.path().join("t1"), t.path().join("t2"), t.path().join("b"));
    run_by_hand(&a, &d1, 1);
    run_by_hand(&a, &d2, 2);
    assert_eq!(
        result(&d1).root,
        result(&d2).root,
        "shard bytes depend on the threads"
    );
    run(&b, &d3);
    assert!(plan(&d1).jobs.len() > plan(&d3).jobs.len());
    assert_eq!(table_digests(&d1), table_digests(&d3));
    // The mirror check holds on the per-size tables of 11×13 and 13×11.
    assert_eq!(table(&d3, "sizes-11x13.csv"), table(&d3, "sizes-13x11.csv"));
}

/// Acceptance 3 (issue 12), at small scale: the coordinator of a split run
/// is killed while a part runs; the rerun keeps every finished part and
/// recomputes only the rest, and gives the digests of an uninterrupted run.
#[test]
fn killed_coordinator_during_a_split_run_loses_only_the_running_part() {
    let t = tempfile::tempdir().unwrap();
    let job = split_job(t.path(), 12, 600_000);
    let clean = t.path().join("clean");
    run(&job, &clean);
    let dir = t.path().join("run");
    // Each worker sleeps 2 s after solving, before writing its shard.
    let mut child = run_cmd(&job, &dir)
        .env(gametables::pipeline::worker::DELAY_ENV, "2000")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("two parts", 120, || {
        dir.join("shards").is_dir() && shard_times(&dir).len() >= 2
    });
    sigkill(child.id());
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let before = shard_times(&dir);
    assert!(
        (2..5).contains(&before.len()),
        "{} parts done",
        before.len()
    );
    let again = run(&job, &dir);
    let s = text(&again);
    assert!(
        s.contains(&format!(
            "{} computed, {} skipped",
            5 - before.len(),
            before.len()
        )),
        "{s}"
    );
    let after = shard_times(&dir);
    assert!(
        before.iter().all(|x| after.contains(x)),
        "finished parts untouched"
    );
    assert_eq!(result(&dir).root, result(&clean).root);
}

/// `plan` output of a job file: the job lines and the summary line.
fn plan_output(job: &Path, dir: &Path) -> String {
    text(&ok(&mut plan_cmd(job, dir)))
}

/// Acceptance 4 (issue 12): the 22×22 box (2.1·10¹² staircases) plans into
/// parts that each fit 16 GB, and `plan` names the number of jobs, the
/// largest job's memory and the total shard size.
#[test]
fn plan_of_the_22x22_box_fits_16_gb_per_job() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let out = plan_output(&repo().join("jobs/chomp-22x22.toml"), &dir);
    let p = plan(&dir);
    let n = p.jobs.len();
    assert!(n > 10, "{out}");
    let mut next = 0u64;
    for (k, j) in p.jobs.iter().enumerate() {
        assert_eq!(j.name, format!("box-22x22-part-{}", k + 1));
        assert!(j.memory <= 16 << 30, "{} needs {} bytes", j.name, j.memory);
        assert!(j.memory <= 12 << 30, "{} above job_memory", j.name);
        assert_eq!(j.inputs.len(), k, "part {} reads every earlier part", k + 1);
        let start = j.params["start"].as_integer().unwrap() as u64;
        let end = j.params["end"].as_integer().unwrap() as u64;
        assert_eq!(start, next);
        assert_eq!(start % 64, 0);
        next = end;
    }
    assert_eq!(next, 2_104_098_963_720, "the parts cover C(44, 22) ranks");
    let start = format!("{n} job(s); largest box-22x22-part-");
    assert_plan_summary(&out, &start, &[" GiB peak memory", "shards ≈ "]);
}

/// Issue 25, acceptance 4: a wide box split into parts passes `verify
/// --full` on every rank: the 12×24 box (C(36, 12) = 1,251,677,700 ranks)
/// in 3 windows, checked by the rules written again in the full checker.
/// About 2 minutes on 2 cores; `.ci/run` runs the ignored tests.
#[test]
#[ignore]
fn split_12x24_passes_verify_full() {
    let t = tempfile::tempdir().unwrap();
    let job = job_file(
        t.path(),
        "wide",
        "[[12, 24]]",
        "window_positions = 420000000\n",
    );
    let dir = t.path().join("wide");
    run(&job, &dir);
    assert_eq!(plan(&dir).jobs.len(), 3);
    let v = ok(gt().arg("verify").arg(&dir).arg("--full"));
    let s = text(&v);
    assert!(
        s.contains("0 bad value(s)") && s.contains("1,251,677,700 of 1,251,677,700 checked"),
        "{s}"
    );
}

/// The next frontier boxes, planned for a cluster: 10×80 (C(90, 10) =
/// 5.7·10¹² staircases), 23×23 (C(46, 23) = 8.2·10¹²) and 13×40 (C(53, 13)
/// = 8.4·10¹¹) plan into parts of at most 12 GB (so every job fits a 16 GB
/// node), covering every rank, and `plan` names the jobs, the largest job's
/// memory, the total CPU and the shard size.
#[test]
fn plans_of_the_10x80_23x23_and_13x40_boxes_fit_16_gb_per_job() {
    for (bx, ranks) in [
        ("10x80", 5_720_645_481_903u64),
        ("23x23", 8_233_430_727_600),
        ("13x40", 841_392_966_470),
    ] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run");
        let out = plan_output(&repo().join(format!("tests/jobs/chomp-{bx}.toml")), &dir);
        let p = plan(&dir);
        assert!(p.jobs.len() > 10, "{out}");
        let mut next = 0u64;
        for (k, j) in p.jobs.iter().enumerate() {
            assert_eq!(j.name, format!("box-{bx}-part-{}", k + 1));
            assert!(j.memory <= 12 << 30, "{} needs {} bytes", j.name, j.memory);
            assert_eq!(j.inputs.len(), k);
            let start = j.params["start"].as_integer().unwrap() as u64;
            assert_eq!(start, next);
            next = j.params["end"].as_integer().unwrap() as u64;
        }
        assert_eq!(next, ranks, "the parts of {bx} cover every rank");
        let start = format!("{} job(s); largest box-{bx}-part-", p.jobs.len());
        assert_plan_summary(&out, &start, &[" GiB peak memory", "shards ≈ "]);
    }
}

/// The Slurm dry runs of the 22×22, 10×80, 23×23 and 13×40 boxes ask,
/// array by array, for the memory and threads the plan estimated, all
/// within 16 GB.
#[test]
fn slurm_dry_runs_of_the_frontier_boxes_ask_for_the_planned_memory() {
    for name in [
        "jobs/chomp-22x22",
        "tests/jobs/chomp-10x80",
        "tests/jobs/chomp-23x23",
        "tests/jobs/chomp-13x40",
    ] {
        let t = tempfile::tempdir().unwrap();
        let job = repo().join(format!("{name}.toml"));
        plan_output(&job, &t.path().join("plan"));
        let p = plan(&t.path().join("plan"));
        let o = ok(gt()
            .arg("run")
            .arg(&job)
            .args(["--executor", "slurm", "--dry-run", "--partition", "debug"])
            .arg("--run-dir")
            .arg(t.path().join("run")));
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let mems: Vec<u64> = out
            .lines()
            .filter_map(|l| l.strip_prefix("#SBATCH --mem="))
            .map(|m| {
                let m = m.split_whitespace().next().unwrap();
                m.trim_end_matches('M').parse().unwrap()
            })
            .collect();
        let want: Vec<u64> = p
            .jobs
            .iter()
            .map(|j| gametables::pipeline::resources::slurm_mem_mib(j.memory))
            .collect();
        // One array per job, then the merge job asking for the largest.
        let (merge, arrays) = mems.split_last().unwrap();
        assert_eq!(arrays, want, "{name}: {out}");
        assert_eq!(Some(merge), want.iter().max(), "{name}: {out}");
        assert!(mems.iter().all(|&m| m <= 16 << 10), "{name}: {mems:?}");
    }
}

/// Issue 25: the frontier job files plan into jobs of at most 12 GB each
/// (10×60 and 21×21 split into parts, the row-count boxes one job each).
#[test]
fn frontier_job_files_plan_under_12_gb_per_job() {
    for (name, jobs_at_least) in [("chomp-10x60", 2), ("chomp-21x21", 2), ("chomp-rows", 12)] {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run");
        let out = plan_output(&job_path(name), &dir);
        let p = plan(&dir);
        assert!(p.jobs.len() >= jobs_at_least, "{name}: {out}");
        for j in &p.jobs {
            assert!(
                j.memory <= 12 << 30,
                "{name}: {} needs {} bytes",
                j.name,
                j.memory
            );
        }
    }
}

/// Acceptance 4: `run --executor slurm --dry-run` of `jobs/chomp-20x20.toml`
/// prints one array per part (each waits for the one before) asking for
/// the memory and threads the plan estimated.
#[test]
fn slurm_dry_run_of_20x20_asks_for_the_planned_memory() {
    let t = tempfile::tempdir().unwrap();
    let job = job_path("chomp-20x20");
    plan_output(&job, &t.path().join("plan"));
    let p = plan(&t.path().join("plan"));
    assert!(p.jobs.len() >= 4, "{} jobs", p.jobs.len());
    let o = ok(gt()
        .arg("run")
        .arg(&job)
        .args(["--executor", "slurm", "--dry-run", "--partition", "debug"])
        .arg("--run-dir")
        .arg(t.path().join("run")));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let mems: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("#SBATCH --mem="))
        .map(|m| {
            let m = m.split_whitespace().next().unwrap();
            m.trim_end_matches('M').parse().unwrap()
        })
        .collect();
    let cpus: Vec<u32> = out
        .lines()
        .filter_map(|l| l.strip_prefix("#SBATCH --cpus-per-task="))
        .map(|m| m.parse().unwrap())
        .collect();
    let want: Vec<u64> = p
        .jobs
        .iter()
        .map(|j| gametables::pipeline::resources::slurm_mem_mib(j.memory))
        .collect();
    let want_cpus: Vec<u32> = p.jobs.iter().map(|j| j.threads).collect();
    // One array per job, then the merge job asking for the largest.
    let (merge, arrays) = mems.split_last().unwrap();
    assert_eq!(arrays, want, "{out}");
    assert_eq!(Some(merge), want.iter().max(), "{out}");
    assert_eq!(cpus, want_cpus, "{out}");
    assert!(
        mems.iter().all(|&m| m <= 6 << 10),
        "job_memory = 6G: {mems:?}"
    );
}

/// The 16×16 box (601,080,390 ranks) in 3 parts against one job (about a
/// minute on 2 cores; `.ci/run` runs it).
#[test]
#[ignore]
fn split_16x16_gives_the_single_jobs_tables() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, _) = one_and_split(t.path(), 16, 210_000_000);
    assert_eq!(plan(&b).jobs.len(), 3);
    assert_same_box_tables(&a, &b, 16);
}

/// Bad values of the new job-file fields are one-line errors naming the
/// field; a split that would need too many parts is refused at plan time.
#[test]
fn bad_split_fields_are_refused_at_plan_time() {
    let t = tempfile::tempdir().unwrap();
    for (extra, want) in [
        ("job_memory = \"lots\"\n", "job_memory"),
        ("window_positions = 0\n", "window_positions"),
        ("window_positions = 64\n", "more than 1000"),
        ("job_memory = \"1M\"\n", "more than job_memory"),
    ] {
        let job = job_file(t.path(), "bad", "[[14, 14]]", extra);
        let o = plan_cmd(&job, &t.path().join("run")).output().unwrap();
        assert!(!o.status.success(), "{extra}");
        assert!(text(&o).contains(want), "{extra}: {}", text(&o));
    }
}

/// `plan`'s CPU model against measured parts (2 cores, idle or niced):
/// the first six parts of 22×22 with the pull carry (7 Dec 2026: 436, 474,
/// 463, 558, 665 and 468 CPU-s, 3,064 in all) and 21×21's parts 9–12 with
/// the push carry before it (6 Dec 2026: 1,896 CPU-s, an upper bound for
/// today's). Parts cost about alike wherever they lie in the box: the
/// carry no longer grows with the part's number.
#[test]
fn plan_of_a_split_box_matches_its_measured_parts() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run22");
    plan_output(&job_path("chomp-22x22"), &dir);
    let p = plan(&dir);
    assert_eq!(p.jobs.len(), 37);
    let first: u64 = p.jobs[..6].iter().map(|j| j.cpu_seconds).sum();
    let ratio = first as f64 / 3064.0;
    assert!(
        (0.8..=1.25).contains(&ratio),
        "parts 1-6 estimated {first} CPU-s"
    );
    let (a, z) = (p.jobs[0].cpu_seconds, p.jobs[36].cpu_seconds);
    assert!(z < a * 3 / 2, "part 37 {z} CPU-s against part 1 {a}");
    let dir = t.path().join("run21");
    plan_output(&job_path("chomp-21x21"), &dir);
    let p = plan(&dir);
    assert_eq!(p.jobs.len(), 12);
    let late: u64 = p.jobs[8..].iter().map(|j| j.cpu_seconds).sum();
    let ratio = late as f64 / 1896.0;
    assert!(
        (0.8..=1.25).contains(&ratio),
        "parts 9-12 estimated {late} CPU-s"
    );
}
