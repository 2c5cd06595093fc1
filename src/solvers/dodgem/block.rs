//! Per-block tables for fast index arithmetic inside one layer.
//!
//! A block is the set of indices sharing one blue set (`2·C(N−a, b)`
//! consecutive indices). Within it the red set is a mask over the free
//! squares, so a red move or a red car leaving only edits that mask. A blue
//! move changes the blue set: its new blue rank and the renumbering of the
//! free squares are computed once per block and per blue step, so the red
//! rank after it costs one table look-up per red car.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::{Layer, Side};
pub use crate::solvers::hint::{prefetch, zeroed_bytes, zeroed_words};

/// "No square" in step tables.
pub const NONE: u8 = 0xFF;
/// "Off the board" in step tables.
pub const OFF: u8 = 0xFE;

/// Forward and backward steps of every square, per side.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// `fwd[side][sq]`: the three targets of a car of `side` on `sq` (square, `OFF` or `NONE`).
    pub fwd: [[[u8; 3]; 64]; 2],
    /// `back[side][sq]`: the squares a car of `side` on `sq` can have come from (or `NONE`).
    pub back: [[[u8; 3]; 64]; 2],
}

impl Geometry {
    /// The tables of `board`.
    pub fn new(board: super::Board) -> Geometry {
        let mut g = Geometry {
            fwd: [[[NONE; 3]; 64]; 2],
            back: [[[NONE; 3]; 64]; 2],
        };
        for side in [Side::Blue, Side::Red] {
            let si = side.bit() as usize;
            for sq in 0..board.squares() {
                for dir in 0..3 {
                    g.fwd[si][sq][dir] = match board.step(side, sq, dir) {
                        None => NONE,
                        Some(None) => OFF,
                        Some(Some(t)) => t as u8,
                    };
                }
                for (k, u) in board.unsteps(side, sq).into_iter().enumerate() {
                    g.back[si][sq][k] = u.map_or(NONE, |t| t as u8);
                }
            }
        }
        g
    }
}

/// A blue step out of (or into) a block: the car's squares, the new blue
/// rank and the renumbering of free squares under the new blue set.
#[derive(Debug, Clone)]
pub struct BlueStep {
    /// Square the car leaves.
    pub from: u8,
    /// Square it enters, or `OFF` (then the ranks are of layer (a−1, b)).
    pub to: u8,
    /// Blue rank after the step.
    pub rb: u64,
    /// `comp[sq]`: index of free square `sq` among the squares free of the new blue set.
    pub comp: [u8; BSQ],
}

/// Tables of one block.
#[derive(Debug, Clone)]
pub struct Block {
    /// Blue rank.
    pub rb: u64,
    /// Blue mask.
    pub blue: u64,
    /// `free[c]`: the c-th square not holding a blue car.
    pub free: [u8; BSQ],
    /// `comp[sq]`: index of a free square among the free squares.
    pub comp: [u8; BSQ],
    /// Bit c set when the c-th free square is odd (x + y odd): the red cars'
    /// share of a position's parity class is `(m & odd_free).count_ones()`
    /// for free-square mask m ([`super::Board::parity`]).
    pub odd_free: u64,
    /// The blue cars' share of the parity class: blue cars on odd squares, mod 2.
    pub blue_odd: u8,
    /// Legal-in-principle forward blue steps (target on board or off), red cars not considered.
    pub fwd: Vec<BlueStep>,
    /// Backward blue steps (un-moves), red cars not considered.
    pub back: Vec<BlueStep>,
}

/// Squares per board handled by blocks (n ≤ 6).
pub const BSQ: usize = 36;

fn comp_table(blue: u64, squares: usize) -> [u8; BSQ] {
    let mut comp = [NONE; BSQ];
    let mut c = 0u8;
    for (sq, v) in comp.iter_mut().enumerate().take(squares) {
        if blue >> sq & 1 == 0 {
            *v = c;
            c += 1;
        }
    }
    comp
}

impl Block {
    /// The tables of block `rb` of `layer`. `below` is the ranking of layer
    /// (a−1, b), used for blue exits; with `None` exits are left out of `fwd`.
    pub fn new(layer: &Layer, below: Option<&Layer>, geo: &Geometry, rb: u64) -> Block {
        Block::build(layer, below, geo, rb, true)
    }

    /// Like [`Block::new`] but without the forward steps (for predecessor generation).
    pub fn backward_only(layer: &Layer, geo: &Geometry, rb: u64) -> Block {
        Block::build(layer, None, geo, rb, false)
    }

    fn build(
        layer: &Layer,
        below: Option<&Layer>,
        geo: &Geometry,
        rb: u64,
        forward: bool,
    ) -> Block {
        let squares = layer.board().squares();
        assert!(squares <= BSQ, "blocks handle boards up to 6×6");
        let blue = layer.blue_set(rb);
        let comp = comp_table(blue, squares);
        let mut free = [NONE; BSQ];
        for (sq, &c) in comp.iter().enumerate().take(layer.board().squares()) {
            if c != NONE {
                free[c as usize] = sq as u8;
            }
        }
        let odd = layer.board().odd_squares();
        let odd_free = (0..squares)
            .filter(|&c| free[c] != NONE && odd >> free[c] & 1 == 1)
            .fold(0u64, |m, c| m | 1 << c);
        let mut fwd = Vec::new();
        let mut back = Vec::new();
        let mut m = blue;
        while m != 0 {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            for &t in geo.fwd[0][s].iter().filter(|_| forward) {
                if t == NONE || (t != OFF && blue >> t & 1 == 1) || (t == OFF && below.is_none()) {
                    continue;
                }
                let nb = if t == OFF {
                    blue & !(1 << s)
                } else {
                    blue & !(1 << s) | 1 << t
                };
                let rb2 = if t == OFF {
                    below.expect("blue exits need layer (a−1, b)").rank_blue(nb)
                } else {
                    layer.rank_blue(nb)
                };
                fwd.push(BlueStep {
                    from: s as u8,
                    to: t,
                    rb: rb2,
                    comp: comp_table(nb, squares),
                });
            }
            for &t in &geo.back[0][s] {
                if t == NONE || blue >> t & 1 == 1 {
                    continue;
                }
                let nb = blue & !(1 << s) | 1 << t;
                back.push(BlueStep {
                    from: s as u8,
                    to: t,
                    rb: layer.rank_blue(nb),
                    comp: comp_table(nb, squares),
                });
            }
        }
        Block {
            rb,
            blue,
            free,
            comp,
            odd_free,
            blue_odd: ((blue & odd).count_ones() % 2) as u8,
            fwd,
            back,
        }
    }

    /// The parity class of the position with free-square mask `m` and Blue
    /// to move (Red to move: the other class).
    #[inline]
    pub fn class(&self, m: u64) -> u8 {
        (self.blue_odd ^ (m & self.odd_free).count_ones() as u8) & 1
    }

    /// The red squares (ascending) of free-square mask `m`, and their board mask.
    #[inline]
    pub fn reds(&self, m: u64) -> ([u8; 8], usize, u64) {
        let mut out = [0u8; 8];
        let mut k = 0;
        let mut board = 0u64;
        let mut rest = m;
        while rest != 0 {
            let c = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let sq = self.free[c];
            out[k] = sq;
            board |= 1 << sq;
            k += 1;
        }
        (out, k, board)
    }
}

/// Colex rank of the squares `reds` (ascending) renumbered by `comp`.
#[inline]
pub fn rank_with(layer_binom: &[[u64; 37]; 6], comp: &[u8; BSQ], reds: &[u8]) -> u64 {
    let mut r = 0;
    for (i, &s) in reds.iter().enumerate() {
        r += layer_binom[i + 1][comp[s as usize] as usize];
    }
    r
}

/// Colex rank of the red set after its `i`-th car (0-based, ascending) moved
/// from free square `c` to free square `c2`, given the rank `r` before and
/// the new mask `m2`. A sideways move passes no other square, so the car
/// keeps its place in the order and the rank changes by one term; a move
/// along a file may pass other red cars and is ranked afresh.
#[inline]
pub fn rank_after_red_step(
    layer_binom: &[[u64; 37]; 6],
    r: u64,
    i: usize,
    c: u8,
    c2: u8,
    m2: u64,
) -> u64 {
    if c.abs_diff(c2) == 1 {
        r - layer_binom[i + 1][c as usize] + layer_binom[i + 1][c2 as usize]
    } else {
        rank_mask(layer_binom, m2)
    }
}

/// Colex rank of a mask.
#[inline]
pub fn rank_mask(layer_binom: &[[u64; 37]; 6], m: u64) -> u64 {
    let mut r = 0;
    let mut rest = m;
    let mut i = 1;
    while rest != 0 {
        r += layer_binom[i][rest.trailing_zeros() as usize];
        rest &= rest - 1;
        i += 1;
    }
    r
}

/// Runs `f(k)` for every `k` in `0..count` on `threads` threads (inline for
/// one thread or small counts), handing out chunks of 16.
pub fn par_range(threads: usize, count: u64, f: impl Fn(u64) + Sync) {
    if threads <= 1 || count < 64 {
        (0..count).for_each(f);
        return;
    }
    const CHUNK: u64 = 16;
    let next = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                loop {
                    let start = next.fetch_add(CHUNK, Relaxed);
                    if start >= count {
                        break;
                    }
                    (start..(start + CHUNK).min(count)).for_each(&f);
                }
            });
        }
    });
}

/// Views words as atomics (for the solver's shared bitsets).
pub fn as_atomic_words(v: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: `AtomicU64` has the size and alignment of `u64` (checked by
    // the standard library on every platform with 64-bit atomics), and the
    // slice is borrowed exclusively for the life of the view.
    unsafe { &*(v as *mut [u64] as *const [AtomicU64]) }
}
