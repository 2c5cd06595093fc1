//! Tic-tac-toe on the engine against a plain minimax written from the
//! rules alone (no [`Board`], no engine), and against published counts.

use std::collections::HashMap;

use super::*;
use crate::solvers::engine::{LayerStats, Value, check_rules, reach_all, solve_all, value_at};

/// The lines of the 3×3 board as cell triples (cells `x + 3y`), written out
/// again for the oracle.
const TRIPLES: [[usize; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// Cells: 0 empty, 1 X, 2 O.
type Grid = [u8; 9];

fn line_of(g: &Grid, who: u8) -> bool {
    TRIPLES.iter().any(|t| t.iter().all(|&c| g[c] == who))
}

/// The value for the player to move by plain minimax over the game tree
/// from `g` (a reachable grid), memoised; every grid visited lands in
/// `seen`. A win takes the shortest route, a loss the longest.
fn minimax(g: Grid, memo: &mut HashMap<Grid, Value>) -> Value {
    if let Some(&v) = memo.get(&g) {
        return v;
    }
    let xs = g.iter().filter(|&&c| c == 1).count();
    let os = g.iter().filter(|&&c| c == 2).count();
    let (me, them) = if xs == os { (1, 2) } else { (2, 1) };
    let v = if line_of(&g, them) {
        Value::Loss(0)
    } else if xs + os == 9 {
        Value::Draw
    } else {
        let mut best_win: Option<u16> = None;
        let mut longest_loss: Option<u16> = None;
        let mut all_lose = true;
        for c in 0..9 {
            if g[c] != 0 {
                continue;
            }
            let mut h = g;
            h[c] = me;
            match minimax(h, memo) {
                Value::Loss(d) => best_win = Some(best_win.map_or(d + 1, |w| w.min(d + 1))),
                Value::Win(d) => longest_loss = Some(longest_loss.map_or(d + 1, |l| l.max(d + 1))),
                Value::Draw => all_lose = false,
            }
        }
        match (best_win, all_lose) {
            (Some(d), _) => Value::Win(d),
            (None, true) => Value::Loss(longest_loss.expect("a move")),
            (None, false) => Value::Draw,
        }
    };
    memo.insert(g, v);
    v
}

fn board_of(g: &Grid) -> Board {
    let mask = |who| {
        (0..9)
            .filter(|&c| g[c] == who)
            .fold(0u16, |m, c| m | 1 << c)
    };
    Board {
        x: mask(1),
        o: mask(2),
    }
}

/// Every reachable grid and its minimax value.
fn oracle() -> HashMap<Grid, Value> {
    let mut memo = HashMap::new();
    minimax([0; 9], &mut memo);
    memo
}

#[test]
fn the_rules_pass_the_engines_self_test() {
    assert_eq!(
        check_rules(&TicTacToe::new(), 2000, 5),
        Vec::<String>::new()
    );
}

#[test]
fn layers_hold_6046_boards_and_rank_every_one_once() {
    let g = TicTacToe::new();
    let sizes: Vec<u64> = (0..10).map(|l| g.layer_size(l)).collect();
    assert_eq!(sizes, [1, 9, 72, 252, 756, 1260, 1680, 1260, 630, 126]);
    assert_eq!(sizes.iter().sum::<u64>(), 6046);
    for l in 0..10 {
        let mut all = Vec::new();
        g.for_each_position(l, 0, g.layer_size(l), &mut |r, b| {
            assert_eq!(g.rank(&b), (l, r));
            assert_eq!(g.unrank(l, r), b);
            all.push(b);
        });
        all.sort_by_key(|b| (b.x, b.o));
        all.dedup();
        assert_eq!(all.len() as u64, g.layer_size(l));
    }
}

/// The engine's value and depth of every reachable board is the plain
/// minimax's; the start is a draw.
#[test]
fn the_engine_agrees_with_plain_minimax_on_every_reachable_board() {
    let g = TicTacToe::new();
    let solved = solve_all(&g, 2).unwrap();
    let want = oracle();
    for (grid, &v) in &want {
        let b = board_of(grid);
        let (l, r) = g.rank(&b);
        assert_eq!(value_at(&solved[l], false, r), Some(v), "{grid:?}");
    }
    assert_eq!(value_at(&solved[0], false, 0), Some(Value::Draw));
    // The bytes do not depend on the thread count.
    assert_eq!(solve_all(&g, 1).unwrap(), solved);
}

/// 5,478 legal positions, 958 of them where play has ended (Mathematics
/// Stack Exchange, "TicTacToe State Space Choose Calculation", 2013, by
/// exhaustive search); counted by the engine's reachability and by the
/// oracle's tree walk.
#[test]
fn published_5478_legal_positions_958_ended() {
    let g = TicTacToe::new();
    let bits = reach_all(&g, Board::START, 1);
    let mut reachable = 0;
    let mut ended = 0;
    for (l, words) in bits.iter().enumerate() {
        for r in 0..g.layer_size(l) {
            if words[(r / 64) as usize] >> (r % 64) & 1 == 1 {
                reachable += 1;
                ended += u64::from(g.terminal(&g.unrank(l, r)).is_some());
            }
        }
    }
    assert_eq!(reachable, 5478);
    assert_eq!(ended, 958);
    assert_eq!(oracle().len(), 5478);
}

/// Legal positions after k plays up to rotation and reflection, and those
/// among them with a winning strategy for X and for O (a position already
/// won included): OEIS A008907 (R. Cox), and row 3 of A317573 and A317574
/// (Á. Ibeas).
#[test]
fn published_counts_up_to_symmetry_by_plays_oeis_a008907_a317573_a317574() {
    const A008907: [u64; 10] = [1, 3, 12, 38, 108, 174, 204, 153, 57, 15];
    const A317573_ROW3: [u64; 10] = [0, 0, 7, 9, 85, 67, 139, 70, 23, 12];
    const A317574_ROW3: [u64; 10] = [0, 0, 0, 8, 5, 72, 38, 56, 23, 0];
    let g = TicTacToe::new();
    let solved = solve_all(&g, 2).unwrap();
    let bits = reach_all(&g, Board::START, 2);
    let (mut classes, mut x_wins, mut o_wins) = ([0u64; 10], [0u64; 10], [0u64; 10]);
    for l in 0..10 {
        for r in 0..g.layer_size(l) {
            if bits[l][(r / 64) as usize] >> (r % 64) & 1 == 0 {
                continue;
            }
            let b = g.unrank(l, r);
            let canonical = (0..8).map(|s| b.image(s)).min_by_key(|i| (i.x, i.o));
            if canonical != Some(b) {
                continue;
            }
            classes[l] += 1;
            let v = value_at(&solved[l], false, r).expect("a value byte");
            let mover_wins = matches!(v, Value::Win(_));
            let mover_loses = matches!(v, Value::Loss(_));
            if (b.x_to_move() && mover_wins) || (!b.x_to_move() && mover_loses) {
                x_wins[l] += 1;
            }
            if (b.x_to_move() && mover_loses) || (!b.x_to_move() && mover_wins) {
                o_wins[l] += 1;
            }
        }
    }
    assert_eq!(classes, A008907);
    assert_eq!(classes.iter().sum::<u64>(), 765);
    assert_eq!(x_wins, A317573_ROW3);
    assert_eq!(o_wins, A317574_ROW3);
    // The start's layer: one class, neither side wins: a draw.
    let s = LayerStats::of(&solved[0]);
    assert_eq!((s.wins, s.losses, s.draws), (0, 0, 1));
}

#[test]
fn symmetries_are_the_eight_of_the_square() {
    // a1 (corner) goes to the 4 corners, b2 stays, b1 (edge) to 4 edges.
    let orbit = |c: usize| {
        let mut v: Vec<u16> = (0..8)
            .map(|g| Board { x: 1 << c, o: 0 }.image(g).x)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    assert_eq!(orbit(0), [1, 4, 64, 256]);
    assert_eq!(orbit(4), [16]);
    assert_eq!(orbit(1), [2, 8, 32, 128]);
    for g in 0..8 {
        for l in LINES {
            let img = Board { x: l, o: 0 }.image(g).x;
            assert!(
                LINES.contains(&img),
                "symmetry {g} maps line {l:#b} to {img:#b}"
            );
        }
    }
}

#[test]
fn notation_reads_back_and_refuses_impossible_counts() {
    let b = Board::START.play(0).play(4).play(8);
    assert_eq!(b.to_string(), "..X/.O./X..");
    assert_eq!(Board::parse("..X/.O./X..").unwrap(), b);
    assert_eq!(Board::parse(" o: ..x / .o. / x.. ").unwrap(), b);
    assert!(
        Board::parse("X:..X/.O./X..")
            .unwrap_err()
            .contains("O's turn")
    );
    assert!(
        Board::parse("XX./.../...")
            .unwrap_err()
            .contains("2 X and 0 O")
    );
    assert!(Board::parse("X../...").is_err());
    assert!(Board::parse("X../.?./...").unwrap_err().contains("`?`"));
    // Regressions: a digit 0 is not an O, and `XX:` names no player.
    assert!(Board::parse("X0./.../...").unwrap_err().contains("`0`"));
    assert!(
        Board::parse("XX:.../.../...")
            .unwrap_err()
            .contains("names no player")
    );
}
