//! The command line's definitions (clap): commands, their arguments and
//! help text, and the `query GAME` subcommands taken from the registry.

use super::*;

#[derive(Parser, Debug)]
#[command(
    name = "gametables",
    version,
    about = "Solve combinatorial games exhaustively: plan jobs, run them on all cores, \
             write checksummed shards, merge and verify the tables, check published results.",
    long_about = None
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Plan, run (resuming), merge, verify and report one or more job files.
    ///
    /// Each job file gets its own run directory (default runs/NAME/). Running
    /// again on the same directory resumes: jobs whose shards verify are
    /// skipped; missing or damaged ones are recomputed. If
    /// manifests/NAME.toml exists next to the job file's folder, the result
    /// digests are compared with it. The merge decodes and checks every
    /// shard; then the kind's checks run (what `verify` adds, without
    /// re-decoding the shards it just merged). A run merged by a Slurm job
    /// gets the full `verify`.
    Run(RunArgs),
    /// Print what a job file's jobs need; with --run-dir, also write plan.toml and one manifest per job there, without running.
    ///
    /// Prints every job with its estimated peak memory, then the number of
    /// jobs, the largest job, the total shard size and CPU time. Without
    /// --run-dir nothing is written.
    Plan {
        /// The job file (jobs/NAME.toml).
        job_file: PathBuf,
        /// The run directory to write the plan and the manifests into (a
        /// later `run --run-dir` there, or a cluster, runs them). Without
        /// it the plan is only printed.
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Replace a different plan already in the directory.
        #[arg(long, requires = "run_dir")]
        force: bool,
        /// The memory budget, e.g. 8G, as `run --memory` takes it: the plan
        /// names the largest job above it, as a local `run` with that budget
        /// would refuse it (default: the memory available here now). It also
        /// bounds what the plan itself may take (default: half of the memory
        /// this process may get here): a job file that would plan more is
        /// refused before anything is allocated.
        #[arg(long, value_parser = parse_memory)]
        memory: Option<u64>,
        #[command(flatten)]
        split: SplitArgs,
        /// Also estimate the wall time on N nodes (with --node-cores): a
        /// list schedule of the jobs' CPU estimates, ranks and threads.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100000))]
        nodes: Option<u32>,
        /// Cores a node for --nodes.
        #[arg(long, value_name = "C", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=100000))]
        node_cores: u32,
    },
    /// Run one job from its manifest and write its shard (used by `run`; also by hand or by a cluster).
    Worker {
        /// RUN_DIR/manifests/JOB_ID.toml
        manifest: PathBuf,
        /// The run directory (default: the folder above manifests/).
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Write the shard without fsync; the caller syncs the filesystem
        /// once when its run ends (the local executor does). A shard torn by
        /// a power cut fails its checksum and is recomputed.
        #[arg(long)]
        defer_sync: bool,
        /// Wait up to SECONDS for input shards not visible yet (a shared
        /// filesystem can show a shard written on another node late).
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        latency_wait: u64,
        /// Threads the job may use (default: SLURM_CPUS_PER_TASK in a Slurm
        /// task, else every core). The results never depend on it.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
        threads: Option<u32>,
        /// For a job split over ranks: run rank K of it (with --attempt).
        /// Without it, a Slurm task of a step of the job's ranks is rank
        /// SLURM_PROCID, and otherwise this process starts every rank here.
        #[arg(long, value_name = "K", requires = "attempt")]
        rank: Option<usize>,
        /// The token every rank of this attempt shares (letters, digits, -
        /// and _): messages of other attempts are never read.
        #[arg(long, value_name = "TOKEN", requires = "rank")]
        attempt: Option<String>,
    },
    /// Verify every shard (hashed, decoded and checked by the kind once each)
    /// and assemble tables/ and result.toml.
    Merge {
        /// The run directory.
        dir: PathBuf,
        /// Wait up to SECONDS for shards not visible yet (a shared
        /// filesystem can show a shard written on another node late).
        #[arg(long, value_name = "SECONDS", default_value_t = 0)]
        latency_wait: u64,
    },
    /// Show done / pending / damaged / old (shard format 1) for every job;
    /// for a Slurm run also running / waiting / failed, from the last
    /// submission.
    Status {
        /// The run directory.
        dir: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Re-hash every shard and table, re-run the merge and the kind's checks,
    /// and compare with a reference manifest. Exit 3 on any mismatch.
    ///
    /// With --full, also check every stored value against the game's rules
    /// from its successors' stored values (P iff no move reaches a
    /// P-position, Grundy value = mex of the options, win/loss depths and
    /// draws, reachability), by a checker that shares no code with
    /// the solvers; bad values are listed (kind, job, position, what is
    /// wrong; the first 30) with their total count, and exit 3.
    Verify {
        /// The run directory.
        dir: PathBuf,
        /// Reference digests, e.g. manifests/NAME.toml.
        #[arg(long)]
        against: Option<PathBuf>,
        /// Machine-readable output: {"ok", "shards", "tables", "root", "against", "problems"}.
        #[arg(long)]
        json: bool,
        /// Check every stored value from the rules (all cores; costs about
        /// as much as the run itself).
        #[arg(long)]
        full: bool,
        /// The most one step of the full check may hold in memory, e.g. 8G
        /// (default: half of the memory this process may get here). A split
        /// Chomp box whose bits do not fit is checked at a sample of its
        /// ranks instead (every rectangle, every position one bite from
        /// one, the edges of every part), as the coverage lines say.
        #[arg(long, value_parser = parse_memory, requires = "full")]
        memory: Option<u64>,
        /// Check the values of these jobs only (names as `status` lists
        /// them, comma-separated, e.g. layer-12-11,layer-13-10), reading
        /// the shards their moves reach as inputs: a check of part of a run
        /// too large to check whole in the time at hand. Games of the
        /// generic engine (quixo) only; the coverage lines count what was
        /// checked.
        #[arg(long, value_delimiter = ',', requires = "full")]
        jobs: Option<Vec<String>>,
        /// Check one run of 4,096 consecutive positions in K (every K-th
        /// run, from the first), the rest of the check as without it: a
        /// check of layers too large to check whole in the time at hand.
        /// Games of the generic engine only; the coverage lines count the
        /// positions checked.
        #[arg(long, value_name = "K", requires = "full", value_parser = clap::value_parser!(u64).range(1..))]
        sample: Option<u64>,
    },
    /// Write DIR/report.md: every published claim, our value, and whether it matches.
    Report {
        /// The run directory.
        dir: PathBuf,
        /// Machine-readable output: a summary object and every claim.
        #[arg(long)]
        json: bool,
    },
    /// Draw the merged tables of DIR as pictures in DIR/plots/ (SVG and PNG; not in the digests).
    ///
    /// Each job kind draws its own pictures (README's `plot` section names
    /// them); a kind without pictures says so.
    Plot {
        /// The run directory (merged).
        dir: PathBuf,
    },
    /// Look up results.
    Query(QueryArgs),
    /// Serve run directories over HTTP: a JSON API and a web page to play
    /// against the solved tables.
    ///
    /// GET /api/v1/GAME?key=value… (GAME: a served game; GET /api/v1/ lists
    /// them and what they answer): the JSON `query GAME … --json` prints;
    /// errors, on every route, as {"error": …, "status": …} with HTTP 400
    /// (bad request), 404 (outside the solved tables, or over --max-work),
    /// 405, 414/431 (URL or headers too long), 500 (damaged shard) or 503
    /// (over --time-limit, or stopping). GET / is the page. A request whose
    /// client disconnects stops computing; SIGINT and SIGTERM stop the
    /// server within about a second.
    Serve {
        /// Run directories, of any job kind with a probe.
        dirs: Vec<PathBuf>,
        /// Address and port to listen on (port 0: any free port).
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: std::net::SocketAddr,
        /// Size of the shard block cache, in MiB (decompressed 128 KiB blocks
        /// shared by all requests). The default keeps the server under about
        /// 300 MB.
        #[arg(long, default_value_t = crate::pipeline::probe::blocks::SERVE_CACHE_BYTES >> 20)]
        cache_mb: u64,
        /// Most values one request may compute in memory (three-row cells,
        /// octal Grundy values); a request needing more is refused at once
        /// (404, saying what to run instead).
        #[arg(long, default_value_t = crate::pipeline::probe::DEFAULT_MAX_WORK)]
        max_work: u64,
        /// Longest one request may take, in seconds (waiting for a free core
        /// included); then its computation is stopped and it is answered 503.
        #[arg(long, default_value_t = crate::serve::DEFAULT_TIME_LIMIT.as_secs_f64(), value_parser = parse_seconds)]
        time_limit: f64,
    },
}

/// Splitting jobs over ranks (`plan` and `run`).
#[derive(Args, Debug, Clone, Default)]
pub(super) struct SplitArgs {
    /// Split every job that can be split (an engine layer of at least
    /// --split-above positions) over N processes (ranks) that trade updates
    /// in rounds; the shards are the same bytes. Locally the ranks are
    /// processes of this machine; with --executor slurm, the tasks of one
    /// Slurm job (srun), on as many nodes as Slurm gives.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=4096))]
    pub(super) ranks: Option<u32>,
    /// The least size of a job --ranks splits (an engine layer's positions).
    #[arg(long, value_name = "SIZE", default_value_t = 1_000_000)]
    pub(super) split_above: u64,
    /// Split every job whose memory estimate is over SIZE (e.g. 16G) into as
    /// many ranks as bring each rank within it; `plan` prints the ranks.
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub(super) task_memory: Option<u64>,
}

impl SplitArgs {
    /// The pipeline's policy.
    pub(super) fn policy(&self) -> crate::pipeline::kind::SplitPolicy {
        crate::pipeline::kind::SplitPolicy {
            ranks: self.ranks,
            above: self.split_above,
            task_memory: self.task_memory,
        }
    }
}

#[derive(Args, Debug)]
pub(super) struct RunArgs {
    #[command(flatten)]
    pub(super) split: SplitArgs,
    /// Job files (jobs/NAME.toml).
    #[arg(required = true)]
    pub(super) job_files: Vec<PathBuf>,
    /// Run directory (only with a single job file; default runs/NAME/).
    #[arg(long)]
    pub(super) run_dir: Option<PathBuf>,
    /// Worker processes at once (default: available cores). With --executor
    /// slurm: at most this many tasks of each job array at once (`%K`; default
    /// 64).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub(super) workers: Option<u32>,
    /// Memory budget of a local run, e.g. 16G or 512M (default: the memory
    /// the kernel reports available when the run starts). Jobs start only
    /// while their estimated peak memory fits what the running jobs leave; a
    /// job above the whole budget is refused before anything runs.
    #[arg(long, value_parser = parse_memory)]
    pub(super) memory: Option<u64>,
    /// Recompute every job, and replace a different plan in the run directory.
    #[arg(long)]
    pub(super) force: bool,
    /// No progress bar.
    #[arg(long)]
    pub(super) no_progress: bool,
    /// Where the jobs run: child processes here, or Slurm job arrays (the run
    /// directory must then be on a filesystem every node sees).
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    pub(super) executor: Executor,
    /// Slurm partition for every job (default: the cluster's default partition).
    #[arg(long)]
    pub(super) partition: Option<String>,
    /// Slurm account for every job (sbatch --account).
    #[arg(long)]
    pub(super) account: Option<String>,
    /// Slurm quality of service for every job (sbatch --qos).
    #[arg(long)]
    pub(super) qos: Option<String>,
    /// Slurm: each task's --time is FACTOR x its job's CPU estimate / its
    /// threads, at least --time-floor; a task killed at its limit is
    /// resubmitted with 4 times the limit.
    #[arg(long, value_name = "FACTOR", default_value_t = slurm::DEFAULT_TIME_MARGIN)]
    pub(super) time_margin: f64,
    /// Slurm: the least --time of a task, minutes.
    #[arg(long, value_name = "MINUTES", default_value_t = slurm::DEFAULT_TIME_FLOOR.as_secs() / 60,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) time_floor: u64,
    /// Slurm: how many times one job is resubmitted after a lost node, a time
    /// limit, a preemption or (once, with twice the memory) running out of memory.
    #[arg(long, value_name = "N", default_value_t = slurm::DEFAULT_MAX_RETRIES)]
    pub(super) max_retries: u32,
    /// Extra sbatch argument, repeatable, e.g. --sbatch-arg=--time=2:00:00.
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub(super) sbatch_args: Vec<String>,
    /// Submit to Slurm and return at once; follow with `gametables status RUN_DIR`.
    #[arg(long)]
    pub(super) detach: bool,
    /// Print the sbatch scripts and commands; write and submit nothing.
    #[arg(long)]
    pub(super) dry_run: bool,
    /// Keep trying sbatch, squeue, scontrol and scancel for up to SECONDS
    /// when the controller fails transiently ("Socket timed out on send/recv
    /// operation", …), with backoff, saying so; 0: never retry. Real errors
    /// (a bad partition or option) are never retried.
    #[arg(long, value_name = "SECONDS", default_value_t = slurm::DEFAULT_SLURM_RETRY.as_secs())]
    pub(super) slurm_retry: u64,
    /// How long a Slurm task may be out of the queue before its shard must be
    /// visible here, and how long tasks and the merge wait for their input
    /// shards (shared filesystems show files written on other nodes late).
    #[arg(long, value_name = "SECONDS", default_value_t = slurm::DEFAULT_LATENCY_WAIT.as_secs())]
    pub(super) latency_wait: u64,
}

/// Executors of `run`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Executor {
    /// Worker child processes on this machine.
    Local,
    /// sbatch job arrays on a Slurm cluster.
    Slurm,
}

/// `query`: the game's subcommand and what every query shares.
#[derive(Args, Debug)]
pub(super) struct QueryArgs {
    /// The most this query may allocate, e.g. 8G (default: half of the
    /// memory this process may get here: available memory, `ulimit -v`,
    /// cgroup). A query that needs more is refused before it allocates.
    #[arg(long, global = true, value_parser = parse_memory)]
    pub(super) memory: Option<u64>,
    /// Most values this query may compute in memory (three-row cells, octal
    /// Grundy values); one needing more is refused at once, saying what to
    /// run instead.
    #[arg(long, global = true, default_value_t = crate::pipeline::probe::DEFAULT_MAX_WORK)]
    pub(super) max_work: u64,
    /// Longest this query may compute in memory, in seconds: a query whose
    /// time model estimates more is refused at once, saying what to run
    /// instead (octal Grundy values; other in-memory queries are bounded by
    /// --max-work and --memory).
    #[arg(long, global = true, default_value_t = DEFAULT_QUERY_TIME_LIMIT, value_parser = parse_seconds)]
    pub(super) time_limit: f64,
    #[command(subcommand)]
    pub(super) game: GameQuery,
}

/// The game of `query GAME`: one subcommand per query of every registered
/// game ([`crate::games::GAMES`]), parsed by the game itself.
#[derive(Debug)]
pub(super) struct GameQuery {
    pub(super) name: String,
    pub(super) matches: clap::ArgMatches,
}

pub(super) fn game_queries() -> impl Iterator<Item = &'static QueryCommand> {
    crate::games::GAMES.iter().flat_map(|g| g.queries.iter())
}

impl clap::FromArgMatches for GameQuery {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let (name, sub) = m
            .subcommand()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingSubcommand))?;
        Ok(GameQuery {
            name: name.to_string(),
            matches: sub.clone(),
        })
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Subcommand for GameQuery {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        game_queries().fold(cmd, |c, q| c.subcommand((q.command)()))
    }
    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }
    fn has_subcommand(name: &str) -> bool {
        game_queries().any(|q| (q.command)().get_name() == name)
    }
}
