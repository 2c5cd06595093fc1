//! An open run directory: its plan, its kind and its jobs, with read access
//! to its shards and tables ([`RunAccess`]).

use std::path::Path;

use super::error::{Error, Result};
use super::kind::Kinds;
use super::kind::{JobKind, JobSpec, RunAccess, ShardSource};
use super::plan::PlanFile;
use super::rundir::RunDir;
use super::shard::{Shard, ShardFile};
use super::state::{open_shard_file, read_job_shard};

/// A run directory opened for reading: its plan, kind and jobs.
pub struct RunView {
    /// The run directory.
    pub dir: RunDir,
    /// Its plan.
    pub plan: PlanFile,
    /// The kind.
    pub kind: &'static dyn JobKind,
    specs: Vec<JobSpec>,
}

impl RunView {
    /// Opens a planned run directory of any kind in `registry`.
    ///
    /// # Errors
    /// If `plan.toml` is missing or malformed, or names a kind this build
    /// does not know.
    pub fn open(dir: &Path, registry: &dyn Kinds) -> Result<RunView> {
        let rd = RunDir::new(dir);
        let plan = PlanFile::load(&rd)?;
        let kind = registry.kind(&plan.kind).ok_or_else(|| Error::Manifest {
            path: rd.plan_path(),
            message: format!("unknown kind `{}`", plan.kind),
        })?;
        Self::with_kind(rd, plan, kind)
    }

    /// Opens a planned run directory that must hold a run of `kind` (what a
    /// game's probe asks for its own runs).
    ///
    /// # Errors
    /// As [`RunView::open`]; [`Error::Job`] if the run is of another kind.
    pub fn open_as(dir: &Path, kind: &'static dyn JobKind) -> Result<RunView> {
        let rd = RunDir::new(dir);
        let plan = PlanFile::load(&rd)?;
        if plan.kind != kind.name() {
            return Err(Error::job(
                kind.name(),
                format!(
                    "{} is a `{}` run, not {}",
                    dir.display(),
                    plan.kind,
                    kind.name()
                ),
            ));
        }
        Self::with_kind(rd, plan, kind)
    }

    fn with_kind(dir: RunDir, plan: PlanFile, kind: &'static dyn JobKind) -> Result<RunView> {
        let specs = plan.specs();
        Ok(RunView {
            dir,
            plan,
            kind,
            specs,
        })
    }
}

impl ShardSource for RunView {
    fn load(&self, name: &str) -> Result<Shard> {
        let j = self
            .plan
            .job(name)
            .ok_or_else(|| Error::job(name, "no such job in this plan"))?;
        read_job_shard(&self.dir, self.kind, j)
    }

    fn open(&self, name: &str) -> Result<ShardFile> {
        let j = self
            .plan
            .job(name)
            .ok_or_else(|| Error::job(name, "no such job in this plan"))?;
        open_shard_file(&self.dir, &self.plan.kind, &j.name, &j.id)
    }
}

impl RunAccess for RunView {
    fn params(&self) -> &toml::Table {
        &self.plan.params
    }
    fn jobs(&self) -> &[JobSpec] {
        &self.specs
    }
    fn table(&self, name: &str) -> Result<Vec<u8>> {
        let p = self.dir.tables_dir().join(name);
        std::fs::read(&p).map_err(Error::io(&p))
    }
}
