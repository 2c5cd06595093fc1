//! Following a submission: which tasks failed and why (out of memory,
//! time limit, node lost), what is resubmitted with which resources.

use super::*;

/// A task (or the merge job) that ended without its output.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    /// Plan index; `None` for the merge job.
    pub(super) job: Option<usize>,
    /// `ARRAY_TASK` (or the merge job's id).
    pub(super) slurm_id: String,
    /// Final Slurm state (`NODE_FAIL`, `TIMEOUT`, …), or `GONE` if it left
    /// the queue without a shard.
    pub(super) state: String,
    /// Node(s) it ran on, if known.
    pub(super) node: String,
    /// Its array's `--time`, minutes, and `--mem`, MiB.
    pub(super) minutes: u64,
    pub(super) mem_mib: u64,
    /// Its log.
    pub(super) log: PathBuf,
    /// Never ran: cancelled by Slurm because an input's task failed.
    pub(super) not_run: bool,
    /// The line that names it in messages.
    pub(super) line: String,
}

/// Whether a task's log says it was killed for memory (without cgroups
/// Slurm's sampler kills it and its state is `FAILED` or `CANCELLED`).
pub(super) fn log_says_out_of_memory(log: &Path) -> bool {
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

/// Whether the log of a failed task says that a rank of a split job was
/// killed by a signal (`srun: error: NODE: task K: Killed`: a rank lost to
/// `kill -9`, the kernel or a node), and no rank failed of its own (`…:
/// Exited with exit code N`; srun then kills the others too).
pub(super) fn log_says_rank_killed(log: &Path) -> bool {
    let text = std::fs::read(log).unwrap_or_default();
    let tail = &text[text.len().saturating_sub(64 << 10)..];
    let t = String::from_utf8_lossy(tail);
    let srun = |l: &&str| l.contains("srun: error:") && l.contains(": task ");
    t.lines()
        .filter(srun)
        .any(|l| l.trim_end().ends_with("Killed"))
        && !t
            .lines()
            .filter(srun)
            .any(|l| l.contains("Exited with exit code"))
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
/// - a rank of a split job killed by a signal (`FAILED`, and the log says
///   so: [`log_says_rank_killed`]): again as it was (the layer resumes from
///   its ranks' checkpoints).
/// - anything else (`FAILED` with an exit code, `CANCELLED` by a user, a
///   task that ended without a shard): not tried again — the error is the
///   job's own, or someone meant it to stop.
///
/// Each job is tried again at most `max_retries` times.
/// `overrides` are a `--mem…` or `--time…` given with `--sbatch-arg`: they
/// win over the script's, so a task out of memory or time under one is
/// not tried again.
pub(super) fn decide(
    f: &Failure,
    prev: Option<&Retry>,
    max_retries: u32,
    overrides: Overrides<'_>,
    time_cap: Option<u64>,
) -> std::result::Result<(Retry, String), String> {
    let mut r = prev.cloned().unwrap_or_default();
    let oom =
        f.state == "OUT_OF_MEMORY" || (f.state != "TIMEOUT" && log_says_out_of_memory(&f.log));
    let rank_killed = !oom && f.state == "FAILED" && log_says_rank_killed(&f.log);
    let curable = matches!(
        f.state.as_str(),
        "NODE_FAIL" | "BOOT_FAIL" | "PREEMPTED" | "TIMEOUT"
    ) || oom
        || rank_killed;
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
            "FAILED" if rank_killed => {
                "a rank was killed: again as it was, resuming from the ranks' checkpoints"
                    .to_string()
            }
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
pub(super) struct Overrides<'a> {
    pub(super) mem: Option<&'a str>,
    pub(super) time: Option<&'a str>,
}

impl<'a> Overrides<'a> {
    pub(super) fn of(sbatch_args: &'a [String]) -> Self {
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
pub(super) fn follow(
    dir: &RunDir,
    plan: &PlanFile,
    kind: &dyn JobKind,
    opts: &SlurmOptions,
    tools: &Tools,
    max: usize,
    mut record: SubmissionRecord,
    mut summary: RunSummary,
) -> Result<SlurmOutcome> {
    let index = plan.index_by_id();
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
pub(super) fn resubmission_lines(list: &[Resubmission]) -> Vec<String> {
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
pub(super) enum Seen {
    Queued,
    Done,
    /// Left the queue (or was never listed) at this time, no shard yet.
    Gone(Instant),
    Failed(String),
}

pub(super) struct Task {
    pub(super) job: usize,
    pub(super) array: String,
    pub(super) index: u32,
    pub(super) seen: Seen,
    /// `--time` (minutes) and `--mem` (MiB) of its array.
    pub(super) minutes: u64,
    pub(super) mem_mib: u64,
    /// Node, state and elapsed time of its last queue row.
    pub(super) node: String,
    pub(super) state: String,
    pub(super) elapsed: String,
}

impl Task {
    pub(super) fn slurm_id(&self) -> String {
        format!("{}_{}", self.array, self.index)
    }

    /// Takes node, state and elapsed time from the task's queue row; returns
    /// the line to print when it has just started running.
    fn update(&mut self, r: &QueueRow, plan: &PlanFile) -> Option<String> {
        if !r.node.is_empty() {
            self.node = r.node.clone();
        }
        let started = self.state != r.state && r.state == "RUNNING";
        self.state = r.state.clone();
        self.elapsed = r.elapsed.clone();
        started.then(|| {
            format!(
                "running {} (Slurm {} on {})",
                plan.jobs[self.job].name,
                self.slurm_id(),
                r.node
            )
        })
    }
}

pub(super) fn log_of_task(dir: &RunDir, slurm_id: &str) -> PathBuf {
    dir.root().join(format!("logs/slurm-{slurm_id}.out"))
}

/// Updates a task or the merge job from a queue row; returns a failure
/// reason. A job that left the queue without a shard fails only after
/// `grace` (`--latency-wait`).
pub(super) fn judge(
    row: Option<&QueueRow>,
    seen: &mut Seen,
    now: Instant,
    grace: Duration,
) -> Option<String> {
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
pub(super) fn wait(
    dir: &RunDir,
    plan: &PlanFile,
    tools: &Tools,
    record: &SubmissionRecord,
    summary: &mut RunSummary,
    opts: &SlurmOptions,
) -> Result<Vec<Failure>> {
    let mut tasks = tasks_of(plan, record, summary);
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
                say(&done_line(plan, t));
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
                        if let Some(line) = row.and_then(|r| t.update(r, plan)) {
                            say(&line);
                        }
                        match row.map(|r| r.state.as_str()) {
                            Some("RUNNING" | "COMPLETING") => running += 1,
                            Some(_) if row.is_some_and(QueueRow::active) => waiting += 1,
                            _ => {}
                        }
                        if let Some(why) = judge(row, &mut t.seen, now, grace) {
                            let f = task_failure(dir, plan, t, row, &why);
                            if !f.not_run {
                                say(&format!("FAILED {}", f.line));
                            }
                            failures.push(f);
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
                            failures.push(merge_failure(dir, &merge_id, row, &why));
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
    drain(tools, record);
    pb.finish_and_clear();
    Ok(failures)
}

/// One task a submission record names, for each job of its arrays; a job
/// whose shard was there already (adopted, counted as skipped) is done.
fn tasks_of(plan: &PlanFile, record: &SubmissionRecord, summary: &RunSummary) -> Vec<Task> {
    let index = plan.index_by_id();
    let mut tasks: Vec<Task> = Vec::new();
    for a in &record.arrays {
        for (t, id) in a.jobs.iter().enumerate() {
            let job = index[id.as_str()];
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
    tasks
}

/// `done JOB (Slurm ID on NODE, ELAPSED elapsed)`.
fn done_line(plan: &PlanFile, t: &Task) -> String {
    let or_unknown = |s: &str| if s.is_empty() { "?" } else { s }.to_string();
    format!(
        "done {} (Slurm {} on {}, {} elapsed)",
        plan.jobs[t.job].name,
        t.slurm_id(),
        or_unknown(&t.node),
        or_unknown(&t.elapsed)
    )
}

/// The failure of task `t` (its queue row `row`, `None` once it left the
/// queue) for reason `why`: one line naming the job, the Slurm job, the
/// node, the time it ran and its log. A task that never ran because a job
/// it depends on failed is marked `not_run`.
fn task_failure(
    dir: &RunDir,
    plan: &PlanFile,
    t: &Task,
    row: Option<&QueueRow>,
    why: &str,
) -> Failure {
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
    Failure {
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
    }
}

/// The failure of the merge job `merge_id` for reason `why`.
fn merge_failure(dir: &RunDir, merge_id: &str, row: Option<&QueueRow>, why: &str) -> Failure {
    let log = dir.root().join(format!("logs/slurm-{merge_id}-merge.out"));
    Failure {
        job: None,
        slurm_id: merge_id.to_string(),
        state: row.map_or("GONE".to_string(), |r| r.state.clone()),
        node: row.map_or(String::new(), |r| r.node.clone()),
        minutes: 0,
        mem_mib: 0,
        log: log.clone(),
        not_run: false,
        line: format!("merge: Slurm job {merge_id} {why}; log: {}", log.display()),
    }
}

/// Waits (up to 2 minutes) until the queue holds none of `record`'s jobs: a
/// task whose shard appeared, or the merge job after writing result.toml,
/// may still be finishing, and `run` again (or the next submission) must
/// not meet them.
fn drain(tools: &Tools, record: &SubmissionRecord) {
    let ids: BTreeSet<String> = record.slurm_ids().into_iter().collect();
    let t_drain = Instant::now();
    while t_drain.elapsed() < Duration::from_secs(120) {
        match queue(tools, &record.job_name, false) {
            Ok(rows) if rows.values().any(|r| r.active() && ids.contains(&r.job)) => {}
            _ => break,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}
