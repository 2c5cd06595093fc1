//! The worker: runs one job from its manifest and writes its shard.

use std::path::Path;
use std::time::Instant;

use super::error::{Error, Result};
use super::kind::Kinds;
use super::plan::{Manifest, run_dir_of_manifest};
use super::ranks::{FileRanks, FileStore};
use super::rundir::RunDir;
use super::shard::{self, Durability};
use super::state::DirShards;

/// Test hook: milliseconds the worker sleeps after solving and before writing
/// its shard, so fault tests can kill it mid-run. Not for production use.
pub const DELAY_ENV: &str = "GAMETABLES_TEST_WORKER_DELAY_MS";

/// Test hook: milliseconds each rank of a split job sleeps before it
/// solves, so fault tests can kill one. Not for production use.
pub const RANK_DELAY_ENV: &str = "GAMETABLES_TEST_RANK_DELAY_MS";

/// Runs the job of `manifest_path` and writes its shard atomically, with
/// fsync when `durability` is [`Durability::Now`].
///
/// The run directory is `run_dir` if given, else the parent of the manifest's
/// `manifests/` folder.
///
/// # Errors
/// [`Error::Manifest`] for a bad or unsafe manifest, [`Error::Shard`] for a
/// missing or damaged input, [`Error::Job`] if the kind fails,
/// [`Error::Io`] if the shard cannot be written.
pub fn run_worker(
    registry: &dyn Kinds,
    manifest_path: &Path,
    run_dir: Option<&Path>,
    durability: Durability,
) -> Result<()> {
    run_worker_waiting(
        registry,
        manifest_path,
        run_dir,
        durability,
        std::time::Duration::ZERO,
    )
}

/// [`run_worker`], first waiting up to `latency_wait` for input shards that
/// are not visible yet ([`RunDir::wait_for_shards`]; `worker --latency-wait`,
/// which Slurm tasks get).
///
/// # Errors
/// As [`run_worker`].
pub fn run_worker_waiting(
    registry: &dyn Kinds,
    manifest_path: &Path,
    run_dir: Option<&Path>,
    durability: Durability,
    latency_wait: std::time::Duration,
) -> Result<()> {
    run_worker_rank(
        registry,
        manifest_path,
        run_dir,
        durability,
        latency_wait,
        None,
    )
}

/// One rank of a split job, as `worker --rank K --attempt TOKEN` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankOf {
    /// The rank, `0 … ranks − 1`.
    pub rank: usize,
    /// The token the ranks of this attempt share ([`FileRanks::new`]).
    pub attempt: String,
}

/// [`run_worker_waiting`] for a job of any number of ranks
/// ([`JobSpec::ranks`](super::JobSpec::ranks)). A job of one rank runs as
/// before. For a split job this process is:
/// - rank `rank` of it when given (`worker --rank`);
/// - else, in a Slurm task of a step of exactly the job's ranks
///   (`SLURM_PROCID`, `SLURM_NTASKS`), rank `SLURM_PROCID` (the tasks of
///   `srun`);
/// - else the launcher: it starts the ranks as processes of this machine
///   (`worker --rank K`, a share of the threads each), waits for them, and
///   stops the others when one fails.
///
/// The ranks trade through files in `RUN_DIR/ranks/JOB_ID/`
/// ([`FileRanks`]); rank 0 writes the shard.
///
/// # Errors
/// As [`run_worker`]; a rank that fails (the launcher names it).
pub fn run_worker_rank(
    registry: &dyn Kinds,
    manifest_path: &Path,
    run_dir: Option<&Path>,
    durability: Durability,
    latency_wait: std::time::Duration,
    rank: Option<RankOf>,
) -> Result<()> {
    let m = Manifest::load(manifest_path)?;
    let dir =
        RunDir::new(run_dir.map_or_else(|| run_dir_of_manifest(manifest_path), Path::to_path_buf));
    if !dir.root().join("shards").is_dir() {
        return Err(Error::RunDir {
            path: dir.root().to_path_buf(),
            message: "no shards/ folder here: the run directory must be the one the plan was \
                      written to, visible from this machine (on a cluster: a shared filesystem)"
                .into(),
        });
    }
    let kind = registry.kind(&m.kind).ok_or_else(|| Error::Manifest {
        path: manifest_path.to_path_buf(),
        message: format!("unknown kind `{}`", m.kind),
    })?;
    let out = dir.resolve(&m.output)?;
    if m.ranks > 1 {
        #[cfg(feature = "mpi")]
        if rank.is_none() && super::mpi_ranks::MpiRanks::launched() {
            let mut mpi = super::mpi_ranks::MpiRanks::init()
                .ok_or_else(|| Error::job(&m.name, "MPI was initialized already"))?;
            if super::ranks::Ranks::ranks(&mpi) != m.ranks as usize {
                return Err(Error::job(
                    &m.name,
                    format!(
                        "the job is split over {} ranks; MPI started {} (mpirun -n {})",
                        m.ranks,
                        super::ranks::Ranks::ranks(&mpi),
                        m.ranks
                    ),
                ));
            }
            return run_one_rank(kind, &m, &dir, &out, durability, latency_wait, &mut mpi);
        }
        let rank = rank.or_else(|| slurm_rank(m.ranks));
        let Some(rank) = rank else {
            return launch_ranks(&m, manifest_path, &dir, durability, latency_wait);
        };
        let folder = dir.root().join("ranks").join(&m.job_id);
        let mut files = FileRanks::new(&folder, &rank.attempt, rank.rank, m.ranks as usize)
            .map_err(|e| Error::job(&m.name, e))?;
        run_one_rank(kind, &m, &dir, &out, durability, latency_wait, &mut files)?;
        let _ = std::fs::remove_dir(&folder);
        return Ok(());
    }
    tracing::info!(
        job = %m.name,
        id = %m.job_id,
        kind = %m.kind,
        threads = super::resources::worker_threads(),
        "job started"
    );
    dir.wait_for_shards(m.inputs.iter().map(|i| i.id.as_str()), latency_wait);
    let t0 = Instant::now();
    let cpu0 = super::resources::cpu_seconds();
    let inputs = DirShards {
        dir: &dir,
        kind: &m.kind,
        jobs: m.inputs.clone(),
    };
    let header = m.shard_header();
    let mut sink = LazySink {
        writer: None,
        open: || shard::ShardWriter::create(&out, &header, kind.zstd_level(), durability),
        solved: None,
        t0,
    };
    kind.run_into(&m.spec(), &inputs, &mut sink)?;
    let solved = sink.solved.unwrap_or_else(|| t0.elapsed());
    let w = match sink.writer {
        Some(w) => w,
        None => (sink.open)()?,
    };
    let (_, shard_bytes) = w.finish()?;
    tracing::info!(
        job = %m.name,
        solve_s = solved.as_secs_f64(),
        total_s = t0.elapsed().as_secs_f64(),
        cpu_s = super::resources::cpu_seconds()
            .zip(cpu0)
            .map_or(0.0, |(now, then)| now - then),
        shard_bytes,
        peak_rss_bytes = super::resources::peak_rss().unwrap_or(0),
        "job finished"
    );
    Ok(())
}

/// The worker's section sink: creates the shard's temporary file when the
/// job starts writing (so a worker killed while solving leaves none), notes
/// that moment (the end of solving, for the log) and sleeps there for
/// [`DELAY_ENV`] (tests).
struct LazySink<F: FnMut() -> Result<shard::ShardWriter>> {
    writer: Option<shard::ShardWriter>,
    open: F,
    solved: Option<std::time::Duration>,
    t0: Instant,
}

impl<F: FnMut() -> Result<shard::ShardWriter>> LazySink<F> {
    fn writer(&mut self) -> Result<&mut shard::ShardWriter> {
        if self.writer.is_none() {
            self.solved = Some(self.t0.elapsed());
            if let Some(ms) = std::env::var(DELAY_ENV)
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
            {
                std::thread::sleep(std::time::Duration::from_millis(ms));
            }
            self.writer = Some((self.open)()?);
        }
        Ok(self.writer.as_mut().expect("just made"))
    }
}

impl<F: FnMut() -> Result<shard::ShardWriter>> shard::SectionSink for LazySink<F> {
    fn begin_section(&mut self, name: &str) -> Result<()> {
        self.writer()?.begin_section(name)
    }
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer()?.write(bytes)
    }
}

/// This process's rank when it is a task of a Slurm step of exactly
/// `ranks` tasks.
fn slurm_rank(ranks: u32) -> Option<RankOf> {
    let var = |k: &str| std::env::var(k).ok();
    let n: u32 = var("SLURM_NTASKS")?.parse().ok()?;
    let rank: usize = var("SLURM_PROCID")?.parse().ok()?;
    let job = var("SLURM_JOB_ID")?;
    let step = var("SLURM_STEP_ID").unwrap_or_else(|| "0".into());
    (n == ranks && rank < ranks as usize).then(|| RankOf {
        rank,
        attempt: format!("s{job}_{step}")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect(),
    })
}

/// Starts the ranks of `m`'s job as processes of this machine and waits
/// for them ([`run_worker_rank`]).
fn launch_ranks(
    m: &Manifest,
    manifest_path: &Path,
    dir: &RunDir,
    durability: Durability,
    latency_wait: std::time::Duration,
) -> Result<()> {
    let exe = std::env::current_exe().map_err(Error::io(Path::new("gametables")))?;
    #[cfg(feature = "mpi")]
    if std::env::var(TRANSPORT_ENV).as_deref() != Ok("files") {
        return launch_mpi(m, manifest_path, dir, durability, latency_wait, &exe);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let attempt = format!("l{}_{nanos}", std::process::id());
    let threads = (super::resources::worker_threads() / m.ranks as usize).max(1);
    tracing::info!(job = %m.name, ranks = m.ranks, threads, "starting the ranks of a split job");
    let mut kids = Vec::new();
    for k in 0..m.ranks {
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("worker")
            .arg(manifest_path)
            .arg("--run-dir")
            .arg(dir.root())
            .arg("--rank")
            .arg(k.to_string())
            .arg("--attempt")
            .arg(&attempt)
            .arg("--threads")
            .arg(threads.to_string())
            .arg("--latency-wait")
            .arg(latency_wait.as_secs().to_string());
        if durability == Durability::Deferred {
            cmd.arg("--defer-sync");
        }
        let parent = std::process::id();
        // SAFETY: between fork and exec the closure calls only
        // async-signal-safe functions (prctl, getppid) and allocates nothing.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                // A rank dies with its launcher (also on kill -9).
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        match cmd.spawn() {
            Ok(c) => kids.push(c),
            Err(e) => {
                kids.iter_mut().for_each(|c| {
                    let _ = c.kill();
                });
                return Err(Error::job(&m.name, format!("starting rank {k}: {e}")));
            }
        }
    }
    let mut left: Vec<usize> = (0..kids.len()).collect();
    while !left.is_empty() {
        let mut failed = None;
        left.retain(|&k| match kids[k].try_wait() {
            Ok(None) => true,
            Ok(Some(st)) if st.success() => false,
            Ok(Some(st)) => {
                failed.get_or_insert((k, st.to_string()));
                false
            }
            Err(e) => {
                failed.get_or_insert((k, e.to_string()));
                false
            }
        });
        if let Some((k, why)) = failed {
            for &o in &left {
                let _ = kids[o].kill();
                let _ = kids[o].wait();
            }
            return Err(Error::job(
                &m.name,
                format!(
                    "rank {k} of {} failed ({why}); the other ranks were stopped (each rank's error is in this job's log)",
                    m.ranks
                ),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

/// Environment variable: `files` makes the launcher of a build with the
/// `mpi` feature start its ranks itself, trading through files, instead of
/// under `mpirun`.
pub const TRANSPORT_ENV: &str = "GAMETABLES_TRANSPORT";

/// Environment variable: the MPI launcher the worker runs the ranks of a
/// split job under (default `mpirun`; split on spaces, e.g. `mpirun
/// --oversubscribe`).
pub const MPIRUN_ENV: &str = "GAMETABLES_MPIRUN";

/// Starts the ranks of `m`'s job under `mpirun -n RANKS` (build with the
/// `mpi` feature) and waits for it.
#[cfg(feature = "mpi")]
fn launch_mpi(
    m: &Manifest,
    manifest_path: &Path,
    dir: &RunDir,
    durability: Durability,
    latency_wait: std::time::Duration,
    exe: &Path,
) -> Result<()> {
    let launcher = std::env::var(MPIRUN_ENV).unwrap_or_else(|_| "mpirun".into());
    let mut words = launcher.split_whitespace();
    let prog = words.next().unwrap_or("mpirun");
    let threads = (super::resources::worker_threads() / m.ranks as usize).max(1);
    let mut cmd = std::process::Command::new(prog);
    cmd.args(words).arg("-n").arg(m.ranks.to_string());
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("--allow-run-as-root");
    }
    cmd.arg(exe)
        .arg("worker")
        .arg(manifest_path)
        .arg("--run-dir")
        .arg(dir.root())
        .arg("--threads")
        .arg(threads.to_string())
        .arg("--latency-wait")
        .arg(latency_wait.as_secs().to_string());
    if durability == Durability::Deferred {
        cmd.arg("--defer-sync");
    }
    tracing::info!(job = %m.name, ranks = m.ranks, threads, launcher = %launcher, "starting the ranks under MPI");
    let st = cmd.status().map_err(|e| {
        Error::job(
            &m.name,
            format!("starting {prog}: {e} (set {MPIRUN_ENV}, or {TRANSPORT_ENV}=files)"),
        )
    })?;
    if !st.success() {
        return Err(Error::job(
            &m.name,
            format!("{prog} -n {} ended with {st}: a rank failed", m.ranks),
        ));
    }
    Ok(())
}

/// A sink for the ranks other than 0: they write no sections.
struct NoSections;

impl shard::SectionSink for NoSections {
    fn begin_section(&mut self, name: &str) -> Result<()> {
        Err(Error::job(
            name,
            "only rank 0 of a split job writes its shard",
        ))
    }
    fn write(&mut self, _bytes: &[u8]) -> Result<()> {
        Err(Error::job(
            "shard",
            "only rank 0 of a split job writes its shard",
        ))
    }
}

/// Runs rank `rank` of the split job of `m`: every rank solves its part;
/// rank 0 writes the shard.
fn run_one_rank(
    kind: &dyn super::kind::JobKind,
    m: &Manifest,
    dir: &RunDir,
    out: &Path,
    durability: Durability,
    latency_wait: std::time::Duration,
    ranks: &mut dyn super::ranks::Ranks,
) -> Result<()> {
    let me = ranks.rank();
    tracing::info!(
        job = %m.name,
        id = %m.job_id,
        rank = me,
        ranks = m.ranks,
        node = %std::env::var("SLURMD_NODENAME").unwrap_or_else(|_| "-".into()),
        threads = super::resources::worker_threads(),
        transport = ranks.transport(),
        "rank started"
    );
    dir.wait_for_shards(m.inputs.iter().map(|i| i.id.as_str()), latency_wait);
    if let Some(ms) = std::env::var(RANK_DELAY_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let t0 = Instant::now();
    let cpu0 = super::resources::cpu_seconds();
    let inputs = DirShards {
        dir,
        kind: &m.kind,
        jobs: m.inputs.clone(),
    };
    let spec = m.spec();
    let folder = dir.root().join("ranks").join(&m.job_id).join("checkpoints");
    let mut store = FileStore::new(&folder, &m.job_id, me, m.ranks as usize)
        .map_err(|e| Error::job(&m.name, e))?;
    let mut shard_bytes = 0;
    if me == 0 {
        let header = m.shard_header();
        let mut sink = LazySink {
            writer: None,
            open: || shard::ShardWriter::create(out, &header, kind.zstd_level(), durability),
            solved: None,
            t0,
        };
        kind.run_rank(&spec, &inputs, ranks, &mut store, &mut sink)?;
        let w = match sink.writer {
            Some(w) => w,
            None => (sink.open)()?,
        };
        shard_bytes = w.finish()?.1;
    } else {
        kind.run_rank(&spec, &inputs, ranks, &mut store, &mut NoSections)?;
    }
    let resumed = store.progress().resumed_from;
    store.clear();
    tracing::info!(
        job = %m.name,
        rank = me,
        resumed_from = ?resumed,
        total_s = t0.elapsed().as_secs_f64(),
        cpu_s = super::resources::cpu_seconds()
            .zip(cpu0)
            .map_or(0.0, |(now, then)| now - then),
        shard_bytes,
        sent_bytes = ranks.sent_bytes(),
        peak_rss_bytes = super::resources::peak_rss().unwrap_or(0),
        "rank finished"
    );
    Ok(())
}
