//! The local executor: runs a plan's jobs as worker child processes (the same
//! binary, `gametables worker MANIFEST`), up to N at once, in dependency
//! order, skipping jobs whose shards already verify (fully decoded and
//! checked by the kind). A shard a worker just wrote gets the cheap check
//! only (sha256 trailer, header names the job); merge decodes every shard.
//! A worker is killed when its coordinator dies (`PR_SET_PDEATHSIG`), so no
//! orphan keeps working. Workers write shards without fsync; the run ends
//! with one `syncfs` of the run directory. Jobs start only while their
//! estimated memory fits the budget left by the running ones, and each worker
//! is told how many threads it may use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio::task::JoinSet;

use super::error::{Error, Result};
use super::kind::JobKind;
use super::plan::{PlanFile, PlannedJob};
use super::rundir::RunDir;
use super::state::{JobState, job_states, written_state};

/// Options of a local run.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Worker processes at once (≥ 1).
    pub workers: usize,
    /// Recompute every job even if its shard verifies.
    pub force: bool,
    /// The executable started as worker (normally the running binary).
    pub exe: PathBuf,
    /// Show the progress bar (only drawn on a terminal anyway).
    pub progress: bool,
    /// Memory budget in bytes: a job starts only when its estimated memory
    /// ([`PlannedJob::memory`](super::plan::PlannedJob::memory)) fits what the
    /// running jobs leave of it. A job above the whole budget is refused
    /// before anything runs ([`PlanFile::check_memory`]).
    pub memory_budget: u64,
    /// Cores of this machine: a worker gets `--threads min(job threads, cores)`.
    pub cores: usize,
}

/// What a local run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Jobs skipped because their shards verified.
    pub skipped: Vec<String>,
    /// Jobs recomputed because their shards were damaged (name, reason).
    pub damaged: Vec<(String, String)>,
    /// Jobs recomputed because their shards were deleted ([`JobState::Deleted`]).
    pub deleted: Vec<String>,
    /// Jobs recomputed because their shards are in an older shard format
    /// (name, reason).
    pub old: Vec<(String, String)>,
    /// Jobs computed in this run.
    pub computed: Vec<String>,
}

/// The jobs of `plan` to run (plan indices; all with `force`) and the summary
/// so far: skipped, damaged and deleted jobs ([`job_states`]). Shared by both
/// executors.
pub(crate) fn pending_jobs(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    force: bool,
) -> (Vec<usize>, RunSummary) {
    let mut summary = RunSummary::default();
    if force {
        return ((0..plan.jobs.len()).collect(), summary);
    }
    let mut pending = Vec::new();
    for (i, (j, state)) in plan
        .jobs
        .iter()
        .zip(job_states(dir, plan, kind))
        .enumerate()
    {
        match state {
            JobState::Done => summary.skipped.push(j.name.clone()),
            JobState::Pending => pending.push(i),
            JobState::Deleted => {
                summary.deleted.push(j.name.clone());
                pending.push(i);
            }
            JobState::Damaged(why) => {
                summary.damaged.push((j.name.clone(), why));
                pending.push(i);
            }
            JobState::Old(why) => {
                summary.old.push((j.name.clone(), why));
                pending.push(i);
            }
        }
    }
    (pending, summary)
}

/// The progress bar of a run over `jobs` jobs (hidden unless `visible`;
/// indicatif draws it only on a terminal anyway), shared by both executors.
pub(crate) fn job_progress_bar(jobs: u64, visible: bool) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(
        Some(jobs),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} jobs  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// Prints a line above the progress bar (or plainly when it is hidden).
fn say(pb: &ProgressBar, line: &str) {
    pb.suspend(|| errln!("{line}"));
}

/// Runs every job of `plan` that has no verified shard, then makes the
/// shards durable with one `syncfs` of the run directory (the workers write
/// them without fsync), on every way out. A job failure is reported before
/// a sync failure.
///
/// # Errors
/// [`Error::Job`] naming the largest job if one needs more memory than the
/// whole budget (nothing runs); naming each failed job, its exit status and
/// its log file; jobs already running finish first and their shards are kept.
/// [`Error::Io`] if the final sync fails.
pub async fn run_local(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &LocalOptions,
) -> Result<RunSummary> {
    plan.check_memory(opts.memory_budget)?;
    let ran = run_jobs(dir, plan, kind, opts).await;
    let synced = dir.sync();
    let summary = ran?;
    synced?;
    Ok(summary)
}

/// What a worker printed, as relayed to its log by [`relay_output`].
#[derive(Debug, Default)]
struct WorkerOutput {
    /// The last non-empty line the worker printed (its error when it fails).
    last_line: Option<String>,
    /// Why the log file could not be written, if it could not.
    log_error: Option<String>,
}

impl WorkerOutput {
    /// The log's path for a message, with the reason when it could not be written.
    fn log_note(&self, path: &std::path::Path) -> String {
        match &self.log_error {
            None => path.display().to_string(),
            Some(e) => format!("{} (not written: {e})", path.display()),
        }
    }
}

/// Bytes of a worker's output kept to find its last line.
const OUTPUT_TAIL: usize = 8 << 10;

/// Copies a worker's output from `from` to the log at `log_path` (appended)
/// until the worker closes it, keeping the last line. A log that cannot be
/// opened or written is noted and the output still read to the end, so the
/// worker never blocks on a full pipe.
fn relay_output(mut from: std::io::PipeReader, log_path: &std::path::Path) -> WorkerOutput {
    use std::io::{Read, Write};
    let mut out = WorkerOutput::default();
    let mut log = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
    {
        Ok(f) => Some(f),
        Err(e) => {
            out.log_error = Some(e.to_string());
            None
        }
    };
    let mut tail: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if let Some(f) = &mut log
            && let Err(e) = f.write_all(&buf[..n])
        {
            out.log_error = Some(e.to_string());
            log = None;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 2 * OUTPUT_TAIL {
            tail.drain(..tail.len() - OUTPUT_TAIL);
        }
    }
    out.last_line = String::from_utf8_lossy(&tail)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string);
    out
}

/// The body of [`run_local`] without the final sync.
async fn run_jobs(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &LocalOptions,
) -> Result<RunSummary> {
    let (mut pending, mut summary) = pending_jobs(dir, plan, kind, opts.force);
    let mut done: BTreeSet<String> = plan
        .jobs
        .iter()
        .filter(|j| summary.skipped.contains(&j.name))
        .map(|j| j.id.clone())
        .collect();
    // Costly jobs first among those ready (longest-processing-time order).
    pending.sort_by_key(|&i| (std::cmp::Reverse(plan.jobs[i].cost), i));

    let pb = job_progress_bar(plan.jobs.len() as u64, opts.progress);
    pb.set_position(done.len() as u64);
    announce_resume(&pb, &summary);

    let mut running: BTreeMap<u64, (usize, Instant)> = BTreeMap::new();
    let mut set: JoinSet<(u64, std::io::Result<std::process::ExitStatus>, WorkerOutput)> =
        JoinSet::new();
    let mut next_task = 0u64;
    let mut failures: Vec<String> = Vec::new();
    let workers = opts.workers.max(1);

    loop {
        // Start ready jobs while there is room and nothing has failed.
        while failures.is_empty() && running.len() < workers {
            // The costliest ready job whose memory fits what the running
            // ones leave (a job alone always fits: check_memory).
            let in_use: u64 = running
                .values()
                .map(|(i, _)| plan.jobs[*i].memory * u64::from(plan.jobs[*i].ranks))
                .sum();
            let Some(pos) = pending.iter().position(|&i| {
                let j = &plan.jobs[i];
                j.inputs.iter().all(|inp| done.contains(&inp.id))
                    && (running.is_empty()
                        || in_use.saturating_add(j.memory * u64::from(j.ranks))
                            <= opts.memory_budget)
            }) else {
                break;
            };
            let i = pending.remove(pos);
            let j = &plan.jobs[i];
            if opts.force {
                let _ = std::fs::remove_file(dir.shard_path(&j.id));
            }
            let (mut child, relay) = spawn_worker(dir, j, opts)?;
            let task = next_task;
            next_task += 1;
            running.insert(task, (i, Instant::now()));
            set.spawn(async move {
                let status = child.wait().await;
                let output = relay.await.unwrap_or_default();
                (task, status, output)
            });
        }
        pb.set_message(
            running
                .values()
                .map(|(i, _)| plan.jobs[*i].name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
        let Some(res) = set.join_next().await else {
            break;
        };
        let (task, status, output) = res.map_err(|e| Error::job("executor", e.to_string()))?;
        let (i, t0) = running.remove(&task).expect("task is running");
        let j = &plan.jobs[i];
        let ok = match job_outcome(dir, plan, j, &status, &output) {
            Ok(()) => true,
            Err(line) => {
                failures.push(line);
                false
            }
        };
        if ok {
            done.insert(j.id.clone());
            summary.computed.push(j.name.clone());
            pb.inc(1);
            say(
                &pb,
                &format!("done {} in {:.2} s", j.name, t0.elapsed().as_secs_f64()),
            );
        }
    }
    pb.finish_and_clear();
    if !failures.is_empty() {
        return Err(Error::job(
            plan.job_file.clone(),
            format!(
                "{} job(s) failed (finished shards are kept; run again to resume):\n  {}",
                failures.len(),
                failures.join("\n  ")
            ),
        ));
    }
    if !pending.is_empty() {
        return Err(Error::job(
            plan.job_file.clone(),
            format!("{} job(s) could not start: inputs missing", pending.len()),
        ));
    }
    Ok(summary)
}

/// Says what a resumed run found: shards already done, damaged, deleted or
/// in an older format (the last three are computed again).
fn announce_resume(pb: &ProgressBar, summary: &RunSummary) {
    if !summary.skipped.is_empty() {
        say(
            pb,
            &format!("{} job(s) already done, skipped", summary.skipped.len()),
        );
    }
    for (name, why) in &summary.damaged {
        say(
            pb,
            &format!("job {name}: shard damaged ({why}); recomputing"),
        );
    }
    for name in &summary.deleted {
        say(
            pb,
            &format!("job {name}: shard deleted (the run had it); recomputing"),
        );
    }
    if !summary.old.is_empty() {
        say(
            pb,
            &format!(
                "{} job(s) have shards in an older shard format (written by an older gametables); recomputing them",
                summary.old.len()
            ),
        );
    }
}

/// Starts the worker process of job `j`. Its stdout and stderr share one
/// pipe, which a blocking task copies to the job's log (the returned
/// handle gives the output's last line).
fn spawn_worker(
    dir: &RunDir,
    j: &PlannedJob,
    opts: &LocalOptions,
) -> Result<(tokio::process::Child, tokio::task::JoinHandle<WorkerOutput>)> {
    // The worker's stdout and stderr share one pipe, which the
    // coordinator copies to the job's log: if the log cannot be
    // written (a full disk), the worker's last line still reaches the
    // user through `run`.
    let log_path = dir.log_path(&j.id);
    let (reader, writer) = std::io::pipe().map_err(Error::io(&log_path))?;
    let writer2 = writer.try_clone().map_err(Error::io(&log_path))?;
    let mut cmd = tokio::process::Command::new(&opts.exe);
    cmd.arg("worker")
        .arg(dir.manifest_path(&j.id))
        .arg("--run-dir")
        .arg(dir.root())
        .arg("--defer-sync")
        .arg("--threads")
        .arg(j.threads.max(1).min(opts.cores.max(1) as u32).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer2));
    let coordinator = std::process::id();
    // SAFETY: between fork and exec the closure calls only
    // async-signal-safe functions (prctl, getppid) and allocates
    // nothing.
    unsafe {
        cmd.pre_exec(move || {
            // A worker dies with its coordinator (also on kill -9),
            // instead of finishing an orphaned job whose shard the
            // next run would compute again anyway.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != coordinator {
                // The coordinator died before prctl took effect.
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(Error::io(&opts.exe))?;
    // Our copies of the pipe's write end go with the command, so that
    // the relay sees the end of the output when the worker exits.
    drop(cmd);
    let relay = tokio::task::spawn_blocking(move || relay_output(reader, &log_path));
    Ok((child, relay))
}

/// Whether job `j` succeeded: its worker exited 0 and its shard is whole
/// (trailer and header identity; the body is decoded by the jobs that read
/// it and by merge). `Err`: one line saying what failed, with its log.
fn job_outcome(
    dir: &RunDir,
    plan: &PlanFile,
    j: &PlannedJob,
    status: &std::io::Result<std::process::ExitStatus>,
    output: &WorkerOutput,
) -> std::result::Result<(), String> {
    let log = output.log_note(&dir.log_path(&j.id));
    match status {
        // The cheap check (trailer and header identity): the body is
        // decoded by the jobs that read it and by merge.
        Ok(s) if s.success() => match written_state(dir, &plan.kind, j) {
            JobState::Done => Ok(()),
            other => Err(format!(
                "job {} exited 0 but its shard is {other:?}; log: {log}",
                j.name,
            )),
        },
        Ok(s) => Err(format!(
            "job {} ({}) failed with {s}{}; log: {log}",
            j.name,
            &j.id[..12],
            output
                .last_line
                .as_deref()
                .map_or(String::new(), |l| format!(": {l}")),
        )),
        Err(e) => Err(format!("job {}: could not wait for worker: {e}", j.name)),
    }
}
