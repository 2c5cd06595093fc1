//! The registry: the games this build knows, as the pipeline sees them.
//!
//! The pipeline names no game. Each game's folder (`src/games/<game>/`)
//! defines one [`Game`] value — its job kinds, full checkers, probes,
//! `query` subcommands, the published works its claims cite and its standard
//! job files — and `src/games/mod.rs` lists them; the caller (the CLI, a
//! test) hands that list to the pipeline as a [`Registry`]. Every list the
//! pipeline needs (the kinds a job file may name, the checker of a kind, the
//! works `report.md` cites, `serve`'s probes, `gametables query GAME`) is
//! derived from it here.

use std::path::PathBuf;
use std::sync::Arc;

use super::fullcheck::Checker;
use super::kind::JobKind;
use super::probe::blocks::BlockCache;
use super::probe::{Probe, ProbeResult, Progress};
use super::run_view::RunView;
use super::sources::Work;

/// A `gametables query GAME` subcommand of a game.
pub struct QueryCommand {
    /// The subcommand (`clap` builder: its name, help and arguments).
    pub command: fn() -> clap::Command,
    /// Answers the parsed arguments of [`QueryCommand::command`]; long
    /// in-memory work reports through the [`Progress`].
    pub answer: fn(&clap::ArgMatches, &Progress) -> anyhow::Result<Answer>,
}

/// What a query prints: text for people, JSON for `--json`.
pub struct Answer {
    /// The text (ends with a newline).
    pub text: String,
    /// The JSON value, when `--json` was asked for.
    pub json: Option<serde_json::Value>,
}

impl Answer {
    /// An answer that prints itself (`Display`) and as JSON when `json`.
    pub fn of(
        a: &impl std::fmt::Display,
        json: bool,
        value: impl FnOnce() -> serde_json::Value,
    ) -> Answer {
        Answer {
            text: a.to_string(),
            json: json.then(value),
        }
    }
}

/// Opens a game's probes over the run directories of its kinds (each run
/// already opened, in the order given), sharing one block cache. Games
/// without a run answer from memory where they can.
pub type OpenProbes = fn(Vec<RunView>, Arc<BlockCache>) -> ProbeResult<Vec<Box<dyn Probe>>>;

/// A standard job file of a game, with what its conformance test asks.
pub struct StandardJob {
    /// The job file's name in `jobs/` (without `.toml`).
    pub name: &'static str,
    /// A probe request (`key=value&…`, as in `/api/v1/GAME?…`) its run
    /// must answer, and the game it goes to.
    pub probe: (&'static str, &'static str),
    /// The same request as `gametables query …` arguments (after `query`).
    pub query: &'static [&'static str],
}

/// One game: everything the pipeline, `serve` and the CLI know of it.
pub struct Game {
    /// The folder name (`src/games/NAME/`).
    pub name: &'static str,
    /// Its job kinds (the `kind = "…"` values of job files).
    pub kinds: &'static [&'static dyn JobKind],
    /// One full checker per kind (`verify --full`).
    pub checkers: &'static [&'static dyn Checker],
    /// Its probes.
    pub probes: OpenProbes,
    /// Its `gametables query` subcommands.
    pub queries: &'static [QueryCommand],
    /// The published works its claims and notes cite.
    pub works: &'static [Work],
    /// The smallest standard job file of each kind, for the conformance
    /// tests (every kind has one).
    pub standard_jobs: &'static [StandardJob],
}

/// Every game of this build (`crate::games::registry()` makes it).
#[derive(Clone, Copy)]
pub struct Registry {
    /// The games, in the order `--help` and `serve` list them.
    pub games: &'static [&'static Game],
}

impl super::kind::Kinds for Registry {
    fn kind(&self, name: &str) -> Option<&'static dyn JobKind> {
        Registry::kind(self, name)
    }
    fn names(&self) -> Vec<&'static str> {
        self.kinds().map(|k| k.name()).collect()
    }
}

impl Registry {
    /// Every job kind, game by game.
    pub fn kinds(&self) -> impl Iterator<Item = &'static dyn JobKind> + '_ {
        self.games.iter().flat_map(|g| g.kinds.iter().copied())
    }

    /// The job kind called `name`, if any.
    pub fn kind(&self, name: &str) -> Option<&'static dyn JobKind> {
        self.kinds().find(|k| k.name() == name)
    }

    /// The game a job kind belongs to.
    pub fn game_of_kind(&self, kind: &str) -> Option<&'static Game> {
        self.games
            .iter()
            .copied()
            .find(|g| g.kinds.iter().any(|k| k.name() == kind))
    }

    /// The full checker of job kind `kind`, if any.
    pub fn checker(&self, kind: &str) -> Option<&'static dyn Checker> {
        self.games
            .iter()
            .flat_map(|g| g.checkers.iter().copied())
            .find(|c| c.kind() == kind)
    }

    /// Every published work any game cites, each once, game by game.
    pub fn works(&self) -> Vec<Work> {
        let mut out: Vec<Work> = Vec::new();
        for w in self.games.iter().flat_map(|g| g.works.iter()) {
            if !out.iter().any(|o| o.name == w.name) {
                out.push(*w);
            }
        }
        out
    }

    /// Every game's probes over `dirs` (each directory goes to the game of
    /// its kind), sharing one block cache of `cache_bytes`.
    ///
    /// # Errors
    /// [`super::probe::ProbeError::Run`] if a directory is not a planned
    /// run; [`super::probe::ProbeError::BadRequest`] if no game has its kind
    /// or a game refuses it (e.g. two runs of the same board).
    pub fn probes(&self, dirs: &[PathBuf], cache_bytes: u64) -> ProbeResult<super::probe::Probes> {
        let cache = BlockCache::new(cache_bytes);
        let mut views: Vec<Vec<RunView>> = self.games.iter().map(|_| Vec::new()).collect();
        let mut runs = Vec::new();
        for d in dirs {
            let view = RunView::open(d, self)?;
            let kind = view.kind.name();
            let i = self
                .games
                .iter()
                .position(|g| g.kinds.iter().any(|k| k.name() == kind))
                .ok_or_else(|| {
                    super::probe::ProbeError::bad(format!(
                        "{}: no probe for `{kind}` runs",
                        d.display()
                    ))
                })?;
            runs.push((d.clone(), kind.to_string()));
            views[i].push(view);
        }
        let mut games = Vec::new();
        for (g, v) in self.games.iter().zip(views) {
            games.extend((g.probes)(v, cache.clone())?);
        }
        Ok(super::probe::Probes { games, runs })
    }
}
