//! What a game written against the [`LayeredGame`] trait tells the generic
//! `engine` machinery besides its rules: its kind name, how a job file
//! names a board, its notation, its start and its published values
//! ([`EngineGame`]).
//!
//! This module reaches the game's rules only through the trait (never the
//! engine that solves them): the full checker builds on it.

use std::collections::BTreeMap;

use super::layout::LayerRow;
use super::values::RunValues;
use crate::pipeline::kind::Claim;
use crate::pipeline::sources::Work;
use crate::solvers::engine::rules::LayeredGame;

/// What a run found, for the game's claims.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// Every solved layer, in solving order (the rows of the per-layer
    /// table).
    pub layers: Vec<LayerRow>,
    /// The start position's value (`win in 7`, `draw`, …), when the run
    /// solved its layer.
    pub start: Option<String>,
}

impl RunFacts {
    /// Positions of every solved layer.
    pub fn positions(&self) -> u64 {
        self.layers.iter().map(|l| l.positions).sum()
    }

    /// The row of the layer named `name` (`None`: not solved by the run).
    pub fn layer(&self, name: &str) -> Option<&LayerRow> {
        self.layers.iter().find(|l| l.layer == name)
    }

    /// Positions reachable from the start, and of those won, lost and drawn
    /// for the player to move, summed over the layers; `None` unless the
    /// run has layers and counted reachability in every one.
    pub fn reachable(&self) -> Option<[u64; 4]> {
        let first = self.layers.first()?.reach?;
        self.layers[1..].iter().try_fold(first, |acc, l| {
            let r = l.reach?;
            Some([0, 1, 2, 3].map(|i| acc[i] + r[i]))
        })
    }

    /// The longest win and the longest loss of any solved layer, in plies.
    pub fn longest(&self) -> (u16, u16) {
        self.layers.iter().fold((0, 0), |(w, l), r| {
            (w.max(r.max_win_depth), l.max(r.max_loss_depth))
        })
    }

    /// Positions and draws summed over the layers `keep` accepts.
    pub fn positions_and_draws(&self, keep: impl Fn(&LayerRow) -> bool) -> (u64, u64) {
        self.layers
            .iter()
            .filter(|l| keep(l))
            .fold((0, 0), |(p, d), l| (p + l.positions, d + l.draws))
    }
}

/// How a move is picked on the board: what the web page's one board view
/// ([`BoardView`]) needs to turn clicks into a move's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveStyle {
    /// A move names one cell (tic-tac-toe's `b2`): click the cell.
    Place,
    /// A move names a piece's cell and where it goes, `FROM-TO`, where `TO`
    /// is a cell or a word for a place off the board (Dodgem's `c2-off`):
    /// click the piece, then where it goes.
    FromTo,
}

impl MoveStyle {
    /// The name in `GET /api/v1/` (`place`, `from-to`).
    pub fn name(self) -> &'static str {
        match self {
            MoveStyle::Place => "place",
            MoveStyle::FromTo => "from-to",
        }
    }
}

/// What the web page needs to draw any position of an engine game and to
/// play it by clicking on the board, given to it by `GET /api/v1/`: a new
/// engine game needs no page code. Cells are named file letter and rank
/// number (`a1` bottom left), the rows of [`EngineGame::grid`] top first.
#[derive(Debug, Clone, Copy)]
pub struct BoardView {
    /// The pieces: the character that draws one in [`EngineGame::grid`],
    /// the side that owns it as [`EngineGame::to_move`] names it (the
    /// first player's first), and a CSS colour. Other characters are empty
    /// cells.
    pub pieces: &'static [(char, &'static str, &'static str)],
    /// How a move is picked.
    pub moves: MoveStyle,
    /// The rules in a few sentences, for the page.
    pub rules: &'static str,
}

/// A game solved by the generic engine: its rules ([`EngineGame::Game`])
/// and what the job kind, probe, checker and report need to name it.
///
/// A game implements this once, in its folder (`src/games/<game>/`), and
/// gets the `engine` job kind, `verify --full`, its probe, its `query`
/// subcommand and its per-layer picture from `src/games/engine/`.
pub trait EngineGame: Send + Sync + 'static {
    /// The rules.
    type Game: LayeredGame + Send + 'static;
    /// A position as people name it (it may carry more than the engine's
    /// position, e.g. the colour to move).
    type Shown: Clone + Send + Sync;

    /// The job kind's name (`kind = "…"` in job files) and the game's name
    /// in `query`, `serve` and the tables (`quixo`).
    const KIND: &'static str;
    /// One line for `gametables kinds`.
    const ABOUT: &'static str;
    /// The game's name in titles (`Quixo`).
    const TITLE: &'static str;
    /// Single-core CPU time per position of a layer's solving job,
    /// nanoseconds (for the plan's estimates; measured on the 2-core
    /// reference machine).
    const NS_PER_POSITION: f64;
    /// Single-core CPU time of a reachability job per position of the layer
    /// and of its parent layers, nanoseconds.
    const NS_PER_REACH_POSITION: f64;
    /// Single-core CPU time of an image layer's job per position
    /// ([`LayeredGame::image_layer`]), nanoseconds. Default: 40 (Dodgem's
    /// reflection, measured on 5×5).
    const NS_PER_IMAGE_POSITION: f64 = 40.0;
    /// How the web page draws a position and picks a move.
    const VIEW: BoardView;
    /// How the probe takes a position (for `--help` and errors).
    const POSITION_HELP: &'static str;
    /// The request parameter (and `query` option) naming the board (`n`),
    /// or `None` for a game of one board (tic-tac-toe): its requests name
    /// no board, and the board is the empty string.
    const VARIANT_PARAM: Option<&'static str>;
    /// Its help (`Board size (3 to 5)`; unused without a parameter).
    const VARIANT_HELP: &'static str;
    /// A second notation of moves, if the game has one in use (Dodgem:
    /// desJardins' reflected notation): `(name, help)`, where `name` is the
    /// request flag and `query` option that take moves in it and the key
    /// under which answers give each move in it. Default: none.
    const OTHER_NOTATION: Option<(&'static str, &'static str)> = None;
    /// A move named in the game's notation, in the
    /// [other notation](EngineGame::OTHER_NOTATION) (default: unchanged).
    fn to_other_notation(_game: &Self::Game, mv: &str) -> String {
        mv.to_string()
    }
    /// A move named in the [other notation](EngineGame::OTHER_NOTATION),
    /// in the game's notation (default: unchanged).
    ///
    /// # Errors
    /// The text is no move in that notation.
    fn from_other_notation(_game: &Self::Game, mv: &str) -> Result<String, String> {
        Ok(mv.to_string())
    }
    /// `query KIND --help`: what the subcommand answers.
    const QUERY_ABOUT: &'static str;
    /// `query KIND --help`: examples.
    const QUERY_EXAMPLES: &'static str;

    /// The run's parameters of the board a request names by
    /// [`EngineGame::VARIANT_PARAM`] (the inverse of
    /// [`EngineGame::board`]; the empty string for a game of one board).
    /// Default: the variant is a whole number, the one key of the table,
    /// and [`EngineGame::game`] accepts it.
    ///
    /// # Errors
    /// Not a number, or a board [`EngineGame::game`] refuses.
    fn variant_params(variant: &str) -> Result<toml::Table, String> {
        let Some(key) = Self::VARIANT_PARAM else {
            return Ok(toml::Table::new());
        };
        let n: i64 = variant
            .trim()
            .parse()
            .map_err(|_| format!("{key} = `{variant}`: {}", Self::VARIANT_HELP.to_lowercase()))?;
        let t: toml::Table = [(key.to_string(), toml::Value::from(n))]
            .into_iter()
            .collect();
        Self::game(&t)?;
        Ok(t)
    }
    /// Whether a probe without a run directory solves this board in memory
    /// (boards that take well under a second).
    fn in_memory(_variant: &str) -> bool {
        false
    }
    /// The standard job file (`jobs/NAME.toml`, as `NAME`) that solves
    /// this board on one machine, or as much of it as fits: where `query`
    /// looks under `runs/` besides `runs/KIND-VARIANT`, and what it names
    /// when it finds no run. Default: `KIND-VARIANT`.
    fn local_job(variant: &str) -> String {
        match variant.trim() {
            "" => Self::KIND.to_string(),
            v => format!("{}-{v}", Self::KIND),
        }
    }

    /// The job file's own keys (besides `kind` and the engine's
    /// `job_memory`), as serde reads them: a struct with
    /// `#[serde(deny_unknown_fields)]`, so a key the game does not know is
    /// refused; written back (to a TOML table) as the run's parameters.
    type Params: serde::de::DeserializeOwned + serde::Serialize;

    /// Checks read parameters beyond their types (ranges, keys that go
    /// together); `Err((key, message))` names the key at fault. Default:
    /// every value serde reads is fine.
    fn check_params(_params: &Self::Params) -> Result<(), (String, String)> {
        Ok(())
    }

    /// The job file's own keys, read ([`EngineGame::Params`]) and checked
    /// ([`EngineGame::check_params`]), as the run's parameters;
    /// `Err((key, message))` names the key at fault (see [`read_params`]).
    fn params(job_file: &toml::Table) -> Result<toml::Table, (String, String)> {
        read_params::<Self>(job_file)
    }
    /// The rules of the board the run's parameters name.
    fn game(params: &toml::Table) -> Result<Self::Game, String>;
    /// Whether the run solves `layer` (the selection must hold the child
    /// layers of every layer it holds). Default: every layer.
    fn solves(_game: &Self::Game, _params: &toml::Table, _layer: usize) -> bool {
        true
    }
    /// A short name of the run for table names (`quixo-4-…`): `4`, or
    /// `5-from-22-cubes` for part of a board.
    fn variant(params: &toml::Table) -> String;
    /// The board a run answers requests for, as requests name it by
    /// [`EngineGame::VARIANT_PARAM`] (`5` for both a whole 5×5 run and an
    /// endgame one). Default: [`EngineGame::variant`].
    fn board(params: &toml::Table) -> String {
        Self::variant(params)
    }
    /// The start of play, if the game has one.
    fn start(game: &Self::Game) -> Option<Self::Shown>;
    /// Reads a position in the game's notation.
    fn parse(game: &Self::Game, text: &str) -> Result<Self::Shown, String>;
    /// Writes a position in the game's notation (what [`EngineGame::parse`]
    /// reads back).
    fn show(game: &Self::Game, p: &Self::Shown) -> String;
    /// The rows of a picture of the position, top first (for the page).
    fn grid(game: &Self::Game, p: &Self::Shown) -> Vec<String>;
    /// Who is to move, in words (`X`).
    fn to_move(p: &Self::Shown) -> String;
    /// The engine's position.
    fn position(p: &Self::Shown) -> <Self::Game as LayeredGame>::Position;
    /// Every legal move of a position that is not over: its name in the
    /// game's notation and the position after it, in the order of
    /// [`LayeredGame::children`].
    fn moves(game: &Self::Game, p: &Self::Shown) -> Vec<(String, Self::Shown)>;
    /// Plays a move named in the game's notation.
    ///
    /// # Errors
    /// The move is not one of the position's moves, or play has ended
    /// there ([`EngineGame::over`]): no move follows the end.
    fn play(game: &Self::Game, p: &Self::Shown, mv: &str) -> Result<Self::Shown, String> {
        let m = mv.trim();
        if let Some(why) = Self::over(game, p) {
            return Err(format!(
                "`{m}` cannot be played: play has ended in {} ({why})",
                Self::show(game, p)
            ));
        }
        Self::moves(game, p)
            .into_iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(m))
            .map(|(_, c)| c)
            .ok_or_else(|| format!("`{m}` is not a legal move in {}", Self::show(game, p)))
    }
    /// An engine position in words, for `verify --full`'s findings.
    /// Default: its `Debug` form.
    fn describe(_game: &Self::Game, p: &<Self::Game as LayeredGame>::Position) -> String {
        format!("{p:?}")
    }
    /// Why play has ended, in words, for a terminal position.
    fn over(game: &Self::Game, p: &Self::Shown) -> Option<String>;
    /// The claims `report.md` compares (published values; see
    /// [`Claim`]): from the run's parameters, its per-layer counts and
    /// start (`facts`), and the values of any position it solved
    /// (`values`, read from its shards as asked).
    fn claims(
        params: &toml::Table,
        facts: &RunFacts,
        values: &RunValues<'_, Self::Game>,
    ) -> crate::pipeline::error::Result<Vec<Claim>>;
    /// The works the claims cite.
    fn works() -> &'static [Work];
}

/// Reads a job file's own keys through serde into `S::Params`, checks them
/// and writes them back as a table (what [`EngineGame::params`] does).
///
/// # Errors
/// `(key, message)`: the key serde's message names (an unknown key, a
/// missing one, or one of the wrong type), or the first key of the file
/// when the message names none; the message says what was expected.
pub fn read_params<S: EngineGame + ?Sized>(
    file: &toml::Table,
) -> Result<toml::Table, (String, String)> {
    let read: S::Params =
        toml::Value::Table(file.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                let msg = e.message().trim().to_string();
                // serde names keys in backquotes: `unknown field `x``,
                // `missing field `n``; toml adds `for key `n`` to type errors.
                let named = msg
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .find(|w| file.contains_key(*w))
                    .or_else(|| {
                        msg.strip_prefix("missing field `")
                            .and_then(|r| r.split('`').next())
                    })
                    .map(str::to_string);
                let key = named
                    .or_else(|| file.keys().next().cloned())
                    .unwrap_or_default();
                let mut msg = crate::pipeline::jobfile::plain_message(&msg);
                if msg.starts_with("unknown field") {
                    msg += " (and the engine's `job_memory` and `layers`)";
                }
                if key.is_empty() || msg.contains(&format!("`{key}`")) {
                    (key, msg)
                } else {
                    (key.clone(), format!("`{key}`: {msg}"))
                }
            })?;
    S::check_params(&read)?;
    toml::Table::try_from(&read).map_err(|e| (String::new(), e.to_string()))
}

/// The value of each move from `T::start`, for the player making it
/// (`win in 19`, `draw`), by the move's name; empty when the game has no
/// start, and without the moves whose position the run does not solve.
pub fn first_moves<T: EngineGame>(values: &RunValues<'_, T::Game>) -> BTreeMap<String, String> {
    let Some(start) = T::start(values.game()) else {
        return BTreeMap::new();
    };
    T::moves(values.game(), &start)
        .into_iter()
        .filter_map(|(name, p)| {
            let v = values.value(&T::position(&p)).ok()?;
            Some((name, v.for_mover().to_string()))
        })
        .collect()
}
