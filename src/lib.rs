//! gametables: exhaustive solvers for combinatorial games and a batch pipeline
//! that runs them as jobs, writes checksummed shards, merges and verifies the
//! global tables, and checks them against published results.
//!
//! - [`solvers`]: pure rules and solvers, one folder per game (no I/O).
//! - [`games`]: one folder per game joining its solver to the pipeline (job
//!   kinds, probes, full checkers, claims, pictures), and the registry
//!   [`games::GAMES`].
//! - [`pipeline`]: job files, planning, manifests, shards, executors, merge,
//!   verify, report; generic over [`pipeline::JobKind`].
//! - [`plot`]: pictures of merged tables (SVG and PNG), drawn with plotters.
//! - [`cli`]: the `gametables` command line.
//! - [`output`]: terminal lines that never panic (`outln!`, `errln!`).
//! - [`util`]: small helpers shared by folders that must not depend on each
//!   other.

#[macro_use]
pub mod output;
pub mod cli;
pub mod games;
pub mod pipeline;
pub mod plot;
pub mod serve;
pub mod solvers;
pub mod util;
