//! Full check of `dodgem`: every position of every layer, both sides to
//! move, against its moves' stored values; every reachable bit.
//!
//! **Rules** (Colin Vout's Dodgem, as in Winning Ways), written
//! here again: n×n board, square `x + n·y` (a1 = 0, files a… = x, ranks
//! 1… = y). Blue moves a car right, up or down and leaves only off the right
//! edge; Red moves up, left or right and leaves only off the top edge; no
//! two cars share a square. If the opponent of the side to move has no car,
//! the side to move has lost (loss in 0; checked first); otherwise a side to
//! move with no legal move has won (win in 0).
//!
//! **Values** (one byte per position: 0 draw, 16 + d win in d plies, 136 + d
//! loss in d, for the side to move). At every position the moves'
//! stored values are read and the position's value rebuilt: a win in
//! `d + 1` if the best move reaches a loss in `d` (the shortest such `d`), a
//! draw if no move reaches a loss and one reaches a draw, a loss in `d + 1`
//! if every move reaches a win (the longest, `d`). Each move's value is
//! ranked by a key (loss in d → d, draw → 120, win in d → 254 − d), so the
//! best move is the least key. These are the issue's rules, "a win in d has
//! a move to a loss in d − 1 and none to a shorter loss; a loss in d has all
//! moves to wins of depth ≤ d − 1 with one equal; a draw has no move to a
//! loss and some move to a draw": by induction on the depth, values that
//! satisfy them everywhere are the game's values (draws are then exactly
//! the positions that are neither).
//!
//! **Reachability.** Every reachable position's moves lead to reachable
//! positions (checked with the same moves), the start is reachable, and the
//! meta counts are the bits' counts: the stored set is closed under moves
//! and holds the start, so it contains every position reachable from the
//! start. (It is not re-derived: a stored set larger than the reachable one
//! by a closed set of unreachable positions would pass.)
//!
//! **Index** (docs/design/job-kinds.md, `dodgem`; computed here from that formula):
//! `(colex(blue among n² squares) · C(n² − a, b) + colex(red among the
//! squares free of blue)) · 2 + side`, `colex{c₀ < c₁ < …} = Σ C(cᵢ, i + 1)`.
//! The positions of one blue set form a block of `2·C(n² − a, b)` indices.
//!
//! **How it goes fast.** Layers are taken by car count, from 0 up, holding
//! the layers of two counts (a layer's exits go to `(a − 1, b)` and
//! `(a, b − 1)`). Inside a layer the threads take blocks. A block's red
//! cars are walked as masks over the free squares in colex order (Gosper's
//! hack), so the position's own red rank is a counter. A red move keeps the
//! block: its successor's rank is the colex rank of the mask with two bits
//! flipped. A blue move goes to the block of the moved blue set (at most
//! 3(n − 1) of them per block, each 2·C(n² − a, b) bytes: they stay in
//! cache); in the new numbering of the free squares the red mask only has
//! the bits between the car's old and new square shifted by one, so the
//! successor's rank is the colex rank of a shifted mask. Exits go to one
//! block of a lower layer. Every look-up stays within a few blocks.

use super::layout::{LayerMeta, ReachMeta};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::shard::Shard;

use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, for_chunks, group, le_u64s};

/// The `dodgem` checker.
pub struct DodgemChecker;

/// Largest board handled here (masks are `u64`; `C(36, 5)`-sized tables).
pub const MAX_N: usize = 6;

/// Key of a draw (see the module doc): loss in d → d, win in d → 254 − d.
const DRAW_KEY: u8 = 120;
/// Key of a byte that no solved layer holds (1 … 15).
const BAD_KEY: u8 = 121;
/// Larger than every key: a position with no move.
const NO_MOVE: u8 = 255;
/// Largest depth the byte holds.
const MAX_DEPTH: u8 = 119;

/// `KEY[byte]`: the value of a move to a position with that byte, from the
/// mover's side (smaller is better).
const KEY: [u8; 256] = {
    let mut k = [BAD_KEY; 256];
    k[0] = DRAW_KEY;
    let mut b = 16;
    while b < 136 {
        // The successor's side to move wins in d: the mover loses in d + 1.
        k[b] = (254 - (b - 16)) as u8;
        b += 1;
    }
    while b < 256 {
        k[b] = (b - 136) as u8;
        b += 1;
    }
    k
};

/// The byte a position must hold when its best move has key `k` (`NO_MOVE`:
/// no move, a win in 0 by the rules).
fn expected_byte(k: u8) -> Option<u8> {
    match k {
        NO_MOVE => Some(16),
        0..=118 => Some(16 + k + 1),
        DRAW_KEY => Some(0),
        135..=254 if 254 - k < MAX_DEPTH => Some(136 + (254 - k) + 1),
        _ => None,
    }
}

/// A stored byte in words.
fn byte_text(b: u8) -> String {
    match b {
        0 => "draw".into(),
        1..=15 => format!("byte {b} (no value)"),
        16..=135 => format!("win in {}", b - 16),
        _ => format!("loss in {}", b - 136),
    }
}

/// The board: size, binomials, square names.
#[derive(Debug, Clone)]
pub struct Board {
    n: usize,
    sq: usize,
    /// `binom[c · 8 + i] = C(c, i)`, `c ≤ 36`, `i ≤ 7`.
    binom: Vec<u64>,
}

impl Board {
    /// The n×n board (2 ≤ n ≤ [`MAX_N`]).
    pub fn new(n: usize) -> Option<Board> {
        if !(2..=MAX_N).contains(&n) {
            return None;
        }
        let mut binom = vec![0u64; 37 * 8];
        for c in 0..37 {
            binom[c * 8] = 1;
            for i in 1..8 {
                binom[c * 8 + i] = if c == 0 {
                    0
                } else {
                    binom[(c - 1) * 8 + i - 1] + binom[(c - 1) * 8 + i]
                };
            }
        }
        Some(Board {
            n,
            sq: n * n,
            binom,
        })
    }

    /// `C(c, i)`.
    #[inline(always)]
    fn c(&self, c: usize, i: usize) -> u64 {
        self.binom[c * 8 + i]
    }

    /// Colex rank of a set of positions (bit `c` = element `c`).
    #[inline(always)]
    fn colex(&self, mut m: u64) -> u64 {
        let mut r = 0;
        let mut i = 1;
        while m != 0 {
            r += self.c(m.trailing_zeros() as usize, i);
            i += 1;
            m &= m - 1;
        }
        r
    }

    /// Positions of layer `(a, b)`: `2·C(N, a)·C(N − a, b)`.
    pub fn layer_len(&self, a: usize, b: usize) -> u64 {
        2 * self.c(self.sq, a) * self.c(self.sq - a, b)
    }

    /// The squares free of `blue` below `s`: the index of `s` among them.
    #[inline]
    fn free_below(blue: u64, s: usize) -> u32 {
        s as u32 - (blue & ((1u64 << s) - 1)).count_ones()
    }

    /// The board mask of a red mask over the squares free of `blue`.
    fn expand(&self, blue: u64, mut m: u64) -> u64 {
        let mut out = 0;
        for s in 0..self.sq {
            if blue >> s & 1 == 1 {
                continue;
            }
            if m & 1 == 1 {
                out |= 1 << s;
            }
            m >>= 1;
        }
        out
    }

    /// `a1`, `b3`, … of square `s`.
    pub fn square_name(&self, s: usize) -> String {
        format!("{}{}", (b'a' + (s % self.n) as u8) as char, s / self.n + 1)
    }

    /// `blue:a2,a3 red:b1,c1 to-move:blue` (`-` for no car).
    pub fn position_text(&self, blue: u64, red: u64, red_to_move: bool) -> String {
        let list = |m: u64| {
            let v: Vec<String> = (0..self.sq)
                .filter(|&s| m >> s & 1 == 1)
                .map(|s| self.square_name(s))
                .collect();
            if v.is_empty() {
                "-".into()
            } else {
                v.join(",")
            }
        };
        format!(
            "blue:{} red:{} to-move:{}",
            list(blue),
            list(red),
            if red_to_move { "red" } else { "blue" }
        )
    }

    /// The target of a car of the given colour on `s` in direction `dir`
    /// (0 forward, 1 and 2 sideways): `Some(Some(t))` on the board,
    /// `Some(None)` off the board, `None` if the move leaves sideways.
    fn step(&self, red: bool, s: usize, dir: usize) -> Option<Option<usize>> {
        let (n, x, y) = (self.n, s % self.n, s / self.n);
        match (red, dir) {
            (false, 0) => Some((x + 1 < n).then_some(s + 1)),
            (false, 1) => (y + 1 < n).then_some(Some(s + n)),
            // Lazily: `s - n` on the first rank overflows with overflow checks.
            (false, _) => (y > 0).then(|| Some(s - n)),
            (true, 0) => Some((y + 1 < n).then_some(s + n)),
            (true, 1) => (x > 0).then(|| Some(s - 1)),
            (true, _) => (x + 1 < n).then_some(Some(s + 1)),
        }
    }

    /// The index of a position in its layer, straight from the formula.
    pub fn index(&self, blue: u64, red: u64, red_to_move: bool) -> u64 {
        let (a, b) = (blue.count_ones() as usize, red.count_ones() as usize);
        let mut m = 0u64;
        for s in (0..self.sq).rev() {
            if blue >> s & 1 == 0 {
                m = m << 1 | (red >> s & 1);
            }
        }
        let block = self.colex(blue) * self.c(self.sq - a, b) + self.colex(m);
        block * 2 + u64::from(red_to_move)
    }

    /// Every move of the side to move, plainly from the rules: `(move text,
    /// successor blue, successor red)`; empty when the game is over.
    pub fn moves(&self, blue: u64, red: u64, red_to_move: bool) -> Vec<(String, u64, u64)> {
        let (own, other) = if red_to_move {
            (red, blue)
        } else {
            (blue, red)
        };
        let mut out = Vec::new();
        if other == 0 {
            return out;
        }
        for s in 0..self.sq {
            if own >> s & 1 == 0 {
                continue;
            }
            for dir in 0..3 {
                let (text, moved) = match self.step(red_to_move, s, dir) {
                    None => continue,
                    Some(None) => (format!("{}-off", self.square_name(s)), own & !(1 << s)),
                    Some(Some(t)) if (blue | red) >> t & 1 == 0 => (
                        format!("{}-{}", self.square_name(s), self.square_name(t)),
                        own & !(1 << s) | 1 << t,
                    ),
                    Some(Some(_)) => continue,
                };
                out.push(if red_to_move {
                    (text, blue, moved)
                } else {
                    (text, moved, red)
                });
            }
        }
        out
    }
}

/// One layer in memory: its values, meta and reachable bits.
struct LayerData {
    values: Vec<u8>,
    meta: Option<LayerMeta>,
    reach: Option<Vec<u64>>,
}

/// Where a move from a block lands.
#[derive(Clone, Copy)]
struct BlueMove {
    /// The target's index among the squares free of the block's blue set
    /// (it must hold no red car); `u32::MAX` for a move off the board.
    kt: u32,
    /// Bits of the red mask that move by one in the new numbering.
    mid: u64,
    /// Up (`true`) or down.
    up: bool,
    /// First index of the successor block (in `(a, b)`, or in `(a − 1, b)` off the board).
    base: u64,
}

/// The layers a layer's check reads.
struct Layers<'a> {
    cur: &'a LayerData,
    /// `(a − 1, b)`: blue exits.
    blue_exit: Option<&'a LayerData>,
    /// `(a, b − 1)`: red exits.
    red_exit: Option<&'a LayerData>,
}

/// Counts from one layer's pass.
struct Tally {
    hist: [u64; 256],
    lost_both: Vec<(u64, u64)>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            hist: [0; 256],
            lost_both: Vec::new(),
        }
    }
}

/// The whole check of layer `(a, b)`, threads over blocks.
fn check_layer(cx: &Ctx, board: &Board, a: usize, b: usize, job: &str, ls: &Layers) -> Tally {
    let nsq = board.sq;
    let free = nsq - a;
    let red_ranks = board.c(free, b);
    let red_exit_ranks = if b > 0 { board.c(free, b - 1) } else { 0 };
    let blue_exit_ranks = if a > 0 { board.c(free + 1, b) } else { 0 };
    // Blue sets in colex order.
    let blues: Vec<u64> = subsets(nsq, a);
    let tallies = std::sync::Mutex::new(Vec::new());
    for_chunks(blues.len() as u64, cx.threads(), |range| {
        let mut t = Tally::default();
        for br in range.clone() {
            check_block(
                cx,
                board,
                job,
                ls,
                (a, b),
                (blues[br as usize], br),
                (red_ranks, red_exit_ranks, blue_exit_ranks),
                &mut t,
            );
        }
        cx.advance((range.end - range.start) * 2 * red_ranks);
        tallies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(t);
    });
    let mut all = Tally::default();
    for t in tallies
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        for (h, v) in all.hist.iter_mut().zip(t.hist) {
            *h += v;
        }
        all.lost_both.extend(t.lost_both);
    }
    all.lost_both.sort_unstable();
    all
}

/// The k-subsets of `0..m` as masks in colex (= numeric) order.
fn subsets(m: usize, k: usize) -> Vec<u64> {
    let mut out = Vec::new();
    if k == 0 {
        return vec![0];
    }
    if k > m {
        return out;
    }
    let mut x: u64 = (1 << k) - 1;
    while x < 1u64 << m {
        out.push(x);
        let c = x & x.wrapping_neg();
        let r = x + c;
        x = (((r ^ x) >> 2) / c) | r;
    }
    out
}

/// Mask of bits `lo..hi`.
#[inline]
fn bits(lo: u32, hi: u32) -> u64 {
    if hi <= lo {
        0
    } else {
        (u64::MAX >> (64 - (hi - lo))) << lo
    }
}

/// Checks the `2·C(N − a, b)` positions of one blue set.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn check_block(
    cx: &Ctx,
    board: &Board,
    job: &str,
    ls: &Layers,
    (a, b): (usize, usize),
    (blue, br): (u64, u64),
    (red_ranks, red_exit_ranks, blue_exit_ranks): (u64, u64, u64),
    t: &mut Tally,
) {
    let n = board.n;
    let nsq = board.sq;
    let free = nsq - a;
    const OFF: u32 = u32::MAX - 1;
    const NONE: u32 = u32::MAX;
    // Red steps by the index of the car's square among the free squares.
    let mut red_step = vec![[NONE; 3]; free];
    let mut k = 0;
    for s in 0..nsq {
        if blue >> s & 1 == 1 {
            continue;
        }
        for (dir, slot) in red_step[k].iter_mut().enumerate() {
            *slot = match board.step(true, s, dir) {
                None => NONE,
                Some(None) => OFF,
                Some(Some(v)) if blue >> v & 1 == 1 => NONE,
                Some(Some(v)) => Board::free_below(blue, v),
            };
        }
        k += 1;
    }
    // Blue moves of this block.
    let mut blue_moves: Vec<BlueMove> = Vec::with_capacity(3 * a);
    for s in 0..nsq {
        if blue >> s & 1 == 0 {
            continue;
        }
        let ks = Board::free_below(blue, s);
        for dir in 0..3 {
            match board.step(false, s, dir) {
                None => {}
                Some(None) => {
                    let nb = blue & !(1 << s);
                    blue_moves.push(BlueMove {
                        kt: u32::MAX,
                        mid: bits(ks, free as u32),
                        up: true,
                        base: board.colex(nb) * blue_exit_ranks * 2,
                    });
                }
                Some(Some(v)) if blue >> v & 1 == 1 => {}
                Some(Some(v)) => {
                    let nb = blue & !(1 << s) | 1 << v;
                    let kv = Board::free_below(blue, v);
                    let (mid, up) = if v == s + 1 {
                        (0, true)
                    } else if v == s + n {
                        (bits(ks, kv), true)
                    } else {
                        (bits(kv + 1, ks), false)
                    };
                    blue_moves.push(BlueMove {
                        kt: kv,
                        mid,
                        up,
                        base: board.colex(nb) * red_ranks * 2,
                    });
                }
            }
        }
    }
    let cur = &ls.cur.values;
    let base = br * red_ranks * 2;
    let reach_cur = ls.cur.reach.as_deref();
    let reach_be = ls.blue_exit.and_then(|l| l.reach.as_deref());
    let reach_re = ls.red_exit.and_then(|l| l.reach.as_deref());
    // A layer whose reach shard is unreadable counts as all reachable (the
    // shard is a finding already).
    let rbit =
        |r: Option<&[u64]>, i: u64| r.is_none_or(|r| r[(i / 64) as usize] >> (i % 64) & 1 == 1);
    let red_exit_base = br * red_exit_ranks * 2;
    let mut m: u64 = if b == 0 { 0 } else { (1u64 << b) - 1 };
    for rr in 0..red_ranks {
        let at = base + rr * 2;
        let blue_byte = cur[at as usize];
        let red_byte = cur[at as usize + 1];
        t.hist[blue_byte as usize] += 1;
        t.hist[red_byte as usize] += 1;
        // Blue to move.
        let reach_here = reach_cur.is_some() && rbit(reach_cur, at);
        let mut reach_bad = false;
        // Red has no car: Blue has lost (loss in 0).
        let kb = if b == 0 {
            NO_MOVE
        } else {
            let mut best = NO_MOVE;
            for mv in &blue_moves {
                let (idx, byte, rb) = if mv.kt == u32::MAX {
                    let m2 = (m & !mv.mid) | ((m & mv.mid) << 1);
                    let i = mv.base + board.colex(m2) * 2 + 1;
                    let d = ls.blue_exit.expect("a ≥ 1");
                    (i, d.values[i as usize], reach_be)
                } else {
                    if m >> mv.kt & 1 == 1 {
                        continue;
                    }
                    let m2 = if mv.up {
                        (m & !mv.mid) | ((m & mv.mid) << 1)
                    } else {
                        (m & !mv.mid) | ((m & mv.mid) >> 1)
                    };
                    let i = mv.base + board.colex(m2) * 2 + 1;
                    (i, cur[i as usize], reach_cur)
                };
                best = best.min(KEY[byte as usize]);
                if reach_here && !rbit(rb, idx) {
                    reach_bad = true;
                }
            }
            best
        };
        let want = if b == 0 { Some(136) } else { expected_byte(kb) };
        if want != Some(blue_byte) || reach_bad {
            report(
                cx, board, job, ls, blue, m, false, blue_byte, want, reach_bad,
            );
        }
        // Red to move.
        let reach_here = reach_cur.is_some() && rbit(reach_cur, at + 1);
        let mut reach_bad = false;
        let kr = if a == 0 {
            NO_MOVE
        } else {
            let mut best = NO_MOVE;
            let mut cars = m;
            while cars != 0 {
                let k = cars.trailing_zeros();
                cars &= cars - 1;
                for &to in &red_step[k as usize] {
                    let (idx, byte, rb) = match to {
                        NONE => continue,
                        OFF => {
                            let i = red_exit_base + board.colex(m & !(1 << k)) * 2;
                            let d = ls.red_exit.expect("b ≥ 1");
                            (i, d.values[i as usize], reach_re)
                        }
                        v => {
                            if m >> v & 1 == 1 {
                                continue;
                            }
                            let i = base + board.colex(m & !(1 << k) | 1 << v) * 2;
                            (i, cur[i as usize], reach_cur)
                        }
                    };
                    best = best.min(KEY[byte as usize]);
                    if reach_here && !rbit(rb, idx) {
                        reach_bad = true;
                    }
                }
            }
            best
        };
        let want = if a == 0 { Some(136) } else { expected_byte(kr) };
        if want != Some(red_byte) || reach_bad {
            report(cx, board, job, ls, blue, m, true, red_byte, want, reach_bad);
        }
        if blue_byte >= 136 && red_byte >= 136 && (blue | m) != 0 {
            t.lost_both.push((blue, board.expand(blue, m)));
        }
        // Next red set (Gosper's hack).
        if b > 0 && rr + 1 < red_ranks {
            let c = m & m.wrapping_neg();
            let r = m + c;
            m = (((r ^ m) >> 2) / c) | r;
        }
    }
}

/// Reports a bad position: recomputes its moves plainly from the rules
/// (also a check of the fast path) and names the best one.
#[allow(clippy::too_many_arguments)]
#[cold]
fn report(
    cx: &Ctx,
    board: &Board,
    job: &str,
    ls: &Layers,
    blue: u64,
    m: u64,
    red_to_move: bool,
    stored: u8,
    want: Option<u8>,
    reach_bad: bool,
) {
    let red = board.expand(blue, m);
    let pos = board.position_text(blue, red, red_to_move);
    let (a, b) = (blue.count_ones() as usize, red.count_ones() as usize);
    let value_of = |nb: u64, nr: u64| -> (u8, bool) {
        let (na, nbc) = (nb.count_ones() as usize, nr.count_ones() as usize);
        let l = if (na, nbc) == (a, b) {
            Some(ls.cur)
        } else if na + 1 == a {
            ls.blue_exit
        } else {
            ls.red_exit
        };
        let i = board.index(nb, nr, !red_to_move);
        let l = l.expect("the layers below are loaded");
        (
            l.values[i as usize],
            l.reach
                .as_ref()
                .is_none_or(|r| r[(i / 64) as usize] >> (i % 64) & 1 == 1),
        )
    };
    let moves: Vec<(String, u8, bool)> = board
        .moves(blue, red, red_to_move)
        .into_iter()
        .map(|(t, nb, nr)| {
            let (v, r) = value_of(nb, nr);
            (t, v, r)
        })
        .collect();
    if want != Some(stored) {
        let best = moves.iter().min_by_key(|(_, v, _)| KEY[*v as usize]);
        let why = match (want, best) {
            (_, _) if moves.iter().any(|(_, v, _)| KEY[*v as usize] == BAD_KEY) => {
                "a move leads to a position holding no value".to_string()
            }
            (Some(w), Some((t, v, _))) => format!(
                "its moves give {} (best {t}, to {})",
                byte_text(w),
                byte_text(*v)
            ),
            (Some(w), None) => format!("it has no move: {} by the rules", byte_text(w)),
            (None, _) => "its moves give a depth beyond the byte's range".into(),
        };
        cx.bad(
            job,
            &pos,
            format!("stored {}, but {why}", byte_text(stored)),
        );
    }
    if reach_bad {
        let to: Vec<&str> = moves
            .iter()
            .filter(|(_, _, r)| !r)
            .map(|(t, _, _)| t.as_str())
            .collect();
        cx.bad(
            &job.replacen("layer-", "reach-", 1),
            &pos,
            format!(
                "stored as reachable, but its move(s) {} lead to positions stored as unreachable",
                to.join(" ")
            ),
        );
    }
}

/// Takes a section's bytes out of a shard.
fn take(shard: &mut Shard, name: &str) -> Option<Vec<u8>> {
    shard
        .sections
        .iter_mut()
        .find(|s| s.name == name)
        .map(|s| std::mem::take(&mut s.bytes))
}

impl Checker for DodgemChecker {
    crate::pipeline::fullcheck::checks_kind!("dodgem");

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let run = cx.run();
        let n = run
            .params()
            .get("n")
            .and_then(|v| v.as_integer())
            .ok_or_else(|| Error::job("dodgem", "no `n` parameter"))? as usize;
        let board =
            Board::new(n).ok_or_else(|| Error::job("dodgem", format!("n = {n} is not handled")))?;
        // A partial run (`max_cars`, e.g. the 6×6 endgame) stores the layers
        // with at most that many cars a side, and no reachability (the start
        // lies in the top layer).
        let cars = match run.params().get("max_cars").and_then(|v| v.as_integer()) {
            Some(m) if (0..n as i64).contains(&m) => m as usize,
            Some(m) => {
                return Err(Error::job(
                    "dodgem",
                    format!("max_cars = {m} is not handled"),
                ));
            }
            None => n - 1,
        };
        let whole = cars == n - 1;
        let has = |name: &str| run.jobs().iter().any(|j| j.name == name);
        let total: u64 = (0..=cars)
            .flat_map(|a| (0..=cars).map(move |b| (a, b)))
            .map(|(a, b)| board.layer_len(a, b))
            .sum();
        cx.set_total(total);
        let mut values_cov = Coverage {
            what: "positions' values (win/loss depth, draw) from their moves' values".into(),
            stored: total,
            checked: 0,
        };
        let mut reach_cov = Coverage {
            what:
                "reachable bits (the start reachable, every move of a reachable position reachable)"
                    .into(),
            stored: total,
            checked: 0,
        };
        let mut held: std::collections::BTreeMap<(usize, usize), LayerData> = Default::default();
        for count in 0..=2 * cars {
            let layers: Vec<(usize, usize)> = (0..=cars)
                .filter_map(|a| count.checked_sub(a).filter(|&b| b <= cars).map(|b| (a, b)))
                .collect();
            // Load this count's layers.
            for &(a, b) in &layers {
                let len = board.layer_len(a, b);
                let lname = format!("layer-{a}-{b}");
                let rname = format!("reach-{a}-{b}");
                if !has(&lname) {
                    cx.bad("plan", &lname, "no such job");
                    continue;
                }
                cx.job(&lname);
                let Some(mut shard) = cx.load(&lname) else {
                    continue;
                };
                let values = match take(&mut shard, "values") {
                    Some(v) if v.len() as u64 == len => v,
                    v => {
                        cx.bad(
                            &lname,
                            "values",
                            format!(
                                "{} bytes; the layer has {len} positions",
                                v.map_or(0, |v| v.len())
                            ),
                        );
                        continue;
                    }
                };
                let meta: Option<LayerMeta> = shard
                    .section("meta")
                    .ok()
                    .and_then(|s| codec::decode(s).ok());
                drop(shard);
                if meta.is_none() {
                    cx.bad(&lname, "meta", "section missing or malformed");
                }
                let reach = if has(&rname) {
                    cx.load(&rname).and_then(|mut s| {
                        let meta: Option<ReachMeta> = s
                            .section("meta")
                            .ok()
                            .and_then(|m| codec::decode(m).ok());
                        let bits = take(&mut s, "reachable").and_then(|b| le_u64s(&b));
                        match bits {
                            Some(bits) if bits.len() as u64 == len.div_ceil(64) => {
                                let count: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
                                let want = (n as u32, a as u32, b as u32, len, count);
                                let got = meta.map(|m| (m.n, m.a, m.b, m.positions, m.reachable));
                                if got != Some(want) {
                                    cx.bad(&rname, "meta", format!("says (n, a, b, positions, reachable) = {got:?}; the layer and its bits give {want:?}"));
                                }
                                if len % 64 != 0 && bits[bits.len() - 1] >> (len % 64) != 0 {
                                    cx.bad(&rname, "reachable", "bits set past the layer");
                                }
                                Some(bits)
                            }
                            _ => {
                                cx.bad(&rname, "reachable", format!("not {len} bits"));
                                None
                            }
                        }
                    })
                } else {
                    if whole {
                        cx.bad("plan", &rname, "no such job");
                    }
                    None
                };
                if (a, b) == (cars, cars)
                    && let Some(bits) = &reach
                {
                    // The start: blue on a2 …, red on b1 …, Blue to move.
                    let sb = (1..n).fold(0u64, |m, y| m | 1 << (n * y));
                    let sr = (1..n).fold(0u64, |m, x| m | 1 << x);
                    let i = board.index(sb, sr, false);
                    if bits[(i / 64) as usize] >> (i % 64) & 1 == 0 {
                        cx.bad(
                            &rname,
                            board.position_text(sb, sr, false),
                            "the start is not stored as reachable",
                        );
                    }
                }
                held.insert(
                    (a, b),
                    LayerData {
                        values,
                        meta,
                        reach,
                    },
                );
            }
            // Check them.
            for &(a, b) in &layers {
                let lname = format!("layer-{a}-{b}");
                let Some(cur) = held.get(&(a, b)) else {
                    continue;
                };
                let blue_exit = if a > 0 { held.get(&(a - 1, b)) } else { None };
                let red_exit = if b > 0 { held.get(&(a, b - 1)) } else { None };
                if (a > 0 && blue_exit.is_none()) || (b > 0 && red_exit.is_none()) {
                    // A layer below is unreadable (already a finding).
                    continue;
                }
                cx.job(&lname);
                let ls = Layers {
                    cur,
                    blue_exit,
                    red_exit,
                };
                let tally = check_layer(cx, &board, a, b, &lname, &ls);
                values_cov.checked += board.layer_len(a, b);
                if cur.reach.is_some() {
                    reach_cov.checked += board.layer_len(a, b);
                }
                tally_check(cx, &board, &lname, (a, b), cur.meta.as_ref(), &tally);
            }
            // Keep only this count's layers.
            held.retain(|&(a, b), _| a + b == count);
        }
        // A partial run has no reachability to check.
        Ok(if whole {
            vec![values_cov, reach_cov]
        } else {
            vec![values_cov]
        })
    }
}

/// Compares a layer's meta with the counts of its values.
fn tally_check(
    cx: &Ctx,
    board: &Board,
    job: &str,
    (a, b): (usize, usize),
    meta: Option<&LayerMeta>,
    t: &Tally,
) {
    let Some(meta) = meta else {
        return;
    };
    let wins: u64 = t.hist[16..136].iter().sum();
    let losses: u64 = t.hist[136..].iter().sum();
    let draws = t.hist[0];
    let max_win = (16..136)
        .rev()
        .find(|&i| t.hist[i] > 0)
        .map_or(0, |i| i - 16) as u8;
    let max_loss = (136..256)
        .rev()
        .find(|&i| t.hist[i] > 0)
        .map_or(0, |i| i - 136) as u8;
    let want = (
        board.n as u32,
        a as u32,
        b as u32,
        board.layer_len(a, b),
        wins,
        losses,
        draws,
        max_win,
        max_loss,
    );
    let got = (
        meta.n,
        meta.a,
        meta.b,
        meta.positions,
        meta.wins,
        meta.losses,
        meta.draws,
        meta.max_win_depth,
        meta.max_loss_depth,
    );
    if want != got {
        cx.bad(
            job,
            "meta",
            format!("says (n, a, b, positions, wins, losses, draws, deepest win, deepest loss) = {got:?}; the values give {want:?}"),
        );
    }
    let mut stored = meta.lost_for_both.clone();
    stored.sort_unstable();
    if stored != t.lost_both {
        cx.bad(
            job,
            "meta",
            format!(
                "lists {} placements lost for whoever moves; the values have {}",
                group(stored.len() as u64),
                group(t.lost_both.len() as u64)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index formula: dense over each layer (every index once).
    #[test]
    fn index_is_dense() {
        let board = Board::new(3).unwrap();
        for a in 0..=2 {
            for b in 0..=2 {
                let len = board.layer_len(a, b);
                let mut seen = vec![false; len as usize];
                for blue in subsets(9, a) {
                    for red in subsets(9, b) {
                        if blue & red != 0 {
                            continue;
                        }
                        for side in [false, true] {
                            let i = board.index(blue, red, side) as usize;
                            assert!(!seen[i]);
                            seen[i] = true;
                        }
                    }
                }
                assert!(seen.iter().all(|&s| s), "({a}, {b})");
            }
        }
        // 2,846 positions with side to move on 3×3 (the sen-ltd Dodgem article).
        let all: u64 = (0..=2)
            .flat_map(|a| (0..=2).map(move |b| (a, b)))
            .map(|(a, b)| board.layer_len(a, b))
            .sum();
        assert_eq!(all, 2_846);
    }
}
