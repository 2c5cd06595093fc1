//! A consistent command line (issue 15, item 7): `--json` on `status`,
//! `verify` and `report` (numbers as JSON numbers, a summary object),
//! `status` never says "merged" over damaged or deleted shards, and usage
//! errors exit 2 everywhere.

use std::path::{Path, PathBuf};

use crate::support::{gt, run_job, shard_path, show, write_job};

/// `gametables COMMAND DIR --json`, which must exit `code` (any if `None`):
/// what it prints, parsed.
fn json_of(command: &str, dir: &Path, code: Option<i32>) -> serde_json::Value {
    let o = gt().arg(command).arg(dir).arg("--json").output().unwrap();
    if let Some(c) = code {
        assert_eq!(o.status.code(), Some(c), "{}", show(&o));
    }
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", show(&o)))
}

/// A finished two-box chomp-boxes run in `root/run`.
fn small_run(root: &Path) -> PathBuf {
    let job = write_job(
        root,
        "small.toml",
        "kind = \"chomp-boxes\"\nboxes = [[3, 4], [4, 5]]\n",
    );
    let dir = root.join("run");
    let o = run_job(&job, &dir);
    assert!(o.status.success(), "{}", show(&o));
    dir
}

#[test]
fn status_json_has_a_summary_and_never_says_merged_over_missing_shards() {
    let t = tempfile::tempdir().unwrap();
    let dir = small_run(t.path());
    let v = json_of("status", &dir, Some(0));
    let s = &v["summary"];
    assert_eq!(s["jobs"], 2);
    assert_eq!(s["done"], 2);
    assert_eq!(s["merged"], true);
    assert_eq!(s["kind"], "chomp-boxes");
    assert!(s["root"].as_str().is_some_and(|r| r.len() == 64), "{v}");
    assert_eq!(v["jobs"][0]["state"], "done");

    // Deleted after the merge: "deleted", not "pending", and not merged.
    std::fs::remove_file(shard_path(&dir, "box-3x4")).unwrap();
    let v = json_of("status", &dir, None);
    let s = &v["summary"];
    assert_eq!(
        (s["done"].clone(), s["deleted"].clone()),
        (1.into(), 1.into()),
        "{v}"
    );
    assert_eq!(s["merged"], false, "{v}");
    assert!(s["stale_result"].as_str().is_some(), "{v}");
    assert_eq!(v["jobs"][0]["state"], "deleted");
    let o = gt().arg("status").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.contains("merged"), "{text}");
    assert!(text.contains("1 deleted"), "{text}");

    // Damaged: not merged either.
    let o = run_job(&t.path().join("small.toml"), &dir);
    assert!(o.status.success(), "{}", show(&o));
    let p = shard_path(&dir, "box-4x5");
    let mut b = std::fs::read(&p).unwrap();
    let k = b.len() / 2;
    b[k] ^= 0x40;
    std::fs::write(&p, &b).unwrap();
    let o = gt().arg("status").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1 damaged; result.toml is stale"), "{text}");
    assert!(!text.contains("merged"), "{text}");
}

#[test]
fn verify_and_report_json() {
    let t = tempfile::tempdir().unwrap();
    let dir = small_run(t.path());
    let v = json_of("verify", &dir, Some(0));
    assert_eq!(v["ok"], true);
    assert_eq!(v["shards"], 2);
    assert!(v["tables"].as_u64().is_some_and(|n| n >= 3), "{v}");
    assert_eq!(v["problems"].as_array().map(Vec::len), Some(0));

    let v = json_of("report", &dir, Some(0));
    let s = &v["summary"];
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(s["claims"].as_u64(), Some(claims.len() as u64));
    assert_eq!(s["mismatch"], 0);
    assert!(
        claims
            .iter()
            .all(|c| c["status"].is_string() && c["published"].is_string())
    );

    // A mismatch: exit 3 and the problem listed, still JSON.
    std::fs::write(dir.join("tables/boxes.csv"), "edited\n").unwrap();
    let v = json_of("verify", &dir, Some(3));
    assert_eq!(v["ok"], false);
    let problems = v["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().unwrap().contains("boxes.csv")),
        "{v}"
    );
}

/// `plan JOB` without `--run-dir` prints the jobs and what they need and
/// writes nothing (a newcomer ran `gametables plan jobs/quixo-5.toml` as the
/// docs showed it and got a usage error); `--force` needs `--run-dir`.
#[test]
fn plan_without_a_run_dir_prints_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let job = write_job(
        t.path(),
        "small.toml",
        "kind = \"chomp-boxes\"\nboxes = [[3, 4], [4, 5]]\n",
    );
    let before: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    let o = gt()
        .arg("plan")
        .arg(&job)
        .current_dir(t.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("plan of 2 job(s) of kind chomp-boxes (not written"),
        "{out}"
    );
    assert!(out.contains("box-4x5"), "{out}");
    assert!(out.contains("2 job(s); largest"), "{out}");
    let after: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert_eq!(before.len(), after.len(), "plan wrote something: {out}");
    let o = gt().arg("plan").arg(&job).arg("--force").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
}

/// `plan --memory` names the job a local `run --memory` with that budget
/// would refuse (regression: a newcomer's `plan jobs/chomp-10x60.toml
/// --memory 4G` said nothing, while `run` with 4G refused part 12).
#[test]
fn plan_with_a_memory_budget_names_the_job_run_would_refuse() {
    let t = tempfile::tempdir().unwrap();
    let job = write_job(
        t.path(),
        "split.toml",
        "kind = \"chomp-boxes\"\nboxes = [[10, 30]]\njob_memory = \"100M\"\n",
    );
    let o = gt()
        .args(["plan", "--memory", "50M"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("note: a local run with this --memory would refuse it: ")
            && out.contains("more than the budget of 50.0 MiB"),
        "{out}"
    );
    // With a budget every job fits, no note.
    let o = gt()
        .args(["plan", "--memory", "1G"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("would refuse"), "{out}");
}

/// A rectangle too large to solve in memory is refused with a pointer to the
/// committed rectangle tables (regression: a newcomer's `query chomp 10x42`,
/// the rectangle with three winning first moves, only said to run a job);
/// another staircase gets no such pointer.
#[test]
fn query_of_a_large_rectangle_points_to_the_committed_tables() {
    let o = gt().args(["query", "chomp", "10x42"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("too many to solve here")
            && err.contains("results/chomp-10x60/rectangles.csv"),
        "{err}"
    );
    // The transpose is in the 10×60 table; 30×30 is in neither.
    let o = gt().args(["query", "chomp", "42x10"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("results/chomp-10x60/rectangles.csv of the source tree, as the row of 10x42"),
        "{err}"
    );
    let o = gt().args(["query", "chomp", "30x30"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("too many to solve here") && !err.contains("rectangles.csv"),
        "{err}"
    );
    let o = gt()
        .args([
            "query",
            "chomp",
            "--position",
            "42,41,41,40,40,40,40,40,40,40",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("too many to solve here") && !err.contains("rectangles.csv"),
        "{err}"
    );
}

/// Usage errors (a missing or malformed argument) exit 2 with clap's usage
/// line, whatever the command.
#[test]
fn usage_errors_exit_2_everywhere() {
    let cases: &[&[&str]] = &[
        &[],
        &["run"],
        &["run", "a.toml", "b.toml", "--run-dir", "d"],
        &["run", "a.toml", "--detach"],
        &["run", "a.toml", "--workers", "0"],
        &["plan"],
        &["worker"],
        &["merge"],
        &["status"],
        &["verify"],
        &["report"],
        &["query"],
        &["query", "nim"],
        &["query", "subtraction"],
        &["query", "octal"],
        &["query", "three-row", "--q", "3"],
        &["query", "dodgem"],
        // Regression (issue example): `query chomp` with no position exited 1.
        &["query", "chomp"],
        &["query", "chomp", "--grundy"],
        &["query", "chomp", "8x"],
        &["query", "three-row", "--q", "3", "--r", "5"],
        &["query", "octal", "0.9"],
        &["query", "subtraction", "--set", "0"],
        &["no-such-command"],
        &["status", "d", "--no-such-flag"],
    ];
    for args in cases {
        let o = gt().args(*args).output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "gametables {args:?}: {}",
            show(&o)
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("error:") || err.contains("Usage:"),
            "gametables {args:?}: {err}"
        );
    }
}
