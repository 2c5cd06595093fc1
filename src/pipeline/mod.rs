//! The batch pipeline: job files → plan (a DAG of jobs) → manifests → worker
//! processes → shards → merge → tables and `result.toml` → verify and report.
//!
//! Everything here is generic over [`JobKind`] and names no game: the games
//! plug in through a [`Registry`] (made by `crate::games::registry()`) that
//! the caller hands in. Only this layer knows about files and formats.

pub mod atomic;
pub mod claim_table;
pub mod codec;
pub mod digest;
pub mod error;
pub mod executor;
pub mod fullcheck;
pub mod jobfile;
pub mod kind;
pub mod merge;
#[cfg(feature = "mpi")]
pub mod mpi_ranks;
pub mod plan;
pub mod plots;
pub mod probe;
pub mod ranks;
pub mod registry;
pub mod resources;
pub mod result;
pub mod run;

pub mod run_view;
pub mod rundir;
pub mod shard;
pub mod slurm;
pub mod sources;
pub mod state;
pub mod worker;

pub use error::{Error, Result};
pub use kind::{Claim, ClaimStatus, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
pub use registry::{Game, Registry};
pub use resources::worker_threads;
pub use run_view::RunView;
