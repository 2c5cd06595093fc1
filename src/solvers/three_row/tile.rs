//! The tile solver: Brouwer's recurrence over `q ∈ [q0, q1)`, `r ∈ [r0, r1)`.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, RwLock};

/// Largest period of a row that classification tries (and the number of
/// differences a row state keeps).
pub const PERIOD_MAX: u32 = 12;

/// The cells of one tile: `q ∈ [q0, q1)`, `r ∈ [r0, r1)` with `r ≤ q`, of a
/// computation that stops at `q_max` (which only bounds what is recorded:
/// P-position counts and winning moves of `3×p` for `p ≤ q_max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileGeom {
    /// First column.
    pub q0: u32,
    /// One past the last column.
    pub q1: u32,
    /// First row.
    pub r0: u32,
    /// One past the last row.
    pub r1: u32,
    /// Last column of the whole computation.
    pub q_max: u32,
}

impl TileGeom {
    /// The whole triangle `r ≤ q ≤ q_max` as one tile.
    pub fn triangle(q_max: u32) -> TileGeom {
        TileGeom {
            q0: 0,
            q1: q_max + 1,
            r0: 0,
            r1: q_max + 1,
            q_max,
        }
    }

    /// Checks that the tile lies inside the triangle of `q_max`.
    ///
    /// # Errors
    /// A message naming the tile's bounds.
    pub fn check(&self) -> Result<(), String> {
        let TileGeom {
            q0,
            q1,
            r0,
            r1,
            q_max,
        } = *self;
        if q0 > q1 || r0 > r1 || q1 > q_max + 1 || r1 > q_max + 1 {
            return Err(format!(
                "bad tile q [{q0}, {q1}), r [{r0}, {r1}) for q_max {q_max}"
            ));
        }
        Ok(())
    }

    /// Rows of this tile that started before `q0` (their state is an input).
    pub fn rows_in(&self) -> std::ops::Range<u32> {
        self.r0..self.r1.min(self.q0).max(self.r0)
    }

    /// Rows of this tile that have started by the end (their state is output).
    pub fn rows_out(&self) -> std::ops::Range<u32> {
        self.r0..self.r1.min(self.q1).max(self.r0)
    }

    /// How many diagonal values `f(a, a)` (a prefix, `a = 0, 1, …`) the tile
    /// needs as input: `min(r1, max(r0, q0))`.
    pub fn diag_in(&self) -> u32 {
        self.r1.min(self.r0.max(self.q0))
    }

    /// How many diagonal values the tile outputs: `min(r1, q1)`.
    pub fn diag_out(&self) -> u32 {
        self.r1.min(self.q1)
    }

    /// Number of cells `(q, r)` in the tile.
    pub fn cells(&self) -> u64 {
        (self.q0..self.q1)
            .map(|q| u64::from(self.r1.min(q + 1).saturating_sub(self.r0)))
            .sum()
    }
}

/// A live row between tiles: everything the recurrence and the period
/// detection need to continue it at the next column.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveRow {
    /// A lower bound on the next mex: every value in `[q, m)` is already in
    /// the row's set (own values or diagonal values `f(a, a), a < r`).
    pub m: u32,
    /// Word index (value / 64) of `own[0]`.
    pub base: u32,
    /// The row's own values `f(a, r), r ≤ a < q`, that are `≥ m`: bit
    /// `v % 64` of `own[v / 64 − base]`.
    pub own: Vec<u64>,
    /// `last_d[q % 12] = d(q) = f(q, r) − q` for the last 12 columns.
    pub last_d: [u32; PERIOD_MAX as usize],
    /// `run[k − 1]` = first column of the current run of columns `q` with
    /// `d(q) = d(q − k)` (`r + k` at the start).
    pub run: [u32; PERIOD_MAX as usize],
}

impl LiveRow {
    fn new(r: u32) -> LiveRow {
        let mut run = [0; PERIOD_MAX as usize];
        for (k, s) in run.iter_mut().enumerate() {
            *s = r + k as u32 + 1;
        }
        // Values are positive: row 0 starts its search at 1, not at q = 0.
        LiveRow {
            m: r.max(1),
            base: r / 64,
            own: Vec::new(),
            last_d: [NO_D; PERIOD_MAX as usize],
            run,
        }
    }

    /// Drops words below `m / 64`, clears bits below `m`, and trailing zero
    /// words: the canonical form written to shards.
    pub fn canonicalize(&mut self) {
        let nb = self.m / 64;
        let drop = (nb.saturating_sub(self.base) as usize).min(self.own.len());
        self.own.drain(..drop);
        self.base = nb;
        if let Some(w) = self.own.first_mut() {
            *w &= !0u64 << (self.m % 64);
        }
        while self.own.last() == Some(&0) {
            self.own.pop();
        }
    }

    /// `d(q)` for one of the last 12 columns `q`.
    pub fn d_at(&self, q: u32) -> u32 {
        self.last_d[(q % PERIOD_MAX) as usize]
    }
}

/// A row's state between tiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowState {
    /// Still alive: `f(q, r) ≥ q` for every column so far.
    Live(LiveRow),
    /// Died at column `c`: `(c, c, r)` is a P-position and `f(q, r) = c` for
    /// every `q ≥ c`.
    Dead {
        /// The constant (also the column where the row died).
        c: u32,
    },
}

/// A column's values `f(q, b) ≥ q` over the rows `b` done so far, as a bitset:
/// bit `v % 64` of `words[v / 64 − base]`, `base = q / 64`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ColState {
    /// Word index of `words[0]`.
    pub base: u32,
    /// The bits.
    pub words: Vec<u64>,
}

/// What a tile starts from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TileInput {
    /// States of the rows [`TileGeom::rows_in`] at column `q0`.
    pub rows: Vec<RowState>,
    /// States of the columns `q0…q1−1` after the rows `< r0`; empty when `r0 = 0`.
    pub cols: Vec<ColState>,
    /// `f(a, a)` for `a < ` [`TileGeom::diag_in`] (longer is fine).
    pub diag: Vec<u32>,
}

/// What a tile should record besides the states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TileRecord {
    /// Record `f(q, r)` of every cell with `q ≤` this.
    pub f_upto_q: Option<u32>,
    /// Record `f(q, r)` of every cell with `q` and `r` both multiples of
    /// this (a grid of samples for pictures; must be ≥ 1).
    pub sample_step: Option<u32>,
}

/// A winning move of the `3×p` rectangle `(p, p, p)`: a bite at `(row, col)`
/// (row 1: to `(p, col, col)`, a P-position when `f(col, col) = p`; row 2: to
/// `(p, p, col)`, when `f(p, col) = p`). Row-0 bites lead to `(j, j, j)`,
/// never a P-position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct WinningMove {
    /// The rectangle's length.
    pub p: u32,
    /// Row of the bite (1 or 2).
    pub row: u32,
    /// Column of the bite.
    pub col: u32,
}

/// What a tile produces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TileOutput {
    /// States of the rows [`TileGeom::rows_out`] at column `q1`.
    pub rows: Vec<RowState>,
    /// States of the columns `q0…q1−1` after the rows `< r1`.
    pub cols: Vec<ColState>,
    /// `f(a, a)` for `a <` [`TileGeom::diag_out`] (from [`solve_tile`]: the
    /// input diagonal extended by the tile's diagonal cells, which may be
    /// longer).
    pub diag: Vec<u32>,
    /// `p_count[p − q0]`: P-positions `(p, q, r)` of this tile with `p ≤ q_max`.
    pub p_count: Vec<u32>,
    /// Winning moves of `3×p` rectangles (`p ≤ q_max`) found in this tile, sorted.
    pub wins: Vec<WinningMove>,
    /// `(q, r, f(q, r))` for the cells with `q ≤ f_upto_q`, by `q` then `r`.
    pub small_f: Vec<(u32, u32, u32)>,
    /// `(q, r, f(q, r))` for the cells with `q` and `r` multiples of
    /// `sample_step`, by `q` then `r`.
    pub sampled_f: Vec<(u32, u32, u32)>,
    /// Cells of the tile.
    pub cells: u64,
    /// Cells of live rows (those that needed a mex).
    pub live_cells: u64,
}

/// An upper bound on every `f(q, r)`, `q ≤ q_max`: the mex is at most
/// `q + |row set ∩ [q, ∞)| + |column set| ≤ q + q + r ≤ 3·q_max`, plus one.
pub fn value_bound(q_max: u32) -> u32 {
    3 * q_max + 2
}

/// `last_d` of columns before the row started (no real `d` equals it).
pub const NO_D: u32 = u32::MAX;

thread_local! {
    /// Per thread: the zeroed diagonal and union bitsets of [`solve_block`].
    static SCRATCH: std::cell::RefCell<(Vec<u64>, Vec<u64>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

#[inline]
fn set_bit(bits: &mut [u64], v: u32) {
    bits[(v / 64) as usize] |= 1u64 << (v % 64);
}

#[inline]
fn clear_bit(bits: &mut [u64], v: u32) {
    bits[(v / 64) as usize] &= !(1u64 << (v % 64));
}

/// A live row while [`solve_tile`] works on it: [`LiveRow`] with the last
/// 12 values of `d` in age order (`hist[k − 1] = d(q − k)` before column `q`),
/// so that the run update of the period detection is one vector compare.
struct Work {
    r: u32,
    m: u32,
    base: u32,
    /// `hist` holds one value 12 times (a linear stretch): a column with the
    /// same `d` changes nothing and skips the update.
    flat: bool,
    own: Vec<u64>,
    hist: [u32; PERIOD_MAX as usize],
    run: [u32; PERIOD_MAX as usize],
}

impl Work {
    /// From a row's state at column `q`.
    fn from_live(r: u32, l: LiveRow, q: u32) -> Work {
        let n = PERIOD_MAX as usize;
        let mut hist = [NO_D; PERIOD_MAX as usize];
        for (k, h) in hist.iter_mut().enumerate() {
            *h = l.last_d[(q as usize % n + n - k - 1) % n];
        }
        Work {
            r,
            m: l.m,
            base: l.base,
            flat: hist.iter().all(|&h| h == hist[0]) && hist[0] != NO_D,
            own: l.own,
            hist,
            run: l.run,
        }
    }

    /// The row's state at column `q`, canonical.
    fn into_live(self, q: u32) -> LiveRow {
        let n = PERIOD_MAX as usize;
        let mut last_d = [NO_D; PERIOD_MAX as usize];
        for (k, &h) in self.hist.iter().enumerate() {
            last_d[(q as usize % n + n - k - 1) % n] = h;
        }
        let mut l = LiveRow {
            m: self.m,
            base: self.base,
            own: self.own,
            last_d,
            run: self.run,
        };
        l.canonicalize();
        l
    }
}

/// How many rows ahead [`prefetch_row`] looks.
const PREFETCH_AHEAD: usize = 2;

/// Asks the CPU to fetch the first words of a row's own bitset that its next
/// mex will read (they live in a separate allocation per row and are
/// otherwise a cache miss for every cell). A hint only.
#[inline(always)]
fn prefetch_row(row: &Work, q: u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let w = (row.m.max(q) / 64).saturating_sub(row.base) as usize;
        if w < row.own.len() {
            let p = row.own[w..].as_ptr().cast::<i8>();
            // SAFETY: prefetching has no effect on memory; the pointers are
            // in (or one line past) the allocation of `own`.
            unsafe {
                use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                _mm_prefetch::<_MM_HINT_T0>(p);
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (row, q);
}

/// The least value `≥ from` not in `bits` (which ends in zero words).
#[inline]
fn next_free(bits: &[u64], from: u32) -> u32 {
    let mut w = (from / 64) as usize;
    let mut free = !bits[w] & (!0u64 << (from % 64));
    while free == 0 {
        w += 1;
        free = !bits[w];
    }
    w as u32 * 64 + free.trailing_zeros()
}

/// Solves one block of a tile.
///
/// Per column `q` the live rows are taken in increasing `r`. Besides the
/// column bitset (`col`) and the diagonal values of the current row
/// (`diagbits`: `f(a, a) ≥ q`, `a < r`) the solver keeps their union `uni`
/// and `g`, the least value `≥ q` not in `uni`. Both sets only grow while `r`
/// increases, so `g` only moves forward, and no mex lies below
/// `max(g, m)` (`m`: the row's own lower bound): the scan starts there and
/// reads two bitsets (the row's own values and `uni`).
///
/// The diagonal values `f(a, a)` come read-only in `shared` (at least
/// [`TileGeom::diag_in`] of them; exactly `q` when the tile holds the
/// diagonal cell `(q, q)`); the ones the tile makes are returned in the
/// output's `diag`, and `p_count` is indexed from `q0` but only as long as
/// needed.
///
/// # Errors
/// A message if the input does not fit the geometry (wrong number of row or
/// column states, diagonal too short, a row state for a row not started).
/// Checks a tile's geometry and the number of row states, column states
/// and diagonal values given for it.
fn check_inputs(geom: &TileGeom, rows: usize, cols: usize, diag: usize) -> Result<(), String> {
    geom.check()?;
    let rows_in = geom.rows_in();
    if rows != rows_in.len() {
        return Err(format!(
            "{rows} row states given, {} needed (rows {}..{})",
            rows_in.len(),
            rows_in.start,
            rows_in.end
        ));
    }
    let width = (geom.q1 - geom.q0) as usize;
    if !(cols == 0 && geom.r0 == 0) && cols != width {
        return Err(format!("{cols} column states given, {width} needed"));
    }
    if (diag as u64) < u64::from(geom.diag_in()) {
        return Err(format!(
            "{diag} diagonal values given, {} needed",
            geom.diag_in()
        ));
    }
    Ok(())
}

/// One block of a tile, cell by cell along Brouwer's recurrence. Long on
/// purpose (a solver inner loop): the row, column and diagonal states it
/// updates stay in locals for the whole block.
fn solve_block(
    geom: &TileGeom,
    rows: Vec<RowState>,
    cols: Vec<ColState>,
    shared: &[u32],
    record: &TileRecord,
) -> Result<TileOutput, String> {
    let TileGeom {
        q0,
        q1,
        r0,
        r1,
        q_max,
    } = *geom;
    check_inputs(geom, rows.len(), cols.len(), shared.len())?;
    let rows_in = geom.rows_in();
    let nwords = (value_bound(q_max) / 64 + 8) as usize;
    // Two all-zero bitsets of `nwords` words, reused by the thread's next
    // block (fresh ones per block cost page faults at large q_max).
    let (mut diagbits, mut uni) = SCRATCH.with_borrow_mut(std::mem::take);
    for b in [&mut diagbits, &mut uni] {
        if b.len() < nwords {
            b.resize(nwords, 0);
        }
    }
    // Diagonal values made here (a ≥ shared.len()).
    let mut made: Vec<u32> = Vec::new();
    let ns = shared.len();
    for &v in &shared[..(r0 as usize).min(ns)] {
        if v >= q0 {
            set_bit(&mut diagbits, v);
            set_bit(&mut uni, v);
        }
    }
    // Dead rows keep their state here; live rows are in `live` (by r) and
    // hold a placeholder here until the end.
    let mut rows = rows;
    let mut live: Vec<Work> = Vec::new();
    for (r, s) in rows_in.clone().zip(rows.iter_mut()) {
        if let RowState::Live(l) = s {
            live.push(Work::from_live(r, std::mem::take(l), q0));
        }
    }
    let mut out = TileOutput {
        cells: geom.cells(),
        ..TileOutput::default()
    };
    // `(a, f(a, a))` for the rows `a` of this block whose diagonal value can
    // still matter (`≥` the current column), by `a`; each column adds those
    // below the current row to the row's set (the tile's rows only: the
    // diagonal below r0 is in `diagbits` throughout).
    let mut diag_rows: Vec<(u32, u32)> = (r0..r1.min(ns as u32))
        .map(|a| (a, shared[a as usize]))
        .filter(|&(_, v)| v >= q0)
        .collect();
    let mut died = false;
    let mut cols_in = cols.into_iter();
    for q in q0..q1 {
        let lo = (q / 64) as usize;
        // The column's bits, word `lo + i` in `col[i]` (the input state's
        // own buffer, extended in place and handed on).
        let mut col: Vec<u64> = Vec::new();
        if let Some(c) = cols_in.next() {
            let b = c.base as usize;
            if b < lo || b + c.words.len() > nwords {
                return Err(format!("column {q}: state out of range"));
            }
            col = c.words;
            if b > lo {
                col.splice(0..0, std::iter::repeat_n(0, b - lo));
            }
            for (u, &w) in uni[lo..].iter_mut().zip(&col) {
                *u |= w;
            }
        }
        if r0 <= q && q < r1 {
            debug_assert_eq!(rows.len() as u32, q - r0);
            rows.push(RowState::Live(LiveRow::default()));
            live.push(Work::from_live(q, LiveRow::new(q), q));
        }
        let mut g = next_free(&uni, q);
        let mut added = 0;
        for i in 0..live.len() {
            if let Some(nx) = live.get(i + PREFETCH_AHEAD) {
                prefetch_row(nx, q);
            }
            let row = &mut live[i];
            let r = row.r;
            while let Some(&(a, v)) = diag_rows.get(added) {
                if a >= r {
                    break;
                }
                if v >= q {
                    set_bit(&mut diagbits, v);
                    set_bit(&mut uni, v);
                    if v == g {
                        g = next_free(&uni, g);
                    }
                }
                added += 1;
            }
            let v = mex(row, q, &diagbits, &uni, g);
            out.live_cells += 1;
            let i = (v / 64) as usize - lo;
            if i >= col.len() {
                col.resize(i + 1, 0);
            }
            col[i] |= 1u64 << (v % 64);
            set_bit(&mut uni, v);
            if v == g {
                g = next_free(&uni, g);
            }
            let d = v - q;
            // Period detection: run[k − 1] restarts where d(q) ≠ d(q − k).
            // Columns before the row started hold NO_D, which never equals
            // a real d, so runs cannot start before r + k.
            // A linear stretch (d(q − k) = d for every k) changes nothing.
            if !(row.flat && row.hist[0] == d) {
                for (s, &h) in row.run.iter_mut().zip(&row.hist) {
                    *s = if h == d { *s } else { q + 1 };
                }
                row.hist.copy_within(..PERIOD_MAX as usize - 1, 1);
                row.hist[0] = d;
                row.flat = row.hist.iter().all(|&h| h == d);
            }
            if v <= q_max {
                let i = (v - q0) as usize;
                if i >= out.p_count.len() {
                    out.p_count.resize(i + 1, 0);
                }
                out.p_count[i] += 1;
            }
            if r == q {
                debug_assert!(v > q, "(q, q, q) is never a P-position");
                if (ns + made.len()) as u32 != q {
                    return Err(format!(
                        "diagonal holds {} values at the diagonal cell {q}",
                        ns + made.len()
                    ));
                }
                made.push(v);
                diag_rows.push((q, v));
                if v <= q_max {
                    out.wins.push(WinningMove {
                        p: v,
                        row: 1,
                        col: q,
                    });
                }
            }
            if v == q {
                died = true;
                out.wins.push(WinningMove {
                    p: q,
                    row: 2,
                    col: r,
                });
            }
        }
        let small = record.f_upto_q.is_some_and(|m| q <= m);
        let step = record.sample_step.filter(|&k| q % k == 0);
        if small || step.is_some() {
            let mut it = live.iter();
            for r in r0..r1.min(q + 1) {
                let f = match &rows[(r - r0) as usize] {
                    RowState::Dead { c } => *c,
                    RowState::Live(_) => {
                        let w = it.next().expect("live list holds every live row");
                        debug_assert_eq!(w.r, r);
                        q + w.hist[0]
                    }
                };
                if small {
                    out.small_f.push((q, r, f));
                }
                if step.is_some_and(|k| r % k == 0) {
                    out.sampled_f.push((q, r, f));
                }
            }
        }
        if died {
            for w in live.iter().filter(|w| w.hist[0] == 0) {
                rows[(w.r - r0) as usize] = RowState::Dead { c: q };
            }
            live.retain(|w| w.hist[0] != 0);
            died = false;
        }
        // Take this column's diagonal values out again, restore `uni` to
        // the diagonal below r0 on the words touched.
        for &(_, v) in &diag_rows[..added] {
            if v >= q {
                clear_bit(&mut diagbits, v);
                let w = (v / 64) as usize;
                uni[w] = diagbits[w];
            }
        }
        // Values ≤ q matter no more.
        diag_rows.retain(|&(_, v)| v > q);
        // Hand the column on (values ≥ q only).
        if let Some(w) = col.first_mut() {
            *w &= !0u64 << (q % 64);
        }
        while col.last() == Some(&0) {
            col.pop();
        }
        let hi = lo + col.len();
        uni[lo..hi].copy_from_slice(&diagbits[lo..hi]);
        out.cols.push(ColState {
            base: lo as u32,
            words: col,
        });
    }
    for w in live {
        let r = w.r;
        rows[(r - r0) as usize] = RowState::Live(w.into_live(q1));
    }
    out.rows = rows;
    out.diag = made;
    // Both bitsets hold just the diagonal below r0 now: clear it, keep them.
    for &v in &shared[..(r0 as usize).min(ns)] {
        if v >= q0 {
            clear_bit(&mut diagbits, v);
            clear_bit(&mut uni, v);
        }
    }
    debug_assert!(diagbits.iter().chain(&uni).all(|&w| w == 0));
    SCRATCH.set((diagbits, uni));
    Ok(out)
}

/// Solves one tile (one block, one thread).
///
/// Per column `q` the live rows are taken in increasing `r`. Besides the
/// column bitset and the diagonal values of the current row (`f(a, a) ≥ q`,
/// `a < r`) the solver keeps their union and `g`, the least value `≥ q` not
/// in it. Both sets only grow while `r` increases, so `g` only moves
/// forward, and no mex lies below `max(g, m)` (`m`: the row's own lower
/// bound): the scan starts there and reads two bitsets (the row's own values
/// and the union).
///
/// # Errors
/// A message if the input does not fit the geometry (wrong number of row or
/// column states, diagonal too short, a row state for a row not started).
pub fn solve_tile(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
) -> Result<TileOutput, String> {
    solve_tile_blocked(geom, input, record, u32::MAX, u32::MAX, 1)
}

/// Solves a tile as a grid of blocks of `block_q` columns × `block_r` rows
/// in memory, so that the rows and columns being worked on stay in the CPU
/// caches, on `threads` threads: block `(i, j)` needs blocks `(i − 1, j)`
/// (row states) and `(i, j − 1)` (column states), so the blocks of one
/// anti-diagonal `i + j` run at once. Same output as one block on one thread,
/// whatever the block sizes and the number of threads.
///
/// # Errors
/// As [`solve_tile`].
pub fn solve_tile_blocked(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
    block_q: u32,
    block_r: u32,
    threads: usize,
) -> Result<TileOutput, String> {
    let progress = AtomicU64::new(0);
    solve_tile_blocked_progress(geom, input, record, block_q, block_r, threads, &progress)
}

/// [`solve_tile_blocked`], adding to `progress` the cells
/// ([`TileGeom::cells`]) of each anti-diagonal of blocks once it is solved,
/// so that another thread can show how far a long solve is (`query
/// three-row`). Nothing else reads the counter; the output is the same.
///
/// # Errors
/// As [`solve_tile`].
pub fn solve_tile_blocked_progress(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
    block_q: u32,
    block_r: u32,
    threads: usize,
    progress: &AtomicU64,
) -> Result<TileOutput, String> {
    let never = AtomicBool::new(false);
    solve_tile_blocked_until(
        geom, input, record, block_q, block_r, threads, progress, &never,
    )
}

/// What [`solve_tile_blocked_until`] answers when `stop` was set.
pub const STOPPED: &str = "stopped before the tile was solved";

/// [`solve_tile_blocked_progress`], giving up once `stop` is set (read
/// before each anti-diagonal of blocks).
///
/// # Errors
/// As [`solve_tile`]; [`STOPPED`] when stopped.
///
/// Long on purpose (a solver inner loop): the anti-diagonal sweep hands
/// each block its row, column and diagonal inputs from shared buffers
/// that live across the sweep.
#[allow(clippy::too_many_arguments)]
pub fn solve_tile_blocked_until(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
    block_q: u32,
    block_r: u32,
    threads: usize,
    progress: &AtomicU64,
    stop: &AtomicBool,
) -> Result<TileOutput, String> {
    let (bq, br) = (block_q.max(1), block_r.max(1));
    let TileGeom {
        q0,
        q1,
        r0,
        r1,
        q_max,
    } = *geom;
    check_inputs(geom, input.rows.len(), input.cols.len(), input.diag.len())?;
    let cuts = |a: u32, b: u32, step: u32| -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        let mut x = a;
        while x < b {
            let y = x.saturating_add(step).min(b);
            v.push((x, y));
            x = y;
        }
        v
    };
    let qcuts = cuts(q0, q1, bq);
    let rcuts = cuts(r0, r1, br);
    let mut diag = input.diag;
    // With diagonal cells in the tile, the blocks append to the diagonal.
    if r0.max(q0) < r1.min(q1) {
        diag.truncate(r0.max(q0) as usize);
    }
    // Row states per r block, column states per q block, carried along.
    let mut row_states: Vec<Vec<RowState>> = vec![Vec::new(); rcuts.len()];
    let mut rows_it = input.rows.into_iter();
    for (b, &(ra, rb)) in rcuts.iter().enumerate() {
        let n = rb.min(q0).saturating_sub(ra) as usize;
        row_states[b] = rows_it.by_ref().take(n).collect();
    }
    let mut col_states: Vec<Vec<ColState>> = vec![Vec::new(); qcuts.len()];
    if !input.cols.is_empty() {
        let mut cols_it = input.cols.into_iter();
        for (b, &(qa, qb)) in qcuts.iter().enumerate() {
            col_states[b] = cols_it.by_ref().take((qb - qa) as usize).collect();
        }
    }
    let mut out = TileOutput {
        p_count: vec![0; (q_max + 1).saturating_sub(q0) as usize],
        cells: geom.cells(),
        ..TileOutput::default()
    };
    let (nq, nr) = (qcuts.len(), rcuts.len());
    let anti_diagonals = if nq == 0 || nr == 0 { 0 } else { nq + nr - 1 };
    let diag = RwLock::new(diag);
    // One anti-diagonal after the other; `solve` runs the blocks of one.
    let mut all = |solve: &dyn Fn(Vec<BlockTask>) -> Vec<BlockResult>| -> Result<(), String> {
        for s in 0..anti_diagonals {
            if stop.load(Ordering::Relaxed) {
                return Err(STOPPED.to_string());
            }
            // The blocks (i, j) of anti-diagonal s that hold cells (ra < qb).
            let tasks: Vec<BlockTask> = (s.saturating_sub(nr - 1)..nq.min(s + 1))
                .map(|i| (i, s - i))
                .filter(|&(i, j)| rcuts[j].0 < qcuts[i].1)
                .map(|(i, j)| {
                    let g = TileGeom {
                        q0: qcuts[i].0,
                        q1: qcuts[i].1,
                        r0: rcuts[j].0,
                        r1: rcuts[j].1,
                        q_max,
                    };
                    (
                        i,
                        j,
                        g,
                        std::mem::take(&mut row_states[j]),
                        std::mem::take(&mut col_states[i]),
                    )
                })
                .collect();
            let cells: u64 = tasks.iter().map(|t| t.2.cells()).sum();
            let solved = solve(tasks);
            progress.fetch_add(cells, Ordering::Relaxed);
            for (i, j, o) in solved {
                let o = o?;
                let bq0 = qcuts[i].0;
                for (k, c) in o.p_count.iter().enumerate() {
                    out.p_count[(bq0 - q0) as usize + k] += c;
                }
                out.wins.extend(o.wins);
                out.small_f.extend(o.small_f);
                out.sampled_f.extend(o.sampled_f);
                out.live_cells += o.live_cells;
                row_states[j] = o.rows;
                col_states[i] = o.cols;
                diag.write().expect("no panics while locked").extend(o.diag);
            }
        }
        Ok(())
    };
    let block = |(i, j, g, rows, cols): BlockTask| -> BlockResult {
        let d = diag.read().expect("no panics while locked");
        (i, j, solve_block(&g, rows, cols, &d, record))
    };
    let threads = threads.max(1);
    if threads == 1 {
        all(&|tasks| tasks.into_iter().map(block).collect())?;
    } else {
        // `threads − 1` helpers for the whole tile; per anti-diagonal the
        // blocks are handed out through `round`, between two barriers.
        let round: Mutex<Arc<Round>> = Mutex::new(Arc::new(Round::default()));
        let barrier = Barrier::new(threads);
        let done = AtomicBool::new(false);
        let work = |r: &Round| {
            loop {
                let k = r.next.fetch_add(1, Ordering::Relaxed);
                let Some(slot) = r.tasks.get(k) else { break };
                let t = slot
                    .lock()
                    .expect("no panics while locked")
                    .take()
                    .expect("each block is taken once");
                *r.results[k].lock().expect("no panics while locked") = Some(block(t));
            }
        };
        std::thread::scope(|sc| {
            for _ in 1..threads {
                sc.spawn(|| {
                    loop {
                        barrier.wait();
                        if done.load(Ordering::Acquire) {
                            break;
                        }
                        let r = Arc::clone(&round.lock().expect("no panics while locked"));
                        work(&r);
                        barrier.wait();
                    }
                });
            }
            let res = all(&|tasks: Vec<BlockTask>| {
                let n = tasks.len();
                let r = Arc::new(Round {
                    tasks: tasks.into_iter().map(|t| Mutex::new(Some(t))).collect(),
                    results: (0..n).map(|_| Mutex::new(None)).collect(),
                    next: AtomicUsize::new(0),
                });
                *round.lock().expect("no panics while locked") = Arc::clone(&r);
                barrier.wait();
                work(&r);
                barrier.wait();
                r.results
                    .iter()
                    .map(|m| {
                        m.lock()
                            .expect("no panics while locked")
                            .take()
                            .expect("every block solved")
                    })
                    .collect()
            });
            done.store(true, Ordering::Release);
            barrier.wait();
            res
        })?;
    }
    out.rows = row_states.into_iter().flatten().collect();
    out.cols = col_states.into_iter().flatten().collect();
    out.diag = diag.into_inner().expect("no panics while locked");
    out.wins.sort();
    out.small_f.sort();
    out.sampled_f.sort();
    Ok(out)
}

type BlockTask = (usize, usize, TileGeom, Vec<RowState>, Vec<ColState>);
type BlockResult = (usize, usize, Result<TileOutput, String>);

/// The blocks of one anti-diagonal, handed out to the threads of a tile.
#[derive(Default)]
struct Round {
    tasks: Vec<Mutex<Option<BlockTask>>>,
    results: Vec<Mutex<Option<BlockResult>>>,
    next: AtomicUsize,
}

/// The least value `v ≥ q` in neither the row's set (own values, diagonal
/// part `diagbits`) nor the column; `uni` = `diagbits` ∪ column and `g` ≤ the
/// least value `≥ q` not in `uni`. Sets `v` in the row and moves the row's
/// lower bound `m`.
#[inline]
fn mex(row: &mut Work, q: u32, diagbits: &[u64], uni: &[u64], g: u32) -> u32 {
    let base = row.base as usize;
    let own_end = base + row.own.len();
    let own_at = |own: &[u64], w: usize| if w < own_end { own[w - base] } else { 0 };
    // 1. m: the least value ≥ max(m, q) not in the row's set (usually at once).
    let start = row.m.max(q);
    let mut w = (start / 64) as usize;
    let mut free = !(own_at(&row.own, w) | diagbits[w]) & (!0u64 << (start % 64));
    while free == 0 {
        w += 1;
        free = !(own_at(&row.own, w) | diagbits[w]);
    }
    let m = w as u32 * 64 + free.trailing_zeros();
    row.m = m;
    // 2. v: the least value ≥ max(m, g) in neither the own set nor `uni`.
    let s = m.max(g);
    let mut w = (s / 64) as usize;
    let mut free = !(own_at(&row.own, w) | uni[w]) & (!0u64 << (s % 64));
    if free == 0 {
        w += 1;
        // Inside the own window: two bitsets, four words per step.
        while w + 4 <= own_end {
            let f = |i: usize| !(row.own[i - base] | uni[i]);
            if (f(w) | f(w + 1) | f(w + 2) | f(w + 3)) != 0 {
                break;
            }
            w += 4;
        }
        loop {
            free = !(own_at(&row.own, w) | uni[w]);
            if free != 0 || w >= own_end {
                break;
            }
            w += 1;
        }
        while free == 0 {
            // Past the own window: `uni` alone.
            w += 1;
            free = !uni[w];
        }
    }
    let v = w as u32 * 64 + free.trailing_zeros();
    // Record v in the row's own set.
    let idx = (v / 64) as usize - base;
    if idx >= row.own.len() {
        row.own.resize(idx + 1, 0);
    }
    row.own[idx] |= 1u64 << (v % 64);
    // Drop words wholly below m now and then.
    let nb = (m / 64) as usize;
    if nb - base >= 8 {
        let drop = (nb - base).min(row.own.len());
        row.own.drain(..drop);
        row.base = nb as u32;
    }
    v
}

/// `f(q, r)` for every `r ≤ q ≤ q_max` by the literal recurrence (least
/// positive integer not in `{F(a, r) : a < q} ∪ {f(q, b) : b < r}`, with the
/// dead-row rule), with plain boolean arrays: `O(q_max³)`. An independent
/// check of [`solve_tile`].
pub fn naive_f(q_max: u32) -> Vec<Vec<u32>> {
    let n = q_max as usize;
    let mut f: Vec<Vec<u32>> = (0..=n).map(|q| vec![0; q + 1]).collect();
    let mut used = vec![false; value_bound(q_max) as usize + 2];
    for q in 0..=n {
        for r in 0..=q {
            if q > r && f[q - 1][r] < q as u32 {
                f[q][r] = f[q - 1][r];
                continue;
            }
            let big_f = |a: usize| if r > a { f[a][a] } else { f[a][r] };
            let mut set: Vec<u32> = (0..q).map(big_f).collect();
            set.extend((0..r).map(|b| f[q][b]));
            for &v in &set {
                used[v as usize] = true;
            }
            let v = (1..).find(|&v| !used[v as usize]).expect("finite set");
            for &v in &set {
                used[v as usize] = false;
            }
            f[q][r] = v;
        }
    }
    f
}
