//! Adversarial pipeline checks on a `dodgem` run (n = 3): shards with a
//! valid trailer whose body does not match the declared lengths, a valid
//! shard with other bytes than the reference, a file that changes between
//! `merge`'s hash and the kind's load, and between `verify`'s hash and its
//! listing of damaged shards.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gametables::pipeline::plan::PlanFile;
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::shard::craft;

use crate::support::{gt, in_own_process, job_path, output_with_rusage, run_cmd, text};

fn reference_root() -> String {
    crate::support::reference_root("dodgem-3")
}

/// `gametables run jobs/dodgem-3.toml --run-dir DIR` (compared with
/// manifests/dodgem-3.toml).
fn run3(dir: &Path) -> Output {
    run_cmd(&job_path("dodgem-3"), dir)
        .args(["--workers", "1"])
        .output()
        .unwrap()
}

fn cmd(args: &[&str], dir: &Path) -> Output {
    gt().args(args).arg(dir).output().unwrap()
}

/// The same shard (same header and decoded content) with other bytes: a
/// zstd skippable frame in front of its first block.
fn same_content_other_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut p = craft::split(bytes);
    let mut b = 0x184D_2A50u32.to_le_bytes().to_vec();
    b.extend_from_slice(&4u32.to_le_bytes());
    b.extend_from_slice(b"skip");
    b.extend_from_slice(&p.blocks[0]);
    p.blocks[0] = b;
    craft::assemble(&p)
}

fn setup() -> (tempfile::TempDir, PathBuf, RunDir, PlanFile) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let out = run3(&dir);
    assert!(out.status.success(), "{}", text(&out));
    let rd = RunDir::new(&dir);
    let plan = PlanFile::load(&rd).unwrap();
    (t, dir, rd, plan)
}

/// [`setup`], and the shard file of job `name` with its bytes.
fn setup_shard(name: &str) -> (tempfile::TempDir, PathBuf, RunDir, PathBuf, Vec<u8>) {
    let (t, dir, rd, plan) = setup();
    let p = rd.shard_path(&plan.job(name).unwrap().id);
    let good = std::fs::read(&p).unwrap();
    (t, dir, rd, p, good)
}

/// A shard whose trailer is valid but whose header declares other section
/// lengths than its body decompresses to (one more, one fewer byte in
/// `values`, or in `reachable`): `status` calls it damaged, `merge` fails
/// naming job and file, `verify` exits 3 naming it, and `run` recomputes it
/// and reproduces the reference root.
#[test]
fn declared_lengths_unlike_the_body_are_named_everywhere_and_recomputed() {
    let (_t, dir, rd, plan) = setup();
    for (job, section, delta) in [
        ("layer-1-2", "values", 1i64),
        ("layer-1-2", "values", -1),
        ("layer-2-2", "meta", 1),
        ("reach-1-1", "reachable", -8),
    ] {
        let j = plan.job(job).unwrap();
        let p = rd.shard_path(&j.id);
        let good = std::fs::read(&p).unwrap();
        let mut parts = craft::split(&good);
        let s = parts
            .header
            .sections
            .iter_mut()
            .find(|s| s.0 == section)
            .unwrap();
        s.1 = (s.1 as i64 + delta) as u64;
        std::fs::write(&p, craft::assemble(&parts)).unwrap();
        let what = format!("{job} {section} {delta:+}");

        let st = cmd(&["status"], &dir);
        let s = text(&st);
        assert!(s.contains("1 damaged"), "{what}: {s}");
        assert!(s.contains(job), "{what}: {s}");

        let m = cmd(&["merge"], &dir);
        assert_eq!(m.status.code(), Some(1), "{what}: {}", text(&m));
        let s = text(&m);
        assert!(s.contains(job) && s.contains(&j.id), "{what}: {s}");
        assert!(s.contains("declares"), "{what}: {s}");

        let v = cmd(&["verify"], &dir);
        assert_eq!(v.status.code(), Some(3), "{what}: {}", text(&v));
        assert!(text(&v).contains(job), "{what}: {}", text(&v));

        let r = run3(&dir);
        assert!(r.status.success(), "{what}: {}", text(&r));
        assert!(
            text(&r).contains("1 recomputed (damaged)"),
            "{what}: {}",
            text(&r)
        );
        assert_eq!(std::fs::read(&p).unwrap(), good, "{what}");
        assert!(text(&r).contains(&reference_root()), "{what}: {}", text(&r));
    }
}

/// A valid shard with the right content but other bytes (a skippable zstd
/// frame in front): it decodes, so `run` keeps it, but the digests differ
/// from the reference and `run` exits 3 naming the job; after a merge of
/// the original, `verify` calls result.toml stale.
#[test]
fn same_content_other_bytes_is_reported_against_result_and_reference() {
    let (_t, dir, _rd, p, good) = setup_shard("layer-2-2");
    let other = same_content_other_bytes(&good);
    assert_ne!(other, good);
    std::fs::write(&p, &other).unwrap();

    let v = cmd(&["verify"], &dir);
    assert_eq!(v.status.code(), Some(3), "{}", text(&v));
    assert!(
        text(&v).contains("layer-2-2") && text(&v).contains("stale"),
        "{}",
        text(&v)
    );

    let r = run3(&dir);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r));
    assert!(text(&r).contains("layer-2-2"), "{}", text(&r));
    assert!(text(&r).contains("reference"), "{}", text(&r));

    std::fs::remove_file(&p).unwrap();
    let r = run3(&dir);
    assert!(r.status.success(), "{}", text(&r));
    assert_eq!(std::fs::read(&p).unwrap(), good);
}

/// Serves the file `path` (made a FIFO) to its readers: the first read gets
/// `first`, every later one `later`, until `stop`. Returns the reader count.
fn serve_fifo(
    path: PathBuf,
    first: Vec<u8>,
    later: Vec<u8>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::thread::spawn(move || {
        use std::os::unix::fs::OpenOptionsExt;
        let open = || {
            std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&path)
        };
        let mut n = 0;
        loop {
            // Wait for a reader (without one, a non-blocking open fails).
            let mut f = loop {
                if let Ok(f) = open() {
                    break f;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            };
            if stop.load(Ordering::SeqCst) {
                return n;
            }
            // Blocking writes from here on.
            let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
            unsafe { libc::fcntl(fd, libc::F_SETFL, 0) };
            let _ = f.write_all(if n == 0 { &first } else { &later });
            n += 1;
            drop(f);
            // Let the reader see the end of the file and close it before the
            // next open, so each read gets exactly one copy.
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    })
}

/// Ends [`serve_fifo`]: opens the FIFO once more so its blocked open returns.
fn end_fifo(path: &Path, stop: &AtomicBool, h: std::thread::JoinHandle<usize>) -> usize {
    stop.store(true, Ordering::SeqCst);
    let mut f = std::fs::File::open(path).unwrap();
    let mut sink = Vec::new();
    let _ = f.read_to_end(&mut sink);
    h.join().unwrap()
}

/// A shard that changes between `merge`'s hash and the kind's load (here:
/// a valid shard of the same job with other bytes) is refused: merge fails
/// naming the job and saying it changed, and writes no result. (A kind whose
/// merge loads whole shards, three-row Chomp: the engine's kinds read
/// blocks, whose trailer check is `MergeAccess::open`'s.)
#[test]
fn merge_refuses_a_shard_changed_after_hashing() {
    let t = tempfile::tempdir().unwrap();
    let dir = crate::support::run_text(
        t.path(),
        "three-row",
        "kind = \"three-row\"\nq_max = 299\nq_range = 100\nr_range = 75\n",
    );
    let rd = RunDir::new(&dir);
    let plan = PlanFile::load(&rd).unwrap();
    let first = plan.jobs[0].name.clone();
    let p = rd.shard_path(&plan.jobs[0].id);
    let good = std::fs::read(&p).unwrap();
    std::fs::remove_file(rd.result_path()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let h = serve_fifo(
        p.clone(),
        good.clone(),
        same_content_other_bytes(&good),
        stop.clone(),
    );
    let m = cmd(&["merge"], &dir);
    let reads = end_fifo(&p, &stop, h);
    assert_eq!(reads, 2, "merge reads each shard twice (hash, load)");
    assert_eq!(m.status.code(), Some(1), "{}", text(&m));
    let s = text(&m);
    assert!(s.contains(&first) && s.contains("changed"), "{s}");
    assert!(!rd.result_path().exists());
}

/// A shard damaged when `verify` hashes it and intact when verify then
/// decodes every shard to list the damaged ones (a file replaced during
/// verify): verify must report something (exit 3 or 1), never panic.
#[test]
fn verify_with_a_shard_repaired_between_hash_and_listing_does_not_panic() {
    let (_t, dir, _rd, p, good) = setup_shard("layer-0-0");
    let mut bad = good.clone();
    bad[20] ^= 1;
    let stop = Arc::new(AtomicBool::new(false));
    let h = serve_fifo(p.clone(), bad, good, stop.clone());
    let v = cmd(&["verify"], &dir);
    end_fifo(&p, &stop, h);
    let s = text(&v);
    assert!(!s.contains("panicked"), "{s}");
    assert!(matches!(v.status.code(), Some(1 | 3)), "{s}");
    assert!(s.contains("layer-0-0"), "{s}");
}

/// A "zstd bomb": a small shard (valid trailer) whose header declares a
/// 1 GiB `values` section and whose body really decompresses to 1 GiB.
/// The plan knows the layer has 2,846/… positions, but the decoder
/// allocates and fills what the header declares before the kind's
/// `check_shard` sees the length. Expected: `status` refuses it without
/// touching ~1 GiB: the decoder refuses sections larger than the job's
/// layer (`JobKind::max_raw_bytes`) before decompressing anything.
#[test]
fn zstd_bomb_is_refused_without_a_huge_allocation() {
    // The peak of `status` is measured: not beside other tests' memory.
    if !in_own_process("pipeline_break::zstd_bomb_is_refused_without_a_huge_allocation") {
        return;
    }
    let (_t, dir, _rd, p, good) = setup_shard("layer-2-2");
    let good = craft::split(&good);
    const BIG: u64 = 1 << 30;
    let others: u64 = good
        .header
        .sections
        .iter()
        .filter(|x| x.0 != "values")
        .map(|x| x.1)
        .sum();
    // Every block of the declared 1 GiB `values` really decompresses (to zeros).
    let bs = u64::from(good.block_size);
    let zeros = craft::block(&vec![0u8; bs as usize], 1);
    let mut bomb = good.clone();
    bomb.blocks.clear();
    let mut old = good.blocks.iter();
    for s in &mut bomb.header.sections {
        let k = s.1.div_ceil(bs);
        if s.0 == "values" {
            s.1 = BIG - others;
            for i in 0..s.1.div_ceil(bs) {
                let raw = (s.1 - i * bs).min(bs);
                bomb.blocks.push(if raw == bs {
                    zeros.clone()
                } else {
                    craft::block(&vec![0u8; raw as usize], 1)
                });
            }
            old.nth(k as usize - 1);
        } else {
            bomb.blocks.extend(old.by_ref().take(k as usize).cloned());
        }
    }
    let bomb = craft::assemble(&bomb);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    std::fs::write(&p, &bomb).unwrap();
    // Peak RSS of `status` alone (getrusage(RUSAGE_CHILDREN) would include
    // the run of `setup`).
    let (st, ru) = output_with_rusage(gt().arg("status").arg(&dir));
    assert!(text(&st).contains("1 damaged"), "{}", text(&st));
    let peak_mb = ru.ru_maxrss / 1024;
    assert!(
        peak_mb < 256,
        "status peaked at {peak_mb} MB on a {} byte shard",
        bomb.len()
    );
}
