//! `gametables query KIND` for a game solved by the engine: value, depth
//! and every legal move of a position, from a run directory (default
//! `runs/KIND-VARIANT`) or, for small boards, solved in memory.

use std::path::PathBuf;

use clap::{Arg, ArgAction, value_parser};

use super::probe::{EngineProbe, EngineRequest};
use super::spec::EngineGame;
use crate::pipeline::probe::{Progress, open_run_of_kind};
use crate::pipeline::registry::{Answer, QueryCommand};

/// The subcommand's arguments.
pub fn command<S: EngineGame>() -> clap::Command {
    let mut cmd = clap::Command::new(S::KIND)
        .about(S::QUERY_ABOUT)
        .after_help(S::QUERY_EXAMPLES);
    if let Some(name) = S::VARIANT_PARAM {
        cmd = cmd.arg(
            Arg::new("variant")
                .long(name)
                .required(true)
                .value_name("N")
                .help(S::VARIANT_HELP),
        );
    }
    if let Some((name, help)) = S::OTHER_NOTATION {
        cmd = cmd.arg(
            Arg::new("other-notation")
                .long(name)
                .action(ArgAction::SetTrue)
                .help(help),
        );
    }
    cmd.arg(
            Arg::new("position")
                .long("position")
                .value_name("POSITION")
                .help(S::POSITION_HELP),
        )
        .arg(Arg::new("moves").long("moves").value_name("MOVES").help(
            "Moves played from the position (or the start), in the game's notation, separated by spaces",
        ))
        .arg(
            Arg::new("run-dir")
                .long("run-dir")
                .value_parser(value_parser!(PathBuf))
                .value_name("DIR")
                .help(match S::VARIANT_PARAM {
                    Some(_) => format!(
                        "A {} run directory (default: runs/{}-N, or runs/ and the name of the board's standard job file for one machine, whichever holds a run)",
                        S::KIND,
                        S::KIND
                    ),
                    None => format!("A {} run directory (default: runs/{})", S::KIND, S::KIND),
                }),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Machine-readable output"),
        )
}

/// Answers the parsed arguments.
pub fn answer<S: EngineGame>(m: &clap::ArgMatches, _: &Progress) -> anyhow::Result<Answer> {
    let variant = m.get_one::<String>("variant").cloned().unwrap_or_default();
    let dir = m
        .get_one::<PathBuf>("run-dir")
        .cloned()
        .or_else(|| default_run_dir::<S>(&variant));
    let mut probe = EngineProbe::<S>::default();
    if let Some(d) = &dir {
        if !d.exists() {
            anyhow::bail!(
                "{}: does not exist (run `gametables run JOB_FILE` to make a run directory)",
                d.display()
            );
        }
        if !d.is_dir() {
            anyhow::bail!("{}: not a directory", d.display());
        }
        let kind = crate::games::registry()
            .kind(S::KIND)
            .expect("the game's kind is registered");
        let got = probe.add_run(open_run_of_kind(d, kind)?)?;
        if got != super::probe::canonical_variant::<S>(&variant)? {
            anyhow::bail!("{} solves {} {got}, not {variant}", d.display(), S::TITLE);
        }
    }
    let a = probe.answer(&EngineRequest {
        variant,
        position: m.get_one::<String>("position").cloned(),
        moves: m.get_one::<String>("moves").cloned(),
        other_notation: S::OTHER_NOTATION.is_some() && m.get_flag("other-notation"),
    })?;
    let json = m.get_flag("json");
    Ok(Answer::of(&a, json, || a.json()))
}

/// The run directory `query` reads when none is given: `runs/KIND-VARIANT`
/// (for a game with boards) or `runs/` + [`EngineGame::local_job`], the first that a run has
/// finished (`result.toml`), else the first that holds a plan (a run under
/// way answers for the layers it has).
fn default_run_dir<S: EngineGame>(variant: &str) -> Option<PathBuf> {
    let mut dirs = Vec::new();
    if !variant.trim().is_empty() {
        dirs.push(PathBuf::from("runs").join(format!("{}-{}", S::KIND, variant.trim())));
    }
    let local = PathBuf::from("runs").join(S::local_job(variant));
    if !dirs.contains(&local) {
        dirs.push(local);
    }
    let with = |file: &str| dirs.iter().find(|d| d.join(file).is_file()).cloned();
    with("result.toml").or_else(|| with("plan.toml"))
}

/// The `query KIND` subcommand of game `S`.
pub const fn query_command<S: EngineGame>() -> QueryCommand {
    QueryCommand {
        command: command::<S>,
        answer: answer::<S>,
    }
}
