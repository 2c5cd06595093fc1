//! The job-kind trait: what a game must provide to run through the pipeline.
//!
//! A game implements [`JobKind`] for each of its computations in its own
//! folder (`src/games/<game>/`) and lists them in its
//! [`Game`](super::registry::Game) value; planning, manifests, shards,
//! executors, merge, verify and report are shared.

use super::error::Result;
use super::shard::{Section, SectionSink, Shard, ShardFile};

/// One job produced by [`JobKind::plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Name unique within the plan, e.g. `box-14x14` (letters, digits, `-`, `_`, `.`).
    pub name: String,
    /// The job's parameters (written into its manifest; part of its id).
    pub params: toml::Table,
    /// Names of jobs this one reads, all earlier in the plan.
    pub inputs: Vec<String>,
    /// Relative cost estimate (any unit); the scheduler starts costly jobs first.
    pub cost: u64,
    /// Estimated peak resident memory of the worker process running this job,
    /// in bytes (process overhead included). The local executor starts a job
    /// only when this fits what is left of its memory budget and refuses a
    /// plan with a job above the whole budget; the Slurm executor asks for it
    /// (`--mem`). Default [`DEFAULT_JOB_MEMORY`].
    pub memory: u64,
    /// Threads the job can use (≥ 1); the worker gets at most this many
    /// ([`crate::pipeline::worker_threads`]), Slurm `--cpus-per-task` this many.
    pub threads: u32,
    /// Estimated size of the job's shard on disk, in bytes (0 = unknown); `plan`
    /// prints the total.
    pub shard_bytes: u64,
    /// Estimated CPU time of the job on one core of a 2-core reference
    /// machine, in seconds (0 = under a second or unknown); `plan` prints the
    /// largest and the total.
    pub cpu_seconds: u64,
    /// Processes the job is split over ([`JobKind::split`]; 1: not split).
    /// Each runs [`JobKind::run_rank`]; `memory` and `threads` are those of
    /// one rank. Not part of the job's id: a split job writes the bytes of
    /// the whole one.
    pub ranks: u32,
}

/// What `plan` and `run` ask of the kinds' splitting of jobs over ranks
/// ([`JobKind::split`]): `--ranks`, `--split-above`, `--task-memory`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SplitPolicy {
    /// Split every job the kind can split and whose size (the kind's unit,
    /// e.g. positions) is at least `above` over this many ranks.
    pub ranks: Option<u32>,
    /// The least size a job split by `ranks` has.
    pub above: u64,
    /// Split every job whose memory is over this many bytes into as many
    /// ranks as bring each rank's memory within it.
    pub task_memory: Option<u64>,
}

/// How a job is split ([`JobKind::split`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// Ranks (≥ 2).
    pub ranks: u32,
    /// Peak memory of one rank, bytes.
    pub memory: u64,
    /// Single-core CPU seconds of all ranks together.
    pub cpu_seconds: u64,
}

/// Memory assumed for a job whose kind gives no estimate: a worker process
/// with small tables (64 MiB).
pub const DEFAULT_JOB_MEMORY: u64 = 64 << 20;

impl JobSpec {
    /// A job with default resources: [`DEFAULT_JOB_MEMORY`], one thread, no
    /// shard size or CPU time estimate.
    pub fn new(
        name: impl Into<String>,
        params: toml::Table,
        inputs: Vec<String>,
        cost: u64,
    ) -> Self {
        JobSpec {
            name: name.into(),
            params,
            inputs,
            cost,
            memory: DEFAULT_JOB_MEMORY,
            threads: 1,
            shard_bytes: 0,
            cpu_seconds: 0,
            ranks: 1,
        }
    }

    /// Sets the estimated peak memory in bytes ([`JobSpec::memory`]).
    #[must_use]
    pub fn with_memory(mut self, bytes: u64) -> Self {
        self.memory = bytes;
        self
    }

    /// Sets the threads the job can use (at least 1).
    #[must_use]
    pub fn with_threads(mut self, threads: u32) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Sets the estimated shard size in bytes.
    #[must_use]
    pub fn with_shard_bytes(mut self, bytes: u64) -> Self {
        self.shard_bytes = bytes;
        self
    }

    /// Sets the estimated single-core CPU seconds.
    #[must_use]
    pub fn with_cpu_seconds(mut self, seconds: u64) -> Self {
        self.cpu_seconds = seconds;
        self
    }
}

/// Sets each job's [`JobSpec::cpu_seconds`] from `exact` (its estimate in
/// seconds, one per job, in order), rounded so that the jobs' sum is the
/// rounded sum of `exact` (each job's running total is rounded): a plan of
/// many jobs of under a second each still shows its total.
pub fn spread_cpu_seconds(jobs: &mut [JobSpec], exact: &[f64]) {
    let mut sum = 0.0f64;
    let mut given = 0u64;
    for (j, &e) in jobs.iter_mut().zip(exact) {
        sum += e.max(0.0);
        let upto = sum.round() as u64;
        j.cpu_seconds = upto.saturating_sub(given);
        given = upto.max(given);
    }
}

/// A table file produced by [`JobKind::merge`], written to `RUN_DIR/tables/NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFile {
    /// File name (no directories).
    pub name: String,
    /// Content.
    pub bytes: Vec<u8>,
}

/// How a published claim compares with our value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimStatus {
    /// Our value equals the published one.
    Match,
    /// Our value differs and we did not expect it to: a failure.
    Mismatch,
    /// Our value differs as expected (a known error in the source); the note says why.
    KnownDiscrepancy,
    /// Not checked in this run (e.g. the job file does not cover it).
    NotCovered,
}

/// One published claim and our value, for `report.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Where it is published: text naming one of [`crate::pipeline::sources::WORKS`]
    /// (or starting with [`crate::pipeline::sources::OWN_CHECK`]).
    pub source: String,
    /// The claim in words.
    pub claim: String,
    /// The published value.
    pub expected: String,
    /// Our value.
    pub ours: String,
    /// The comparison.
    pub status: ClaimStatus,
}

impl Claim {
    /// A claim that matches when `ours == expected`.
    pub fn compare(
        source: &str,
        claim: &str,
        expected: impl ToString,
        ours: impl ToString,
    ) -> Claim {
        let (expected, ours) = (expected.to_string(), ours.to_string());
        let status = if expected == ours {
            ClaimStatus::Match
        } else {
            ClaimStatus::Mismatch
        };
        Claim {
            source: source.into(),
            claim: claim.into(),
            expected,
            ours,
            status,
        }
    }

    /// A claim this run's job file does not cover.
    pub fn not_covered(source: &str, claim: &str, expected: impl ToString, why: &str) -> Claim {
        Claim {
            source: source.into(),
            claim: claim.into(),
            expected: expected.to_string(),
            ours: why.into(),
            status: ClaimStatus::NotCovered,
        }
    }
}

/// Read access to shards by job name, given to [`JobKind::run`] (its inputs)
/// and to merge, check and claims (every job of the plan).
pub trait ShardSource {
    /// Loads and verifies the shard of job `name`.
    ///
    /// # Errors
    /// If the job is not available here or its shard is missing or damaged.
    fn load(&self, name: &str) -> Result<Shard>;

    /// Opens the shard of job `name` for block reads ([`ShardFile`]: header
    /// and index checked, each block checked when read; the whole-file
    /// trailer is not), after checking that its header names this job. For
    /// readers that must not hold a whole large shard in memory (a part of
    /// a job split by rank windows streams its earlier parts). The default refuses.
    ///
    /// # Errors
    /// If block reads are not available here, or the shard is missing,
    /// damaged or another job's.
    fn open(&self, name: &str) -> Result<ShardFile> {
        Err(super::Error::job(
            name,
            "block reads of shards are not available here",
        ))
    }

    /// Section `section` of job `name`'s shard without holding it in this
    /// process's memory: decompressed once into the run directory's
    /// `scratch/` and mapped read-only (for the ranks of a split job, which
    /// all read the child layers: on a node, their pages are shared and
    /// are page cache, not the ranks' own memory). The default reads the
    /// section into memory.
    ///
    /// # Errors
    /// As [`ShardSource::load`], and writing the copy.
    fn mapped(&self, name: &str, section: &str) -> Result<SectionBytes> {
        let shard = self.load(name)?;
        let s = shard
            .sections
            .into_iter()
            .find(|s| s.name == section)
            .ok_or_else(|| super::Error::job(name, format!("shard has no section {section}")))?;
        Ok(SectionBytes::Owned(s.bytes))
    }
}

/// The bytes of one section of a shard, held in memory or mapped from a
/// decompressed copy on disk ([`ShardSource::mapped`]).
pub enum SectionBytes {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Mapped read-only from a file: pages are read when touched and may be
    /// dropped by the kernel under memory pressure (clean page cache).
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Owned(v) => v,
            SectionBytes::Mapped(m) => m,
        }
    }
}

/// Section `section` of job `name`'s shard, read block by block through
/// `f`. A block that does not read is reported as a whole-shard read
/// reports it (naming the job, its id and the shard file): `src` decodes
/// the shard to say what is wrong.
///
/// # Errors
/// The shard's error, or a malformed section.
pub fn read_section(
    src: &dyn ShardSource,
    name: &str,
    f: &ShardFile,
    section: &str,
) -> Result<Vec<u8>> {
    f.read_section(section).map_err(|m| match src.load(name) {
        Err(e) => e,
        Ok(_) => super::Error::job(name, format!("malformed shard: {m}")),
    })
}

/// What merge, check and claims see of a run: its parameters, jobs, shards
/// and (for check and claims) the tables written by merge.
pub trait RunAccess: ShardSource {
    /// The job file's parameters (without `kind`).
    fn params(&self) -> &toml::Table;
    /// Jobs in plan order.
    fn jobs(&self) -> &[JobSpec];
    /// The content of table `name` as merged into `RUN_DIR/tables/`.
    ///
    /// # Errors
    /// If the table is missing or unreadable.
    fn table(&self, name: &str) -> Result<Vec<u8>>;
}

/// A computation the pipeline can plan, run, merge, verify and report on.
///
/// Implementations are pure apart from the shard and table access they are
/// given: they never touch files themselves.
pub trait JobKind: Sync {
    /// The `kind = "…"` value of job files.
    fn name(&self) -> &'static str;

    /// One-line description for `--help` and errors.
    fn about(&self) -> &'static str;

    /// Checks the job file's parameters, given as its text (so errors can name
    /// line and field), and splits it into jobs in dependency order.
    ///
    /// # Errors
    /// [`super::Error::JobFile`] with the line and field.
    fn plan(&self, path: &std::path::Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)>;

    /// zstd level of this kind's shard bodies (default
    /// [`ZSTD_LEVEL`](super::shard::ZSTD_LEVEL)). Part of the shard bytes,
    /// hence of the reference digests.
    fn zstd_level(&self) -> i32 {
        super::shard::ZSTD_LEVEL
    }

    /// The most raw (decompressed) bytes a shard of `job` can legitimately
    /// hold, all sections together. A shard declaring more is refused before
    /// anything is decompressed or allocated (a small crafted shard must not
    /// make `status` allocate gigabytes). The default is
    /// [`MAX_BODY`](super::shard::MAX_BODY); kinds whose sizes follow from
    /// the job's parameters give a tight bound.
    fn max_raw_bytes(&self, _job: &JobSpec) -> u64 {
        super::shard::MAX_BODY
    }

    /// Checks that a shard whose checksum verified really holds this job's
    /// result (e.g. its header describes the job's own box). Used by
    /// `status`, resume, merge (once per shard) and verify; a failure marks
    /// the shard damaged.
    ///
    /// # Errors
    /// A message saying what does not match.
    fn check_shard(&self, _job: &JobSpec, _shard: &Shard) -> Result<()> {
        Ok(())
    }

    /// Solves one job. `inputs` loads the shards of `job.inputs`.
    ///
    /// # Errors
    /// [`super::Error::Job`] if the parameters are invalid or an input is unusable.
    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>>;

    /// Solves one job, writing its sections to `out` in order (what the
    /// worker calls). The default writes what [`JobKind::run`] returns; a
    /// kind with a large section overrides it to stream the section in
    /// chunks instead of holding a second copy of it in memory.
    ///
    /// # Errors
    /// As [`JobKind::run`], and `out`'s write errors.
    fn run_into(
        &self,
        job: &JobSpec,
        inputs: &dyn ShardSource,
        out: &mut dyn SectionSink,
    ) -> Result<()> {
        for s in self.run(job, inputs)? {
            out.begin_section(&s.name)?;
            out.write(&s.bytes)?;
        }
        Ok(())
    }

    /// How `job` is split over ranks under `policy`, or `None` to run it
    /// whole (the default: the kind does not split jobs).
    ///
    /// # Errors
    /// When the policy asks for what cannot be: e.g. a `task_memory` below
    /// what one rank of the job needs whatever the split.
    fn split(&self, _job: &JobSpec, _policy: &SplitPolicy) -> Result<Option<Split>> {
        Ok(None)
    }

    /// Solves one rank's part of a job split over `ranks.ranks()` ranks
    /// ([`JobSpec::ranks`]): every rank calls it; rank 0 writes the job's
    /// sections to `out` (the bytes [`JobKind::run_into`] writes), the others
    /// write nothing. `store` keeps the rank's checkpoints: a rank started
    /// again resumes from them. The default refuses.
    ///
    /// # Errors
    /// As [`JobKind::run`], and the transport's errors.
    fn run_rank(
        &self,
        job: &JobSpec,
        _inputs: &dyn ShardSource,
        _ranks: &mut dyn super::ranks::Ranks,
        _store: &mut dyn super::ranks::RankStore,
        _out: &mut dyn SectionSink,
    ) -> Result<()> {
        Err(super::Error::job(
            &job.name,
            format!("kind {} does not split jobs over ranks", self.name()),
        ))
    }

    /// Assembles the global tables from every job's shard. Under `merge`,
    /// each shard loaded is decoded and checked ([`JobKind::check_shard`]);
    /// shards not loaded are decoded afterwards, so a kind need not load a
    /// shard only to have it checked.
    ///
    /// # Errors
    /// If shards are inconsistent (e.g. two boxes disagree), naming both.
    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>>;

    /// Internal consistency checks on the merged tables (run by `verify`, and
    /// by `run` after its own merge); returns one line per problem.
    ///
    /// # Errors
    /// If a table cannot be read.
    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>>;

    /// Every published claim this kind knows, with our value.
    ///
    /// # Errors
    /// If a table or shard cannot be read.
    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>>;

    /// Markdown appended to `report.md` after the claims: comparisons with
    /// published figures that are not claims to match (e.g. sampled
    /// counts). Default: nothing.
    ///
    /// # Errors
    /// If a table or shard cannot be read.
    fn report_notes(&self, _run: &dyn RunAccess) -> Result<String> {
        Ok(String::new())
    }

    /// The pictures this kind draws of a merged run (`gametables plot`,
    /// written as SVG and PNG to `RUN_DIR/plots/`, outside the digests),
    /// built with [`crate::plot`]. Default: none.
    ///
    /// # Errors
    /// If a table or shard cannot be read or a picture cannot be drawn.
    fn plots(&self, _run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        Ok(Vec::new())
    }
}

/// The job kinds a caller knows, by name: what the pipeline asks of the
/// registry ([`Registry`](super::registry::Registry) implements it) to open a
/// job file, a manifest or a run directory.
pub trait Kinds {
    /// The job kind called `name`, if any.
    fn kind(&self, name: &str) -> Option<&'static dyn JobKind>;
    /// Every kind's name, for messages.
    fn names(&self) -> Vec<&'static str>;
}

/// Writes [`JobKind::name`] and [`JobKind::about`] inside an `impl JobKind`
/// block: `kind_names!("my-kind", "What it computes, one line");`.
macro_rules! kind_names {
    ($name:literal, $about:literal) => {
        fn name(&self) -> &'static str {
            $name
        }
        fn about(&self) -> &'static str {
            $about
        }
    };
}
pub(crate) use kind_names;
