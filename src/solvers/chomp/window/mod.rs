//! A window of box ranks solved on its own: the P-positions of ranks
//! `start..end` of an m×n box, given the P-positions below `start`, on
//! several threads.
//!
//! **Why a window can be solved alone.** Every bite lowers the rank (see
//! [`ChompBox`]), so a position in the window is an N-position exactly when it
//! is a *predecessor* (has a bite into) some P-position below it: either one
//! below `start` (the *carry*) or one inside the window. One bitset of marks
//! over the window holds "is a predecessor of a P-position found so far"; at
//! the end every unmarked rank but the empty board is a P-position, so the
//! marks turn into the P-bits in place.
//!
//! **Predecessors as rank intervals.** The rank order is the lexicographic
//! order of the rows (r₀, r₁, …), and the staircases sharing the rows
//! r₀…r_{k−1} fill one rank interval of length `C(r_{k−1} + m−k, m−k)` (the
//! staircases of the m−k rows left with no row above r_{k−1}). A predecessor
//! R of q through the bite (i, j), j = q_i, keeps q's rows below i, has
//! R_i ∈ (j, q_{i−1}] (row 0: ≤ n), the rest of q's run of rows equal to j
//! raised to any non-increasing values in [j, R_i], and q's rows after the
//! run. Every choice of a prefix is an interval of ranks, so the enumeration
//! is cut to any rank range `[lo, hi)` without visiting what lies outside.
//! Two shapes are whole intervals and are set a word at a time: a bite at
//! column 0 of the first empty row of q (every staircase with q's prefix and
//! a longer row i), and the last row of the box raised alone (consecutive
//! ranks).
//!
//! **Blocks** ([`Layout`]). A *standard block* is the set of staircases
//! sharing their first `K = m − TAIL` rows (the *prefix*), the last of
//! which is at least θ ([`LOW`]); a *low block* is the set of staircases
//! sharing a prefix of k < K rows, all at least θ, whose rows from k on are
//! all below θ. Every staircase is in exactly one block, each block is one
//! rank interval, and no block is tiny (the blocks of a small last prefix
//! row would hold a handful of staircases each). A bite at one of a block's
//! free rows stays in the block; a bite at a prefix row leaves for a block
//! of a smaller *layer* (prefix squares, counting each free row of a low
//! block's first K rows as θ − 1). So blocks are solved layer by layer; the
//! blocks of one layer do not depend on each other.
//!
//! **Pulling the marks from below.** A staircase `P + T` of a block (prefix
//! P, free rows T) bitten at a prefix row i, column c, leaves
//! `clip_c(P) + clip_c(T)` (rows from i cut to c): a fixed *source block*
//! for each (i, c), at an offset that depends on T only through clip_c(T).
//! So, before its scan, a block reads the P-positions already filed by each
//! of its source blocks (a directory indexed by block number in rank order,
//! lists of offsets per block) and marks every T whose clip is one of them:
//! the tail τ itself, and τ with its leading run of rows equal to c raised
//! to any non-increasing values in [c, cap]. All of a block's marks then
//! land in the block itself.
//!
//! **Phases.**
//! 1. *Carry* (`carry`): the P-positions below the window that its
//!    blocks pull from — those of the source blocks below the window, and
//!    of the block the window starts in below `start` — are read once by
//!    rank interval ([`EarlierP`]), a chunk at a time, and after each
//!    chunk every block of the window pulls from it. The window then needs
//!    nothing else from below; its marks are those a one-job solve makes,
//!    each made once by one thread (the reading grows with the part's
//!    place in the box: `carry`, "Cost").
//! 2. *Inside, layer by layer*: the blocks of a layer go to the threads one
//!    at a time, each to the first thread that asks (a shared counter:
//!    blocks differ in size by orders of magnitude). A thread copies the
//!    block's words out of the window's bitset, pulls the marks from its
//!    source blocks, then scans it upwards: an unmarked rank is a
//!    P-position, filed for the blocks above, and it marks at once its
//!    predecessors through bites at the block's free rows (all in the
//!    block). The words go back into the bitset; a barrier ends the layer.
//!
//! **Threads and determinism.** A block's marks are written by the thread
//! that solves it into its own copy of the block's words; the first and
//! last word may hold ranks of another block (of the same layer; in the
//! carry, of any), so they go
//! back with an atomic OR, the words between with a plain store. Marking
//! is an OR, so its order
//! does not matter, and the blocks of a layer read only earlier layers: the
//! bits after every layer are the same for any number of threads.
//!
//! **Memory** ([`window_memory`]): one bitset of `end − start` bits (asked
//! for transparent huge pages), the filed P-positions of the window (4 bytes
//! each) with a directory of 8 bytes per block, one block's words per
//! thread, and small tables. The carry, done before the blocks file their
//! P-positions, uses the same allowance: its source blocks (36 bytes each)
//! and a chunk of their P-positions (4 bytes each).

use super::{Bite, ChompBox, ChompError, Staircase};
use carry::Ascending;
pub use carry::EarlierP;
use std::cell::Cell;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};

mod carry;
mod marks;
mod prefix;
mod solve;
#[cfg(test)]
mod tests;

/// How the blocks of a window are scanned (see the module documentation,
/// "Two scans"). Both give the same P-positions; [`Scan::Auto`] picks by
/// the shape of the box ([`Scan::for_box`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Rank by rank: every unmarked rank is a P-position and marks all its
    /// predecessors in the block (the solver of 1 Dec 2026, kept as the
    /// cross-check and for square boxes).
    Ranks,
    /// Prefix by prefix (the last-row structure): for the first m − 1 rows
    /// fixed, at most one length of the last row is a P-position, found as
    /// the lowest length no bite kills; bites that lower one row alone are
    /// gathered as running masks instead of marks. Needs n ≤ 63 and m ≥ 3
    /// (else the rank scan is used).
    Prefixes,
    /// The scan [`Scan::for_box`] picks.
    Auto,
}

impl Scan {
    /// The scan [`ChompBox::solve_window`] uses on an m×n box: the rank scan
    /// on every shape, as the prefix scan measured slower on every box tried
    /// (10×30, 10×40, 17×17; BENCHMARKS.md, "Chomp boxes: wide boxes").
    pub fn for_box(m: usize, n: usize) -> Scan {
        let _ = (m, n);
        Scan::Ranks
    }

    /// Whether the prefix scan can run on an m×n box (a segment of last-row
    /// lengths fits one 64-bit mask, and there is a last prefix row).
    fn applies(self, m: usize, n: usize) -> bool {
        match self {
            Scan::Ranks => true,
            Scan::Prefixes | Scan::Auto => m >= 3 && n <= 63,
        }
    }

    /// The scan actually used on an m×n box.
    fn resolve(self, m: usize, n: usize) -> Scan {
        match self {
            Scan::Auto => Scan::for_box(m, n),
            Scan::Prefixes if !Scan::Prefixes.applies(m, n) => Scan::Ranks,
            s => s,
        }
    }
}

/// P-positions of the ranks `start..end` of an m×n box, and counts by number
/// of squares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoxWindow {
    /// First rank of the window.
    pub start: u64,
    /// One past the last rank of the window.
    pub end: u64,
    /// Bit `(x−start) % 64` of word `(x−start) / 64` is set iff rank `x` is a
    /// P-position; rank 0 (the empty board) is never set, nor are bits past
    /// `end`. `ceil((end−start)/64)` words.
    pub p_bits: Vec<u64>,
    /// Index `s` = number of squares, `0..=m·n`: staircases of `s` squares in
    /// the window (rank 0, the empty board, excluded).
    pub positions_by_size: Vec<u64>,
    /// Index `s`: P-positions of `s` squares in the window.
    pub p_by_size: Vec<u64>,
}

impl BoxWindow {
    /// Whether rank `x` (in `start..end`) is a P-position; false outside.
    pub fn is_p(&self, x: u64) -> bool {
        if x < self.start || x >= self.end {
            return false;
        }
        let i = x - self.start;
        self.p_bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// The P-positions of the window, in ascending rank order.
    pub fn p_ranks(&self) -> impl Iterator<Item = u64> + '_ {
        let start = self.start;
        self.p_bits.iter().enumerate().flat_map(move |(w, &bits)| {
            let base = start + 64 * w as u64;
            BitIter(bits).map(move |b| base + u64::from(b))
        })
    }
}

/// Set bits of one word, lowest first.
struct BitIter(u64);

impl Iterator for BitIter {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(b)
    }
}

/// Estimated peak bytes of [`ChompBox::solve_window`] over `ranks` ranks of an
/// m×n box on `threads` threads: the bitset (`ranks / 8`); the P-positions
/// filed by the blocks, 4 bytes each (allowed `ranks / 16` bytes: the
/// P-positions are under 1.5 % of the ranks from 10×10 on, 0.55 % in 16×16,
/// 0.42 % in 18×18; the carry, read before the blocks file theirs, takes
/// the same allowance a chunk at a time), plus 12 bytes of directory and
/// list head per block (at most `ranks / smallest block + 2` blocks); one
/// block's words per thread; [`CARRY_RESERVE`]; the ranking tables and 4
/// MiB for the rest. An upper bound for planning, not a measurement.
pub fn window_memory(m: usize, n: usize, ranks: u64, threads: usize) -> u64 {
    let bitset = ranks.div_ceil(64).saturating_mul(8);
    let tables = ((m as u64 + 1) * (n as u64 + 1)).saturating_mul(24);
    let (tail, low) = block_shape(m, n, TAIL, LOW);
    let (blocks, largest) = if m > tail {
        let smallest = binom(u64::from(low) + tail as u64, tail as u64)
            .min(binom(u64::from(low) + tail as u64, tail as u64 + 1))
            .max(1);
        let standard = binom(n as u64 + tail as u64, tail as u64);
        let low_root = binom(u64::from(low) - 1 + m as u64, m as u64);
        (ranks / smallest + 2, standard.max(low_root))
    } else {
        (1, ranks)
    };
    let buffers = (threads.max(1) as u64).saturating_mul(largest.min(ranks).div_ceil(64) * 8 + 8);
    bitset
        .saturating_add(ranks / 16)
        .saturating_add(blocks.saturating_mul(12))
        .saturating_add(buffers)
        .saturating_add(CARRY_RESERVE)
        .saturating_add(tables)
        .saturating_add(4 << 20)
}

/// Bytes [`window_memory`] keeps for the carry besides the window's share
/// (8 MiB: what the carry's chunk of earlier ranks took before the carry
/// pulled; kept so that the windows of every solved box stay as planned).
const CARRY_RESERVE: u64 = 8 << 20;

/// `C(a, b)`, saturating at `u64::MAX`.
fn binom(a: u64, b: u64) -> u64 {
    super::boxsolve::binomial(a, b).unwrap_or(u64::MAX)
}

/// Rows at the end of every staircase that a standard block leaves free: a
/// block is the set of staircases sharing their first `m − TAIL` rows (see
/// [`Layout`]). Measured on 17×17 (2 threads, solver alone): 8 → 12.3 s,
/// 9 → 12.0 s, 10 → 10.5 s, 11 → 11.4 s; on 18×18 8 → 48.6 s, 10 → 40.2 s.
const TAIL: usize = 10;

/// θ: the smallest last prefix row of a standard block; staircases whose
/// prefix rows fall below it are solved in low blocks (see [`Layout`]).
/// 3, 4 and 6 measured alike on 17×17.
const LOW: u32 = 4;

/// Largest block, in ranks (8 MiB of bits): the tail and θ are lowered
/// until every block fits, so that offsets in a block fit a `u32` and a
/// block's words stay in the cache.
const MAX_BLOCK: u64 = 1 << 26;

// Smaller blocks for wide boxes were tried and dropped: 10×30, 1 thread,
// rank scan: 2²⁶ 4.79 s, 2²⁴ 4.35 s, 2²² 4.17 s, 2²⁰ 5.94 s (load ≈ 2, so
// within noise), while the plan's directory estimate (12 bytes per block)
// grew past the bitset and split 3×3719 into 10 parts.

/// The tail and θ used for an m×n box asked for `tail` and `low`: the tail
/// is lowered until the largest standard block (`C(n + tail, tail)` ranks)
/// fits [`MAX_BLOCK`], θ clamped to `1..=n` and lowered until the low block
/// of the empty prefix (`C(θ − 1 + m, m)` ranks) fits.
fn block_shape(m: usize, n: usize, tail: usize, low: u32) -> (usize, u32) {
    let mut tail = tail.max(1);
    while tail > 1 && binom((n + tail) as u64, tail as u64) > MAX_BLOCK {
        tail -= 1;
    }
    let mut low = low.clamp(1, n.max(1) as u32);
    if m > tail {
        while low > 1 && binom(u64::from(low) - 1 + m as u64, m as u64) > MAX_BLOCK {
            low -= 1;
        }
    }
    (tail, low)
}

/// Largest table of tail counts by cap and size kept (entries).
const MAX_TAIL_TABLE: usize = 1 << 20;

/// Calls `or(w, mask)` for every word `w` holding bits `a..b` (a < b) of a
/// bitset, `mask` the bits of `a..b` in that word.
#[inline(always)]
fn range_masks(a: u64, b: u64, mut or: impl FnMut(usize, u64)) {
    let (wa, wb) = ((a / 64) as usize, ((b - 1) / 64) as usize);
    let first = !0u64 << (a % 64);
    let last = !0u64 >> (63 - (b - 1) % 64);
    if wa == wb {
        or(wa, first & last);
    } else {
        or(wa, first);
        for w in wa + 1..wb {
            or(w, !0);
        }
        or(wb, last);
    }
}

/// Where marks go: ranks `lo()..hi()` of a bitset ([`Local`]: a block's own
/// copy of its words).
trait Marks {
    fn lo(&self) -> u64;
    fn hi(&self) -> u64;
    /// Marks rank `y`, known to lie in `lo()..hi()`.
    fn set_unclipped(&self, y: u64);
    /// Marks rank `y` if it lies in `lo()..hi()`.
    #[inline(always)]
    fn set(&self, y: u64) {
        if y >= self.lo() && y < self.hi() {
            self.set_unclipped(y);
        }
    }
    /// Marks the ranks `a..b` clipped to `lo()..hi()`.
    fn set_range(&self, a: u64, b: u64);
}

/// A block's words copied out of the window's bitset, marked by one thread
/// alone and written back when the block is done: marks are plain ORs into
/// a few hundred kilobytes that stay in the core's cache.
struct Local<'a> {
    words: &'a [Cell<u64>],
    /// Rank of bit 0 of `words[0]`.
    origin: u64,
    lo: u64,
    hi: u64,
}

impl Marks for Local<'_> {
    #[inline(always)]
    fn lo(&self) -> u64 {
        self.lo
    }
    #[inline(always)]
    fn hi(&self) -> u64 {
        self.hi
    }
    #[inline(always)]
    fn set_unclipped(&self, y: u64) {
        assert!(y >= self.lo && y < self.hi);
        let i = y - self.origin;
        // SAFETY: `lo..hi` lies within the words (checked above; the check
        // is cheaper than the index bound it replaces: `lo` and `hi` stay in
        // registers).
        let w = unsafe { self.words.get_unchecked((i / 64) as usize) };
        w.set(w.get() | 1 << (i % 64));
    }
    #[inline]
    fn set_range(&self, a: u64, b: u64) {
        let a = a.max(self.lo);
        let b = b.min(self.hi);
        if a < b {
            range_masks(a - self.origin, b - self.origin, |w, mask| {
                let c = &self.words[w];
                c.set(c.get() | mask);
            });
        }
    }
}

/// Asks the kernel to back `v` with transparent huge pages (a hint: without
/// it, or where THP is off, the solver is slower, not wrong). Call before
/// the pages are first touched.
fn advise_huge_pages(v: &mut [u64]) {
    crate::solvers::hint::advise_huge(v.as_ptr().cast(), std::mem::size_of_val(v));
}

// `&mut [u64]` is viewed as `&[AtomicU64]`: same size, and same alignment
// on every target where this compiles.
const _: () = assert!(std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>());

/// What one thread counted: staircases and P-positions by size (blocks
/// solved whole are counted by kind and added up from tables at the end).
struct Counts {
    positions: Vec<u64>,
    p: Vec<u64>,
    /// Full standard blocks by (layer, cap): `[layer·(n+1) + cap]`, when the
    /// table of tails by size exists.
    std_blocks: Vec<u64>,
    /// Full low blocks by (k, prefix squares): `[Layout::low_index(k, sum)]`.
    low_blocks: Vec<u64>,
}

/// One block of the window's layout (see [`Layout`]).
struct Block {
    /// Fixed rows: the prefix is rows `0..k`; `k == Layout::k` for a standard
    /// block, less for a low block.
    k: usize,
    /// Largest value of the free rows `k..m` (the last prefix row of a
    /// standard block, θ − 1 for a low block; n for the one block of a box
    /// with no prefix).
    cap: u32,
    /// First rank of the block (its staircases are `base..base + span(k, cap)`).
    base: u64,
    /// Index of the block among all the box's blocks in rank order.
    key: u64,
    /// Squares in the prefix.
    sum: u32,
    /// The block's layer λ.
    layer: u32,
}

/// How a box's ranks are cut into blocks, and the blocks' layers.
///
/// A *standard* block is the set of staircases sharing their first `k` rows
/// (`k = m − tail`), the last of which is at least θ (`low`): it spans
/// `span(k, cap)` ranks, cap = row k − 1. A *low* block is the set of
/// staircases whose first `k' < k` rows are a fixed prefix of rows ≥ θ and
/// whose rows from k' are all below θ: `span(k', θ − 1)` ranks. Every
/// staircase lies in exactly one block (k' = its first row below θ, if that
/// is before row k), and no block is smaller than `min_block_span`, so the
/// blocks of tiny last prefix rows are merged into low blocks.
///
/// A bite at a row ≥ k' (the block's fixed rows) stays in the block; a bite
/// at a fixed row leaves for a block of a smaller *layer* λ: the prefix
/// squares of a standard block, `Σ prefix + (k − k')(θ − 1)` of a low one.
/// So the blocks of one layer do not depend on each other.
struct Layout {
    /// Rows of a standard block's prefix (0: the box is one block).
    k: usize,
    /// θ: the smallest last prefix row of a standard block (1 ≤ θ ≤ n).
    low: u32,
    n: usize,
    /// `d[l·(n+1) + u]` for l < k, u ≥ θ: blocks that come before the
    /// subtree of the prefixes with row l = u among those sharing rows
    /// `0..l` (the low block at depth l and the subtrees of θ..u−1).
    d: Vec<u64>,
    /// `cold[c·(k+1) + l] = Σ_{l' < l} d(l', c)`.
    cold: Vec<u64>,
}

impl Layout {
    fn new(b: &ChompBox, tail: usize, low: u32) -> Layout {
        let (m, n) = (b.m, b.n);
        let (tail, low) = block_shape(m, n, tail, low);
        let k = m.saturating_sub(tail);
        // blocks[l·(n+1) + v]: blocks among the staircases sharing rows
        // 0..l (rows ≥ θ) with rows l.. at most v.
        let mut blocks = vec![0u64; (k + 1) * (n + 1)];
        for v in 0..=n {
            blocks[k * (n + 1) + v] = 1;
        }
        for l in (0..k).rev() {
            let mut acc = 1u64;
            for v in 0..=n {
                if v as u32 >= low {
                    acc += blocks[(l + 1) * (n + 1) + v];
                }
                blocks[l * (n + 1) + v] = acc;
            }
        }
        let mut d = vec![0u64; k * (n + 1)];
        for l in 0..k {
            let mut acc = 1u64;
            for u in low as usize..=n {
                d[l * (n + 1) + u] = acc;
                acc += blocks[(l + 1) * (n + 1) + u];
            }
        }
        let mut cold = vec![0u64; (n + 1) * (k + 1)];
        for c in 0..=n {
            for l in 0..k {
                cold[c * (k + 1) + l + 1] = cold[c * (k + 1) + l] + d[l * (n + 1) + c];
            }
        }
        Layout { k, low, n, d, cold }
    }

    #[inline(always)]
    fn d(&self, l: usize, u: u32) -> u64 {
        self.d[l * (self.n + 1) + u as usize]
    }

    #[inline(always)]
    fn cold(&self, c: u32, l: usize) -> u64 {
        self.cold[c as usize * (self.k + 1) + l]
    }

    /// Length of the table of low blocks by (k, prefix squares): the k rows
    /// of a low block's prefix are in θ..=n, so its squares are in
    /// `kθ ..= kn`.
    fn low_len(&self) -> usize {
        self.low_index(self.k, self.k as u32 * self.low)
    }

    /// Index of (k, prefix squares `sum`) in the table of low blocks.
    fn low_index(&self, k: usize, sum: u32) -> usize {
        let w = self.n - self.low as usize;
        // Σ_{k' < k} (k'·w + 1) entries before depth k.
        k + w * k * k.saturating_sub(1) / 2 + (sum - k as u32 * self.low) as usize
    }

    /// Number of layers (λ = 0 ..).
    fn layers(&self) -> usize {
        self.k * self.n + 1
    }

    /// The smallest layer holding a block.
    fn first_layer(&self) -> usize {
        self.k * (self.low as usize - 1)
    }

    /// Key of the block holding the staircase `rows`.
    fn block_key(&self, rows: &[u32]) -> u64 {
        let mut key = 0;
        for (l, &r) in rows.iter().enumerate().take(self.k) {
            if r < self.low {
                break;
            }
            key += self.d(l, r);
        }
        key
    }

    /// Calls `f(block, rows)` for every block of layer `layer` ([`ANY_LAYER`]:
    /// of every layer) that meets ranks `lo..hi`, in rank order;
    /// `rows[..block.k]` is its prefix.
    fn each_block(
        &self,
        b: &ChompBox,
        layer: u32,
        lo: u64,
        hi: u64,
        rows: &mut [u32],
        f: &mut impl FnMut(&Block, &[u32]),
    ) {
        self.each_from(b, 0, b.n as u32, 0, 0, 0, layer, lo, hi, rows, f);
    }

    #[allow(clippy::too_many_arguments)]
    fn each_from(
        &self,
        b: &ChompBox,
        l: usize,
        cap: u32,
        sum: u32,
        acc: u64,
        key: u64,
        layer: u32,
        lo: u64,
        hi: u64,
        rows: &mut [u32],
        f: &mut impl FnMut(&Block, &[u32]),
    ) {
        let meets = |a: u64, len: u64| lo < hi && a < hi && a + len > lo;
        let any = layer == ANY_LAYER;
        if l == self.k {
            if (any || sum == layer) && meets(acc, b.span(l, cap)) {
                let blk = Block {
                    k: l,
                    cap,
                    base: acc,
                    key,
                    sum,
                    layer: sum,
                };
                f(&blk, rows);
            }
            return;
        }
        let left = (self.k - l) as u32;
        let th = self.low;
        let low_layer = sum + left * (th - 1);
        if (any || low_layer == layer) && meets(acc, b.span(l, th - 1)) {
            let blk = Block {
                k: l,
                cap: th - 1,
                base: acc,
                key,
                sum,
                layer: low_layer,
            };
            f(&blk, rows);
        }
        for v in th..=cap {
            let a = acc + b.term(l, v);
            if a >= hi || (!any && sum + v + (left - 1) * (th - 1) > layer) {
                break;
            }
            if a + b.span(l + 1, v) <= lo || (!any && sum + v * left < layer) {
                continue;
            }
            rows[l] = v;
            self.each_from(
                b,
                l + 1,
                v,
                sum + v,
                a,
                key + self.d(l, v),
                layer,
                lo,
                hi,
                rows,
                f,
            );
        }
    }
}

/// The `layer` of [`Layout::each_block`] that stands for every layer.
const ANY_LAYER: u32 = u32::MAX;

/// What every block of a window reads: the bitset, and the P-positions
/// filed by the blocks solved so far.
struct Ctx<'a> {
    start: u64,
    end: u64,
    bits: &'a [AtomicU64],
    /// Entry `key − key_lo` of a block with P-positions: `(arena << 40) |
    /// (position + 1)`, where `arenas[arena][position]` is their number and
    /// their offsets (from the block's first rank, ascending) follow; 0 for
    /// a block with none (or not solved yet).
    dir: &'a [AtomicU64],
    key_lo: u64,
    arenas: &'a [OnceLock<Vec<u32>>],
    /// In the carry: source blocks below the window, by key (ascending),
    /// and their entries (into `arenas`); the window's directory is then
    /// not read. Empty while the blocks are solved: keys below `key_lo`
    /// then have no entry.
    below_keys: &'a [u64],
    below_entries: &'a [u64],
    /// Offsets of the P-positions below the window of the block holding
    /// `start` (the carry's), ascending.
    straddle: &'a [u32],
}

/// A thread's reusable buffers for [`ChompBox::pull`].
#[derive(Default)]
struct Scratch {
    /// Key sums along a block's prefix.
    sums: Vec<u64>,
    /// Source blocks: (key, then directory entry; prefix row; column or
    /// [`LOW_SOURCE`]).
    reqs: Vec<(u64, u32, u32)>,
    /// Tails raised together ([`ChompBox::pull_list`]).
    group: Vec<u64>,
}

/// Rows before the last prefix row whose one-row bites the prefix scan
/// gathers as masks (the rows before them mark).
fn mask_rows() -> usize {
    PREFIX_MASK_ROWS
}

/// All of them: the prefix scan as designed (measured on 10×30 with 0, 1,
/// 2, 3, 5 and all rows: fewer mask rows were a little faster, none as fast
/// as the rank scan; BENCHMARKS.md).
const PREFIX_MASK_ROWS: usize = usize::MAX;

/// A thread's mask arrays for [`ChompBox::scan_prefixes`]: `rows[i]`, for
/// every setting of the prefix rows after i, the P-lengths of the prefixes
/// with that setting and a smaller row i (one bit per length).
#[derive(Default)]
struct PrefixMasks {
    rows: Vec<Vec<u64>>,
}

/// Column marker of a request for the low block at a prefix row.
const LOW_SOURCE: u32 = u32::MAX;

/// Most rows an [`Odometer`] turns; longer runs recurse first.
const ODOMETER: usize = 24;

/// The settings of rows `k..k + d` (d ≤ [`ODOMETER`]) in `[j, top]`,
/// non-increasing, in rank order, with `acc` plus their rank terms: how the
/// raises walk a run of rows without a call per row.
struct Odometer<'a> {
    /// The rank terms of rows `k..k + d`, `n + 1` per row.
    term: &'a [u64],
    n1: usize,
    d: usize,
    j: u32,
    top: u32,
    vals: [u32; ODOMETER],
    /// `accs[l]`: `acc` plus the terms of the first `l` rows.
    accs: [u64; ODOMETER + 1],
}

impl<'a> Odometer<'a> {
    /// The first setting: every row at `j`.
    #[inline(always)]
    fn new(b: &'a ChompBox, k: usize, d: usize, j: u32, top: u32, acc: u64) -> Self {
        let n1 = b.n + 1;
        let term = &b.term[k * n1..(k + d) * n1];
        let mut accs = [acc; ODOMETER + 1];
        for l in 0..d {
            accs[l + 1] = accs[l] + term[l * n1 + j as usize];
        }
        Odometer {
            term,
            n1,
            d,
            j,
            top,
            vals: [j; ODOMETER],
            accs,
        }
    }

    /// The most the next row may take: the last row's value (`top` if d = 0).
    #[inline(always)]
    fn cap(&self) -> u32 {
        if self.d == 0 {
            self.top
        } else {
            self.vals[self.d - 1]
        }
    }

    /// `acc` plus the rank terms of the current setting.
    #[inline(always)]
    fn acc(&self) -> u64 {
        self.accs[self.d]
    }

    /// Turns to the next setting; false after the last.
    #[inline(always)]
    fn advance(&mut self) -> bool {
        // The deepest row that can still grow; the rows after it back to j.
        let mut l = self.d;
        loop {
            if l == 0 {
                return false;
            }
            l -= 1;
            let bound = if l == 0 { self.top } else { self.vals[l - 1] };
            if self.vals[l] < bound {
                break;
            }
        }
        self.vals[l] += 1;
        self.accs[l + 1] = self.accs[l] + self.term[l * self.n1 + self.vals[l] as usize];
        for e in l + 1..self.d {
            self.vals[e] = self.j;
            self.accs[e + 1] = self.accs[e] + self.term[e * self.n1 + self.j as usize];
        }
        true
    }
}

/// Asks for the cache line at `p`, to be written if `write` (a hint: no
/// effect on what is read or written).
#[inline(always)]
fn prefetch<T>(p: *const T, write: bool) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch cannot fault and reads nothing into the program.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _mm_prefetch};
        if write {
            _mm_prefetch::<_MM_HINT_ET0>(p.cast::<i8>());
        } else {
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, write);
}

impl Ctx<'_> {
    /// Prefetches the directory entry of key `key` (≥ `key_lo`), once the
    /// carry is done.
    #[inline(always)]
    fn prefetch_entry(&self, key: u64) {
        if self.below_keys.is_empty() {
            prefetch(self.dir[(key - self.key_lo) as usize].as_ptr(), false);
        }
    }

    /// The directory entry of key `key`: in the carry, the loaded source
    /// blocks' (0 for any other); then the window's directory from `key_lo`
    /// on (0 below).
    #[inline(always)]
    fn entry(&self, key: u64) -> u64 {
        if !self.below_keys.is_empty() {
            if key >= self.key_lo {
                return 0;
            }
            match self.below_keys.binary_search(&key) {
                Ok(i) => self.below_entries[i],
                Err(_) => 0,
            }
        } else if key >= self.key_lo {
            self.dir[(key - self.key_lo) as usize].load(Relaxed)
        } else {
            0
        }
    }

    /// Prefetches the first line of the list of entry `e`.
    #[inline(always)]
    fn prefetch_list(&self, e: u64) {
        if e != 0
            && let Some(arena) = self.arenas[(e >> 40) as usize].get()
        {
            let pos = (e & ((1 << 40) - 1)) as usize - 1;
            prefetch(arena[pos..].as_ptr(), false);
        }
    }

    /// The list of directory entry `e` (`None` for 0).
    #[inline]
    fn list_at(&self, e: u64) -> Option<&[u32]> {
        if e == 0 {
            return None;
        }
        let arena = self.arenas[(e >> 40) as usize]
            .get()
            .expect("an earlier layer's arena is set");
        let pos = (e & ((1 << 40) - 1)) as usize - 1;
        let len = arena[pos] as usize;
        Some(&arena[pos + 1..pos + 1 + len])
    }
}
