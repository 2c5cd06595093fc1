//! Dodgem (Colin Vout; Berlekamp, Conway and Guy, *Winning Ways*, ch. 22)
//! on n×n boards, solved by the generic layered retrograde engine: this
//! folder is the whole of what the game adds to the pipeline — its
//! [`EngineGame`] description ([`Dodgem`]: job-file keys, notation, start,
//! claims) and its [`Game`] value. The rules are `crate::solvers::dodgem`
//! as a [`LayeredGame`] ([`DodgemLayers`]): layer `A-B` holds the
//! positions with A blue and B red cars, and a layer with A > B is the
//! image of `B-A` (reflection in the diagonal with colours and side to
//! move swapped), copied rather than solved.
//!
//! Job files: `kind = "dodgem"`, `n` (2 to 6) and optionally `max_cars`
//! (solve only the layers with at most that many cars a side: the endgame,
//! closed under moves since cars only leave) and the engine's
//! `job_memory` and `layers`.
//!
//! - [`claims`]: every published Dodgem number, checked against a run;
//! - [`sources`]: the works the claims cite.

use crate::games::engine::fullcheck::EngineChecker;
use crate::games::engine::kind::EngineKind;
use crate::games::engine::query::query_command;
use crate::games::engine::{BoardView, EngineGame, MoveStyle, RunFacts, RunValues};
use crate::pipeline::JobKind;
use crate::pipeline::kind::Claim;
use crate::pipeline::registry::{Game, StandardJob};
use crate::pipeline::sources::Work;
use crate::solvers::dodgem::{Board, DodgemLayers, Position, from_desjardins};

pub mod claims;
pub mod sources;

/// Dodgem as an engine game.
pub struct Dodgem;

/// The `dodgem` kind.
pub const DODGEM: &dyn JobKind = &EngineKind::<Dodgem>::NEW;

/// A dodgem job file's own keys (besides the engine's `job_memory` and
/// `layers`).
#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Board size: 2 to 6.
    pub n: i64,
    /// Solve only the layers with at most this many cars a side (default
    /// n − 1: the whole board, with reachability from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cars: Option<i64>,
}

/// Why a board size `n` is refused, or `None` for 2 to 6.
fn refused(n: i64) -> Option<String> {
    match n {
        2..=6 => None,
        7.. => Some(too_big(n as u64)),
        _ => Some(format!(
            "n = {n}: Dodgem boards here are 2×2 to 6×6 (n = 2 to 6)"
        )),
    }
}

/// The board size of a run's parameters.
fn n_of(params: &toml::Table) -> Result<usize, String> {
    let n = params.get("n").and_then(toml::Value::as_integer);
    let n = n.ok_or("no board size `n` (write n = 3, 4 or 5)")?;
    refused(n).map_or(Ok(n as usize), Err)
}

/// The most cars a side the run solves (n − 1 for the whole board).
fn max_cars(params: &toml::Table, n: usize) -> usize {
    params
        .get("max_cars")
        .and_then(toml::Value::as_integer)
        .map_or(n - 1, |m| m as usize)
}

/// Whether the run solves the whole board (no `max_cars` below n − 1).
pub fn whole(params: &toml::Table) -> bool {
    n_of(params).is_ok_and(|n| max_cars(params, n) + 1 >= n)
}

/// Why a board above 6×6 is refused: its positions and largest layer.
fn too_big(n: u64) -> String {
    let what = if n <= 12 {
        let c = |m, k| u128::from(crate::solvers::engine::placement::binomial(m, k));
        let layer = |a, b| 2 * c(n * n, a) * c(n * n - a, b);
        let total: u128 = (0..n).flat_map(|a| (0..n).map(move |b| layer(a, b))).sum();
        // (n − 1, n − 1) is the largest: n − 1 cars a side are far fewer than n²/3.
        let largest = layer(n - 1, n - 1);
        format!(
            "{} positions; its largest layer ({m}-{m}) alone has {} positions, {:.1} GB at one \
             byte a position before the layers it reads",
            crate::util::thousands(total),
            crate::util::thousands(largest),
            largest as f64 / 1e9,
            m = n - 1
        )
    } else {
        "far more positions than any machine holds".to_string()
    };
    format!("n = {n} is refused: the {n}×{n} board has {what}; this build solves n ≤ 6")
}

impl EngineGame for Dodgem {
    type Game = DodgemLayers;
    type Shown = Position;
    type Params = Params;

    const KIND: &'static str = "dodgem";
    const ABOUT: &'static str = "Dodgem n×n (2 to 6): win/loss/draw and depth of every position, one job per layer of car counts (generic engine)";
    const TITLE: &'static str = "Dodgem";
    /// 5×5 on this machine: 60 s of CPU for 240,060,402 positions on one
    /// thread (250 ns), taken a little higher for the cache misses of 6×6.
    const NS_PER_POSITION: f64 = 300.0;
    /// 5×5: the reachability jobs, per position of a layer and its parents.
    const NS_PER_REACH_POSITION: f64 = 60.0;
    const VIEW: BoardView = BoardView {
        pieces: &[('B', "blue", "#3b6fd8"), ('R', "red", "#d84a3b")],
        moves: MoveStyle::FromTo,
        rules: "Blue moves a car right, up or down and leaves across the right edge; red moves up, left or right and leaves across the top edge (Colin Vout's game, in Berlekamp, Conway and Guy, Winning Ways for your Mathematical Plays). A player whose cars have all left wins, and so does a player left with no legal move.",
    };
    const POSITION_HELP: &'static str = "A position: `blue:a2,a3,a4 red:b1,c1,d1 to-move:blue` (`blue:-` for no car; default: the start)";
    const VARIANT_PARAM: Option<&'static str> = Some("n");
    const VARIANT_HELP: &'static str = "Board size (2 to 6)";
    const OTHER_NOTATION: Option<(&'static str, &'static str)> = Some((
        "desjardins",
        "The moves are in desJardins' notation (rec.games.abstract, 1996: the board reflected in the diagonal through a1)",
    ));
    const QUERY_ABOUT: &'static str = "Value, depth and every legal move of a Dodgem position (rules of Winning Ways: blue moves right, up or down and leaves across the right edge; red moves up, left or right and leaves across the top edge; a player whose cars have all left, or who has no legal move, wins). Reads a dodgem run (default runs/dodgem-N, or runs/dodgem-6-endgame for n = 6); 2×2 to 4×4 are solved in memory without one. Values are for the side to move; a move's value is for the player making it.";
    const QUERY_EXAMPLES: &'static str = "Examples:\n  gametables query dodgem --n 4 --position \"blue:a2,a3,a4 red:b1,c1,d1 to-move:blue\"\n  gametables query dodgem --n 4 --moves \"a2-a1\"\n  gametables query dodgem --n 4 --desjardins --moves \"d1-d2 a4-b4\"\n  gametables query dodgem --n 6 --run-dir runs/dodgem-6-endgame --position \"blue:a2,a3,b5,c6 red:b1,c1,e2,f4 to-move:blue\"";

    fn check_params(p: &Params) -> Result<(), (String, String)> {
        if let Some(why) = refused(p.n) {
            return Err(("n".into(), why));
        }
        if let Some(m) = p.max_cars
            && !(0..p.n).contains(&m)
        {
            return Err((
                "max_cars".into(),
                format!(
                    "max_cars = {m}: a side has at most {} cars on the {n}×{n} board \
                     (max_cars = {}, or leaving it out, solves the whole board)",
                    p.n - 1,
                    p.n - 1,
                    n = p.n
                ),
            ));
        }
        Ok(())
    }

    fn game(params: &toml::Table) -> Result<DodgemLayers, String> {
        let n = n_of(params)?;
        Ok(DodgemLayers::new(Board::new(n).map_err(|e| e.to_string())?))
    }

    fn solves(game: &DodgemLayers, params: &toml::Table, layer: usize) -> bool {
        let l = game.layer(layer);
        let m = max_cars(params, game.board().n());
        l.a() <= m && l.b() <= m
    }

    fn variant(params: &toml::Table) -> String {
        let n = n_of(params).unwrap_or(0);
        if whole(params) {
            n.to_string()
        } else {
            format!("{n}-max-{}-cars", max_cars(params, n))
        }
    }

    fn board(params: &toml::Table) -> String {
        n_of(params).unwrap_or(0).to_string()
    }

    fn in_memory(variant: &str) -> bool {
        matches!(variant.trim(), "2" | "3" | "4")
    }

    /// 6×6 as a whole is a cluster's run (`jobs/dodgem-6.toml`); one
    /// machine runs the endgame.
    fn local_job(variant: &str) -> String {
        match variant.trim() {
            "6" => "dodgem-6-endgame".to_string(),
            v => format!("dodgem-{v}"),
        }
    }

    fn start(game: &DodgemLayers) -> Option<Position> {
        Some(game.board().start())
    }

    fn parse(game: &DodgemLayers, text: &str) -> Result<Position, String> {
        game.board().parse_position(text).map_err(|e| e.to_string())
    }

    fn show(game: &DodgemLayers, p: &Position) -> String {
        game.board().position_text(p)
    }

    fn grid(game: &DodgemLayers, p: &Position) -> Vec<String> {
        game.board().ranks(p)
    }

    fn to_move(p: &Position) -> String {
        p.to_move.name().to_string()
    }

    fn position(p: &Position) -> Position {
        *p
    }

    fn moves(game: &DodgemLayers, p: &Position) -> Vec<(String, Position)> {
        let b = game.board();
        b.moves(p)
            .into_iter()
            .map(|m| (b.move_name(m), b.apply(p, m)))
            .collect()
    }

    /// As the default, with Dodgem's own reasons for a move that is not
    /// legal (`no car on c4`, `b2 is taken`, …).
    fn play(game: &DodgemLayers, p: &Position, mv: &str) -> Result<Position, String> {
        let b = game.board();
        if let Some(why) = Self::over(game, p) {
            return Err(format!(
                "`{}` cannot be played: play has ended in {} ({why})",
                mv.trim(),
                b.position_text(p)
            ));
        }
        let m = b.parse_move(p, mv.trim()).map_err(|e| e.to_string())?;
        Ok(b.apply(p, m))
    }

    fn to_other_notation(game: &DodgemLayers, mv: &str) -> String {
        // The reflection is its own inverse.
        from_desjardins(&game.board(), mv).unwrap_or_else(|_| mv.to_string())
    }

    fn from_other_notation(game: &DodgemLayers, mv: &str) -> Result<String, String> {
        from_desjardins(&game.board(), mv).map_err(|e| e.to_string())
    }

    fn describe(game: &DodgemLayers, p: &Position) -> String {
        game.board().position_text(p)
    }

    fn over(game: &DodgemLayers, p: &Position) -> Option<String> {
        let side = p.to_move;
        if p.cars(side.other()) == 0 {
            Some(format!(
                "game over: {} has no car left and has won",
                side.other().name()
            ))
        } else if game.board().moves(p).is_empty() {
            Some(format!("{} has no legal move and so wins", side.name()))
        } else {
            None
        }
    }

    fn claims(
        params: &toml::Table,
        facts: &RunFacts,
        values: &RunValues<'_, DodgemLayers>,
    ) -> crate::pipeline::error::Result<Vec<Claim>> {
        claims::dodgem_claims(params, facts, values)
    }

    fn works() -> &'static [Work] {
        sources::WORKS
    }
}

/// Dodgem in the registry.
pub static GAME: Game = Game {
    name: "dodgem",
    kinds: &[DODGEM],
    checkers: &[&EngineChecker::<Dodgem>::NEW],
    probes: crate::games::engine::probe::probes::<Dodgem>,
    queries: &[query_command::<Dodgem>()],
    works: sources::WORKS,
    standard_jobs: &[StandardJob {
        name: "dodgem-3",
        probe: ("dodgem", "n=3&moves=a2-a1"),
        query: &["dodgem", "--n", "3", "--moves", "a2-a1"],
    }],
};
