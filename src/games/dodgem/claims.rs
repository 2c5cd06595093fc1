//! Every published Dodgem number we know, checked against a `dodgem` run:
//! the 1996 rec.games.abstract thread (Erickson, Fleury, desJardins),
//! Winning Ways, the GamesCrafters figures and the sen-ltd Dodgem article.

use super::{Dodgem, max_cars, whole};
use crate::games::engine::layout::LayerRow;
use crate::games::engine::{RunFacts, RunValues, first_moves};
use crate::pipeline::claim_table::{Fact, claims_from_table};
use crate::pipeline::error::Result;
use crate::pipeline::kind::Claim;
use crate::solvers::dodgem::{DodgemLayers, Move, Position, Side};
use crate::solvers::engine::{LayeredGame, Value};
use crate::util::{percent as pct, thousands as sep};

/// Whether the layer `a-b` has cars of both colours on the board.
fn both_sides(row: &LayerRow) -> bool {
    let cars = |w: &str| w.parse::<u32>().is_ok_and(|c| c > 0);
    row.layer
        .split_once('-')
        .is_some_and(|(a, b)| cars(a) && cars(b))
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

/// The claim table: every published Dodgem number we know (the 1996
/// rec.games.abstract thread, Winning Ways, GamesCrafters, the sen-ltd
/// Dodgem article), as data.
pub const TABLE: &str = include_str!("claims.toml");

/// The facts [`dodgem_claims`] computes (a row's `fact` starts with one).
pub const FACTS: &[&str] = &[
    "positions",
    "placements",
    "both-sides-placements",
    "layer",
    "start",
    "first-move",
    "first-moves",
    "first-moves-all-draw",
    "reachable-wins-losses",
    "reachable-draws",
    "lost-for-both",
    "longest",
    "longest-depth",
    "both-sides-draw-share",
    "draw-shares",
    "erickson-third-diagram",
    "desjardins-bangs",
    "desjardins-d3-off",
    "desjardins-replies",
    "desjardins-c1-c2",
    "desjardins-a4-b4",
];

/// Every claim of [`TABLE`] with our value where this run covers it.
///
/// # Errors
/// If the table cannot be read (a test reads it on every build).
pub fn dodgem_claims(
    params: &toml::Table,
    facts: &RunFacts,
    values: &RunValues<'_, DodgemLayers>,
) -> Result<Vec<Claim>> {
    let n = values.game().board().n();
    let max_cars = (!whole(params)).then(|| max_cars(params, n));
    let firsts = first_moves::<Dodgem>(values);
    // Read from the values of boards up to 5×5 only.
    let lost = if n <= 5 && max_cars.is_none() {
        lost_for_both(values)
    } else {
        Vec::new()
    };
    let (both_positions, both_draws) = facts.positions_and_draws(both_sides);
    let (longest_win, longest_loss) = facts.longest();
    // Counts are compared only with what this run counted, over the whole of
    // its own board (issue 27: a run with `max_cars = 0` once "matched" six
    // published counts computed by formula).
    let count_why = match max_cars {
        None => format!("this run counts the {n}×{n} board only"),
        Some(m) => format!("this run counts only the {n}×{n} layers with at most {m} cars a side"),
    };
    // Every other claim about a board needs all of it (the start,
    // reachability, counts over every layer).
    let why = match max_cars {
        None => format!("this run solves {n}×{n}"),
        Some(m) => format!("this run solves the {n}×{n} layers with at most {m} cars a side"),
    };
    let [ra, rw, rl, rd] = facts.reachable().unwrap_or_default();
    let mut game: Option<Result<GameFacts, String>> = None;
    claims_from_table("src/games/dodgem/claims.toml", TABLE, |row| {
        let m: usize = row.on.as_deref()?.parse().ok()?;
        let mut words = row.fact.split_whitespace();
        let name = words.next().filter(|w| FACTS.contains(w))?;
        let args: Vec<&str> = words.collect();
        let covered = m == n && max_cars.is_none();
        let fact = match name {
            "positions" | "placements" | "both-sides-placements" if !covered => {
                Fact::NotCovered(count_why.clone())
            }
            "positions" => Fact::ours(sep(facts.positions().into())),
            "placements" => Fact::ours(sep(u128::from(facts.positions()) / 2)),
            "both-sides-placements" => {
                let p = u128::from(both_positions / 2);
                Fact::Ours(format!("{} = 2 × {}", sep(p), sep(p / 2)))
            }
            "layer" => match facts.layer(args.first()?).filter(|_| m == n) {
                Some(l) => Fact::ours(sep(u128::from(l.positions))),
                None if m == n => Fact::NotCovered(count_why.clone()),
                None => Fact::NotCovered(format!("this run counts the {n}×{n} board only")),
            },
            _ if !covered => Fact::NotCovered(why.clone()),
            "start" => Fact::ours(facts.start.clone().unwrap_or_default()),
            "first-move" => Fact::ours(firsts.get(*args.first()?).cloned().unwrap_or_default()),
            "first-moves" => Fact::Ours(
                args.iter()
                    .map(|m| format!("{m} {}", firsts.get(*m).cloned().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            "first-moves-all-draw" => {
                let draws = firsts.values().filter(|v| *v == "draw").count();
                Fact::Ours(if draws == firsts.len() {
                    format!("draw ×{draws}")
                } else {
                    format!("{firsts:?}")
                })
            }
            "reachable-wins-losses" => Fact::Ours(format!(
                "{} = {} + {}, {} draws",
                sep(ra.into()),
                sep(rw.into()),
                sep(rl.into()),
                rd
            )),
            "reachable-draws" => Fact::Ours(format!(
                "{}, {} draws ({})",
                sep(ra.into()),
                sep(rd.into()),
                pct(rd, ra)
            )),
            "lost-for-both" => Fact::ours(lost.len()),
            "longest" => {
                let m = longest_win.max(longest_loss);
                let kind = if longest_win >= longest_loss {
                    "win"
                } else {
                    "loss"
                };
                Fact::Ours(format!(
                    "{m} (a {kind} in {m}; longest win {})",
                    longest_win
                ))
            }
            "longest-depth" => Fact::ours(longest_win.max(longest_loss)),
            "both-sides-draw-share" => Fact::Ours(pct(both_draws, both_positions)),
            "draw-shares" => Fact::Ours(format!(
                "{} of positions with both sides on the board, {} of reachable positions",
                pct(both_draws, both_positions),
                pct(rd, ra)
            )),
            "erickson-third-diagram" => Fact::Ours(erickson_third_diagram(values, &lost)),
            d if d.starts_with("desjardins-") => {
                match game.get_or_insert_with(|| desjardins_game(values)) {
                    Err(w) => Fact::NotCovered(w.clone()),
                    Ok(g) => Fact::Ours(match d {
                        "desjardins-bangs" => format!("{} of 3", g.bangs_only_draw),
                        "desjardins-d3-off" => g.d3_off.clone(),
                        "desjardins-replies" => g.replies.clone(),
                        "desjardins-c1-c2" => g.c1c2.clone(),
                        "desjardins-a4-b4" => {
                            format!("1… a4-b4 is a {}; 2. d2-d3 throws the win away", g.a4b4)
                        }
                        _ => return None,
                    }),
                }
            }
            _ => return None,
        };
        Some(fact)
    })
}

/// Erickson's third 3×3 diagram (blue a3,b3; red c1,c2) read from the run,
/// and whether the true third pair is among the positions lost for both.
fn erickson_third_diagram(values: &RunValues<'_, DodgemLayers>, lost: &[String]) -> String {
    let board = values.game().board();
    let word = |q: &Position| {
        values
            .value(q)
            .map_or_else(|e| format!("? ({e})"), |v| v.to_string())
    };
    let p = board.parse_position("blue:a3,b3 red:c1,c2").expect("valid");
    let truth = [
        "blue:a3,b3 red:a2,b2 to-move:blue",
        "blue:b1,b2 red:c1,c2 to-move:blue",
    ];
    let has_truth = truth.iter().all(|t| lost.iter().any(|x| x == t));
    format!(
        "blue to move: {}; red to move: {}; the true third pair is blue a3,b3 red a2,b2 and blue b1,b2 red c1,c2 ({})",
        word(&p),
        word(&p.with_to_move(Side::Red)),
        if has_truth { "both found" } else { "NOT found" }
    )
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
        let ours = crate::solvers::dodgem::from_desjardins(&board, w).map_err(|e| e.to_string())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::claim_table::rows_naming;

    #[test]
    fn every_row_of_the_table_names_a_fact_and_a_board_the_code_knows() {
        let rows = rows_naming("dodgem/claims.toml", TABLE, FACTS).unwrap();
        assert_eq!(rows.len(), 33);
        for r in &rows {
            let m: usize = r.on.as_deref().unwrap().parse().unwrap();
            assert!((2..=5).contains(&m), "{}", r.claim);
            assert!(r.claim.starts_with(&format!("{m}×{m}: ")), "{}", r.claim);
        }
    }
}
