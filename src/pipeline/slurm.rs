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

// ---------------------------------------------------------------- the plan of a submission

/// One array part: jobs of one dependency level and one resource class, at
/// most `MaxArraySize`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    /// `level{L}-part{P}`.
    name: String,
    level: usize,
    /// Plan indices; array task `i` runs `jobs[i]`.
    jobs: Vec<usize>,
    /// Indices of earlier parts this one waits for.
    after: Vec<usize>,
    /// Memory every task asks for (`--mem`): the largest estimate of its jobs, bytes.
    memory: u64,
    /// `--cpus-per-task`: the threads its jobs can use.
    threads: u32,
    /// `--time` of every task, minutes: the largest of its jobs' ([`time_minutes`]).
    minutes: u64,
    /// `--exclude`: nodes that failed its jobs before.
    exclude: Vec<String>,
}

/// What earlier failures changed for a job's next try ([`decide`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Retry {
    /// Failed tries so far.
    attempts: u32,
    /// `--time` multiplier ([`TIMEOUT_FACTOR`] for each time-out; 0 = 1).
    time_factor: u64,
    /// `--mem` multiplier (2 after running out of memory; 0 = 1).
    mem_factor: u64,
    /// Nodes it must avoid.
    exclude: BTreeSet<String>,
}

impl Retry {
    fn key(&self) -> (u64, u64, &BTreeSet<String>) {
        (
            self.time_factor.max(1),
            self.mem_factor.max(1),
            &self.exclude,
        )
    }
}

/// The rate at which the merge job is assumed to read, decode and check
/// shards, bytes per second, for its `--time`: `verify` (which re-merges in
/// memory) read the 3.7 GiB of the 10×60 Chomp box's shards in 106 s on 2
/// cores here (36 MiB/s, 4.1 GB largest process, parts of 9.5 GiB) and the
/// 2.8 GiB of `quixo-5-20g` in 75 s (38 MiB/s, 6.7 GB, jobs up to 16.6
/// GiB), 6 Dec 2026.
const MERGE_BYTES_PER_SEC: u64 = 32 << 20;

/// The least memory the merge job asks for, MiB: a merge of small shards
/// still holds the tables and the report (measured peaks, 6 Dec 2026:
/// chomp-boxes 15 MB, dodgem-5 230 MB, chomp-18x18 1.2 GB against its 1.9
/// GiB job).
const MERGE_MIN_MIB: u64 = 1024;

/// How `--time` is chosen: [`SlurmOptions::time_margin`] and
/// [`SlurmOptions::time_floor`].
#[derive(Debug, Clone, Copy)]
struct TimePolicy {
    margin: f64,
    floor: Duration,
}

/// The `--time` of a job in whole minutes: `margin` × its single-core CPU
/// estimate / its threads, at least `floor` and 1 min, times `factor`.
fn time_minutes(cpu_seconds: u64, threads: u32, policy: TimePolicy, factor: u64) -> u64 {
    let secs = (cpu_seconds as f64 * policy.margin.max(0.0) / f64::from(threads.max(1))).ceil();
    let secs = if secs.is_finite() {
        secs as u64
    } else {
        u64::MAX / 4
    };
    secs.max(policy.floor.as_secs())
        .div_ceil(60)
        .max(1)
        .saturating_mul(factor.max(1))
}

/// How long before a limit of `minutes` the task is sent `SIGUSR1`:
/// a tenth of the limit, 30 s to [`MAX_SIGNAL_BEFORE`].
fn signal_before(minutes: u64) -> u64 {
    (minutes * 6).clamp(30, MAX_SIGNAL_BEFORE.as_secs())
}

/// Groups the pending jobs (plan indices, in plan order) into array parts.
///
/// Levels count only pending inputs: a job whose inputs all have shards is
/// level 0. Within a level, jobs are grouped by the threads they can use and
/// by memory, so that no task asks for more than twice its own estimate
/// (an array asks the same `--mem` for every task); within a group the
/// costliest jobs come first.
#[cfg(test)]
fn parts_of(plan: &PlanFile, pending: &[usize], max_array_size: usize) -> Vec<Part> {
    let policy = TimePolicy {
        margin: DEFAULT_TIME_MARGIN,
        floor: DEFAULT_TIME_FLOOR,
    };
    parts_with(plan, pending, max_array_size, &BTreeMap::new(), policy)
}

/// [`parts_of`] for jobs some of which failed before: jobs with different
/// [`Retry`] settings go into different parts, and a part asks for its jobs'
/// multiplied time and memory and excludes their failed nodes.
fn parts_with(
    plan: &PlanFile,
    pending: &[usize],
    max_array_size: usize,
    retries: &BTreeMap<usize, Retry>,
    policy: TimePolicy,
) -> Vec<Part> {
    let none = Retry::default();
    let retry = |i: usize| retries.get(&i).unwrap_or(&none);
    let is_pending: BTreeSet<usize> = pending.iter().copied().collect();
    let index: BTreeMap<&str, usize> = plan
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.id.as_str(), i))
        .collect();
    let pending_inputs = |i: usize| -> Vec<usize> {
        plan.jobs[i]
            .inputs
            .iter()
            .filter_map(|inp| index.get(inp.id.as_str()).copied())
            .filter(|k| is_pending.contains(k))
            .collect()
    };
    // Plans list inputs before the jobs that read them, so one pass suffices.
    let mut level: BTreeMap<usize, usize> = BTreeMap::new();
    for &i in pending {
        let l = pending_inputs(i)
            .iter()
            .map(|k| level.get(k).map_or(0, |l| l + 1))
            .max()
            .unwrap_or(0);
        level.insert(i, l);
    }
    let max_level = level.values().copied().max().unwrap_or(0);
    let mut parts: Vec<Part> = Vec::new();
    let mut part_of: BTreeMap<usize, usize> = BTreeMap::new();
    for l in 0..=max_level {
        let mut jobs: Vec<usize> = pending.iter().copied().filter(|i| level[i] == l).collect();
        jobs.sort_by_key(|&i| {
            let j = &plan.jobs[i];
            (
                std::cmp::Reverse(j.threads),
                std::cmp::Reverse(j.memory),
                std::cmp::Reverse(j.cost),
                i,
            )
        });
        // Cut where the threads change, the memory halves, or the array is full.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in jobs {
            let j = &plan.jobs[i];
            match groups.last_mut() {
                Some(g)
                    if g.len() < max_array_size.max(1)
                        && plan.jobs[g[0]].threads == j.threads
                        && j.memory.saturating_mul(2) >= plan.jobs[g[0]].memory
                        && retry(i).key() == retry(g[0]).key() =>
                {
                    g.push(i)
                }
                _ => groups.push(vec![i]),
            }
        }
        for g in &mut groups {
            g.sort_by_key(|&i| (std::cmp::Reverse(plan.jobs[i].cost), i));
        }
        for (p, chunk) in groups.iter().enumerate() {
            let me = parts.len();
            let mut after: BTreeSet<usize> = BTreeSet::new();
            for &i in chunk {
                part_of.insert(i, me);
                after.extend(pending_inputs(i).iter().map(|k| part_of[k]));
            }
            parts.push(Part {
                name: format!("level{l}-part{p}"),
                level: l,
                jobs: chunk.to_vec(),
                after: after.into_iter().collect(),
                memory: chunk
                    .iter()
                    .map(|&i| plan.jobs[i].memory.saturating_mul(retry(i).key().1))
                    .max()
                    .unwrap_or(0),
                minutes: chunk
                    .iter()
                    .map(|&i| {
                        let j = &plan.jobs[i];
                        time_minutes(j.cpu_seconds, j.threads, policy, retry(i).key().0)
                    })
                    .max()
                    .unwrap_or(1),
                exclude: retry(chunk[0]).exclude.iter().cloned().collect(),
                threads: chunk
                    .iter()
                    .map(|&i| plan.jobs[i].threads)
                    .max()
                    .unwrap_or(1),
            });
        }
    }
    parts
}

/// Everything needed to write the scripts of one submission.
struct Submission<'a> {
    plan: &'a PlanFile,
    /// Absolute run directory.
    root: PathBuf,
    /// Absolute `gametables` binary.
    exe: PathBuf,
    number: u32,
    job_name: String,
    parts: Vec<Part>,
    opts: &'a SlurmOptions,
    /// The partition's longest time limit, minutes (`sinfo`), which no
    /// `--time` exceeds; `None`: infinite or not known.
    time_cap: Option<u64>,
    /// The largest node's memory, MiB (`sinfo`), if known.
    mem_cap: Option<u64>,
}

/// Quotes `s` for a POSIX shell when needed.
fn sh(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%^".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The Slurm job name of a run directory: `gt-JOBFILE-` and 8 hex digits of
/// the directory's absolute path (to tell runs of the same job file apart).
fn job_name_for(job_file: &str, root: &Path) -> String {
    format!(
        "gt-{job_file}-{}",
        &sha256_hex(path_str(root).as_bytes())[..8]
    )
}

impl Submission<'_> {
    fn sub_rel(&self) -> String {
        format!("slurm/submit-{}", self.number)
    }

    fn script_rel(&self, name: &str) -> String {
        format!("{}/{name}.sbatch", self.sub_rel())
    }

    fn header(&self, out: &mut String, what: &str) {
        let _ = writeln!(out, "#!/bin/bash");
        let _ = writeln!(
            out,
            "# gametables: {} (kind {}), submission {}: {what}",
            self.plan.job_file, self.plan.kind, self.number
        );
        let _ = writeln!(out, "#SBATCH --job-name={}", self.job_name);
        if let Some(p) = &self.opts.partition {
            let _ = writeln!(out, "#SBATCH --partition={p}");
        }
        if let Some(a) = &self.opts.account {
            let _ = writeln!(out, "#SBATCH --account={a}");
        }
        if let Some(q) = &self.opts.qos {
            let _ = writeln!(out, "#SBATCH --qos={q}");
        }
        let _ = writeln!(out, "#SBATCH --kill-on-invalid-dep=yes");
    }

    fn preamble(&self, out: &mut String) {
        let root = sh(&path_str(&self.root));
        let exe = sh(&path_str(&self.exe));
        let _ = writeln!(out, "set -u");
        let _ = writeln!(out, "RUN_DIR={root}");
        let _ = writeln!(out, "GAMETABLES={exe}");
        let _ = writeln!(out, "if [ ! -d \"$RUN_DIR/shards\" ]; then");
        let _ = writeln!(
            out,
            "  echo \"error: run directory $RUN_DIR is not visible on $(hostname): \
             it must be on a filesystem every node mounts at the same path\" >&2"
        );
        let _ = writeln!(out, "  exit 1");
        let _ = writeln!(out, "fi");
        let _ = writeln!(out, "if [ ! -x \"$GAMETABLES\" ]; then");
        let _ = writeln!(
            out,
            "  echo \"error: $GAMETABLES is not on $(hostname): \
             install gametables at a path every node sees\" >&2"
        );
        let _ = writeln!(out, "  exit 1");
        let _ = writeln!(out, "fi");
    }

    fn array_script(&self, part: &Part) -> String {
        let n = part.jobs.len();
        let mut s = String::new();
        self.header(
            &mut s,
            &format!(
                "{}, {n} job(s) of dependency level {}",
                part.name, part.level
            ),
        );
        let limit = self.opts.array_limit.unwrap_or(DEFAULT_ARRAY_LIMIT).max(1);
        let _ = writeln!(s, "#SBATCH --array=0-{}%{limit}", n - 1);
        // From the plan's estimates; an --sbatch-arg given on the command
        // line overrides these lines (sbatch's rule).
        let _ = writeln!(s, "#SBATCH --mem={}M", slurm_mem_mib(part.memory));
        let _ = writeln!(s, "#SBATCH --cpus-per-task={}", part.threads.max(1));
        let _ = writeln!(
            s,
            "#SBATCH --time={} # {} x the CPU estimate / threads, at least {} min{}",
            part.minutes,
            self.opts.time_margin,
            self.opts.time_floor.as_secs().div_ceil(60).max(1),
            self.cap_note(part.minutes)
        );
        let _ = writeln!(s, "#SBATCH --signal=B:USR1@{}", signal_before(part.minutes));
        // Failed tasks are resubmitted by the coordinator, which knows why.
        let _ = writeln!(s, "#SBATCH --no-requeue");
        if !part.exclude.is_empty() {
            let _ = writeln!(s, "#SBATCH --exclude={}", part.exclude.join(","));
        }
        let _ = writeln!(
            s,
            "#SBATCH --output={}/logs/slurm-%A_%a.out",
            path_str(&self.root)
        );
        self.preamble(&mut s);
        let _ = writeln!(s, "case \"${{SLURM_ARRAY_TASK_ID:-}}\" in");
        for (t, &i) in part.jobs.iter().enumerate() {
            let j = &self.plan.jobs[i];
            let _ = writeln!(s, "  {t}) JOB_ID={} ;; # {}", j.id, j.name);
        }
        let _ = writeln!(
            s,
            "  *) echo \"error: no job for array task ${{SLURM_ARRAY_TASK_ID:-}}\" >&2; exit 1 ;;"
        );
        let _ = writeln!(s, "esac");
        let _ = writeln!(
            s,
            "echo \"gametables: job $JOB_ID on ${{SLURMD_NODENAME:-$(hostname)}}, Slurm job ${{SLURM_ARRAY_JOB_ID:-}}_${{SLURM_ARRAY_TASK_ID:-}}, limit {} min\" >&2",
            part.minutes
        );
        let _ = writeln!(
            s,
            "trap 'echo \"gametables: SIGUSR1 after $SECONDS s: the time limit ({} min) is near; if the job is killed, the coordinator resubmits it with more time\" >&2' USR1",
            part.minutes
        );
        let _ = writeln!(
            s,
            "\"$GAMETABLES\" worker \"$RUN_DIR/manifests/$JOB_ID.toml\" --run-dir \"$RUN_DIR\" \\\n  --latency-wait {} &",
            self.opts.latency_wait.as_secs()
        );
        let _ = writeln!(s, "WORKER=$!");
        let _ = writeln!(
            s,
            "# wait again after the trap ran; the last wait gives the worker's status"
        );
        let _ = writeln!(
            s,
            "while wait \"$WORKER\"; [ $? -gt 128 ] && kill -0 \"$WORKER\" 2>/dev/null; do :; done"
        );
        let _ = writeln!(s, "wait \"$WORKER\"");
        s
    }

    /// The merge job's `--mem` (MiB) and `--time` (minutes): the memory of
    /// the plan's largest job, as the merge decodes and checks one shard at
    /// a time, and at least [`MERGE_MIN_MIB`] (no more than the largest
    /// node has); the time margin × every shard read at
    /// [`MERGE_BYTES_PER_SEC`], at least the time floor (no more than the
    /// partition's limit).
    fn merge_resources(&self) -> (u64, u64) {
        let mem = self
            .plan
            .jobs
            .iter()
            .map(|j| slurm_mem_mib(j.memory))
            .max()
            .unwrap_or(1)
            .max(MERGE_MIN_MIB);
        let mem = self.mem_cap.map_or(mem, |c| mem.min(c.max(1)));
        let bytes: u64 = self.plan.jobs.iter().map(|j| j.shard_bytes).sum();
        // It may first wait up to --latency-wait for shards to show.
        let wait = self.opts.latency_wait.as_secs();
        let secs = (bytes as f64 / MERGE_BYTES_PER_SEC as f64 * self.opts.time_margin.max(0.0))
            .ceil()
            .min(1e12) as u64;
        let minutes = secs
            .saturating_add(wait)
            .max(self.opts.time_floor.as_secs())
            .div_ceil(60)
            .max(1);
        (
            mem,
            self.time_cap.map_or(minutes, |c| minutes.min(c.max(1))),
        )
    }

    /// The note after a `--time` of `minutes`: whether the partition's
    /// time limit cut it.
    fn cap_note(&self, minutes: u64) -> &'static str {
        if self.time_cap == Some(minutes) {
            ", or the partition's time limit"
        } else {
            ""
        }
    }

    fn merge_script(&self) -> String {
        let mut s = String::new();
        self.header(&mut s, "merge, after every job");
        let (mem, minutes) = self.merge_resources();
        let _ = writeln!(
            s,
            "#SBATCH --mem={mem}M # as the plan's largest job, at least {MERGE_MIN_MIB} MiB{}",
            if self.mem_cap == Some(mem) && mem < MERGE_MIN_MIB {
                ", or all the largest node has"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "#SBATCH --time={minutes} # {} x the shards read at {} MiB/s plus --latency-wait, at least {} min{}",
            self.opts.time_margin,
            MERGE_BYTES_PER_SEC >> 20,
            self.opts.time_floor.as_secs().div_ceil(60).max(1),
            self.cap_note(minutes)
        );
        let _ = writeln!(
            s,
            "#SBATCH --output={}/logs/slurm-%j-merge.out",
            path_str(&self.root)
        );
        self.preamble(&mut s);
        let _ = writeln!(
            s,
            "exec \"$GAMETABLES\" merge \"$RUN_DIR\" --latency-wait {}",
            self.opts.latency_wait.as_secs()
        );
        s
    }

    /// `sbatch` arguments for a script waiting for `deps` (Slurm job ids).
    fn sbatch_args(&self, script_rel: &str, deps: &[String]) -> Vec<String> {
        let mut a = vec!["--parsable".to_string()];
        if !deps.is_empty() {
            a.push(format!("--dependency=afterok:{}", deps.join(":")));
        }
        a.extend(self.opts.sbatch_args.iter().cloned());
        a.push(path_str(&self.root.join(script_rel)));
        a
    }

    fn record(&self) -> SubmissionRecord {
        SubmissionRecord {
            schema: SUBMISSION_SCHEMA,
            submission: self.number,
            job_name: self.job_name.clone(),
            arrays: self
                .parts
                .iter()
                .map(|p| ArrayRecord {
                    script: self.script_rel(&p.name),
                    level: p.level,
                    slurm_job_id: String::new(),
                    jobs: p
                        .jobs
                        .iter()
                        .map(|&i| self.plan.jobs[i].id.clone())
                        .collect(),
                    time_minutes: p.minutes,
                    mem_mib: slurm_mem_mib(p.memory),
                    exclude: p.exclude.clone(),
                })
                .collect(),
            merge: MergeRecord {
                script: self.script_rel("merge"),
                slurm_job_id: String::new(),
            },
            resubmitted: Vec::new(),
        }
    }
}

// ---------------------------------------------------------------- talking to Slurm

/// The Slurm commands, found on `PATH`, and how long to retry them.
struct Tools {
    sbatch: PathBuf,
    squeue: PathBuf,
    scontrol: PathBuf,
    scancel: PathBuf,
    /// A command that fails transiently ([`is_transient`]) is tried again,
    /// with backoff, until this much time has passed since its first try.
    retry_for: Duration,
    /// Where retry notices go: the progress bar while one is drawn (hidden
    /// otherwise, which prints them plainly).
    notices: std::sync::Mutex<ProgressBar>,
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// First wait between two tries of a Slurm command; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait between two tries of a Slurm command.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Messages of Slurm commands that mean "the controller is busy or briefly
/// away", worth trying again (lower case). Anything else (a bad partition,
/// a bad option, a refused account) is a real error and is not retried.
const TRANSIENT: [&str; 9] = [
    "socket timed out on send/recv operation",
    "unable to contact slurm controller",
    "slurm temporarily unable to accept job",
    "resource temporarily unavailable",
    "transport endpoint is not connected",
    "zero bytes were transmitted or received",
    "communication connection failure",
    "slurmctld is not responding",
    "in standby mode",
];

/// Whether a failure of [`call_once`] is a transient controller failure.
fn is_transient(err: &str) -> bool {
    let e = err.to_lowercase();
    TRANSIENT.iter().any(|t| e.contains(t))
}

impl Tools {
    fn find(retry_for: Duration) -> Result<Tools> {
        let get = |name: &str| {
            which(name).ok_or_else(|| Error::Slurm {
                message: format!(
                    "`{name}` not found on PATH: run this on a Slurm submit (login) node or add \
                     Slurm's bin directory to PATH, or use --executor local"
                ),
            })
        };
        Ok(Tools {
            sbatch: get("sbatch")?,
            squeue: get("squeue")?,
            scontrol: get("scontrol")?,
            scancel: get("scancel")?,
            retry_for,
            notices: std::sync::Mutex::new(ProgressBar::hidden()),
        })
    }

    /// Prints a notice above the progress bar (or plainly).
    fn notice(&self, line: &str) {
        self.notices
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .suspend(|| errln!("{line}"));
    }

    /// Runs a Slurm command, trying again with backoff (1 s, 2 s, 4 s, …,
    /// at most 30 s apart) while it fails transiently and
    /// [`Tools::retry_for`] has not passed, saying so each time. `Err`
    /// holds a one-line reason.
    fn call(&self, exe: &Path, args: &[String]) -> std::result::Result<String, String> {
        self.call_until(exe, args, |_| None)
    }

    /// [`Tools::call`], asking `settled` after each transient failure
    /// whether the command took effect anyway (e.g. sbatch submitted the job
    /// but its answer was lost); `Some` ends the retries with that output.
    fn call_until(
        &self,
        exe: &Path,
        args: &[String],
        settled: impl Fn(&Tools) -> Option<String>,
    ) -> std::result::Result<String, String> {
        let t0 = Instant::now();
        let mut delay = FIRST_BACKOFF;
        let mut tries = 1u32;
        loop {
            match call_once(exe, args) {
                Err(e) if is_transient(&e) => {
                    if let Some(out) = settled(self) {
                        return Ok(out);
                    }
                    if t0.elapsed() + delay > self.retry_for {
                        return Err(if tries == 1 {
                            e
                        } else {
                            format!(
                                "{e} (a transient failure, still there after {tries} tries in {} s; \
                                 --slurm-retry sets how long to keep trying)",
                                t0.elapsed().as_secs()
                            )
                        });
                    }
                    self.notice(&format!(
                        "slurm: {e}; transient, trying again in {} s (try {}, for up to {} s)",
                        delay.as_secs(),
                        tries + 1,
                        self.retry_for.as_secs()
                    ));
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(MAX_BACKOFF);
                    tries += 1;
                }
                other => return other,
            }
        }
    }
}

/// Runs a Slurm command once; `Err` holds a one-line reason.
/// Longest a read-only query of the cluster's limits (`sinfo`, `scontrol
/// show config`) may take before planning goes on without it: a controller
/// that hangs must not make `--dry-run` wait silently.
pub const LIMITS_QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// [`call_once`] given at most `within`: a command still running then is
/// killed and an error returned saying so.
fn call_within(
    exe: &Path,
    args: &[String],
    within: Duration,
) -> std::result::Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (exe2, args2) = (exe.to_path_buf(), args.to_vec());
    let name = exe
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let child = Command::new(&exe2)
        .args(&args2)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{name}` could not start: {e}"))?;
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(within) {
        Ok(Ok(out)) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Ok(Ok(out)) => Err(format!(
            "`{name}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Ok(Err(e)) => Err(format!("`{name}` could not run: {e}")),
        Err(_) => {
            // SAFETY: kill(2) on the pid of our own child, which has not been
            // reaped (its waiting thread is still blocked on it).
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            Err(format!(
                "`{name}` did not answer within {} s",
                within.as_secs()
            ))
        }
    }
}

fn call_once(exe: &Path, args: &[String]) -> std::result::Result<String, String> {
    let name = exe
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let out = Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{name}` could not start: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(format!("`{name}` failed ({}): {last}", out.status))
}

fn unreachable(why: &str) -> Error {
    Error::Slurm {
        message: format!(
            "cannot reach the Slurm controller ({why}); check that slurmctld is up (`scontrol ping`, \
             `sinfo`) and that SLURM_CONF names this cluster's slurm.conf, or use --executor local"
        ),
    }
}

/// `MaxArraySize` from `scontrol show config` (its `KEY = VALUE` lines), or
/// the default when the key is absent.
fn parse_max_array_size(config: &str) -> usize {
    config
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "MaxArraySize")
        .and_then(|(_, v)| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
}

fn max_array_size(tools: &Tools) -> Result<usize> {
    let config = tools
        .call(&tools.scontrol, &["show".into(), "config".into()])
        .map_err(|e| unreachable(&e))?;
    Ok(parse_max_array_size(&config))
}

/// One row of `squeue --noheader --array --states=all --format=%F|%K|%T|%N|%M|%r`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct QueueRow {
    /// Array job id (job id for a plain job).
    job: String,
    /// Array task id (`None` for a plain job).
    task: Option<u32>,
    /// State, e.g. `RUNNING`, `CANCELLED`.
    state: String,
    /// Node(s) it runs or ran on (empty while pending).
    node: String,
    /// Time it has run, as squeue prints it (`1:02`, `1-00:00:00`).
    elapsed: String,
    /// Reason, e.g. `Dependency`, `NonZeroExitCode`.
    reason: String,
}

/// `STATE` or `STATE (Reason)`.
fn state_text(r: &QueueRow) -> String {
    if r.reason.is_empty() || r.reason == "None" {
        r.state.clone()
    } else {
        format!("{} ({})", r.state, r.reason)
    }
}

impl QueueRow {
    fn active(&self) -> bool {
        !TERMINAL_STATES.contains(&self.state.as_str())
    }
}

const SQUEUE_FORMAT: &str = "--format=%F|%K|%T|%N|%M|%r";

/// Expands a task field: `7`, or a range list like `[3-5,9%2]` (squeue
/// prints one for tasks not yet split off, even with `--array` on some
/// versions).
fn task_ids(field: &str) -> Option<Vec<Option<u32>>> {
    if field == "N/A" {
        return Some(vec![None]);
    }
    let body = field.trim_start_matches('[').trim_end_matches(']');
    let body = body.split('%').next().unwrap_or("");
    let mut out = Vec::new();
    for r in body.split(',') {
        match r.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                out.extend((a..=b).map(Some));
            }
            None => out.push(Some(r.parse().ok()?)),
        }
    }
    Some(out)
}

fn parse_squeue(text: &str) -> Vec<QueueRow> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim().splitn(6, '|').collect();
        let [job, task, state, node, elapsed, reason] = f[..] else {
            continue;
        };
        // States may carry a suffix (e.g. `CANCELLED by 0`) in some versions.
        let state = state.split_whitespace().next().unwrap_or("").to_string();
        for t in task_ids(task).unwrap_or_default() {
            rows.push(QueueRow {
                job: job.to_string(),
                task: t,
                state: state.clone(),
                node: node.trim().to_string(),
                elapsed: elapsed.trim().to_string(),
                reason: reason.to_string(),
            });
        }
    }
    rows
}

/// The queue rows of one run directory's jobs (by job name), keyed by
/// (Slurm job id, task id). With `retry`, transient failures are retried
/// ([`Tools::call`]); without, one try (the waiting loop polls again anyway).
fn queue(
    tools: &Tools,
    job_name: &str,
    retry: bool,
) -> std::result::Result<BTreeMap<(String, Option<u32>), QueueRow>, String> {
    let args = [
        "--noheader".into(),
        "--array".into(),
        "--states=all".into(),
        format!("--name={job_name}"),
        SQUEUE_FORMAT.into(),
    ];
    let out = if retry {
        tools.call(&tools.squeue, &args)?
    } else {
        call_once(&tools.squeue, &args)?
    };
    Ok(parse_squeue(&out)
        .into_iter()
        .map(|r| ((r.job.clone(), r.task), r))
        .collect())
}

/// The Slurm job id of a job called `job_name` whose batch script is
/// `script` (squeue `%o`), if the queue lists one: a submission whose answer
/// was lost in a transient failure, which must not be submitted twice.
fn submitted_as(tools: &Tools, job_name: &str, script: &str) -> Option<String> {
    let out = call_once(
        &tools.squeue,
        &[
            "--noheader".into(),
            "--states=all".into(),
            format!("--name={job_name}"),
            "--format=%F|%o".into(),
        ],
    )
    .ok()?;
    out.lines().find_map(|l| {
        let (id, command) = l.trim().split_once('|')?;
        (command.trim() == script && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .then(|| id.to_string())
    })
}

/// Submits with `sbatch --parsable` (`args` end with the script's absolute
/// path) and returns the Slurm job id. Transient failures are retried; before
/// each retry the queue is asked whether the job went in anyway (its answer
/// lost), so a script is never submitted twice.
fn submit(tools: &Tools, job_name: &str, args: &[String]) -> std::result::Result<String, String> {
    let script = args.last().cloned().unwrap_or_default();
    let out = tools.call_until(&tools.sbatch, args, |t| {
        let id = submitted_as(t, job_name, &script)?;
        t.notice(&format!(
            "slurm: sbatch failed, but {script} is in the queue as job {id}: using it"
        ));
        Some(id)
    })?;
    // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "sbatch --parsable printed `{}`, not a job id",
            out.trim()
        ));
    }
    Ok(id)
}

// ---------------------------------------------------------------- entry points

fn absolute(p: &Path) -> Result<PathBuf> {
    let a = std::path::absolute(p).map_err(Error::io(p))?;
    if path_str(&a).chars().any(char::is_whitespace) {
        return Err(Error::RunDir {
            path: a,
            message: "Slurm scripts cannot name a path with white space: choose another --run-dir"
                .into(),
        });
    }
    Ok(a)
}

fn build<'a>(
    dir: &RunDir,
    plan: &'a PlanFile,
    opts: &'a SlurmOptions,
    pending: &[usize],
    max_array_size: usize,
    retries: &BTreeMap<usize, Retry>,
    nodes: Option<NodeLimits>,
) -> Result<Submission<'a>> {
    let root = absolute(dir.root())?;
    let policy = TimePolicy {
        margin: opts.time_margin,
        floor: opts.time_floor,
    };
    let mut parts = parts_with(plan, pending, max_array_size, retries, policy);
    let time_cap = nodes.and_then(|n| n.max_minutes);
    if let Some(n) = nodes {
        for p in &mut parts {
            // A task asking for more time than the partition allows would
            // wait forever (or be refused): ask for the limit instead.
            if let Some(cap) = time_cap {
                p.minutes = p.minutes.min(cap.max(1));
            }
            // A task asking for more CPUs than any node has would wait
            // forever; the worker uses the CPUs it is given
            // (SLURM_CPUS_PER_TASK), and results do not depend on them.
            p.threads = p.threads.min(n.cpus.max(1));
            let mib = slurm_mem_mib(p.memory);
            if mib > n.mem_mib {
                let j = &plan.jobs[p.jobs[0]];
                return Err(Error::Slurm {
                    message: format!(
                        "job {} needs --mem {mib} MiB, more than the largest node{} has ({} MiB): \
                         it would wait forever; choose another --partition",
                        j.name,
                        opts.partition
                            .as_ref()
                            .map_or(String::new(), |p| format!(" of partition {p}")),
                        n.mem_mib
                    ),
                });
            }
        }
    }
    Ok(Submission {
        plan,
        exe: absolute(&opts.exe)?,
        number: last_submission_number(dir).unwrap_or(0) + 1,
        job_name: job_name_for(&plan.job_file, &root),
        parts,
        root,
        opts,
        time_cap,
        mem_cap: nodes.map(|n| n.mem_mib),
    })
}

/// The most CPUs and memory one node of the partition has, and the longest
/// time limit of its node groups (`sinfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NodeLimits {
    cpus: u32,
    mem_mib: u64,
    /// Minutes; `None`: infinite, or not told.
    max_minutes: Option<u64>,
}

/// A Slurm time limit as `sinfo` prints it (`%l`): `infinite`, or
/// `[days-]hours:minutes:seconds`, `minutes:seconds` below an hour,
/// `days-hours[:minutes]`, or whole minutes; in whole minutes (seconds
/// dropped). `None` if infinite or not a time.
fn parse_slurm_minutes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(d.parse::<u64>().ok()?), r),
        None => (None, s),
    };
    let f: Vec<u64> = rest
        .split(':')
        .map(|x| x.parse::<u64>().ok())
        .collect::<Option<_>>()?;
    let minutes = match (days.is_some(), f.as_slice()) {
        (false, [m] | [m, _]) => *m,
        (_, [h, m, _]) | (true, [h, m]) => h * 60 + m,
        (true, [h]) => h * 60,
        _ => return None,
    };
    Some(days.unwrap_or(0) * 24 * 60 + minutes)
}

/// Parses `sinfo --noheader --format=%P|%c|%m|%l`: per node group its
/// partition (`debug*` for the default one), CPUs and memory in MB (`48+`
/// when they differ within the group) and the partition's time limit (see
/// [`parse_slurm_minutes`]). With `default_only` (no `--partition` given,
/// so `sinfo` lists every partition) only the default partition's groups
/// count, as that is where the jobs go. A group whose limit is infinite or
/// unreadable leaves the time uncapped.
fn parse_node_limits(text: &str, default_only: bool) -> Option<NodeLimits> {
    let num = |s: &str| s.trim().trim_end_matches('+').parse::<u64>().ok();
    let groups: Vec<(bool, NodeLimits)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split('|');
            let (p, c, m) = (f.next()?, f.next()?, f.next()?);
            Some((
                p.trim().ends_with('*'),
                NodeLimits {
                    cpus: u32::try_from(num(c)?).ok()?,
                    mem_mib: num(m)?,
                    max_minutes: f.next().and_then(parse_slurm_minutes),
                },
            ))
        })
        .collect();
    let any_default = groups.iter().any(|(d, _)| *d);
    groups
        .into_iter()
        .filter(|(d, _)| !(default_only && any_default) || *d)
        .map(|(_, n)| n)
        .reduce(|a, b| NodeLimits {
            cpus: a.cpus.max(b.cpus),
            mem_mib: a.mem_mib.max(b.mem_mib),
            max_minutes: a.max_minutes.zip(b.max_minutes).map(|(x, y)| x.max(y)),
        })
}

/// [`NodeLimits`] of the partition the jobs go to (`--partition`, else the
/// default one), if `sinfo` tells.
fn node_limits(opts: &SlurmOptions) -> Option<NodeLimits> {
    let sinfo = which("sinfo")?;
    let mut args = vec!["--noheader".to_string(), "--format=%P|%c|%m|%l".to_string()];
    if let Some(p) = &opts.partition {
        args.push(format!("--partition={p}"));
    }
    match call_within(&sinfo, &args, LIMITS_QUERY_TIMEOUT) {
        Ok(text) => parse_node_limits(&text, opts.partition.is_none()),
        Err(why) => {
            tracing::warn!("node limits unknown: {why}");
            eprintln!("warning: node limits unknown ({why}); no task's request is capped by them");
            None
        }
    }
}

/// The text `--dry-run` prints: every script, then the `sbatch` commands as
/// a shell script. Submits and writes nothing, and needs no Slurm:
/// `MaxArraySize` comes from `scontrol show config` when that works, else
/// the default 1001 is assumed (and said).
///
/// # Errors
/// Only if the run directory's path cannot be made absolute or has white space.
pub fn dry_run(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &SlurmOptions,
) -> Result<String> {
    let (max, source) = match which("scontrol")
        .map(|s| call_within(&s, &["show".into(), "config".into()], LIMITS_QUERY_TIMEOUT))
    {
        Some(Ok(config)) => (parse_max_array_size(&config), "from `scontrol show config`"),
        Some(Err(_)) => (
            DEFAULT_MAX_ARRAY_SIZE,
            "assumed: `scontrol show config` failed",
        ),
        None => (DEFAULT_MAX_ARRAY_SIZE, "assumed: no `scontrol` on PATH"),
    };
    let (pending, summary) = pending_jobs(dir, plan, kind, opts.force);
    let nodes = node_limits(opts);
    let sub = build(dir, plan, opts, &pending, max, &BTreeMap::new(), nodes)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# gametables --dry-run: {} (kind {}), {} job(s): {} to submit, {} already done",
        plan.job_file,
        plan.kind,
        plan.jobs.len(),
        pending.len(),
        summary.skipped.len()
    );
    let _ = writeln!(out, "# plan: {}", plan.resources());
    if pending.is_empty() {
        let _ = writeln!(out, "# nothing to submit; `run` would only merge");
        return Ok(out);
    }
    let _ = writeln!(
        out,
        "# MaxArraySize {max} ({source}): {} array job(s) and a merge job",
        sub.parts.len()
    );
    let _ = writeln!(
        out,
        "# node limits: {}",
        match nodes {
            Some(n) => format!(
                "largest node {} CPUs, {} MiB; time limit {} (from `sinfo`)",
                n.cpus,
                n.mem_mib,
                n.max_minutes
                    .map_or("infinite".to_string(), |m| format!("{m} min"))
            ),
            None => "unknown (`sinfo` absent or failed): nothing capped".to_string(),
        }
    );
    let _ = writeln!(
        out,
        "# nothing is written or submitted; `run` would write these scripts to {}/{}/",
        path_str(&sub.root),
        sub.sub_rel()
    );
    for p in &sub.parts {
        let _ = writeln!(
            out,
            "\n# ---- {}/{}",
            path_str(&sub.root),
            sub.script_rel(&p.name)
        );
        out.push_str(&sub.array_script(p));
    }
    let _ = writeln!(
        out,
        "\n# ---- {}/{}",
        path_str(&sub.root),
        sub.script_rel("merge")
    );
    out.push_str(&sub.merge_script());
    let _ = writeln!(out, "\n# ---- sbatch commands");
    let var = |k: usize| format!("$A{k}");
    for (k, p) in sub.parts.iter().enumerate() {
        let deps: Vec<String> = p.after.iter().map(|&a| var(a)).collect();
        let args: Vec<String> = sub.sbatch_args(&sub.script_rel(&p.name), &deps);
        let _ = writeln!(out, "A{k}=$(sbatch {} | cut -d';' -f1)", shell_args(&args));
    }
    let all: Vec<String> = (0..sub.parts.len()).map(var).collect();
    let args = sub.sbatch_args(&sub.script_rel("merge"), &all);
    let _ = writeln!(out, "sbatch {}", shell_args(&args));
    Ok(out)
}

/// Arguments joined for a shell, leaving the `$A0` variables of the
/// dependency argument unquoted.
fn shell_args(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if a.starts_with("--dependency=afterok:$A") {
                a.clone()
            } else {
                sh(a)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks that the Slurm commands are on `PATH` and that the controller
/// answers (`scontrol show config`).
///
/// # Errors
/// [`Error::Slurm`], one line saying what is missing and what to do.
pub fn check_cluster(opts: &SlurmOptions) -> Result<()> {
    let tools = Tools::find(opts.retry_for)?;
    max_array_size(&tools).map(|_| ())
}

/// With `--force`, checks that no earlier submission for this run directory
/// is still queued or running (its jobs would write the shards that
/// `--force` deletes). Without, a submission still in the queue is adopted
/// by [`run_slurm`]. Call under the run directory's lock, before planning
/// into it.
///
/// # Errors
/// [`Error::RunDir`] naming the Slurm jobs still in the queue;
/// [`Error::Slurm`] if `squeue` fails.
pub fn check_no_active_submission(dir: &RunDir, opts: &SlurmOptions) -> Result<()> {
    if !opts.force {
        return Ok(());
    }
    let tools = Tools::find(opts.retry_for)?;
    let Some(prev) = SubmissionRecord::latest(dir)? else {
        return Ok(());
    };
    let active = active_jobs(&tools, &prev)?;
    if active.is_empty() {
        return Ok(());
    }
    Err(still_queued(dir, &prev, &active))
}

/// Submits every job of `plan` without a verified shard, then (unless
/// detached) waits for the shards and the merge job, resubmitting the jobs
/// whose tasks failed curably (see [`decide`]) up to
/// [`SlurmOptions::max_retries`] times each.
///
/// A submission of this run directory still in the queue (a detached run, or
/// a coordinator that was killed) is adopted: nothing is submitted again, the
/// coordinator waits for its jobs as if it had submitted them.
///
/// Call [`check_cluster`] and [`check_no_active_submission`] first. The run directory's lock is held while
/// submitting and released before waiting, so that the merge job (which takes
/// it) can run.
///
/// # Errors
/// [`Error::Slurm`] if Slurm is missing, unreachable or refuses a script (the
/// parts already submitted are cancelled); [`Error::Job`] listing each failed
/// job with its Slurm job id, state, node and log (finished shards are kept,
/// and running again resubmits only the rest).
pub fn run_slurm(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &SlurmOptions,
    lock: RunLock,
) -> Result<SlurmOutcome> {
    let tools = Tools::find(opts.retry_for)?;
    let max = max_array_size(&tools)?;
    if let Some(prev) = SubmissionRecord::latest(dir)? {
        let active = active_jobs(&tools, &prev)?;
        if !active.is_empty() {
            let ids: BTreeSet<&str> = plan.jobs.iter().map(|j| j.id.as_str()).collect();
            let same_plan = prev
                .arrays
                .iter()
                .flat_map(|a| &a.jobs)
                .all(|id| ids.contains(id.as_str()));
            if opts.force || !same_plan || prev.merge.slurm_job_id.is_empty() {
                return Err(still_queued(dir, &prev, &active));
            }
            errln!(
                "adopting submission {}: Slurm jobs {} are still queued or running; waiting for \
                 them (nothing is submitted again)",
                prev.submission,
                active.join(", ")
            );
            drop(lock);
            if opts.detach {
                return Ok(SlurmOutcome::Detached {
                    submission: prev.submission,
                    slurm_ids: prev.slurm_ids(),
                });
            }
            let (_, summary) = pending_jobs(dir, plan, kind, false);
            return follow(dir, plan, kind, opts, &tools, max, prev, summary);
        }
    }
    let (pending, summary) = pending_jobs(dir, plan, kind, opts.force);
    for (name, why) in &summary.damaged {
        errln!("job {name}: shard damaged ({why}); resubmitting");
    }
    for name in &summary.deleted {
        errln!("job {name}: shard deleted (the run had it); resubmitting");
    }
    if !summary.old.is_empty() {
        errln!(
            "{} job(s) have shards in an older shard format (written by an older gametables); resubmitting them",
            summary.old.len()
        );
    }
    if pending.is_empty() {
        return Ok(SlurmOutcome::Finished {
            summary,
            merged: false,
        });
    }
    let record = submit_round(
        dir,
        plan,
        opts,
        &tools,
        &pending,
        max,
        &BTreeMap::new(),
        Vec::new(),
    )?;
    drop(lock);
    if opts.detach {
        return Ok(SlurmOutcome::Detached {
            submission: record.submission,
            slurm_ids: record.slurm_ids(),
        });
    }
    follow(dir, plan, kind, opts, &tools, max, record, summary)
}

/// The Slurm job ids of `record` that are still queued or running.
fn active_jobs(tools: &Tools, record: &SubmissionRecord) -> Result<Vec<String>> {
    let ids: BTreeSet<String> = record.slurm_ids().into_iter().collect();
    let rows = queue(tools, &record.job_name, true).map_err(|e| unreachable(&e))?;
    let mut active: Vec<String> = rows
        .values()
        .filter(|r| r.active() && ids.contains(&r.job))
        .map(|r| r.job.clone())
        .collect();
    active.dedup();
    Ok(active)
}

fn still_queued(dir: &RunDir, prev: &SubmissionRecord, active: &[String]) -> Error {
    Error::RunDir {
        path: dir.root().to_path_buf(),
        message: format!(
            "Slurm jobs {} of submission {} are still queued or running; follow them with \
             `gametables status {}` (a `run` without --force adopts them), or cancel them with \
             `scancel {}`",
            active.join(", "),
            prev.submission,
            dir.root().display(),
            active.join(" ")
        ),
    }
}

/// Writes the scripts and `submission.toml` of a new submission of
/// `pending` and submits it (arrays, then the merge job). Call under the
/// run directory's lock.
#[allow(clippy::too_many_arguments)]
fn submit_round(
    dir: &RunDir,
    plan: &PlanFile,
    opts: &SlurmOptions,
    tools: &Tools,
    pending: &[usize],
    max: usize,
    retries: &BTreeMap<usize, Retry>,
    resubmitted: Vec<Resubmission>,
) -> Result<SubmissionRecord> {
    // Damaged shards (and all of them with --force) are worthless, and the
    // coordinator takes a shard's appearance as its job's success.
    for &i in pending {
        let _ = std::fs::remove_file(dir.shard_path(&plan.jobs[i].id));
    }
    // Stale from now on: its appearance tells that the merge job finished.
    let _ = std::fs::remove_file(dir.result_path());
    let sub = build(dir, plan, opts, pending, max, retries, node_limits(opts))?;
    let sub_dir = sub.root.join(sub.sub_rel());
    std::fs::create_dir_all(&sub_dir).map_err(Error::io(&sub_dir))?;
    for p in &sub.parts {
        write_atomic(
            &sub.root.join(sub.script_rel(&p.name)),
            sub.array_script(p).as_bytes(),
        )?;
    }
    write_atomic(
        &sub.root.join(sub.script_rel("merge")),
        sub.merge_script().as_bytes(),
    )?;
    let mut record = sub.record();
    record.resubmitted = resubmitted;
    record.save(dir)?;

    let cancel_all = |record: &SubmissionRecord| {
        let ids = record.slurm_ids();
        if !ids.is_empty() {
            let _ = tools.call(&tools.scancel, &ids);
        }
    };
    for (k, p) in sub.parts.iter().enumerate() {
        let deps: Vec<String> = p
            .after
            .iter()
            .map(|&a| record.arrays[a].slurm_job_id.clone())
            .collect();
        let script = sub.script_rel(&p.name);
        match submit(tools, &sub.job_name, &sub.sbatch_args(&script, &deps)) {
            Ok(id) => {
                errln!(
                    "submitted {}: {} job(s) as Slurm array job {id} ({script}; --time {} min, \
                     --mem {} MiB{})",
                    p.name,
                    p.jobs.len(),
                    p.minutes,
                    slurm_mem_mib(p.memory),
                    if p.exclude.is_empty() {
                        String::new()
                    } else {
                        format!(", --exclude={}", p.exclude.join(","))
                    }
                );
                record.arrays[k].slurm_job_id = id;
                record.save(dir)?;
            }
            Err(e) => {
                cancel_all(&record);
                return Err(Error::Slurm {
                    message: format!(
                        "sbatch refused {}/{script}: {e} (parts submitted before it were cancelled; \
                         fix the options, e.g. --partition or --sbatch-arg, and run again)",
                        dir.root().display()
                    ),
                });
            }
        }
    }
    let all: Vec<String> = record
        .arrays
        .iter()
        .map(|a| a.slurm_job_id.clone())
        .collect();
    match submit(
        tools,
        &sub.job_name,
        &sub.sbatch_args(&record.merge.script, &all),
    ) {
        Ok(id) => {
            errln!("submitted the merge as Slurm job {id}, after all of them");
            record.merge.slurm_job_id = id;
            record.save(dir)?;
        }
        Err(e) => {
            cancel_all(&record);
            return Err(Error::Slurm {
                message: format!(
                    "sbatch refused the merge job: {e} (the array jobs were cancelled)"
                ),
            });
        }
    }
    Ok(record)
}

/// A task (or the merge job) that ended without its output.
#[derive(Debug, Clone)]
struct Failure {
    /// Plan index; `None` for the merge job.
    job: Option<usize>,
    /// `ARRAY_TASK` (or the merge job's id).
    slurm_id: String,
    /// Final Slurm state (`NODE_FAIL`, `TIMEOUT`, …), or `GONE` if it left
    /// the queue without a shard.
    state: String,
    /// Node(s) it ran on, if known.
    node: String,
    /// Its array's `--time`, minutes, and `--mem`, MiB.
    minutes: u64,
    mem_mib: u64,
    /// Its log.
    log: PathBuf,
    /// Never ran: cancelled by Slurm because an input's task failed.
    not_run: bool,
    /// The line that names it in messages.
    line: String,
}

/// Whether a task's log says it was killed for memory (without cgroups
/// Slurm's sampler kills it and its state is `FAILED` or `CANCELLED`).
fn log_says_out_of_memory(log: &Path) -> bool {
    let text = std::fs::read(log).unwrap_or_default();
    let tail = &text[text.len().saturating_sub(64 << 10)..];
    let t = String::from_utf8_lossy(tail).to_lowercase();
    [
        "exceeded memory limit",
        "exceeded job memory limit",
        "oom-kill",
        "out of memory",
    ]
    .iter()
    .any(|p| t.contains(p))
}

/// What to do about a failed task of a job whose earlier failures left
/// `prev`: `Ok` with the settings of its next try and what changed, or
/// `Err` with why it is not tried again.
///
/// - `NODE_FAIL`, `BOOT_FAIL`: again, excluding the node it ran on.
/// - `PREEMPTED`: again as it was.
/// - `TIMEOUT`: again with [`TIMEOUT_FACTOR`] times the `--time`, at most
///   `time_cap` (the partition's limit, minutes); not again if it already
///   ran at that limit.
/// - out of memory (`OUT_OF_MEMORY`, or the log says the memory limit was
///   exceeded): once again with twice the `--mem` (the estimates are meant
///   to be upper bounds, so this is an estimate to fix); a second time it
///   is refused, naming the memory it asked for.
/// - anything else (`FAILED` with an exit code, `CANCELLED` by a user, a
///   task that ended without a shard): not tried again — the error is the
///   job's own, or someone meant it to stop.
///
/// Each job is tried again at most `max_retries` times.
/// `overrides` are a `--mem…` or `--time…` given with `--sbatch-arg`: they
/// win over the script's, so a task out of memory or time under one is
/// not tried again.
fn decide(
    f: &Failure,
    prev: Option<&Retry>,
    max_retries: u32,
    overrides: Overrides<'_>,
    time_cap: Option<u64>,
) -> std::result::Result<(Retry, String), String> {
    let mut r = prev.cloned().unwrap_or_default();
    let oom =
        f.state == "OUT_OF_MEMORY" || (f.state != "TIMEOUT" && log_says_out_of_memory(&f.log));
    let curable = matches!(
        f.state.as_str(),
        "NODE_FAIL" | "BOOT_FAIL" | "PREEMPTED" | "TIMEOUT"
    ) || oom;
    if !curable {
        return Err(String::new());
    }
    if r.attempts >= max_retries {
        return Err(format!(
            " (not resubmitted: failed {} times, --max-retries {max_retries})",
            r.attempts + 1
        ));
    }
    let action = if oom {
        if let Some(m) = overrides.mem {
            return Err(format!(
                " (out of memory under --sbatch-arg={m}, which overrides the estimate on every \
                 try: not resubmitted; give more memory or drop the override)"
            ));
        }
        if r.mem_factor >= 2 {
            return Err(format!(
                " (out of memory again with --mem {} MiB, twice the estimate: not resubmitted; \
                 give it more with --sbatch-arg=--mem=…)",
                f.mem_mib
            ));
        }
        r.mem_factor = 2;
        format!(
            "out of memory at --mem {} MiB: again with --mem {} MiB",
            f.mem_mib,
            f.mem_mib * 2
        )
    } else {
        match f.state.as_str() {
            "TIMEOUT" => {
                if let Some(t) = overrides.time {
                    return Err(format!(
                        " (time limit reached under --sbatch-arg={t}, which overrides the \
                         estimate on every try: not resubmitted; give more time or drop the \
                         override)"
                    ));
                }
                if time_cap.is_some_and(|c| f.minutes >= c) {
                    return Err(format!(
                        " (time limit of {} min reached, the partition's longest: not \
                         resubmitted; choose a partition with a longer limit)",
                        f.minutes
                    ));
                }
                r.time_factor = r.time_factor.max(1) * u64::from(TIMEOUT_FACTOR);
                let next = f.minutes * u64::from(TIMEOUT_FACTOR);
                format!(
                    "time limit of {} min reached: again with --time {} min",
                    f.minutes,
                    time_cap.map_or(next, |c| next.min(c))
                )
            }
            "PREEMPTED" => "preempted: again as it was".to_string(),
            _ => {
                let nodes: Vec<&str> = f
                    .node
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty() && *n != "(null)")
                    .collect();
                r.exclude.extend(nodes.iter().map(|n| n.to_string()));
                if r.exclude.is_empty() {
                    "node lost: again".to_string()
                } else {
                    format!(
                        "node {} lost: again with --exclude={}",
                        if f.node.is_empty() {
                            "?"
                        } else {
                            f.node.as_str()
                        },
                        r.exclude.iter().cloned().collect::<Vec<_>>().join(",")
                    )
                }
            }
        }
    };
    r.attempts += 1;
    Ok((r, action))
}

/// What `--sbatch-arg` set that the coordinator would otherwise change on
/// a retry: `--mem…` and `--time…`/`-t…` (each the argument as given).
#[derive(Debug, Clone, Copy, Default)]
struct Overrides<'a> {
    mem: Option<&'a str>,
    time: Option<&'a str>,
}

impl<'a> Overrides<'a> {
    fn of(sbatch_args: &'a [String]) -> Self {
        let find = |pre: &[&str]| {
            sbatch_args
                .iter()
                .find(|a| pre.iter().any(|p| a.starts_with(p)))
                .map(String::as_str)
        };
        Overrides {
            mem: find(&["--mem"]),
            time: find(&["--time", "-t"]),
        }
    }
}

/// Waits for a submission; resubmits curable failures (new submissions)
/// until every job has its shard and the merge job ran, or a failure that
/// cannot be cured (or was tried too often) ends the run.
#[allow(clippy::too_many_arguments)]
fn follow(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &SlurmOptions,
    tools: &Tools,
    max: usize,
    mut record: SubmissionRecord,
    mut summary: RunSummary,
) -> Result<SlurmOutcome> {
    let index: BTreeMap<&str, usize> = plan
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.id.as_str(), i))
        .collect();
    // An adopted submission carries what earlier coordinators resubmitted.
    let mut retries: BTreeMap<usize, Retry> = BTreeMap::new();
    for r in &record.resubmitted {
        if let Some(&i) = index.get(r.id.as_str()) {
            retries.entry(i).or_default().attempts += 1;
        }
    }
    loop {
        let failures = wait(dir, plan, tools, &record, &mut summary, opts)?;
        if failures.is_empty() {
            if !record.resubmitted.is_empty() {
                errln!(
                    "resubmitted {} time(s) after failures:\n  {}",
                    record.resubmitted.len(),
                    resubmission_lines(&record.resubmitted).join("\n  ")
                );
            }
            return Ok(SlurmOutcome::Finished {
                summary,
                merged: true,
            });
        }
        let overrides = Overrides::of(&opts.sbatch_args);
        // Asked only when a task timed out: a task already at the
        // partition's limit is not tried again with the same limit.
        let time_cap = failures
            .iter()
            .any(|f| f.state == "TIMEOUT")
            .then(|| node_limits(opts).and_then(|n| n.max_minutes))
            .flatten();
        let mut fatal: Vec<String> = Vec::new();
        let mut not_run: Vec<String> = Vec::new();
        let mut again: Vec<(usize, Retry, Resubmission)> = Vec::new();
        for f in &failures {
            match f.job {
                _ if f.not_run => not_run.push(f.line.clone()),
                None => fatal.push(f.line.clone()),
                Some(i) => {
                    match decide(f, retries.get(&i), opts.max_retries, overrides, time_cap) {
                        Ok((r, action)) => again.push((
                            i,
                            r.clone(),
                            Resubmission {
                                job: plan.jobs[i].name.clone(),
                                id: plan.jobs[i].id.clone(),
                                slurm_id: f.slurm_id.clone(),
                                state: f.state.clone(),
                                node: f.node.clone(),
                                action,
                                attempt: r.attempts,
                            },
                        )),
                        Err(why) => fatal.push(format!("{}{why}", f.line)),
                    }
                }
            }
        }
        if !fatal.is_empty() || again.is_empty() {
            let mut msg = format!(
                "{} Slurm job(s) failed (finished shards are kept; `run` again resubmits only the \
                 missing ones):\n  {}",
                fatal.len() + again.len(),
                fatal
                    .iter()
                    .chain(again.iter().map(|(i, _, r)| {
                        failures
                            .iter()
                            .find(|f| f.job == Some(*i) && f.slurm_id == r.slurm_id)
                            .map_or(&r.slurm_id, |f| &f.line)
                    }))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n  ")
            );
            if !not_run.is_empty() {
                let _ = write!(
                    msg,
                    "\n  {} task(s) not run because their inputs failed",
                    not_run.len()
                );
            }
            if !record.resubmitted.is_empty() {
                let _ = write!(
                    msg,
                    "\n  resubmitted before:\n    {}",
                    resubmission_lines(&record.resubmitted).join("\n    ")
                );
            }
            return Err(Error::job(plan.job_file.clone(), msg));
        }
        let lock = dir.lock()?;
        let mut history = record.resubmitted.clone();
        for (i, r, res) in again {
            errln!(
                "resubmitting {}: Slurm job {} {} on {}; {} (try {} of at most {})",
                res.job,
                res.slurm_id,
                res.state,
                if res.node.is_empty() {
                    "?"
                } else {
                    res.node.as_str()
                },
                res.action,
                r.attempts + 1,
                opts.max_retries + 1
            );
            retries.insert(i, r);
            history.push(res);
        }
        let (pending, _) = pending_jobs(dir, plan, kind, false);
        record = submit_round(dir, plan, opts, tools, &pending, max, &retries, history)?;
        drop(lock);
    }
}

/// One line per resubmission, for messages and `status`.
fn resubmission_lines(list: &[Resubmission]) -> Vec<String> {
    list.iter()
        .map(|r| {
            format!(
                "{} ({}): Slurm job {} {} on {} (try {}); {}",
                r.job,
                &r.id[..12.min(r.id.len())],
                r.slurm_id,
                r.state,
                if r.node.is_empty() {
                    "?"
                } else {
                    r.node.as_str()
                },
                r.attempt,
                r.action
            )
        })
        .collect()
}

/// Where one submitted task stands, as far as the coordinator knows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Queued,
    Done,
    /// Left the queue (or was never listed) at this time, no shard yet.
    Gone(Instant),
    Failed(String),
}

struct Task {
    job: usize,
    array: String,
    index: u32,
    seen: Seen,
    /// `--time` (minutes) and `--mem` (MiB) of its array.
    minutes: u64,
    mem_mib: u64,
    /// Node, state and elapsed time of its last queue row.
    node: String,
    state: String,
    elapsed: String,
}

impl Task {
    fn slurm_id(&self) -> String {
        format!("{}_{}", self.array, self.index)
    }
}

fn log_of_task(dir: &RunDir, slurm_id: &str) -> PathBuf {
    dir.root().join(format!("logs/slurm-{slurm_id}.out"))
}

/// Updates a task or the merge job from a queue row; returns a failure
/// reason. A job that left the queue without a shard fails only after
/// `grace` (`--latency-wait`).
fn judge(row: Option<&QueueRow>, seen: &mut Seen, now: Instant, grace: Duration) -> Option<String> {
    match row {
        Some(r) if r.active() => {
            *seen = Seen::Queued;
            None
        }
        Some(r) if r.state != "COMPLETED" => Some(state_text(r)),
        _ => {
            let since = match seen {
                Seen::Gone(t) => *t,
                _ => {
                    *seen = Seen::Gone(now);
                    now
                }
            };
            (now.duration_since(since) >= grace).then(|| {
                format!(
                    "left the queue ({}) but wrote nothing within {} s (--latency-wait)",
                    row.map_or("no longer listed", |r| r.state.as_str()),
                    grace.as_secs()
                )
            })
        }
    }
}

/// Waits until every task of `record` has its shard or failed and the merge
/// job ran (or cannot run); returns the failures (empty: all done, merged).
fn wait(
    dir: &RunDir,
    plan: &PlanFile,
    tools: &Tools,
    record: &SubmissionRecord,
    summary: &mut RunSummary,
    opts: &SlurmOptions,
) -> Result<Vec<Failure>> {
    let index: BTreeMap<&str, usize> = plan
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.id.as_str(), i))
        .collect();
    let mut tasks: Vec<Task> = Vec::new();
    for a in &record.arrays {
        for (t, id) in a.jobs.iter().enumerate() {
            let job = index[id.as_str()];
            // Adopted: a shard that was there already is counted as skipped.
            let seen = if summary.skipped.contains(&plan.jobs[job].name) {
                Seen::Done
            } else {
                Seen::Queued
            };
            tasks.push(Task {
                job,
                array: a.slurm_job_id.clone(),
                index: t as u32,
                seen,
                minutes: a.time_minutes,
                mem_mib: a.mem_mib,
                node: String::new(),
                state: String::new(),
                elapsed: String::new(),
            });
        }
    }
    let pb = job_progress_bar(plan.jobs.len() as u64, opts.progress);
    pb.set_position((summary.skipped.len() + summary.computed.len()) as u64);
    let say = |line: &str| pb.suspend(|| errln!("{line}"));
    *tools
        .notices
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = pb.clone();
    let grace = opts.latency_wait;

    let t0 = Instant::now();
    let merge_id = record.merge.slurm_job_id.clone();
    let mut merge_seen = Seen::Queued;
    let mut failures: Vec<Failure> = Vec::new();
    let mut last_poll: Option<Instant> = None;
    // Since when squeue has been failing (the loop polls again anyway, so
    // each poll is one try); past `retry_for` the run gives up waiting.
    let mut queue_failing: Option<Instant> = None;
    loop {
        let now = Instant::now();
        for t in tasks
            .iter_mut()
            .filter(|t| matches!(t.seen, Seen::Queued | Seen::Gone(_)))
        {
            if dir.shard_path(&plan.jobs[t.job].id).exists() {
                t.seen = Seen::Done;
                summary.computed.push(plan.jobs[t.job].name.clone());
                pb.inc(1);
                say(&format!(
                    "done {} (Slurm {} on {}, {} elapsed)",
                    plan.jobs[t.job].name,
                    t.slurm_id(),
                    if t.node.is_empty() {
                        "?"
                    } else {
                        t.node.as_str()
                    },
                    if t.elapsed.is_empty() {
                        "?"
                    } else {
                        t.elapsed.as_str()
                    }
                ));
            }
        }
        if merge_seen != Seen::Done && dir.result_path().exists() {
            merge_seen = Seen::Done;
        }
        // squeue at most every 2 s early on, less often in long runs.
        let interval = (t0.elapsed() / 30).clamp(Duration::from_secs(2), Duration::from_secs(30));
        if last_poll.is_none_or(|p| now.duration_since(p) >= interval) {
            last_poll = Some(now);
            match queue(tools, &record.job_name, false) {
                Err(e) => {
                    let since = *queue_failing.get_or_insert(now);
                    if now.duration_since(since) >= tools.retry_for {
                        pb.finish_and_clear();
                        return Err(Error::Slurm {
                            message: format!(
                                "{e}, for {} s now (--slurm-retry); the jobs may still be queued or \
                                 running: follow them with `gametables status {}` and run again once \
                                 they are done (finished shards are kept)",
                                now.duration_since(since).as_secs(),
                                dir.root().display()
                            ),
                        });
                    }
                    if since == now {
                        say(&format!(
                            "slurm: {e}{}; trying again at every poll for up to {} s, watching for \
                             shards meanwhile",
                            if is_transient(&e) { " (transient)" } else { "" },
                            tools.retry_for.as_secs()
                        ));
                    }
                }
                Ok(rows) => {
                    if let Some(since) = queue_failing.take() {
                        say(&format!(
                            "slurm: squeue answers again (after {} s)",
                            now.duration_since(since).as_secs()
                        ));
                    }
                    let (mut running, mut waiting) = (0, 0);
                    for t in tasks
                        .iter_mut()
                        .filter(|t| matches!(t.seen, Seen::Queued | Seen::Gone(_)))
                    {
                        let row = rows.get(&(t.array.clone(), Some(t.index)));
                        if let Some(r) = row {
                            if !r.node.is_empty() {
                                t.node = r.node.clone();
                            }
                            if t.state != r.state && r.state == "RUNNING" {
                                say(&format!(
                                    "running {} (Slurm {} on {})",
                                    plan.jobs[t.job].name,
                                    t.slurm_id(),
                                    r.node
                                ));
                            }
                            t.state = r.state.clone();
                            t.elapsed = r.elapsed.clone();
                        }
                        match row.map(|r| r.state.as_str()) {
                            Some("RUNNING" | "COMPLETING") => running += 1,
                            Some(_) if row.is_some_and(QueueRow::active) => waiting += 1,
                            _ => {}
                        }
                        if let Some(why) = judge(row, &mut t.seen, now, grace) {
                            let j = &plan.jobs[t.job];
                            let sid = t.slurm_id();
                            let log = log_of_task(dir, &sid);
                            let not_run = row.is_some_and(|r| r.reason.contains("Dependency"));
                            let line = format!(
                                "job {} ({}): Slurm job {sid} {why}{}{}; log: {}{}",
                                j.name,
                                &j.id[..12],
                                if t.node.is_empty() {
                                    String::new()
                                } else {
                                    format!(" on {}", t.node)
                                },
                                if t.elapsed.is_empty() || not_run {
                                    String::new()
                                } else {
                                    format!(" after {}", t.elapsed)
                                },
                                log.display(),
                                if log.exists() || not_run {
                                    ""
                                } else {
                                    " (missing: is the run directory on a filesystem the nodes share?)"
                                }
                            );
                            if !not_run {
                                say(&format!("FAILED {line}"));
                            }
                            failures.push(Failure {
                                job: Some(t.job),
                                slurm_id: sid,
                                state: row.map_or("GONE".to_string(), |r| {
                                    if r.state == "COMPLETED" {
                                        "GONE".to_string()
                                    } else {
                                        r.state.clone()
                                    }
                                }),
                                node: t.node.clone(),
                                minutes: t.minutes,
                                mem_mib: t.mem_mib,
                                log,
                                not_run,
                                line,
                            });
                            t.seen = Seen::Failed(why);
                        }
                    }
                    if merge_seen != Seen::Done {
                        let row = rows.get(&(merge_id.clone(), None));
                        if !failures.is_empty() {
                            // The merge can never run; Slurm cancels it
                            // (--kill-on-invalid-dep), or we do.
                            if row.is_some_and(|r| r.active()) {
                                let _ = tools.call(&tools.scancel, std::slice::from_ref(&merge_id));
                            } else {
                                merge_seen = Seen::Failed(String::new());
                            }
                        } else if let Some(why) = judge(row, &mut merge_seen, now, grace) {
                            let log = dir.root().join(format!("logs/slurm-{merge_id}-merge.out"));
                            failures.push(Failure {
                                job: None,
                                slurm_id: merge_id.clone(),
                                state: row.map_or("GONE".to_string(), |r| r.state.clone()),
                                node: row.map_or(String::new(), |r| r.node.clone()),
                                minutes: 0,
                                mem_mib: 0,
                                log: log.clone(),
                                not_run: false,
                                line: format!(
                                    "merge: Slurm job {merge_id} {why}; log: {}",
                                    log.display()
                                ),
                            });
                            merge_seen = Seen::Failed(why);
                        }
                    }
                    let merging = matches!(rows.get(&(merge_id.clone(), None)), Some(r) if r.state == "RUNNING");
                    pb.set_message(format!(
                        "slurm: {running} running, {waiting} waiting{}",
                        if merging { ", merging" } else { "" }
                    ));
                }
            }
        }
        let tasks_over = tasks
            .iter()
            .all(|t| matches!(t.seen, Seen::Done | Seen::Failed(_)));
        let merge_over = matches!(merge_seen, Seen::Done | Seen::Failed(_));
        if tasks_over && merge_over {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // A task whose shard appeared, or the merge job after writing
    // result.toml, may still be finishing: return only once the queue holds
    // none of them, so that `run` again (or the next submission) does not
    // meet them.
    pb.set_message("slurm: waiting for the jobs to leave the queue");
    let ids: BTreeSet<String> = record.slurm_ids().into_iter().collect();
    let t_drain = Instant::now();
    while t_drain.elapsed() < Duration::from_secs(120) {
        match queue(tools, &record.job_name, false) {
            Ok(rows) if rows.values().any(|r| r.active() && ids.contains(&r.job)) => {}
            _ => break,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    pb.finish_and_clear();
    Ok(failures)
}

/// Lines for `gametables status`: the latest Slurm submission of the run
/// directory and where its tasks stand (empty if it never used Slurm).
pub fn status_lines(dir: &RunDir, plan: &PlanFile) -> Vec<String> {
    status(dir, plan).0
}

/// [`status_lines`], and for `status --json` every task of the latest
/// submission (job, Slurm job id, node, state, elapsed time, shard) and the
/// jobs resubmitted after failures (`null` if the run never used Slurm).
pub fn status(dir: &RunDir, plan: &PlanFile) -> (Vec<String>, serde_json::Value) {
    let record = match SubmissionRecord::latest(dir) {
        Ok(Some(r)) => r,
        Ok(None) => return (Vec::new(), serde_json::Value::Null),
        Err(e) => return (vec![format!("slurm: {e}")], serde_json::Value::Null),
    };
    let resubmitted: Vec<serde_json::Value> = record
        .resubmitted
        .iter()
        .map(|r| {
            serde_json::json!({"job": r.job, "id": r.id, "slurm_id": r.slurm_id, "state": r.state,
                "node": r.node, "try": r.attempt, "action": r.action})
        })
        .collect();
    let mut json = serde_json::json!({
        "submission": record.submission,
        "merge_job": record.merge.slurm_job_id,
        "resubmitted": resubmitted,
        "tasks": [],
    });
    let resub_lines: Vec<String> = resubmission_lines(&record.resubmitted)
        .into_iter()
        .map(|l| format!("  resubmitted {l}"))
        .collect();
    let head = format!(
        "slurm submission {} (array jobs {}; merge job {})",
        record.submission,
        record
            .arrays
            .iter()
            .map(|a| a.slurm_job_id.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        record.merge.slurm_job_id
    );
    let rows = match Tools::find(STATUS_RETRY)
        .and_then(|t| queue(&t, &record.job_name, true).map_err(|e| unreachable(&e)))
    {
        Ok(r) => r,
        Err(e) => {
            let mut out = vec![format!("{head}: queue unknown ({e})")];
            out.extend(resub_lines);
            return (out, json);
        }
    };
    let (mut done, mut running, mut waiting) = (0, 0, 0);
    let mut failed = Vec::new();
    let mut tasks_json = Vec::new();
    for a in &record.arrays {
        for (t, id) in a.jobs.iter().enumerate() {
            let row = rows.get(&(a.slurm_job_id.clone(), Some(t as u32)));
            let name = plan
                .jobs
                .iter()
                .find(|j| &j.id == id)
                .map_or("?", |j| j.name.as_str());
            tasks_json.push(serde_json::json!({
                "job": name,
                "id": id,
                "slurm_id": format!("{}_{t}", a.slurm_job_id),
                "node": row.map(|r| r.node.clone()).filter(|n| !n.is_empty()),
                "state": row.map(|r| r.state.clone()),
                "elapsed": row.map(|r| r.elapsed.clone()),
                "time_minutes": a.time_minutes,
                "mem_mib": a.mem_mib,
                "shard": dir.shard_path(id).exists(),
            }));
            if dir.shard_path(id).exists() {
                done += 1;
            } else if let Some(r) = row.filter(|r| r.active()) {
                if r.state == "RUNNING" {
                    running += 1;
                } else {
                    waiting += 1;
                }
            } else {
                let sid = format!("{}_{t}", a.slurm_job_id);
                let state = row.map_or("left the queue".to_string(), state_text);
                let node = row
                    .filter(|r| !r.node.is_empty())
                    .map_or(String::new(), |r| {
                        format!(" on {} after {}", r.node, r.elapsed)
                    });
                failed.push(format!(
                    "  FAILED {name} ({}): Slurm job {sid} {state}{node}, no shard; log: {}",
                    &id[..12.min(id.len())],
                    log_of_task(dir, &sid).display()
                ));
            }
        }
    }
    let merge = if dir.result_path().exists() && failed.is_empty() && running + waiting == 0 {
        "merged".to_string()
    } else if dir.result_path().exists() {
        "result.toml is stale".to_string()
    } else {
        match rows.get(&(record.merge.slurm_job_id.clone(), None)) {
            Some(r) => format!("merge {}", r.state.to_lowercase()),
            None => "merge not in the queue".to_string(),
        }
    };
    let mut out = vec![format!(
        "{head}: {done} done, {running} running, {waiting} waiting, {} failed; {merge}",
        failed.len()
    )];
    let any_failed = !failed.is_empty();
    out.extend(failed);
    if any_failed {
        out.push(format!(
            "  run `gametables run` again with the same job file and --run-dir {} to resubmit the failed jobs",
            dir.root().display()
        ));
    }
    out.extend(resub_lines);
    json["tasks"] = serde_json::Value::Array(tasks_json);
    (out, json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::plan::{InputRef, PlannedJob, SCHEMA};

    fn job(name: &str, cost: u64, inputs: &[&PlannedJob]) -> PlannedJob {
        PlannedJob {
            name: name.into(),
            id: sha256_hex(name.as_bytes()),
            cost,
            memory: 64 << 20,
            threads: 1,
            shard_bytes: 0,
            cpu_seconds: 0,
            inputs: inputs
                .iter()
                .map(|j| InputRef {
                    name: j.name.clone(),
                    id: j.id.clone(),
                })
                .collect(),
            params: toml::Table::new(),
        }
    }

    /// The defaults of `run --executor slurm`, no account.
    fn test_options() -> SlurmOptions {
        SlurmOptions {
            exe: PathBuf::from("/usr/bin/gametables"),
            partition: None,
            sbatch_args: vec![],
            array_limit: None,
            account: None,
            qos: None,
            time_margin: DEFAULT_TIME_MARGIN,
            time_floor: DEFAULT_TIME_FLOOR,
            max_retries: DEFAULT_MAX_RETRIES,
            detach: false,
            force: false,
            progress: false,
            retry_for: Duration::ZERO,
            latency_wait: DEFAULT_LATENCY_WAIT,
        }
    }

    /// a, b → c → e; d independent; f reads a.
    fn dag() -> PlanFile {
        let a = job("a", 1, &[]);
        let b = job("b", 5, &[]);
        let c = job("c", 1, &[&a, &b]);
        let d = job("d", 3, &[]);
        let e = job("e", 1, &[&c]);
        let f = job("f", 1, &[&a]);
        PlanFile {
            schema: SCHEMA,
            job_file: "dag".into(),
            kind: "test".into(),
            params: toml::Table::new(),
            jobs: vec![a, b, c, d, e, f],
        }
    }

    fn names<'p>(plan: &'p PlanFile, parts: &[Part]) -> Vec<(String, Vec<&'p str>, Vec<usize>)> {
        parts
            .iter()
            .map(|p| {
                let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
                (p.name.clone(), jobs, p.after.clone())
            })
            .collect()
    }

    #[test]
    fn levels_and_dependencies_follow_the_dag() {
        let plan = dag();
        let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 1001);
        assert_eq!(
            names(&plan, &parts),
            vec![
                ("level0-part0".into(), vec!["b", "d", "a"], vec![]),
                ("level1-part0".into(), vec!["c", "f"], vec![0]),
                ("level2-part0".into(), vec!["e"], vec![1]),
            ]
        );
    }

    #[test]
    fn finished_inputs_lower_the_level() {
        let plan = dag();
        // a, b, d done: c and f have no pending input.
        let parts = parts_of(&plan, &[2, 4, 5], 1001);
        assert_eq!(
            names(&plan, &parts),
            vec![
                ("level0-part0".into(), vec!["c", "f"], vec![]),
                ("level1-part0".into(), vec!["e"], vec![0]),
            ]
        );
    }

    #[test]
    fn arrays_split_at_max_array_size_and_depend_only_on_their_inputs() {
        let plan = dag();
        let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 2);
        assert_eq!(
            names(&plan, &parts),
            vec![
                ("level0-part0".into(), vec!["b", "d"], vec![]),
                ("level0-part1".into(), vec!["a"], vec![]),
                // c reads a and b (parts 0 and 1); f reads a (part 1).
                ("level1-part0".into(), vec!["c", "f"], vec![0, 1]),
                ("level2-part0".into(), vec!["e"], vec![2]),
            ]
        );
    }

    #[test]
    fn arrays_ask_for_the_memory_and_threads_of_their_jobs_within_a_factor_two() {
        let mut plan = dag();
        // Level 0: a 1 GiB, b 12 GiB with 4 threads, d 700 MiB; f 10 GiB at level 1.
        for (name, mem, threads) in [
            ("a", 1 << 30, 1),
            ("b", 12 << 30, 4),
            ("d", 700 << 20, 1),
            ("f", 10 << 30, 1),
        ] {
            let j = plan.jobs.iter_mut().find(|j| j.name == name).unwrap();
            j.memory = mem;
            j.threads = threads;
        }
        let parts = parts_of(&plan, &[0, 1, 2, 3, 4, 5], 1001);
        let got: Vec<(String, Vec<&str>, u64, u32)> = parts
            .iter()
            .map(|p| {
                let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
                (p.name.clone(), jobs, p.memory >> 20, p.threads)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("level0-part0".into(), vec!["b"], 12 << 10, 4),
                // 700 MiB is more than half of 1 GiB: one array asking 1 GiB.
                ("level0-part1".into(), vec!["d", "a"], 1 << 10, 1),
                ("level1-part0".into(), vec!["f"], 10 << 10, 1),
                ("level1-part1".into(), vec!["c"], 64, 1),
                ("level2-part0".into(), vec!["e"], 64, 1),
            ]
        );
        let plan_dir = RunDir::new("/nonexistent/run");
        let opts = SlurmOptions {
            account: Some("proj".into()),
            ..test_options()
        };
        let sub = Submission {
            plan: &plan,
            root: plan_dir.root().to_path_buf(),
            exe: opts.exe.clone(),
            number: 1,
            job_name: "gt-dag-0".into(),
            parts,
            opts: &opts,
            time_cap: None,
            mem_cap: None,
        };
        let script = sub.array_script(&sub.parts[0]);
        assert!(script.contains("#SBATCH --mem=12288M\n"), "{script}");
        assert!(script.contains("#SBATCH --cpus-per-task=4\n"), "{script}");
        // The floor (the test jobs estimate 0 CPU seconds), a signal a
        // minute before, no requeue by Slurm, the default throttle, the account.
        assert!(
            script.contains("#SBATCH --time=10 # 3 x the CPU estimate"),
            "{script}"
        );
        assert!(script.contains("#SBATCH --signal=B:USR1@60\n"), "{script}");
        assert!(script.contains("#SBATCH --no-requeue\n"), "{script}");
        assert!(script.contains("#SBATCH --array=0-0%64\n"), "{script}");
        assert!(script.contains("#SBATCH --account=proj\n"), "{script}");
        assert!(!script.contains("--exclude"), "{script}");
        let merge = sub.merge_script();
        assert!(merge.contains("#SBATCH --account=proj\n"), "{merge}");
        // The merge asks for the largest job's memory (b, 12 GiB) and, its
        // shards being small, the time floor.
        assert!(
            merge.contains("#SBATCH --mem=12288M # as the plan's largest job, at least 1024 MiB\n"),
            "{merge}"
        );
        assert!(
            merge.contains("#SBATCH --time=10 # 3 x the shards read at 32 MiB/s"),
            "{merge}"
        );
        // 100 GiB of shards: 3 × 3,200 s + the 60 s latency wait = 161 min.
        let mut big = plan.clone();
        for j in &mut big.jobs {
            j.shard_bytes = 0;
        }
        big.jobs[0].shard_bytes = 100 << 30;
        let sub = Submission { plan: &big, ..sub };
        assert_eq!(sub.merge_resources(), (12288, 161));
        // A partition limit of 2 hours cuts it, and the script says so.
        let sub = Submission {
            time_cap: Some(120),
            ..sub
        };
        assert_eq!(sub.merge_resources(), (12288, 120));
        assert!(
            sub.merge_script()
                .contains("#SBATCH --time=120 # 3 x the shards read at 32 MiB/s plus --latency-wait, at least 10 min, or the partition's time limit\n"),
            "{}",
            sub.merge_script()
        );
    }

    /// No task asks for more time than the partition's longest limit
    /// (`sinfo %l`): such a task would wait forever or be refused.
    #[test]
    fn tasks_ask_for_no_more_than_the_partitions_time_limit() {
        let mut plan = dag();
        for j in &mut plan.jobs {
            j.cpu_seconds = 10 * 3600;
        }
        let opts = test_options();
        let t = tempfile::tempdir().unwrap();
        let dir = RunDir::new(t.path());
        let pending: Vec<usize> = (0..plan.jobs.len()).collect();
        let build_with = |nodes: NodeLimits| {
            build(
                &dir,
                &plan,
                &opts,
                &pending,
                1001,
                &BTreeMap::new(),
                Some(nodes),
            )
            .unwrap()
        };
        let minutes = |max_minutes| {
            let sub = build_with(NodeLimits {
                cpus: 64,
                mem_mib: 1 << 20,
                max_minutes,
            });
            let parts: Vec<u64> = sub.parts.iter().map(|p| p.minutes).collect();
            // Small jobs: the merge asks for its floor of memory.
            assert_eq!(sub.merge_resources().0, MERGE_MIN_MIB);
            (parts, sub.merge_resources().1)
        };
        // Nodes smaller than the floor: the merge asks for what they have.
        let small = build_with(NodeLimits {
            cpus: 2,
            mem_mib: 700,
            max_minutes: None,
        });
        assert_eq!(small.merge_resources().0, 700);
        // 3 × 10 h on one thread: 1,800 min, uncapped on an infinite partition.
        let (parts, merge) = minutes(None);
        assert!(parts.iter().all(|&m| m == 1800), "{parts:?}");
        assert_eq!(merge, 10);
        let (parts, merge) = minutes(Some(24 * 60));
        assert!(parts.iter().all(|&m| m == 1440), "{parts:?}");
        assert_eq!(merge, 10);
        let (parts, merge) = minutes(Some(5));
        assert!(parts.iter().all(|&m| m == 5), "{parts:?}");
        assert_eq!(merge, 5);
    }

    #[test]
    fn node_limits_are_the_largest_node() {
        assert_eq!(
            parse_node_limits("p|2|1536\np|4+|3000\n", false),
            Some(NodeLimits {
                cpus: 4,
                mem_mib: 3000,
                max_minutes: None,
            })
        );
        assert_eq!(parse_node_limits("", false), None);
        // The longest time limit of the groups; one infinite: no cap.
        let limits = |t: &str| parse_node_limits(t, false).unwrap().max_minutes;
        assert_eq!(
            limits("p|2|1536|2:00:00\np|4|3000|1-00:00:00\n"),
            Some(1440)
        );
        assert_eq!(limits("p|2|1536|30:00\n"), Some(30));
        assert_eq!(limits("p|2|1536|2:00:00\np|4|3000|infinite\n"), None);
        assert_eq!(limits("p|2|1536|n/a\n"), None);
        // Without --partition, sinfo lists every partition: only the
        // default one (marked `*`) counts; none marked: all of them.
        let all = "short*|8|16000|4:00:00\nlong|64|512000|infinite\n";
        assert_eq!(
            parse_node_limits(all, true),
            Some(NodeLimits {
                cpus: 8,
                mem_mib: 16000,
                max_minutes: Some(240),
            })
        );
        assert_eq!(
            parse_node_limits(&all.replace('*', ""), true),
            Some(NodeLimits {
                cpus: 64,
                mem_mib: 512000,
                max_minutes: None,
            })
        );
    }

    #[test]
    fn slurm_time_limits_parse_as_sinfo_prints_them() {
        assert_eq!(parse_slurm_minutes("infinite"), None);
        assert_eq!(parse_slurm_minutes("UNLIMITED"), None);
        assert_eq!(parse_slurm_minutes("30"), Some(30));
        assert_eq!(parse_slurm_minutes("30:00"), Some(30));
        assert_eq!(parse_slurm_minutes("2:00:00"), Some(120));
        assert_eq!(parse_slurm_minutes("1-00:00:00"), Some(1440));
        assert_eq!(parse_slurm_minutes("2-12"), Some(3600));
        assert_eq!(parse_slurm_minutes("2-12:30"), Some(3630));
        assert_eq!(parse_slurm_minutes("7-00:00:00"), Some(10080));
        assert_eq!(parse_slurm_minutes(""), None);
    }

    #[test]
    fn time_limits_follow_the_cpu_estimate_with_margin_and_floor() {
        let p = TimePolicy {
            margin: 3.0,
            floor: Duration::from_secs(600),
        };
        // 0 s and 100 s of CPU: the floor of 10 min.
        assert_eq!(time_minutes(0, 1, p, 1), 10);
        assert_eq!(time_minutes(100, 1, p, 1), 10);
        // 1 h on 1 thread: 3 h; on 4 threads: 45 min; after a time-out x4.
        assert_eq!(time_minutes(3600, 1, p, 1), 180);
        assert_eq!(time_minutes(3600, 4, p, 1), 45);
        assert_eq!(time_minutes(3600, 4, p, 4), 180);
        // Rounded up to whole minutes, never below one.
        assert_eq!(
            time_minutes(
                61,
                1,
                TimePolicy {
                    margin: 1.0,
                    floor: Duration::ZERO
                },
                1
            ),
            2
        );
        assert_eq!(
            time_minutes(
                0,
                1,
                TimePolicy {
                    margin: 1.0,
                    floor: Duration::ZERO
                },
                1
            ),
            1
        );
        assert_eq!(signal_before(1), 30);
        assert_eq!(signal_before(10), 60);
        assert_eq!(signal_before(600), 300);
    }

    #[test]
    fn retried_jobs_get_their_own_arrays_with_more_time_memory_and_excluded_nodes() {
        let plan = dag();
        let mut retries = BTreeMap::new();
        retries.insert(
            1, // b
            Retry {
                attempts: 1,
                time_factor: 4,
                mem_factor: 2,
                exclude: ["n2".to_string()].into(),
            },
        );
        let policy = TimePolicy {
            margin: 3.0,
            floor: Duration::from_secs(600),
        };
        let parts = parts_with(&plan, &[0, 1, 3], 1001, &retries, policy);
        let got: Vec<(Vec<&str>, u64, u64, Vec<String>)> = parts
            .iter()
            .map(|p| {
                let jobs = p.jobs.iter().map(|&i| plan.jobs[i].name.as_str()).collect();
                (jobs, p.memory >> 20, p.minutes, p.exclude.clone())
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (vec!["b"], 128, 40, vec!["n2".to_string()]),
                (vec!["d", "a"], 64, 10, vec![]),
            ]
        );
    }

    fn failure(state: &str, node: &str) -> Failure {
        Failure {
            job: Some(0),
            slurm_id: "7_3".into(),
            state: state.into(),
            node: node.into(),
            minutes: 10,
            mem_mib: 512,
            log: PathBuf::from("/nonexistent/log"),
            not_run: false,
            line: "job x".into(),
        }
    }

    #[test]
    fn failures_are_resubmitted_only_when_another_try_can_cure_them() {
        let (r, what) = decide(
            &failure("NODE_FAIL", "n2"),
            None,
            2,
            Overrides::default(),
            None,
        )
        .unwrap();
        assert_eq!(r.exclude, ["n2".to_string()].into());
        assert_eq!(r.attempts, 1);
        assert!(what.contains("--exclude=n2"), "{what}");
        let (r2, _) = decide(
            &failure("NODE_FAIL", "n3"),
            Some(&r),
            2,
            Overrides::default(),
            None,
        )
        .unwrap();
        assert_eq!(r2.exclude, ["n2".to_string(), "n3".to_string()].into());
        // Bounded: a third failure is not resubmitted.
        let no = decide(
            &failure("NODE_FAIL", "n1"),
            Some(&r2),
            2,
            Overrides::default(),
            None,
        )
        .unwrap_err();
        assert!(no.contains("failed 3 times"), "{no}");

        let (r, what) = decide(
            &failure("TIMEOUT", "n1"),
            None,
            2,
            Overrides::default(),
            None,
        )
        .unwrap();
        assert_eq!((r.time_factor, r.exclude.len()), (4, 0));
        assert!(what.contains("--time 40 min"), "{what}");

        let (r, what) = decide(
            &failure("OUT_OF_MEMORY", "n1"),
            None,
            2,
            Overrides::default(),
            None,
        )
        .unwrap();
        assert_eq!(r.mem_factor, 2);
        assert!(what.contains("--mem 1024 MiB"), "{what}");
        let no = decide(
            &failure("OUT_OF_MEMORY", "n1"),
            Some(&r),
            2,
            Overrides::default(),
            None,
        )
        .unwrap_err();
        assert!(
            no.contains("out of memory again with --mem 512 MiB"),
            "{no}"
        );

        assert!(
            decide(
                &failure("PREEMPTED", ""),
                None,
                2,
                Overrides::default(),
                None
            )
            .is_ok()
        );
        for state in ["FAILED", "CANCELLED", "GONE"] {
            assert_eq!(
                decide(&failure(state, "n1"), None, 2, Overrides::default(), None).unwrap_err(),
                ""
            );
        }
        // Killed by Slurm's memory sampler: FAILED, but the log says why.
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("log");
        std::fs::write(
            &log,
            "slurmstepd-n1: error: StepId=9.batch exceeded memory limit (434782208 > 62914560), being killed\n",
        )
        .unwrap();
        let mut f = failure("FAILED", "n1");
        f.log = log;
        assert_eq!(
            decide(&f, None, 2, Overrides::default(), None)
                .unwrap()
                .0
                .mem_factor,
            2
        );
        let no = decide(
            &f,
            None,
            2,
            Overrides {
                mem: Some("--mem=5M"),
                time: None,
            },
            None,
        )
        .unwrap_err();
        assert!(no.contains("--sbatch-arg=--mem=5M"), "{no}");

        // A time-out at the partition's longest limit is not tried again
        // with the same limit; below it, the next try is capped there.
        let mut f = failure("TIMEOUT", "n1");
        f.minutes = 240;
        let no = decide(&f, None, 2, Overrides::default(), Some(240)).unwrap_err();
        assert!(no.contains("the partition's longest"), "{no}");
        f.minutes = 100;
        let (_, what) = decide(&f, None, 2, Overrides::default(), Some(240)).unwrap();
        assert!(what.contains("again with --time 240 min"), "{what}");
        // Under --sbatch-arg=--time=…, which every try gets: not resubmitted.
        let args = ["--time=10:00".to_string()];
        let no = decide(&f, None, 2, Overrides::of(&args), None).unwrap_err();
        assert!(no.contains("--sbatch-arg=--time=10:00"), "{no}");
        assert_eq!(
            Overrides::of(&["--mem=1G".to_string(), "-t5".to_string()]).time,
            Some("-t5")
        );
    }

    #[test]
    fn max_array_size_is_read_from_scontrol_output() {
        let text = "Configuration data as of 2026-11-29T19:00:00\nMaxArraySize            = 5\nMaxJobCount             = 10000\n";
        assert_eq!(parse_max_array_size(text), 5);
        assert_eq!(
            parse_max_array_size("MaxJobCount = 3\n"),
            DEFAULT_MAX_ARRAY_SIZE
        );
    }

    #[test]
    fn squeue_rows_are_parsed_and_ranges_expanded() {
        let rows = parse_squeue(
            "12|0|RUNNING|n2|0:05|None\n12|[3-4,7%2]|PENDING||0:00|JobArrayTaskLimit\n13|N/A|PENDING||0:00|Dependency\n",
        );
        let got: Vec<(String, Option<u32>, String)> = rows
            .iter()
            .map(|r| (r.job.clone(), r.task, r.state.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("12".into(), Some(0), "RUNNING".into()),
                ("12".into(), Some(3), "PENDING".into()),
                ("12".into(), Some(4), "PENDING".into()),
                ("12".into(), Some(7), "PENDING".into()),
                ("13".into(), None, "PENDING".into()),
            ]
        );
        assert!(rows[0].active());
        assert_eq!(
            (rows[0].node.as_str(), rows[0].elapsed.as_str()),
            ("n2", "0:05")
        );
        assert!(!parse_squeue("12|1|CANCELLED|n1|0:01|None")[0].active());
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(sh("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(sh("--time=1:00:00"), "--time=1:00:00");
        assert_eq!(sh("a b"), "'a b'");
        assert_eq!(sh("it's"), r"'it'\''s'");
        assert_eq!(sh(""), "''");
    }

    #[test]
    fn transient_failures_are_told_from_real_errors() {
        for e in [
            "`sbatch` failed (exit status: 1): sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
            "`squeue` failed (exit status: 1): slurm_load_jobs error: Socket timed out on send/recv operation",
            "`scontrol` failed (exit status: 1): slurm_load_ctl_conf error: Unable to contact slurm controller (connect failure)",
            "`sbatch` failed (exit status: 1): sbatch: error: Slurm temporarily unable to accept job, sleeping and retrying",
        ] {
            assert!(is_transient(e), "{e}");
        }
        for e in [
            "`sbatch` failed (exit status: 1): sbatch: error: invalid partition specified: nope",
            "`sbatch` failed (exit status: 1): sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
            "`sbatch` failed (exit status: 1): sbatch: unrecognized option '--bogus'",
            "`scancel` could not start: No such file or directory (os error 2)",
        ] {
            assert!(!is_transient(e), "{e}");
        }
    }

    #[test]
    fn a_task_gone_without_shard_fails_only_after_the_grace() {
        let t = Instant::now();
        let mut seen = Seen::Queued;
        let completed = QueueRow {
            job: "1".into(),
            task: Some(0),
            state: "COMPLETED".into(),
            node: "n1".into(),
            elapsed: "0:03".into(),
            reason: "None".into(),
        };
        let grace = DEFAULT_LATENCY_WAIT;
        assert_eq!(judge(Some(&completed), &mut seen, t, grace), None);
        assert_eq!(seen, Seen::Gone(t));
        assert_eq!(
            judge(Some(&completed), &mut seen, t + grace / 2, grace),
            None
        );
        assert!(judge(Some(&completed), &mut seen, t + grace, grace).is_some());
        let cancelled = QueueRow {
            state: "CANCELLED".into(),
            ..completed
        };
        let mut seen = Seen::Queued;
        assert_eq!(
            judge(Some(&cancelled), &mut seen, t, grace).as_deref(),
            Some("CANCELLED")
        );
    }
}
