//! Exact odds of simple Chomp policies against a random opponent.
//!
//! Seed 003 (the 10×10 Chomp article) compares four ways of playing first on
//! every bar from 2×2 to 8×8 against an opponent who bites uniformly at
//! random, with five sampled games per bar. This module replaces the samples
//! with the exact probability that the first player wins.
//!
//! **Policies** (the article names them without defining them on every
//! position; these are the definitions used here, documented in `report.md`):
//! - [`Policy::Perfect`]: in an N-position, a winning bite (uniformly among
//!   them: the choice never changes the odds, every winning bite leads to a
//!   P-position); in a P-position (never reached by the first player from a
//!   bar larger than 1×1 when it plays perfectly), a uniformly random bite.
//! - [`Policy::FarCorner`]: the strategy-stealing bite: the square farthest
//!   from the poison, i.e. with the largest `row + col` (always a corner of
//!   the staircase, so the bite removes that one square); ties uniformly.
//!   On a bar it is the far corner `(m−1, n−1)`.
//! - [`Policy::Biggest`]: the bite that removes the most squares (always
//!   `(0, 1)`, leaving the poison column, or `(1, 0)`, leaving the poison
//!   row); ties uniformly.
//! - [`Policy::Random`]: a uniformly random legal bite.
//!
//! Ties are broken uniformly at random, so every policy plays the transposed
//! bar the transposed way and the odds of m×n and n×m are equal.
//!
//! **Dynamic programming.** Over the staircases of the m×n box in rank order
//! ([`ChompBox`]: a bite always lowers the rank), with `A(x)` the probability
//! that the first player wins when it is to move at `x` and `B(x)` the same
//! when the opponent is to move: at the poison alone `A = 0`, `B = 1`;
//! otherwise `A(x) = Σ_b π(b | x)·B(x − b)` over the policy's distribution
//! `π` and `B(x) = mean_b A(x − b)` over all legal bites. One ascending pass,
//! `C(m+n, m)` positions (8×8: 12,870) times at most `m·n − 1` bites, in
//! `f64` (the sums are of at most 63 terms; the tests compare with exact
//! fractions on small bars and with simulated games).

use super::{ChompBox, ChompError};

/// A first player's policy (seed 003's table; definitions in the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// A winning bite whenever there is one.
    Perfect,
    /// The strategy-stealing bite: the square farthest from the poison.
    FarCorner,
    /// The bite that removes the most squares.
    Biggest,
    /// A uniformly random bite.
    Random,
}

impl Policy {
    /// All policies, in seed 003's order.
    pub const ALL: [Policy; 4] = [
        Policy::Perfect,
        Policy::FarCorner,
        Policy::Biggest,
        Policy::Random,
    ];

    /// The policy in words, as in seed 003's table.
    pub fn describe(self) -> &'static str {
        match self {
            Policy::Perfect => "perfect play from the table",
            Policy::FarCorner => "the strategy-stealing far-corner bite",
            Policy::Biggest => "the biggest legal bite",
            Policy::Random => "a uniformly random bite",
        }
    }
}

/// The exact odds of every [`Policy`] on one bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarOdds {
    /// Rows of the bar.
    pub rows: u32,
    /// Columns of the bar.
    pub cols: u32,
    /// Probability that the first player wins, per policy in [`Policy::ALL`] order.
    pub win: [f64; 4],
}

impl BarOdds {
    /// The probability for one policy.
    pub fn of(&self, p: Policy) -> f64 {
        self.win[Policy::ALL.iter().position(|&q| q == p).expect("in ALL")]
    }
}

/// One position's legal bites: `(row, col, child rank, squares removed)`.
fn children(bx: &ChompBox, rows: &[u32], out: &mut Vec<(u32, u32, u64, u64)>) {
    out.clear();
    let mut child = rows.to_vec();
    for (i, &len) in rows.iter().enumerate() {
        for j in 0..len {
            if (i, j) == (0, 0) {
                continue;
            }
            let mut removed = 0u64;
            for (k, c) in child.iter_mut().enumerate().skip(i) {
                let new = rows[k].min(j);
                removed += u64::from(rows[k] - new);
                *c = new;
            }
            out.push((i as u32, j, bx.rank_rows(&child), removed));
            child[i..].copy_from_slice(&rows[i..]);
        }
    }
}

/// The exact probability that each [`Policy`], moving first on the
/// `rows × cols` bar, beats an opponent who bites uniformly at random.
///
/// # Errors
/// [`ChompError::BadBox`] if a side is zero or the box is too large for
/// [`ChompBox`]; bars beyond a few million staircases take long (the pass
/// looks at every legal bite of every staircase).
pub fn bar_odds(rows: u32, cols: u32) -> Result<BarOdds, ChompError> {
    let bx = ChompBox::new(rows as usize, cols as usize)?;
    let p = bx.solve();
    let len = bx.len() as usize;
    // a[k][x]: first player to move at x, policy k; b[k][x]: opponent to move.
    let mut a = vec![[0.0f64; 4]; len];
    let mut b = vec![[0.0f64; 4]; len];
    let mut state = vec![0u32; rows as usize];
    let mut kids = Vec::new();
    for x in 1..len {
        bx.unrank(x as u64, &mut state);
        children(&bx, &state, &mut kids);
        if kids.is_empty() {
            // The poison alone: whoever is to move loses.
            a[x] = [0.0; 4];
            b[x] = [1.0; 4];
            continue;
        }
        let n = kids.len() as f64;
        let mut mean_a = [0.0; 4];
        for &(_, _, y, _) in &kids {
            for k in 0..4 {
                mean_a[k] += a[y as usize][k];
            }
        }
        b[x] = mean_a.map(|s| s / n);
        for (k, policy) in Policy::ALL.iter().enumerate() {
            let bx_k = |y: u64| b[y as usize][k];
            a[x][k] = match policy {
                Policy::Random => kids.iter().map(|&(_, _, y, _)| bx_k(y)).sum::<f64>() / n,
                Policy::Perfect => {
                    let win: Vec<u64> = kids
                        .iter()
                        .map(|&(_, _, y, _)| y)
                        .filter(|&y| p.is_p(y))
                        .collect();
                    if win.is_empty() {
                        kids.iter().map(|&(_, _, y, _)| bx_k(y)).sum::<f64>() / n
                    } else {
                        win.iter().map(|&y| bx_k(y)).sum::<f64>() / win.len() as f64
                    }
                }
                Policy::FarCorner => {
                    let far = kids.iter().map(|&(i, j, _, _)| i + j).max().expect("kids");
                    uniform_over(&kids, |&(i, j, _, _)| i + j == far, bx_k)
                }
                Policy::Biggest => {
                    let most = kids.iter().map(|&(_, _, _, r)| r).max().expect("kids");
                    uniform_over(&kids, |&(_, _, _, r)| r == most, bx_k)
                }
            };
        }
    }
    let full = vec![cols; rows as usize];
    Ok(BarOdds {
        rows,
        cols,
        win: a[bx.rank_rows(&full) as usize],
    })
}

/// The mean of `value(child)` over the children that `pick` keeps (at least one).
fn uniform_over(
    kids: &[(u32, u32, u64, u64)],
    pick: impl Fn(&(u32, u32, u64, u64)) -> bool,
    value: impl Fn(u64) -> f64,
) -> f64 {
    let (sum, n) = kids
        .iter()
        .filter(|k| pick(k))
        .fold((0.0, 0u32), |(s, n), k| (s + value(k.2), n + 1));
    sum / f64::from(n)
}

/// Seed 003's table: [`bar_odds`] for every bar `a × b`, `lo ≤ a, b ≤ hi`,
/// rows then columns (2…8 gives 49 bars).
///
/// # Errors
/// As [`bar_odds`].
pub fn policy_table(lo: u32, hi: u32) -> Result<Vec<BarOdds>, ChompError> {
    let mut out = Vec::new();
    for r in lo..=hi {
        for c in lo..=hi {
            out.push(bar_odds(r, c)?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::chomp::{Bite, Staircase};
    use std::collections::BTreeMap;

    /// Exact fractions `num / den` in `u128` (small bars only).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Frac(u128, u128);

    fn gcd(a: u128, b: u128) -> u128 {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    impl Frac {
        fn new(n: u128, d: u128) -> Frac {
            let g = gcd(n, d).max(1);
            Frac(n / g, d / g)
        }
        fn add(self, o: Frac) -> Frac {
            let g = gcd(self.1, o.1);
            let d = self.1 / g * o.1;
            Frac::new(self.0 * (o.1 / g) + o.0 * (self.1 / g), d)
        }
        fn div(self, k: u128) -> Frac {
            Frac::new(self.0, self.1 * k)
        }
        fn f64(self) -> f64 {
            self.0 as f64 / self.1 as f64
        }
    }

    fn mean(v: &[Frac]) -> Frac {
        v.iter()
            .fold(Frac(0, 1), |s, &x| s.add(x))
            .div(v.len() as u128)
    }

    /// An independent solver: recursion over [`Staircase`] values with a
    /// memo, the policies written out on the staircase, exact fractions.
    struct Exact {
        p: BTreeMap<Staircase, bool>,
        memo: BTreeMap<(Staircase, bool, Policy), Frac>,
    }

    impl Exact {
        fn is_p(&mut self, s: &Staircase) -> bool {
            if let Some(&v) = self.p.get(s) {
                return v;
            }
            let v = s.bites().iter().all(|&b| !self.is_p(&s.after(b).unwrap()));
            self.p.insert(s.clone(), v);
            v
        }

        fn removed(s: &Staircase, b: Bite) -> u64 {
            s.squares() - s.after(b).unwrap().squares()
        }

        fn choices(&mut self, s: &Staircase, policy: Policy) -> Vec<Bite> {
            let all = s.bites();
            match policy {
                Policy::Random => all,
                Policy::Perfect => {
                    let w: Vec<Bite> = all
                        .iter()
                        .copied()
                        .filter(|&b| self.is_p(&s.after(b).unwrap()))
                        .collect();
                    if w.is_empty() { all } else { w }
                }
                Policy::FarCorner => {
                    let far = all.iter().map(|b| b.row + b.col).max().unwrap();
                    all.into_iter().filter(|b| b.row + b.col == far).collect()
                }
                Policy::Biggest => {
                    let most = all.iter().map(|&b| Self::removed(s, b)).max().unwrap();
                    all.into_iter()
                        .filter(|&b| Self::removed(s, b) == most)
                        .collect()
                }
            }
        }

        /// Probability that the first player wins; `ours`: it is to move.
        fn win(&mut self, s: &Staircase, ours: bool, policy: Policy) -> Frac {
            let key = (s.clone(), ours, policy);
            if let Some(&v) = self.memo.get(&key) {
                return v;
            }
            let v = if s.bites().is_empty() {
                if ours { Frac(0, 1) } else { Frac(1, 1) }
            } else {
                let moves = if ours {
                    self.choices(s, policy)
                } else {
                    s.bites()
                };
                let vals: Vec<Frac> = moves
                    .iter()
                    .map(|&b| self.win(&s.after(b).unwrap(), !ours, policy))
                    .collect();
                mean(&vals)
            };
            self.memo.insert(key, v);
            v
        }
    }

    #[test]
    fn odds_equal_exact_fractions_of_an_independent_recursion_on_small_bars() {
        let mut ex = Exact {
            p: BTreeMap::new(),
            memo: BTreeMap::new(),
        };
        for (r, c) in [
            (1, 2),
            (1, 5),
            (2, 2),
            (2, 3),
            (3, 2),
            (2, 5),
            (3, 3),
            (3, 4),
        ] {
            let odds = bar_odds(r, c).unwrap();
            let s = Staircase::rectangle(r, c).unwrap();
            for p in Policy::ALL {
                let f = ex.win(&s, true, p);
                assert!(
                    (odds.of(p) - f.f64()).abs() < 1e-12,
                    "{r}x{c} {p:?}: dp {} vs exact {}/{}",
                    odds.of(p),
                    f.0,
                    f.1
                );
            }
        }
        // Hand-checked values: on 2×2 every first bite but (1, 1) loses at
        // once or leaves an L the opponent can equalise; (1, 1) wins.
        let f = ex.win(&Staircase::rectangle(2, 2).unwrap(), true, Policy::Random);
        assert_eq!(f, Frac(1, 3));
        // 2×n, biggest bite: the poison row or column of two squares is left
        // and the opponent takes the other square: always lost.
        assert_eq!(bar_odds(2, 7).unwrap().of(Policy::Biggest), 0.0);
    }

    #[test]
    fn perfect_play_always_wins_and_odds_are_symmetric_under_transposition() {
        for t in policy_table(2, 6).unwrap() {
            assert_eq!(t.of(Policy::Perfect), 1.0, "{}x{}", t.rows, t.cols);
            let u = bar_odds(t.cols, t.rows).unwrap();
            for p in Policy::ALL {
                assert!(
                    (t.of(p) - u.of(p)).abs() < 1e-12,
                    "{}x{} {p:?}",
                    t.rows,
                    t.cols
                );
            }
        }
    }

    #[test]
    fn biggest_bite_has_its_closed_form() {
        // The biggest bite leaves the shorter arm, a line of k = min(m, n)
        // squares; the opponent wins only by biting next to the poison, one
        // of its k − 1 bites; otherwise the first player takes all but the
        // poison. So the odds are 1 − 1/(k − 1).
        for t in policy_table(2, 8).unwrap() {
            let k = f64::from(t.rows.min(t.cols));
            let want = 1.0 - 1.0 / (k - 1.0);
            assert!(
                (t.of(Policy::Biggest) - want).abs() < 1e-12,
                "{}x{}",
                t.rows,
                t.cols
            );
        }
    }
}
