//! Quixo (Gigamic; Thierry Chapeau, 1995) on 3×3, 4×4 and 5×5 boards,
//! solved by the generic layered retrograde engine: this folder is the
//! whole of what the game adds to the pipeline — its [`EngineGame`]
//! description ([`Quixo`]: job-file keys, notation, start, claims) and its
//! [`Game`] value, built from the generic parts in `crate::games::engine`.
//! The rules are `crate::solvers::quixo` (as a
//! [`LayeredGame`](crate::solvers::engine::LayeredGame):
//! [`QuixoLayers`]).
//!
//! Job files: `kind = "quixo"`, `n` (3, 4 or 5) and optionally `min_cubes`
//! (solve only the layers with at least that many cubes on the board: the
//! endgame, closed under moves since blanks never come back) and the
//! engine's `job_memory` (solve only the layers whose job fits it, and whose
//! child layers are solved).
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
use crate::solvers::engine::LayeredGame;
use crate::solvers::quixo::{FULL_5X5, Position, QuixoLayers, Rules};

pub mod sources;

/// Quixo as an engine game.
pub struct Quixo;

/// The `quixo` kind.
pub const QUIXO: &dyn JobKind = &EngineKind::<Quixo>::NEW;

fn n_of(params: &toml::Table) -> Result<usize, String> {
    let n = match params.get("n") {
        None => return Err("no board size `n` (write n = 3, 4 or 5)".into()),
        Some(toml::Value::Integer(n)) => *n,
        Some(v) => {
            return Err(format!(
                "`n` must be a number, found {} {v} (write n = 4, without quotes)",
                v.type_str()
            ));
        }
    };
    match n {
        3..=5 => Ok(n as usize),
        _ => Err(format!(
            "n = {n}: Quixo boards here are 3×3, 4×4 and 5×5 (n = 3, 4 or 5)"
        )),
    }
}

fn min_cubes(params: &toml::Table) -> usize {
    params
        .get("min_cubes")
        .and_then(toml::Value::as_integer)
        .map_or(0, |m| m as usize)
}

/// A quixo job file's own keys (besides the engine's `job_memory` and `layers`).
#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Board size: 3, 4 or 5.
    pub n: i64,
    /// Solve only the layers with at least this many cubes (0: every
    /// layer; not written when 0, so the run's parameters are those of a
    /// job file without it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_cubes: i64,
}

fn is_zero(x: &i64) -> bool {
    *x == 0
}

impl EngineGame for Quixo {
    type Game = QuixoLayers;
    type Shown = Position;
    type Params = Params;

    const KIND: &'static str = "quixo";
    const ABOUT: &'static str = "Quixo n×n (3 to 5): win/loss/draw and depth of every board, one job per layer of cube counts (generic engine)";
    const TITLE: &'static str = "Quixo";
    /// 4×4 on this machine, one board per symmetry class solved: 8.3 s of
    /// CPU for the 80 layer jobs of 43,046,721 boards (190 ns a board),
    /// taken ×3 for the larger moves, ranks and cache misses of 5×5.
    const NS_PER_POSITION: f64 = 600.0;
    /// 4×4: the reachability jobs took 28.6 s of CPU board by board and
    /// 9.7 s by symmetry classes (canonical boards expanded, classes filled
    /// in at the end); the figure of 525 ns scaled by that ratio.
    const NS_PER_REACH_POSITION: f64 = 180.0;
    const VIEW: BoardView = BoardView {
        pieces: &[('X', "X", "#3b6fd8"), ('O', "O", "#d84a3b")],
        moves: MoveStyle::FromTo,
        rules: "A move takes a cube from the border that is blank or shows your symbol, turns it to your symbol and pushes it back in at another end of its row or column (b1-b3: the cube of b1 pushed in at b3). Whoever makes a line of the opponent's symbol loses, even with a line of their own; otherwise a line of your symbol wins (Gigamic's rules).",
    };
    const POSITION_HELP: &'static str = "A position: the colour to move, `:`, then the ranks from the top, `/` between, each file a… as X, O or . (blank), e.g. `O:X../.X./..O` (default: the start)";
    const VARIANT_PARAM: Option<&'static str> = Some("n");
    const VARIANT_HELP: &'static str = "Board size (3, 4 or 5)";
    const QUERY_ABOUT: &'static str = "Value, depth and every legal move of a Quixo position (Gigamic's rules: a move that makes a line of the opponent's symbol loses, even with a line of the mover's). Reads a quixo run (default runs/quixo-N); 3×3 is solved in memory without one. Values are for the player to move; a move's value is for the player making it. Moves are `source-insertion`, e.g. `b1-b3` takes the cube on b1 and pushes it in at b3.";
    const QUERY_EXAMPLES: &'static str = "Examples:\n  gametables query quixo --n 3\n  gametables query quixo --n 3 --moves \"b1-b3 a1-c1\"\n  gametables query quixo --n 4 --position \"X:..../.OX./..../X..O\"";

    fn check_params(p: &Params) -> Result<(), (String, String)> {
        if !(3..=5).contains(&p.n) {
            return Err((
                "n".into(),
                format!(
                    "n = {}: Quixo boards here are 3×3, 4×4 and 5×5 (n = 3, 4 or 5)",
                    p.n
                ),
            ));
        }
        if !(0..=p.n * p.n).contains(&p.min_cubes) {
            return Err((
                "min_cubes".into(),
                format!(
                    "min_cubes = {} is not a whole number from 0 to the {} cells",
                    p.min_cubes,
                    p.n * p.n
                ),
            ));
        }
        Ok(())
    }

    fn game(params: &toml::Table) -> Result<QuixoLayers, String> {
        QuixoLayers::new(n_of(params)?).map_err(|e| e.to_string())
    }

    fn solves(game: &QuixoLayers, params: &toml::Table, layer: usize) -> bool {
        let (a, b) = game.pair(layer);
        a + b >= min_cubes(params)
    }

    fn variant(params: &toml::Table) -> String {
        let n = n_of(params).map_or(0, |n| n);
        match min_cubes(params) {
            0 => n.to_string(),
            m => format!("{n}-from-{m}-cubes"),
        }
    }

    fn board(params: &toml::Table) -> String {
        n_of(params).map_or(0, |n| n).to_string()
    }

    fn in_memory(variant: &str) -> bool {
        variant.trim() == "3"
    }

    /// 5×5 as a whole is a cluster's run (`jobs/quixo-5.toml`); one machine
    /// runs the layers that fit 20 GB.
    fn local_job(variant: &str) -> String {
        match variant.trim() {
            "5" => "quixo-5-20g".to_string(),
            v => format!("quixo-{v}"),
        }
    }

    fn start(game: &QuixoLayers) -> Option<Position> {
        Some(Position::start(game.rules().n()))
    }

    fn parse(game: &QuixoLayers, text: &str) -> Result<Position, String> {
        let p = Position::parse(text).map_err(|e| e.to_string())?;
        let n = game.rules().n();
        if p.n() != n {
            return Err(format!(
                "position `{text}` is a {}×{} board, not {n}×{n}",
                p.n(),
                p.n()
            ));
        }
        Ok(p)
    }

    fn show(_game: &QuixoLayers, p: &Position) -> String {
        p.to_string()
    }

    fn grid(_game: &QuixoLayers, p: &Position) -> Vec<String> {
        p.grid().lines().take(p.n()).map(str::to_string).collect()
    }

    fn to_move(p: &Position) -> String {
        p.to_move().symbol().to_string()
    }

    fn position(p: &Position) -> crate::solvers::quixo::Board {
        p.board()
    }

    fn moves(game: &QuixoLayers, p: &Position) -> Vec<(String, Position)> {
        let r: &Rules = game.rules();
        r.moves(p.board())
            .filter_map(|m| Some((r.move_name(m), p.play(r, m).ok()?)))
            .collect()
    }

    /// The board with the player to move as X (the engine's boards carry
    /// no colour; the same board with colours swapped and O to move has the
    /// same value).
    fn describe(game: &QuixoLayers, b: &crate::solvers::quixo::Board) -> String {
        Position::new(game.rules().n(), *b, crate::solvers::quixo::Colour::X)
            .map_or_else(|e| e.to_string(), |p| p.to_string())
    }

    fn over(game: &QuixoLayers, p: &Position) -> Option<String> {
        let me = p.to_move();
        game.terminal(&p.board()).map(|t| match t {
            crate::solvers::engine::Terminal::Win => format!(
                "game over: the board shows a line of {}, made by {}'s last move: {} has won",
                me.symbol(),
                me.other().symbol(),
                me.symbol()
            ),
            crate::solvers::engine::Terminal::Loss => format!(
                "game over: {}'s last move made a line of {}: {} has lost",
                me.other().symbol(),
                me.other().symbol(),
                me.symbol()
            ),
            // Quixo always has a move: play ends only with a line.
            crate::solvers::engine::Terminal::Draw => "game over: a draw".to_string(),
        })
    }

    fn claims(
        params: &toml::Table,
        facts: &RunFacts,
        _: &RunValues<'_, QuixoLayers>,
    ) -> crate::pipeline::error::Result<Vec<Claim>> {
        Ok(quixo_claims(n_of(params).unwrap_or(0), facts))
    }

    fn works() -> &'static [Work] {
        sources::WORKS
    }
}

fn quixo_claims(n: usize, facts: &RunFacts) -> Vec<Claim> {
    let mut out = Vec::new();
    let paper = sources::QUIXO_IS_SOLVED;
    if n == 5 {
        let claim = "5×5: the start (every cube blank, X to move) is a draw";
        out.push(match &facts.start {
            Some(v) => Claim::compare(paper, claim, "draw", v),
            None => Claim::not_covered(
                paper,
                claim,
                "draw",
                "this run does not solve the start's layer (layer 0-0: an endgame or a job_memory selection)",
            ),
        });
        // The 13 layers {a, b} with a + b = 25: the sum of the halves (a, b)
        // and (b, a) of the authors' table.
        for a in 13..=25usize {
            let b = 25 - a;
            let mut want = (0u64, 0u64, 0u64);
            for &(x, o, w, l, d) in &FULL_5X5 {
                if (o, x) == (a, b) || (o, x) == (b, a) {
                    want = (want.0 + w, want.1 + l, want.2 + d);
                }
            }
            let name = format!("{a}-{b}");
            let claim = format!(
                "5×5, layer {name} ({a} and {b} cubes, no blank): wins, losses, draws for the player to move"
            );
            let expected = format!("{} / {} / {}", want.0, want.1, want.2);
            out.push(match facts.layers.iter().find(|l| l.layer == name) {
                Some(l) => Claim::compare(
                    sources::QUIXO_CPP,
                    &claim,
                    expected,
                    format!("{} / {} / {}", l.wins, l.losses, l.draws),
                ),
                None => {
                    Claim::not_covered(sources::QUIXO_CPP, &claim, expected, "layer not solved")
                }
            });
        }
    } else {
        // The paper's abstract states the 5×5 result only; no value of the
        // smaller boards could be read here, so none is claimed.
        out.push(Claim::not_covered(
            paper,
            "5×5: the start (every cube blank, X to move) is a draw",
            "draw",
            &format!("this run solves the {n}×{n} board"),
        ));
    }
    out
}

/// Quixo in the registry.
pub static GAME: Game = Game {
    name: "quixo",
    kinds: &[QUIXO],
    checkers: &[&EngineChecker::<Quixo>::NEW],
    probes: crate::games::engine::probe::probes::<Quixo>,
    queries: &[query_command::<Quixo>()],
    works: sources::WORKS,
    standard_jobs: &[StandardJob {
        name: "quixo-3",
        probe: ("quixo", "n=3&moves=b1-b3"),
        query: &["quixo", "--n", "3", "--moves", "b1-b3"],
    }],
};
