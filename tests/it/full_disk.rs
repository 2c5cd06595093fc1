//! Full disks: every write that fails for want of space is one line naming
//! the file the user knows (a shard, a table, `result.toml`, `report.md`,
//! standard output), exit status 1, never a panic (exit 101), and the run
//! resumes once there is room again.
//!
//! Each test mounts a small tmpfs of its own, so they need root; they are
//! `#[ignore]`d and `.ci/run` runs them:
//!
//! ```text
//! cargo test --release --test it -- --ignored full_disk::
//! ```

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support::{gt, job_path, plan_cmd, reference_root, root_of, run_job, show};

const ENOSPC: &str = "No space left on device";

/// A tmpfs of `kib` KiB mounted on a fresh temporary directory, unmounted
/// when dropped.
struct Tmpfs {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(kib: u64) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fs");
        std::fs::create_dir(&path).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mounting a tmpfs needs root (run as root, as CI does): {}",
            show(&o)
        );
        Tmpfs { path, _dir: dir }
    }

    /// Free blocks of the filesystem (`f_bavail`, in `f_bsize` units).
    fn free_blocks(&self) -> (u64, u64) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(self.path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid C string and `st` a valid out-pointer.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
        (st.f_bavail, st.f_bsize)
    }

    /// Fills the filesystem with a file `name` until exactly `blocks` blocks are free.
    fn leave_free(&self, name: &str, blocks: u64) {
        let (avail, bsize) = self.free_blocks();
        assert!(avail >= blocks, "{avail} blocks free, want {blocks}");
        std::fs::write(
            self.path.join(name),
            vec![0u8; ((avail - blocks) * bsize) as usize],
        )
        .unwrap();
        assert_eq!(self.free_blocks().0, blocks);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// The failure is one line per failed write, names `needle` and ENOSPC,
/// exits 1, and neither panics nor names a temporary file.
fn assert_full_disk_error(o: &Output, needle: &str) {
    let all = show(o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!all.contains("panicked"), "{all}");
    assert!(!all.contains("101"), "{all}");
    assert!(!err.contains(".tmp-"), "names a temporary file: {all}");
    let line = err
        .lines()
        .find(|l| l.contains(ENOSPC))
        .unwrap_or_else(|| panic!("no `{ENOSPC}` line: {all}"));
    assert!(line.contains(needle), "`{needle}` not in: {line}");
}

/// Issue example: `run jobs/dodgem-4.toml` into a nearly full filesystem.
/// The workers that cannot write their shards exit 1 with one line naming
/// the shard and "No space left on device", which `run` shows (their logs
/// cannot be written either, and `run` says so); after freeing space the
/// same command resumes and gives the reference digests.
#[test]
#[ignore = "needs root: mounts a tmpfs (cargo test --release --test it -- --ignored full_disk::)"]
fn workers_on_a_full_disk_name_the_shard_and_the_run_resumes() {
    let fs = Tmpfs::mount(4096);
    let dir = fs.path.join("run");
    let job = job_path("dodgem-4");
    let o = plan_cmd(&job, &dir).output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    // Not a block left: neither the shards nor the logs can be written.
    fs.leave_free("fill", 0);
    let o = run_job(&job, &dir);
    assert_full_disk_error(&o, "/shards/");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("failed with exit status: 1"), "{err}");
    assert!(
        err.contains("(not written: No space left on device"),
        "{err}"
    );
    std::fs::remove_file(fs.path.join("fill")).unwrap();
    let o = run_job(&job, &dir);
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("digests match the reference"),
        "{}",
        show(&o)
    );
    assert_eq!(root_of(&dir), reference_root("dodgem-4"));
}

/// A finished chomp-boxes run in a tmpfs, with its merge outputs removed.
fn unmerged_run(fs: &Tmpfs) -> PathBuf {
    let dir = fs.path.join("run");
    let o = run_job(&job_path("chomp-boxes"), &dir);
    assert!(o.status.success(), "{}", show(&o));
    std::fs::remove_dir_all(dir.join("tables")).unwrap();
    std::fs::remove_file(dir.join("result.toml")).unwrap();
    std::fs::remove_file(dir.join("report.md")).unwrap();
    // The lock's pid is written again: that write fails too and must not matter.
    std::fs::remove_file(dir.join(".lock")).unwrap();
    dir
}

/// Blocks a set of files takes on the filesystem (whole blocks each).
fn blocks_of(files: &[PathBuf], bsize: u64) -> u64 {
    files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len().div_ceil(bsize))
        .sum()
}

/// `merge` on a full disk names the table it could not write (not the
/// temporary file), `result.toml` when only the tables fit, and `report`
/// names `report.md`; none of them panics, and the lock's pid (which
/// cannot be written either) does not stop them.
#[test]
#[ignore = "needs root: mounts a tmpfs (cargo test --release --test it -- --ignored full_disk::)"]
fn merge_and_report_on_a_full_disk_name_the_table_result_and_report() {
    let fs = Tmpfs::mount(16384);
    let dir = unmerged_run(&fs);
    // What the merge writes, measured on a copy merged elsewhere.
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("run");
    let o = Command::new("cp")
        .arg("-a")
        .arg(&dir)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let o = gt().arg("merge").arg(&copy).output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let tables: Vec<PathBuf> = std::fs::read_dir(copy.join("tables"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let (_, bsize) = fs.free_blocks();

    // No room at all: the first table is named.
    fs.leave_free("fill", 0);
    let o = gt().arg("merge").arg(&dir).output().unwrap();
    assert_full_disk_error(&o, "/tables/");
    assert!(!dir.join("result.toml").exists());
    std::fs::remove_file(fs.path.join("fill")).unwrap();

    // Room for the tables only (and the lock's pid): result.toml is named.
    let _ = std::fs::remove_dir_all(dir.join("tables"));
    let _ = std::fs::remove_file(dir.join(".lock"));
    fs.leave_free("fill", blocks_of(&tables, bsize) + 1);
    let o = gt().arg("merge").arg(&dir).output().unwrap();
    assert_full_disk_error(&o, "result.toml");
    assert!(!dir.join("result.toml").exists());
    std::fs::remove_file(fs.path.join("fill")).unwrap();

    let o = gt().arg("merge").arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    fs.leave_free("fill", 0);
    let o = gt().arg("report").arg(&dir).output().unwrap();
    assert_full_disk_error(&o, "report.md");
    // Standard output into a file on the full disk: exit 1 and say so.
    let out = std::fs::File::create(fs.path.join("status.txt")).unwrap();
    let o = gt()
        .arg("status")
        .arg(&dir)
        .stdout(Stdio::from(out))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: writing standard output: No space left on device"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    std::fs::remove_file(fs.path.join("fill")).unwrap();
    let o = gt().arg("verify").arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(root_of(&dir), reference_root("chomp-boxes"));
}
