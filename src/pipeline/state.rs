//! Shard state: whether a job's shard is there, complete and this job's,
//! read at the level the reader needs (the cheap trailer check, a full
//! decode, the kind's content check), and the shard access a worker gets
//! for its inputs.

use super::error::{Error, Result};
use super::kind::{JobKind, SectionBytes, ShardSource};
use super::plan::{InputRef, PlanFile, PlannedJob};
use super::result::ResultFile;
use super::rundir::RunDir;
use super::shard::{self, Shard};

/// Where a job stands in a run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Its shard exists and verifies.
    Done,
    /// No shard yet.
    Pending,
    /// No shard, but the run had one: `result.toml` lists the job, or a job
    /// that reads it has its shard (so it was deleted). Only
    /// [`job_states`] tells this from [`JobState::Pending`].
    Deleted,
    /// A shard exists but does not verify; the reason.
    Damaged(String),
    /// A shard exists in an older shard format (written by an older
    /// gametables; [`shard::file_format_version`] below
    /// [`shard::FORMAT_VERSION`]): not damaged, but this build does not read
    /// it, and `run` recomputes it. The message names the format.
    Old(String),
}

/// Every job's state ([`job_state`], fully checked) in plan order, a missing
/// shard the run had already made marked [`JobState::Deleted`]: what
/// `status` shows and what `run` says it recomputes.
pub fn job_states(dir: &RunDir, plan: &PlanFile, kind: &dyn JobKind) -> Vec<JobState> {
    let mut states: Vec<JobState> = plan.jobs.iter().map(|j| job_state(dir, kind, j)).collect();
    let merged: Vec<String> = ResultFile::load(&dir.result_path())
        .map(|r| r.shards.into_iter().map(|s| s.id).collect())
        .unwrap_or_default();
    let mut read_by_done: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for (j, st) in plan.jobs.iter().zip(&states) {
        if *st == JobState::Done {
            read_by_done.extend(j.inputs.iter().map(|i| i.id.as_str()));
        }
    }
    let deleted: Vec<bool> = plan
        .jobs
        .iter()
        .map(|j| merged.contains(&j.id) || read_by_done.contains(j.id.as_str()))
        .collect();
    for (st, had) in states.iter_mut().zip(deleted) {
        if *st == JobState::Pending && had {
            *st = JobState::Deleted;
        }
    }
    states
}

/// An [`Error::Shard`] naming job (`name`, `id`) and its shard file.
pub(crate) fn shard_error(dir: &RunDir, name: &str, id: &str, message: String) -> Error {
    Error::Shard {
        job: format!("{name} ({})", &id[..12.min(id.len())]),
        path: dir.shard_path(id),
        message,
    }
}

/// The bytes of the shard file of job (`name`, `id`), unchecked.
///
/// # Errors
/// [`Error::Shard`] naming job and file: missing or unreadable.
pub fn read_shard_bytes(dir: &RunDir, name: &str, id: &str) -> Result<Vec<u8>> {
    std::fs::read(dir.shard_path(id)).map_err(|e| {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => "missing".into(),
            _ => e.to_string(),
        };
        shard_error(dir, name, id, message)
    })
}

/// Whether a shard header names job (`name`, `id`) of `kind`.
fn check_owner(
    dir: &RunDir,
    h: &shard::ShardHeader,
    kind: &str,
    name: &str,
    id: &str,
) -> Result<()> {
    if h.job_id != id || h.kind != kind || h.job_name != name {
        return Err(shard_error(
            dir,
            name,
            id,
            format!(
                "belongs to job {} ({}), kind {}",
                h.job_name, h.job_id, h.kind
            ),
        ));
    }
    Ok(())
}

/// Decodes the shard bytes of job (`name`, `id`) (read from its file) and
/// checks that they belong to it: see [`read_shard`]. A shard whose sections
/// declare more than `max_raw` bytes is refused before decompression
/// ([`raw_bound`]).
///
/// # Errors
/// As [`read_shard`].
pub fn decode_shard(
    dir: &RunDir,
    kind: &str,
    name: &str,
    id: &str,
    bytes: &[u8],
    max_raw: u64,
) -> Result<Shard> {
    let s = shard::decode_bounded(bytes, max_raw).map_err(|m| shard_error(dir, name, id, m))?;
    check_owner(dir, &s.header, kind, name, id)?;
    Ok(s)
}

/// Reads and verifies the shard of job (`name`, `id`): checksum, format,
/// body, and that it belongs to this job and kind.
///
/// # Errors
/// [`Error::Shard`] naming job and file: missing, damaged, or another job's.
pub fn read_shard(dir: &RunDir, kind: &str, name: &str, id: &str) -> Result<Shard> {
    decode_shard(
        dir,
        kind,
        name,
        id,
        &read_shard_bytes(dir, name, id)?,
        shard::MAX_BODY,
    )
}

/// The most raw bytes a shard of `job` may declare: the kind's
/// [`JobKind::max_raw_bytes`].
pub fn raw_bound(kind: &dyn JobKind, job: &PlannedJob) -> u64 {
    kind.max_raw_bytes(&job.spec())
}

/// [`read_shard`] of a planned job, bounded by what the job can produce
/// ([`raw_bound`]).
///
/// # Errors
/// As [`read_shard`].
pub fn read_job_shard(dir: &RunDir, kind: &dyn JobKind, job: &PlannedJob) -> Result<Shard> {
    let bytes = read_shard_bytes(dir, &job.name, &job.id)?;
    decode_shard(
        dir,
        kind.name(),
        &job.name,
        &job.id,
        &bytes,
        raw_bound(kind, job),
    )
}

/// The cheap integrity check of the shard bytes of job (`name`, `id`)
/// ([`shard::check`]: trailer, magic, version, header; no decompression) and
/// that the header names this job and kind. Returns the SHA-256 of the whole
/// file, computed in the same pass.
///
/// # Errors
/// [`Error::Shard`] naming job and file.
pub fn check_shard_bytes(
    dir: &RunDir,
    kind: &str,
    name: &str,
    id: &str,
    bytes: &[u8],
) -> Result<[u8; 32]> {
    let (h, digest) = shard::check_digest(bytes).map_err(|m| shard_error(dir, name, id, m))?;
    check_owner(dir, &h, kind, name, id)?;
    Ok(digest)
}

/// The kind's own content check ([`JobKind::check_shard`](super::kind::JobKind::check_shard))
/// of a decoded shard of `job`.
///
/// # Errors
/// [`Error::Shard`] naming job and file.
pub fn check_shard_content(
    dir: &RunDir,
    kind: &dyn JobKind,
    job: &PlannedJob,
    s: &Shard,
) -> Result<()> {
    kind.check_shard(&job.spec(), s)
        .map_err(|e| shard_error(dir, &job.name, &job.id, e.to_string()))
}

/// [`read_shard`] plus the kind's own content check ([`JobKind::check_shard`](super::kind::JobKind::check_shard)).
///
/// # Errors
/// As [`read_shard`]; a failed content check is an [`Error::Shard`] too.
pub fn read_checked_shard(dir: &RunDir, kind: &dyn JobKind, job: &PlannedJob) -> Result<Shard> {
    let s = read_job_shard(dir, kind, job)?;
    check_shard_content(dir, kind, job, &s)?;
    Ok(s)
}

/// The state of one job's shard, fully checked ([`read_checked_shard`]):
/// what `status` shows and what a run decides resume on.
pub fn job_state(dir: &RunDir, kind: &dyn JobKind, j: &PlannedJob) -> JobState {
    state_of(dir, j, || read_checked_shard(dir, kind, j).map(|_| ()))
}

/// The state of a shard just written by a worker that exited 0, checked
/// cheaply ([`check_shard_bytes`]: trailer and header identity, no
/// decompression). The body is decoded and checked later by whoever reads
/// it: dependent jobs and `merge`, which decodes every shard.
pub fn written_state(dir: &RunDir, kind: &str, j: &PlannedJob) -> JobState {
    state_of(dir, j, || {
        let bytes = read_shard_bytes(dir, &j.name, &j.id)?;
        check_shard_bytes(dir, kind, &j.name, &j.id, &bytes).map(|_| ())
    })
}

fn state_of(dir: &RunDir, j: &PlannedJob, check: impl FnOnce() -> Result<()>) -> JobState {
    if !dir.shard_path(&j.id).exists() {
        return JobState::Pending;
    }
    match check() {
        Ok(()) => JobState::Done,
        Err(e) => {
            let message = match e {
                Error::Shard { message, .. } => message,
                e => e.to_string(),
            };
            match shard::file_format_version(&dir.shard_path(&j.id)) {
                Some(v) if v < shard::FORMAT_VERSION => JobState::Old(message),
                _ => JobState::Damaged(message),
            }
        }
    }
}

/// Loads shards of a fixed set of jobs (by name) from a run directory.
pub struct DirShards<'a> {
    /// The run directory.
    pub dir: &'a RunDir,
    /// The kind of every job.
    pub kind: &'a str,
    /// The loadable jobs.
    pub jobs: Vec<InputRef>,
}

impl ShardSource for DirShards<'_> {
    fn load(&self, name: &str) -> Result<Shard> {
        let j = self
            .jobs
            .iter()
            .find(|j| j.name == name)
            .ok_or_else(|| Error::job(name, "not an input of this job"))?;
        read_shard(self.dir, self.kind, &j.name, &j.id)
    }

    fn open(&self, name: &str) -> Result<shard::ShardFile> {
        let j = self
            .jobs
            .iter()
            .find(|j| j.name == name)
            .ok_or_else(|| Error::job(name, "not an input of this job"))?;
        open_shard_file(self.dir, self.kind, &j.name, &j.id)
    }

    fn mapped(&self, name: &str, section: &str) -> Result<SectionBytes> {
        let j = self
            .jobs
            .iter()
            .find(|j| j.name == name)
            .ok_or_else(|| Error::job(name, "not an input of this job"))?;
        let f = open_shard_file(self.dir, self.kind, &j.name, &j.id)?;
        let len = f
            .section_len(section)
            .ok_or_else(|| Error::job(name, format!("shard has no section {section}")))?;
        let scratch = self.dir.root().join("scratch");
        std::fs::create_dir_all(&scratch).map_err(Error::io(&scratch))?;
        let path = scratch.join(format!("{}.{section}", j.id));
        let sum_path = scratch.join(format!("{}.{section}.sha256", j.id));
        // A copy is used only when its whole content has the digest noted
        // when it was written (a copy left by an earlier run may be damaged).
        let intact = |p: &std::path::Path| -> bool {
            use sha2::Digest;
            let Ok(want) = std::fs::read_to_string(&sum_path) else {
                return false;
            };
            if !std::fs::metadata(p).is_ok_and(|m| m.len() == len) {
                return false;
            }
            let Ok(mut file) = std::fs::File::open(p) else {
                return false;
            };
            let mut h = sha2::Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            loop {
                match std::io::Read::read(&mut file, &mut buf) {
                    Ok(0) => break,
                    Ok(k) => h.update(&buf[..k]),
                    Err(_) => return false,
                }
            }
            hex::encode(h.finalize()) == want.trim()
        };
        // One writer at a time (the ranks of a job start together).
        let lock_path = scratch.join(format!("{}.{section}.lock", j.id));
        let lock = std::fs::File::create(&lock_path).map_err(Error::io(&lock_path))?;
        lock.lock().map_err(Error::io(&lock_path))?;
        if !intact(&path) {
            use sha2::Digest;
            let mut tmp = tempfile::NamedTempFile::new_in(&scratch).map_err(Error::io(&scratch))?;
            let mut h = sha2::Sha256::new();
            let n = f.block_count(section).unwrap_or(0);
            for i in 0..n {
                let b = f
                    .read_block(section, i)
                    .map_err(|m| shard_error(self.dir, &j.name, &j.id, m))?;
                h.update(&b);
                std::io::Write::write_all(&mut tmp, &b).map_err(Error::io(&path))?;
            }
            tmp.persist(&path).map_err(|e| Error::io(&path)(e.error))?;
            super::atomic::write_atomic_with(
                &sum_path,
                hex::encode(h.finalize()).as_bytes(),
                super::atomic::Durability::Deferred,
            )?;
        }
        drop(lock);
        let file = std::fs::File::open(&path).map_err(Error::io(&path))?;
        // SAFETY: the file is written once, complete, under its final name
        // (atomic rename) and never changed afterwards.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(Error::io(&path))?;
        if map.len() as u64 != len {
            return Err(Error::job(
                name,
                format!("{}: not {len} bytes", path.display()),
            ));
        }
        Ok(SectionBytes::Mapped(map))
    }
}

/// Opens the shard of job (`name`, `id`) for block reads
/// ([`shard::ShardFile`]) and checks that its header names this job and kind.
///
/// # Errors
/// [`Error::Shard`] naming job and file: missing, damaged index or header,
/// or another job's.
pub fn open_shard_file(dir: &RunDir, kind: &str, name: &str, id: &str) -> Result<shard::ShardFile> {
    let f =
        shard::ShardFile::open(&dir.shard_path(id)).map_err(|m| shard_error(dir, name, id, m))?;
    check_owner(dir, f.header(), kind, name, id)?;
    Ok(f)
}
