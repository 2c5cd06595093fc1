//! The run directory: where one job file's plan, manifests, shards, logs,
//! tables and results live.
//!
//! ```text
//! RUN_DIR/
//!   plan.toml            the job file's kind, parameters and jobs (names, ids, inputs)
//!   manifests/ID.toml    one per job: all a worker needs
//!   shards/ID.shard      one per finished job (see `shard`)
//!   logs/ID.log          each job's worker log (appended per attempt)
//!   tables/…             merged tables
//!   result.toml          digests of every shard and table, and the root digest
//!   report.md            published claims and our values
//!   .lock                held by the coordinator while it runs
//! ```

use std::fs::File;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use super::error::{Error, Result};

/// Paths inside a run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

/// An exclusive lock on a run directory, released when dropped or when the
/// process dies.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunDir {
    /// A run directory at `root` (not created).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        RunDir { root: root.into() }
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `plan.toml`.
    pub fn plan_path(&self) -> PathBuf {
        self.root.join("plan.toml")
    }

    /// `result.toml`.
    pub fn result_path(&self) -> PathBuf {
        self.root.join("result.toml")
    }

    /// `report.md`.
    pub fn report_path(&self) -> PathBuf {
        self.root.join("report.md")
    }

    /// `manifests/ID.toml`.
    pub fn manifest_path(&self, id: &str) -> PathBuf {
        self.root.join("manifests").join(format!("{id}.toml"))
    }

    /// `shards/ID.shard`, relative to the run directory (as in manifests).
    pub fn shard_rel(id: &str) -> String {
        format!("shards/{id}.shard")
    }

    /// `shards/ID.shard`.
    pub fn shard_path(&self, id: &str) -> PathBuf {
        self.root.join(Self::shard_rel(id))
    }

    /// `logs/ID.log`.
    pub fn log_path(&self, id: &str) -> PathBuf {
        self.root.join("logs").join(format!("{id}.log"))
    }

    /// `plots/`: pictures from `gametables plot` (not in the digests).
    pub fn plots_dir(&self) -> PathBuf {
        self.root.join("plots")
    }

    /// `tables/`.
    pub fn tables_dir(&self) -> PathBuf {
        self.root.join("tables")
    }

    /// Refuses a run directory path that names something other than a
    /// directory (a file, a link to one): said so, not as the error of
    /// whatever was tried inside it ("File exists", "Not a directory").
    ///
    /// # Errors
    /// [`Error::RunDir`] saying it is not a directory.
    pub fn check_not_a_file(&self) -> Result<()> {
        match std::fs::metadata(&self.root) {
            Ok(m) if !m.is_dir() => Err(Error::RunDir {
                path: self.root.clone(),
                message: "not a directory (a file of that name exists; name a directory)".into(),
            }),
            _ => Ok(()),
        }
    }

    /// Creates the directory and its subdirectories.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory that could not be created.
    pub fn create(&self) -> Result<()> {
        self.check_not_a_file()?;
        for sub in ["manifests", "shards", "logs", "tables"] {
            let p = self.root.join(sub);
            std::fs::create_dir_all(&p).map_err(Error::io(&p))?;
        }
        Ok(())
    }

    /// Resolves a path written in a manifest, which must stay inside the run
    /// directory: relative, with no `..`.
    ///
    /// # Errors
    /// [`Error::RunDir`] if the path is absolute or leaves the directory.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf> {
        let p = Path::new(rel);
        let safe = !rel.is_empty()
            && p.components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !safe {
            return Err(Error::RunDir {
                path: self.root.clone(),
                message: format!("refusing path `{rel}`: it leaves the run directory"),
            });
        }
        Ok(self.root.join(p))
    }

    /// Flushes everything written on the filesystem of the run directory to
    /// the disk (`syncfs(2)`): the one durability point of a run whose
    /// workers wrote their shards with
    /// [`Durability::Deferred`](super::shard::Durability::Deferred). It covers
    /// the filesystem that holds the run directory itself: `shards/` and
    /// `manifests/` must not be mounts or symlinks onto another filesystem.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory.
    pub fn sync(&self) -> Result<()> {
        use std::os::fd::AsRawFd;
        let d = File::open(&self.root).map_err(Error::io(&self.root))?;
        // SAFETY: `d` is an open descriptor for the whole call; syncfs reads
        // nothing else.
        if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
            return Err(Error::io(&self.root)(std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Waits until the shards of `ids` exist, polling every 250 ms, for at
    /// most `wait`; returns how many were still missing then. A shared
    /// filesystem (NFS attribute caching) can show a shard written on another
    /// node seconds late: workers and the merge job on a cluster wait
    /// `--latency-wait` for their inputs before calling one missing. Returns
    /// at once when all exist (always the case for local runs).
    pub fn wait_for_shards<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
        wait: std::time::Duration,
    ) -> usize {
        let ids: Vec<&str> = ids.into_iter().collect();
        let t0 = std::time::Instant::now();
        loop {
            let missing = ids
                .iter()
                .filter(|id| !self.shard_path(id).exists())
                .count();
            if missing == 0 || t0.elapsed() >= wait {
                return missing;
            }
            if t0.elapsed().is_zero() || t0.elapsed().as_millis() % 10_000 < 250 {
                tracing::info!(
                    missing,
                    "waiting for input shards to appear (--latency-wait)"
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
    }

    /// Takes the coordinator lock (`.lock`), non-blocking.
    ///
    /// # Errors
    /// [`Error::RunDir`] if another process holds it, saying which pid wrote it.
    pub fn lock(&self) -> Result<RunLock> {
        self.check_not_a_file()?;
        std::fs::create_dir_all(&self.root).map_err(Error::io(&self.root))?;
        let path = self.root.join(".lock");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(Error::io(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                return Err(Error::RunDir {
                    path: self.root.clone(),
                    message: format!(
                        "in use by another gametables coordinator ({}); wait for it to finish or stop it",
                        holder.trim()
                    ),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path)(e)),
        }
        // The pid is only for the message above: the lock is the OS lock, so a
        // full disk that refuses these bytes does not stop the run.
        let _ = file
            .set_len(0)
            .and_then(|()| write!(file, "pid {}", std::process::id()));
        Ok(RunLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_refuses_paths_that_leave() {
        let d = RunDir::new("/tmp/x");
        assert!(d.resolve("shards/a.shard").is_ok());
        for bad in ["../a", "/etc/passwd", "shards/../../a", ""] {
            assert!(d.resolve(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn second_lock_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = RunDir::new(t.path());
        let _l = d.lock().unwrap();
        let e = d.lock().unwrap_err().to_string();
        assert!(
            e.contains("in use by another gametables coordinator"),
            "{e}"
        );
    }
}
