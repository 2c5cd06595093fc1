//! Impartial games: octal games by code (`octal`, Grundy values and the
//! period proved by the Guy–Smith theorem), and Nim and subtraction games
//! answered in memory. The pure solvers are `crate::solvers::impartial`.
//!
//! - [`kind`]: the job kind `octal`; [`probe`]: Nim, subtraction and
//!   Hackenbush answers, and the `octal` probe ([`probe::octal`]); [`query`]: `gametables query
//!   nim | subtraction | octal`.
//! - [`fullcheck`]: `verify --full` for octal runs (imports no solver).
//! - [`picture`]: G(n) with the period marked; [`sources`]: the works cited.

use std::sync::Arc;

use crate::pipeline::JobKind;
use crate::pipeline::RunView;
use crate::pipeline::probe::blocks::BlockCache;
use crate::pipeline::probe::{Probe, ProbeResult, one_probe};
use crate::pipeline::registry::{Game, StandardJob};

pub mod fullcheck;
pub mod kind;
pub mod layout;
pub mod picture;
pub mod probe;
pub mod query;
pub mod sources;

/// The `octal` kind.
pub const OCTAL: &dyn JobKind = &kind::Octal;

fn probes(runs: Vec<RunView>, cache: Arc<BlockCache>) -> ProbeResult<Vec<Box<dyn Probe>>> {
    let mut out = one_probe(
        probe::octal::OctalProbe::with_cache(cache),
        runs,
        probe::octal::OctalProbe::add_run,
    )?;
    out.push(Box::new(probe::NimProbe));
    out.push(Box::new(probe::SubtractionProbe));
    out.push(Box::new(probe::HackenbushProbe));
    Ok(out)
}

/// The impartial games in the registry.
pub static GAME: Game = Game {
    name: "impartial",
    kinds: &[OCTAL],
    checkers: &[&fullcheck::OctalChecker],
    probes,
    queries: &query::QUERIES,
    works: sources::WORKS,
    standard_jobs: &[StandardJob {
        name: "octal-kayles",
        probe: ("octal", "code=0.77&n=40"),
        query: &["octal", "0.77", "--n", "40"],
    }],
};
