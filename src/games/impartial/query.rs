//! `gametables query nim | subtraction | octal | hackenbush`: the impartial
//! games.

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::OCTAL;
use super::probe::octal::{OctalProbe, OctalRequest, octal_heaps_answer};
use super::probe::{hackenbush_answer, nim_answer, subtraction_answer};
use crate::pipeline::probe::Progress;
use crate::pipeline::registry::{Answer, QueryCommand};

/// Nim (Bouton): P-position or every winning move, normal or misère play.
#[derive(Parser, Debug)]
#[command(name = "nim")]
struct NimQuery {
    /// Heap sizes, e.g. 3,4,5 (0 for the position without tokens).
    heaps: String,
    /// Misère play (taking the last token loses).
    #[arg(long)]
    misere: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Subtraction game Sub(S): Grundy values, proved period, winning moves.
#[derive(Parser, Debug)]
#[command(name = "subtraction")]
struct SubtractionQuery {
    /// The subtraction set, e.g. 1,3,4.
    #[arg(long)]
    set: String,
    /// Print G(0..=N).
    #[arg(long, default_value_t = 20)]
    n: usize,
    /// Heaps of a sum to solve, e.g. 10,15,20.
    #[arg(long)]
    heaps: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Octal game by code (0.77 Kayles, 0.07 Dawson's Kayles, 4.7, …):
/// Grundy values and the period proved by the Guy–Smith theorem.
///
/// With --run-dir (an `octal` run of the same code whose n_max covers N),
/// G(N) and the 1,000 values up to it are read from the run's shards and
/// the period from its summary (a run of another code, or one that stops
/// below N, is an error); otherwise they are computed in memory: G(0..=N)
/// only, and with --period at least G(0..16384) to look for the period.
#[derive(Parser, Debug)]
#[command(name = "octal")]
struct OctalQuery {
    /// The octal code, e.g. 0.77.
    code: String,
    /// Print G(0..=N).
    #[arg(long, default_value_t = 80)]
    n: usize,
    /// Look for the period (Guy–Smith) in at least G(0..16384), not only in
    /// the values printed.
    #[arg(long)]
    period: bool,
    /// An `octal` run directory of this code.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Heaps of a sum to play, e.g. 5,7 (at most 64 heaps, 1,000 tokens in all): its Grundy
    /// value and every move with the value it leaves, instead of G(0..=N).
    #[arg(long, conflicts_with_all = ["run_dir", "period"])]
    heaps: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Green Hackenbush on a tree: its Grundy value (colon principle) and
/// every cut with the value it leaves.
///
/// The tree is written as the parent of vertex 1, 2, 3, … (0 is the
/// ground): `0,1,1` is an edge on the ground with two edges on top of it;
/// `-` is no edge. A cut is named by its upper vertex. Berlekamp, Conway
/// and Guy, Winning Ways for your Mathematical Plays, ch. 7.
#[derive(Parser, Debug)]
#[command(name = "hackenbush")]
struct HackenbushQuery {
    /// The tree: parents of vertices 1, 2, 3, …, e.g. 0,1,1 (`-` for none).
    tree: String,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn hackenbush(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let q = HackenbushQuery::from_arg_matches(m)?;
    let a = hackenbush_answer(&q.tree)?;
    Ok(Answer::of(&a, q.json, || a.json()))
}

fn nim(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let q = NimQuery::from_arg_matches(m)?;
    let a = nim_answer(&q.heaps, q.misere)?;
    Ok(Answer::of(&a, q.json, || a.json()))
}

fn subtraction(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let q = SubtractionQuery::from_arg_matches(m)?;
    let a = subtraction_answer(&q.set, q.n, q.heaps.as_deref())?;
    Ok(Answer::of(&a, q.json, || a.json()))
}

fn octal(m: &clap::ArgMatches, progress: &Progress) -> anyhow::Result<Answer> {
    let q = OctalQuery::from_arg_matches(m)?;
    if let Some(h) = &q.heaps {
        let a = octal_heaps_answer(&q.code, h)?;
        return Ok(Answer::of(&a, q.json, || a.json()));
    }
    let mut probe = OctalProbe::new();
    if let Some(d) = &q.run_dir {
        probe.add_run(crate::pipeline::probe::open_run_of_kind(d, OCTAL)?)?;
        let code = crate::solvers::impartial::octal::OctalCode::parse(&q.code)
            .map_err(crate::pipeline::probe::ProbeError::bad)?
            .to_string();
        if let Some((other, _, _)) = probe.runs().into_iter().find(|(c, _, _)| *c != code) {
            return Err(crate::pipeline::probe::ProbeError::bad(format!(
                "--run-dir {}: a run of the octal game {other}, not {code}",
                d.display()
            ))
            .into());
        }
    }
    let a = probe.answer_with(
        &OctalRequest {
            code: q.code,
            n: q.n,
            period: q.period,
        },
        progress,
    )?;
    Ok(Answer::of(&a, q.json, || a.json()))
}

/// The `query nim`, `query subtraction` and `query octal` subcommands.
pub const QUERIES: [QueryCommand; 4] = [
    QueryCommand {
        command: NimQuery::command,
        answer: nim,
    },
    QueryCommand {
        command: SubtractionQuery::command,
        answer: subtraction,
    },
    QueryCommand {
        command: OctalQuery::command,
        answer: octal,
    },
    QueryCommand {
        command: HackenbushQuery::command,
        answer: hackenbush,
    },
];
