//! The `gametables` command line: argument parsing and printing only; the
//! work is in [`crate::pipeline`] and [`crate::games`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::pipeline::RunView;
use crate::pipeline::executor::LocalOptions;
use crate::pipeline::fullcheck;
use crate::pipeline::jobfile::read_job_file_split;
use crate::pipeline::merge;
use crate::pipeline::plan::{PlanFile, write_plan};
use crate::pipeline::probe::{ProbeError, Progress};
use crate::pipeline::registry::{QueryCommand, Registry, StandardJob};
use crate::pipeline::resources::{
    available_memory, cores, fmt_bytes, parse_size, set_allocation_limit, set_worker_threads,
};
use crate::pipeline::result::ResultFile;
use crate::pipeline::run::{RunEvent, RunRequest};
use crate::pipeline::rundir::RunDir;
use crate::pipeline::shard::Durability;
use crate::pipeline::slurm::{self, SlurmOptions};
use crate::pipeline::state::JobState;
use crate::pipeline::worker::{RankOf, run_worker_rank};
use crate::pipeline::{ClaimStatus, Error};

mod args;

use self::args::*;

/// The games of this build, as the pipeline is given them.
fn registry() -> Registry {
    crate::games::registry()
}

/// `--help` examples from the registered games' standard job files.
fn with_examples(cmd: clap::Command) -> clap::Command {
    let jobs: Vec<&StandardJob> = crate::games::GAMES
        .iter()
        .flat_map(|g| g.standard_jobs.iter())
        .collect();
    let Some(first) = jobs.iter().find(|j| !j.query.is_empty()) else {
        return cmd;
    };
    let n = first.name;
    let top = format!(
        "Typical use:\n  gametables run jobs/{n}.toml      plan, run, merge, verify, report into runs/{n}/\n  \
         gametables status runs/{n}        which jobs are done, pending or damaged\n  \
         gametables verify runs/{n} --against manifests/{n}.toml\n  \
         gametables query {}\n\n\
         Logging: RUST_LOG (e.g. RUST_LOG=debug); each job's log is RUN_DIR/logs/JOB_ID.log.\n\
         Exit status: 0 ok, 1 error, 2 usage, 3 verification mismatch or a report claim that does not match.",
        first.query.join(" ")
    );
    let served: Vec<&&StandardJob> = jobs.iter().filter(|j| !j.probe.0.is_empty()).collect();
    let dirs: Vec<String> = served.iter().map(|j| format!("runs/{}", j.name)).collect();
    let urls: Vec<String> = served
        .iter()
        .map(|j| format!("  http://127.0.0.1:8080/api/v1/{}?{}", j.probe.0, j.probe.1))
        .collect();
    let serve = format!(
        "Example:\n  gametables serve {} --bind 127.0.0.1:8080\n  then open http://127.0.0.1:8080/ in a browser, or ask\n{}",
        dirs.join(" "),
        urls.join("\n")
    );
    cmd.after_help(top)
        .mut_subcommand("serve", |s| s.after_help(serve))
}

/// Exit status for verification failures (digest mismatch, damaged shard,
/// failed claim).
pub const EXIT_MISMATCH: u8 = 3;

/// Exit status for usage errors: arguments clap refuses, and query
/// arguments that are malformed or impossible (clap's own status).
pub const EXIT_USAGE: u8 = 2;

/// Entry point of the binary: parses arguments, runs, maps errors to exit
/// codes (1 error, 2 usage, 3 verification mismatch).
pub fn main() -> ExitCode {
    // Die quietly on a closed pipe (`gametables status DIR | head`), like other
    // command-line tools, instead of panicking inside println!.
    // SAFETY: resetting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::from_arg_matches(&with_examples(Cli::command()).get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let is_worker = matches!(cli.command, Command::Worker { .. });
    init_logging(if is_worker { "info" } else { "warn" });
    let code = match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            errln!("error: {e:#}");
            let mismatch = e
                .downcast_ref::<Error>()
                .is_some_and(|e| matches!(e, Error::Verify { .. }));
            // A query whose arguments are malformed or impossible is a usage
            // error, like any argument clap refuses.
            let usage = e
                .downcast_ref::<ProbeError>()
                .is_some_and(|e| matches!(e, ProbeError::BadRequest(_)));
            ExitCode::from(if mismatch {
                EXIT_MISMATCH
            } else if usage {
                EXIT_USAGE
            } else {
                1
            })
        }
    };
    // Output lost (standard output on a full disk): say so, never exit 0.
    match crate::output::stdout_error() {
        Some(e) if code == ExitCode::SUCCESS => {
            errln!("error: writing standard output: {e}");
            ExitCode::from(1)
        }
        _ => code,
    }
}

/// `verify --full`: the cheap verify's problems (if any), then the full
/// check of every stored value; exit 3 (through [`Error::Verify`]) if
/// either finds something.
fn cmd_verify_full(
    dir: &Path,
    against: Option<&Path>,
    json: bool,
    only: Option<&[String]>,
    sample: u64,
) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir, &registry())?;
    let started = std::time::Instant::now();
    let (mut problems, ok) = match merge::verify(&view, against) {
        Ok(r) => (Vec::new(), Some(r)),
        Err(Error::Verify { problems }) => (problems, None),
        Err(e @ (Error::RunDir { .. } | Error::Manifest { .. })) => return Err(e.into()),
        Err(e) => (vec![e.to_string()], None),
    };
    let opts = fullcheck::Options {
        progress: std::io::stderr().is_terminal(),
        sample,
        ..fullcheck::Options::default()
    };
    let report =
        fullcheck::full_check_jobs(&view, registry().checker(view.kind.name()), opts, only)?;
    let seconds = started.elapsed().as_secs_f64();
    problems.extend(report.problem_lines());
    if json {
        let v = serde_json::json!({
            "ok": problems.is_empty(), "run_dir": dir.display().to_string(),
            "shards": ok.as_ref().map_or(view.plan.jobs.len(), |r| r.shards.len()),
            "tables": ok.as_ref().map(|r| r.tables.len()),
            "root": ok.as_ref().map(|r| r.root.clone()),
            "against": against.map(|a| a.display().to_string()),
            "problems": problems,
            "full": {
                "bad_values": report.total,
                "seconds": seconds,
                "threads": opts.threads,
                "coverage": report.coverage.iter().map(ToString::to_string).collect::<Vec<_>>(),
            },
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(if problems.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_MISMATCH)
        });
    }
    if let Some(r) = &ok {
        outln!("{}", verified_line(r, against));
    }
    outln!(
        "full check ({seconds:.1} s, {} thread(s)): {} bad value(s)",
        opts.threads,
        report.total
    );
    for c in &report.coverage {
        outln!("  {c}");
    }
    if problems.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Error::Verify { problems }.into())
    }
}

fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // A log line that cannot be written (a worker's log on a full disk) is
    // dropped: tracing's own report of it would go to the same stderr and
    // panic there.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .log_internal_errors(false)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// `plan JOB_FILE [--run-dir DIR [--force]] [--memory SIZE]`: each job's
/// memory and the summary; with `--run-dir`, the plan written there.
fn cmd_plan(
    job_file: &Path,
    run_dir: Option<&Path>,
    force: bool,
    memory: Option<u64>,
    split: &crate::pipeline::kind::SplitPolicy,
    nodes: Option<(u32, u32)>,
) -> anyhow::Result<ExitCode> {
    if let Some(m) = memory {
        set_allocation_limit(m);
    }
    let jf = read_job_file_split(job_file, &registry(), split)?;
    let plan = PlanFile::from_job_file(&jf)?;
    match run_dir {
        Some(run_dir) => {
            let dir = RunDir::new(run_dir);
            let _lock = dir.lock()?;
            write_plan(&dir, &plan, force)?;
            outln!(
                "planned {} job(s) of kind {} in {}",
                plan.jobs.len(),
                plan.kind,
                run_dir.display()
            );
        }
        None => outln!(
            "plan of {} job(s) of kind {} (not written: give --run-dir DIR to write it)",
            plan.jobs.len(),
            plan.kind
        ),
    }
    let width = plan.jobs.iter().map(|j| j.name.len()).max().unwrap_or(0);
    for j in &plan.jobs {
        outln!(
            "  {}  {:width$}  {:>10} memory{}{}",
            &j.id[..12],
            j.name,
            fmt_bytes(j.memory),
            if j.ranks > 1 {
                format!(" a rank, {} ranks", j.ranks)
            } else {
                String::new()
            },
            if j.threads > 1 {
                format!(", {} threads", j.threads)
            } else {
                String::new()
            }
        );
    }
    outln!("{}", plan.resources());
    if let Some((n, c)) = nodes {
        let ranks = plan.jobs.iter().map(|j| j.ranks).max().unwrap_or(1);
        outln!(
            "on {n} node(s) of {c} cores: ≈ {} wall (a list schedule of the CPU estimates; {} split job(s), up to {ranks} ranks)",
            crate::pipeline::resources::fmt_seconds(plan.wall_seconds(n, c).round() as u64),
            plan.jobs.iter().filter(|j| j.ranks > 1).count()
        );
    }
    // The budget `run --memory` would have: the one given, else what
    // is available here now.
    let (budget, whose) = match memory {
        Some(m) => (Some(m), "with this --memory"),
        None => (available_memory(), "here"),
    };
    if let Some(Err(e)) = budget.map(|b| plan.check_memory(b)) {
        outln!("note: a local run {whose} would refuse it: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Plan {
            job_file,
            run_dir,
            force,
            memory,
            split,
            nodes,
            node_cores,
        } => cmd_plan(
            &job_file,
            run_dir.as_deref(),
            force,
            memory,
            &split.policy(),
            nodes.map(|n| (n, node_cores)),
        ),
        Command::Worker {
            manifest,
            run_dir,
            defer_sync,
            latency_wait,
            threads,
            rank,
            attempt,
        } => cmd_worker(
            &manifest,
            run_dir.as_deref(),
            defer_sync,
            latency_wait,
            threads,
            rank.zip(attempt)
                .map(|(rank, attempt)| RankOf { rank, attempt }),
        ),
        Command::Merge { dir, latency_wait } => cmd_merge(&dir, latency_wait),
        Command::Status { dir, json } => cmd_status(&dir, json),
        Command::Verify {
            dir,
            against,
            json,
            full,
            memory,
            jobs,
            sample,
        } => {
            if let Some(m) = memory {
                set_allocation_limit(m);
            }
            if full {
                let jobs: Option<Vec<String>> =
                    jobs.map(|j| j.iter().map(|x| x.trim().to_string()).collect());
                cmd_verify_full(
                    &dir,
                    against.as_deref(),
                    json,
                    jobs.as_deref(),
                    sample.unwrap_or(1),
                )
            } else {
                cmd_verify(&dir, against.as_deref(), json)
            }
        }
        Command::Plot { dir } => cmd_plot(&dir),
        Command::Report { dir, json } => cmd_report(&dir, json),
        Command::Query(q) => {
            if let Some(m) = q.memory {
                set_allocation_limit(m);
            }
            cmd_query(q.game, q.max_work, Duration::from_secs_f64(q.time_limit))
        }
        Command::Serve {
            dirs,
            bind,
            cache_mb,
            max_work,
            time_limit,
        } => cmd_serve(&dirs, bind, cache_mb, max_work, time_limit),
    }
}

/// `worker`: runs one job from its manifest (or one rank of a split job).
fn cmd_worker(
    manifest: &Path,
    run_dir: Option<&Path>,
    defer_sync: bool,
    latency_wait: u64,
    threads: Option<u32>,
    rank: Option<RankOf>,
) -> anyhow::Result<ExitCode> {
    if let Some(t) = threads {
        set_worker_threads(t as usize);
    }
    let durability = if defer_sync {
        Durability::Deferred
    } else {
        Durability::Now
    };
    run_worker_rank(
        &registry(),
        manifest,
        run_dir,
        durability,
        Duration::from_secs(latency_wait),
        rank,
    )?;
    Ok(ExitCode::SUCCESS)
}

/// `merge`: verifies every shard and assembles the tables.
fn cmd_merge(dir: &Path, latency_wait: u64) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir, &registry())?;
    let _lock = view.dir.lock()?;
    view.dir.wait_for_shards(
        view.plan.jobs.iter().map(|j| j.id.as_str()),
        Duration::from_secs(latency_wait),
    );
    let r = merge::merge(&view)?;
    outln!(
        "merged {} shard(s), {} table(s); root {}",
        r.shards.len(),
        r.tables.len(),
        r.root
    );
    Ok(ExitCode::SUCCESS)
}

/// `plot`: draws the merged tables' pictures.
fn cmd_plot(dir: &Path) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir, &registry())?;
    merge::require_merged(&view)?;
    let drawn = crate::pipeline::plots::write_plots(&view)?;
    if drawn.is_empty() {
        outln!("kind `{}` draws no pictures", view.kind.name());
    }
    for (p, svg, png) in drawn {
        outln!("{}: {} ({})", svg.display(), p.title, png.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `report`: writes report.md; exit 3 on a mismatching claim.
fn cmd_report(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir, &registry())?;
    merge::require_merged(&view)?;
    let claims = merge::report(&view, &registry().works())?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&claims_json(&view.dir, &claims))?
        );
    } else {
        print_claims_summary(&view.dir, &claims);
    }
    Ok(
        if claims.iter().any(|c| c.status == ClaimStatus::Mismatch) {
            ExitCode::from(EXIT_MISMATCH)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// `serve`: the JSON API and the page, until Ctrl-C.
fn cmd_serve(
    dirs: &[PathBuf],
    bind: std::net::SocketAddr,
    cache_mb: u64,
    max_work: u64,
    time_limit: f64,
) -> anyhow::Result<ExitCode> {
    let limits = crate::serve::Limits {
        max_work,
        time_limit: Duration::from_secs_f64(time_limit),
        ..crate::serve::Limits::default()
    };
    // Requests computing at once share the allocation bound.
    set_allocation_limit(
        crate::pipeline::resources::default_allocation_limit() / limits.concurrent as u64,
    );
    let probes = registry().probes(dirs, cache_mb << 20)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let served = rt.block_on(crate::serve::serve(probes, bind, limits, |addr| {
        outln!(
            "serving {} run director{} on http://{addr}/ (Ctrl-C stops)",
            dirs.len(),
            if dirs.len() == 1 { "y" } else { "ies" }
        );
    }));
    // Computations told to stop end at their next check; do not
    // wait for one that does not.
    rt.shutdown_timeout(Duration::from_millis(300));
    served.with_context(|| format!("serving on {bind}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `ok: N shard(s) and M table(s) verify; root R[; matches MANIFEST]`.
fn verified_line(r: &ResultFile, against: Option<&Path>) -> String {
    format!(
        "ok: {} shard(s) and {} table(s) verify; root {}{}",
        r.shards.len(),
        r.tables.len(),
        r.root,
        against.map_or(String::new(), |a| format!("; matches {}", a.display()))
    )
}

/// `verify`: exit 0 when everything verifies, 3 on mismatches (listed), 1
/// when the run cannot be verified at all.
fn cmd_verify(dir: &Path, against: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let view = RunView::open(dir, &registry())?;
    let outcome = merge::verify(&view, against);
    if !json {
        let r = outcome?;
        outln!("{}", verified_line(&r, against));
        return Ok(ExitCode::SUCCESS);
    }
    let against = against.map(|a| a.display().to_string());
    let (v, code) = match outcome {
        Ok(r) => (
            serde_json::json!({
                "ok": true, "run_dir": dir.display().to_string(),
                "shards": r.shards.len(), "tables": r.tables.len(), "root": r.root,
                "against": against, "problems": Vec::<String>::new(),
            }),
            ExitCode::SUCCESS,
        ),
        Err(Error::Verify { problems }) => (
            serde_json::json!({
                "ok": false, "run_dir": dir.display().to_string(),
                "shards": view.plan.jobs.len(), "tables": null, "root": null,
                "against": against, "problems": problems,
            }),
            ExitCode::from(EXIT_MISMATCH),
        ),
        Err(e) => return Err(e.into()),
    };
    outln!("{}", serde_json::to_string_pretty(&v)?);
    Ok(code)
}

/// `report --json`: the counts, where report.md went, and every claim.
fn claims_json(dir: &RunDir, claims: &[crate::pipeline::Claim]) -> serde_json::Value {
    let n = |s| claims.iter().filter(|c| c.status == s).count();
    let word = |s| match s {
        ClaimStatus::Match => "match",
        ClaimStatus::Mismatch => "mismatch",
        ClaimStatus::KnownDiscrepancy => "known discrepancy",
        ClaimStatus::NotCovered => "not covered",
    };
    serde_json::json!({
        "summary": {
            "report": dir.report_path().display().to_string(),
            "claims": claims.len(),
            "match": n(ClaimStatus::Match),
            "mismatch": n(ClaimStatus::Mismatch),
            "known_discrepancy": n(ClaimStatus::KnownDiscrepancy),
            "not_covered": n(ClaimStatus::NotCovered),
        },
        "claims": claims.iter().map(|c| serde_json::json!({
            "source": c.source, "claim": c.claim, "published": c.expected,
            "ours": c.ours, "status": word(c.status),
        })).collect::<Vec<_>>(),
    })
}

fn print_claims_summary(dir: &RunDir, claims: &[crate::pipeline::Claim]) {
    let n = |s| claims.iter().filter(|c| c.status == s).count();
    outln!(
        "report {}: {} claims, {} match, {} mismatch, {} known discrepancies, {} not covered",
        dir.report_path().display(),
        claims.len(),
        n(ClaimStatus::Match),
        n(ClaimStatus::Mismatch),
        n(ClaimStatus::KnownDiscrepancy),
        n(ClaimStatus::NotCovered)
    );
    for c in claims.iter().filter(|c| c.status == ClaimStatus::Mismatch) {
        outln!(
            "  MISMATCH {}: expected {}, ours {}",
            c.claim,
            c.expected,
            c.ours
        );
    }
}

/// The end of `run`: where the tables are, and the computation's headline
/// (the kind's first claim that matches its published value).
fn print_results(dir: &RunDir, result: &ResultFile, claims: &[crate::pipeline::Claim]) {
    let names: Vec<&str> = result.tables.iter().map(|t| t.name.as_str()).collect();
    outln!(
        "tables in {}: {}",
        dir.tables_dir().display(),
        names.join(", ")
    );
    if let Some(c) = claims.iter().find(|c| c.status == ClaimStatus::Match) {
        outln!(
            "headline: {}: {}, as published ({})",
            c.claim,
            c.ours,
            c.source
        );
    }
}

/// Default of `query --time-limit`, in seconds.
const DEFAULT_QUERY_TIME_LIMIT: f64 = 60.0;

/// clap value parser of `--time-limit` and `--latency-wait`: a positive
/// number of seconds, e.g. `10` or `0.5`.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 1e6 => Ok(v),
        _ => Err(format!("`{s}`: write a number of seconds above 0, e.g. 10")),
    }
}

/// clap value parser of `--memory`: a size above 0, e.g. `8G`.
fn parse_memory(s: &str) -> Result<u64, String> {
    match parse_size(s)? {
        0 => Err("the memory budget must be more than 0".into()),
        n => Ok(n),
    }
}

/// The Slurm options of `run --executor slurm` (`None` for a local run),
/// after refusing options that need the other executor (clap's usage
/// error, exit 2).
fn slurm_options(args: &RunArgs, exe: &Path) -> Option<SlurmOptions> {
    let slurm_opts = (args.executor == Executor::Slurm).then(|| SlurmOptions {
        exe: exe.to_path_buf(),
        partition: args.partition.clone(),
        sbatch_args: args.sbatch_args.clone(),
        array_limit: args.workers.map(|w| w as usize),
        account: args.account.clone(),
        qos: args.qos.clone(),
        time_margin: args.time_margin,
        time_floor: Duration::from_secs(args.time_floor * 60),
        max_retries: args.max_retries,
        detach: args.detach,
        force: args.force,
        progress: !args.no_progress,
        retry_for: Duration::from_secs(args.slurm_retry),
        latency_wait: Duration::from_secs(args.latency_wait),
    });
    if slurm_opts.is_some() && args.memory.is_some() {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--memory is a local budget; on Slurm each job asks for its own estimate \
                 (override with --sbatch-arg=--mem=…)",
            )
            .exit();
    }
    if slurm_opts.is_none()
        && (args.partition.is_some()
            || args.account.is_some()
            || args.qos.is_some()
            || !args.sbatch_args.is_empty()
            || args.detach
            || args.dry_run)
    {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--partition, --account, --qos, --sbatch-arg, --detach and --dry-run need --executor slurm",
            )
            .exit();
    }
    slurm_opts
}

fn cmd_run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.run_dir.is_some() && args.job_files.len() > 1 {
        Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                "--run-dir needs a single job file (each job file gets its own run directory)",
            )
            .exit();
    }
    let workers = args.workers.map_or_else(cores, |w| w as usize);
    let exe = std::env::current_exe().context("cannot find the gametables executable")?;
    let memory_budget = match args.memory {
        Some(m) => {
            // The budget bounds the plans too (PlanFile::from_job_file checks).
            set_allocation_limit(m);
            m
        }
        None => available_memory().context(
            "cannot read the available memory from /proc/meminfo; give a budget with --memory",
        )?,
    };
    let slurm_opts = slurm_options(&args, &exe);
    let req = RunRequest {
        job_files: args.job_files.clone(),
        run_dir: args.run_dir.clone(),
        local: slurm_opts.is_none().then(|| LocalOptions {
            workers,
            force: args.force,
            exe: exe.clone(),
            progress: !args.no_progress,
            memory_budget,
            cores: cores(),
        }),
        slurm: slurm_opts,
        dry_run: args.dry_run,
        force: args.force,
        split: args.split.policy(),
    };
    let mut code = ExitCode::SUCCESS;
    let on_slurm = req.slurm.is_some();
    crate::pipeline::run::run(&registry(), &req, &mut |event| match event {
        RunEvent::ReferenceNotCompared { reference } => errln!(
            "note: {} was made from other parameters; not compared",
            reference.display()
        ),
        RunEvent::DryRun { text } => out!("{text}"),
        RunEvent::Started {
            name,
            plan,
            run_dir,
        } => {
            errln!(
                "{name}: {} job(s) of kind {} in {} {}",
                plan.jobs.len(),
                plan.kind,
                run_dir.display(),
                if on_slurm {
                    "on Slurm".to_string()
                } else {
                    format!(
                        "with {workers} worker(s), memory budget {}",
                        fmt_bytes(memory_budget)
                    )
                }
            );
            errln!("{name}: {}", plan.resources());
        }
        RunEvent::Detached {
            name,
            run_dir,
            submission,
            slurm_ids,
        } => {
            let dir = run_dir.display();
            outln!(
                "{name}: submitted as Slurm jobs {} (submission {submission}); follow with \
                 `gametables status {dir}`, then check with \
                 `gametables verify {dir} --against manifests/{name}.toml`",
                slurm_ids.join(", ")
            );
        }
        RunEvent::Finished {
            name,
            dir,
            summary,
            seconds,
            result,
            reference,
            reference_sought,
            claims,
        } => {
            outln!(
                "{name}: {} computed, {} skipped, {} recomputed (damaged), {} recomputed (deleted){} in {seconds:.2} s; root {}",
                summary.computed.len(),
                summary.skipped.len(),
                summary.damaged.len(),
                summary.deleted.len(),
                if summary.old.is_empty() {
                    String::new()
                } else {
                    format!(", {} recomputed (old shard format)", summary.old.len())
                },
                result.root
            );
            match &reference {
                Some(r) => outln!("digests match the reference {}", r.display()),
                None => outln!(
                    "no reference manifest for this plan ({})",
                    reference_sought.display()
                ),
            }
            print_claims_summary(dir, &claims);
            print_results(dir, &result, &claims);
            if claims.iter().any(|c| c.status == ClaimStatus::Mismatch) {
                code = ExitCode::from(EXIT_MISMATCH);
            }
        }
    })?;
    Ok(code)
}

fn cmd_status(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    use crate::pipeline::merge::MergeState;
    let view = RunView::open(dir, &registry())?;
    let st = merge::status(&view);
    let rows = &st.jobs;
    let count = |f: fn(&JobState) -> bool| rows.iter().filter(|r| f(&r.2)).count();
    let done = count(|s| *s == JobState::Done);
    let pending = count(|s| *s == JobState::Pending);
    let deleted = count(|s| *s == JobState::Deleted);
    let damaged = count(|s| matches!(s, JobState::Damaged(_)));
    let old = count(|s| matches!(s, JobState::Old(_)));
    let (slurm, slurm_tasks) = slurm::status(&view.dir, &view.plan);
    if json {
        let jobs: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, id, st)| {
                let (state, why) = match st {
                    JobState::Done => ("done", None),
                    JobState::Pending => ("pending", None),
                    JobState::Deleted => ("deleted", None),
                    JobState::Damaged(w) => ("damaged", Some(w.clone())),
                    JobState::Old(w) => ("old", Some(w.clone())),
                };
                let ranks = view.plan.jobs.iter().find(|j| &j.id == id).map_or(1, |j| j.ranks);
                let progress = if ranks > 1 && *st != JobState::Done {
                    serde_json::to_value(crate::pipeline::ranks::split_progress(view.dir.root(), id))
                        .unwrap_or_default()
                } else {
                    serde_json::Value::Null
                };
                serde_json::json!({"job": name, "id": id, "state": state, "reason": why, "ranks": ranks, "rank_progress": progress})
            })
            .collect();
        let (merged, root, stale) = match &st.merge {
            MergeState::NotMerged => (false, None, None),
            MergeState::Merged(r) => (true, Some(r.clone()), None),
            MergeState::Stale(w) => (false, None, Some(w.clone())),
        };
        let v = serde_json::json!({
            "summary": {
                "run_dir": dir.display().to_string(),
                "job_file": view.plan.job_file,
                "kind": view.plan.kind,
                "jobs": rows.len(),
                "done": done,
                "pending": pending,
                "deleted": deleted,
                "damaged": damaged,
                "old": old,
                "merged": merged,
                "root": root,
                "stale_result": stale,
                "slurm": slurm,
            },
            "jobs": jobs,
            "slurm": slurm_tasks,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "{} ({}): {} job(s): {done} done, {pending} pending, {deleted} deleted, {damaged} damaged{}{}",
            dir.display(),
            view.plan.kind,
            rows.len(),
            if old > 0 {
                format!(", {old} old")
            } else {
                String::new()
            },
            match &st.merge {
                MergeState::NotMerged => String::new(),
                MergeState::Merged(root) => format!("; merged, root {root}"),
                MergeState::Stale(why) => format!("; result.toml is stale: {why}"),
            }
        );
        if old > 0 {
            outln!(
                "{old} shard(s) in an older shard format, written by an older gametables (not damaged; \
                 this build reads format {}): `gametables run JOB_FILE --run-dir {}` recomputes them",
                crate::pipeline::shard::FORMAT_VERSION,
                dir.display()
            );
        }
        for line in slurm {
            outln!("{line}");
        }
        for ((name, id, st), j) in rows.iter().zip(&view.plan.jobs) {
            let split = if j.ranks > 1 && *st != JobState::Done {
                let p = crate::pipeline::ranks::split_progress(view.dir.root(), id);
                format!("; {}", crate::pipeline::ranks::progress_text(j.ranks, &p))
            } else {
                String::new()
            };
            let s = match st {
                JobState::Done => "done".to_string(),
                JobState::Pending => format!("pending{split}"),
                JobState::Deleted => "DELETED: the run had its shard".to_string(),
                JobState::Damaged(w) => format!("DAMAGED: {w}"),
                JobState::Old(_) => "old (shard format 1; `run` recomputes it)".to_string(),
            };
            outln!("  {}  {:<24} {}", &id[..12], name, s);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs `work` (an in-memory query filling the [`Progress`] it is given) on
/// a thread. A stage the probe knows to be long from its size is announced
/// on stderr as it starts; any other query that takes more than two seconds
/// is announced then (what it computes and how far it is). Either way a
/// progress bar follows the work done when stderr is a terminal.
fn with_progress<T: Send>(
    max_work: u64,
    time_limit: Duration,
    work: impl FnOnce(&Progress) -> T + Send,
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let said = std::sync::Arc::new(AtomicBool::new(false));
    let tell = said.clone();
    let progress = Progress {
        on_long_stage: Some(Box::new(move |what: &str| {
            if !tell.swap(true, Ordering::Relaxed) {
                errln!(
                    "query: computing {what} in memory: by its size this takes a while (more than about a second)"
                );
            }
        })),
        max_work,
        time_limit: Some(time_limit),
        ..Progress::default()
    };
    let progress = &progress;
    // Test hook: how long a query runs before it says so (milliseconds).
    let quiet = std::env::var("GAMETABLES_TEST_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(2), Duration::from_millis);
    std::thread::scope(|sc| {
        // The worker says it is done on this channel (its end is dropped when
        // `work` returns or panics), so a short query returns at once: the
        // loop below waits on the channel, never on a sleep.
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = sc.spawn(move || {
            let _done = done_tx;
            work(progress)
        });
        let t0 = std::time::Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        while done_rx.recv_timeout(Duration::from_millis(100))
            == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        {
            let (done, total) = (
                progress.done.load(Ordering::Relaxed),
                progress.total.load(Ordering::Relaxed),
            );
            let what = progress
                .what
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone();
            // A query that names no work of its own (subtraction, hackenbush).
            let what = if what.is_empty() {
                "the answer".to_string()
            } else {
                what
            };
            match &bar {
                None if said.load(Ordering::Relaxed)
                    || (t0.elapsed() >= quiet && !h.is_finished()) =>
                {
                    if !said.swap(true, Ordering::Relaxed) {
                        errln!(
                            "query: computing {what} in memory ({}% done after {} s); this takes a while",
                            (done * 100).checked_div(total).unwrap_or(0),
                            t0.elapsed().as_secs()
                        );
                    }
                    let b = indicatif::ProgressBar::new(total.max(1));
                    b.set_style(
                        indicatif::ProgressStyle::with_template(
                            "{elapsed_precise} [{bar:30}] {percent}%  {msg}",
                        )
                        .expect("valid template")
                        .progress_chars("=> "),
                    );
                    bar = Some(b);
                }
                Some(b) => {
                    b.set_length(total.max(1));
                    b.set_position(done.min(total));
                    b.set_message(what);
                }
                None => {}
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

fn cmd_query(q: GameQuery, max_work: u64, time_limit: Duration) -> anyhow::Result<ExitCode> {
    let query = game_queries()
        .find(|c| (c.command)().get_name() == q.name)
        .expect("clap parsed a registered query");
    let a = with_progress(max_work, time_limit, |progress| {
        (query.answer)(&q.matches, progress)
    })?;
    match a.json {
        Some(v) => outln!("{}", serde_json::to_string(&v)?),
        None => out!("{}", a.text),
    }
    Ok(ExitCode::SUCCESS)
}
