//! `gametables query three-row`: f(q, r), the P-position (f, q, r) if any,
//! and row r's class.

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::probe::{ThreeRowProbe, ThreeRowRequest};
use crate::pipeline::probe::Progress;
use crate::pipeline::registry::{Answer, QueryCommand};

/// Three-row Chomp: f(q, r), the P-position (f, q, r) if any, and row r's class.
///
/// With --run-dir, f(q, r) for q ≤ the run's q_max comes from the run's
/// shards (the tile holding (q, r) solved again from its neighbours'
/// stored states, up to (q, r) only) and the class from its
/// tables/three-row-rows.csv; otherwise f is computed in memory (rows
/// 0..=r, columns 0..=q) and the class from an in-memory run to --q-max.
#[derive(Parser, Debug)]
#[command(name = "three-row")]
struct ThreeRowQuery {
    /// Second row length q.
    #[arg(long)]
    q: u32,
    /// Third row length r (r ≤ q).
    #[arg(long)]
    r: u32,
    /// A three-row run directory: f from its shards (q ≤ its q_max), the class
    /// from its rows table.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Last column for the in-memory classification (default: max(q, 16000)).
    #[arg(long)]
    q_max: Option<u32>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn answer(m: &clap::ArgMatches, progress: &Progress) -> anyhow::Result<Answer> {
    let a = ThreeRowQuery::from_arg_matches(m)?;
    let probe = match &a.run_dir {
        Some(d) => ThreeRowProbe::open(d)?,
        None => ThreeRowProbe::new(),
    };
    let ans = probe.answer_with(
        &ThreeRowRequest {
            q: a.q,
            r: a.r,
            q_max: a.q_max,
        },
        progress,
    )?;
    Ok(Answer::of(&ans, a.json, || ans.json()))
}

/// The `query three-row` subcommand.
pub const QUERY: QueryCommand = QueryCommand {
    command: ThreeRowQuery::command,
    answer,
};
