//! The `run` use case: job files planned, their jobs run by an executor
//! (local worker processes or Slurm), merged, checked against the reference
//! manifest beside them and reported. The CLI parses the options and prints
//! the [`RunEvent`]s; everything else is here.
//!
//! Steps for each job file, in order (every job file is read and planned
//! first, so a typo in the last one is reported before the first one runs):
//! the reference manifest (`manifests/NAME.toml` beside `jobs/`, used when
//! it was made from the same plan), the memory check (local), the plan
//! written under the run directory's lock, the executor, then merge and the
//! kind's checks (or the full verify of a run merged by a Slurm job), and
//! `report.md`.

use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use super::executor::{LocalOptions, RunSummary, run_local};
use super::jobfile::read_job_file_split;
use super::kind::Claim;
use super::merge;
use super::plan::{PlanFile, write_plan};
use super::registry::Registry;
use super::result::ResultFile;
use super::run_view::RunView;
use super::rundir::RunDir;
use super::slurm::{self, SlurmOptions, SlurmOutcome};

/// What `run` was asked.
pub struct RunRequest {
    /// The job files, in order.
    pub job_files: Vec<PathBuf>,
    /// The run directory (only with a single job file; default
    /// `runs/NAME`).
    pub run_dir: Option<PathBuf>,
    /// Local execution (`None`: Slurm).
    pub local: Option<LocalOptions>,
    /// Slurm execution.
    pub slurm: Option<SlurmOptions>,
    /// With Slurm: print the scripts instead of submitting them.
    pub dry_run: bool,
    /// Recompute every job, even those whose shards verify.
    pub force: bool,
    /// Which jobs are split over ranks ([`crate::pipeline::kind::SplitPolicy`]).
    pub split: super::kind::SplitPolicy,
}

/// What happened to one job file.
pub enum RunEvent<'a> {
    /// A reference manifest exists but was made from another plan.
    ReferenceNotCompared {
        /// The reference manifest.
        reference: &'a Path,
    },
    /// The Slurm scripts of a dry run.
    DryRun {
        /// What `sbatch` would be given.
        text: String,
    },
    /// The plan is written and the executor starts.
    Started {
        /// The job file's name.
        name: &'a str,
        /// Its plan.
        plan: &'a PlanFile,
        /// Its run directory.
        run_dir: &'a Path,
    },
    /// Submitted to Slurm and left there (`--detach`).
    Detached {
        /// The job file's name.
        name: &'a str,
        /// The run directory.
        run_dir: &'a Path,
        /// The submission's number.
        submission: u32,
        /// The Slurm job ids.
        slurm_ids: Vec<String>,
    },
    /// Run, merged, checked and reported.
    Finished {
        /// The job file's name.
        name: &'a str,
        /// Its run directory.
        dir: &'a RunDir,
        /// What the executor did.
        summary: RunSummary,
        /// Seconds from the start of the executor to the report.
        seconds: f64,
        /// The merged result.
        result: Box<ResultFile>,
        /// The reference it matched, if one was compared.
        reference: Option<PathBuf>,
        /// Where the reference was looked for ([`reference_path`]).
        reference_sought: PathBuf,
        /// The claims of `report.md`.
        claims: Vec<Claim>,
    },
}

/// Where the reference manifest of job file `job_file` named `name` is
/// looked for: `manifests/NAME.toml` beside the job file's folder
/// (`jobs/x.toml` → `manifests/x.toml`, `/data/jobs/x.toml` →
/// `/data/manifests/x.toml`), the folder removed by name so that messages
/// show no `..`; a job file in the working directory looks in
/// `../manifests/`.
pub fn reference_path(job_file: &Path, name: &str) -> PathBuf {
    let file = format!("{name}.toml");
    let parent = job_file.parent().unwrap_or(Path::new(""));
    let base = match parent.components().next_back() {
        None => PathBuf::from(".."),
        Some(std::path::Component::Normal(_)) => {
            parent.parent().unwrap_or(Path::new("")).to_path_buf()
        }
        Some(_) => parent.join(".."),
    };
    base.join("manifests").join(file)
}

/// [`reference_path`] if that file exists.
pub fn reference_for(job_file: &Path, name: &str) -> Option<PathBuf> {
    let p = reference_path(job_file, name);
    p.is_file().then_some(p)
}

/// Runs every job file of `req`, telling `on` what happens.
///
/// # Errors
/// A job file that does not parse or plan, two job files sharing a run
/// directory, an unusable reference manifest, a job above the memory
/// budget, an executor's error (a failed job, Slurm refusing), a merge or
/// check that fails; what ran before is kept (resume skips it).
pub fn run(registry: &Registry, req: &RunRequest, on: &mut dyn FnMut(RunEvent)) -> Result<()> {
    let mut planned: Vec<(PathBuf, PlanFile, PathBuf)> = Vec::new();
    for job_file in &req.job_files {
        let jf = read_job_file_split(job_file, registry, &req.split)?;
        let plan = PlanFile::from_job_file(&jf)?;
        let run_dir = req
            .run_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("runs").join(&jf.name));
        if let Some((other, _, _)) = planned.iter().find(|(_, _, d)| *d == run_dir) {
            return Err(Error::RunDir {
                path: run_dir.clone(),
                message: format!(
                    "{} and {} would share this run directory; run them separately with --run-dir",
                    other.display(),
                    job_file.display()
                ),
            });
        }
        // A job that cannot fit here is refused before any job file runs
        // (not after the ones before it, which may take hours).
        if let Some(local) = &req.local {
            plan.check_memory(local.memory_budget)?;
        }
        planned.push((job_file.clone(), plan, run_dir));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Error::job("run", format!("starting the tokio runtime: {e}")))?;
    for (job_file, plan, run_dir) in &planned {
        run_one(registry, req, &rt, job_file, plan, run_dir, on)?;
    }
    Ok(())
}

fn run_one(
    registry: &Registry,
    req: &RunRequest,
    rt: &tokio::runtime::Runtime,
    job_file: &Path,
    plan: &PlanFile,
    run_dir: &Path,
    on: &mut dyn FnMut(RunEvent),
) -> Result<()> {
    let name = &plan.job_file;
    let kind = registry
        .kind(&plan.kind)
        .ok_or_else(|| Error::job(name, format!("unknown kind `{}`", plan.kind)))?;
    let reference = same_plan_reference(job_file, plan, on)?;
    let dir = RunDir::new(run_dir);
    // A job that cannot fit here was refused in `run`, before any job file ran.
    if let (Some(o), true) = (&req.slurm, req.dry_run) {
        on(RunEvent::DryRun {
            text: slurm::dry_run(&dir, plan, kind, o)?,
        });
        return Ok(());
    }
    if let Some(o) = &req.slurm {
        slurm::check_cluster(o)?;
    }
    let lock = dir.lock()?;
    if let Some(o) = &req.slurm {
        slurm::check_no_active_submission(&dir, o)?;
    }
    write_plan(&dir, plan, req.force)?;
    on(RunEvent::Started {
        name,
        plan,
        run_dir,
    });
    // Decompressed child layers of an earlier run are not trusted (they
    // are made again); with --force the split jobs' checkpoints go too.
    let _ = std::fs::remove_dir_all(run_dir.join("scratch"));
    if req.force {
        let _ = std::fs::remove_dir_all(run_dir.join("ranks"));
    }
    let t0 = std::time::Instant::now();
    let (summary, merged) = match (&req.local, &req.slurm) {
        (_, Some(o)) => match slurm::run_slurm(&dir, plan, kind, o, lock)? {
            SlurmOutcome::Finished { summary, merged } => (summary, merged),
            SlurmOutcome::Detached {
                submission,
                slurm_ids,
            } => {
                on(RunEvent::Detached {
                    name,
                    run_dir,
                    submission,
                    slurm_ids,
                });
                return Ok(());
            }
        },
        (Some(local), None) => (rt.block_on(run_local(&dir, plan, kind, local))?, false),
        (None, None) => return Err(Error::job(name, "no executor given")),
    };
    // Every job is done: the decompressed child layers split jobs mapped
    // (`scratch/`) and their ranks' empty message folders go.
    let _ = std::fs::remove_dir_all(run_dir.join("scratch"));
    let _ = std::fs::remove_dir_all(run_dir.join("ranks"));
    let view = RunView::open(run_dir, registry)?;
    // Merged here: the merge decoded and checked every shard, so only the
    // kind's checks and the reference remain. Merged by a Slurm job: the
    // full verify.
    let result = if merged {
        merge::verify(&view, reference.as_deref())?
    } else {
        let m = merge::merge(&view)?;
        merge::check_merged(&view, &m, reference.as_deref())?
    };
    let claims = merge::report(&view, &registry.works())?;
    on(RunEvent::Finished {
        name,
        dir: &dir,
        summary,
        seconds: t0.elapsed().as_secs_f64(),
        result: Box::new(result),
        reference,
        reference_sought: reference_path(job_file, &plan.job_file),
        claims,
    });
    Ok(())
}

/// The reference manifest of `job_file` if it exists and was made from the
/// same plan (same job ids); a reference that exists must be intact.
fn same_plan_reference(
    job_file: &Path,
    plan: &PlanFile,
    on: &mut dyn FnMut(RunEvent),
) -> Result<Option<PathBuf>> {
    let Some(r) = reference_for(job_file, &plan.job_file) else {
        return Ok(None);
    };
    let rf = ResultFile::load(&r).map_err(|e| Error::Manifest {
        path: r.clone(),
        message: format!("reference manifest is unusable: {e}"),
    })?;
    let same_plan = rf.shards.len() == plan.jobs.len()
        && rf.shards.iter().zip(&plan.jobs).all(|(s, j)| s.id == j.id);
    if same_plan {
        Ok(Some(r))
    } else {
        on(RunEvent::ReferenceNotCompared { reference: &r });
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::reference_path;
    use std::path::{Path, PathBuf};

    /// The reference manifest is looked for beside the job file's folder,
    /// and the path shown has no `..` where a folder name can be removed.
    #[test]
    fn reference_path_is_beside_the_job_files_folder() {
        let r = |j: &str| reference_path(Path::new(j), "x");
        assert_eq!(r("jobs/x.toml"), PathBuf::from("manifests/x.toml"));
        assert_eq!(
            r("/data/jobs/x.toml"),
            PathBuf::from("/data/manifests/x.toml")
        );
        assert_eq!(r("/tmp/x.toml"), PathBuf::from("/manifests/x.toml"));
        assert_eq!(r("x.toml"), PathBuf::from("../manifests/x.toml"));
        assert_eq!(r("../jobs/x.toml"), PathBuf::from("../manifests/x.toml"));
        assert_eq!(r("../x.toml"), PathBuf::from("../../manifests/x.toml"));
    }
}
