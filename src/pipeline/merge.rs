//! Merge, verify, report and status over a run directory.
//!
//! - [`merge`] hashes and verifies every shard (each fully decoded once),
//!   lets the kind assemble the tables, writes them to `tables/` and writes
//!   `result.toml`.
//! - [`check_merged`] runs the kind's checks and compares with a reference,
//!   right after a [`merge`] in the same process (what `run` does).
//! - [`verify`] re-hashes every shard and table, re-runs the merge in memory
//!   and compares, runs the kind's checks, and compares with a reference.
//! - [`report`] writes `report.md` from the kind's claims.
//! - [`status`] says done / pending / damaged per job.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use super::atomic::write_atomic;
use super::digest::sha256_hex;
use super::error::{Error, Result};
use super::kind::{Claim, ClaimStatus, JobSpec, RunAccess, ShardSource, TableFile};
use super::plan::PlannedJob;
use super::result::{ResultFile, ShardDigest, TableDigest};
use super::run_view::RunView;
use super::shard::{Shard, ShardFile};
use super::sources::{Work, sources_section};
use super::state::{
    JobState, check_shard_bytes, check_shard_content, decode_shard, job_states, open_shard_file,
    raw_bound, read_checked_shard, read_shard_bytes, shard_error,
};

/// A shard's digest, its file read once: the SHA-256 of the file and the
/// cheap integrity check ([`check_shard_bytes`]: trailer, header, job id,
/// name and kind; no decompression). Also returns the file's trailer, so
/// that later reads can tell the file is still the one hashed here.
fn hash_shard(view: &RunView, j: &PlannedJob) -> Result<(ShardDigest, [u8; 32])> {
    let bytes = read_shard_bytes(&view.dir, &j.name, &j.id)?;
    let digest = check_shard_bytes(&view.dir, &view.plan.kind, &j.name, &j.id, &bytes)?;
    let trailer = bytes[bytes.len() - 32..].try_into().expect("32 bytes");
    let d = ShardDigest {
        name: j.name.clone(),
        id: j.id.clone(),
        sha256: hex::encode(digest),
    };
    Ok((d, trailer))
}

/// The kind's merge over shards hashed by [`hash_shard`] (their `trailers`,
/// in plan order), decoding and checking every shard exactly once: those the
/// kind loads through [`MergeAccess`], the others afterwards.
fn merge_decoding_all(view: &RunView, trailers: Vec<[u8; 32]>) -> Result<Vec<TableFile>> {
    let access = MergeAccess {
        view,
        trailers,
        loaded: Mutex::new(BTreeSet::new()),
    };
    let tables = view.kind.merge(&access)?;
    let loaded = std::mem::take(
        &mut *access
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for j in &view.plan.jobs {
        if !loaded.contains(&j.name) {
            access.load(&j.name)?;
        }
    }
    Ok(tables)
}

/// The run as [`merge`] shows it to the kind: every shard it loads is fully
/// decoded, checked by the kind ([`JobKind::check_shard`]) and must still
/// carry the trailer [`hash_shard`] saw (so the digests in `result.toml`
/// are those of the bytes merged). Records which jobs were loaded, so that
/// merge can decode the others afterwards.
struct MergeAccess<'a> {
    view: &'a RunView,
    /// Trailer of each job's shard, in plan order.
    trailers: Vec<[u8; 32]>,
    /// Names of the jobs loaded so far.
    loaded: Mutex<BTreeSet<String>>,
}

impl MergeAccess<'_> {
    /// The plan position and spec of job `name`.
    fn job(&self, name: &str) -> Result<(usize, &super::plan::PlannedJob)> {
        self.view
            .plan
            .jobs
            .iter()
            .enumerate()
            .find(|(_, j)| j.name == name)
            .ok_or_else(|| Error::job(name, "no such job in this plan"))
    }
}

impl ShardSource for MergeAccess<'_> {
    fn load(&self, name: &str) -> Result<Shard> {
        let (i, j) = self.job(name)?;
        let (dir, kind) = (&self.view.dir, self.view.kind);
        let bytes = read_shard_bytes(dir, &j.name, &j.id)?;
        if bytes.len() < 32 || bytes[bytes.len() - 32..] != self.trailers[i] {
            return Err(shard_error(
                dir,
                &j.name,
                &j.id,
                "changed while being merged".into(),
            ));
        }
        let s = decode_shard(dir, kind.name(), &j.name, &j.id, &bytes, raw_bound(kind, j))?;
        check_shard_content(dir, kind, j, &s)?;
        self.loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(j.name.clone());
        Ok(s)
    }

    /// The shard for block reads, if its trailer is still the one hashed
    /// (the shard is still decoded and checked whole once, afterwards).
    fn open(&self, name: &str) -> Result<ShardFile> {
        let (i, j) = self.job(name)?;
        let (dir, kind) = (&self.view.dir, self.view.kind);
        let f = open_shard_file(dir, kind.name(), &j.name, &j.id)?;
        let mut tail = [0u8; 32];
        let len = std::fs::metadata(f.path()).map(|m| m.len()).unwrap_or(0);
        use std::os::unix::fs::FileExt;
        let same = len >= 32
            && std::fs::File::open(f.path())
                .and_then(|h| h.read_exact_at(&mut tail, len - 32))
                .is_ok()
            && tail == self.trailers[i];
        if !same {
            return Err(shard_error(
                dir,
                &j.name,
                &j.id,
                "changed while being merged".into(),
            ));
        }
        Ok(f)
    }
}

impl RunAccess for MergeAccess<'_> {
    fn params(&self) -> &toml::Table {
        self.view.params()
    }
    fn jobs(&self) -> &[JobSpec] {
        self.view.jobs()
    }
    fn table(&self, name: &str) -> Result<Vec<u8>> {
        self.view.table(name)
    }
}

fn result_of(view: &RunView, shards: Vec<ShardDigest>, tables: &[TableFile]) -> ResultFile {
    let tables: Vec<TableDigest> = tables
        .iter()
        .map(|t| TableDigest {
            name: t.name.clone(),
            sha256: sha256_hex(&t.bytes),
        })
        .collect();
    ResultFile {
        schema: super::result::RESULT_SCHEMA,
        job_file: view.plan.job_file.clone(),
        kind: view.plan.kind.clone(),
        root: ResultFile::root_of(&shards, &tables),
        shards,
        tables,
    }
}

/// Merges a finished run: writes `tables/` and `result.toml`.
///
/// Every shard is checked: each file is read and hashed once with the cheap
/// integrity check (trailer, header, job id, name, kind), then fully decoded
/// and checked by the kind ([`JobKind::check_shard`]) exactly once — by the
/// kind's merge for the shards it loads, afterwards for the others. A
/// successful merge thus proves what `verify` proves of the shards.
///
/// # Errors
/// [`Error::Shard`] for a missing or damaged shard (naming job and file), or
/// the kind's merge error (e.g. two boxes disagree).
pub fn merge(view: &RunView) -> Result<ResultFile> {
    let (shards, trailers): (Vec<_>, Vec<_>) = view
        .plan
        .jobs
        .iter()
        .map(|j| hash_shard(view, j))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    let tables = merge_decoding_all(view, trailers)?;
    let tdir = view.dir.tables_dir();
    std::fs::create_dir_all(&tdir).map_err(Error::io(&tdir))?;
    for t in &tables {
        write_atomic(&view.dir.resolve(&format!("tables/{}", t.name))?, &t.bytes)?;
    }
    let result = result_of(view, shards, &tables);
    let text = toml::to_string(&result).expect("result serializes");
    write_atomic(&view.dir.result_path(), text.as_bytes())?;
    Ok(result)
}

/// The checks `verify` adds to a merge, for a caller that has just merged
/// in this process ([`merge`] returned `merged`): the kind's checks
/// ([`JobKind::check`]) and, if given, the digests of a reference manifest.
/// What else `verify` does is re-prove what that merge proved: re-hash and
/// decode every shard, re-merge in memory and compare with the tables on
/// disk. Use [`verify`] for a run merged elsewhere (e.g. by a Slurm job).
///
/// # Errors
/// [`Error::Verify`] listing every problem, worded as [`verify`] words it;
/// other errors if a table or the reference cannot be read.
pub fn check_merged(
    view: &RunView,
    merged: &ResultFile,
    reference: Option<&Path>,
) -> Result<ResultFile> {
    let mut problems = view.kind.check(view)?;
    if let Some(rp) = reference {
        reference_problems(merged, rp, &mut problems)?;
    }
    if problems.is_empty() {
        Ok(merged.clone())
    } else {
        Err(Error::Verify { problems })
    }
}

/// Appends the differences of `now` from the reference manifest at `rp`.
fn reference_problems(now: &ResultFile, rp: &Path, problems: &mut Vec<String>) -> Result<()> {
    let r = ResultFile::load(rp)?;
    for d in now.diff(&r) {
        problems.push(format!("{d} [reference {}]", rp.display()));
    }
    Ok(())
}

/// Every shard that does not decode or fails the kind's `check_shard`, one
/// line each (naming job and file), in plan order: what `verify` lists once
/// it knows something is wrong.
fn shard_problems(view: &RunView) -> Vec<String> {
    view.plan
        .jobs
        .iter()
        .filter_map(|j| read_checked_shard(&view.dir, view.kind, j).err())
        .map(|e| e.to_string())
        .collect()
}

/// Verifies a merged run: every shard re-hashed, decoded and checked by the
/// kind, every table re-hashed and equal to a fresh in-memory merge, the
/// kind's checks, and (if given) the digests of a reference manifest.
///
/// Each shard is decoded once for the fresh merge (as in [`merge`]) and once
/// more by the kind's checks. When a shard fails the cheap check or the
/// fresh merge fails, every shard is decoded and checked on its own, so that
/// every damaged shard is listed.
///
/// # Errors
/// [`Error::Verify`] listing every mismatch (job, file, digests); other
/// errors if the run directory is unusable or the kind's merge fails on
/// intact shards.
pub fn verify(view: &RunView, reference: Option<&Path>) -> Result<ResultFile> {
    let mut problems = Vec::new();
    let recorded = ResultFile::load(&view.dir.result_path()).map_err(|e| match e {
        Error::Io { .. } => Error::RunDir {
            path: view.dir.root().to_path_buf(),
            message: "no result.toml: not merged yet (run `gametables merge`)".into(),
        },
        e => e,
    })?;
    let mut shards = Vec::new();
    let mut trailers = Vec::new();
    for j in &view.plan.jobs {
        match hash_shard(view, j) {
            Err(e) => {
                problems = shard_problems(view);
                if problems.is_empty() {
                    // Changed back since hashed: still a problem (and the
                    // trailers are incomplete, so no merge may follow).
                    problems.push(e.to_string());
                }
                break;
            }
            Ok((d, t)) => {
                shards.push(d);
                trailers.push(t);
            }
        }
    }
    for t in &recorded.tables {
        let p = view.dir.tables_dir().join(&t.name);
        match std::fs::read(&p) {
            Err(e) => problems.push(format!("table {}: {e}", p.display())),
            Ok(b) if sha256_hex(&b) != t.sha256 => problems.push(format!(
                "table {}: sha256 {} but result.toml says {}",
                p.display(),
                sha256_hex(&b),
                t.sha256
            )),
            Ok(_) => {}
        }
    }
    let mut current = None;
    if problems.is_empty() {
        let fresh = match merge_decoding_all(view, trailers) {
            Ok(fresh) => fresh,
            Err(e) => {
                // A merge error on intact shards is the kind's own.
                let problems = shard_problems(view);
                return Err(if problems.is_empty() {
                    e
                } else {
                    Error::Verify { problems }
                });
            }
        };
        let now = result_of(view, shards, &fresh);
        for d in now.diff(&recorded) {
            problems.push(format!("{d} (result.toml is stale or tables were edited)"));
        }
        problems.extend(view.kind.check(view)?);
        current = Some(now);
    }
    if let (Some(now), Some(rp)) = (&current, reference) {
        reference_problems(now, rp, &mut problems)?;
    }
    match current {
        Some(now) if problems.is_empty() => Ok(now),
        _ => Err(Error::Verify { problems }),
    }
}

/// Writes `report.md`: every claim of the kind, with a summary line.
/// Returns the claims. `works`: every published work claims may cite
/// ([`Registry::works`](super::registry::Registry::works)), for `## Sources`.
///
/// # Errors
/// If the run is not merged or a table cannot be read.
pub fn report(view: &RunView, works: &[Work]) -> Result<Vec<Claim>> {
    let claims = view.kind.claims(view)?;
    let count = |s: ClaimStatus| claims.iter().filter(|c| c.status == s).count();
    let mut md = format!(
        "# Report: {} (kind `{}`)\n\n\
         Every published claim this job kind knows, our value, and whether it matches.\n\n\
         {} claims: {} match, {} mismatch, {} known discrepancies in the source, {} not covered by this job file.\n\n\
         | # | source | claim | published | ours | status |\n|---|---|---|---|---|---|\n",
        view.plan.job_file,
        view.plan.kind,
        claims.len(),
        count(ClaimStatus::Match),
        count(ClaimStatus::Mismatch),
        count(ClaimStatus::KnownDiscrepancy),
        count(ClaimStatus::NotCovered),
    );
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for (i, c) in claims.iter().enumerate() {
        let status = match c.status {
            ClaimStatus::Match => "match",
            ClaimStatus::Mismatch => "**MISMATCH**",
            ClaimStatus::KnownDiscrepancy => "known discrepancy",
            ClaimStatus::NotCovered => "not covered",
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            i + 1,
            esc(&c.source),
            esc(&c.claim),
            esc(&c.expected),
            esc(&c.ours),
            status
        ));
    }
    let notes = view.kind.report_notes(view)?;
    if !notes.is_empty() {
        md.push('\n');
        md.push_str(&notes);
    }
    let sources = sources_section(
        claims
            .iter()
            .map(|c| c.source.as_str())
            .chain([notes.as_str()]),
        works,
    );
    if !sources.is_empty() {
        md.push('\n');
        md.push_str(&sources);
    }
    if let Ok(r) = ResultFile::load(&view.dir.result_path()) {
        md.push_str(&format!("\nRoot digest (result.toml): `{}`\n", r.root));
    }
    write_atomic(&view.dir.report_path(), md.as_bytes())?;
    Ok(claims)
}

/// Whether a run's tables are the merge of its shards as they are now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeState {
    /// No `result.toml`.
    NotMerged,
    /// `result.toml` lists exactly the plan's jobs and every shard is done;
    /// its root digest.
    Merged(String),
    /// `result.toml` exists but no longer describes the shards (some are
    /// damaged, deleted or missing, or it is unreadable); why.
    Stale(String),
}

/// Why the tables under `dir` are no longer those `result.toml` lists
/// (a table missing, unreadable or with another SHA-256: edited since the
/// merge), or `None` if every one is as merged. Reads every table once.
fn changed_tables(dir: &Path, tables: &[TableDigest]) -> Option<String> {
    let changed: Vec<String> = tables
        .iter()
        .filter_map(|t| match super::digest::sha256_file(&dir.join(&t.name)) {
            Ok(d) if d == t.sha256 => None,
            Ok(_) => Some(format!("{} (changed)", t.name)),
            Err(e) => Some(format!("{} ({e})", t.name)),
        })
        .collect();
    (!changed.is_empty()).then(|| {
        format!(
            "table(s) {} differ from result.toml since the merge; `run` merges again, \
             `verify` names every difference",
            changed.join(", ")
        )
    })
}

/// A run whose tables a reader (`report`, `plot`) may trust: `result.toml`
/// lists exactly the plan's jobs, every shard opens with its header and
/// block index intact (no shard is decoded: this is cheap on a run of
/// hundreds of GB; `verify` and `status` read every byte), and every table
/// has the SHA-256 `result.toml` lists.
///
/// # Errors
/// [`Error::RunDir`] naming the run and why: not merged yet, or stale
/// (a shard missing or damaged, tables edited since the merge).
pub fn require_merged(view: &RunView) -> Result<()> {
    let run = || view.dir.root().to_path_buf();
    let stale = |why: String| Error::RunDir {
        path: run(),
        message: format!("the run's tables are not the merge of its shards: {why}"),
    };
    let r = match ResultFile::load(&view.dir.result_path()) {
        Err(Error::Io { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::RunDir {
                path: run(),
                message: "the run is not merged yet (no result.toml): `gametables run` \
                          finishes and merges it"
                    .into(),
            });
        }
        Err(e) => return Err(stale(format!("result.toml unreadable ({e})"))),
        Ok(r) => r,
    };
    if !r
        .shards
        .iter()
        .map(|d| &d.id)
        .eq(view.plan.jobs.iter().map(|j| &j.id))
    {
        return Err(stale("result.toml lists other jobs than the plan".into()));
    }
    for j in &view.plan.jobs {
        super::state::open_shard_file(&view.dir, &view.plan.kind, &j.name, &j.id).map_err(|e| {
            stale(format!(
                "{e}; `run` recomputes it, `status` and `verify` check every shard"
            ))
        })?;
    }
    match changed_tables(&view.dir.tables_dir(), &r.tables) {
        Some(why) => Err(stale(why)),
        None => Ok(()),
    }
}

/// What `status` shows: each job's state in plan order, and the merge.
#[derive(Debug, Clone)]
pub struct RunStatus {
    /// (name, id, state) of every job, in plan order ([`job_states`]).
    pub jobs: Vec<(String, String, JobState)>,
    /// Whether `result.toml` describes the shards as they are.
    pub merge: MergeState,
}

/// Each job's state ([`job_states`]: every shard fully decoded and checked)
/// and whether the run is merged. A run whose shards are not all done is
/// never called merged, whatever `result.toml` says.
pub fn status(view: &RunView) -> RunStatus {
    let states = job_states(&view.dir, &view.plan, view.kind);
    let not_done = states.iter().filter(|s| **s != JobState::Done).count();
    let merge = match ResultFile::load(&view.dir.result_path()) {
        Err(Error::Io { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => {
            MergeState::NotMerged
        }
        Err(e) => MergeState::Stale(format!("result.toml unreadable ({e})")),
        Ok(_) if not_done > 0 => MergeState::Stale(format!(
            "{not_done} shard(s) damaged, deleted, missing or in an older format since; `run` recomputes them and merges again"
        )),
        Ok(r)
            if !r
                .shards
                .iter()
                .map(|d| &d.id)
                .eq(view.plan.jobs.iter().map(|j| &j.id)) =>
        {
            MergeState::Stale("result.toml lists other jobs than the plan".into())
        }
        Ok(r) => match changed_tables(&view.dir.tables_dir(), &r.tables) {
            Some(why) => MergeState::Stale(why),
            None => MergeState::Merged(r.root),
        },
    };
    RunStatus {
        jobs: view
            .plan
            .jobs
            .iter()
            .zip(states)
            .map(|(j, st)| (j.name.clone(), j.id.clone(), st))
            .collect(),
        merge,
    }
}
