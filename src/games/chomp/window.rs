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
//! 1. *Carry*: the earlier P-positions are read in chunks of
//!    [`CARRY_CHUNK`]; every thread marks their predecessors that fall in its
//!    own part of the window (the window is cut into `threads` parts of
//!    whole 64-bit words); these marks are deferred (below). The earlier
//!    P-positions come in ascending order, so each is unranked from the one
//!    before, and only to the depth whose bites reach the window (a far
//!    P-position: its first row or two); the lengths of a bitten row whose
//!    predecessors all lie below the window are skipped by bisection. In
//!    the last parts of a wide box these were most of the carry's time
//!    (BENCHMARKS.md, "the carry").
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
//! last word may hold ranks of another block of the same layer, so they go
//! back with an atomic OR, the words between with a plain store. In the
//! carry a thread writes only its own part. Marking is an OR, so its order
//! does not matter, and the blocks of a layer read only earlier layers: the
//! bits after every layer are the same for any number of threads.
//!
//! **Deferred marks.** Carry marks land anywhere in a bitset of up to
//! gigabytes, so each is a cache miss. Such a mark asks for its cache line
//! at once (a prefetch) and is written [`RING`] marks later; nothing reads
//! those bits before the blocks are solved, and every deferred mark is
//! written before. Many line fetches then overlap instead of waiting one
//! at a time. A block's own marks go to its copy, which stays in the cache.
//!
//! **Memory** ([`window_memory`]): one bitset of `end − start` bits (asked
//! for transparent huge pages), the filed P-positions of the window (4 bytes
//! each) with a directory of 8 bytes per block, one block's words per
//! thread, one carry chunk, and small tables.

use super::{Bite, ChompBox, ChompError, Staircase};
use std::cell::Cell;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Barrier, OnceLock};

/// Earlier P-positions read from the iterator at a time (8 MiB of ranks).
pub const CARRY_CHUNK: usize = 1 << 20;

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
/// 0.42 % in 18×18), plus 12 bytes of directory and list head per block
/// (at most `ranks / smallest block + 2` blocks); one block's words per
/// thread; one carry chunk; the ranking tables and 4 MiB for the rest. An
/// upper bound for planning, not a measurement.
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
        .saturating_add(8 * CARRY_CHUNK as u64)
        .saturating_add(tables)
        .saturating_add(4 << 20)
}

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

/// The carry's marks: ranks `lo..hi` of the window's bitset (bit
/// `y − start`), a part written by one thread alone (a plain load and store
/// per word). Single marks are deferred: each asks for its cache line at
/// once (a prefetch) and is written [`RING`] marks later, so that many line
/// fetches overlap; [`Sink::flush`] writes the rest.
struct Sink<'a> {
    bits: &'a [AtomicU64],
    start: u64,
    lo: u64,
    hi: u64,
    /// Bit indices + 1 of deferred marks (0: empty slot).
    ring: [Cell<u64>; RING],
    /// Marks deferred so far (the next slot is `pos % RING`).
    pos: Cell<usize>,
}

/// Deferred marks per [`Sink`]: enough cache-line fetches in flight to hide
/// the memory latency of marks scattered over a large bitset.
const RING: usize = 32;

impl<'a> Sink<'a> {
    /// A sink over ranks `lo..hi`, written by this thread alone.
    fn new(bits: &'a [AtomicU64], start: u64, lo: u64, hi: u64) -> Self {
        Sink {
            bits,
            start,
            lo,
            hi,
            ring: Default::default(),
            pos: Cell::new(0),
        }
    }

    /// Writes every deferred mark.
    fn flush(&self) {
        for slot in &self.ring {
            let i = slot.replace(0);
            if i != 0 {
                let i = i - 1;
                self.or_word((i / 64) as usize, 1 << (i % 64));
            }
        }
    }

    #[inline(always)]
    fn or_word(&self, w: usize, mask: u64) {
        let v = self.bits[w].load(Relaxed);
        self.bits[w].store(v | mask, Relaxed);
    }
}

impl Marks for Sink<'_> {
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
        debug_assert!(y >= self.lo && y < self.hi);
        let i = y - self.start;
        prefetch(self.bits[(i / 64) as usize].as_ptr(), true);
        let p = self.pos.get();
        self.pos.set(p.wrapping_add(1));
        let old = self.ring[p % RING].replace(i + 1);
        if old != 0 {
            let o = old - 1;
            self.or_word((o / 64) as usize, 1 << (o % 64));
        }
    }
    #[inline]
    fn set_range(&self, a: u64, b: u64) {
        let a = a.max(self.lo);
        let b = b.min(self.hi);
        if a < b {
            range_masks(a - self.start, b - self.start, |w, mask| {
                self.or_word(w, mask)
            });
        }
    }
}

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

/// Where marks go: ranks `lo()..hi()` of a bitset. [`Sink`] writes the
/// window's shared bitset; [`Local`] a block's own copy of its words.
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
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let a = v.as_mut_ptr() as usize;
        let b = a + std::mem::size_of_val(v);
        let (a, b) = (a.next_multiple_of(PAGE), b / PAGE * PAGE);
        if b > a {
            // SAFETY: [a, b) lies inside `v`'s allocation and is page
            // aligned; MADV_HUGEPAGE changes no contents, only how the
            // kernel backs the pages. A failure is harmless and ignored.
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
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

    /// Calls `f(block, rows)` for every block of layer `layer` that meets
    /// ranks `lo..hi`, in rank order; `rows[..block.k]` is its prefix.
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
        if l == self.k {
            if sum == layer && meets(acc, b.span(l, cap)) {
                let blk = Block {
                    k: l,
                    cap,
                    base: acc,
                    key,
                    sum,
                    layer,
                };
                f(&blk, rows);
            }
            return;
        }
        let left = (self.k - l) as u32;
        let th = self.low;
        if sum + left * (th - 1) == layer && meets(acc, b.span(l, th - 1)) {
            let blk = Block {
                k: l,
                cap: th - 1,
                base: acc,
                key,
                sum,
                layer,
            };
            f(&blk, rows);
        }
        for v in th..=cap {
            let a = acc + b.term(l, v);
            if a >= hi || sum + v + (left - 1) * (th - 1) > layer {
                break;
            }
            if a + b.span(l + 1, v) <= lo || sum + v * left < layer {
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
    /// Prefetches the directory entry of key `key` (≥ `key_lo`).
    #[inline(always)]
    fn prefetch_entry(&self, key: u64) {
        prefetch(self.dir[(key - self.key_lo) as usize].as_ptr(), false);
    }

    /// The directory entry of key `key` (≥ `key_lo`).
    #[inline(always)]
    fn entry(&self, key: u64) -> u64 {
        self.dir[(key - self.key_lo) as usize].load(Relaxed)
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

impl ChompBox {
    /// Number of staircases of the rows `k..m` with no row above `cap`:
    /// `C(cap + m−k, m−k)` (1 for k = m). The staircases sharing rows
    /// `0..k` fill a rank interval of this length.
    #[inline(always)]
    fn span(&self, k: usize, cap: u32) -> u64 {
        self.span[k * (self.n + 1) + cap as usize]
    }

    /// Solves ranks `start..end` given every P-position below `start`, in
    /// ascending order, from `earlier_p`.
    ///
    /// Uses `threads` threads (0 counts as 1); the result does not depend on
    /// it. Chained windows (`0..a`, `a..b`, …, each given the P-positions of
    /// all windows before) give the same P-positions as [`ChompBox::solve`].
    /// Memory: about [`window_memory`]`(m, n, end − start, threads)` bytes.
    ///
    /// # Panics
    /// If `start > end` or `end > len()`, or if `earlier_p` yields a rank
    /// that is not below `start` or not ascending.
    pub fn solve_window(
        &self,
        start: u64,
        end: u64,
        earlier_p: &mut dyn Iterator<Item = u64>,
        threads: usize,
    ) -> BoxWindow {
        self.solve_window_scan(start, end, earlier_p, threads, Scan::Auto)
    }

    /// [`ChompBox::solve_window`] with the blocks scanned as `scan` says
    /// (same result for every scan; [`Scan::Ranks`] is the rank-by-rank
    /// solver kept as an independent check and for benchmarks).
    ///
    /// # Panics
    /// As [`ChompBox::solve_window`].
    pub fn solve_window_scan(
        &self,
        start: u64,
        end: u64,
        earlier_p: &mut dyn Iterator<Item = u64>,
        threads: usize,
        scan: Scan,
    ) -> BoxWindow {
        self.solve_window_with(start, end, earlier_p, threads, TAIL, LOW, scan)
    }

    /// [`ChompBox::solve_window`] with standard blocks of `tail` free rows
    /// and θ = `low` (see [`Layout`]; the tests use small values to have
    /// many layers and both kinds of blocks in small boxes).
    #[allow(clippy::too_many_arguments)]
    fn solve_window_with(
        &self,
        start: u64,
        end: u64,
        earlier_p: &mut dyn Iterator<Item = u64>,
        threads: usize,
        tail: usize,
        low: u32,
        scan: Scan,
    ) -> BoxWindow {
        let scan = scan.resolve(self.m, self.n);
        assert!(start <= end, "window {start}..{end} is reversed");
        assert!(
            end <= self.len,
            "window end {end} beyond the box's {}",
            self.len
        );
        let m = self.m;
        let words = (end - start).div_ceil(64) as usize;
        let mut marks = vec![0u64; words];
        advise_huge_pages(&mut marks);
        // SAFETY: same size and alignment (checked above); the view lives
        // while `marks` is borrowed and every access goes through it.
        let bits: &[AtomicU64] =
            unsafe { std::slice::from_raw_parts(marks.as_ptr().cast::<AtomicU64>(), words) };
        let t_n = threads.clamp(1, words.max(1));
        let regions: Vec<(u64, u64)> = (0..t_n)
            .map(|k| {
                let (w0, w1) = (words * k / t_n, words * (k + 1) / t_n);
                (start + 64 * w0 as u64, (start + 64 * w1 as u64).min(end))
            })
            .collect();
        let owned = |k: usize| Sink::new(bits, start, regions[k].0, regions[k].1);

        // Phase 1: the carry.
        let mut chunk: Vec<u64> = Vec::new();
        let mut last = None;
        loop {
            chunk.clear();
            for x in &mut *earlier_p {
                assert!(
                    x < start,
                    "earlier P-position {x} not below the window start {start}"
                );
                assert!(last < Some(x), "earlier P-positions not ascending at {x}");
                last = Some(x);
                chunk.push(x);
                if chunk.len() == CARRY_CHUNK {
                    break;
                }
            }
            if chunk.is_empty() {
                break;
            }
            let chunk = &chunk;
            let carry = |k: usize| {
                let sink = owned(k);
                let (mut q, mut pre, mut depth) = (vec![0u32; m], vec![0u64; m + 1], 0);
                for &x in chunk {
                    self.unrank_for_carry(x, sink.lo(), &mut q, &mut pre, &mut depth);
                    self.mark_predecessors_in::<_, true>(x, &q, 0..m, self.n as u32, &sink);
                }
                sink.flush();
            };
            let carry = &carry;
            std::thread::scope(|sc| {
                for k in 1..t_n {
                    sc.spawn(move || carry(k));
                }
                carry(0);
            });
        }

        // Phase 2: inside the window, block layer by block layer.
        let lay = Layout::new(self, tail, low);
        let lay = &lay;
        let k_top = lay.k;
        let sizes = m * self.n + 1;
        let layers = lay.layers();
        let std_table = self.size_table(m - k_top, self.n as u32);
        let (key_lo, key_hi) = if start < end {
            let mut r = vec![0u32; m];
            self.unrank(start, &mut r);
            let a = lay.block_key(&r);
            self.unrank(end - 1, &mut r);
            (a, lay.block_key(&r))
        } else {
            (0, 0)
        };
        let dir_len = if start < end {
            (key_hi - key_lo + 1) as usize
        } else {
            0
        };
        let mut dir_words = vec![0u64; dir_len];
        // SAFETY: as for `bits`.
        let dir: &[AtomicU64] = unsafe {
            std::slice::from_raw_parts(dir_words.as_mut_ptr().cast::<AtomicU64>(), dir_len)
        };
        assert!(
            ((layers * t_n) as u64) < 1 << 24,
            "an arena number fits the directory's 24 bits"
        );
        let arenas: Vec<OnceLock<Vec<u32>>> = (0..layers * t_n).map(|_| OnceLock::new()).collect();
        let claimed: Vec<AtomicUsize> = (0..layers).map(|_| AtomicUsize::new(0)).collect();
        let barrier = Barrier::new(t_n);
        let cx = Ctx {
            start,
            end,
            bits,
            dir,
            key_lo,
            arenas: &arenas,
        };
        let prefix_terms = match scan {
            Scan::Prefixes => self.prefix_terms(),
            _ => Vec::new(),
        };
        let prefix_terms = &prefix_terms;
        let (cx, barrier, claimed, std_table) = (&cx, &barrier, &claimed, &std_table);
        let work = move |t: usize| -> Counts {
            let mut counts = Counts {
                positions: vec![0; sizes],
                p: vec![0; sizes],
                std_blocks: vec![0; layers * (self.n + 1)],
                low_blocks: vec![0; lay.low_len()],
            };
            let mut rows = vec![0u32; m];
            let mut block_rows = vec![0u32; m];
            let mut scratch = Scratch::default();
            let mut masks = PrefixMasks::default();
            let mut buf: Vec<u64> = Vec::new();
            for (layer, claimed) in claimed.iter().enumerate().skip(lay.first_layer()) {
                let mut arena: Vec<u32> = Vec::new();
                let arena_id = layer * t_n + t;
                // Every thread walks the layer's blocks in rank order and
                // solves the ones it claims: block sizes vary a lot, so a
                // thread that is done asks for the next one.
                let mut index = 0usize;
                let mut next = claimed.fetch_add(1, Relaxed);
                lay.each_block(
                    self,
                    layer as u32,
                    start,
                    end,
                    &mut rows,
                    &mut |blk: &Block, rows: &[u32]| {
                        index += 1;
                        if index - 1 == next {
                            next = claimed.fetch_add(1, Relaxed);
                            block_rows[..blk.k].copy_from_slice(&rows[..blk.k]);
                            self.solve_block(
                                lay,
                                blk,
                                &mut block_rows,
                                cx,
                                std_table.is_some(),
                                &mut counts,
                                &mut arena,
                                arena_id,
                                &mut scratch,
                                &mut buf,
                                (scan == Scan::Prefixes).then_some((&prefix_terms[..], &mut masks)),
                            );
                        }
                    },
                );
                arena.shrink_to_fit();
                cx.arenas[arena_id]
                    .set(arena)
                    .expect("each arena is set once");
                barrier.wait();
            }
            counts
        };
        let work = &work;
        let all: Vec<Counts> = std::thread::scope(|sc| {
            let handles: Vec<_> = (1..t_n).map(|t| sc.spawn(move || work(t))).collect();
            let mut out = vec![work(0)];
            out.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("window thread panicked")),
            );
            out
        });
        drop(arenas);
        drop(dir_words);

        let mut positions_by_size = vec![0u64; sizes];
        let mut p_by_size = vec![0u64; sizes];
        for c in &all {
            for s in 0..sizes {
                positions_by_size[s] += c.positions[s];
                p_by_size[s] += c.p[s];
            }
            if let Some(table) = &std_table {
                let width = (m - k_top) * self.n + 1;
                for p in 0..layers {
                    for cap in 0..=self.n {
                        let nb = c.std_blocks[p * (self.n + 1) + cap];
                        if nb > 0 {
                            for d in 0..width {
                                positions_by_size[p + d] += nb * table[cap * width + d];
                            }
                        }
                    }
                }
            }
        }
        let mut low_blocks = vec![0u64; lay.low_len()];
        for c in &all {
            for (a, b) in low_blocks.iter_mut().zip(&c.low_blocks) {
                *a += b;
            }
        }
        self.add_low_sizes(lay, &low_blocks, &mut positions_by_size);
        if start == 0 && end > 0 {
            positions_by_size[0] -= 1; // the empty board was counted with its block
        }
        // Unmarked = P-position: the marks become the P-bits in place.
        for w in marks.iter_mut() {
            *w = !*w;
        }
        if start == 0 && words > 0 {
            marks[0] &= !1; // the empty board
        }
        if !(end - start).is_multiple_of(64) {
            let keep = (end - start) % 64;
            marks[words - 1] &= (1u64 << keep) - 1;
        }
        BoxWindow {
            start,
            end,
            p_bits: marks,
            positions_by_size,
            p_by_size,
        }
    }

    /// Adds to `positions` (by number of squares) the staircases of the full
    /// low blocks counted in `low` (see [`Layout::low_index`]): a low block
    /// at depth k with `sum` prefix squares holds, for every d, the
    /// staircases of m − k rows with no row above θ − 1 and d squares. Those
    /// counts are built one row at a time up to m rows (θ·(r(θ−1)+1) numbers
    /// for r rows), not kept per depth.
    fn add_low_sizes(&self, lay: &Layout, low: &[u64], positions: &mut [u64]) {
        let (m, k_top) = (self.m, lay.k);
        if k_top == 0 || low.iter().all(|&c| c == 0) {
            return;
        }
        let top = lay.low as usize - 1;
        // f[c][d] for r rows, c ≤ θ − 1: f_r(c, d) = f_r(c − 1, d) +
        // f_{r−1}(c, d − c).
        let mut f: Vec<Vec<u64>> = vec![vec![1]; top + 1];
        for r in 1..=m {
            let width = r * top + 1;
            let mut g: Vec<Vec<u64>> = Vec::with_capacity(top + 1);
            for c in 0..=top {
                let mut row = vec![0u64; width];
                for (d, x) in row.iter_mut().enumerate() {
                    let below = if c > 0 { g[c - 1][d] } else { 0 };
                    let prev = if d >= c {
                        f[c].get(d - c).copied().unwrap_or(0)
                    } else {
                        0
                    };
                    *x = below + prev;
                }
                g.push(row);
            }
            f = g;
            if r + k_top > m {
                let k = m - r;
                for sum in k as u32 * lay.low..=k as u32 * self.n as u32 {
                    let nb = low[lay.low_index(k, sum)];
                    if nb > 0 {
                        for (d, &x) in f[top].iter().enumerate() {
                            positions[sum as usize + d] += nb * x;
                        }
                    }
                }
            }
        }
    }

    /// `table[cap * (rows·maxcap + 1) + d]` for cap ≤ `maxcap`: staircases
    /// of `rows` rows with no row above `cap` and `d` squares; `None` if
    /// larger than [`MAX_TAIL_TABLE`].
    fn size_table(&self, rows: usize, maxcap: u32) -> Option<Vec<u64>> {
        let maxcap = maxcap as usize;
        let width = rows * maxcap + 1;
        if (maxcap + 1).checked_mul(width)? > MAX_TAIL_TABLE {
            return None;
        }
        // f[c][d] for `r` rows, built up one row at a time:
        // f_r(c, d) = Σ_{v ≤ c} f_{r−1}(v, d − v).
        let mut f = vec![0u64; (maxcap + 1) * width];
        for c in 0..=maxcap {
            f[c * width] = 1;
        }
        for _ in 0..rows {
            let mut g = vec![0u64; (maxcap + 1) * width];
            for c in 0..=maxcap {
                for d in 0..width {
                    let mut s = 0;
                    for v in 0..=c.min(d) {
                        s += f[v * width + d - v];
                    }
                    g[c * width + d] = s;
                }
            }
            f = g;
        }
        Some(f)
    }

    /// Solves one block within the window: marks what it pulls from the
    /// blocks its bites leave for, then scans it upwards (an unmarked rank is
    /// a P-position) marking the predecessors inside the block, and files
    /// its P-positions (offsets from its first rank) under its key.
    #[allow(clippy::too_many_arguments)]
    fn solve_block(
        &self,
        lay: &Layout,
        blk: &Block,
        rows: &mut [u32],
        cx: &Ctx<'_>,
        std_table: bool,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        arena_id: usize,
        scratch: &mut Scratch,
        buf: &mut Vec<u64>,
        prefix_scan: Option<(&[u64], &mut PrefixMasks)>,
    ) {
        let m = self.m;
        let (k, cap, base) = (blk.k, blk.cap, blk.base);
        let block_end = base + self.span(k, cap);
        let a = base.max(cx.start);
        let b = block_end.min(cx.end);
        let full = a == base && b == block_end;
        if full && k < lay.k {
            counts.low_blocks[lay.low_index(k, blk.sum)] += 1;
        } else if full && std_table {
            counts.std_blocks[blk.layer as usize * (self.n + 1) + cap as usize] += 1;
        } else {
            // Count the block's staircases in the window one by one.
            self.unrank_tail(a - base, k, cap, rows);
            let mut s = rows.iter().map(|&r| r as usize).sum::<usize>();
            for y in a..b {
                counts.positions[s] += 1;
                if y + 1 < b {
                    s = self.advance_tail(rows, k, cap, s);
                }
            }
        }
        let start = cx.start;
        let (wa, wb) = (
            ((a - start) / 64) as usize,
            ((b.max(a + 1) - 1 - start) / 64) as usize,
        );
        // The block's words, copied out: every mark below lands in them.
        let bits = cx.bits;
        buf.clear();
        buf.reserve_exact(wb + 1 - wa);
        buf.extend(bits[wa..=wb].iter().map(|w| w.load(Relaxed)));
        let origin = start + 64 * wa as u64;
        let local = Local {
            words: Cell::from_mut(&mut buf[..]).as_slice_of_cells(),
            origin,
            lo: a,
            hi: b,
        };
        if k > 0 {
            self.pull(lay, &rows[..k], cap, base, full, cx, &local, scratch);
        }
        // Filed only where another block may pull them (a box of one block
        // files nothing).
        let file = lay.k > 0;
        let head = arena.len();
        if file {
            arena.push(0);
        }
        let words = local.words;
        if let Some((terms, masks)) = prefix_scan
            && k + 2 <= m
        {
            self.scan_prefixes(
                terms, k, cap, base, a, b, rows, &local, counts, arena, file, masks,
            );
        } else {
            self.scan_ranks(a, b, k, cap, base, rows, &local, counts, arena, file);
        }
        // Back into the window's bitset: the first and last words may hold
        // ranks of other blocks of this layer (solved at the same time), so
        // they are ORed atomically; the words between are this block's alone.
        let last = words.len() - 1;
        for (e, w) in words.iter().enumerate() {
            if e == 0 || e == last {
                bits[wa + e].fetch_or(w.get(), Relaxed);
            } else {
                bits[wa + e].store(w.get(), Relaxed);
            }
        }
        let found = arena.len().saturating_sub(head + 1);
        if found == 0 {
            arena.truncate(head);
        } else {
            arena[head] = found as u32;
            cx.dir[(blk.key - cx.key_lo) as usize]
                .store(((arena_id as u64) << 40) | (head as u64 + 1), Relaxed);
        }
    }

    /// The rank scan of a block (ranks `a..b`, free rows `k..m` at most
    /// `cap`, first rank `base`): an unmarked rank is a P-position; it is
    /// counted, filed (if `file`) and marks all its predecessors in the block.
    #[allow(clippy::too_many_arguments)]
    fn scan_ranks(
        &self,
        a: u64,
        b: u64,
        k: usize,
        cap: u32,
        base: u64,
        rows: &mut [u32],
        local: &Local<'_>,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        file: bool,
    ) {
        let m = self.m;
        let (words, origin) = (local.words, local.origin);
        let mut y = a.max(1);
        while y < b {
            let i = y - origin;
            let w = (i / 64) as usize;
            let free = !words[w].get() >> (i % 64);
            if free == 0 {
                y = origin + 64 * (w as u64 + 1);
                continue;
            }
            y += u64::from(free.trailing_zeros());
            if y >= b {
                break;
            }
            self.unrank_tail(y - base, k, cap, rows);
            let s = rows.iter().map(|&r| r as usize).sum::<usize>();
            counts.p[s] += 1;
            if file {
                arena.push((y - base) as u32);
            }
            self.mark_predecessors_in::<_, false>(y, rows, k..m, cap, local);
            y += 1;
        }
    }

    /// `T(j, r) = C(r + m−2−j, m−1−j)` for j < m − 1, `n + 1` per row: the
    /// rank terms of an (m−1)-row box. The settings of rows `i+1..m−1` (the
    /// prefix rows after i) in rank order are numbered `Σ_{j>i} T(j, r_j)`,
    /// whatever i is.
    fn prefix_terms(&self) -> Vec<u64> {
        let (m, n) = (self.m, self.n);
        let mut t = Vec::with_capacity((m - 1) * (n + 1));
        for j in 0..m - 1 {
            for r in 0..=n {
                t.push(binom((r + m - 2 - j) as u64, (m - 1 - j) as u64));
            }
        }
        t
    }

    /// The prefix scan of a block (ranks `a..b`, free rows `k..m` at most
    /// `cap`, first rank `base`, `k ≤ m − 2`, n ≤ 63), after the carry and
    /// the pull have marked it.
    ///
    /// The staircases sharing their first m − 1 rows R (the *prefix*) are
    /// the consecutive ranks `y₀ ..= y₀ + R_{m−2}` (last row l = 0 ..=
    /// R_{m−2}). A bite in the last row leads to a shorter l of the same
    /// prefix, so at most one l is a P-position: the lowest that no other
    /// bite *kills*. The kills of R, as a mask over l, are the OR of
    /// - the marks already in the bitset (carry, pull, and the marks below);
    /// - row m − 2 (`w`): the bite (m−2, c), c < R_{m−2}, leads to prefix
    ///   R' = R with row m−2 cut to c and last row min(l, c); with g the
    ///   P-length of R' it kills l = g if g < c and every l ≥ c if g = c.
    ///   These are the prefixes just before R, so `w` is a running mask,
    ///   reset when row m − 2 restarts;
    /// - row i, k ≤ i ≤ m − 3, bites (i, c) with c ≥ R_{i+1} (*one-row
    ///   bites*: only row i changes, to c): they kill the P-lengths of the
    ///   prefixes R[i := c], R_{i+1} ≤ c < R_i. `masks.rows[i]` holds this
    ///   OR for every setting of rows i+1..m−1 (numbered by the prefix terms
    ///   `terms`), updated as each prefix is solved: the entry is empty when
    ///   R_i = R_{i+1} (the first prefix of that setting), and gains the
    ///   P-length of every later prefix with that setting.
    ///
    /// So only the bites at rows ≥ k that cut two rows or more mark (see
    /// [`ChompBox::mark_multirow`]). Every staircase of the segment but the
    /// P-position is then marked, so the bitset ends as the rank scan's.
    /// In a block cut by the window's start the masks start empty: the
    /// prefixes before `a` reached the window through the carry's marks.
    #[allow(clippy::too_many_arguments)]
    fn scan_prefixes(
        &self,
        terms: &[u64],
        k: usize,
        cap: u32,
        base: u64,
        a: u64,
        b: u64,
        rows: &mut [u32],
        local: &Local<'_>,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        file: bool,
        masks: &mut PrefixMasks,
    ) {
        let m = self.m;
        let n1 = self.n + 1;
        let last = m - 2; // the last prefix row
        let mask_lo = last.saturating_sub(mask_rows()).max(k);
        let full = a == base && b == base + self.span(k, cap);
        // Mask arrays of rows k..=m−3: C(cap + d, d) settings of the d =
        // m−2−i rows after i.
        if masks.rows.len() < m {
            masks.rows.resize_with(m, Vec::new);
        }
        for i in mask_lo..last {
            let d = (last - i) as u64;
            let len = binom(u64::from(cap) + d, d) as usize;
            let v = &mut masks.rows[i];
            if v.len() < len {
                v.resize(len, 0);
            }
            if a > base {
                v[..len].fill(0);
            }
        }
        self.unrank_tail(a - base, k, cap, rows);
        let mut y0 = a - u64::from(rows[m - 1]);
        rows[m - 1] = 0;
        let mut ctx = [0u64; 64];
        let mut acc = 0u64;
        for i in (k..last).rev() {
            acc += terms[(i + 1) * n1 + rows[i + 1] as usize];
            ctx[i] = acc;
        }
        let mut squares: usize = rows[..last + 1].iter().map(|&r| r as usize).sum();
        let mut w = 0u64;
        let words = local.words;
        loop {
            let v = rows[last];
            let seg_end = y0 + u64::from(v) + 1;
            // The lengths l of this prefix inside the window (and not the
            // empty board): lo_l..hi_l.
            let lo = a.max(y0).max(1);
            let hi = b.min(seg_end);
            let lengths = if v == 63 {
                !0u64
            } else {
                (1u64 << (v + 1)) - 1
            };
            let mut kill = w | !lengths;
            if lo > y0 {
                kill |= (1u64 << (lo - y0)) - 1;
            }
            if hi < seg_end {
                kill |= !0u64 << (hi - y0);
            }
            if lo < hi {
                // The marks of lo..hi (at most 64 bits, in one or two of the
                // block's words), at their lengths l = y − y₀.
                let i0 = lo - local.origin;
                let (wi, sh) = ((i0 / 64) as usize, i0 % 64);
                let len = hi - lo;
                let mut seg = words[wi].get() >> sh;
                if sh != 0 && sh + len > 64 {
                    seg |= words[wi + 1].get() << (64 - sh);
                }
                if len < 64 {
                    seg &= (1u64 << len) - 1;
                }
                kill |= seg << (lo - y0);
            }
            for i in mask_lo..last {
                let e = &mut masks.rows[i][ctx[i] as usize];
                if rows[i + 1] == rows[i] {
                    *e = 0;
                } else {
                    kill |= *e;
                }
            }
            let free = !kill;
            let found = (free != 0).then(|| free.trailing_zeros());
            if let Some(f) = found {
                let y = y0 + u64::from(f);
                counts.p[squares + f as usize] += 1;
                if file {
                    arena.push((y - base) as u32);
                }
                for (row, &c) in masks.rows[mask_lo..last]
                    .iter_mut()
                    .zip(&ctx[mask_lo..last])
                {
                    row[c as usize] |= 1 << f;
                }
                local.set_range(lo, y);
                local.set_range(y + 1, hi);
                rows[m - 1] = f;
                if mask_lo > k {
                    self.mark_predecessors_in::<_, false>(y, rows, k..mask_lo, cap, local);
                }
                self.mark_multirow(y, rows, k, mask_lo, cap, full, local);
                rows[m - 1] = 0;
            } else if lo < hi {
                local.set_range(lo, hi);
            }
            if seg_end >= b {
                return;
            }
            // The next prefix in rank order.
            let bound = if last == k { cap } else { rows[last - 1] };
            if v < bound {
                if let Some(g) = found {
                    w |= if g < v { 1 << g } else { !0u64 << v };
                }
                rows[last] = v + 1;
                squares += 1;
                for c in ctx[k..last].iter_mut() {
                    *c += 1;
                }
            } else {
                // The deepest row j < last that can grow; rows after it
                // restart at 0.
                let mut j = last;
                loop {
                    debug_assert!(j > k, "the block's last prefix ends the block");
                    j -= 1;
                    let bound = if j == k { cap } else { rows[j - 1] };
                    if rows[j] < bound {
                        break;
                    }
                }
                rows[j] += 1;
                squares += 1;
                for r in rows[j + 1..=last].iter_mut() {
                    squares -= *r as usize;
                    *r = 0;
                }
                w = 0;
                for c in ctx[k..j].iter_mut() {
                    *c += 1;
                }
                for c in ctx[j..last].iter_mut() {
                    *c = 0;
                }
            }
            y0 = seg_end;
        }
    }

    /// Marks the predecessors of the P-position `q` (rank `x`, free rows
    /// `k..m` at most `cap`) that the prefix scan does not gather as masks:
    /// through a bite (i, c = q_i) at a row k ≤ i ≤ m − 3 that cuts two rows
    /// or more, i.e. R_i ∈ (c, cap_i], rows i+1..t (the rest of q's run of
    /// rows equal to c) raised in [c, R_i] with R_{i+1} > c. (The setting
    /// with every raised row at c is the one-row bite.)
    #[allow(clippy::too_many_arguments)]
    fn mark_multirow<S: Marks>(
        &self,
        x: u64,
        q: &[u32],
        k: usize,
        mask_lo: usize,
        cap: u32,
        full: bool,
        sink: &S,
    ) {
        let (lo, hi) = (sink.lo(), sink.hi());
        let m = self.m;
        let mut prefix: u64 = (0..mask_lo).map(|r| self.term(r, q[r])).sum();
        for i in mask_lo..m - 2 {
            let cap_i = if i == k { cap } else { q[i - 1] };
            if prefix >= hi || prefix + self.span(i, cap_i) <= lo {
                break;
            }
            let j = q[i];
            if cap_i > j && (i == 0 || q[i - 1] != j) && q[i + 1] == j {
                let mut t = i + 2;
                while t < m && q[t] == j {
                    t += 1;
                }
                if j == 0 && t == m {
                    // Rows i.. are empty in q: every staircase with q's rows
                    // 0..i and a non-empty row i (the one-row bites too).
                    sink.set_range(prefix + self.term(i, 1), prefix + self.span(i, cap_i));
                } else {
                    let base = x - (self.colsum(j, t) - self.colsum(j, i));
                    for ri in j + 1..=cap_i {
                        let acc = base + self.term(i, ri);
                        if acc >= hi {
                            break;
                        }
                        for v in j + 1..=ri {
                            let acc2 = acc + self.term(i + 1, v);
                            if acc2 >= hi {
                                break;
                            }
                            if full {
                                self.raise_run_all(i + 2, t, j, v, acc2, sink);
                            } else {
                                self.raise_run_in(i + 2, t, j, v, acc2, sink);
                            }
                        }
                    }
                }
            }
            prefix += self.term(i, q[i]);
        }
    }

    /// Marks, in the block with prefix `pre` (rows `0..k`, `k = pre.len()`),
    /// last rows at most `cap`, first rank `base`, every predecessor of a
    /// P-position already filed (in a block of an earlier layer) through a
    /// bite at a prefix row.
    ///
    /// A staircase `pre + T` of the block, bitten at (i, c) with i < k and
    /// c < pre[i], leaves `clip_c(pre) + clip_c(T)` (rows from i cut to c).
    /// For c ≥ θ that lies in the block with prefix `clip_c(pre)` (same k),
    /// at offset `off(clip_c(T))`; for c < θ in the low block at depth i,
    /// at offset `Σ_{l=i}^{k−1} term(l, c) + off(clip_c(T))`. So the block
    /// pulls, for every filed P-position of those blocks whose tail τ =
    /// clip_c(T), every T: τ itself when τ's first row is below c (or c ≥
    /// cap), else τ with its leading run of rows equal to c raised to any
    /// non-increasing values in [c, cap].
    #[allow(clippy::too_many_arguments)]
    fn pull<S: Marks>(
        &self,
        lay: &Layout,
        pre: &[u32],
        cap: u32,
        base: u64,
        full: bool,
        cx: &Ctx<'_>,
        sink: &S,
        scratch: &mut Scratch,
    ) {
        let k = pre.len();
        let theta = lay.low;
        let (sums, reqs) = (&mut scratch.sums, &mut scratch.reqs);
        sums.clear();
        sums.push(0);
        for l in 0..k {
            let v = sums[l] + lay.d(l, pre[l]);
            sums.push(v);
        }
        // The source blocks, one per (row, column ≥ θ) of the prefix and one
        // low block per row; their directory entries are fetched all at once
        // (each is a cache miss), then their lists' first lines.
        reqs.clear();
        for i in 0..k {
            let mut j = i;
            for c in (theta..pre[i]).rev() {
                while j < k && pre[j] > c {
                    j += 1;
                }
                let key = sums[i] + lay.cold(c, j) - lay.cold(c, i) + sums[k] - sums[j];
                if key >= cx.key_lo {
                    cx.prefetch_entry(key);
                    reqs.push((key, i as u32, c));
                }
            }
            if sums[i] >= cx.key_lo {
                cx.prefetch_entry(sums[i]);
                reqs.push((sums[i], i as u32, LOW_SOURCE));
            }
        }
        for r in reqs.iter_mut() {
            r.0 = cx.entry(r.0);
            cx.prefetch_list(r.0);
        }
        for q in 0..scratch.reqs.len() {
            let (e, i, c) = scratch.reqs[q];
            let Some(list) = cx.list_at(e) else {
                continue;
            };
            let i = i as usize;
            if c != LOW_SOURCE {
                if c >= cap {
                    for &o in list {
                        sink.set(base + u64::from(o));
                    }
                } else {
                    self.pull_list(list, 0, c, k, cap, base, full, sink, &mut scratch.group);
                }
                continue;
            }
            let mut from = 0usize;
            for c in 0..theta {
                let sigma = self.colsum(c, k) - self.colsum(c, i);
                let len = self.span(k, c);
                from += list[from..].partition_point(|&o| u64::from(o) < sigma);
                let to = from + list[from..].partition_point(|&o| u64::from(o) < sigma + len);
                if c >= cap {
                    for &o in &list[from..to] {
                        sink.set(base + u64::from(o) - sigma);
                    }
                } else {
                    let group = &mut scratch.group;
                    self.pull_list(&list[from..to], sigma, c, k, cap, base, full, sink, group);
                }
                from = to;
            }
        }
    }

    /// [`ChompBox::pull_one`] for every offset `o − sigma` of `list`
    /// (ascending), c < cap. The leading run r grows with the offset, so the
    /// list falls into runs of equal r; such a run of two or more tails
    /// (rows from k + r alike in rank only) is raised once for all of them
    /// ([`ChompBox::raise_group`]).
    #[allow(clippy::too_many_arguments)]
    fn pull_list<S: Marks>(
        &self,
        list: &[u32],
        sigma: u64,
        c: u32,
        k: usize,
        cap: u32,
        base: u64,
        full: bool,
        sink: &S,
        group: &mut Vec<u64>,
    ) {
        let m = self.m;
        let sc = self.span(k, c);
        let mut e = 0;
        while e < list.len() {
            let o = u64::from(list[e]) - sigma;
            let mut r = 0;
            while k + r < m && o >= sc - self.span(k + r + 1, c) {
                r += 1;
            }
            if r == 0 || k + r == m {
                self.pull_one(o, c, k, cap, base, full, sink);
                e += 1;
                continue;
            }
            // Offsets with the same run r: below sc − span(k + r + 1, c).
            let lead = self.colsum(c, k + r) - self.colsum(c, k);
            let limit = sc - self.span(k + r + 1, c);
            group.clear();
            while e < list.len() {
                let o = u64::from(list[e]) - sigma;
                if o >= limit {
                    break;
                }
                group.push(o - lead);
                e += 1;
            }
            if group.len() == 1 {
                self.pull_one(group[0] + lead, c, k, cap, base, full, sink);
            } else if full {
                self.raise_group::<S, false>(k, k + r, c, cap, base, group, sink);
            } else {
                self.raise_group::<S, true>(k, k + r, c, cap, base, group, sink);
            }
        }
    }

    /// Chooses rows k..t (t < m) in [j, top], non-increasing, and marks
    /// `acc + rank of those rows + ρ` for every ρ of `group` (clipped to the
    /// sink's range if `CLIP`).
    #[allow(clippy::too_many_arguments)]
    fn raise_group<S: Marks, const CLIP: bool>(
        &self,
        k: usize,
        t: usize,
        j: u32,
        top: u32,
        acc: u64,
        group: &[u64],
        sink: &S,
    ) {
        let mark = |a: u64| {
            for &g in group {
                if CLIP {
                    sink.set(a + g);
                } else {
                    sink.set_unclipped(a + g);
                }
            }
        };
        let n1 = self.n + 1;
        // Rows k..t − 1 by an odometer, the last row as a loop.
        let d = t - 1 - k;
        if d > ODOMETER {
            let row = &self.term[k * n1..(k + 1) * n1];
            for v in j..=top {
                self.raise_group::<S, CLIP>(k + 1, t, j, v, acc + row[v as usize], group, sink);
            }
            return;
        }
        let last = &self.term[(t - 1) * n1..t * n1];
        let mut odo = Odometer::new(self, k, d, j, top, acc);
        loop {
            let a = odo.acc();
            for &tv in &last[j as usize..=odo.cap() as usize] {
                mark(a + tv);
            }
            if !odo.advance() {
                return;
            }
        }
    }

    /// Marks the staircases T of rows `k..` (at most `cap`) with clip_c(T) =
    /// τ, where τ is at offset `o` among the staircases of rows `k..` with no
    /// row above c < cap: τ's leading run of rows equal to c (r rows: `o ≥
    /// span(k, c) − span(k + r, c)`) raised to any non-increasing values in
    /// [c, cap], τ itself included.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn pull_one<S: Marks>(
        &self,
        o: u64,
        c: u32,
        k: usize,
        cap: u32,
        base: u64,
        full: bool,
        sink: &S,
    ) {
        let sc = self.span(k, c);
        let mut r = 0;
        while k + r < self.m && o >= sc - self.span(k + r + 1, c) {
            r += 1;
        }
        if r == 0 {
            sink.set(base + o);
            return;
        }
        let acc = base + o - (self.colsum(c, k + r) - self.colsum(c, k));
        if full {
            self.raise_run_all(k, k + r, c, cap, acc, sink);
        } else {
            self.raise_run_in(k, k + r, c, cap, acc, sink);
        }
    }

    /// Writes into `rows[k..]` the tail of rank offset `rest` among the
    /// staircases of rows `k..m` with no row above `cap`.
    fn unrank_tail(&self, mut rest: u64, k: usize, cap: u32, rows: &mut [u32]) {
        let mut hi = cap as usize;
        for (kk, row) in rows.iter_mut().enumerate().skip(k) {
            let table = &self.term[kk * (self.n + 1)..kk * (self.n + 1) + hi + 1];
            // Largest r with term(kk, r) ≤ rest (terms increase in r, and
            // term(kk, 0) = 0): a count without branches, as the rows are
            // short and a binary search mispredicts at every step.
            let r = table[1..]
                .iter()
                .map(|&t| usize::from(t <= rest))
                .sum::<usize>();
            *row = r as u32;
            rest -= table[r];
            hi = r;
        }
    }

    /// Writes into `rows` the rows of rank `x` that the carry of a window
    /// starting at `lo` reads (x < lo): rows `0..depth`, where `depth` is
    /// the first k whose interval of staircases sharing x's rows `0..k`
    /// ends at or below `lo` (no bite at row k or later leaves a
    /// predecessor at or above `lo`), then the run of rows equal to row
    /// `depth − 1` and, after it, one row shorter than that (the rows
    /// below are not computed). `pre[k]` (k ∈ 0..=depth) holds the rank
    /// terms of rows 0..k.
    ///
    /// State between calls, for ascending ranks: `rows[..depth]`,
    /// `pre[..=depth]`; start with `depth` 0. Ranks in ascending order
    /// share their first rows, so only the rows after the deepest
    /// interval of the previous rank's first rows that still holds `x` are
    /// unranked; a far P-position (most of a late part's carry) needs
    /// its first row or two and a few comparisons. `lo` = 0 unranks every
    /// row.
    fn unrank_for_carry(
        &self,
        x: u64,
        lo: u64,
        rows: &mut [u32],
        pre: &mut [u64],
        depth: &mut usize,
    ) {
        let m = self.m;
        let mut k = *depth;
        debug_assert!(x >= pre[k], "ranks not ascending");
        while k > 0 && x >= pre[k] + self.span(k, rows[k - 1]) {
            k -= 1;
        }
        let mut rest = x - pre[k];
        while k < m {
            let cap = if k == 0 { self.n as u32 } else { rows[k - 1] };
            if pre[k] + self.span(k, cap) <= lo {
                break;
            }
            let table = &self.term[k * (self.n + 1)..k * (self.n + 1) + cap as usize + 1];
            let r = if k + 1 == m {
                // The last row: term(m−1, r) = r.
                rest as usize
            } else {
                // Largest r with term(k, r) ≤ rest: a count without
                // branches (see `unrank_tail`).
                table[1..]
                    .iter()
                    .map(|&t| usize::from(t <= rest))
                    .sum::<usize>()
            };
            rows[k] = r as u32;
            rest -= table[r];
            pre[k + 1] = pre[k] + table[r];
            k += 1;
        }
        *depth = k;
        debug_assert!(k < m || rest == 0);
        if k > 0 && k < m {
            // Row t equals j = row t − 1 iff term(t, j) ≤ what is left.
            let j = rows[k - 1];
            let mut t = k;
            while t < m && rest >= self.term(t, j) {
                rows[t] = j;
                rest -= self.term(t, j);
                t += 1;
            }
            if t < m {
                rows[t] = j - 1; // shorter (j > 0: a run of empty rows ends at m)
            }
        }
    }

    /// The next tail of rows `k..m` under `cap` in rank order; returns the
    /// new number of squares (`s` before). Must not be called on the last.
    fn advance_tail(&self, rows: &mut [u32], k: usize, cap: u32, s: usize) -> usize {
        let mut s = s;
        for kk in (k..self.m).rev() {
            let c = if kk == k { cap } else { rows[kk - 1] };
            if rows[kk] < c {
                rows[kk] += 1;
                s += 1;
                for r in rows[kk + 1..].iter_mut() {
                    s -= *r as usize;
                    *r = 0;
                }
                return s;
            }
        }
        s
    }

    /// Marks every predecessor of `q` (rank `x`) through a bite at a row in
    /// `bite_rows` whose rank lies in `sink.lo()..sink.hi()`.
    ///
    /// A predecessor R through the bite (i, j), j = q_i, agrees with q below
    /// row i, has R_i ∈ (j, q_{i−1}] (row 0: ≤ n), rows i+1..t (the rest of
    /// the run of rows equal to j in q) non-increasing in [j, R_i], and the
    /// rows from t on as in q. `BISECT`: skip by bisection the R_i whose
    /// predecessors all lie below the sink (the carry, where q lies below
    /// the window; a block's own P-positions need not). Reads `q`'s rows
    /// only up to the first row i whose interval of staircases sharing
    /// rows 0..i ends at or below the sink, and the run of rows equal to
    /// row i − 1 with the row that ends it: what
    /// [`ChompBox::unrank_for_carry`] writes.
    fn mark_predecessors_in<S: Marks, const BISECT: bool>(
        &self,
        x: u64,
        q: &[u32],
        bite_rows: Range<usize>,
        first_cap: u32,
        sink: &S,
    ) {
        let (lo, hi) = (sink.lo(), sink.hi());
        if hi <= x + 1 {
            return;
        }
        let m = self.m;
        let first = bite_rows.start;
        let mut prefix: u64 = (0..first).map(|k| self.term(k, q[k])).sum();
        for i in bite_rows {
            let cap = if i == first { first_cap } else { q[i - 1] };
            // Every predecessor through a bite at row i or later shares
            // q's rows 0..i: the interval [prefix, prefix + span(i, cap)).
            if prefix >= hi || prefix + self.span(i, cap) <= lo {
                break;
            }
            let j = q[i];
            if cap > j && (i == 0 || q[i - 1] != j) {
                let mut t = i + 1;
                while t < m && q[t] == j {
                    t += 1;
                }
                if j == 0 && t == m {
                    // Rows i.. are empty in q: every staircase with q's rows
                    // 0..i and a non-empty row i.
                    sink.set_range(prefix + self.term(i, 1), prefix + self.span(i, cap));
                } else if i + 1 == m {
                    // A bite in the last row: the longer last rows j+1..=cap
                    // are consecutive ranks (term(m−1, r) = r).
                    sink.set_range(x + 1, x + u64::from(cap - j) + 1);
                } else {
                    let base = x - (self.colsum(j, t) - self.colsum(j, i));
                    let rest_min = self.colsum(j, t) - self.colsum(j, i + 1);
                    // The highest predecessor with row i = ri grows with ri:
                    // skip by bisection the ri whose predecessors all lie
                    // below the sink (a carry far below the window would
                    // otherwise try every length of row 0).
                    let reach = |ri: u32| {
                        base + self.term(i, ri) + self.colsum(ri, t) - self.colsum(ri, i + 1)
                    };
                    // (Only for the carry: inside a block the first length
                    // mostly reaches the sink already.)
                    let mut a = j + 1;
                    if BISECT && reach(a) < lo {
                        let mut b = cap + 1;
                        a += 1;
                        while a < b {
                            let mid = a + (b - a) / 2;
                            if reach(mid) < lo {
                                a = mid + 1;
                            } else {
                                b = mid;
                            }
                        }
                    }
                    for ri in a..=cap {
                        let acc = base + self.term(i, ri);
                        if acc + rest_min >= hi {
                            break;
                        }
                        let rest_max = self.colsum(ri, t) - self.colsum(ri, i + 1);
                        if acc + rest_max < lo {
                            continue;
                        }
                        if acc + rest_min >= lo && acc + rest_max < hi {
                            self.raise_run_all(i + 1, t, j, ri, acc, sink);
                        } else {
                            self.raise_run_in(i + 1, t, j, ri, acc, sink);
                        }
                    }
                }
            }
            prefix += self.term(i, q[i]);
        }
    }

    /// Chooses rows k..t in [j, top], non-increasing, and marks each result
    /// in the sink's range; `acc` holds the rank of every other row.
    fn raise_run_in<S: Marks>(&self, k: usize, t: usize, j: u32, top: u32, acc: u64, sink: &S) {
        if k == t {
            sink.set(acc);
            return;
        }
        if t == self.m {
            if j == 0 {
                // Rows k.. free in [0, top]: one interval.
                sink.set_range(acc, acc + self.span(k, top));
                return;
            }
            if k + 1 == t {
                // The last row alone: term(m−1, v) = v, consecutive ranks.
                sink.set_range(acc + u64::from(j), acc + u64::from(top) + 1);
                return;
            }
        }
        let rest_min = self.colsum(j, t) - self.colsum(j, k + 1);
        for v in j..=top {
            let a = acc + self.term(k, v);
            if a + rest_min >= sink.hi() {
                break;
            }
            let rest_max = self.colsum(v, t) - self.colsum(v, k + 1);
            if a + rest_max < sink.lo() {
                continue;
            }
            if a + rest_min >= sink.lo() && a + rest_max < sink.hi() {
                self.raise_run_all(k + 1, t, j, v, a, sink);
            } else {
                self.raise_run_in(k + 1, t, j, v, a, sink);
            }
        }
    }

    /// [`ChompBox::raise_run_in`] where every result is known to lie in the
    /// sink's range: no clipping.
    fn raise_run_all<S: Marks>(&self, k: usize, t: usize, j: u32, top: u32, acc: u64, sink: &S) {
        if k == t {
            sink.set_unclipped(acc);
            return;
        }
        if t == self.m {
            if j == 0 {
                sink.set_range(acc, acc + self.span(k, top));
                return;
            }
            if k + 1 == t {
                sink.set_range(acc + u64::from(j), acc + u64::from(top) + 1);
                return;
            }
        }
        if k + 1 == t {
            let row = &self.term[k * (self.n + 1)..(k + 1) * (self.n + 1)];
            for &tv in &row[j as usize..=top as usize] {
                sink.set_unclipped(acc + tv);
            }
            return;
        }
        // Rows k..t − 3 by an odometer (no calls), each setting of them
        // followed by the last three rows as three loops.
        let d = t - 2 - k;
        if d > ODOMETER {
            let row = &self.term[k * (self.n + 1)..(k + 1) * (self.n + 1)];
            for v in j..=top {
                self.raise_run_all(k + 1, t, j, v, acc + row[v as usize], sink);
            }
            return;
        }
        if d == 0 {
            self.last_two_rows(k, j, top, acc, sink);
            return;
        }
        // The third row from the end as a loop too: more marks per turn
        // (the odometer's turns were a quarter of the time with two).
        let third = &self.term[(t - 3) * (self.n + 1)..(t - 2) * (self.n + 1)];
        let mut odo = Odometer::new(self, k, d - 1, j, top, acc);
        loop {
            let a = odo.acc();
            for v in j..=odo.cap() {
                self.last_two_rows(t - 2, j, v, a + third[v as usize], sink);
            }
            if !odo.advance() {
                return;
            }
        }
    }

    /// Rows r and r + 1 chosen in [j, top], non-increasing, each result
    /// `acc` plus their rank terms marked (known to lie in the sink's range).
    #[inline(always)]
    fn last_two_rows<S: Marks>(&self, r: usize, j: u32, top: u32, acc: u64, sink: &S) {
        let n1 = self.n + 1;
        let row = &self.term[r * n1..(r + 1) * n1];
        if r + 2 == self.m {
            // The last row's ranks are consecutive.
            for v in j..=top {
                let a = acc + row[v as usize];
                sink.set_range(a + u64::from(j), a + u64::from(v) + 1);
            }
        } else {
            let next = &self.term[(r + 1) * n1..(r + 2) * n1];
            for v in j..=top {
                let a = acc + row[v as usize];
                for &tv in &next[j as usize..=v as usize] {
                    sink.set_unclipped(a + tv);
                }
            }
        }
    }

    /// Every legal bite of `s` with the rank of the staircase it leaves, in
    /// `(row, col)` order (`s.squares() − 1` entries).
    ///
    /// # Errors
    /// [`ChompError::OutsideBox`] if `s` does not fit in the box.
    pub fn children(&self, s: &Staircase) -> Result<Vec<(Bite, u64)>, ChompError> {
        let rows = self.padded(s)?;
        let mut out = Vec::new();
        self.children_until(&rows, |bite, y| {
            out.push((bite, y));
            false
        });
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings of `len` rows in [j, top], non-increasing, in rank
    /// (lexicographic) order, by recursion on the first row.
    fn settings(len: usize, j: u32, top: u32) -> Vec<Vec<u32>> {
        if len == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for v in j..=top {
            for rest in settings(len - 1, j, v) {
                let mut seq = vec![v];
                seq.extend(rest);
                out.push(seq);
            }
        }
        out
    }

    #[test]
    fn odometer_turns_through_every_setting_in_rank_order() {
        let b = ChompBox::new(7, 5).unwrap();
        for k in 0..7 {
            for d in 0..=(7 - k).min(4) {
                for j in 0..=5u32 {
                    for top in j..=5u32 {
                        let mut got = Vec::new();
                        let mut odo = Odometer::new(&b, k, d, j, top, 1000);
                        loop {
                            let cap = if d == 0 { top } else { odo.vals[d - 1] };
                            assert_eq!(odo.cap(), cap);
                            got.push((odo.vals[..d].to_vec(), odo.acc()));
                            if !odo.advance() {
                                break;
                            }
                        }
                        let want: Vec<(Vec<u32>, u64)> = settings(d, j, top)
                            .into_iter()
                            .map(|seq| {
                                let acc = 1000 + (0..d).map(|l| b.term(k + l, seq[l])).sum::<u64>();
                                (seq, acc)
                            })
                            .collect();
                        assert_eq!(got, want, "k {k} d {d} j {j} top {top}");
                    }
                }
            }
        }
    }

    /// Marks recorded one by one (ranges expanded).
    struct Record(std::cell::RefCell<Vec<u64>>);

    impl Marks for Record {
        fn lo(&self) -> u64 {
            0
        }
        fn hi(&self) -> u64 {
            u64::MAX
        }
        fn set_unclipped(&self, y: u64) {
            self.0.borrow_mut().push(y);
        }
        fn set_range(&self, a: u64, b: u64) {
            self.0.borrow_mut().extend(a..b);
        }
    }

    /// `raise_run_all` and `raise_group` mark exactly the raised runs
    /// (brute force), runs longer than the odometer included (they recurse
    /// first), single rows and t = m: rows k..t in [j, top], the rows from t
    /// on at j.
    #[test]
    fn raises_mark_every_raised_run_once() {
        let boxes = [
            (7usize, 5usize),
            (1, 4),
            (2, 4),
            (3, 3),
            (60, 1),
            (40, 2),
            (26, 3),
        ];
        for (m, n) in boxes {
            let b = ChompBox::new(m, n).unwrap();
            for k in 0..m {
                for t in k + 1..=m {
                    for j in 0..=n as u32 {
                        for top in j..=n as u32 {
                            // The rows from t on at j (so that the result is
                            // a staircase), their terms in acc.
                            let rest: u64 = (t..m).map(|r| b.term(r, j)).sum();
                            let mut want: Vec<u64> = settings(t - k, j, top)
                                .into_iter()
                                .map(|seq| {
                                    rest + (0..t - k).map(|l| b.term(k + l, seq[l])).sum::<u64>()
                                })
                                .collect();
                            want.sort_unstable();
                            let rec = Record(Default::default());
                            b.raise_run_all(k, t, j, top, rest, &rec);
                            let mut got = rec.0.into_inner();
                            got.sort_unstable();
                            assert_eq!(got, want, "{m}x{n} all k {k} t {t} j {j} top {top}");
                            if t < m {
                                let rec = Record(Default::default());
                                b.raise_group::<Record, false>(k, t, j, top, rest, &[0, 7], &rec);
                                let mut got = rec.0.into_inner();
                                got.sort_unstable();
                                let mut want2: Vec<u64> =
                                    want.iter().flat_map(|&w| [w, w + 7]).collect();
                                want2.sort_unstable();
                                assert_eq!(got, want2, "{m}x{n} group k {k} t {t} j {j} top {top}");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Very tall boxes (raised runs far longer than the odometer) cut into
    /// 7 windows, on 1 and 2 threads, against `solve()` on every rank.
    #[test]
    fn tall_boxes_in_small_windows_equal_solve() {
        for (m, n) in [(60usize, 1usize), (60, 2), (45, 3), (30, 4), (26, 5)] {
            let b = ChompBox::new(m, n).unwrap();
            let len = b.len();
            let mut cuts: Vec<u64> = (1..7u64)
                .map(|i| len * i / 7 / 64 * 64)
                .filter(|&c| c > 0)
                .collect();
            cuts.dedup();
            for threads in [1, 2] {
                let w = chained(&b, &cuts, threads);
                assert_same(&b, &w, &format!("{m}x{n} threads {threads}"));
            }
        }
    }

    /// Solves `b` in windows cut at `cuts` (chained) and returns them.
    fn chained(b: &ChompBox, cuts: &[u64], threads: usize) -> Vec<BoxWindow> {
        let mut out: Vec<BoxWindow> = Vec::new();
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(b.len());
        for w in bounds.windows(2) {
            let win = {
                let mut earlier = out.iter().flat_map(|w| w.p_ranks());
                b.solve_window(w[0], w[1], &mut earlier, threads)
            };
            out.push(win);
        }
        out
    }

    fn assert_same(b: &ChompBox, wins: &[BoxWindow], what: &str) {
        let p = b.solve();
        for w in wins {
            for x in w.start..w.end {
                assert_eq!(w.is_p(x), p.is_p(x), "{what}: rank {x}");
            }
            if !(w.end - w.start).is_multiple_of(64) {
                let last = *w.p_bits.last().unwrap();
                assert_eq!(last >> ((w.end - w.start) % 64), 0, "{what}: bits past end");
            }
        }
    }

    #[test]
    fn one_window_equals_solve_up_to_6x7() {
        for m in 1..=6 {
            for n in 1..=7 {
                let b = ChompBox::new(m, n).unwrap();
                for threads in 1..=3 {
                    let w = chained(&b, &[], threads);
                    assert_same(&b, &w, &format!("{m}x{n} threads {threads}"));
                }
            }
        }
    }

    /// Staircases and P-positions of `b` by number of squares, counted one
    /// by one from `solve()` (the empty board left out).
    fn brute_sizes(b: &ChompBox) -> (Vec<u64>, Vec<u64>) {
        let p = b.solve();
        let (m, n) = (b.rows(), b.cols());
        let mut pos = vec![0u64; m * n + 1];
        let mut pp = vec![0u64; m * n + 1];
        let mut rows = vec![0u32; m];
        for x in 1..b.len() {
            b.unrank(x, &mut rows);
            let s = rows.iter().sum::<u32>() as usize;
            pos[s] += 1;
            if p.is_p(x) {
                pp[s] += 1;
            }
        }
        (pos, pp)
    }

    #[test]
    fn small_tails_and_thresholds_many_block_layers_equal_solve() {
        for m in 1..=6 {
            for n in 1..=7 {
                let b = ChompBox::new(m, n).unwrap();
                let p = b.solve();
                let (brute, brute_p) = brute_sizes(&b);
                let len = b.len();
                for (tail, scan) in [
                    (1, Scan::Ranks),
                    (2, Scan::Ranks),
                    (3, Scan::Ranks),
                    (2, Scan::Prefixes),
                    (3, Scan::Prefixes),
                    (4, Scan::Prefixes),
                    (6, Scan::Prefixes),
                ] {
                    for low in [1u32, 2, 3, 5] {
                        for threads in 1..=3 {
                            for parts in [1u64, 2, 5] {
                                let what = format!(
                                    "{m}x{n} tail {tail} low {low} threads {threads} parts {parts} {scan:?}"
                                );
                                let mut earlier: Vec<u64> = Vec::new();
                                let mut sizes = vec![0u64; m * n + 1];
                                let mut p_sizes = vec![0u64; m * n + 1];
                                for k in 0..parts {
                                    let (s0, s1) = (len * k / parts, len * (k + 1) / parts);
                                    let w = b.solve_window_with(
                                        s0,
                                        s1,
                                        &mut earlier.iter().copied(),
                                        threads,
                                        tail,
                                        low,
                                        scan,
                                    );
                                    for x in s0..s1 {
                                        assert_eq!(w.is_p(x), p.is_p(x), "{what}: rank {x}");
                                    }
                                    for s in 0..=m * n {
                                        sizes[s] += w.positions_by_size[s];
                                        p_sizes[s] += w.p_by_size[s];
                                    }
                                    earlier.extend(w.p_ranks());
                                }
                                assert_eq!(sizes, brute, "{what}: staircases by size");
                                assert_eq!(p_sizes, brute_p, "{what}: P-positions by size");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tall_and_wide_boxes_with_the_default_blocks_equal_solve() {
        // Taller than the default tail (so with standard and low blocks),
        // thin boxes where θ is clamped to n, and wide ones.
        for (m, n) in [
            (12, 5),
            (14, 4),
            (13, 6),
            (30, 2),
            (40, 1),
            (24, 3),
            (11, 9),
            (2, 40),
        ] {
            let b = ChompBox::new(m, n).unwrap();
            let (brute, brute_p) = brute_sizes(&b);
            for threads in [1, 2] {
                let w = chained(&b, &[b.len() / 3 / 64 * 64], threads);
                assert_same(&b, &w, &format!("{m}x{n} threads {threads}"));
                let pos: Vec<u64> = (0..=m * n)
                    .map(|s| w.iter().map(|x| x.positions_by_size[s]).sum())
                    .collect();
                let pp: Vec<u64> = (0..=m * n)
                    .map(|s| w.iter().map(|x| x.p_by_size[s]).sum())
                    .collect();
                assert_eq!(pos, brute, "{m}x{n}");
                assert_eq!(pp, brute_p, "{m}x{n}");
            }
        }
    }

    /// The prefix scan against the rank scan on wide and square boxes, whole
    /// and in windows cut off word boundaries, on 1 and 2 threads, with the
    /// default blocks and with long tails (every prefix row gathered as
    /// masks); the rank scan against the plain ascending pass.
    #[test]
    fn prefix_scan_equals_rank_scan_on_wide_boxes() {
        for (m, n) in [
            (3, 40),
            (4, 30),
            (5, 20),
            (6, 18),
            (8, 12),
            (7, 7),
            (9, 6),
            (3, 63),
        ] {
            let b = ChompBox::new(m, n).unwrap();
            let len = b.len();
            let plain = b.solve_ascending();
            let cuts = [0, len / 3 + 5, len * 2 / 3 + 17, len];
            for (tail, low) in [(TAIL, LOW), (m, 1), (m - 1, 2), (3, 3)] {
                for threads in [1, 2] {
                    let mut wins = Vec::new();
                    for scan in [Scan::Ranks, Scan::Prefixes] {
                        let mut earlier: Vec<u64> = Vec::new();
                        let mut bits = Vec::new();
                        let mut sizes = (vec![0u64; m * n + 1], vec![0u64; m * n + 1]);
                        for c in cuts.windows(2) {
                            let w = b.solve_window_with(
                                c[0],
                                c[1],
                                &mut earlier.iter().copied(),
                                threads,
                                tail,
                                low,
                                scan,
                            );
                            for x in c[0]..c[1] {
                                bits.push(w.is_p(x));
                            }
                            for s in 0..=m * n {
                                sizes.0[s] += w.positions_by_size[s];
                                sizes.1[s] += w.p_by_size[s];
                            }
                            earlier.extend(w.p_ranks());
                        }
                        wins.push((bits, sizes));
                    }
                    let what = format!("{m}x{n} tail {tail} low {low} threads {threads}");
                    assert!(wins[0] == wins[1], "{what}: the two scans differ");
                    for (x, &p) in wins[0].0.iter().enumerate() {
                        assert_eq!(p, plain.is_p(x as u64), "{what}: rank {x}");
                    }
                }
            }
        }
    }

    /// A P-position's last-row bites mark one interval: the longer last rows
    /// of the same prefix, clipped to the sink (regression test for the range
    /// that replaced one mark per row length).
    #[test]
    fn last_row_bites_mark_the_longer_last_rows() {
        let b = ChompBox::new(3, 9).unwrap();
        let q = [7u32, 5, 2];
        let x = b.rank_rows(&q);
        let rec = Record(Default::default());
        b.mark_predecessors_in::<_, true>(x, &q, 2..3, 5, &rec);
        let want: Vec<u64> = (3..=5).map(|l| b.rank_rows(&[7, 5, l])).collect();
        assert_eq!(rec.0.into_inner(), want);
        assert_eq!(want, vec![x + 1, x + 2, x + 3]);
    }

    #[test]
    fn block_shape_keeps_every_block_under_the_limit() {
        assert_eq!(block_shape(18, 18, TAIL, LOW), (10, 4));
        assert_eq!(block_shape(20, 2, TAIL, LOW), (10, 2), "θ at most n");
        for (m, n) in [(12, 40), (33, 33), (40, 60), (3000, 4), (5, 1 << 20)] {
            let (tail, low) = block_shape(m, n, TAIL, LOW);
            assert!(tail >= 1 && low >= 1 && low as usize <= n, "{m}x{n}");
            assert!(
                tail == 1 || binom((n + tail) as u64, tail as u64) <= MAX_BLOCK,
                "{m}x{n}: standard blocks of tail {tail}"
            );
            if m > tail {
                assert!(
                    low == 1 || binom(u64::from(low) - 1 + m as u64, m as u64) <= MAX_BLOCK,
                    "{m}x{n}: low block θ {low}"
                );
            }
        }
        assert!(block_shape(12, 40, TAIL, LOW).0 < TAIL);
        assert!(block_shape(3000, 4, TAIL, LOW).1 < LOW);
    }

    #[test]
    fn every_cut_of_small_boxes_equals_solve() {
        for (m, n) in [(3, 4), (4, 4), (4, 5), (5, 3)] {
            let b = ChompBox::new(m, n).unwrap();
            for a in 0..=b.len() {
                for c in [a, (a + 7).min(b.len()), b.len()] {
                    let cuts: Vec<u64> = [a, c]
                        .into_iter()
                        .filter(|&x| x > 0 && x < b.len())
                        .collect();
                    let mut cuts = cuts;
                    cuts.dedup();
                    let w = chained(&b, &cuts, 2);
                    assert_same(&b, &w, &format!("{m}x{n} cuts {cuts:?}"));
                }
            }
        }
    }

    #[test]
    fn sizes_count_staircases_by_squares() {
        let b = ChompBox::new(5, 6).unwrap();
        let mut brute = vec![0u64; 31];
        let mut brute_p = vec![0u64; 31];
        let p = b.solve();
        let mut rows = vec![0u32; 5];
        for x in 1..b.len() {
            b.unrank(x, &mut rows);
            let s = rows.iter().sum::<u32>() as usize;
            brute[s] += 1;
            if p.is_p(x) {
                brute_p[s] += 1;
            }
        }
        let wins = chained(&b, &[100, 101, 300], 2);
        let mut pos = vec![0u64; 31];
        let mut pp = vec![0u64; 31];
        for w in &wins {
            for s in 0..31 {
                pos[s] += w.positions_by_size[s];
                pp[s] += w.p_by_size[s];
            }
        }
        assert_eq!(pos, brute);
        assert_eq!(pp, brute_p);
        assert_eq!(pos.iter().sum::<u64>(), b.len() - 1);
        assert_eq!(pos[0], 0);
        assert_eq!(
            pp[1], 1,
            "the poison alone is the only P-position of one square"
        );
    }

    #[test]
    fn children_ranks_are_the_ranks_after_each_bite() {
        let b = ChompBox::new(4, 5).unwrap();
        let mut rows = vec![0u32; 4];
        for x in 1..b.len() {
            b.unrank(x, &mut rows);
            let s = Staircase::new(&rows).unwrap();
            let kids = b.children(&s).unwrap();
            assert_eq!(kids.len() as u64, s.squares() - 1);
            let bites: Vec<Bite> = kids.iter().map(|&(bt, _)| bt).collect();
            assert_eq!(bites, s.bites());
            for (bite, y) in kids {
                assert_eq!(y, b.rank_of(&s.after(bite).unwrap()).unwrap(), "{s} {bite}");
            }
        }
        let big = Staircase::new(&[6, 1]).unwrap();
        assert!(matches!(
            b.children(&big),
            Err(ChompError::OutsideBox { .. })
        ));
    }

    #[test]
    fn empty_and_rank0_windows() {
        let b = ChompBox::new(3, 3).unwrap();
        let w = b.solve_window(5, 5, &mut [1u64, 3].into_iter(), 1);
        assert!(w.p_bits.is_empty());
        let w = b.solve_window(0, 1, &mut std::iter::empty(), 1);
        assert_eq!(w.p_bits, vec![0]);
        assert_eq!(w.positions_by_size.iter().sum::<u64>(), 0);
    }

    #[test]
    fn boxes_beyond_two_to_the_33_ranks_are_accepted() {
        let b = ChompBox::new(20, 20).unwrap();
        assert_eq!(b.len(), 137_846_528_820);
        let b = ChompBox::new(30, 30).unwrap();
        assert_eq!(b.len(), 118_264_581_564_861_424);
        assert_eq!(
            ChompBox::new(33, 33).unwrap().len(),
            7_219_428_434_016_265_740
        );
        assert!(ChompBox::new(34, 34).is_err(), "C(68, 34) > 2⁶⁴");
        let mut rows = vec![0u32; 30];
        b.unrank(b.len() - 1, &mut rows);
        assert!(rows.iter().all(|&r| r == 30));
    }

    #[test]
    #[should_panic(expected = "not below the window start")]
    fn earlier_p_inside_the_window_panics() {
        let b = ChompBox::new(3, 3).unwrap();
        b.solve_window(2, 10, &mut [1u64, 2].into_iter(), 1);
    }

    #[test]
    fn memory_estimate_covers_the_bitset() {
        assert!(window_memory(17, 17, 2_333_606_220, 2) >= 2_333_606_220 / 8);
    }

    #[test]
    fn unranking_after_a_smaller_rank_equals_unranking_whole() {
        // Every rank of small boxes in order (steps of 1), and sparse
        // ascending ranks of wide and tall boxes (steps that skip whole
        // intervals of shared first rows), from the empty board on.
        for (m, n, step) in [
            (1, 5, 1),
            (4, 4, 1),
            (3, 7, 1),
            (10, 40, 7_919_333),
            (21, 21, 9_999_991_117),
        ] {
            let b = ChompBox::new(m, n).unwrap();
            let (mut rows, mut pre, mut depth) = (vec![0u32; m], vec![0u64; m + 1], 0);
            let mut whole = vec![0u32; m];
            let mut x = 0;
            while x < b.len() {
                b.unrank_for_carry(x, 0, &mut rows, &mut pre, &mut depth);
                assert_eq!(depth, m, "{m}x{n} rank {x}: lo = 0 unranks every row");
                b.unrank(x, &mut whole);
                assert_eq!(rows, whole, "{m}x{n} rank {x}");
                for (k, &p) in pre.iter().enumerate() {
                    let terms: u64 = (0..k).map(|l| b.term(l, rows[l])).sum();
                    assert_eq!(p, terms, "{m}x{n} rank {x} pre[{k}]");
                }
                x += step + x % 3;
            }
        }
    }

    #[test]
    fn the_carry_unranks_the_rows_that_reach_the_window_and_the_run_after() {
        // For windows starting at `lo`, ascending sparse ranks below it: the
        // rows before `depth` are x's, `depth` is the first k whose interval
        // of staircases sharing x's rows 0..k ends at or below `lo`, and
        // the run of rows equal to row depth − 1 is x's, ended by a shorter
        // row exactly where x's run ends.
        for (m, n, lo_parts, step) in [
            (4, 4, 3, 1),
            (3, 7, 5, 1),
            (6, 6, 4, 1),
            (10, 40, 7, 9_919_333),
            (21, 21, 12, 39_999_991_117),
        ] {
            let b = ChompBox::new(m, n).unwrap();
            let mut whole = vec![0u32; m];
            for part in 1..lo_parts {
                let lo = b.len() * part / lo_parts;
                let (mut rows, mut pre, mut depth) = (vec![0u32; m], vec![0u64; m + 1], 0);
                let (mut x, mut shallow) = (0, 0);
                while x < lo {
                    b.unrank_for_carry(x, lo, &mut rows, &mut pre, &mut depth);
                    b.unrank(x, &mut whole);
                    let at = format!("{m}x{n} lo {lo} rank {x}");
                    assert_eq!(rows[..depth], whole[..depth], "{at}");
                    for k in 0..=depth {
                        let terms: u64 = (0..k).map(|l| b.term(l, whole[l])).sum();
                        assert_eq!(pre[k], terms, "{at} pre[{k}]");
                        let cap = if k == 0 { n as u32 } else { whole[k - 1] };
                        if k < m {
                            // Rows 0..k reach the window iff k is above the depth.
                            let reaches = terms + b.span(k, cap) > lo;
                            assert_eq!(reaches, k < depth, "{at} k {k}");
                        }
                    }
                    if depth > 0 && depth < m {
                        let j = whole[depth - 1];
                        let mut t = depth;
                        while t < m && whole[t] == j {
                            assert_eq!(rows[t], j, "{at} run row {t}");
                            t += 1;
                        }
                        if t < m {
                            assert_ne!(rows[t], j, "{at}: the run ends at row {t}");
                        }
                    }
                    shallow += usize::from(depth < m);
                    x += step + x % 3;
                }
                assert!(shallow > 0, "{m}x{n} lo {lo}: some rank needs fewer rows");
            }
        }
    }

    #[test]
    fn spans_are_the_lengths_of_prefix_intervals() {
        let b = ChompBox::new(5, 6).unwrap();
        assert_eq!(b.span(0, 6), b.len());
        assert_eq!(b.span(5, 3), 1);
        // Staircases with r₀ = 4: ranks term(0, 4) .. term(0, 5) = span(1, 4) of them.
        assert_eq!(b.term(0, 5) - b.term(0, 4), b.span(1, 4));
    }
}
