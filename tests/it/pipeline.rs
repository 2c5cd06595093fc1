//! The pipeline end to end through the `gametables` binary: reproducibility,
//! resume after faults (killed worker, killed coordinator, damaged shards),
//! malformed inputs, locking and queries.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use gametables::games::chomp::kind::boxes::BoxMeta;
use gametables::pipeline::codec;
use gametables::pipeline::plan::PlanFile;
use gametables::pipeline::result::ResultFile;
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::shard;
use gametables::pipeline::state::{JobState, job_state, written_state};

use crate::support::{
    alive, children_of, exits, first_file, gt, job_path, ok, plan_cmd, repo, root_of, run_cmd,
    run_job, run_job_ok, run_ok, run_text, shard_times, sigkill, text, wait_until, write_job,
};

fn boxes_job() -> PathBuf {
    job_path("chomp-boxes")
}

fn reference_root() -> String {
    crate::support::reference_root("chomp-boxes")
}

/// Plans a one-box `chomp-boxes` job in `root/run` and returns the run
/// directory and the path of the job's only manifest.
fn plan_one_box(root: &Path, rows: u32, cols: u32) -> (PathBuf, PathBuf) {
    let dir = root.join("run");
    let job = write_job(
        root,
        "small.toml",
        &format!("kind = \"chomp-boxes\"\nboxes = [[{rows}, {cols}]]\n"),
    );
    ok(&mut plan_cmd(&job, &dir));
    let m = first_file(&dir.join("manifests"));
    (dir, m)
}

/// A job of two small boxes.
const TWO_BOXES: &str = "kind = \"chomp-boxes\"\nboxes = [[3, 4], [4, 5]]\n";

/// Writes the job file `root/small.toml`: (the run directory `root/run`, the job file).
fn small_job(root: &Path, body: &str) -> (PathBuf, PathBuf) {
    (root.join("run"), write_job(root, "small.toml", body))
}

/// `run jobs/chomp-boxes.toml` into `dir` with `extra` arguments, which must exit 0.
fn run_boxes(dir: &Path, extra: &[&str]) -> Output {
    ok(run_cmd(&boxes_job(), dir).args(extra))
}

fn spawn_slow_run(dir: &Path, delay_ms: u32) -> Child {
    run_cmd(&boxes_job(), dir)
        .args(["--workers", "2"])
        .env(
            gametables::pipeline::worker::DELAY_ENV,
            delay_ms.to_string(),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Acceptance 5 and 6 (foundation issue): two runs, `--workers 1` and
/// `--workers 2`, give the root digest of `manifests/chomp-boxes.toml`; every
/// report claim matches; a second run on the same directory recomputes nothing.
#[test]
fn chomp_boxes_reproduce_reference_digests_with_1_and_2_workers() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let out_a = run_boxes(&a, &["--workers", "1"]);
    let out_b = run_boxes(&b, &["--workers", "2"]);
    assert_eq!(root_of(&a), reference_root());
    assert_eq!(root_of(&b), reference_root());
    for out in [&out_a, &out_b] {
        let s = text(out);
        assert!(s.contains("digests match the reference"), "{s}");
        assert!(s.contains("20 claims, 19 match, 0 mismatch"), "{s}");
    }
    let report = std::fs::read_to_string(a.join("report.md")).unwrap();
    assert!(report.contains("| 823 | 823 | match |"), "{report}");
    assert!(!report.contains("MISMATCH"));
    // Tables as the issue specifies.
    let rect = std::fs::read_to_string(a.join("tables/rectangles.csv")).unwrap();
    assert!(rect.starts_with("rows,cols,n_winning,moves\n"));
    assert!(rect.contains("\n8,10,2,3:8 4:5\n"));
    let multi = std::fs::read_to_string(a.join("tables/multi-winning.csv")).unwrap();
    assert_eq!(
        multi.lines().count(),
        1 + 7 + 5,
        "7 upright + 5 transposed within boxes"
    );
    // Resume: nothing to do.
    let before = shard_times(&a);
    let again = run_boxes(&a, &[]);
    assert!(
        text(&again).contains("0 computed, 14 skipped"),
        "{}",
        text(&again)
    );
    assert_eq!(shard_times(&a), before);
    assert_eq!(root_of(&a), reference_root());
    // verify --against passes.
    let v = run_ok(&[
        "verify",
        a.to_str().unwrap(),
        "--against",
        repo().join("manifests/chomp-boxes.toml").to_str().unwrap(),
    ]);
    assert!(text(&v).contains("matches"), "{}", text(&v));
}

/// Acceptance 7: a flipped byte, a truncated shard and a deleted shard are
/// each detected by `verify` (naming job and file) and recomputed by `run`.
#[test]
fn damaged_truncated_and_deleted_shards_are_detected_and_recomputed() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    run_boxes(&dir, &[]);
    let plan = gametables::pipeline::plan::PlanFile::load(&RunDir::new(&dir)).unwrap();
    let job = |name: &str| plan.job(name).unwrap().id.clone();
    let shard = |name: &str| dir.join(format!("shards/{}.shard", job(name)));
    let verify = |expect: &str, file: &Path| {
        let s = exits(gt().arg("verify").arg(&dir), 3);
        assert!(s.contains(expect), "{s}");
        assert!(
            s.contains(file.file_name().unwrap().to_str().unwrap()),
            "{s}"
        );
    };

    // Flipped byte.
    let p = shard("box-8x24");
    let mut bytes = std::fs::read(&p).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&p, &bytes).unwrap();
    verify("box-8x24", &p);
    // Truncated.
    let q = shard("box-12x15");
    let bytes = std::fs::read(&q).unwrap();
    std::fs::write(&q, &bytes[..bytes.len() - 100]).unwrap();
    verify("box-12x15", &q);
    // Deleted.
    let r = shard("box-3x200");
    std::fs::remove_file(&r).unwrap();
    verify("box-3x200", &r);

    // Regression (issue 15, item 7): `status` said "merged" with damaged and
    // deleted shards, and called a deleted shard "pending".
    let st = run_ok(&["status", dir.to_str().unwrap()]);
    let s = text(&st);
    assert!(
        s.contains("11 done, 0 pending, 1 deleted, 2 damaged; result.toml is stale: 3 shard(s)"),
        "{s}"
    );
    assert!(!s.contains("merged"), "{s}");
    assert!(s.contains("box-3x200                DELETED"), "{s}");

    let before = shard_times(&dir);
    let out = run_boxes(&dir, &[]);
    let s = text(&out);
    // Regression: `run` named the damaged shards but not the deleted one.
    assert!(
        s.contains("3 computed, 11 skipped, 2 recomputed (damaged), 1 recomputed (deleted)"),
        "{s}"
    );
    assert!(s.contains("box-8x24: shard damaged"), "{s}");
    assert!(s.contains("job box-3x200: shard deleted"), "{s}");
    let st = run_ok(&["status", dir.to_str().unwrap()]);
    assert!(
        text(&st).contains("14 done, 0 pending, 0 deleted, 0 damaged; merged, root"),
        "{}",
        text(&st)
    );
    assert_eq!(root_of(&dir), reference_root());
    // Only the three damaged shards were rewritten.
    let after = shard_times(&dir);
    let changed = after.iter().filter(|x| !before.contains(x)).count();
    assert_eq!(changed, 3);
}

/// Runs the boxes again into `dir`: the shards `before` are skipped and
/// untouched, and the root is the reference's.
fn rerun_skips_the_finished_shards(dir: &Path, before: &[(PathBuf, std::time::SystemTime)]) {
    let again = run_boxes(dir, &[]);
    let s = text(&again);
    assert!(s.contains(&format!("{} skipped", before.len())), "{s}");
    assert_eq!(root_of(dir), reference_root());
    let after = shard_times(dir);
    assert!(
        before.iter().all(|x| after.contains(x)),
        "finished shards untouched"
    );
}

/// Acceptance 7: SIGKILL one worker mid-run; the run fails naming the job and
/// its log; the rerun completes without recomputing finished jobs.
#[test]
fn killed_worker_then_rerun_completes_without_recomputing() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let child = spawn_slow_run(&dir, 1500);
    let pid = child.id();
    // Wait for the first shard, then kill a running worker.
    wait_until("a first shard", 60, || {
        dir.join("shards").is_dir() && !shard_times(&dir).is_empty()
    });
    let mut victim = None;
    wait_until("a running worker", 60, || {
        victim = children_of(pid).first().copied();
        victim.is_some()
    });
    sigkill(victim.unwrap());
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let s = text(&out);
    assert!(s.contains("failed with signal: 9"), "{s}");
    assert!(s.contains("log: "), "{s}");
    let before = shard_times(&dir);
    assert!(!before.is_empty() && before.len() < 14, "{}", before.len());

    rerun_skips_the_finished_shards(&dir, &before);
}

/// Acceptance 7: SIGKILL the coordinator mid-run; the rerun completes, does
/// not recompute finished jobs, and gives the reference digests.
#[test]
fn killed_coordinator_then_rerun_completes_without_recomputing() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    // Each worker sleeps 5 s after solving, before writing its shard.
    let mut child = spawn_slow_run(&dir, 5000);
    wait_until("two shards", 60, || {
        dir.join("shards").is_dir() && shard_times(&dir).len() >= 2
    });
    let orphans = children_of(child.id());
    assert!(!orphans.is_empty());
    sigkill(child.id());
    let killed = Instant::now();
    child.wait().unwrap();
    // Workers die with their coordinator (PR_SET_PDEATHSIG), well before
    // their 5 s sleep ends; a kernel without it would let them finish.
    wait_until("orphaned workers to exit", 60, || {
        orphans.iter().all(|&p| !alive(p))
    });
    assert!(
        killed.elapsed() < Duration::from_millis(3000),
        "workers outlived their coordinator by {:?}",
        killed.elapsed()
    );
    let before = shard_times(&dir);
    assert!(before.len() < 14);
    rerun_skips_the_finished_shards(&dir, &before);
}

/// Acceptance 7: a malformed job file gets a one-line error with file, line
/// and field, and a non-zero exit.
#[test]
fn malformed_job_files_get_one_line_errors_with_line_and_field() {
    let t = tempfile::tempdir().unwrap();
    let cases = [
        ("kind = \"chomp-boxes\"\nboxs = [[1, 2]]\n", ":2:1:", "boxs"),
        (
            "kind = \"chomp-boxes\"\nboxes = [[1, \"x\"]]\n",
            ":2:",
            "invalid type",
        ),
        (
            "kind = \"chomp-boxes\"\n\nboxes = [[0, 5]]\n",
            ":3:1:",
            "boxes",
        ),
        (
            "kind = \"chomp-boxes\"\nboxes = [[40, 40]]\n",
            ":2:1:",
            "exceed",
        ),
        ("kind = \"dominoes\"\n", ":1:1:", "unknown kind `dominoes`"),
        ("boxes = [[2, 2]]\n", ":1:1:", "missing field `kind`"),
        (
            "kind = \"chomp-boxes\"\nboxes = [[2, 2]\n",
            ":2:",
            "unclosed array",
        ),
    ];
    for (i, (body, loc, field)) in cases.iter().enumerate() {
        let p = t.path().join(format!("bad{i}.toml"));
        std::fs::write(&p, body).unwrap();
        let out = plan_cmd(&p, &t.path().join(format!("r{i}")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "case {i}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(
            err.contains(&format!("bad{i}.toml{loc}")),
            "case {i}: {err}"
        );
        assert!(err.contains(field), "case {i}: {err}");
    }
}

/// Acceptance 7: a manifest whose output leaves the run directory is refused.
#[test]
fn manifest_paths_leaving_the_run_dir_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let (_dir, m) = plan_one_box(t.path(), 2, 3);
    let orig = std::fs::read_to_string(&m).unwrap();
    for bad in [
        "../evil.shard",
        "/tmp/evil.shard",
        "shards/../../evil.shard",
    ] {
        let edited: String = orig
            .lines()
            .map(|l| {
                if l.starts_with("output = ") {
                    format!("output = \"{bad}\"")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&m, edited).unwrap();
        let out = gt().args(["worker", m.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("leaves the run directory"), "{bad}: {err}");
    }
    assert!(!t.path().join("evil.shard").exists());
    // An edited parameter no longer matches the job id.
    std::fs::write(&m, orig.replace("cols = 3", "cols = 4")).unwrap();
    let out = gt().args(["worker", m.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("job_id does not match"));
}

/// A second coordinator on the same run directory refuses with a clear message.
#[test]
fn second_coordinator_on_same_run_dir_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let _held = RunDir::new(&dir).lock().unwrap();
    let out = gt()
        .arg("run")
        .arg(boxes_job())
        .arg("--run-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("in use by another gametables coordinator"),
        "{err}"
    );
}

/// `query chomp`: in memory, as JSON, and from a run directory's shards.
#[test]
fn query_chomp_in_memory_json_and_from_run_dir() {
    let out = run_ok(&["query", "chomp", "8x10"]);
    assert!(text(&out).contains("8x10: N-position, 2 winning moves: (3, 8), (4, 5)"));
    let out = run_ok(&["query", "chomp", "--position", "2,1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["p_position"], true);
    assert_eq!(v["winning_moves"], serde_json::json!([]));

    let t = tempfile::tempdir().unwrap();
    let body = "kind = \"chomp-boxes\"\nboxes = [[6, 13], [9, 10]]\n";
    let (dir, job) = (
        run_text(t.path(), "small", body),
        t.path().join("small.toml"),
    );
    // `query chomp RECT --run-dir DIR --json`, which must exit 0.
    let from_run = |rect: &str| -> serde_json::Value {
        let out = ok(gt()
            .args(["query", "chomp", rect, "--json", "--run-dir"])
            .arg(&dir));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = from_run("9x10");
    assert_eq!(v["winning_moves"], serde_json::json!([[6, 7], [8, 4]]));
    assert!(v["source"].as_str().unwrap().contains("box-9x10"));
    let out = gt()
        .args(["query", "chomp", "12x12", "--run-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no box") && err.contains("12x12"), "{err}");
    // A rectangle covered only in its transpose is answered from the transposed box.
    let v = from_run("10x9");
    assert_eq!(v["winning_moves"], serde_json::json!([[4, 8], [7, 6]]));
    assert!(v["source"].as_str().unwrap().contains("transposed"));
    // A changed job file is refused on the same run directory without --force.
    std::fs::write(&job, "kind = \"chomp-boxes\"\nboxes = [[6, 13]]\n").unwrap();
    let out = gt()
        .arg("run")
        .arg(&job)
        .arg("--run-dir")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds a different plan"));
}

/// Regressions from the first break-it pass.
#[test]
fn regressions_huge_inputs_wrong_lengths_pipes_and_usage() {
    let t = tempfile::tempdir().unwrap();
    // Huge boxes are refused at plan time with file:line, not an allocation abort.
    for (i, body) in [
        "boxes = [[1, 4294967295]]",
        "boxes = [[1, 600000000]]",
        "boxes = [[2, 2, 2]]",
    ]
    .iter()
    .enumerate()
    {
        let p = t.path().join(format!("huge{i}.toml"));
        std::fs::write(&p, format!("kind = \"chomp-boxes\"\n{body}\n")).unwrap();
        let out = plan_cmd(&p, &t.path().join(format!("h{i}")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{body}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("huge{i}.toml:2:1:")), "{err}");
    }
    // Regression: chomp-grundy shares the box-list check (a 3-number entry was truncated).
    let p = write_job(
        t.path(),
        "grundy3.toml",
        "kind = \"chomp-grundy\"\nboxes = [[2, 2, 2]]\n",
    );
    let out = plan_cmd(&p, &t.path().join("g3")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("grundy3.toml:2:1:"));
    // Huge queries are refused before allocating, as bad arguments (exit 2,
    // naming the argument: issue 15, items 1 and 7).
    for q in ["4000000000x1", "1x4000000000", "1x100000000"] {
        let out = gt().args(["query", "chomp", q]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{q}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(q), "{q}");
    }
    // Usage errors exit 2.
    let out = gt()
        .args(["run", "x.toml", "--workers", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = gt()
        .args(["run", "a.toml", "b.toml", "--run-dir", "d"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A closed pipe ends the process quietly (no panic message).
    let mut child = gt()
        .args(["query", "chomp", "8x10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    // A worker started inside manifests/ with a bare file name finds its run directory.
    let (dir, m) = plan_one_box(t.path(), 2, 3);
    let out = gt()
        .current_dir(dir.join("manifests"))
        .args(["worker", m.file_name().unwrap().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Output files respect the umask (not tempfile's 0600).
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join("plan.toml"))
        .unwrap()
        .permissions()
        .mode();
    assert_ne!(mode & 0o044, 0, "mode {mode:o}");
}

/// Regression: a shard whose meta describes another box (valid checksum) is
/// reported, not a panic.
#[test]
fn shard_with_foreign_meta_is_reported_not_a_panic() {
    let t = tempfile::tempdir().unwrap();
    let (dir, job) = small_job(t.path(), "kind = \"chomp-boxes\"\nboxes = [[3, 4]]\n");
    run_job_ok(&job, &dir);
    let p = first_file(&dir.join("shards"));
    let s = shard::decode(&std::fs::read(&p).unwrap()).unwrap();
    let mut sections = s.sections.clone();
    let meta: BoxMeta = codec::decode(&sections[0].bytes).unwrap();
    sections[0].bytes = codec::encode(&BoxMeta {
        rows: 2,
        cols: 2,
        ..meta
    })
    .unwrap();
    std::fs::write(&p, shard::encode(&s.header, &sections).unwrap()).unwrap();
    let out = gt()
        .args(["verify", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("meta says 2x2"), "{err}");
    assert_eq!(out.status.code(), Some(3));
    // status calls it damaged, and run recomputes it.
    let st = run_ok(&["status", dir.to_str().unwrap()]);
    assert!(
        text(&st).contains("0 done, 0 pending, 0 deleted, 1 damaged"),
        "{}",
        text(&st)
    );
    let again = run_job_ok(&job, &dir);
    assert!(
        text(&again).contains("1 recomputed (damaged)"),
        "{}",
        text(&again)
    );
}

/// Shards written without fsync (`worker --defer-sync`, what the local
/// executor asks for; it syncs the filesystem once at the end) are the same
/// bytes, with the same 0644 mode, as shards written with fsync (what a
/// Slurm task writes).
#[test]
fn deferred_and_synced_shards_are_identical() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let (dir, m) = plan_one_box(t.path(), 4, 5);
    let shard = std::fs::read_dir(dir.join("shards")).unwrap().count();
    assert_eq!(shard, 0);
    let mut bytes = Vec::new();
    for extra in [None, Some("--defer-sync")] {
        let mut args = vec!["worker", m.to_str().unwrap()];
        args.extend(extra);
        let out = gt().args(&args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let p = first_file(&dir.join("shards"));
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_ne!(mode & 0o044, 0, "{extra:?}: mode {mode:o}");
        bytes.push((mode, std::fs::read(&p).unwrap()));
        std::fs::remove_file(&p).unwrap();
    }
    assert_eq!(bytes[0], bytes[1]);
}

/// `bytes` (a shard file) with its first block replaced by bytes that are
/// not a zstd frame, every checksum fixed (block, index, header, trailer):
/// intact to the cheap check, undecodable.
fn with_bad_body(bytes: &[u8]) -> Vec<u8> {
    let mut p = gametables::pipeline::shard::craft::split(bytes);
    p.blocks[0] = b"not a zstd frame at all".to_vec();
    gametables::pipeline::shard::craft::assemble(&p)
}

/// The executor's check after a job (cheap: trailer and header identity)
/// refuses a flipped byte, a truncated file and another job's shard; a body
/// only full decoding refuses passes it, but `merge` fails naming job and
/// file, `status` calls the shard damaged and `run` recomputes it.
#[test]
fn cheap_check_after_a_job_and_full_decode_in_merge() {
    let t = tempfile::tempdir().unwrap();
    let (dir, job) = small_job(t.path(), TWO_BOXES);
    let run = || run_job(&job, &dir);
    assert!(run().status.success());
    let root = root_of(&dir);
    let rd = RunDir::new(&dir);
    let plan = PlanFile::load(&rd).unwrap();
    let (a, b) = (plan.job("box-3x4").unwrap(), plan.job("box-4x5").unwrap());
    let (pa, pb) = (rd.shard_path(&a.id), rd.shard_path(&b.id));
    let good = std::fs::read(&pb).unwrap();
    let damaged = |why: &str| match written_state(&rd, &plan.kind, b) {
        JobState::Damaged(m) => assert!(m.contains(why), "{m}"),
        s => panic!("{s:?}"),
    };
    let merge_fails = |why: &str| {
        let s = exits(gt().arg("merge").arg(&dir), 1);
        assert!(s.contains("box-4x5") && s.contains(&b.id), "{s}");
        assert!(s.contains(why), "{s}");
    };
    assert_eq!(written_state(&rd, &plan.kind, b), JobState::Done);
    for i in [0, 13, good.len() / 2, good.len() - 1] {
        let mut x = good.clone();
        x[i] ^= 0x10;
        std::fs::write(&pb, &x).unwrap();
        damaged("checksum");
        merge_fails("checksum");
    }
    std::fs::write(&pb, &good[..good.len() - 1]).unwrap();
    damaged("checksum");
    std::fs::copy(&pa, &pb).unwrap();
    damaged("belongs to job box-3x4");
    merge_fails("belongs to job box-3x4");
    // Valid trailer over a body that does not decompress.
    std::fs::write(&pb, with_bad_body(&good)).unwrap();
    assert_eq!(written_state(&rd, &plan.kind, b), JobState::Done);
    assert!(matches!(
        job_state(
            &rd,
            gametables::games::registry().kind(&plan.kind).unwrap(),
            b
        ),
        JobState::Damaged(_)
    ));
    merge_fails("zstd");
    // verify lists it (exit 3), also beside a shard with a bad checksum.
    let verify = || {
        gt().args(["verify", dir.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = verify();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("box-4x5") && text(&out).contains("zstd"),
        "{}",
        text(&out)
    );
    let good_a = std::fs::read(&pa).unwrap();
    let mut x = good_a.clone();
    x[20] ^= 1;
    std::fs::write(&pa, &x).unwrap();
    let out = verify();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let s = text(&out);
    assert!(s.contains("box-4x5") && s.contains("zstd"), "{s}");
    assert!(s.contains("box-3x4") && s.contains("checksum"), "{s}");
    std::fs::write(&pa, &good_a).unwrap();
    let st = run_ok(&["status", dir.to_str().unwrap()]);
    assert!(
        text(&st).contains("1 done, 0 pending, 0 deleted, 1 damaged"),
        "{}",
        text(&st)
    );
    let s = exits(&mut run_cmd(&job, &dir), 0);
    assert!(
        s.contains("1 computed, 1 skipped, 1 recomputed (damaged)"),
        "{s}"
    );
    assert_eq!(std::fs::read(&pb).unwrap(), good);
    assert_eq!(root_of(&dir), root);
}

/// `run` (which checks its own merge instead of re-verifying it) still exits
/// 3 with verify's wording when the result differs from an edited
/// reference manifest (table or shard digest edited, root recomputed), and
/// refuses a reference whose root no longer matches its digests.
#[test]
fn run_against_an_edited_reference_exits_3() {
    let t = tempfile::tempdir().unwrap();
    let (jobs, manifests) = (t.path().join("jobs"), t.path().join("manifests"));
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::create_dir_all(&manifests).unwrap();
    let job = write_job(&jobs, "small.toml", TWO_BOXES);
    let dir = t.path().join("run");
    let run = || run_job(&job, &dir);
    let s = exits(&mut run_cmd(&job, &dir), 0);
    // It names where it looked, without `..` (regression: it printed
    // `manifests/small.toml` for a job file outside the working directory).
    let sought = manifests.join("small.toml");
    assert!(
        s.contains(&format!(
            "no reference manifest for this plan ({})",
            sought.display()
        )),
        "{s}"
    );
    let result = ResultFile::load(&dir.join("result.toml")).unwrap();
    let write_ref = |r: &ResultFile| {
        std::fs::write(manifests.join("small.toml"), toml::to_string(r).unwrap()).unwrap()
    };
    let reroot = |mut r: ResultFile| {
        let mut s = String::new();
        for d in &r.shards {
            s.push_str(&format!("shard {} {} {}\n", d.name, d.id, d.sha256));
        }
        for d in &r.tables {
            s.push_str(&format!("table {} {}\n", d.name, d.sha256));
        }
        r.root = gametables::pipeline::digest::sha256_hex(s.as_bytes());
        r
    };
    // `run` against the reference `r`, which must exit `code`: its output.
    let run_against = |r: &ResultFile, code: i32| -> String {
        write_ref(r);
        let out = run();
        assert_eq!(out.status.code(), Some(code), "{}", text(&out));
        text(&out)
    };
    let table_edited = || {
        let mut r = result.clone();
        r.tables[0].sha256 = "0".repeat(64);
        r
    };
    // The true result as reference: match.
    let s = run_against(&result, 0);
    assert!(s.contains("digests match the reference"), "{s}");
    // A table digest edited.
    let s = run_against(&reroot(table_edited()), 3);
    assert!(
        s.contains(&format!("table tables/{}", result.tables[0].name)),
        "{s}"
    );
    assert!(s.contains("[reference"), "{s}");
    assert!(!s.contains("digests match"), "{s}");
    // A shard digest edited.
    let mut r = result.clone();
    r.shards[1].sha256 = "f".repeat(64);
    let s = run_against(&reroot(r), 3);
    assert!(s.contains("shard of job box-4x5"), "{s}");
    // Edited without recomputing the root: refused as unusable.
    let s = run_against(&table_edited(), 1);
    assert!(s.contains("unusable"), "{s}");
}

/// A run directory written by an older gametables (shard format 1) is named
/// as old by `status` (text and `--json`), not as damaged, with the command
/// that recomputes it; `run` recomputes exactly those shards, to the same
/// root digest.
#[test]
fn an_old_format_run_directory_is_named_old_and_recomputed() {
    let t = tempfile::tempdir().unwrap();
    let (dir, job) = small_job(t.path(), TWO_BOXES);
    assert!(run_job(&job, &dir).status.success());
    let root = root_of(&dir);
    let rd = RunDir::new(&dir);
    let plan = PlanFile::load(&rd).unwrap();
    // Format version 1 in the prefix, trailer fixed: what an older build wrote
    // as far as the prefix tells.
    let a = plan.job("box-3x4").unwrap();
    for j in &plan.jobs {
        let p = rd.shard_path(&j.id);
        let mut b = std::fs::read(&p).unwrap();
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        let n = b.len() - 32;
        let d = gametables::pipeline::digest::sha256(&b[..n]);
        b[n..].copy_from_slice(&d);
        std::fs::write(&p, &b).unwrap();
    }
    match job_state(
        &rd,
        gametables::games::registry().kind(&plan.kind).unwrap(),
        a,
    ) {
        JobState::Old(m) => assert!(m.contains("old shard format 1"), "{m}"),
        s => panic!("{s:?}"),
    }
    let out = gt()
        .args(["status", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let s = text(&out);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("0 damaged, 2 old"), "{s}");
    assert!(
        s.contains("older shard format") && s.contains("recomputes"),
        "{s}"
    );
    assert!(!s.contains("DAMAGED"), "{s}");
    let out = gt()
        .args(["status", dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["old"], 2, "{v}");
    assert_eq!(v["summary"]["damaged"], 0, "{v}");
    assert_eq!(v["summary"]["merged"], false, "{v}");
    let states: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["old", "old"], "{v}");
    // run recomputes both, to the same digests.
    let out = run_job(&job, &dir);
    let s = text(&out);
    assert!(out.status.success(), "{s}");
    assert!(s.contains("2 recomputed (old shard format)"), "{s}");
    assert_eq!(root_of(&dir), root);
    assert_eq!(
        job_state(
            &rd,
            gametables::games::registry().kind(&plan.kind).unwrap(),
            a
        ),
        JobState::Done
    );
}

/// A run directory planned by a build with other estimates (CPU, memory)
/// resumes without `--force`: the jobs' ids are the same, so the finished
/// shards are kept and the plan takes the new estimates (regression: a
/// resume after the chomp-boxes CPU estimate changed was refused as "a
/// different plan").
#[test]
fn changed_estimates_alone_do_not_stop_a_resume() {
    let t = tempfile::tempdir().unwrap();
    let (dir, job) = small_job(t.path(), TWO_BOXES);
    let first = text(&run_job_ok(&job, &dir));
    assert!(!first.contains("already done"), "{first}");
    let plan_path = dir.join("plan.toml");
    let planned = std::fs::read_to_string(&plan_path).unwrap();
    let older = planned
        .replace("cpu_seconds = 0", "cpu_seconds = 777")
        .replace("memory = ", "memory = 1");
    assert_ne!(older, planned);
    std::fs::write(&plan_path, &older).unwrap();
    let times = shard_times(&dir);
    let again = text(&run_job_ok(&job, &dir));
    assert!(again.contains("2 job(s) already done, skipped"), "{again}");
    assert_eq!(shard_times(&dir), times, "finished shards kept");
    assert_eq!(std::fs::read_to_string(&plan_path).unwrap(), planned);
    // A changed computation is still refused.
    std::fs::write(&job, "kind = \"chomp-boxes\"\nboxes = [[3, 4]]\n").unwrap();
    let out = run_cmd(&job, &dir).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds a different plan"));
}

/// An engine job file whose `job_memory` was raised keeps more layers, all
/// old ones with the same ids: the run resumes from the finished shards
/// (they are not recomputed), and the merge covers the new layers. A
/// selection that shrank is a different plan, refused with the way to
/// replace it; `job_memory` fitting no layer is an error naming the least a
/// job needs.
#[test]
fn a_grown_layer_selection_resumes_from_the_shards_it_kept() {
    let t = tempfile::tempdir().unwrap();
    let body = |m: &str| format!("kind = \"quixo\"\nn = 3\njob_memory = \"{m}\"\n");
    let (dir, job) = small_job(t.path(), &body("32.002M"));
    let first = text(&run_job_ok(&job, &dir));
    assert!(first.contains("8 computed, 0 skipped"), "{first}");
    let times = shard_times(&dir);
    std::fs::write(&job, body("32.01M")).unwrap();
    let again = text(&run_job_ok(&job, &dir));
    assert!(again.contains("10 computed, 8 skipped"), "{again}");
    let now = shard_times(&dir);
    for (shard, time) in &times {
        assert!(now.contains(&(shard.clone(), *time)), "{shard:?} kept");
    }
    let summary = std::fs::read_to_string(dir.join("tables/quixo-3-summary.toml")).unwrap();
    assert!(summary.contains("layers_solved = 18"), "{summary}");
    // Back to the smaller selection: refused, naming `plan --force`.
    std::fs::write(&job, body("32.002M")).unwrap();
    let out = run_cmd(&job, &dir).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds a different plan") && err.contains("--force"),
        "{err}"
    );
    std::fs::write(&job, body("1K")).unwrap();
    let out = run_cmd(&job, &dir).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no layer's job fits job_memory = 1.0 KiB: the smallest needs 32.0 MiB"),
        "{err}"
    );
}
