//! Tic-tac-toe, solved by the generic layered retrograde engine: this
//! folder is the whole of what the game adds to the pipeline — its
//! [`EngineGame`] description ([`TicTacToeGame`]: notation, start,
//! claims) and its [`Game`] value. The rules are
//! `crate::solvers::tictactoe` ([`TicTacToe`]). The worked example of
//! ARCHITECTURE.md, "Adding a game".
//!
//! Job files: `kind = "tictactoe"` and no other key (one board; the
//! engine's `job_memory` is allowed but never needed).
//!
//! - [`sources`]: the works the claims cite.

use crate::games::engine::fullcheck::EngineChecker;
use crate::games::engine::kind::EngineKind;
use crate::games::engine::query::query_command;
use crate::games::engine::{BoardView, EngineGame, MoveStyle, RunFacts, RunValues};
use crate::pipeline::JobKind;
use crate::pipeline::kind::Claim;
use crate::pipeline::registry::{Game, StandardJob};
use crate::pipeline::sources::Work;
use crate::solvers::engine::Terminal;
use crate::solvers::tictactoe::{Board, TicTacToe};

pub mod sources;

/// Tic-tac-toe as an engine game.
pub struct TicTacToeGame;

/// The `tictactoe` kind.
pub const TICTACTOE: &dyn JobKind = &EngineKind::<TicTacToeGame>::NEW;

/// The cells in move order (the order of the engine's moves), named as
/// squares: `a1`, `b1`, `c1`, `a2`, … `c3`.
fn cell_name(c: usize) -> String {
    crate::solvers::square::square_name(c, 3)
}

/// A tic-tac-toe job file's own keys: none.
#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

impl EngineGame for TicTacToeGame {
    type Game = TicTacToe;
    type Shown = Board;
    type Params = Params;

    const KIND: &'static str = "tictactoe";
    const ABOUT: &'static str = "Tic-tac-toe: win/loss/draw and depth of every board, one job per number of marks (generic engine; the smallest engine game)";
    const TITLE: &'static str = "Tic-tac-toe";
    /// Far below a millisecond for the whole board; a round figure.
    const NS_PER_POSITION: f64 = 2_000.0;
    const NS_PER_REACH_POSITION: f64 = 2_000.0;
    const VIEW: BoardView = BoardView {
        pieces: &[('X', "X", "#3b6fd8"), ('O', "O", "#d84a3b")],
        moves: MoveStyle::Place,
        rules: "X plays first; the players mark empty cells in turn, and three in a row wins. A full board without a line is a draw.",
    };
    const POSITION_HELP: &'static str = "A board: its ranks from the top, `/` between, each cell X, O or . (blank), e.g. `X.O/.X./...`; who is to move follows from the counts (default: the empty board)";
    const VARIANT_PARAM: Option<&'static str> = None;
    const VARIANT_HELP: &'static str = "";
    const QUERY_ABOUT: &'static str = "Value, depth and every legal move of a tic-tac-toe board (X plays first; three in a row wins; a full board without a line is a draw). Solved in memory, or read from a tictactoe run (--run-dir). Values are for the player to move; a move's value is for the player making it. Moves are the square marked, e.g. `b2`.";
    const QUERY_EXAMPLES: &'static str = "Examples:\n  gametables query tictactoe\n  gametables query tictactoe --moves \"b2 a1\"\n  gametables query tictactoe --position \"X.O/.X./...\"";

    fn variant_params(variant: &str) -> Result<toml::Table, String> {
        match variant.trim() {
            "" => Ok(toml::Table::new()),
            v => Err(format!(
                "tic-tac-toe has one board; `{v}` names none (ask without a board)"
            )),
        }
    }

    fn in_memory(variant: &str) -> bool {
        variant.trim().is_empty()
    }

    fn game(_params: &toml::Table) -> Result<TicTacToe, String> {
        Ok(TicTacToe::new())
    }

    /// `3x3`, for table names (`tictactoe-3x3-layers.csv`).
    fn variant(_params: &toml::Table) -> String {
        "3x3".to_string()
    }

    /// Requests name no board.
    fn board(_params: &toml::Table) -> String {
        String::new()
    }

    fn start(_game: &TicTacToe) -> Option<Board> {
        Some(Board::START)
    }

    fn parse(_game: &TicTacToe, text: &str) -> Result<Board, String> {
        Board::parse(text)
    }

    fn show(_game: &TicTacToe, p: &Board) -> String {
        p.to_string()
    }

    fn grid(_game: &TicTacToe, p: &Board) -> Vec<String> {
        p.ranks().to_vec()
    }

    fn to_move(p: &Board) -> String {
        if p.x_to_move() { "X" } else { "O" }.to_string()
    }

    fn position(p: &Board) -> Board {
        *p
    }

    fn moves(_game: &TicTacToe, p: &Board) -> Vec<(String, Board)> {
        (0..9)
            .filter(|&c| p.empty() >> c & 1 == 1)
            .map(|c| (cell_name(c), p.play(c)))
            .collect()
    }

    fn describe(_game: &TicTacToe, p: &Board) -> String {
        p.to_string()
    }

    fn over(_game: &TicTacToe, p: &Board) -> Option<String> {
        let (me, them) = if p.x_to_move() {
            ("X", "O")
        } else {
            ("O", "X")
        };
        p.outcome().map(|t| match t {
            Terminal::Loss => format!("game over: {them} has three in a row: {me} has lost"),
            Terminal::Win => {
                format!(
                    "game over: {me} has three in a row (no game reaches this board): {me} has won"
                )
            }
            Terminal::Draw => "game over: the board is full without a line: a draw".to_string(),
        })
    }

    fn claims(
        _params: &toml::Table,
        facts: &RunFacts,
        _: &RunValues<'_, TicTacToe>,
    ) -> crate::pipeline::error::Result<Vec<Claim>> {
        use crate::pipeline::claim_table::{Fact, claims_from_table};
        claims_from_table("src/games/tictactoe/claims.toml", CLAIMS, |row| {
            Some(match row.fact.as_str() {
                "start" => match &facts.start {
                    Some(v) => Fact::ours(v),
                    None => Fact::NotCovered("the start's layer is not solved".into()),
                },
                "reachable" => {
                    let reach = facts
                        .reachable()
                        .filter(|_| facts.layers.len() == 10)
                        .map(|r| r[0]);
                    match reach {
                        Some(n) => Fact::ours(n),
                        None => Fact::NotCovered(
                            "this run has no reachability jobs for every layer".into(),
                        ),
                    }
                }
                _ => return None,
            })
        })
    }

    fn works() -> &'static [Work] {
        sources::WORKS
    }
}

/// The published numbers `report.md` compares, as data.
const CLAIMS: &str = include_str!("claims.toml");

/// Tic-tac-toe in the registry.
pub static GAME: Game = Game {
    name: "tictactoe",
    kinds: &[TICTACTOE],
    checkers: &[&EngineChecker::<TicTacToeGame>::NEW],
    probes: crate::games::engine::probe::probes::<TicTacToeGame>,
    queries: &[query_command::<TicTacToeGame>()],
    works: sources::WORKS,
    standard_jobs: &[StandardJob {
        name: "tictactoe",
        probe: ("tictactoe", "moves=b2"),
        query: &["tictactoe", "--moves", "b2"],
    }],
};
