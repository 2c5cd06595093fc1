//! The worker: runs one job from its manifest and writes its shard.

use std::path::Path;
use std::time::Instant;

use super::error::{Error, Result};
use super::kind::Kinds;
use super::plan::{Manifest, run_dir_of_manifest};
use super::rundir::RunDir;
use super::shard::{self, Durability, ShardHeader};
use super::state::DirShards;

/// Test hook: milliseconds the worker sleeps after solving and before writing
/// its shard, so fault tests can kill it mid-run. Not for production use.
pub const DELAY_ENV: &str = "GAMETABLES_TEST_WORKER_DELAY_MS";

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
    let header = ShardHeader {
        kind: m.kind.clone(),
        job_name: m.name.clone(),
        job_id: m.job_id.clone(),
        sections: Vec::new(),
    };
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
