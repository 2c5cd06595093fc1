//! The `gametables` command line: argument parsing and printing only; the
//! work is in [`crate::pipeline`] and [`crate::games`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use clap::{Args, Parser, Subcommand};

use crate::games::chomp::{ChompBox, Staircase};
use crate::pipeline::executor::{LocalOptions, run_local};
use crate::pipeline::fullcheck;
use crate::pipeline::jobfile::read_job_file;
use crate::pipeline::kinds::chomp_boxes::winning_moves_from_run;
use crate::pipeline::merge::{self, ResultFile, RunView};
use crate::pipeline::plan::{JobState, PlanFile, write_plan};
use crate::pipeline::rundir::RunDir;
use crate::pipeline::shard::Durability;
use crate::pipeline::slurm::{self, SlurmOptions, SlurmOutcome};
use crate::pipeline::worker::run_worker;
use crate::pipeline::{ClaimStatus, Error};

/// Exit status for verification failures (digest mismatch, damaged shard,
/// failed claim).
pub const EXIT_MISMATCH: u8 = 3;

#[derive(Parser, Debug)]
#[command(
    name = "gametables",
    version,
    about = "Solve combinatorial games exhaustively: plan jobs, run them on all cores, \
             write checksummed shards, merge and verify the tables, check published results.",
    long_about = None,
    after_help = "Typical use:\n  gametables run jobs/chomp-boxes.toml      plan, run, merge, verify, report into runs/chomp-boxes/\n  gametables status runs/chomp-boxes        which jobs are done, pending or damaged\n  gametables verify runs/chomp-boxes --against manifests/chomp-boxes.toml\n  gametables query chomp 8x10               winning moves of a rectangle\n\nLogging: RUST_LOG (e.g. RUST_LOG=debug); each job's log is RUN_DIR/logs/JOB_ID.log.\nExit status: 0 ok, 1 error, 2 usage, 3 verification mismatch."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    /// Write plan.toml and one manifest per job into a run directory, without running.
    Plan {
        /// The job file (jobs/NAME.toml).
        job_file: PathBuf,
        /// The run directory.
        #[arg(long)]
        run_dir: PathBuf,
        /// Replace a different plan already in the directory.
        #[arg(long)]
        force: bool,
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
    },
    /// Verify every shard (hashed, decoded and checked by the kind once each)
    /// and assemble tables/ and result.toml.
    Merge {
        /// The run directory.
        dir: PathBuf,
    },
    /// Show done / pending / damaged for every job.
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
    /// P-position, Grundy value = mex of the options, Dodgem's win/loss
    /// depths and draws, reachability), by a checker that shares no code with
    /// the solvers; bad values are listed (kind, job, position, what is
    /// wrong; the first 30) with their total count, and exit 3.
    Verify {
        /// The run directory.
        dir: PathBuf,
        /// Reference digests, e.g. manifests/chomp-boxes.toml.
        #[arg(long)]
        against: Option<PathBuf>,
        /// Check every stored value from the rules (all cores; costs about
        /// as much as the run itself).
        #[arg(long)]
        full: bool,
    },
    /// Write DIR/report.md: every published claim, our value, and whether it matches.
    Report {
        /// The run directory.
        dir: PathBuf,
    },
    /// Look up results.
    #[command(subcommand)]
    Query(Query),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Job files (jobs/NAME.toml).
    #[arg(required = true)]
    job_files: Vec<PathBuf>,
    /// Run directory (only with a single job file; default runs/NAME/).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Worker processes at once (default: available cores). With --executor
    /// slurm: at most this many tasks of each job array at once (`%K`; default
    /// no limit).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    workers: Option<u32>,
    /// Recompute every job, and replace a different plan in the run directory.
    #[arg(long)]
    force: bool,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// Where the jobs run: child processes here, or Slurm job arrays (the run
    /// directory must then be on a filesystem every node sees).
    #[arg(long, value_enum, default_value_t = Executor::Local)]
    executor: Executor,
    /// Slurm partition for every job (default: the cluster's default partition).
    #[arg(long)]
    partition: Option<String>,
    /// Extra sbatch argument, repeatable, e.g. --sbatch-arg=--time=2:00:00.
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
    /// Submit to Slurm and return at once; follow with `gametables status RUN_DIR`.
    #[arg(long)]
    detach: bool,
    /// Print the sbatch scripts and commands; write and submit nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Executors of `run`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Executor {
    /// Worker child processes on this machine.
    Local,
    /// sbatch job arrays on a Slurm cluster.
    Slurm,
}

#[derive(Subcommand, Debug)]
enum Query {
    /// Winning moves (row, col) of a Chomp rectangle or staircase.
    ///
    /// Solves in memory when the enclosing box is small (≤ 50 million
    /// staircases); with --run-dir, reads a chomp-boxes run's shards.
    Chomp {
        /// A rectangle ROWSxCOLS, e.g. 8x10.
        rectangle: Option<String>,
        /// A staircase: row lengths from the poison row up, e.g. 10,10,9,4.
        #[arg(long, conflicts_with = "rectangle")]
        position: Option<String>,
        /// A chomp-boxes run directory to read instead of solving.
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Print the Sprague–Grundy value instead (--run-dir: a chomp-grundy run).
        #[arg(long)]
        grundy: bool,
    },
    /// Value, depth and every legal move of a Dodgem position.
    ///
    /// Reads the layer shards of a dodgem run (default runs/dodgem-N); without
    /// a run directory, 3×3 and 4×4 are solved in memory. Values are for the
    /// side to move; a move's value is for the player making it.
    #[command(
        after_help = "Examples:\n  gametables query dodgem --n 4 --position \"blue:a2,a3,a4 red:b1,c1,d1 to-move:blue\"\n  gametables query dodgem --n 4 --moves \"a2-a1\"\n  gametables query dodgem --n 4 --desjardins --moves \"d1-d2 a4-b4\""
    )]
    Dodgem {
        /// Board size (2 to 5).
        #[arg(long)]
        n: usize,
        /// A position: `blue:a2,a3,a4 red:b1,c1,d1 to-move:blue` (default: the start).
        #[arg(long)]
        position: Option<String>,
        /// Moves played from the position (or the start), e.g. "a2-a1 b1-b2 c4-off".
        #[arg(long)]
        moves: Option<String>,
        /// The moves are in desJardins' notation (reflected in the diagonal through a1).
        #[arg(long)]
        desjardins: bool,
        /// A dodgem run directory (default runs/dodgem-N if it exists).
        #[arg(long)]
        run_dir: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Nim (Bouton): P-position or every winning move, normal or misère play.
    Nim {
        /// Heap sizes, e.g. 3,4,5.
        heaps: String,
        /// Misère play (taking the last token loses).
        #[arg(long)]
        misere: bool,
    },
    /// Subtraction game Sub(S): Grundy values, proved period, winning moves.
    Subtraction {
        /// The subtraction set, e.g. 1,3,4.
        #[arg(long)]
        set: String,
        /// Print G(0..=N).
        #[arg(long, default_value_t = 20)]
        n: usize,
        /// Heaps of a sum to solve, e.g. 10,15,20.
        #[arg(long)]
        heaps: Option<String>,
    },
    /// Octal game by code (0.77 Kayles, 0.07 Dawson's Kayles, 4.7, …):
    /// Grundy values and the period proved by the Guy–Smith theorem.
    Octal {
        /// The octal code, e.g. 0.77.
        code: String,
        /// Print G(0..=N).
        #[arg(long, default_value_t = 80)]
        n: usize,
    },
    /// Three-row Chomp: f(q, r), the P-position (f, q, r) if any, and row r's class.
    ///
    /// f(q, r) is computed in memory (rows 0..=r, columns 0..=q). The class
    /// comes from a three-row run's tables/three-row-rows.csv with --run-dir,
    /// else from an in-memory run to --q-max.
    ThreeRow(ThreeRowQuery),
}

#[derive(Args, Debug)]
struct ThreeRowQuery {
    /// Second row length q.
    #[arg(long)]
    q: u32,
    /// Third row length r (r ≤ q).
    #[arg(long)]
    r: u32,
    /// A three-row run directory whose rows table gives the class.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Last column for the in-memory classification (default: max(q, 16000)).
    #[arg(long)]
    q_max: Option<u32>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Entry point of the binary: parses arguments, runs, maps errors to exit
/// codes (1 error, 2 usage, 3 verification mismatch).
pub fn main() -> ExitCode {
    // Die quietly on a closed pipe (`gametables status DIR | head`), like other
    // command-line tools, instead of panicking inside println!.
    // SAFETY: resetting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let is_worker = matches!(cli.command, Command::Worker { .. });
    init_logging(if is_worker { "info" } else { "warn" });
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            let mismatch = e
                .downcast_ref::<Error>()
                .is_some_and(|e| matches!(e, Error::Verify { .. }));
            ExitCode::from(if mismatch { EXIT_MISMATCH } else { 1 })
        }
    }
}

/// `verify --full`: the cheap verify's problems (if any), then the full
/// check of every stored value; exit 3 (through [`Error::Verify`]) if
/// either finds something.
fn cmd_verify_full(dir: &Path, against: Option<&Path>) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir)?;
    let started = std::time::Instant::now();
    let (mut problems, ok) = match merge::verify(&view, against) {
        Ok(r) => (Vec::new(), Some(r)),
        Err(Error::Verify { problems }) => (problems, None),
        Err(e @ (Error::RunDir { .. } | Error::Manifest { .. })) => return Err(e.into()),
        Err(e) => (vec![e.to_string()], None),
    };
    let opts = fullcheck::Options {
        progress: std::io::stderr().is_terminal(),
        ..fullcheck::Options::default()
    };
    let report = fullcheck::full_check(&view, opts)?;
    if let Some(r) = &ok {
        println!(
            "ok: {} shard(s) and {} table(s) verify; root {}{}",
            r.shards.len(),
            r.tables.len(),
            r.root,
            against.map_or(String::new(), |a| format!("; matches {}", a.display()))
        );
    }
    println!(
        "full check ({:.1} s, {} thread(s)): {} bad value(s)",
        started.elapsed().as_secs_f64(),
        opts.threads,
        report.total
    );
    for c in &report.coverage {
        println!("  {c}");
    }
    problems.extend(report.problem_lines());
    if problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Error::Verify { problems }.into())
    }
}

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Plan {
            job_file,
            run_dir,
            force,
        } => {
            let jf = read_job_file(&job_file)?;
            let plan = PlanFile::from_job_file(&jf)?;
            let dir = RunDir::new(&run_dir);
            let _lock = dir.lock()?;
            write_plan(&dir, &plan, force)?;
            println!(
                "planned {} job(s) of kind {} in {}",
                plan.jobs.len(),
                plan.kind,
                run_dir.display()
            );
            for j in &plan.jobs {
                println!("  {}  {}", &j.id[..12], j.name);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Worker {
            manifest,
            run_dir,
            defer_sync,
        } => {
            let durability = if defer_sync {
                Durability::Deferred
            } else {
                Durability::Now
            };
            run_worker(&manifest, run_dir.as_deref(), durability)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { dir } => {
            let view = RunView::open(&dir)?;
            let _lock = view.dir.lock()?;
            let r = merge::merge(&view)?;
            println!(
                "merged {} shard(s), {} table(s); root {}",
                r.shards.len(),
                r.tables.len(),
                r.root
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Status { dir, json } => cmd_status(&dir, json),
        Command::Verify {
            dir,
            against,
            full: true,
        } => cmd_verify_full(&dir, against.as_deref()),
        Command::Verify {
            dir,
            against,
            full: false,
        } => {
            let view = RunView::open(&dir)?;
            let r = merge::verify(&view, against.as_deref())?;
            println!(
                "ok: {} shard(s) and {} table(s) verify; root {}{}",
                r.shards.len(),
                r.tables.len(),
                r.root,
                against.map_or(String::new(), |a| format!("; matches {}", a.display()))
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { dir } => {
            let view = RunView::open(&dir)?;
            let claims = merge::report(&view)?;
            print_claims_summary(&view.dir, &claims);
            Ok(
                if claims.iter().any(|c| c.status == ClaimStatus::Mismatch) {
                    ExitCode::from(EXIT_MISMATCH)
                } else {
                    ExitCode::SUCCESS
                },
            )
        }
        Command::Query(Query::Chomp {
            rectangle,
            position,
            run_dir,
            json,
            grundy,
        }) if grundy => cmd_query_chomp_grundy(rectangle, position, run_dir, json),
        Command::Query(Query::Chomp {
            rectangle,
            position,
            run_dir,
            json,
            ..
        }) => cmd_query_chomp(rectangle, position, run_dir, json),
        Command::Query(Query::ThreeRow(a)) => cmd_query_three_row(&a),
        Command::Query(Query::Dodgem {
            n,
            position,
            moves,
            desjardins,
            run_dir,
            json,
        }) => cmd_query_dodgem(n, position, moves, desjardins, run_dir, json),
        Command::Query(Query::Nim { heaps, misere }) => cmd_query_nim(&heaps, misere),
        Command::Query(Query::Subtraction { set, n, heaps }) => {
            cmd_query_subtraction(&set, n, heaps.as_deref())
        }
        Command::Query(Query::Octal { code, n }) => cmd_query_octal(&code, n),
    }
}

fn print_claims_summary(dir: &RunDir, claims: &[crate::pipeline::Claim]) {
    let n = |s| claims.iter().filter(|c| c.status == s).count();
    println!(
        "report {}: {} claims, {} match, {} mismatch, {} known discrepancies, {} not covered",
        dir.report_path().display(),
        claims.len(),
        n(ClaimStatus::Match),
        n(ClaimStatus::Mismatch),
        n(ClaimStatus::KnownDiscrepancy),
        n(ClaimStatus::NotCovered)
    );
    for c in claims.iter().filter(|c| c.status == ClaimStatus::Mismatch) {
        println!(
            "  MISMATCH {}: expected {}, ours {}",
            c.claim, c.expected, c.ours
        );
    }
}

/// `manifests/NAME.toml` beside the job file's folder (`jobs/../manifests/`).
fn reference_for(job_file: &Path, name: &str) -> Option<PathBuf> {
    let parent = job_file.parent()?;
    let base = if parent.as_os_str().is_empty() {
        Path::new("..")
    } else {
        parent
    };
    let p = base
        .join("..")
        .join("manifests")
        .join(format!("{name}.toml"));
    p.is_file().then_some(p)
}

fn cmd_run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.run_dir.is_some() && args.job_files.len() > 1 {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--run-dir needs a single job file (each job file gets its own run directory)",
            )
            .exit();
    }
    let workers = args.workers.map_or_else(
        || std::thread::available_parallelism().map_or(1, usize::from),
        |w| w as usize,
    );
    let exe = std::env::current_exe().context("cannot find the gametables executable")?;
    let slurm_opts = (args.executor == Executor::Slurm).then(|| SlurmOptions {
        exe: exe.clone(),
        partition: args.partition.clone(),
        sbatch_args: args.sbatch_args.clone(),
        array_limit: args.workers.map(|w| w as usize),
        detach: args.detach,
        force: args.force,
        progress: !args.no_progress,
    });
    if slurm_opts.is_none()
        && (args.partition.is_some() || !args.sbatch_args.is_empty() || args.detach || args.dry_run)
    {
        use clap::CommandFactory;
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--partition, --sbatch-arg, --detach and --dry-run need --executor slurm",
            )
            .exit();
    }
    // Read and plan every job file first, so a typo in the last one is
    // reported before the first one runs.
    let mut planned = Vec::new();
    for job_file in &args.job_files {
        let jf = read_job_file(job_file)?;
        let plan = PlanFile::from_job_file(&jf)?;
        let run_dir = args
            .run_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs").join(&jf.name));
        if let Some((other, _, _)) = planned
            .iter()
            .find(|(_, _, d): &&(PathBuf, PlanFile, PathBuf)| *d == run_dir)
        {
            bail!(
                "{} and {} would share the run directory {}; run them separately with --run-dir",
                other.display(),
                job_file.display(),
                run_dir.display()
            );
        }
        planned.push((job_file.clone(), plan, run_dir));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let mut code = ExitCode::SUCCESS;
    for (job_file, plan, run_dir) in &planned {
        let name = &plan.job_file;
        // A reference that exists must be intact; it is compared only when it
        // was made from the same plan (same job ids).
        let reference = match reference_for(job_file, name) {
            None => None,
            Some(r) => {
                let rf = ResultFile::load(&r)
                    .with_context(|| format!("reference manifest {} is unusable", r.display()))?;
                let same_plan = rf.shards.len() == plan.jobs.len()
                    && rf.shards.iter().zip(&plan.jobs).all(|(s, j)| s.id == j.id);
                if same_plan {
                    Some(r)
                } else {
                    eprintln!(
                        "note: {} was made from other parameters; not compared",
                        r.display()
                    );
                    None
                }
            }
        };
        let dir = RunDir::new(run_dir);
        if let (Some(o), true) = (&slurm_opts, args.dry_run) {
            print!("{}", slurm::dry_run(&dir, plan, o)?);
            continue;
        }
        if slurm_opts.is_some() {
            slurm::check_cluster()?;
        }
        let lock = dir.lock()?;
        if slurm_opts.is_some() {
            slurm::check_no_active_submission(&dir)?;
        }
        write_plan(&dir, plan, args.force)?;
        eprintln!(
            "{name}: {} job(s) of kind {} in {} {}",
            plan.jobs.len(),
            plan.kind,
            run_dir.display(),
            if slurm_opts.is_some() {
                "on Slurm".to_string()
            } else {
                format!("with {workers} worker(s)")
            }
        );
        let t0 = std::time::Instant::now();
        let (summary, merged) = match &slurm_opts {
            None => {
                let local = LocalOptions {
                    workers,
                    force: args.force,
                    exe: exe.clone(),
                    progress: !args.no_progress,
                };
                (rt.block_on(run_local(&dir, plan, &local))?, false)
            }
            Some(o) => match slurm::run_slurm(&dir, plan, o, lock)? {
                SlurmOutcome::Finished { summary, merged } => (summary, merged),
                SlurmOutcome::Detached {
                    submission,
                    slurm_ids,
                } => {
                    let dir = run_dir.display();
                    println!(
                        "{name}: submitted as Slurm jobs {} (submission {submission}); follow with \
                         `gametables status {dir}`, then check with \
                         `gametables verify {dir} --against manifests/{name}.toml`",
                        slurm_ids.join(", ")
                    );
                    continue;
                }
            },
        };
        let view = RunView::open(run_dir)?;
        // Merged here: the merge decoded and checked every shard, so only the
        // kind's checks and the reference remain. Merged by a Slurm job: the
        // full verify.
        let result = if merged {
            merge::verify(&view, reference.as_deref())?
        } else {
            let m = merge::merge(&view)?;
            merge::check_merged(&view, &m, reference.as_deref())?
        };
        let claims = merge::report(&view)?;
        println!(
            "{name}: {} computed, {} skipped, {} recomputed (damaged) in {:.2} s; root {}",
            summary.computed.len(),
            summary.skipped.len(),
            summary.damaged.len(),
            t0.elapsed().as_secs_f64(),
            result.root
        );
        match &reference {
            Some(r) => println!("digests match the reference {}", r.display()),
            None => println!("no reference manifest for this plan (manifests/{name}.toml)"),
        }
        print_claims_summary(&dir, &claims);
        if claims.iter().any(|c| c.status == ClaimStatus::Mismatch) {
            code = ExitCode::from(EXIT_MISMATCH);
        }
    }
    Ok(code)
}

fn cmd_status(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir)?;
    let rows = merge::status(&view);
    if json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, id, st)| {
                let (state, why) = match st {
                    JobState::Done => ("done", None),
                    JobState::Pending => ("pending", None),
                    JobState::Damaged(w) => ("damaged", Some(w.clone())),
                };
                serde_json::json!({"job": name, "id": id, "state": state, "reason": why})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let count = |f: fn(&JobState) -> bool| rows.iter().filter(|r| f(&r.2)).count();
        println!(
            "{} ({}): {} job(s): {} done, {} pending, {} damaged{}",
            dir.display(),
            view.plan.kind,
            rows.len(),
            count(|s| *s == JobState::Done),
            count(|s| *s == JobState::Pending),
            count(|s| matches!(s, JobState::Damaged(_))),
            if view.dir.result_path().exists() {
                "; merged"
            } else {
                ""
            }
        );
        for line in slurm::status_lines(&view.dir, &view.plan) {
            println!("{line}");
        }
        for (name, id, st) in &rows {
            let s = match st {
                JobState::Done => "done".to_string(),
                JobState::Pending => "pending".to_string(),
                JobState::Damaged(w) => format!("DAMAGED: {w}"),
            };
            println!("  {}  {:<24} {}", &id[..12], name, s);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Most rows a queried staircase may have.
const MAX_QUERY_ROWS: u32 = 10_000;

/// Largest box solved in memory by `query chomp`.
const QUERY_IN_MEMORY_LIMIT: u64 = 50_000_000;

fn parse_rectangle(s: &str) -> anyhow::Result<Staircase> {
    let (r, c) = s
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| anyhow!("rectangle `{s}`: write ROWSxCOLS, e.g. 8x10"))?;
    let r: u32 = r
        .trim()
        .parse()
        .with_context(|| format!("rectangle `{s}`: rows"))?;
    let c: u32 = c
        .trim()
        .parse()
        .with_context(|| format!("rectangle `{s}`: cols"))?;
    if r == 0 || c == 0 {
        bail!("rectangle `{s}`: rows and cols must be at least 1");
    }
    if r > MAX_QUERY_ROWS {
        bail!("rectangle `{s}`: at most {MAX_QUERY_ROWS} rows");
    }
    Ok(Staircase::rectangle(r, c)?)
}

fn parse_position(s: &str) -> anyhow::Result<Staircase> {
    let rows: Vec<u32> = s
        .split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("position `{s}`: write row lengths like 10,10,9,4"))?;
    Staircase::new(&rows).with_context(|| format!("position `{s}`"))
}

/// The staircase a `query chomp` names: a rectangle or `--position`.
fn chomp_query_position(
    rectangle: Option<&str>,
    position: Option<&str>,
) -> anyhow::Result<Staircase> {
    match (rectangle, position) {
        (Some(r), _) => parse_rectangle(r),
        (None, Some(p)) => parse_position(p),
        (None, None) => bail!("give a rectangle (e.g. 8x10) or --position 10,10,9,4"),
    }
}

/// Opens a run directory that must hold a run of job kind `kind`.
fn open_run_of_kind(dir: &Path, kind: &str) -> anyhow::Result<RunView> {
    let view = RunView::open(dir)?;
    if view.plan.kind != kind {
        bail!(
            "{} is a `{}` run, not {kind}",
            dir.display(),
            view.plan.kind
        );
    }
    Ok(view)
}

fn cmd_query_chomp(
    rectangle: Option<String>,
    position: Option<String>,
    run_dir: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let s = chomp_query_position(rectangle.as_deref(), position.as_deref())?;
    let (source, moves) = match &run_dir {
        Some(d) => {
            let view = open_run_of_kind(d, "chomp-boxes")?;
            let (name, moves) = winning_moves_from_run(&view, &s)?.ok_or_else(|| {
                anyhow!(
                    "no box in {} covers {} (nor its transpose)",
                    d.display(),
                    rectangle
                        .clone()
                        .unwrap_or_else(|| format!("the position {s}"))
                )
            })?;
            (format!("{} ({})", name, d.display()), moves)
        }
        None => {
            let rows = s.rows().len();
            let cols = s.rows()[0] as usize;
            let b = ChompBox::new(rows, cols)?;
            if b.len() > QUERY_IN_MEMORY_LIMIT {
                bail!(
                    "the {rows}x{cols} box has {} staircases, too many to solve here; \
                     run a chomp-boxes job covering it and pass --run-dir",
                    b.len()
                );
            }
            let p = b.solve();
            (
                format!("solved in memory ({rows}x{cols} box)"),
                b.winning_moves(&p, &s)?,
            )
        }
    };
    if json {
        let v = serde_json::json!({
            "position": s.rows(),
            "p_position": moves.is_empty(),
            "winning_moves": moves.iter().map(|m| [m.row, m.col]).collect::<Vec<_>>(),
            "source": source,
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        let label = rectangle.unwrap_or_else(|| s.to_string());
        if moves.is_empty() {
            println!("{label}: P-position (the player to move loses; no winning move)");
        } else {
            let list: Vec<String> = moves.iter().map(ToString::to_string).collect();
            println!(
                "{label}: N-position, {} winning move{}: {}",
                moves.len(),
                if moves.len() == 1 { "" } else { "s" },
                list.join(", ")
            );
        }
        println!("  ({source})");
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_query_three_row(a: &ThreeRowQuery) -> anyhow::Result<ExitCode> {
    use crate::games::three_row::{
        RowState, TileGeom, TileInput, TileRecord, classify, solve_tile_blocked,
    };
    use crate::pipeline::kinds::three_row::row_line;
    if a.r > a.q {
        bail!(
            "--r {} > --q {}: three-row positions have p ≥ q ≥ r",
            a.r,
            a.q
        );
    }
    let solve = |q_last: u32, rows: u32| {
        let g = TileGeom {
            q0: 0,
            q1: q_last + 1,
            r0: 0,
            r1: rows,
            q_max: q_last,
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        solve_tile_blocked(
            &g,
            TileInput::default(),
            &TileRecord::default(),
            256,
            256,
            threads,
        )
        .map_err(|e| anyhow!(e))
    };
    let out = solve(a.q, a.r + 1)?;
    let state = &out.rows[a.r as usize];
    let f = match state {
        RowState::Dead { c } => *c,
        RowState::Live(l) => a.q + l.d_at(a.q),
    };
    let (class_line, source) = match &a.run_dir {
        Some(d) => {
            let p = d.join("tables").join("three-row-rows.csv");
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            let line = text
                .lines()
                .find(|l| l.split(',').next() == Some(&a.r.to_string()))
                .ok_or_else(|| anyhow!("row {} is not in {}", a.r, p.display()))?;
            (line.to_string(), p.display().to_string())
        }
        None => {
            let q_max = a.q_max.unwrap_or(16_000).max(a.q);
            let o = solve(q_max, a.r + 1)?;
            let c = classify(a.r, &o.rows[a.r as usize], q_max);
            (
                row_line(a.r, &c),
                format!("computed in memory to q_max = {q_max}"),
            )
        }
    };
    let p_pos = (f >= a.q).then_some((f, a.q, a.r));
    if a.json {
        let fields: Vec<&str> = class_line.split(',').collect();
        let v = serde_json::json!({
            "q": a.q, "r": a.r, "f": f,
            "p_position": p_pos.map(|(p, q, r)| [p, q, r]),
            "class": fields.get(1), "c": fields.get(2), "q0": fields.get(3),
            "period": fields.get(4), "start": fields.get(5), "pattern": fields.get(6),
            "class_source": source,
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!("f({}, {}) = {f}", a.q, a.r);
        match p_pos {
            Some((p, q, r)) => println!("  P-position: ({p}, {q}, {r})"),
            None => println!(
                "  no P-position (p, {}, {}): row {} died at column {f}, where ({f}, {f}, {}) is a P-position",
                a.q, a.r, a.r, a.r
            ),
        }
        println!(
            "  row {}: r,class,c,q0,period,start,pattern = {class_line}",
            a.r
        );
        println!("  ({source})");
    }
    Ok(ExitCode::SUCCESS)
}

/// `query chomp … --grundy`: the Sprague–Grundy value of a position, solved
/// in memory (small boxes) or read from a chomp-grundy run.
fn cmd_query_chomp_grundy(
    rectangle: Option<String>,
    position: Option<String>,
    run_dir: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use crate::games::chomp::grundy::grundy_values;
    use crate::pipeline::kinds::chomp_grundy::grundy_from_run;
    let s = chomp_query_position(rectangle.as_deref(), position.as_deref())?;
    let (source, value) = match &run_dir {
        Some(d) => {
            let view = open_run_of_kind(d, "chomp-grundy")?;
            let (name, v) = grundy_from_run(&view, &s)?
                .ok_or_else(|| anyhow!("no box in {} covers the position {s}", d.display()))?;
            (format!("{} ({})", name, d.display()), v)
        }
        None => {
            let (rows, cols) = (s.rows().len(), s.rows()[0] as usize);
            let b = ChompBox::new(rows, cols)?;
            if b.len() > QUERY_IN_MEMORY_LIMIT / 10 {
                bail!(
                    "the {rows}x{cols} box has {} staircases, too many to solve here; \
                     run a chomp-grundy job covering it and pass --run-dir",
                    b.len()
                );
            }
            let g = grundy_values(&b);
            (
                format!("solved in memory ({rows}x{cols} box)"),
                g[b.rank_of(&s)? as usize],
            )
        }
    };
    if json {
        let v = serde_json::json!({"position": s.rows(), "grundy": value, "source": source});
        println!("{}", serde_json::to_string(&v)?);
    } else {
        let label = rectangle.unwrap_or_else(|| s.to_string());
        let kind = if value == 0 {
            "P-position"
        } else {
            "N-position"
        };
        println!("{label}: Grundy value {value} ({kind})\n  ({source})");
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> anyhow::Result<Vec<T>> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim().parse::<T>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow!("{what} `{s}`: write non-negative integers like 3,4,5"))
}

fn cmd_query_nim(heaps: &str, misere: bool) -> anyhow::Result<ExitCode> {
    use crate::games::impartial::nim::{self, Play};
    let h: Vec<u64> = parse_list(heaps, "heaps")?;
    let play = if misere { Play::Misere } else { Play::Normal };
    let label = if misere { "misère" } else { "normal" };
    let moves = nim::winning_moves(&h, play);
    println!("heaps {heaps} ({label} play), nim-sum {}", nim::nim_sum(&h));
    if moves.is_empty() {
        println!("P-position (the player to move loses; no winning move)");
    } else {
        println!("N-position, {} winning move(s):", moves.len());
        for m in moves {
            println!("  {m}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Values computed by `query subtraction` / `query octal` to find a period.
const QUERY_PERIOD_SEARCH: usize = 1 << 14;

fn values_text(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

fn cmd_query_subtraction(set: &str, n: usize, heaps: Option<&str>) -> anyhow::Result<ExitCode> {
    use crate::games::impartial::subtraction::Subtraction;
    let s: Vec<u32> = parse_list(set, "set")?;
    let game = Subtraction::new(&s).map_err(|e| anyhow!("set `{set}`: {e}"))?;
    let values = game.grundy_sequence(n.max(QUERY_PERIOD_SEARCH));
    println!(
        "Sub({{{set}}}): G(0..={n}) = {}",
        values_text(&values[..=n])
    );
    match game.period(&values) {
        Some(p) => println!(
            "periodic with period {} from n = {} (proved: the last max S values repeat)",
            p.period, p.preperiod
        ),
        None => println!("no period proved within n ≤ {}", values.len() - 1),
    }
    if let Some(hs) = heaps {
        let h: Vec<u64> = parse_list(hs, "heaps")?;
        let moves = game.winning_moves(&h);
        if moves.is_empty() {
            println!("heaps {hs}: P-position (no winning move)");
        } else {
            for (i, take) in moves {
                println!(
                    "heaps {hs}: take {take} from heap {} ({} → {})",
                    i + 1,
                    h[i],
                    h[i] - u64::from(take)
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_query_octal(code: &str, n: usize) -> anyhow::Result<ExitCode> {
    use crate::games::impartial::octal::{OctalCode, find_period};
    let c = OctalCode::parse(code)?;
    if n > 1 << 22 {
        bail!("--n {n}: at most 4194304 here; run an `octal` job for more");
    }
    let values = c.grundy_sequence(n.max(QUERY_PERIOD_SEARCH));
    println!(
        "octal game {c}: G(0..={n}) = {}",
        values_text(&values[..=n])
    );
    match find_period(&values, c.max_removal()) {
        Some(p) => println!(
            "periodic with period {} from n = {} (last exceptional value at n = {}); \
             proved by the Guy–Smith theorem: values agree for {} ≤ n ≤ {} (t = {})",
            p.period,
            p.preperiod,
            p.preperiod as i64 - 1,
            p.preperiod.max(1),
            p.checked_through,
            c.max_removal()
        ),
        None => println!("no period proved within n ≤ {}", values.len() - 1),
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_query_dodgem(
    n: usize,
    position: Option<String>,
    moves: Option<String>,
    desjardins: bool,
    run_dir: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    use crate::games::dodgem::{Board, Tables, Value, from_desjardins};
    use crate::pipeline::kinds::dodgem::{layers_for, move_rank, tables_from_run, value_of_move};
    let board = Board::new(n)?;
    let mut p = match &position {
        Some(text) => board.parse_position(text)?,
        None => board.start(),
    };
    for w in moves.as_deref().unwrap_or("").split_whitespace() {
        if w.ends_with('.') || w == "..." || w == "…" {
            continue; // move numbers
        }
        let ours = if desjardins {
            from_desjardins(&board, w)?
        } else {
            w.to_string()
        };
        let m = board
            .parse_move(&p, &ours)
            .with_context(|| format!("after {}", board.position_text(&p)))?;
        p = board.apply(&p, m);
    }
    let default_dir = PathBuf::from("runs").join(format!("dodgem-{n}"));
    let dir = run_dir.or_else(|| {
        default_dir
            .join("plan.toml")
            .is_file()
            .then_some(default_dir)
    });
    let (tables, source) = match &dir {
        Some(d) => {
            let view = RunView::open(d)?;
            if view.plan.kind != "dodgem" {
                bail!("{} is a `{}` run, not dodgem", d.display(), view.plan.kind);
            }
            let run_n = view.plan.params.get("n").and_then(toml::Value::as_integer);
            if run_n != Some(n as i64) {
                bail!("{} solves n = {}, not {n}", d.display(), run_n.unwrap_or(0));
            }
            (
                tables_from_run(&view, board, &layers_for(&p))?,
                format!("run {}", d.display()),
            )
        }
        None if n <= 4 => (Tables::solve(board, 1), "solved in memory".to_string()),
        None => bail!(
            "no run directory for {n}×{n}: run `gametables run jobs/dodgem-{n}.toml` first, or pass --run-dir"
        ),
    };
    let value = tables.value(&p).expect("layers loaded");
    let mut list: Vec<(String, String, Value)> = board
        .moves(&p)
        .into_iter()
        .map(|m| {
            let name = board.move_name(m);
            let dj = from_desjardins(&board, &name).unwrap_or_default();
            (
                name,
                dj,
                value_of_move(&tables, &p, m).expect("layers loaded"),
            )
        })
        .collect();
    list.sort_by(|x, y| move_rank(x.2).cmp(&move_rank(y.2)).then(x.0.cmp(&y.0)));
    let side = p.to_move.name();
    let note = if p.cars(p.to_move.other()) == 0 {
        Some(format!(
            "game over: {} has no car left and has won",
            p.to_move.other().name()
        ))
    } else if list.is_empty() {
        Some(format!("{side} has no legal move and so wins"))
    } else {
        None
    };
    if json {
        let v = serde_json::json!({
            "n": n,
            "position": board.position_text(&p),
            "to_move": side,
            "value": value.word(),
            "depth": value.depth(),
            "note": note,
            "moves": list.iter().map(|(m, dj, v)| serde_json::json!({
                "move": m, "desjardins": dj, "value": v.word(), "depth": v.depth(),
            })).collect::<Vec<_>>(),
            "source": source,
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!("{}  ({n}×{n})", board.position_text(&p));
        println!("value for {side} (to move): {value}");
        if let Some(note) = note {
            println!("  {note}");
        }
        if !list.is_empty() {
            println!(
                "moves of {side}, best first (value for {side}; desJardins' notation in brackets):"
            );
            for (m, dj, v) in &list {
                println!("  {m:<8} [{dj:<8}] {v}");
            }
        }
        println!("  ({source})");
    }
    Ok(ExitCode::SUCCESS)
}
