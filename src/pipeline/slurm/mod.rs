//! The Slurm executor: submits a plan's jobs to a Slurm cluster as job arrays
//! and waits for their shards, or leaves them running (`--detach`).
//!
//! Generic over plans: it knows job ids, inputs and costs, never a game.
//!
//! # How a plan becomes Slurm jobs
//! - Only jobs without a verified shard are submitted (resume = skip finished
//!   jobs, as in the local executor).
//! - Jobs are grouped by **dependency level** among the submitted jobs (a job
//!   whose inputs are all finished is level 0). Each level becomes one job
//!   array (`--array=0-N`, `%K` when a throttle is asked), split into parts of
//!   at most `MaxArraySize` tasks (read with `scontrol show config`). Task `i`
//!   of a part runs `gametables worker RUN_DIR/manifests/ID.toml` for the
//!   `i`-th job of that part (costliest first). A level's jobs are grouped by
//!   the threads they can use and by memory (no task asks for more than twice
//!   its estimate); each array asks for its largest job's estimated memory
//!   (`#SBATCH --mem`) and threads (`--cpus-per-task`), which the worker
//!   reads from `SLURM_CPUS_PER_TASK`. `--sbatch-arg=--mem=…` overrides them.
//! - A part depends (`--dependency=afterok:…`) on the parts that hold the
//!   inputs of its jobs; the merge job (`gametables merge RUN_DIR`) depends on
//!   every part. Every script sets `--kill-on-invalid-dep=yes`, so jobs whose
//!   inputs failed are cancelled by Slurm instead of waiting forever.
//! - Everything goes under the run directory, which every node must see at
//!   the same path (a shared filesystem): scripts in
//!   `slurm/submit-N/*.sbatch`, the record of submission `N` in
//!   `slurm/submit-N/submission.toml`, logs in `logs/slurm-%A_%a.out` (array
//!   tasks) and `logs/slurm-%j-merge.out`.
//!
//! # Waiting without `sacct`
//! Accounting (`sacct`) needs slurmdbd, which many clusters and our test
//! cluster lack. The coordinator therefore watches two things: shards that
//! appear (a shard at its final path is complete, see `shard`), and
//! `squeue --states=all` (machine format, `--noheader --format=…`), which
//! lists finished jobs for `MinJobAge` seconds with their final state. A task
//! that left the queue in a failed state, or that left it without a shard
//! appearing within `--latency-wait` ([`DEFAULT_LATENCY_WAIT`]), has
//! failed; the error names the job, its Slurm job id and its log. Workers and
//! the merge job get the same `--latency-wait` for input shards that a
//! shared filesystem shows late on their node.
//!
//! # Transient failures
//! A busy controller answers `Socket timed out on send/recv operation` (and
//! the like, see [`TRANSIENT`]). `sbatch`, `squeue`, `scontrol` and `scancel`
//! are then tried again with backoff (1 s doubling to 30 s) for up to
//! `--slurm-retry` seconds ([`DEFAULT_SLURM_RETRY`]), each retry said on
//! stderr; any other failure (a bad partition or option) is reported at once.
//! Before `sbatch` is tried again, the queue is asked whether the script went
//! in anyway (its answer lost), so no script is submitted twice. While
//! waiting, a failing `squeue` is polled again for as long, shards being
//! watched meanwhile.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::atomic::write_atomic;
use super::digest::sha256_hex;
use super::error::{Error, Result};
use super::executor::{RunSummary, job_progress_bar, pending_jobs};
use super::kind::JobKind;
use super::plan::PlanFile;
use super::resources::slurm_mem_mib;
use super::rundir::{RunDir, RunLock};

mod follow;
mod run;
mod status;
mod submission;
#[cfg(test)]
mod tests;
mod tools;

use self::follow::*;
pub use self::run::*;
pub use self::status::*;
use self::submission::*;
pub use self::tools::*;

/// Version of `submission.toml`.
/// (2 added `time_minutes`, `mem_mib` and `exclude` to the arrays and
/// `resubmitted`; a version-1 file reads with those empty).
pub const SUBMISSION_SCHEMA: u32 = 2;

/// `MaxArraySize` assumed when `scontrol` cannot tell (Slurm's default).
pub const DEFAULT_MAX_ARRAY_SIZE: usize = 1001;

/// Default of `--latency-wait`: how long a task may be out of the queue
/// without its shard appearing before it counts as failed (shards written on
/// a compute node can appear late on the submit node: NFS attribute caching).
/// Workers and the merge job wait as long for input shards not yet visible.
pub const DEFAULT_LATENCY_WAIT: Duration = Duration::from_secs(60);

/// Default of `--slurm-retry`: how long `sbatch`, `squeue`, `scontrol` and
/// `scancel` are tried again after transient controller failures ("Socket
/// timed out on send/recv operation", …).
pub const DEFAULT_SLURM_RETRY: Duration = Duration::from_secs(300);

/// Default of `--time-margin`: a task's `--time` is this many times its
/// job's single-core CPU estimate divided by its threads (estimates are taken
/// on one machine; cluster nodes may be slower or shared).
pub const DEFAULT_TIME_MARGIN: f64 = 3.0;

/// Default of `--time-floor`: no task asks for less (reading inputs, a slow
/// shared filesystem and start-up are not in the CPU estimate).
pub const DEFAULT_TIME_FLOOR: Duration = Duration::from_secs(10 * 60);

/// A task that ran out of time is resubmitted with this many times its limit.
pub const TIMEOUT_FACTOR: u32 = 4;

/// Default of `--max-retries`: how many times one job is resubmitted after a
/// failure that another try can cure (node lost, time limit, preemption,
/// memory once).
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// Array throttle (`--array=…%K`) when `--workers` is not given: at most this
/// many tasks of one array run at once, so that a level of thousands of jobs
/// does not flood the cluster.
pub const DEFAULT_ARRAY_LIMIT: usize = 64;

/// How long before its time limit a task is sent `SIGUSR1` (`--signal`),
/// at most: a tenth of the limit, between 30 s and this.
pub const MAX_SIGNAL_BEFORE: Duration = Duration::from_secs(300);

/// How long `status` retries `squeue` after transient failures.
const STATUS_RETRY: Duration = Duration::from_secs(20);

/// Slurm job states after which a job no longer runs (squeue `%T`).
const TERMINAL_STATES: [&str; 10] = [
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "REVOKED",
    "TIMEOUT",
];

/// Options of a Slurm run.
#[derive(Debug, Clone, Default)]
pub struct SlurmOptions {
    /// The `gametables` binary the jobs run; must exist at this path on every node.
    pub exe: PathBuf,
    /// `--partition` for every job (the cluster's default partition if `None`).
    pub partition: Option<String>,
    /// Extra `sbatch` arguments, passed verbatim before the script (e.g. `--time=1:00:00`).
    pub sbatch_args: Vec<String>,
    /// At most this many tasks of one array at once (`--array=…%K`;
    /// [`DEFAULT_ARRAY_LIMIT`] if `None`).
    pub array_limit: Option<usize>,
    /// `--account` for every job.
    pub account: Option<String>,
    /// `--qos` for every job.
    pub qos: Option<String>,
    /// `--time` = this × the job's CPU estimate / its threads
    /// ([`DEFAULT_TIME_MARGIN`]), at least [`SlurmOptions::time_floor`].
    pub time_margin: f64,
    /// The least `--time` of a task ([`DEFAULT_TIME_FLOOR`]; at least 1 min).
    pub time_floor: Duration,
    /// How many times one job is resubmitted after curable failures
    /// ([`DEFAULT_MAX_RETRIES`]).
    pub max_retries: u32,
    /// Submit and return without waiting.
    pub detach: bool,
    /// Resubmit every job, deleting existing shards first.
    pub force: bool,
    /// Show the progress bar (only drawn on a terminal anyway).
    pub progress: bool,
    /// How long to keep retrying a Slurm command that fails transiently
    /// (`--slurm-retry`; [`DEFAULT_SLURM_RETRY`]); zero: never retry.
    pub retry_for: Duration,
    /// Grace for shards to appear after their task left the queue, and for
    /// input shards to appear on a node (`--latency-wait`;
    /// [`DEFAULT_LATENCY_WAIT`]).
    pub latency_wait: Duration,
}

/// What [`run_slurm`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlurmOutcome {
    /// Every job has a shard. `merged` says whether the Slurm merge job wrote
    /// `result.toml` (false when nothing had to be submitted).
    Finished {
        /// Skipped, recomputed and computed jobs.
        summary: RunSummary,
        /// Whether `result.toml` was written by the merge job.
        merged: bool,
    },
    /// Submitted with `--detach`; `gametables status RUN_DIR` follows it.
    Detached {
        /// The submission number (`slurm/submit-N/`).
        submission: u32,
        /// Slurm job ids: array parts, then the merge job.
        slurm_ids: Vec<String>,
    },
}

/// One submitted job array in `submission.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayRecord {
    /// The script, relative to the run directory.
    pub script: String,
    /// Dependency level of its jobs.
    pub level: usize,
    /// Slurm job id of the array (empty until submitted).
    pub slurm_job_id: String,
    /// Job ids; array task `i` runs `jobs[i]`.
    pub jobs: Vec<String>,
    /// `--time` of every task, minutes.
    #[serde(default)]
    pub time_minutes: u64,
    /// `--mem` of every task, MiB.
    #[serde(default)]
    pub mem_mib: u64,
    /// Nodes its tasks must avoid (`--exclude`): nodes that failed them before.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// A job resubmitted after a failure, in `submission.toml` (the submissions
/// after the failure carry every earlier entry too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resubmission {
    /// Job name.
    pub job: String,
    /// Job id.
    pub id: String,
    /// The Slurm task that failed (`ARRAY_TASK`).
    pub slurm_id: String,
    /// Its final Slurm state, e.g. `NODE_FAIL`, `TIMEOUT`, `OUT_OF_MEMORY`.
    pub state: String,
    /// The node(s) it ran on, if known.
    pub node: String,
    /// What changed for the next try, e.g. `--exclude=n2`, `--time 40 min`.
    pub action: String,
    /// The try that failed (1 = the first submission).
    pub attempt: u32,
}

/// The merge job in `submission.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeRecord {
    /// The script, relative to the run directory.
    pub script: String,
    /// Slurm job id (empty until submitted).
    pub slurm_job_id: String,
}

/// `RUN_DIR/slurm/submit-N/submission.toml`: what one `run --executor slurm`
/// submitted. Informational (resume looks at shards only), but it lets
/// `status` and a second `run` find the Slurm jobs of the run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionRecord {
    /// Format version ([`SUBMISSION_SCHEMA`]).
    pub schema: u32,
    /// N in `submit-N`.
    pub submission: u32,
    /// The Slurm job name of every job of this run directory.
    pub job_name: String,
    /// Array parts in submission order.
    pub arrays: Vec<ArrayRecord>,
    /// The merge job.
    pub merge: MergeRecord,
    /// Jobs resubmitted after failures, oldest first.
    #[serde(default)]
    pub resubmitted: Vec<Resubmission>,
}

impl SubmissionRecord {
    fn path(dir: &RunDir, n: u32) -> PathBuf {
        dir.root().join(format!("slurm/submit-{n}/submission.toml"))
    }

    /// Reads the latest submission of a run directory, if any.
    ///
    /// # Errors
    /// [`Error::Manifest`] if the newest `submission.toml` is malformed.
    pub fn latest(dir: &RunDir) -> Result<Option<SubmissionRecord>> {
        let Some(n) = last_submission_number(dir) else {
            return Ok(None);
        };
        let path = Self::path(dir, n);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path)(e)),
        };
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| Error::Manifest {
                path,
                message: e.message().replace('\n', " "),
            })
    }

    fn save(&self, dir: &RunDir) -> Result<()> {
        let text = toml::to_string(self).expect("submission serializes");
        write_atomic(&Self::path(dir, self.submission), text.as_bytes())
    }

    /// Every Slurm job id recorded (submitted parts, then the merge job).
    pub fn slurm_ids(&self) -> Vec<String> {
        self.arrays
            .iter()
            .map(|a| a.slurm_job_id.clone())
            .chain([self.merge.slurm_job_id.clone()])
            .filter(|s| !s.is_empty())
            .collect()
    }
}

fn last_submission_number(dir: &RunDir) -> Option<u32> {
    std::fs::read_dir(dir.root().join("slurm"))
        .ok()?
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("submit-")?
                .parse()
                .ok()
        })
        .max()
}
