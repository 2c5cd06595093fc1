//! The games, one folder each, and the registry that joins them.
//!
//! A game's folder holds everything the pipeline needs to know about it: its
//! job kinds (`kind.rs`, or `kind/` when it has several or a kind has parts; `JobKind`), their full checkers (`fullcheck…`, which import no
//! solver), its probes (`probe.rs` or `probe/`) and `query` subcommands, its pictures
//! (`picture.rs`), its claims and the published works they cite; its
//! pure solver stays in `src/solvers/<game>/`. The folder's `mod.rs` defines
//! one [`Game`] value. [`GAMES`] below is the only place that lists the
//! games: adding a game is one folder and one line there (ARCHITECTURE.md,
//! "Adding a game").

use crate::pipeline::{Game, Registry};

pub mod chomp;
pub mod dodgem;
pub mod engine;
pub mod impartial;
pub mod quixo;
pub mod three_row;
pub mod tictactoe;

/// Every game of this build, in the order `--help`, `query` and `serve`
/// list them.
pub static GAMES: &[&Game] = &[
    &chomp::GAME,
    &impartial::GAME,
    &three_row::GAME,
    &dodgem::GAME,
    &quixo::GAME,
    &tictactoe::GAME,
];

/// The registry the pipeline, the CLI and `serve` are given.
pub fn registry() -> Registry {
    Registry { games: GAMES }
}
