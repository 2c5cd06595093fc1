//! Resume after SIGKILL: the coordinator, and separately one worker, are
//! killed during a 4×4 Dodgem run slowed by the worker test hook
//! (`GAMETABLES_TEST_WORKER_DELAY_MS`); a rerun finishes with the reference
//! digests of `manifests/dodgem-4.toml` and does not recompute finished jobs.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_gametables");

fn job_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("jobs/dodgem-4.toml")
}

fn start(run_dir: &Path, delay_ms: u64) -> Child {
    Command::new(EXE)
        .args(["run", "--no-progress", "--workers", "2", "--run-dir"])
        .arg(run_dir)
        .arg(job_file())
        .env("GAMETABLES_TEST_WORKER_DELAY_MS", delay_ms.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start gametables")
}

/// Shard file name → inode, for shards at their final path.
fn shards(run_dir: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(run_dir.join("shards"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".shard"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        e.metadata().unwrap().ino(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for_shards(run_dir: &Path, k: usize) {
    let t0 = Instant::now();
    while shards(run_dir).len() < k {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Worker processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

fn rerun_matches_reference(run_dir: &Path, before: &BTreeMap<String, u64>) {
    let out = Command::new(EXE)
        .args(["run", "--no-progress", "--run-dir"])
        .arg(run_dir)
        .arg(job_file())
        .output()
        .expect("rerun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("digests match the reference"), "{stdout}");
    assert!(
        stdout.contains(&format!("{} skipped", before.len())),
        "{stdout}"
    );
    let after = shards(run_dir);
    for (name, ino) in before {
        assert_eq!(
            after.get(name),
            Some(ino),
            "finished shard {name} was rewritten"
        );
    }
    assert_eq!(after.len(), 32);
}

#[test]
fn sigkill_coordinator_then_rerun_gets_reference_digests_without_recomputing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut coord = start(&dir, 150);
    wait_for_shards(&dir, 6);
    let workers = children(coord.id());
    coord.kill().unwrap(); // SIGKILL
    coord.wait().unwrap();
    // Orphaned workers either finish their shard or die; wait for them.
    let t0 = Instant::now();
    while workers
        .iter()
        .any(|w| Path::new(&format!("/proc/{w}")).exists())
        && t0.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = shards(&dir);
    assert!(
        before.len() >= 6 && before.len() < 32,
        "killed mid-run: {} shards",
        before.len()
    );
    rerun_matches_reference(&dir, &before);
}

#[test]
fn sigkill_one_worker_then_rerun_gets_reference_digests_without_recomputing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut coord = start(&dir, 300);
    wait_for_shards(&dir, 4);
    // Kill a live worker (retry if the one picked has just exited).
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(60), "no worker to kill");
        let live = children(coord.id()).into_iter().find(|w| {
            std::fs::read_to_string(format!("/proc/{w}/stat")).is_ok_and(|st| {
                st.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('S'))
            })
        });
        if let Some(w) = live {
            let killed = Command::new("kill")
                .args(["-KILL", &w.to_string()])
                .stderr(Stdio::null())
                .status()
                .unwrap();
            if killed.success() {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // The coordinator reports the failed job, lets the others finish, and exits non-zero.
    let status = coord.wait().unwrap();
    assert!(
        !status.success(),
        "the coordinator must report the killed worker"
    );
    let before = shards(&dir);
    assert!(before.len() < 32, "a job must be missing after the kill");
    rerun_matches_reference(&dir, &before);
}
