//! The batch pipeline: job files → plan (a DAG of jobs) → manifests → worker
//! processes → shards → merge → tables and `result.toml` → verify and report.
//!
//! Everything here is generic over [`JobKind`]; the games plug in through
//! `kinds/`. Only this layer knows about files and formats.

pub mod codec;
pub mod digest;
pub mod error;
pub mod executor;
pub mod fullcheck;
pub mod jobfile;
pub mod kind;
pub mod kinds;
pub mod merge;
pub mod plan;
pub mod plots;
pub mod probe;
pub mod resources;
pub mod rundir;
pub mod shard;
pub mod slurm;
pub mod sources;
pub mod worker;

pub use error::{Error, Result};
pub use kind::{Claim, ClaimStatus, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
pub use resources::worker_threads;
