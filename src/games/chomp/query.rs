//! `gametables query chomp`: the winning moves (or the Sprague–Grundy value)
//! of a Chomp rectangle or staircase.

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::probe::{ChompProbe, ChompRequest, QUERY_IN_MEMORY_LIMIT};
use super::{BOXES, GRUNDY};
use crate::pipeline::probe::Progress;
use crate::pipeline::registry::{Answer, QueryCommand};

/// Winning moves (row, col) of a Chomp rectangle or staircase.
///
/// Solves in memory when the enclosing box is small (≤ 50 million
/// staircases); with --run-dir, reads a chomp-boxes run's shards.
#[derive(Parser, Debug)]
#[command(name = "chomp")]
struct ChompQuery {
    /// A rectangle ROWSxCOLS, e.g. 8x10.
    rectangle: Option<String>,
    /// A staircase: row lengths from the poison row up, e.g. 10,10,9,4.
    #[arg(long, conflicts_with = "rectangle")]
    position: Option<String>,
    /// A chomp-boxes run directory to read instead of solving.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Print the Sprague–Grundy value instead (--run-dir: a chomp-grundy run).
    #[arg(long)]
    grundy: bool,
}

fn answer(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let q = ChompQuery::from_arg_matches(m)?;
    let req = ChompRequest::parse(q.rectangle.as_deref(), q.position.as_deref())?;
    let mut probe = ChompProbe::new(QUERY_IN_MEMORY_LIMIT);
    if q.grundy {
        if let Some(d) = &q.run_dir {
            probe
                .grundy
                .add_run(crate::pipeline::probe::open_run_of_kind(d, GRUNDY)?)?;
        }
        let a = probe.grundy.answer(&req)?;
        Ok(Answer::of(&a, q.json, || a.json()))
    } else {
        if let Some(d) = &q.run_dir {
            probe.add_run(crate::pipeline::probe::open_run_of_kind(d, BOXES)?)?;
        }
        let a = probe.answer(&req)?;
        Ok(Answer::of(&a, q.json, || a.json()))
    }
}

/// The `query chomp` subcommand.
pub const QUERY: QueryCommand = QueryCommand {
    command: ChompQuery::command,
    answer,
};
