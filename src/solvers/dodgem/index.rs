//! Dense ranking of one layer `(a, b)`.
//!
//! A set of k squares `c₀ < c₁ < … < c_{k−1}` has the colex rank
//! `Σᵢ C(cᵢ, i+1)` (combinatorial number system); the k-sets of m squares get
//! the ranks `0 … C(m, k) − 1`, in the numeric order of their bit masks.
//! In layer `(a, b)` on N = n² squares:
//!
//! ```text
//! index = (rank(blue among N squares) · C(N − a, b) + rank(red among the N − a free squares)) · 2 + side
//! ```
//!
//! where the red cars are renumbered among the squares not holding a blue
//! car (square s becomes s − #blue cars below s) and side is 0 for Blue to
//! move, 1 for Red. Red moves change only the red rank, so their successors
//! stay inside one block of `2·C(N − a, b)` indices.

use super::{Board, Position, Side};
use crate::solvers::engine::placement;

pub use crate::solvers::engine::placement::binomial;

/// Largest number of squares handled by the rank tables (6×6 boards, for
/// counting only).
const SQ: usize = 37;
/// Largest set size in the rank tables.
const K: usize = 6;

/// The ranking of layer `(a, b)` of an n×n board: index ↔ position.
#[derive(Debug, Clone)]
pub struct Layer {
    board: Board,
    a: usize,
    b: usize,
    /// `C(N, a)`.
    blue_ranks: u64,
    /// `C(N − a, b)`.
    red_ranks: u64,
    /// `binom[i][c] = C(c, i)`.
    binom: [[u64; SQ]; K],
    /// Blue masks by rank.
    blue_sets: Vec<u64>,
    /// Red masks over the free squares (bit c = the c-th free square) by rank.
    red_sets: Vec<u64>,
}

/// The k-subsets of `0..m` as bit masks, in colex (= numeric) order.
fn subsets(m: usize, k: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(binomial(m as u64, k as u64) as usize);
    let mut x = Some((1u64 << k) - 1);
    while let Some(set) = x {
        out.push(set);
        x = placement::next_set(set, m);
    }
    out
}

impl Layer {
    /// The layer with `a` blue and `b` red cars.
    ///
    /// # Panics
    /// If `a` or `b` exceeds n − 1.
    pub fn new(board: Board, a: usize, b: usize) -> Layer {
        assert!(
            a <= board.cars() && b <= board.cars(),
            "layer ({a}, {b}) on {}×{}",
            board.n(),
            board.n()
        );
        let nsq = board.squares();
        let mut binom = [[0u64; SQ]; K];
        for (i, row) in binom.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = binomial(c as u64, i as u64);
            }
        }
        Layer {
            board,
            a,
            b,
            blue_ranks: binomial(nsq as u64, a as u64),
            red_ranks: binomial((nsq - a) as u64, b as u64),
            binom,
            blue_sets: subsets(nsq, a),
            red_sets: subsets(nsq - a, b),
        }
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }
    /// Blue cars in this layer.
    pub fn a(&self) -> usize {
        self.a
    }
    /// Red cars in this layer.
    pub fn b(&self) -> usize {
        self.b
    }
    /// Number of positions (indices): `2 · C(N, a) · C(N − a, b)`.
    pub fn len(&self) -> u64 {
        2 * self.blue_ranks * self.red_ranks
    }
    /// Always false (every layer has at least two positions).
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Bytes of the rank tables this ranking holds (a blue mask per blue
    /// rank and a red mask per red rank, `u64` each).
    pub fn table_bytes(&self) -> u64 {
        8 * (self.blue_sets.len() + self.red_sets.len()) as u64
            + std::mem::size_of::<Layer>() as u64
    }

    /// `C(N, a)`: blocks of the layer.
    pub fn blue_ranks(&self) -> u64 {
        self.blue_ranks
    }
    /// `C(N − a, b)`: red sets per block.
    pub fn red_ranks(&self) -> u64 {
        self.red_ranks
    }
    /// The blue mask of rank `rb`.
    #[inline]
    pub fn blue_set(&self, rb: u64) -> u64 {
        self.blue_sets[rb as usize]
    }
    /// The red mask over free squares of rank `rr`.
    #[inline]
    pub fn red_free_set(&self, rr: u64) -> u64 {
        self.red_sets[rr as usize]
    }

    /// `binom()[i][c] = C(c, i)` for i ≤ 5, c ≤ 36.
    pub fn binom(&self) -> &[[u64; SQ]; K] {
        &self.binom
    }

    /// Colex rank of a blue mask (the engine's shared placement ranking's
    /// byte tables, [`placement::colex_rank`]).
    #[inline]
    pub fn rank_blue(&self, blue: u64) -> u64 {
        placement::colex_rank(blue)
    }

    /// The index of `p`, which must lie in this layer.
    #[inline]
    pub fn index(&self, p: &Position) -> u64 {
        debug_assert_eq!(p.layer(), (self.a, self.b));
        self.index_of(p.blue, p.red, p.to_move)
    }

    /// The index of (blue, red, side), which must lie in this layer.
    #[inline]
    pub fn index_of(&self, blue: u64, red: u64, side: Side) -> u64 {
        (placement::rank_pair_sparse(blue, red, self.red_ranks) << 1) | side.bit()
    }

    /// The position of index `i < len()`.
    pub fn position(&self, i: u64) -> Position {
        let side = if i & 1 == 0 { Side::Blue } else { Side::Red };
        let rest = i >> 1;
        let blue = self.blue_set(rest / self.red_ranks);
        let red = expand(blue, self.red_free_set(rest % self.red_ranks));
        Position {
            blue,
            red,
            to_move: side,
        }
    }
}

/// Spreads a mask over the free squares (bit c = the c-th square not in
/// `blue`) onto board squares.
#[inline]
pub fn expand(blue: u64, free_mask: u64) -> u64 {
    let mut out = 0u64;
    let mut m = free_mask;
    while m != 0 {
        let c = m.trailing_zeros();
        m &= m - 1;
        out |= 1u64 << nth_zero(blue, c);
    }
    out
}

/// The position of the c-th (0-based) zero bit of `blue`.
#[inline]
fn nth_zero(blue: u64, c: u32) -> u32 {
    let mut free = !blue;
    for _ in 0..c {
        free &= free - 1;
    }
    free.trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_every_3x3_position() {
        let board = Board::new(3).unwrap();
        for a in 0..=2 {
            for b in 0..=2 {
                let l = Layer::new(board, a, b);
                for i in 0..l.len() {
                    let p = l.position(i);
                    assert_eq!(p.layer(), (a, b));
                    assert_eq!(p.blue & p.red, 0);
                    assert_eq!(l.index(&p), i);
                }
            }
        }
    }

    #[test]
    fn largest_5x5_layer_has_151_420_500_positions() {
        // 2 × C(25,4) × C(21,4).
        assert_eq!(Layer::new(Board::new(5).unwrap(), 4, 4).len(), 151_420_500);
    }
}
