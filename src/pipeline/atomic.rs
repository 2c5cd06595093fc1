//! Atomic writes: a file appears at its path complete or not at all (a
//! temporary file in the same directory, renamed over the path), with the
//! fsyncs now or deferred to one `syncfs` at the end of a run.

use std::io::Write;
use std::path::Path;

use super::error::{Error, Result};

/// When a written file reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync the file before the rename and the directory after it: once
    /// the call returns, the file survives a power cut.
    Now,
    /// Rename without fsync. A crash of the process loses nothing (the page
    /// cache holds the file); an operating-system crash or power cut before
    /// the next [`RunDir::sync`](super::rundir::RunDir::sync) may leave the
    /// file empty or torn. Only for files that are checked when read again
    /// (shards carry a sha256 trailer and are recomputed when it fails;
    /// manifests are compared with the plan and rewritten) and whose writer
    /// syncs the filesystem once at the end of its run.
    Deferred,
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, fsync, rename over `path`, fsync the directory. A crash leaves
/// either the old file or the new one, never a partial file at `path`.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, Durability::Now)
}

/// [`write_atomic`] with a choice of [`Durability`]: with
/// [`Durability::Deferred`] the two fsyncs are left out (a run of many small
/// jobs spent most of its time in them: 2 × ~3 ms per shard here).
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic_with(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let mut tmp = temp_beside(path)?;
    // The file itself: tempfile's own `Write` adds the temporary path to errors.
    tmp.as_file_mut()
        .write_all(bytes)
        .map_err(Error::io(path))?;
    persist(tmp, path, durability)
}

/// A temporary file in `path`'s directory, mode 0644 before the umask like
/// any other output file (tempfile's default is 0600).
pub(crate) fn temp_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Every failure names `path`, the file the caller asked for, never the
    // temporary file (which is removed on the way out): a full disk reads
    // `RUN_DIR/tables/x.csv: No space left on device (os error 28)`.
    tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(|e| Error::io(path)(without_temp_path(e)))
}

/// Syncs (as `durability` asks) and renames a finished temporary file over
/// `path`.
pub(crate) fn persist(
    tmp: tempfile::NamedTempFile,
    path: &Path,
    durability: Durability,
) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if durability == Durability::Now {
        tmp.as_file().sync_all().map_err(Error::io(path))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::io(path)(without_temp_path(e.error)))?;
    if durability == Durability::Now {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(Error::io(path))?;
    }
    Ok(())
}

/// An I/O error from `tempfile` without the temporary file's path it appends
/// (`… at path "/run/tables/.tmp-x"`): the caller names the real file.
fn without_temp_path(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    match e
        .get_ref()
        .map(ToString::to_string)
        .and_then(|s| s.split_once(" at path ").map(|(head, _)| head.to_string()))
    {
        Some(head) => std::io::Error::new(e.kind(), head),
        None => e,
    }
}
