//! The plan of a submission: the jobs grouped into job arrays by dependency
//! level and resources, each array's `--mem` and `--time`, and the batch
//! scripts.

use super::*;

// ---------------------------------------------------------------- the plan of a submission

/// One array part: jobs of one dependency level and one resource class, at
/// most `MaxArraySize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    /// `level{L}-part{P}`.
    pub(super) name: String,
    pub(super) level: usize,
    /// Plan indices; array task `i` runs `jobs[i]`.
    pub(super) jobs: Vec<usize>,
    /// Indices of earlier parts this one waits for.
    pub(super) after: Vec<usize>,
    /// Memory every task asks for (`--mem`): the largest estimate of its jobs, bytes.
    pub(super) memory: u64,
    /// `--cpus-per-task`: the threads its jobs can use.
    pub(super) threads: u32,
    /// `--time` of every task, minutes: the largest of its jobs' ([`time_minutes`]).
    pub(super) minutes: u64,
    /// `--exclude`: nodes that failed its jobs before.
    pub(super) exclude: Vec<String>,
    /// Processes of each of its jobs ([`crate::pipeline::JobSpec::ranks`]):
    /// above 1, each array task is a Slurm job of that many tasks
    /// (`--ntasks`, `srun`) and `memory` is a rank's.
    pub(super) ranks: u32,
}

/// What earlier failures changed for a job's next try ([`decide`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Retry {
    /// Failed tries so far.
    pub(super) attempts: u32,
    /// `--time` multiplier ([`TIMEOUT_FACTOR`] for each time-out; 0 = 1).
    pub(super) time_factor: u64,
    /// `--mem` multiplier (2 after running out of memory; 0 = 1).
    pub(super) mem_factor: u64,
    /// Nodes it must avoid.
    pub(super) exclude: BTreeSet<String>,
}

impl Retry {
    pub(super) fn key(&self) -> (u64, u64, &BTreeSet<String>) {
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
pub(super) const MERGE_BYTES_PER_SEC: u64 = 32 << 20;

/// The least memory the merge job asks for, MiB: a merge of small shards
/// still holds the tables and the report (measured peaks, 6 Dec 2026:
/// chomp-boxes 15 MB, dodgem-5 230 MB, chomp-18x18 1.2 GB against its 1.9
/// GiB job).
pub(super) const MERGE_MIN_MIB: u64 = 1024;

/// How `--time` is chosen: [`SlurmOptions::time_margin`] and
/// [`SlurmOptions::time_floor`].
#[derive(Debug, Clone, Copy)]
pub(super) struct TimePolicy {
    pub(super) margin: f64,
    pub(super) floor: Duration,
}

/// The `--time` of a job in whole minutes: `margin` × its single-core CPU
/// estimate / its threads, at least `floor` and 1 min, times `factor`.
pub(super) fn time_minutes(cpu_seconds: u64, threads: u32, policy: TimePolicy, factor: u64) -> u64 {
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
pub(super) fn signal_before(minutes: u64) -> u64 {
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
pub(super) fn parts_of(plan: &PlanFile, pending: &[usize], max_array_size: usize) -> Vec<Part> {
    let policy = TimePolicy {
        margin: DEFAULT_TIME_MARGIN,
        floor: DEFAULT_TIME_FLOOR,
    };
    parts_with(plan, pending, max_array_size, &BTreeMap::new(), policy)
}

/// [`parts_of`] for jobs some of which failed before: jobs with different
/// [`Retry`] settings go into different parts, and a part asks for its jobs'
/// multiplied time and memory and excludes their failed nodes.
pub(super) fn parts_with(
    plan: &PlanFile,
    pending: &[usize],
    max_array_size: usize,
    retries: &BTreeMap<usize, Retry>,
    policy: TimePolicy,
) -> Vec<Part> {
    let none = Retry::default();
    let retry = |i: usize| retries.get(&i).unwrap_or(&none);
    let is_pending: BTreeSet<usize> = pending.iter().copied().collect();
    let index = plan.index_by_id();
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
                std::cmp::Reverse(j.ranks),
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
                        && plan.jobs[g[0]].ranks == j.ranks
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
                        let cpus = j.threads.max(1).saturating_mul(j.ranks.max(1));
                        time_minutes(j.cpu_seconds, cpus, policy, retry(i).key().0)
                    })
                    .max()
                    .unwrap_or(1),
                exclude: retry(chunk[0]).exclude.iter().cloned().collect(),
                threads: chunk
                    .iter()
                    .map(|&i| plan.jobs[i].threads)
                    .max()
                    .unwrap_or(1),
                ranks: plan.jobs[chunk[0]].ranks.max(1),
            });
        }
    }
    parts
}

/// Everything needed to write the scripts of one submission.
pub(super) struct Submission<'a> {
    pub(super) plan: &'a PlanFile,
    /// Absolute run directory.
    pub(super) root: PathBuf,
    /// Absolute `gametables` binary.
    pub(super) exe: PathBuf,
    pub(super) number: u32,
    pub(super) job_name: String,
    pub(super) parts: Vec<Part>,
    pub(super) opts: &'a SlurmOptions,
    /// The partition's longest time limit, minutes (`sinfo`), which no
    /// `--time` exceeds; `None`: infinite or not known.
    pub(super) time_cap: Option<u64>,
    /// The largest node's memory, MiB (`sinfo`), if known.
    pub(super) mem_cap: Option<u64>,
}

/// Quotes `s` for a POSIX shell when needed.
pub(super) fn sh(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:,+@%^".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

pub(super) fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The Slurm job name of a run directory: `gt-JOBFILE-` and 8 hex digits of
/// the directory's absolute path (to tell runs of the same job file apart).
pub(super) fn job_name_for(job_file: &str, root: &Path) -> String {
    format!(
        "gt-{job_file}-{}",
        &sha256_hex(path_str(root).as_bytes())[..8]
    )
}

impl Submission<'_> {
    pub(super) fn sub_rel(&self) -> String {
        format!("slurm/submit-{}", self.number)
    }

    pub(super) fn script_rel(&self, name: &str) -> String {
        format!("{}/{name}.sbatch", self.sub_rel())
    }

    pub(super) fn header(&self, out: &mut String, what: &str) {
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

    pub(super) fn preamble(&self, out: &mut String) {
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

    pub(super) fn array_script(&self, part: &Part) -> String {
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
        if part.ranks > 1 {
            // A job split over ranks: that many tasks, wherever Slurm puts
            // them, each with a rank's memory.
            let _ = writeln!(s, "#SBATCH --ntasks={}", part.ranks);
            let _ = writeln!(
                s,
                "#SBATCH --mem-per-cpu={}M # a rank's memory over its CPUs",
                slurm_mem_mib(part.memory).div_ceil(u64::from(part.threads.max(1)))
            );
        } else {
            let _ = writeln!(s, "#SBATCH --mem={}M", slurm_mem_mib(part.memory));
        }
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
        // The ranks of a split job are the tasks of one step: srun starts
        // them (each finds its rank in SLURM_PROCID, or from MPI) and stops
        // them all when one fails.
        let launch = if part.ranks > 1 {
            format!(
                "srun --ntasks={} --kill-on-bad-exit=1 --cpus-per-task={} ",
                part.ranks,
                part.threads.max(1)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{launch}\"$GAMETABLES\" worker \"$RUN_DIR/manifests/$JOB_ID.toml\" --run-dir \"$RUN_DIR\" \\\n  --latency-wait {} &",
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
    pub(super) fn merge_resources(&self) -> (u64, u64) {
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
    pub(super) fn cap_note(&self, minutes: u64) -> &'static str {
        if self.time_cap == Some(minutes) {
            ", or the partition's time limit"
        } else {
            ""
        }
    }

    pub(super) fn merge_script(&self) -> String {
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
    pub(super) fn sbatch_args(&self, script_rel: &str, deps: &[String]) -> Vec<String> {
        let mut a = vec!["--parsable".to_string()];
        if !deps.is_empty() {
            a.push(format!("--dependency=afterok:{}", deps.join(":")));
        }
        a.extend(self.opts.sbatch_args.iter().cloned());
        a.push(path_str(&self.root.join(script_rel)));
        a
    }

    pub(super) fn record(&self) -> SubmissionRecord {
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
