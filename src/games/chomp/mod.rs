//! Chomp: rectangles in m×n boxes (`chomp-boxes`), positions by number of
//! squares (`chomp-census`) and Sprague–Grundy values (`chomp-grundy`).
//! The pure solver is `crate::solvers::chomp`.
//!
//! - [`kind`]: the job kinds `chomp-boxes`, `chomp-census` and
//!   `chomp-grundy`, and the report notes on first-player policies.
//! - [`probe`]: the `chomp` probe (winning bites; Grundy values in
//!   [`probe::grundy`]); [`query`]: `gametables query chomp`.
//! - [`fullcheck`]: `verify --full` for the three kinds (imports no solver).
//! - [`picture`]: the census chart; [`sources`]: the works the claims cite.

use crate::pipeline::JobKind;
use crate::pipeline::RunView;
use crate::pipeline::probe::blocks::BlockCache;
use crate::pipeline::probe::{Probe, ProbeResult};
use crate::pipeline::registry::{Game, StandardJob};
use std::sync::Arc;

pub mod fullcheck;
pub mod kind;
pub mod layout;
pub mod picture;
pub mod probe;
pub mod query;
pub mod sources;

/// The `chomp-boxes` kind.
pub const BOXES: &dyn JobKind = &kind::boxes::ChompBoxes;
/// The `chomp-census` kind.
pub const CENSUS: &dyn JobKind = &kind::census::ChompCensus;
/// The `chomp-grundy` kind.
pub const GRUNDY: &dyn JobKind = &kind::grundy::ChompGrundy;

fn probes(runs: Vec<RunView>, cache: Arc<BlockCache>) -> ProbeResult<Vec<Box<dyn Probe>>> {
    // No in-memory solving of boxes for a server: only the runs answer.
    let mut chomp = probe::ChompProbe::with_cache(0, cache);
    for view in runs {
        match view.kind.name() {
            n if n == BOXES.name() => chomp.add_run(view)?,
            n if n == GRUNDY.name() => chomp.grundy.add_run(view)?,
            _ => {} // a census answers no position query
        }
    }
    Ok(vec![Box::new(chomp)])
}

/// Chomp in the registry.
pub static GAME: Game = Game {
    name: "chomp",
    kinds: &[BOXES, CENSUS, GRUNDY],
    checkers: &[
        &fullcheck::boxes::BoxesChecker,
        &fullcheck::census::CensusChecker,
        &fullcheck::grundy::GrundyChecker,
    ],
    probes,
    queries: &[query::QUERY],
    works: sources::WORKS,
    standard_jobs: &[
        StandardJob {
            name: "chomp-boxes",
            probe: ("chomp", "rect=4x7"),
            query: &["chomp", "4x7"],
        },
        StandardJob {
            name: "chomp-census-60",
            probe: ("", ""),
            query: &[],
        },
        StandardJob {
            name: "chomp-grundy",
            probe: ("chomp", "rect=3x4&grundy=1"),
            query: &["chomp", "3x4", "--grundy"],
        },
    ],
};
