//! Three-row Chomp: Brouwer's recurrence f(q, r) over tiles of the (q, r)
//! triangle (`three-row`). The pure solver is `crate::solvers::three_row`.
//!
//! - [`kind`]: the job kind (tiles, merge, row classes, claims, plots).
//! - [`probe`]: the `three-row` probe; [`query`]: `gametables query three-row`.
//! - [`fullcheck`]: `verify --full` from the rules (imports no solver).
//! - [`picture`]: f(q, r) − q with the row classes.

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

/// The `three-row` kind.
pub const THREE_ROW: &dyn JobKind = &kind::ThreeRow;

fn probes(runs: Vec<RunView>, cache: Arc<BlockCache>) -> ProbeResult<Vec<Box<dyn Probe>>> {
    one_probe(
        probe::ThreeRowProbe::with_cache(cache),
        runs,
        probe::ThreeRowProbe::add_run,
    )
}

/// Three-row Chomp in the registry. Its claims cite the Chomp works
/// (`crate::games::chomp::sources`).
pub static GAME: Game = Game {
    name: "three-row",
    kinds: &[THREE_ROW],
    checkers: &[&fullcheck::ThreeRowChecker],
    probes,
    queries: &[query::QUERY],
    works: &[],
    standard_jobs: &[StandardJob {
        name: "three-row-16000",
        probe: ("three-row", "q=100&r=7"),
        query: &["three-row", "--q", "100", "--r", "7"],
    }],
};
