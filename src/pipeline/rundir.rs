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

    /// Creates the directory and its subdirectories.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory that could not be created.
    pub fn create(&self) -> Result<()> {
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

    /// Takes the coordinator lock (`.lock`), non-blocking.
    ///
    /// # Errors
    /// [`Error::RunDir`] if another process holds it, saying which pid wrote it.
    pub fn lock(&self) -> Result<RunLock> {
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
        file.set_len(0).map_err(Error::io(&path))?;
        write!(file, "pid {}", std::process::id()).map_err(Error::io(&path))?;
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
