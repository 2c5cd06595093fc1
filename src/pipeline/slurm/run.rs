//! The entry points: `--dry-run`, the checks before a submission, and a
//! run on the cluster (submit, follow, merge).

use super::*;

// ---------------------------------------------------------------- entry points

pub(super) fn absolute(p: &Path) -> Result<PathBuf> {
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

pub(super) fn build<'a>(
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
pub(super) struct NodeLimits {
    pub(super) cpus: u32,
    pub(super) mem_mib: u64,
    /// Minutes; `None`: infinite, or not told.
    pub(super) max_minutes: Option<u64>,
}

/// A Slurm time limit as `sinfo` prints it (`%l`): `infinite`, or
/// `[days-]hours:minutes:seconds`, `minutes:seconds` below an hour,
/// `days-hours[:minutes]`, or whole minutes; in whole minutes (seconds
/// dropped). `None` if infinite or not a time.
pub(super) fn parse_slurm_minutes(s: &str) -> Option<u64> {
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
pub(super) fn parse_node_limits(text: &str, default_only: bool) -> Option<NodeLimits> {
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
pub(super) fn node_limits(opts: &SlurmOptions) -> Option<NodeLimits> {
    let sinfo = which("sinfo")?;
    let mut args = vec!["--noheader".to_string(), "--format=%P|%c|%m|%l".to_string()];
    if let Some(p) = &opts.partition {
        args.push(format!("--partition={p}"));
    }
    match call_within(&sinfo, &args, LIMITS_QUERY_TIMEOUT) {
        Ok(text) => parse_node_limits(&text, opts.partition.is_none()),
        Err(why) => {
            // Said once a process: `run` asks again on every round.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::warn!("node limits unknown: {why}");
                eprintln!(
                    "warning: node limits unknown ({why}); no task's request is capped by them"
                );
            });
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
pub(super) fn shell_args(args: &[String]) -> String {
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
pub(super) fn active_jobs(tools: &Tools, record: &SubmissionRecord) -> Result<Vec<String>> {
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

pub(super) fn still_queued(dir: &RunDir, prev: &SubmissionRecord, active: &[String]) -> Error {
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
pub(super) fn submit_round(
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
