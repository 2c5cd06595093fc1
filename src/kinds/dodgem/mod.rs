//! Dodgem on an n×n board: win, loss or draw and depth of every position,
//! one job per layer of cars on the board (`dodgem`). The pure solver is
//! `crate::games::dodgem`.
//!
//! - [`kind`]: the job kind (plan, layer jobs, merge, checks, claims, plots).
//! - [`probe`]: the `dodgem` probe; [`query`]: `gametables query dodgem`.
//! - [`fullcheck`]: `verify --full` from the rules (imports no solver).
//! - [`picture`]: wins, losses and draws per layer; [`sources`]: the works
//!   the claims cite.

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

/// The `dodgem` kind.
pub const DODGEM: &dyn JobKind = &kind::Dodgem;

fn probes(runs: Vec<RunView>, cache: Arc<BlockCache>) -> ProbeResult<Vec<Box<dyn Probe>>> {
    one_probe(probe::DodgemProbe::with_cache(cache), runs, |p, v| {
        p.add_run(v).map(drop)
    })
}

/// Dodgem in the registry.
pub static GAME: Game = Game {
    name: "dodgem",
    kinds: &[DODGEM],
    checkers: &[&fullcheck::DodgemChecker],
    probes,
    queries: &[query::QUERY],
    works: sources::WORKS,
    standard_jobs: &[StandardJob {
        name: "dodgem-3",
        probe: ("dodgem", "n=3&moves=a2-a1"),
        query: &["dodgem", "--n", "3", "--moves", "a2-a1"],
    }],
};
