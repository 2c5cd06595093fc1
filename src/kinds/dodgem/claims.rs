//! Every published Dodgem number we know, checked against a `dodgem` run:
//! the 1996 rec.games.abstract thread (Erickson, Fleury, desJardins),
//! Winning Ways, the GamesCrafters figures and the sen-ltd Dodgem article.

use std::collections::BTreeMap;

use super::whole;
use crate::games::dodgem::{DodgemLayers, Move, Position, Side};
use crate::games::engine::{LayeredGame, Value};
use crate::kinds::engine::{RunFacts, RunValues};
use crate::pipeline::kind::{Claim, ClaimStatus};

// Claim sources: names of this game's `sources::WORKS`.
const ARTICLE: &str = super::sources::SEN_DODGEM;
const WW: &str = "Winning Ways (Dodgem), as cited in the sen-ltd Dodgem article";
const GC: &str = "GamesCrafters via Wikipedia “Dodgem”, as cited in the sen-ltd Dodgem article";
const FLEURY: &str = "Fleury 1996-03-04, rec.games.abstract 1996";
const ERICKSON4: &str = "Erickson 1996-03-04, rec.games.abstract 1996";
const ERICKSON11: &str = "Erickson 1996-03-11, rec.games.abstract 1996";
const DJ: &str = "desJardins 1996-03, rec.games.abstract 1996";

fn known(source: &str, claim: &str, expected: impl ToString, ours: impl ToString) -> Claim {
    Claim {
        source: source.into(),
        claim: claim.into(),
        expected: expected.to_string(),
        ours: ours.to_string(),
        status: ClaimStatus::KnownDiscrepancy,
    }
}

fn pct(a: u64, b: u64) -> String {
    format!("{:.1}%", 100.0 * a as f64 / b.max(1) as f64)
}

fn sep(v: u128) -> String {
    crate::pipeline::resources::thousands(v)
}

/// What the claims compare, from the run's per-layer counts and values.
#[derive(Debug, Default)]
struct Facts {
    n: u32,
    /// `None` for a run of the whole board.
    max_cars: Option<u32>,
    positions: u64,
    /// Layers by (a, b): positions.
    layers: BTreeMap<(usize, usize), u64>,
    both_sides_positions: u64,
    both_sides_draws: u64,
    both_sides_placements: u64,
    reachable: Option<u64>,
    reachable_wins: Option<u64>,
    reachable_losses: Option<u64>,
    reachable_draws: Option<u64>,
    longest_win: u16,
    longest_loss: u16,
    start: Option<String>,
    /// Placements lost for whoever moves, with Blue to move (read from the
    /// values of boards up to 5×5 only).
    lost_for_both: Vec<String>,
}

impl Facts {
    fn of(params: &toml::Table, facts: &RunFacts, values: &RunValues<'_, DodgemLayers>) -> Facts {
        let game = values.game();
        let n = game.board().n();
        let mut f = Facts {
            n: n as u32,
            max_cars: (!whole(params)).then(|| {
                params
                    .get("max_cars")
                    .and_then(toml::Value::as_integer)
                    .unwrap_or(0) as u32
            }),
            start: facts.start.clone(),
            ..Facts::default()
        };
        let mut reach = [0u64; 4];
        let mut all_reached = !facts.layers.is_empty();
        for row in &facts.layers {
            let Some((a, b)) = row
                .layer
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            else {
                continue;
            };
            f.layers.insert((a, b), row.positions);
            f.positions += row.positions;
            if a > 0 && b > 0 {
                f.both_sides_positions += row.positions;
                f.both_sides_draws += row.draws;
                f.both_sides_placements += row.positions / 2;
            }
            f.longest_win = f.longest_win.max(row.max_win_depth);
            f.longest_loss = f.longest_loss.max(row.max_loss_depth);
            match row.reach {
                Some(r) => (0..4).for_each(|i| reach[i] += r[i]),
                None => all_reached = false,
            }
        }
        if all_reached {
            [
                f.reachable,
                f.reachable_wins,
                f.reachable_losses,
                f.reachable_draws,
            ] = reach.map(Some);
        }
        if n <= 5 && f.max_cars.is_none() {
            f.lost_for_both = lost_for_both(values);
        }
        f
    }
}

/// The placements (both colours on the board) lost for whoever moves, as
/// position text with Blue to move, in layer and rank order: ranks 2k and
/// 2k + 1 of a layer are one placement with Blue and Red to move.
fn lost_for_both(values: &RunValues<'_, DodgemLayers>) -> Vec<String> {
    let game = values.game();
    let mut out = Vec::new();
    for l in 0..game.layer_count() {
        let layer = game.layer(l);
        if layer.a() == 0 || layer.b() == 0 {
            continue;
        }
        let Ok(v) = values.layer(l) else {
            continue;
        };
        let size = game.layer_size(l);
        for r in (0..size).step_by(2) {
            if matches!(v.value(r), Some(Value::Loss(_)))
                && matches!(v.value(r + 1), Some(Value::Loss(_)))
            {
                out.push(game.board().position_text(&game.unrank(l, r)));
            }
        }
    }
    out
}

/// The value of each first move of the start, for the player making it
/// (`win in 19`, `draw`), by its name; empty when the run lacks a layer.
fn first_moves(values: &RunValues<'_, DodgemLayers>) -> BTreeMap<String, String> {
    let b = values.game().board();
    let start = b.start();
    b.moves(&start)
        .into_iter()
        .filter_map(|m| {
            let v = values.value(&b.apply(&start, m)).ok()?;
            Some((b.move_name(m), v.for_mover().to_string()))
        })
        .collect()
}

/// Every published Dodgem number we know (the 1996 rec.games.abstract thread,
/// Winning Ways, GamesCrafters, the sen-ltd Dodgem article), with our value
/// where this run covers it.
pub fn dodgem_claims(
    params: &toml::Table,
    facts: &RunFacts,
    values: &RunValues<'_, DodgemLayers>,
) -> Vec<Claim> {
    let s = &Facts::of(params, facts, values);
    let n = s.n as usize;
    let mut c = Vec::new();
    // Counts: compared only with what this run counted, over the whole of
    // its own board (issue 27: they were computed by formula whatever the
    // run, and a run with `max_cars = 0` "matched" six published counts).
    let whole_run = s.max_cars.is_none();
    let counted = |m: usize| m == n && whole_run;
    let count_why = match s.max_cars {
        None => format!("this run counts the {n}×{n} board only"),
        Some(m) => format!("this run counts only the {n}×{n} layers with at most {m} cars a side"),
    };
    for (m, published) in [(3usize, 2_846u128), (4, 555_986), (5, 240_060_402)] {
        let claim = format!("{m}×{m}: positions with side to move");
        if counted(m) {
            c.push(Claim::compare(
                ARTICLE,
                &claim,
                sep(published),
                sep(u128::from(s.positions)),
            ));
        } else {
            c.push(Claim::not_covered(
                ARTICLE,
                &claim,
                sep(published),
                &count_why,
            ));
        }
    }
    {
        let claim = "5×5: positions in the largest layer (4, 4)";
        let layer = s.layers.get(&(4, 4));
        match layer.filter(|_| n == 5) {
            Some(l) => c.push(Claim::compare(
                ARTICLE,
                claim,
                sep(151_420_500),
                sep(u128::from(*l)),
            )),
            None => c.push(Claim::not_covered(
                ARTICLE,
                claim,
                sep(151_420_500),
                &if n == 5 {
                    count_why.clone()
                } else {
                    format!("this run counts the {n}×{n} board only")
                },
            )),
        }
    }
    for (m, published) in [(2usize, 21u128), (3, 1_495), (4, 303_433), (5, 197_841_801)] {
        let claim = format!(
            "{m}×{m}: legal positions (Erickson's count; ours: ≤ n−1 cars per side on distinct squares)"
        );
        if !counted(m) {
            c.push(Claim::not_covered(
                ERICKSON11,
                &claim,
                sep(published),
                &count_why,
            ));
            continue;
        }
        let ours = u128::from(s.positions) / 2;
        if ours == published {
            c.push(Claim::compare(
                ERICKSON11,
                &claim,
                sep(published),
                sep(ours),
            ));
        } else {
            c.push(known(
                ERICKSON11,
                &claim,
                sep(published),
                format!(
                    "{} (does not reproduce; the sen-ltd Dodgem article agrees)",
                    sep(ours)
                ),
            ));
        }
    }
    {
        let claim = "3×3: placements with both sides on the board = 2 × 666";
        if counted(3) {
            let placements = u128::from(s.both_sides_placements);
            c.push(Claim::compare(
                FLEURY,
                claim,
                "1,332 = 2 × 666",
                format!("{} = 2 × {}", sep(placements), sep(placements / 2)),
            ));
        } else {
            c.push(Claim::not_covered(
                FLEURY,
                claim,
                "1,332 = 2 × 666",
                &count_why,
            ));
        }
    }
    let firsts = first_moves(values);
    let lost_n = s.lost_for_both.len();
    let longest = {
        let m = s.longest_win.max(s.longest_loss);
        let kind = if s.longest_win >= s.longest_loss {
            "win"
        } else {
            "loss"
        };
        format!("{m} (a {kind} in {m}; longest win {})", s.longest_win)
    };
    // Every claim about a board needs all of it (the start, reachability,
    // counts over every layer).
    let whole = s.max_cars.is_none();
    let [ra, rw, rl, rd] = [
        s.reachable,
        s.reachable_wins,
        s.reachable_losses,
        s.reachable_draws,
    ]
    .map(|v| v.unwrap_or(0));
    let covered = |m: usize| m == n && whole;
    let why = match s.max_cars {
        None => format!("this run solves {n}×{n}"),
        Some(m) => format!("this run solves the {n}×{n} layers with at most {m} cars a side"),
    };
    let add = |c: &mut Vec<Claim>,
               m: usize,
               source: &str,
               claim: &str,
               expected: String,
               ours: &dyn Fn() -> String| {
        let claim = format!("{m}×{m}: {claim}");
        if covered(m) {
            c.push(Claim::compare(source, &claim, &expected, ours()));
        } else {
            c.push(Claim::not_covered(source, &claim, expected, &why));
        }
    };
    // 3×3.
    add(
        &mut c,
        3,
        WW,
        "the start is a first-player win, in plies",
        "win in 19".into(),
        &|| s.start.clone().unwrap_or_default(),
    );
    add(
        &mut c,
        3,
        ARTICLE,
        "first moves: the only winning one advances the car farthest from the corner; the others lose in 18 and 16",
        "a3-b3 win in 19; a2-b2 loss in 18; a2-a1 loss in 16".into(),
        &|| {
            ["a3-b3", "a2-b2", "a2-a1"]
                .iter()
                .map(|m| format!("{m} {}", firsts.get(*m).cloned().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("; ")
        },
    );
    add(
        &mut c,
        3,
        GC,
        "reachable from the start: wins + losses, draws",
        "1,963 = 1,123 + 840, 0 draws".into(),
        &|| {
            format!(
                "{} = {} + {}, {} draws",
                sep(ra.into()),
                sep(rw.into()),
                sep(rl.into()),
                rd
            )
        },
    );
    add(
        &mut c,
        3,
        ERICKSON4,
        "positions lost for whoever moves (3 mirror pairs)",
        "6".into(),
        &|| lost_n.to_string(),
    );
    add(
        &mut c,
        3,
        ARTICLE,
        "longest decided position (a win)",
        "21 (a win in 21; longest win 21)".into(),
        &|| longest.clone(),
    );
    if covered(3) {
        let third = {
            let board = values.game().board();
            let p = board.parse_position("blue:a3,b3 red:c1,c2").expect("valid");
            let word = |q: &Position| {
                values
                    .value(q)
                    .map_or_else(|e| format!("? ({e})"), |v| v.to_string())
            };
            format!(
                "blue to move: {}; red to move: {}",
                word(&p),
                word(&p.with_to_move(Side::Red))
            )
        };
        let truth = [
            "blue:a3,b3 red:a2,b2 to-move:blue",
            "blue:b1,b2 red:c1,c2 to-move:blue",
        ];
        let has_truth = truth.iter().all(|t| s.lost_for_both.iter().any(|x| x == t));
        c.push(known(ERICKSON4, "3×3: his third diagram (blue a3,b3; red c1,c2) is lost for whoever moves",
            "lost for whoever moves",
            format!("{third}; the true third pair is blue a3,b3 red a2,b2 and blue b1,b2 red c1,c2 ({})",
                if has_truth { "both found" } else { "NOT found" })));
    } else {
        c.push(Claim::not_covered(
            ERICKSON4,
            "3×3: his third diagram (blue a3,b3; red c1,c2) is lost for whoever moves",
            "lost for whoever moves",
            &why,
        ));
    }
    // 4×4.
    add(&mut c, 4, DJ, "the start", "draw".into(), &|| {
        s.start.clone().unwrap_or_default()
    });
    add(
        &mut c,
        4,
        DJ,
        "1. b1-a1 (his notation; a2-a1 in ours) loses, in plies",
        "loss in 38".into(),
        &|| firsts.get("a2-a1").cloned().unwrap_or_default(),
    );
    add(
        &mut c,
        4,
        ARTICLE,
        "positions lost for whoever moves",
        "14".into(),
        &|| lost_n.to_string(),
    );
    add(
        &mut c,
        4,
        ARTICLE,
        "reachable from the start, draws among them",
        "393,900, 35,281 draws (9.0%)".into(),
        &|| {
            format!(
                "{}, {} draws ({})",
                sep(ra.into()),
                sep(rd.into()),
                pct(rd, ra)
            )
        },
    );
    add(
        &mut c,
        4,
        ARTICLE,
        "longest decided position (a loss)",
        "42 (a loss in 42; longest win 41)".into(),
        &|| longest.clone(),
    );
    let game = if covered(4) {
        desjardins_game(values)
    } else {
        Err(why.clone())
    };
    let add_game = |c: &mut Vec<Claim>,
                    claim: &str,
                    expected: &str,
                    pick: &dyn Fn(&GameFacts) -> String,
                    discrepancy: bool| {
        let claim = format!("4×4: desJardins' game: {claim}");
        match &game {
            Ok(g) if discrepancy => c.push(known(DJ, &claim, expected, pick(g))),
            Ok(g) => c.push(Claim::compare(ARTICLE, &claim, expected, pick(g))),
            // The same source whether or not the run covers the claim.
            Err(w) if discrepancy => c.push(Claim::not_covered(DJ, &claim, expected, w)),
            Err(w) => c.push(Claim::not_covered(ARTICLE, &claim, expected, w)),
        }
    };
    add_game(
        &mut c,
        "each \"!\" move is the only drawing move",
        "3 of 3",
        &|g| format!("{} of 3", g.bangs_only_draw),
        false,
    );
    add_game(
        &mut c,
        "12. d3-off (his notation) is legal",
        "illegal (c4-off meant)",
        &|g| g.d3_off.clone(),
        false,
    );
    add_game(
        &mut c,
        "O's replies to 1. d1-d2: a2-b2, a3-b3, a2-a1, a4-b4",
        "draw, draw, loss in 32, loss in 38",
        &|g| g.replies.clone(),
        false,
    );
    add_game(
        &mut c,
        "after 1… a4-b4, 2. c1-c2",
        "win in 37",
        &|g| g.c1c2.clone(),
        false,
    );
    add_game(
        &mut c,
        "the game is best play by both sides (O's first move a4-b4)",
        "best play (draw)",
        &|g| format!("1… a4-b4 is a {}; 2. d2-d3 throws the win away", g.a4b4),
        true,
    );
    // 5×5.
    add(&mut c, 5, DJ, "the start", "draw".into(), &|| {
        s.start.clone().unwrap_or_default()
    });
    add(
        &mut c,
        5,
        ARTICLE,
        "all five first moves (including 1. b1-a1, his notation)",
        "draw ×5".into(),
        &|| {
            let draws = firsts.values().filter(|v| *v == "draw").count();
            if draws == firsts.len() {
                format!("draw ×{draws}")
            } else {
                format!("{firsts:?}")
            }
        },
    );
    add(
        &mut c,
        5,
        DJ,
        "1. b1-a1 (his notation; a2-a1 in ours)",
        "draw".into(),
        &|| firsts.get("a2-a1").cloned().unwrap_or_default(),
    );
    add(
        &mut c,
        5,
        ARTICLE,
        "positions lost for whoever moves",
        "36".into(),
        &|| lost_n.to_string(),
    );
    add(
        &mut c,
        5,
        ARTICLE,
        "draws among positions with both sides on the board",
        "35.7%".into(),
        &|| pct(s.both_sides_draws, s.both_sides_positions),
    );
    add(
        &mut c,
        5,
        ARTICLE,
        "reachable from the start, draws among them",
        "164,308,067, 52,703,322 draws (32.1%)".into(),
        &|| {
            format!(
                "{}, {} draws ({})",
                sep(ra.into()),
                sep(rd.into()),
                pct(rd, ra)
            )
        },
    );
    add(
        &mut c,
        5,
        ARTICLE,
        "longest decided position",
        "81".into(),
        &|| s.longest_win.max(s.longest_loss).to_string(),
    );
    if covered(5) {
        c.push(known(
            DJ,
            "5×5: about 40% of positions are draws (his estimate)",
            "≈ 40%",
            format!(
                "{} of positions with both sides on the board, {} of reachable positions",
                pct(s.both_sides_draws, s.both_sides_positions),
                pct(rd, ra)
            ),
        ));
    } else {
        c.push(Claim::not_covered(
            DJ,
            "5×5: about 40% of positions are draws (his estimate)",
            "≈ 40%",
            &why,
        ));
    }
    c
}

struct GameFacts {
    bangs_only_draw: usize,
    d3_off: String,
    replies: String,
    c1c2: String,
    a4b4: String,
}

/// Replays desJardins' 4×4 game (1996-03-19) from the run's 4×4 layers.
fn desjardins_game(values: &RunValues<'_, DodgemLayers>) -> Result<GameFacts, String> {
    let board = values.game().board();
    let value_of_move = |p: &Position, m: Move| -> Option<Value> {
        values.value(&board.apply(p, m)).ok().map(Value::for_mover)
    };
    let game = "d1-d2 a4-b4 d2-d3 b4-c4 d3-d4 a3-b3 c1-c2 c4-c3! b1-b2 a2-a3! c2-d2 c3-c2 \
                d2-d3 a3-a2 d3-c3 a2-a3! b2-a2 b3-b2 c3-c4 c2-c1 d4-off c1-c2 d3-off b2-b3";
    let dj = |p: &Position, w: &str| -> Result<Move, String> {
        let ours = crate::games::dodgem::from_desjardins(&board, w).map_err(|e| e.to_string())?;
        board.parse_move(p, &ours).map_err(|e| e.to_string())
    };
    let word = |v: Option<Value>| v.map_or("?".to_string(), |v| v.to_string());
    let mut p = board.start();
    let mut bangs = 0;
    let mut d3_off = "legal".to_string();
    for w in game.split_whitespace() {
        let m = match dj(&p, w) {
            Ok(m) => m,
            Err(e) => {
                if w == "d3-off" {
                    let c4 = dj(&p, "c4-off").is_ok();
                    d3_off = if c4 {
                        "illegal (c4-off meant)".to_string()
                    } else {
                        format!("illegal ({e}), and c4-off is not legal either")
                    };
                }
                break;
            }
        };
        if w.ends_with('!') {
            let drawing: Vec<Move> = board
                .moves(&p)
                .into_iter()
                .filter(|&x| value_of_move(&p, x) == Some(Value::Draw))
                .collect();
            bangs += usize::from(drawing == vec![m]);
        }
        p = board.apply(&p, m);
    }
    let s = board.apply(&board.start(), dj(&board.start(), "d1-d2")?);
    let replies = ["a2-b2", "a3-b3", "a2-a1", "a4-b4"]
        .iter()
        .map(|w| dj(&s, w).map(|m| word(value_of_move(&s, m))))
        .collect::<Result<Vec<_>, _>>()?
        .join(", ");
    let q = board.apply(&s, dj(&s, "a4-b4")?);
    Ok(GameFacts {
        bangs_only_draw: bangs,
        d3_off,
        replies,
        c1c2: word(value_of_move(&q, dj(&q, "c1-c2")?)),
        a4b4: word(value_of_move(&s, dj(&s, "a4-b4")?)),
    })
}
