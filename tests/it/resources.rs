//! Jobs say what they need and the local executor listens: `plan` prints
//! every job's estimated memory and the totals, a job above the memory budget
//! is refused before anything runs, and jobs start only while their memory
//! fits what the running ones leave of the budget.

use std::path::Path;
use std::process::Output;

use crate::support::{
    assert_plan_summary, gt, job_path, plan_cmd, reference_root, repo, root_of, run_cmd, text,
};

fn run_boxes(dir: &Path, extra: &[&str]) -> Output {
    run_cmd(&job_path("chomp-boxes"), dir)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn plan_prints_every_jobs_memory_and_the_largest_job_with_the_totals() {
    let t = tempfile::tempdir().unwrap();
    let o = plan_cmd(&job_path("dodgem-4"), &t.path().join("run"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    // One line per job with its memory (4×4 layers are below 2²⁰ positions,
    // so they solve on one thread and no thread count is printed).
    assert!(
        out.lines()
            .any(|l| l.contains("layer-3-3") && l.trim_end().ends_with("MiB memory")),
        "{out}"
    );
    // The totals: the (3, 3) layer is the largest of 4×4 (C(16,3)·C(13,3)·2
    // = 160,160 positions), so the largest job is one of its jobs.
    assert_plan_summary(
        &out,
        "32 job(s); largest layer-3-3",
        &["shards ≈ ", "CPU ≈ "],
    );
}

#[test]
fn a_job_above_the_memory_budget_is_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let o = run_boxes(&dir, &["--memory", "30M"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    // The 14×14 box (40,116,600 ranks) is the largest job: ≈ 46 MiB estimated
    // (a bit per staircase, 1/16 byte per staircase for the P-positions the
    // solver keeps, its blocks, 25 MiB for the process).
    let est = gametables::games::chomp::kind::boxes::part_memory(14, 14, 40_116_600, 1, false);
    assert!((30 << 20..48 << 20).contains(&est), "{est}");
    assert!(
        out.contains(&format!(
            "job box-14x14 needs an estimated {} of memory, more than the budget of 30.0 MiB",
            gametables::pipeline::resources::fmt_bytes(est)
        )),
        "{out}"
    );
    assert!(
        !dir.join("shards").exists(),
        "nothing may run or be written"
    );
}

#[test]
fn memory_budget_and_sizes_are_validated_on_the_command_line() {
    for bad in ["0", "lots", "12Q", "-1G"] {
        let o = gt()
            .args(["run", "jobs/chomp-boxes.toml", "--memory", bad])
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "--memory {bad}: {}", text(&o));
    }
    let o = gt()
        .args([
            "run",
            "jobs/chomp-boxes.toml",
            "--memory",
            "8G",
            "--executor",
            "slurm",
            "--dry-run",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("--memory is a local budget"),
        "{}",
        text(&o)
    );
}

/// Start and end of every job, from the `job started` / `job finished`
/// lines of the worker logs (RFC 3339 timestamps sort as text).
fn job_intervals(dir: &Path) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir.join("logs")).unwrap() {
        let log = std::fs::read_to_string(e.unwrap().path()).unwrap();
        let stamp = |what: &str| {
            log.lines()
                .find(|l| l.contains(what))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or_else(|| panic!("no `{what}` in a log:\n{log}"))
                .to_string()
        };
        v.push((stamp("job started"), stamp("job finished")));
    }
    v.sort();
    v
}

#[test]
fn jobs_start_only_while_their_memory_fits_what_the_running_ones_leave() {
    let reference = reference_root("chomp-boxes");
    // Every box job is estimated at 37–46 MiB: with 48 MiB no two fit at once,
    // although two workers are allowed.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let o = run_boxes(&dir, &["--memory", "48M", "--workers", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("memory budget 48.0 MiB"), "{}", text(&o));
    let iv = job_intervals(&dir);
    assert_eq!(iv.len(), 14);
    for w in iv.windows(2) {
        assert!(w[0].1 <= w[1].0, "jobs overlapped: {w:?}");
    }
    assert_eq!(root_of(&dir), reference);

    // With room for two, two run at once somewhere in the run (14 jobs on 2
    // workers; the small boxes take milliseconds, so look for any overlap).
    let dir2 = t.path().join("run2");
    let o = run_boxes(&dir2, &["--memory", "1G", "--workers", "2"]);
    assert!(o.status.success(), "{}", text(&o));
    let iv = job_intervals(&dir2);
    assert!(
        iv.windows(2).any(|w| w[1].0 < w[0].1),
        "no two jobs ran at once with room for both: {iv:?}"
    );
    assert_eq!(root_of(&dir2), reference);
}
