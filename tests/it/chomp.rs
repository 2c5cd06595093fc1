//! Chomp box solver: cross-checks against an independent game-tree search,
//! rank bijection, and the published facts of seeds 000 and 003.

use std::collections::HashMap;

use gametables::solvers::chomp::{Bite, ChompBox, PPositions, Staircase};
use proptest::prelude::*;

/// Independent naive solver: memoised game-tree search over row vectors,
/// with its own bite rule; no ranks, no boxes.
struct Naive {
    memo: HashMap<Vec<u32>, bool>,
}

impl Naive {
    fn new() -> Self {
        Naive {
            memo: HashMap::new(),
        }
    }

    /// Every bite of `rows` but the poisoned square, with the rows it leaves
    /// (trailing zeros stripped).
    fn bites(rows: &[u32]) -> Vec<(Bite, Vec<u32>)> {
        let mut out = Vec::new();
        for i in 0..rows.len() {
            for j in 0..rows[i] {
                if i == 0 && j == 0 {
                    continue;
                }
                let mut child: Vec<u32> = rows
                    .iter()
                    .enumerate()
                    .map(|(k, &r)| if k >= i { r.min(j) } else { r })
                    .collect();
                while child.last() == Some(&0) {
                    child.pop();
                }
                let bite = Bite {
                    row: i as u32,
                    col: j,
                };
                out.push((bite, child));
            }
        }
        out
    }

    /// True if the player to move wins from `rows` (trailing zeros stripped).
    fn wins(&mut self, rows: &[u32]) -> bool {
        if let Some(&w) = self.memo.get(rows) {
            return w;
        }
        let win = Self::bites(rows)
            .into_iter()
            .any(|(_, child)| !self.wins(&child));
        self.memo.insert(rows.to_vec(), win);
        win
    }

    fn winning_moves(&mut self, rows: &[u32]) -> Vec<Bite> {
        Self::bites(rows)
            .into_iter()
            .filter(|(_, child)| !self.wins(child))
            .map(|(bite, _)| bite)
            .collect()
    }
}

/// Every staircase of `m`×`n` (rank ≥ 1) agrees with the naive search, on
/// P/N status and on the full list of winning moves.
fn check_box_against_naive(m: usize, n: usize) {
    let b = ChompBox::new(m, n).unwrap();
    let p = b.solve();
    let mut naive = Naive::new();
    let mut rows = vec![0u32; m];
    for x in 1..b.len() {
        b.unrank(x, &mut rows);
        let s = Staircase::new(&rows).unwrap();
        assert_eq!(p.is_p(x), !naive.wins(s.rows()), "{m}x{n} rank {x}: {s}");
        assert_eq!(
            b.winning_moves(&p, &s).unwrap(),
            naive.winning_moves(s.rows()),
            "{m}x{n}: winning moves of {s}"
        );
    }
}

#[test]
fn every_staircase_of_4x5_agrees_with_naive_search() {
    check_box_against_naive(4, 5);
}

#[test]
fn every_staircase_of_3x7_agrees_with_naive_search() {
    check_box_against_naive(3, 7);
}

#[test]
fn marking_and_ascending_pass_agree_on_8x10() {
    let b = ChompBox::new(8, 10).unwrap();
    assert_eq!(b.len(), 43_758); // BRIEF.md: C(18, 8)
    assert_eq!(b.solve(), b.solve_ascending());
}

#[test]
fn box_sizes_are_binomials() {
    // BRIEF.md: 8×10 has 43,758 staircases, 14×14 has 40,116,600.
    assert_eq!(ChompBox::new(14, 14).unwrap().len(), 40_116_600);
    assert_eq!(ChompBox::new(10, 10).unwrap().len(), 184_756);
}

proptest! {
    #![proptest_config(crate::support::proptest_config(256))]
    /// Rank/unrank is a bijection onto 0…C(m+n,m)−1 on larger boxes.
    #[test]
    fn rank_unrank_round_trip_on_large_boxes(m in 1usize..=14, n in 1usize..=60, seed in any::<u64>()) {
        let b = ChompBox::new(m, n);
        prop_assume!(b.is_ok()); // boxes over 2^33 ranks are refused by design
        let b = b.unwrap();
        let x = seed % b.len();
        let mut rows = vec![0u32; m];
        b.unrank(x, &mut rows);
        prop_assert!(rows.windows(2).all(|w| w[0] >= w[1]));
        prop_assert!(rows[0] as usize <= n);
        prop_assert_eq!(b.rank_rows(&rows), x);
    }

    /// A random staircase ranks inside the box and unranks back to itself.
    #[test]
    fn random_staircase_round_trips(mut rows in proptest::collection::vec(0u32..=20, 1..=12)) {
        rows.sort_unstable_by(|a, b| b.cmp(a));
        let b = ChompBox::new(rows.len(), 20).unwrap();
        let x = b.rank_rows(&rows);
        prop_assert!(x < b.len());
        let mut back = vec![0u32; rows.len()];
        b.unrank(x, &mut back);
        prop_assert_eq!(back, rows);
    }

    /// Transposing a staircase mirrors its winning moves (rows ↔ columns).
    #[test]
    fn winning_moves_mirror_under_transpose(mut rows in proptest::collection::vec(1u32..=7, 1..=7)) {
        rows.sort_unstable_by(|a, b| b.cmp(a));
        let s = Staircase::new(&rows).unwrap();
        let t = s.transpose();
        let (bs, bt) = (ChompBox::new(7, 7).unwrap(), ChompBox::new(7, 7).unwrap());
        let (ps, pt) = (bs.solve(), bt.solve());
        let mut mirrored: Vec<Bite> = bs.winning_moves(&ps, &s).unwrap().iter()
            .map(|b| Bite { row: b.col, col: b.row }).collect();
        mirrored.sort();
        prop_assert_eq!(mirrored, bt.winning_moves(&pt, &t).unwrap());
    }
}

/// Seed 000: 2×n P-positions are exactly the staircases whose rows differ by
/// one, and the winning move of the 2×n rectangle is the top-right corner.
#[test]
fn two_row_facts_up_to_2x200() {
    let b = ChompBox::new(2, 200).unwrap();
    let p = b.solve();
    let mut rows = [0u32; 2];
    for x in 1..b.len() {
        b.unrank(x, &mut rows);
        assert_eq!(p.is_p(x), rows[0] == rows[1] + 1, "{rows:?}");
    }
    for n in 1..=200 {
        let s = Staircase::rectangle(2, n).unwrap();
        assert_eq!(
            b.winning_moves(&p, &s).unwrap(),
            vec![Bite { row: 1, col: n - 1 }],
            "2x{n}"
        );
    }
}

/// Seed 000: the only winning move of n×n is (1, 1), n ≤ 14.
#[test]
fn square_winning_move_is_1_1_up_to_14x14() {
    let b = ChompBox::new(14, 14).unwrap();
    let p = b.solve();
    for n in 2..=14 {
        let s = Staircase::rectangle(n, n).unwrap();
        assert_eq!(
            b.winning_moves(&p, &s).unwrap(),
            vec![Bite { row: 1, col: 1 }],
            "{n}x{n}"
        );
    }
}

/// The winning moves of the `r`×`c` rectangle in box `b` (P-positions `p`).
fn rectangle_winning_moves(b: &ChompBox, p: &PPositions, r: u32, c: u32) -> Vec<Bite> {
    b.winning_moves(p, &Staircase::rectangle(r, c).unwrap())
        .unwrap()
}

/// Gale (via seed 000): 4×5 → (2, 2), 4×6 → (1, 2), each the only winning move.
#[test]
fn gale_4x5_and_4x6() {
    let b = ChompBox::new(4, 6).unwrap();
    let p = b.solve();
    let wm = |r, c| rectangle_winning_moves(&b, &p, r, c);
    assert_eq!(wm(4, 5), vec![Bite { row: 2, col: 2 }]);
    assert_eq!(wm(4, 6), vec![Bite { row: 1, col: 2 }]);
}

/// Seed 003: the 10×10 box has 184,755 shapes besides the empty one, 2,612
/// P-positions, 9,053,045 legal bites of which 312,237 win; a won position has
/// 1.71 winning bites on average.
#[test]
fn ten_by_ten_box_census_seed_003() {
    let b = ChompBox::new(10, 10).unwrap();
    let p = b.solve();
    let st = b.stats(&p);
    assert_eq!(st.positions, 184_755);
    assert_eq!(st.p_positions, 2_612);
    assert_eq!(st.legal_bites, 9_053_045);
    assert_eq!(st.winning_bites, 312_237);
    let avg = st.winning_bites as f64 / (st.positions - st.p_positions) as f64;
    assert_eq!(format!("{avg:.2}"), "1.71");
}

/// Seed 003: the far-corner bite wins on only 19 of the 99 bars up to 10×10,
/// all with a side of exactly 2; an L-shape is a P-position exactly when its
/// arms are equal (10 of the 2,612).
#[test]
fn far_corner_and_l_shapes_seed_003() {
    let b = ChompBox::new(10, 10).unwrap();
    let p = b.solve();
    let mut bars = 0;
    let mut corner_wins = Vec::new();
    for r in 1..=10u32 {
        for c in 1..=10u32 {
            if (r, c) == (1, 1) {
                continue;
            }
            bars += 1;
            let s = Staircase::rectangle(r, c).unwrap();
            if b.winning_moves(&p, &s).unwrap().contains(&Bite {
                row: r - 1,
                col: c - 1,
            }) {
                corner_wins.push((r, c));
            }
        }
    }
    assert_eq!(bars, 99);
    assert_eq!(corner_wins.len(), 19);
    assert!(corner_wins.iter().all(|&(r, c)| r == 2 || c == 2));
    let mut l_p = 0;
    for a in 1..=10u32 {
        for h in 1..=10u32 {
            let mut rows = vec![1u32; h as usize];
            rows[0] = a;
            let x = b.rank_of(&Staircase::new(&rows).unwrap()).unwrap();
            assert_eq!(p.is_p(x), a == h, "L-shape arms {a}, {h}");
            l_p += usize::from(p.is_p(x));
        }
    }
    assert_eq!(l_p, 10);
}

/// Seed 000: 8×10 has exactly two winning moves, (3, 8) and (4, 5); 6×13 has
/// (3, 11) and (4, 8).
#[test]
fn two_winning_moves_8x10_and_6x13() {
    let b = ChompBox::new(8, 13).unwrap();
    let p = b.solve();
    let wm = |r, c| rectangle_winning_moves(&b, &p, r, c);
    assert_eq!(
        wm(8, 10),
        vec![Bite { row: 3, col: 8 }, Bite { row: 4, col: 5 }]
    );
    assert_eq!(
        wm(6, 13),
        vec![Bite { row: 3, col: 11 }, Bite { row: 4, col: 8 }]
    );
}

#[test]
fn staircase_validation_errors() {
    assert!(Staircase::new(&[3, 4]).is_err());
    assert!(Staircase::new(&[0, 0]).is_err());
    assert!(Staircase::new(&[]).is_err());
    assert_eq!(Staircase::new(&[3, 2, 0, 0]).unwrap().rows(), &[3, 2]);
    let b = ChompBox::new(3, 3).unwrap();
    assert!(b.rank_of(&Staircase::new(&[4]).unwrap()).is_err());
    assert!(b.rank_of(&Staircase::new(&[1, 1, 1, 1]).unwrap()).is_err());
}
