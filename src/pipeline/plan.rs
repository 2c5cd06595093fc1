//! Planning: a job file becomes `plan.toml` and one manifest per job.
//!
//! A job's id is the SHA-256 of its canonical identity (schema, kind, name,
//! parameters, input names and ids) written as TOML with sorted keys, so the
//! same job file always gives the same ids, and a changed parameter changes the
//! id of its job and of every job that reads it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::digest::{is_digest, sha256_hex};
use super::error::{Error, Result};
use super::jobfile::{JobFile, MAX_PLAN_JOBS, too_many_jobs};
use super::kind::{DEFAULT_JOB_MEMORY, JobSpec};
use super::resources::{fmt_bytes, fmt_seconds};
use super::rundir::RunDir;
use super::shard::Durability;

/// Version of the plan and manifest formats.
pub const SCHEMA: u32 = 1;

/// An input of a job: another job's name and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputRef {
    /// The input job's name.
    pub name: String,
    /// The input job's id.
    pub id: String,
}

/// `RUN_DIR/manifests/ID.toml`: everything a worker needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Format version ([`SCHEMA`]).
    pub schema: u32,
    /// SHA-256 of the canonical identity (see module docs).
    pub job_id: String,
    /// Job kind.
    pub kind: String,
    /// Job name within the plan.
    pub name: String,
    /// Output shard, relative to the run directory.
    pub output: String,
    /// Jobs whose shards this one reads.
    pub inputs: Vec<InputRef>,
    /// The job's parameters.
    pub params: toml::Table,
    /// Processes the job is split over ([`JobSpec::ranks`]; not part of the
    /// id, written only when more than 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ranks: u32,
}

#[derive(Serialize)]
struct Identity<'a> {
    schema: u32,
    kind: &'a str,
    name: &'a str,
    inputs: &'a [InputRef],
    params: &'a toml::Table,
}

/// One job in `plan.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlannedJob {
    /// Name.
    pub name: String,
    /// Id.
    pub id: String,
    /// Cost estimate (scheduling only).
    pub cost: u64,
    /// Estimated peak memory of its worker, bytes ([`JobSpec::memory`]; not
    /// part of the id).
    #[serde(default = "default_memory")]
    pub memory: u64,
    /// Threads it can use ([`JobSpec::threads`]; not part of the id).
    #[serde(default = "one")]
    pub threads: u32,
    /// Estimated shard size, bytes (not part of the id).
    #[serde(default)]
    pub shard_bytes: u64,
    /// Estimated single-core CPU seconds (not part of the id).
    #[serde(default)]
    pub cpu_seconds: u64,
    /// Input jobs.
    pub inputs: Vec<InputRef>,
    /// Parameters.
    pub params: toml::Table,
    /// Processes it is split over ([`JobSpec::ranks`]; not part of the id,
    /// written only when more than 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub ranks: u32,
}

/// `RUN_DIR/plan.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    /// Format version ([`SCHEMA`]).
    pub schema: u32,
    /// The job file's name (file stem).
    pub job_file: String,
    /// Job kind.
    pub kind: String,
    /// The job file's parameters.
    pub params: toml::Table,
    /// Jobs in dependency order.
    pub jobs: Vec<PlannedJob>,
}

fn default_memory() -> u64 {
    DEFAULT_JOB_MEMORY
}

fn one() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_one(n: &u32) -> bool {
    *n == 1
}

fn job_id(kind: &str, name: &str, inputs: &[InputRef], params: &toml::Table) -> String {
    let canonical = toml::to_string(&Identity {
        schema: SCHEMA,
        kind,
        name,
        inputs,
        params,
    })
    .expect("identity serializes");
    sha256_hex(canonical.as_bytes())
}

impl PlannedJob {
    /// The same name, id, inputs and parameters (estimates aside).
    fn same_computation(&self, other: &PlannedJob) -> bool {
        (&self.name, &self.id, &self.inputs, &self.params)
            == (&other.name, &other.id, &other.inputs, &other.params)
    }
}

impl PlanFile {
    /// Each job's place in [`PlanFile::jobs`], by job id.
    pub fn index_by_id(&self) -> std::collections::BTreeMap<&str, usize> {
        self.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| (j.id.as_str(), i))
            .collect()
    }

    /// Whether `other` is the same computation: the same job file, kind,
    /// parameters and jobs (names, ids, inputs, parameters), whatever the
    /// estimates (cost, memory, threads, shard size, CPU), which are not
    /// part of a job's id.
    pub fn same_computation(&self, other: &PlanFile) -> bool {
        self.same_header(other)
            && self.jobs.len() == other.jobs.len()
            && self
                .jobs
                .iter()
                .zip(&other.jobs)
                .all(|(a, b)| a.same_computation(b))
    }

    /// Whether this plan holds every job of `old` (the same job file, kind
    /// and parameters, each old job present with the same id, inputs and
    /// parameters) and more: a selection that grew, e.g. an engine job
    /// file's `job_memory` raised. The old shards stay valid (a job's id
    /// names its computation), so a run resumes from them.
    pub fn extends(&self, old: &PlanFile) -> bool {
        self.same_header(old)
            && self.jobs.len() > old.jobs.len()
            && old
                .jobs
                .iter()
                .all(|o| self.jobs.iter().any(|n| n.same_computation(o)))
    }

    /// The same schema, job file, kind and parameters.
    fn same_header(&self, other: &PlanFile) -> bool {
        (self.schema, &self.job_file, &self.kind, &self.params)
            == (other.schema, &other.job_file, &other.kind, &other.params)
    }

    /// Assigns ids to the jobs of a job file (at most [`MAX_PLAN_JOBS`]).
    /// Time and memory are linear in the number of jobs and their inputs.
    ///
    /// # Errors
    /// [`Error::JobFile`] if a job name repeats or an input is not an earlier job.
    pub fn from_job_file(jf: &JobFile) -> Result<PlanFile> {
        if jf.jobs.len() > MAX_PLAN_JOBS {
            return Err(bad_plan(jf, too_many_jobs(jf.jobs.len())));
        }
        let mut jobs: Vec<PlannedJob> = Vec::with_capacity(jf.jobs.len());
        // Each name's index in `jobs`: a job file of 10⁵ jobs must not take
        // 10¹⁰ name comparisons.
        let mut index: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(jf.jobs.len());
        for spec in &jf.jobs {
            if index.contains_key(spec.name.as_str()) {
                return Err(bad_plan(jf, format!("job name `{}` repeats", spec.name)));
            }
            let inputs = spec
                .inputs
                .iter()
                .map(|n| {
                    index
                        .get(n.as_str())
                        .map(|&i| InputRef {
                            name: n.clone(),
                            id: jobs[i].id.clone(),
                        })
                        .ok_or_else(|| {
                            bad_plan(
                                jf,
                                format!("job `{}` reads `{n}`, not an earlier job", spec.name),
                            )
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            let id = job_id(&jf.kind, &spec.name, &inputs, &spec.params);
            index.insert(&spec.name, jobs.len());
            jobs.push(PlannedJob {
                name: spec.name.clone(),
                id,
                cost: spec.cost,
                memory: spec.memory,
                threads: spec.threads.max(1),
                shard_bytes: spec.shard_bytes,
                cpu_seconds: spec.cpu_seconds,
                inputs,
                params: spec.params.clone(),
                ranks: spec.ranks.max(1),
            });
        }
        Ok(PlanFile {
            schema: SCHEMA,
            job_file: jf.name.clone(),
            kind: jf.kind.clone(),
            params: jf.params.clone(),
            jobs,
        })
    }

    /// The manifest of job `j`.
    pub fn manifest(&self, j: &PlannedJob) -> Manifest {
        Manifest {
            schema: SCHEMA,
            job_id: j.id.clone(),
            kind: self.kind.clone(),
            name: j.name.clone(),
            output: RunDir::shard_rel(&j.id),
            inputs: j.inputs.clone(),
            params: j.params.clone(),
            ranks: j.ranks,
        }
    }

    /// The jobs as the kind sees them.
    pub fn specs(&self) -> Vec<JobSpec> {
        self.jobs.iter().map(PlannedJob::spec).collect()
    }

    /// What the plan needs: job count, the largest job and the totals.
    pub fn resources(&self) -> PlanResources {
        let largest = self
            .jobs
            .iter()
            .max_by_key(|j| (j.memory, std::cmp::Reverse(j.name.as_str())))
            .map(|j| (j.name.clone(), j.memory));
        PlanResources {
            jobs: self.jobs.len(),
            largest,
            max_threads: self.jobs.iter().map(|j| j.threads).max().unwrap_or(1),
            shard_bytes: self.jobs.iter().map(|j| j.shard_bytes).sum(),
            cpu_seconds: self.jobs.iter().map(|j| j.cpu_seconds).sum(),
            longest: self
                .jobs
                .iter()
                .max_by_key(|j| (j.cpu_seconds, std::cmp::Reverse(j.name.as_str())))
                .filter(|j| j.cpu_seconds > 0)
                .map(|j| (j.name.clone(), j.cpu_seconds)),
        }
    }

    /// The wall time of the plan on `nodes` nodes of `cores` cores each,
    /// seconds, by a list schedule of its estimates: jobs start in plan
    /// order as soon as their inputs are done and enough cores are free;
    /// a job takes `min(threads, cores)` cores on each of its ranks and
    /// lasts its CPU estimate over those cores. Memory is not scheduled
    /// (every task fits its node when the plan was split to fit).
    pub fn wall_seconds(&self, nodes: u32, cores: u32) -> f64 {
        let total = f64::from(nodes.max(1)) * f64::from(cores.max(1));
        let index = self.index_by_id();
        let mut end = vec![f64::INFINITY; self.jobs.len()];
        // (time a job ends, cores it frees)
        let mut running: Vec<(f64, f64)> = Vec::new();
        let mut free = total;
        let mut now = 0.0f64;
        let mut waiting: Vec<usize> = (0..self.jobs.len()).collect();
        while !waiting.is_empty() {
            let mut started = false;
            let mut k = 0;
            while k < waiting.len() {
                let i = waiting[k];
                let j = &self.jobs[i];
                let ready = j
                    .inputs
                    .iter()
                    .all(|inp| index.get(inp.id.as_str()).is_none_or(|&d| end[d] <= now));
                let want = (f64::from(j.threads.clamp(1, cores.max(1)))
                    * f64::from(j.ranks.max(1)))
                .min(total);
                if ready && want <= free {
                    let t = j.cpu_seconds as f64 / want;
                    end[i] = now + t;
                    running.push((now + t, want));
                    free -= want;
                    waiting.remove(k);
                    started = true;
                } else {
                    k += 1;
                }
            }
            if !started {
                // Advance to the next job that ends.
                let Some(pos) = running
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1.0.total_cmp(&b.1.0))
                    .map(|(p, _)| p)
                else {
                    break;
                };
                let (t, c) = running.swap_remove(pos);
                now = now.max(t);
                free += c;
            }
        }
        end.iter()
            .copied()
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max)
    }

    /// Refuses a plan with a job whose estimated memory exceeds `budget`
    /// bytes, naming the largest such job, its estimate and the budget.
    ///
    /// # Errors
    /// [`Error::Job`] for the first (largest) job that cannot fit.
    pub fn check_memory(&self, budget: u64) -> Result<()> {
        let all = |j: &PlannedJob| j.memory * u64::from(j.ranks);
        let over: Vec<&PlannedJob> = self.jobs.iter().filter(|j| all(j) > budget).collect();
        if let Some(j) = over.iter().max_by_key(|j| all(j)) {
            return Err(Error::job(
                &self.job_file,
                format!(
                    "job {} needs an estimated {} of memory, more than the budget of {} \
                     ({} job(s) over it); give more with --memory if the machine has it, \
                     or run it on a cluster (--executor slurm asks for the memory)",
                    j.name,
                    if j.ranks > 1 {
                        format!(
                            "{} a rank × {} ranks = {}",
                            fmt_bytes(j.memory),
                            j.ranks,
                            fmt_bytes(all(j))
                        )
                    } else {
                        fmt_bytes(j.memory)
                    },
                    fmt_bytes(budget),
                    over.len()
                ),
            ));
        }
        Ok(())
    }

    /// Reads `RUN_DIR/plan.toml`.
    ///
    /// # Errors
    /// [`Error::RunDir`] if absent (not planned yet); [`Error::Manifest`] if malformed.
    pub fn load(dir: &RunDir) -> Result<PlanFile> {
        dir.check_not_a_file()?;
        let path = dir.plan_path();
        let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound if !dir.root().exists() => Error::RunDir {
                path: dir.root().to_path_buf(),
                message: "does not exist (run `gametables run JOB_FILE` to make a run directory; \
                          `runs/NAME` is where it goes by default)"
                    .into(),
            },
            std::io::ErrorKind::NotFound => Error::RunDir {
                path: dir.root().to_path_buf(),
                message: "no plan.toml: not a run directory (run `gametables plan` or `gametables run` first)".into(),
            },
            _ => Error::io(&path)(e),
        })?;
        let plan: PlanFile = toml::from_str(&text).map_err(|e| Error::Manifest {
            path: path.clone(),
            message: e.message().replace('\n', " "),
        })?;
        if plan.schema != SCHEMA {
            return Err(Error::Manifest {
                path,
                message: format!("schema {} (this build reads {SCHEMA})", plan.schema),
            });
        }
        for j in &plan.jobs {
            if j.id != job_id(&plan.kind, &j.name, &j.inputs, &j.params) {
                return Err(Error::Manifest {
                    path,
                    message: format!("job `{}`: id does not match its content", j.name),
                });
            }
        }
        Ok(plan)
    }

    /// The job called `name`.
    pub fn job(&self, name: &str) -> Option<&PlannedJob> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

fn bad_plan(jf: &JobFile, message: String) -> Error {
    Error::JobFile {
        path: jf.path.clone(),
        line: 0,
        col: 0,
        message,
    }
}

/// Writes `plan.toml` and the manifests into the run directory.
///
/// An existing plan with other content is refused unless `force` (then it is
/// replaced; shards of jobs that no longer exist stay but are not used).
///
/// # Errors
/// [`Error::RunDir`] if the directory holds a different plan and not `force`;
/// [`Error::Io`] on write failures.
pub fn write_plan(dir: &RunDir, plan: &PlanFile, force: bool) -> Result<()> {
    dir.create()?;
    let text = toml::to_string(plan).expect("plan serializes");
    let path = dir.plan_path();
    let old = std::fs::read_to_string(&path).ok();
    let plan_is_new = old.as_deref() != Some(text.as_str());
    // Only the estimates differ (a newer build estimates better): the same
    // computation, so the run resumes with the new estimates.
    let old_plan = old
        .as_deref()
        .and_then(|o| toml::from_str::<PlanFile>(o).ok());
    let estimates_only = plan_is_new && old_plan.as_ref().is_some_and(|o| o.same_computation(plan));
    // More jobs, every old one kept with its id (a selection that grew):
    // the finished shards stay; the merge outputs are stale.
    let grown = plan_is_new && old_plan.as_ref().is_some_and(|o| plan.extends(o));
    if let Some(old) = &old
        && plan_is_new
        && !estimates_only
        && !grown
        && !force
    {
        let old_name = toml::from_str::<PlanFile>(old)
            .map(|p| p.job_file)
            .unwrap_or_else(|_| "?".into());
        return Err(Error::RunDir {
            path: dir.root().to_path_buf(),
            message: format!(
                "holds a different plan (job file `{old_name}`, or its parameters or jobs changed); \
                 use another --run-dir, or replace the plan with `gametables plan JOB_FILE --run-dir DIR --force` \
                 (then `run` keeps the shards of the jobs both plans have: a job's id names its computation)"
            ),
        });
    }
    if plan_is_new && !estimates_only {
        // A new or replaced plan: merge outputs of an older plan are stale.
        for stale in [dir.result_path(), dir.report_path()] {
            let _ = std::fs::remove_file(stale);
        }
        let _ = std::fs::remove_dir_all(dir.tables_dir());
        dir.create()?;
    }
    // Manifests first, without fsync each (a plan of n jobs paid 2n fsyncs),
    // then one syncfs, then plan.toml with its own fsync: a plan.toml on disk
    // implies its manifests are on disk too.
    let mut wrote = false;
    for j in &plan.jobs {
        let m = toml::to_string(&plan.manifest(j)).expect("manifest serializes");
        let mp = dir.manifest_path(&j.id);
        if std::fs::read_to_string(&mp).ok().as_deref() != Some(m.as_str()) {
            super::atomic::write_atomic_with(&mp, m.as_bytes(), Durability::Deferred)?;
            wrote = true;
        }
    }
    // Also when no manifest changed: an interrupted earlier call may have
    // left them written but not yet synced.
    if wrote || plan_is_new {
        dir.sync()?;
    }
    if plan_is_new {
        super::atomic::write_atomic(&path, text.as_bytes())?;
    }
    Ok(())
}

impl Manifest {
    /// Reads and checks a manifest: schema, id recomputed from content,
    /// output path `shards/ID.shard`, input ids well formed.
    ///
    /// # Errors
    /// [`Error::Manifest`] naming the file and the problem; a path that
    /// leaves the run directory is refused.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
        let bad = |message: String| Error::Manifest {
            path: path.to_path_buf(),
            message,
        };
        let m: Manifest = toml::from_str(&text).map_err(|e| bad(e.message().replace('\n', " ")))?;
        if m.schema != SCHEMA {
            return Err(bad(format!(
                "schema {} (this build reads {SCHEMA})",
                m.schema
            )));
        }
        RunDir::new(".")
            .resolve(&m.output)
            .map_err(|_| bad(format!("output `{}` leaves the run directory", m.output)))?;
        if !is_digest(&m.job_id) || m.output != RunDir::shard_rel(&m.job_id) {
            return Err(bad(format!(
                "output must be `shards/<job_id>.shard`, found `{}`",
                m.output
            )));
        }
        if let Some(i) = m.inputs.iter().find(|i| !is_digest(&i.id)) {
            return Err(bad(format!(
                "input `{}` has a malformed id `{}`",
                i.name, i.id
            )));
        }
        if m.job_id != job_id(&m.kind, &m.name, &m.inputs, &m.params) {
            return Err(bad(
                "job_id does not match the manifest content (edited?)".into()
            ));
        }
        Ok(m)
    }

    /// The header of the job's shard (its sections are added as written).
    pub fn shard_header(&self) -> super::shard::ShardHeader {
        super::shard::ShardHeader {
            kind: self.kind.clone(),
            job_name: self.name.clone(),
            job_id: self.job_id.clone(),
            sections: Vec::new(),
        }
    }

    /// The job as the kind sees it (resource estimates are not in manifests:
    /// defaults).
    pub fn spec(&self) -> JobSpec {
        let mut j = JobSpec::new(
            self.name.clone(),
            self.params.clone(),
            self.inputs.iter().map(|i| i.name.clone()).collect(),
            0,
        );
        j.ranks = self.ranks;
        j
    }
}

impl PlannedJob {
    /// The job as the kind sees it.
    pub fn spec(&self) -> JobSpec {
        JobSpec {
            name: self.name.clone(),
            params: self.params.clone(),
            inputs: self.inputs.iter().map(|i| i.name.clone()).collect(),
            cost: self.cost,
            memory: self.memory,
            threads: self.threads,
            shard_bytes: self.shard_bytes,
            cpu_seconds: self.cpu_seconds,
            ranks: self.ranks,
        }
    }
}

/// What a plan needs, from its jobs' estimates ([`PlanFile::resources`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanResources {
    /// Number of jobs.
    pub jobs: usize,
    /// The job with the largest memory estimate: name and bytes.
    pub largest: Option<(String, u64)>,
    /// The most threads any job can use.
    pub max_threads: u32,
    /// Sum of the shard size estimates, bytes.
    pub shard_bytes: u64,
    /// Sum of the single-core CPU time estimates, seconds.
    pub cpu_seconds: u64,
    /// The job with the largest CPU time estimate: name and seconds.
    pub longest: Option<(String, u64)>,
}

impl std::fmt::Display for PlanResources {
    /// One line, e.g. `14 job(s); largest box-14x14 ≈ 44 MiB; shards ≈ 3.1 MiB;
    /// CPU ≈ 2 s (longest box-14x14 ≈ 1 s)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} job(s)", self.jobs)?;
        if let Some((name, m)) = &self.largest {
            write!(f, "; largest {name} ≈ {} peak memory", fmt_bytes(*m))?;
        }
        if self.max_threads > 1 {
            write!(f, ", up to {} threads a job", self.max_threads)?;
        }
        write!(f, "; shards ≈ {} in all", fmt_bytes(self.shard_bytes))?;
        write!(f, "; CPU ≈ {}", fmt_seconds(self.cpu_seconds))?;
        if let Some((name, s)) = &self.longest {
            write!(f, " (longest {name} ≈ {})", fmt_seconds(*s))?;
        }
        Ok(())
    }
}

/// The run directory a manifest belongs to: the parent of its `manifests/`
/// (also for a bare file name given inside `manifests/`).
pub fn run_dir_of_manifest(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    abs.parent()
        .and_then(Path::parent)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, cpu: u64, threads: u32, ranks: u32, after: &[&str]) -> PlannedJob {
        PlannedJob {
            name: name.into(),
            id: name.into(),
            cost: 0,
            memory: 0,
            threads,
            shard_bytes: 0,
            cpu_seconds: cpu,
            inputs: after
                .iter()
                .map(|a| InputRef {
                    name: a.to_string(),
                    id: a.to_string(),
                })
                .collect(),
            params: toml::Table::new(),
            ranks,
        }
    }

    fn plan(jobs: Vec<PlannedJob>) -> PlanFile {
        PlanFile {
            schema: SCHEMA,
            job_file: "t".into(),
            kind: "k".into(),
            params: toml::Table::new(),
            jobs,
        }
    }

    /// The list schedule: two independent jobs share the cores, a chain
    /// waits, a split job takes its ranks' cores.
    #[test]
    fn wall_time_is_a_list_schedule_of_the_estimates() {
        let two = plan(vec![job("a", 10, 1, 1, &[]), job("b", 10, 1, 1, &[])]);
        assert_eq!(two.wall_seconds(1, 1), 20.0);
        assert_eq!(two.wall_seconds(1, 2), 10.0);
        let chain = plan(vec![job("a", 10, 1, 1, &[]), job("b", 10, 1, 1, &["a"])]);
        assert_eq!(chain.wall_seconds(4, 8), 20.0);
        let split = plan(vec![job("a", 64, 4, 4, &[])]);
        assert_eq!(split.wall_seconds(4, 4), 4.0);
        assert_eq!(split.wall_seconds(1, 2), 32.0);
    }
}
