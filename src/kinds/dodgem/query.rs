//! `gametables query dodgem`: value, depth and every legal move of a Dodgem
//! position.

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::probe::{DodgemProbe, DodgemRequest};
use crate::pipeline::probe::Progress;
use crate::pipeline::registry::{Answer, QueryCommand};

/// Value, depth and every legal move of a Dodgem position.
///
/// Reads the layer shards of a dodgem run (default runs/dodgem-N, else
/// runs/dodgem-N-endgame); without a run directory, 3×3 and 4×4 are
/// solved in memory. Values are for the side to move; a move's value is
/// for the player making it. A run of part of the board (`max_cars`, e.g.
/// jobs/dodgem-6-endgame.toml) answers the positions of its layers and
/// names the layer any other position needs.
#[derive(Parser, Debug)]
#[command(
    name = "dodgem",
    after_help = "Examples:\n  gametables query dodgem --n 4 --position \"blue:a2,a3,a4 red:b1,c1,d1 to-move:blue\"\n  gametables query dodgem --n 4 --moves \"a2-a1\"\n  gametables query dodgem --n 4 --desjardins --moves \"d1-d2 a4-b4\"\n  gametables query dodgem --n 6 --run-dir runs/dodgem-6-endgame --position \"blue:a2,a3,b5,c6 red:b1,c1,e2,f4 to-move:blue\""
)]
struct DodgemQuery {
    /// Board size (2 to 6).
    #[arg(long)]
    n: usize,
    /// A position: `blue:a2,a3,a4 red:b1,c1,d1 to-move:blue` (default: the start).
    #[arg(long)]
    position: Option<String>,
    /// Moves played from the position (or the start), e.g. "a2-a1 b1-b2 c4-off".
    #[arg(long)]
    moves: Option<String>,
    /// The moves are in desJardins' notation (reflected in the diagonal through a1).
    #[arg(long)]
    desjardins: bool,
    /// A dodgem run directory (default runs/dodgem-N if it exists).
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn answer(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let q = DodgemQuery::from_arg_matches(m)?;
    let n = q.n;
    let dir = q.run_dir.or_else(|| {
        [format!("dodgem-{n}"), format!("dodgem-{n}-endgame")]
            .into_iter()
            .map(|d| PathBuf::from("runs").join(d))
            .find(|d| d.join("plan.toml").is_file())
    });
    let probe = match &dir {
        Some(d) => DodgemProbe::open(d, n)?,
        None => DodgemProbe::new(),
    };
    let a = probe.answer(&DodgemRequest {
        n,
        position: q.position,
        moves: q.moves,
        desjardins: q.desjardins,
    })?;
    Ok(Answer::of(&a, q.json, || a.json()))
}

/// The `query dodgem` subcommand.
pub const QUERY: QueryCommand = QueryCommand {
    command: DodgemQuery::command,
    answer,
};
