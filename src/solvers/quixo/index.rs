//! Dense ranking of one layer `(a, b)` and the layer graph.
//!
//! A layer is ranked by the engine's shared two-colour placement ranking
//! ([`Placement`]: colex ranks in the combinatorial number system), mine
//! first. In layer `(a, b)` on N = n² cells:
//!
//! ```text
//! rank = rank(mine among the N cells) · C(N − a, b) + rank(theirs among the N − a cells not mine)
//! ```
//!
//! where the opponent's cubes are renumbered among the cells not mine (cell
//! c becomes c − #mine below c). This is the layout of Dodgem's layers.
//! Summed over all layers, `Σ_{a+b ≤ N} C(N, a)·C(N − a, b) = 3^N`.

use super::{Board, MAX_N, MIN_N, QuixoError};
use crate::solvers::engine::placement::{Placement, Placements};

pub use crate::solvers::engine::placement::binomial;

/// Boards of layer `(a, b)` on the n×n board: `C(n², a) · C(n² − a, b)`,
/// 0 if `a + b > n²`. Example: 5×5 layer (9, 8) has 26,293,088,250.
pub fn layer_size(n: usize, a: usize, b: usize) -> u64 {
    let cells = (n * n) as u64;
    if (a + b) as u64 > cells {
        return 0;
    }
    binomial(cells, a as u64) * binomial(cells - a as u64, b as u64)
}

/// Boards of all layers of the n×n board: `3^(n²)` (19,683; 43,046,721;
/// 847,288,609,443 for n = 3, 4, 5). Every board once, seen by the player to
/// move; with the absolute colour to move, twice as many positions.
pub fn total_boards(n: usize) -> u64 {
    3u64.pow((n * n) as u32)
}

/// Every layer `(a, b)` with `a + b ≤ n²`, by decreasing `a + b`, then
/// decreasing `a`: a solver may take them in this order, solving `(a, b)`
/// together with `(b, a)` ([`solve_order`]).
pub fn layers(n: usize) -> Vec<(usize, usize)> {
    let cells = n * n;
    let mut out = Vec::new();
    for total in (0..=cells).rev() {
        for a in (0..=total).rev() {
            out.push((a, total - a));
        }
    }
    out
}

/// The units of a layered solve, in dependency order: the pairs `(a, b)`
/// with `a ≥ b`, by decreasing `a + b` (then decreasing `a`). The unit
/// `(a, b)` is the layers `(a, b)` and `(b, a)` (one layer if `a = b`),
/// which reach each other; their other moves reach only layers `(b, a + 1)`
/// and `(a, b + 1)`, of units with one more cube, solved before.
pub fn solve_order(n: usize) -> Vec<(usize, usize)> {
    layers(n).into_iter().filter(|&(a, b)| a >= b).collect()
}

/// The ranking of layer `(a, b)` of the n×n board: the boards with `a`
/// cubes mine and `b` theirs ↔ `0 … size − 1` (module doc): a
/// [`Placement`] of the n² cells, mine first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layer {
    n: usize,
    ranking: Placement,
}

impl Layer {
    /// The layer with `a` cubes of the player to move and `b` of the
    /// opponent on the n×n board.
    ///
    /// # Errors
    /// [`QuixoError::BadSize`] for n outside 2 … 5, [`QuixoError::BadLayer`]
    /// if `a + b > n²`.
    pub fn new(n: usize, a: usize, b: usize) -> Result<Layer, QuixoError> {
        if !(MIN_N..=MAX_N).contains(&n) {
            return Err(QuixoError::BadSize(n));
        }
        let ranking = Placement::new(n * n, a, b).ok_or(QuixoError::BadLayer { a, b, n })?;
        Ok(Layer { n, ranking })
    }

    /// The layer of board `b` on the n×n board.
    ///
    /// # Errors
    /// As [`Layer::new`].
    pub fn of(n: usize, board: Board) -> Result<Layer, QuixoError> {
        let (a, b) = board.layer();
        Layer::new(n, a, b)
    }

    /// Board size n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Cubes of the player to move.
    pub fn a(&self) -> usize {
        self.ranking.a()
    }
    /// Cubes of the opponent.
    pub fn b(&self) -> usize {
        self.ranking.b()
    }
    /// Boards in the layer: `C(n², a) · C(n² − a, b)`.
    pub fn size(&self) -> u64 {
        self.ranking.size()
    }
    /// `C(n² − a, b)`: ranks per `mine` set (the block length; boards with
    /// the same `mine` have consecutive ranks).
    pub fn theirs_ranks(&self) -> u64 {
        self.ranking.second_ranks()
    }

    /// The rank of `board`, which must lie in this layer (checked in debug
    /// builds only).
    #[inline]
    pub fn rank(&self, board: Board) -> u64 {
        self.ranking
            .rank(u64::from(board.mine), u64::from(board.theirs))
    }

    /// The board of rank `r`.
    ///
    /// # Panics
    /// If `r ≥ size()`.
    #[inline]
    pub fn unrank(&self, r: u64) -> Board {
        let (mine, theirs) = self.ranking.unrank(r);
        Board {
            mine: mine as u32,
            theirs: theirs as u32,
        }
    }

    /// Every board of the layer in rank order (rank 0 first), cheaper than
    /// unranking each: the `mine` sets in colex order, and for each the
    /// `theirs` sets among the free cells in colex order.
    pub fn boards(&self) -> LayerBoards {
        LayerBoards(self.ranking.iter_from(0))
    }

    /// The boards of ranks `r`, `r + 1`, … in order ([`Layer::boards`]
    /// started at rank `r < size()`).
    ///
    /// # Panics
    /// If `r ≥ size()`.
    pub fn boards_from(&self, r: u64) -> LayerBoards {
        assert!(
            r < self.size(),
            "rank {r} of a layer of {} boards",
            self.size()
        );
        LayerBoards(self.ranking.iter_from(r))
    }

    /// The layers the moves of this one can reach: `(b, a)` (a cube of the
    /// mover's own taken) and `(b, a + 1)` (a blank taken) when
    /// `a + b < n²`.
    pub fn children(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.b(), self.a())];
        if self.a() + self.b() < self.n * self.n {
            v.push((self.b(), self.a() + 1));
        }
        v
    }

    /// The layers whose moves can reach this one: `(b, a)` and, if
    /// `b ≥ 1`, `(b − 1, a)`.
    pub fn parents(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.b(), self.a())];
        if self.b() >= 1 {
            v.push((self.b() - 1, self.a()));
        }
        v
    }
}

/// The boards of a layer in rank order ([`Layer::boards`]).
#[derive(Debug, Clone)]
pub struct LayerBoards(Placements);

impl Iterator for LayerBoards {
    type Item = Board;

    #[inline]
    fn next(&mut self) -> Option<Board> {
        self.0.next().map(|(mine, theirs)| Board {
            mine: mine as u32,
            theirs: theirs as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Rng, all_boards};
    use super::*;

    #[test]
    fn boards_from_a_rank_continue_in_rank_order() {
        for (a, b) in [(0, 0), (3, 0), (0, 4), (2, 3), (5, 4), (8, 8)] {
            let l = Layer::new(4, a, b).unwrap();
            for start in [0, 1, l.size() / 3, l.size() - 1]
                .into_iter()
                .filter(|&s| s < l.size())
            {
                let got: Vec<Board> = l.boards_from(start).take(50).collect();
                let want: Vec<Board> = (start..l.size().min(start + 50))
                    .map(|r| l.unrank(r))
                    .collect();
                assert_eq!(got, want, "({a}, {b}) from {start}");
            }
        }
    }

    #[test]
    fn layer_sizes_and_totals() {
        for (n, total) in [
            (2, 81u64),
            (3, 19_683),
            (4, 43_046_721),
            (5, 847_288_609_443),
        ] {
            let sum: u64 = layers(n).iter().map(|&(a, b)| layer_size(n, a, b)).sum();
            assert_eq!(sum, total);
            assert_eq!(total_boards(n), total);
            let (big, size) = layers(n)
                .iter()
                .map(|&(a, b)| ((a, b), layer_size(n, a, b)))
                .max_by_key(|&(l, s)| (s, l))
                .unwrap();
            println!(
                "{n}x{n}: {} layers, {} boards in all (x2 with the absolute colour to move: {}); largest layer {:?} and its swap: {} boards",
                layers(n).len(),
                total,
                2 * total,
                big,
                size
            );
        }
        assert_eq!(layer_size(5, 9, 8), 26_293_088_250);
        assert_eq!(layer_size(5, 8, 9), 26_293_088_250);
        assert_eq!(layer_size(5, 20, 6), 0);
        // Every 3×3 and 4×4 layer's size, for the record.
        for n in [3, 4] {
            let mut line = format!("{n}x{n} layer sizes (a, b): ");
            for (a, b) in layers(n) {
                line += &format!("({a},{b}) {} ", layer_size(n, a, b));
            }
            println!("{line}");
        }
    }

    #[test]
    fn solve_order_respects_dependencies() {
        for n in 2..=5 {
            let order = solve_order(n);
            let pos = |a: usize, b: usize| {
                order
                    .iter()
                    .position(|&u| u == (a.max(b), a.min(b)))
                    .unwrap()
            };
            for &(a, b) in &order {
                for l in [(a, b), (b, a)] {
                    let layer = Layer::new(n, l.0, l.1).unwrap();
                    for (ca, cb) in layer.children() {
                        let u = pos(ca, cb);
                        assert!(
                            u <= pos(a, b),
                            "{n}: unit {:?} needs {:?}",
                            (a, b),
                            (ca, cb)
                        );
                        if u == pos(a, b) {
                            assert_eq!((ca.max(cb), ca.min(cb)), (a, b));
                        }
                    }
                }
            }
            assert_eq!(
                order.len(),
                layers(n).iter().filter(|&&(a, b)| a >= b).count()
            );
        }
    }

    #[test]
    fn rank_unrank_every_rank_of_small_layers() {
        for n in 2..=4 {
            for (a, b) in layers(n) {
                let layer = Layer::new(n, a, b).unwrap();
                if layer.size() > 2_000_000 {
                    continue;
                }
                let mut prev: Option<Board> = None;
                let mut it = layer.boards();
                for r in 0..layer.size() {
                    let board = layer.unrank(r);
                    assert_eq!(it.next(), Some(board));
                    assert_eq!(board.layer(), (a, b));
                    assert_eq!(board.mine & board.theirs, 0);
                    assert_eq!((board.mine | board.theirs) >> (n * n), 0);
                    assert_eq!(layer.rank(board), r);
                    // Ranks follow (mine, compressed theirs) numerically.
                    if let Some(p) = prev {
                        assert!(
                            p.mine < board.mine
                                || (p.mine == board.mine && p.theirs < board.theirs)
                        );
                    }
                    prev = Some(board);
                }
                assert_eq!(it.next(), None);
            }
        }
    }

    #[test]
    fn every_3x3_board_has_one_rank() {
        let mut seen = std::collections::HashSet::new();
        for b in all_boards(3) {
            let layer = Layer::of(3, b).unwrap();
            let r = layer.rank(b);
            assert!(r < layer.size());
            assert_eq!(layer.unrank(r), b);
            assert!(seen.insert((b.layer(), r)));
        }
    }

    #[test]
    fn rank_unrank_random_ranks_of_big_layers() {
        let mut rng = Rng(777);
        for (a, b) in layers(5) {
            let layer = Layer::new(5, a, b).unwrap();
            for r in [0, layer.size() - 1] {
                assert_eq!(layer.rank(layer.unrank(r)), r);
            }
            for _ in 0..200 {
                let r = rng.below(layer.size());
                assert_eq!(layer.rank(layer.unrank(r)), r, "({a}, {b}) rank {r}");
            }
        }
        assert!(Layer::new(5, 20, 6).is_err());
        assert!(Layer::new(6, 0, 0).is_err());
    }
}
