//! Full check of `three-row`: every stored quantity of every tile against
//! `f(q, r)` derived here from the rules of three-row Chomp.
//!
//! **Rules** (Brouwer et al., INTEGERS 5
//! (2005) G07): a position `(p, q, r)` has rows `p ≥ q ≥ r` from the poison
//! row up. Its moves: a bite in row 0 at column `c ≥ 1` gives
//! `(c, min(q, c), min(r, c))`; in row 1 at `c < q` gives `(p, c, min(r, c))`;
//! in row 2 at `c < r` gives `(p, q, c)`. For each `(q, r)` at most one `p`
//! makes a P-position; `f(q, r)` is that `p` (a "live" cell, `f ≥ q`), or,
//! when none does, the shards store the column `c < q` where row `r` died,
//! `(c, c, r)` being a P-position.
//!
//! **What the tiles store** (docs/design/job-kinds.md, `three-row`): per tile the
//! row states at its last column + 1 (dead constant, or the row's own
//! values, a lower bound `m`, the last 12 `d = f − q` and the 12 run starts
//! of the period detection), the column states handed to the tile above, the
//! diagonal `f(a, a)`, P-position counts by `p`, the winning moves of `3×p`
//! found in the tile, and `f` for `q ≤ 255`. None of them is `f` itself
//! beyond `q = 255`, so the check derives every cell and compares every
//! stored item with it.
//!
//! **Deriving f.** Column by column (`q = 0 … q_max`), row by row
//! (`r = 0 … q`): row `r` is dead at `q` when some row-0 bite reaches a
//! P-position `(c, c, min(r, c))`, `c < q` — by the rules, exactly when
//! `f(c, r) = c` for some `r ≤ c < q` (or `f(c, c) = c`, which never
//! happens and is reported). Otherwise the P-position is the least
//! `p ≥ max(q, 1)` such that no row-1 or row-2 bite from `(p, q, r)` reaches a
//! P-position, i.e. `p` is none of the row's values `f(a, r)`, `r ≤ a < q`,
//! the diagonal values `f(a, a)`, `a < r`, and the column's values
//! `f(q, b)`, `b < r` (row-0 bites to `(c, q, r)`, `q ≤ c < p`, are then not
//! P-positions either). The three sets are kept as bitsets and grow as the
//! sweep goes (this is Brouwer's recurrence; it is written here again, not
//! taken from the solver). For `q ≤ 2,000` every cell is then checked a
//! second way, straight from the rules: every move of `(f, q, r)` and of
//! each `(p, q, r)`, `q ≤ p < f`, is enumerated from the table of derived
//! values — no move of `(f, q, r)` reaches a P-position, every smaller `p`
//! has one (larger `p` have the row-0 bite to `(f, q, r)`), and a dead cell
//! has its row-0 bite to `(c, c, r)`.
//!
//! **Streaming.** The tiles of one q range are read together before the
//! sweep crosses it; their column states are compared as the sweep makes
//! them, the rest when it leaves the range. Memory: the live rows' own
//! values (a window from the current column up) and one q range's shards.
//! One thread does the sweep; a second one runs the q ≤ 2,000 check.

use std::collections::BTreeMap;

use super::layout::TileMeta;
use crate::pipeline::error::{Error, Result};

use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, group, le_u32s};

/// The `three-row` checker.
pub struct ThreeRowChecker;

/// Columns checked by enumerating every move.
pub const RULES_Q: u32 = 2000;

/// Periods the detection tries (`d(q) = d(q − k)`, k = 1…12; the sen-ltd Chomp article).
const PERIODS: usize = 12;
/// `dead_at` of a live row.
const LIVE: u32 = u32::MAX;
/// `d` of a column before the row started.
const NO_D: u32 = u32::MAX;

/// Every row while the sweep goes, as parallel arrays by `r` (the sweep
/// walks the rows in order; the own values of all rows share one slab, each
/// row a ring of `cap` words, so that the memory touched per cell is
/// predictable and can be prefetched).
#[derive(Default)]
struct Rows {
    /// Column where the row died, [`LIVE`] while it lives.
    dead_at: Vec<u32>,
    /// Every value in `[q, lo)` is an own or diagonal value.
    lo: Vec<u32>,
    /// First word (value / 64) the ring holds; words below are dropped.
    base: Vec<usize>,
    /// Offset of the row's ring in `slab` and its length (a power of two).
    off: Vec<usize>,
    cap: Vec<usize>,
    /// `hist[r][k − 1] = d(q − k)`.
    hist: Vec<[u32; PERIODS]>,
    /// `run[r][k − 1]`: first column of the current run of `d(x) = d(x − k)`.
    run: Vec<[u32; PERIODS]>,
    /// The rings: word `w ≥ base` of row r at `off + w % cap`.
    slab: Vec<u64>,
}

impl Rows {
    /// Starts row `r` (at column `r`).
    fn push(&mut self, r: u32) {
        let cap = self.cap.last().map_or(4, |&c| c.max(4));
        self.dead_at.push(LIVE);
        self.lo.push(r.max(1));
        self.base.push((r as usize / 64).saturating_sub(1));
        self.off.push(self.slab.len());
        self.cap.push(cap);
        self.slab.resize(self.slab.len() + cap, 0);
        self.hist.push([NO_D; PERIODS]);
        self.run.push(std::array::from_fn(|k| r + k as u32 + 1));
    }
    fn dead(&self, r: usize) -> Option<u32> {
        (self.dead_at[r] != LIVE).then_some(self.dead_at[r])
    }
    /// Word `w` of row `r`'s own values (0 outside the ring).
    #[inline(always)]
    fn word(&self, r: usize, w: usize) -> u64 {
        let (b, c) = (self.base[r], self.cap[r]);
        if w < b || w >= b + c {
            0
        } else {
            self.slab[self.off[r] + (w & (c - 1))]
        }
    }
    fn has(&self, r: usize, v: u32) -> bool {
        self.word(r, v as usize / 64) >> (v % 64) & 1 == 1
    }
    /// Where the word holding value `v` of row `r` lives (for a prefetch).
    fn word_ptr(&self, r: usize, v: u32) -> *const u64 {
        let i = self.off[r] + ((v as usize / 64) & (self.cap[r] - 1));
        self.slab[i..].as_ptr()
    }
    /// Moves the ring's first word up to `w` (words below hold values no
    /// longer needed), clearing the words that leave.
    fn advance(&mut self, r: usize, w: usize) {
        let (b, c, o) = (self.base[r], self.cap[r], self.off[r]);
        if w <= b {
            return;
        }
        for x in b..w.min(b + c) {
            self.slab[o + (x & (c - 1))] = 0;
        }
        self.base[r] = w;
    }
    /// Adds value `v` to row `r`'s own values, growing its ring if needed.
    fn insert(&mut self, r: usize, v: u32) {
        let w = v as usize / 64;
        let (b, c) = (self.base[r], self.cap[r]);
        if w >= b + c {
            let mut nc = c * 2;
            while w >= b + nc {
                nc *= 2;
            }
            let no = self.slab.len();
            self.slab.resize(no + nc, 0);
            for x in b..b + c {
                self.slab[no + (x & (nc - 1))] = self.slab[self.off[r] + (x & (c - 1))];
            }
            self.off[r] = no;
            self.cap[r] = nc;
        }
        let i = self.off[r] + (w & (self.cap[r] - 1));
        self.slab[i] |= 1 << (v % 64);
    }
    /// Frees a dead row's ring (the slab keeps its place).
    fn kill(&mut self, r: usize, q: u32) {
        self.dead_at[r] = q;
        let (o, c) = (self.off[r], self.cap[r]);
        self.slab[o..o + c].fill(0);
    }
}

#[inline]
fn set(bits: &mut [u64], v: u32) {
    bits[v as usize / 64] |= 1 << (v % 64);
}

/// The least value `≥ from` in neither row `r`'s own set nor `other`
/// (`from` at or above the ring's first word).
#[inline(always)]
fn least_free(rows: &Rows, r: usize, other: &[u64], from: u32) -> u32 {
    let (b, c, o) = (rows.base[r], rows.cap[r], rows.off[r]);
    let ring = &rows.slab[o..o + c];
    let end = b + c;
    let mut w = from as usize / 64;
    debug_assert!(w >= b);
    let own = |w: usize| if w < end { ring[w & (c - 1)] } else { 0 };
    let mut free = !(own(w) | other[w]) & (!0u64 << (from % 64));
    while free == 0 {
        w += 1;
        if w >= end {
            // Past the row's values: `other` alone.
            while other[w] == !0 {
                w += 1;
            }
            free = !other[w];
            break;
        }
        free = !(ring[w & (c - 1)] | other[w]);
    }
    (w * 64) as u32 + free.trailing_zeros()
}

/// Asks the CPU to fetch the cache line at `p` (a hint: no effect on memory).
#[inline(always)]
fn prefetch(p: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no memory.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(p);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The least value `≥ from` not in `bits`.
#[inline]
fn next_free(bits: &[u64], from: u32) -> u32 {
    let mut w = from as usize / 64;
    let mut free = !bits[w] & (!0u64 << (from % 64));
    while free == 0 {
        w += 1;
        free = !bits[w];
    }
    (w * 64) as u32 + free.trailing_zeros()
}

/// One tile's stored items.
struct Tile {
    name: String,
    g: TileMeta,
    rows: Vec<u32>,
    cols: Vec<u32>,
    diag: Vec<u32>,
    p_count: Vec<u32>,
    wins: Vec<(u32, u32, u32)>,
    small_f: Vec<(u32, u32, u32)>,
    /// What the sweep found: P-counts, wins, small f.
    my_p_count: Vec<u32>,
    my_wins: Vec<(u32, u32, u32)>,
    my_small_f: Vec<(u32, u32, u32)>,
    /// Offset into `cols` of the next column state.
    col_at: usize,
    ok: bool,
}

/// Reads one tile shard; `None` (and a finding) if it is unusable.
fn read_tile(cx: &Ctx, name: &str, g: TileMeta) -> Option<Tile> {
    let shard = cx.load(name)?;
    let meta: Option<TileMeta> = shard.meta().ok();
    let sec = |s: &str| shard.section(s).ok().and_then(le_u32s);
    let (Some(meta), Some(rows), Some(cols), Some(diag), Some(p_count), Some(w), Some(sf)) = (
        meta,
        sec("rows"),
        sec("cols"),
        sec("diag"),
        sec("p-count"),
        sec("wins"),
        sec("small-f"),
    ) else {
        cx.bad(name, "shard", "a section is missing or not u32 values");
        return None;
    };
    if (meta.q0, meta.q1, meta.r0, meta.r1, meta.q_max) != (g.q0, g.q1, g.r0, g.r1, g.q_max) {
        cx.bad(name, "meta", "does not describe the job's tile");
    }
    let cells: u64 = (g.q0..g.q1)
        .map(|q| u64::from(g.r1.min(q + 1).saturating_sub(g.r0)))
        .sum();
    if meta.cells != cells {
        cx.bad(
            name,
            "meta",
            format!("says {} cells, the tile has {cells}", meta.cells),
        );
    }
    if w.len() % 3 != 0 || sf.len() % 3 != 0 {
        cx.bad(name, "shard", "wins or small-f not in triples");
        return None;
    }
    let triples = |v: &[u32]| -> Vec<(u32, u32, u32)> {
        v.chunks_exact(3).map(|c| (c[0], c[1], c[2])).collect()
    };
    Some(Tile {
        name: name.to_string(),
        g,
        rows,
        cols,
        diag,
        p_count,
        wins: triples(&w),
        small_f: triples(&sf),
        my_p_count: Vec::new(),
        my_wins: Vec::new(),
        my_small_f: Vec::new(),
        col_at: 0,
        ok: true,
    })
}

fn geom_of(job: &crate::pipeline::kind::JobSpec) -> Option<TileMeta> {
    let get = |k: &str| {
        job.params
            .get(k)
            .and_then(|v| v.as_integer())
            .and_then(|v| u32::try_from(v).ok())
    };
    Some(TileMeta {
        q0: get("q0")?,
        q1: get("q1")?,
        r0: get("r0")?,
        r1: get("r1")?,
        q_max: get("q_max")?,
        cells: 0,
        live_cells: 0,
    })
}

/// The table of derived values for `q ≤ RULES_Q`: by row (`g[r][a] = f(a, r)`)
/// and by column (`c[q][b] = f(q, b)`), for the rules check.
struct Small {
    qn: usize,
    by_row: Vec<u32>,
    by_col: Vec<u32>,
}

impl Small {
    fn new(qn: usize) -> Small {
        Small {
            qn,
            by_row: vec![0; qn * qn],
            by_col: vec![0; qn * qn],
        }
    }
    fn put(&mut self, q: u32, r: u32, f: u32) {
        let (q, r) = (q as usize, r as usize);
        self.by_row[r * self.qn + q] = f;
        self.by_col[q * self.qn + r] = f;
    }
    #[inline]
    fn f(&self, q: usize, r: usize) -> u32 {
        self.by_col[q * self.qn + r]
    }
}

/// Marks the values of `xs` that lie in `[q, q + span)` in `b` (bit
/// `x − q`); returns whether some value equals `v`.
#[inline]
fn mark(b: &mut [u64], xs: &[u32], q: u32, span: u32, v: u32) -> bool {
    let mut hit = false;
    for chunk in xs.chunks(16) {
        // Most moves reach values below q: skip such chunks at once.
        if !chunk
            .iter()
            .fold(false, |a, &x| a | (x.wrapping_sub(q) <= span))
        {
            continue;
        }
        for &x in chunk {
            hit |= x == v;
            let y = x.wrapping_sub(q);
            if y < span {
                b[(y / 64) as usize] |= 1 << (y % 64);
            }
        }
    }
    hit
}

/// Checks every cell `q < qn` straight from the rules against the table.
fn rules_check(cx: &Ctx, t: &Small, owner: &(dyn Fn(u32, u32) -> String + Sync)) {
    let qn = t.qn;
    let diag: Vec<u32> = (0..qn).map(|a| t.f(a, a)).collect();
    // The first row-0 bite to a P-position (c, c, min(r, c)) by the rules:
    // c < r with f(c, c) = c, else c ≥ r with f(c, r) = c (a prefix
    // search over c, done once per row instead of once per cell).
    let diag_p = (0..qn).find(|&c| diag[c] as usize == c);
    let first_p: Vec<Option<usize>> = (0..qn)
        .map(|r| {
            diag_p
                .filter(|&c| c < r)
                .or_else(|| (r..qn).find(|&c| t.by_row[r * qn + c] as usize == c))
        })
        .collect();
    crate::pipeline::fullcheck::for_chunks(qn as u64, cx.threads(), |range| {
        let mut b: Vec<u64> = Vec::new();
        for q in range {
            let q = q as usize;
            let col = &t.by_col[q * qn..q * qn + q + 1];
            for r in 0..=q {
                let v = col[r];
                let row = &t.by_row[r * qn + r..r * qn + q]; // f(c, r), r ≤ c < q
                // A row-0 bite to a P-position (c, c, min(r, c)), c < q.
                let trunc = first_p[r].filter(|&c| c < q);
                let (q32, r32) = (q as u32, r as u32);
                if (v as usize) < q {
                    // Dead since column v: the first row-0 bite to a
                    // P-position, (v, v, r), must be the rules' first.
                    if trunc != Some(v as usize) {
                        cx.bad(
                            &owner(q32, r32),
                            format!("f({q}, {r})"),
                            format!(
                                "no P-position stored (row dead since column {v}), but the rules give {}",
                                trunc.map_or("no row-0 bite to a P-position".into(), |c| format!("the row-0 bite to ({c}, {c}, {}) first at column {c}", r.min(c)))
                            ),
                        );
                    }
                    continue;
                }
                // (v, q, r) is the P-position: no move reaches a P-position,
                // every p in [max(q, 1), v) has one (row-1 or row-2 bite).
                let span = v - q32;
                b.clear();
                b.resize(span as usize / 64 + 1, 0);
                let hit1 = mark(&mut b, &diag[..r], q32, span, v) | mark(&mut b, row, q32, span, v);
                let hit2 = mark(&mut b, &col[..r], q32, span, v);
                let bad_move = if hit1 {
                    let c = (0..q)
                        .find(|&c| if c < r { diag[c] } else { row[c - r] } == v)
                        .expect("hit");
                    Some(format!("the bite (1, {c}) to ({v}, {c}, {})", r.min(c)))
                } else if hit2 {
                    let c = (0..r).find(|&c| col[c] == v).expect("hit");
                    Some(format!("the bite (2, {c}) to ({v}, {q}, {c})"))
                } else {
                    trunc.map(|c| format!("the bite (0, {c}) to ({c}, {c}, {})", r.min(c)))
                };
                if let Some(m) = bad_move {
                    cx.bad(
                        &owner(q32, r32),
                        format!("({v}, {q}, {r})"),
                        format!("derived as the P-position f({q}, {r}) = {v}, but {m} reaches a P-position"),
                    );
                }
                let lo = q32.max(1);
                let missing = (lo..v).find(|&p| {
                    let y = p - q32;
                    b[(y / 64) as usize] >> (y % 64) & 1 == 0
                });
                if let Some(p) = missing {
                    cx.bad(
                        &owner(q32, r32),
                        format!("({p}, {q}, {r})"),
                        format!("no move reaches a P-position, but f({q}, {r}) = {v} ≠ {p}"),
                    );
                }
            }
        }
    });
}

impl Checker for ThreeRowChecker {
    crate::pipeline::fullcheck::checks_kind!("three-row");

    #[allow(clippy::too_many_lines)]
    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let run = cx.run();
        let q_max = run
            .params()
            .get("q_max")
            .and_then(|v| v.as_integer())
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| Error::job("three-row", "no usable `q_max` parameter"))?;
        let ranges = tile_ranges(cx);
        let cells = |q: u64| (q + 1) * (q + 2) / 2;
        cx.set_total(cells(u64::from(q_max)));
        let bound = 3 * q_max as usize + 200;
        let words = bound / 64 + 4;
        let mut colbits = vec![0u64; words];
        let mut diagbits = vec![0u64; words];
        let mut uni = vec![0u64; words];
        let mut rows = Rows::default();
        let mut diag: Vec<u32> = Vec::new();
        let rq = (q_max + 1).min(RULES_Q + 1) as usize;
        let mut small = Some(Small::new(rq));
        let mut diag_at = vec![u32::MAX; bound];
        let mut swept = 0u32;
        let mut items = [0u64; 6]; // small-f, diag, p-count, wins, rows, cols compared
        let mut expect_q = 0u32;
        let mut rules_done = false;
        let owner_map: Vec<(TileMeta, String)> = ranges
            .values()
            .flatten()
            .map(|(n, g)| (*g, n.clone()))
            .collect();
        let owner = |q: u32, r: u32| -> String {
            owner_map
                .iter()
                .find(|(g, _)| g.q0 <= q && q < g.q1 && g.r0 <= r && r < g.r1)
                .map_or("?".into(), |(_, n)| n.clone())
        };
        std::thread::scope(|scope| -> Result<()> {
            let mut rules_thread = None;
            for (&q0, list) in &ranges {
                if q0 != expect_q {
                    cx.bad(
                        &list[0].0,
                        "plan",
                        format!("columns {expect_q}..{q0} are in no tile"),
                    );
                    return Ok(());
                }
                let q1 = list[0].1.q1;
                expect_q = q1;
                let Some(mut tiles) = read_range(cx, list, q_max) else {
                    return Ok(());
                };
                for q in q0..q1 {
                    let mut bits = Bits {
                        col: &mut colbits,
                        diag: &mut diagbits,
                        uni: &mut uni,
                    };
                    sweep_column(
                        cx,
                        q,
                        q_max,
                        &mut rows,
                        &mut diag,
                        &mut tiles,
                        &mut bits,
                        small.as_mut(),
                    );
                    let f = diag[q as usize] as usize;
                    if f < diag_at.len() {
                        diag_at[f] = q;
                    }
                    swept = q + 1;
                    if q + 1 == rq as u32 {
                        rules_done = true;
                        let sm = small.take().expect("taken once");
                        let ow = &owner;
                        rules_thread = Some(scope.spawn(move || rules_check(cx, &sm, ow)));
                    }
                    cx.advance(u64::from(q) + 1);
                }
                for t in &mut tiles {
                    finish_tile(cx, t, &rows, &diag, &diag_at, &mut items);
                }
            }
            if let Some(h) = rules_thread {
                h.join().expect("rules thread");
            }
            Ok(())
        })?;
        Ok(coverage(q_max, rq as u32, rules_done, swept, items))
    }
}

/// The sweep's bitsets of values `≥ q` (cleared after each column): the
/// column's values so far, the diagonal values of the rows below, both.
struct Bits<'a> {
    col: &'a mut [u64],
    diag: &'a mut [u64],
    uni: &'a mut [u64],
}

/// Compares the column state tile `t` hands on for column `q` with `col`.
fn compare_col(cx: &Ctx, t: &mut Tile, q: u32, col: &[u64], hi_w: usize) {
    if !(t.g.r1 < t.g.q1 && t.ok && !t.cols.is_empty()) {
        return;
    }
    let lo_w = q as usize / 64;
    let c = &t.cols;
    let at = t.col_at;
    let ok = (|| {
        let base = *c.get(at)? as usize;
        let n = *c.get(at + 1)? as usize;
        let w: Vec<u64> = c
            .get(at + 2..at + 2 + 2 * n)?
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect();
        t.col_at = at + 2 + 2 * n;
        let mut mine: Vec<u64> = col[lo_w..hi_w.max(lo_w + 1)].to_vec();
        mine[0] &= !0u64 << (q % 64);
        while mine.last() == Some(&0) {
            mine.pop();
        }
        Some(base == lo_w && w == mine)
    })();
    match ok {
        Some(true) => {}
        Some(false) => cx.bad(
            &t.name,
            format!("column {q}"),
            format!(
                "stored column state (values f({q}, b) ≥ {q}, b < {}) differs from the derived one",
                t.g.r1.min(q + 1)
            ),
        ),
        None => {
            cx.bad(&t.name, "cols", "truncated");
            t.ok = false;
        }
    }
}

/// Derives column `q` and compares what the tiles store of it.
#[allow(clippy::too_many_arguments)]
fn sweep_column(
    cx: &Ctx,
    q: u32,
    q_max: u32,
    rows: &mut Rows,
    diag: &mut Vec<u32>,
    tiles: &mut [Tile],
    bits: &mut Bits,
    mut small: Option<&mut Small>,
) {
    let Bits {
        col: colbits,
        diag: diagbits,
        uni,
    } = bits;
    rows.push(q);
    let mut died = Vec::new();
    let lo_w = q as usize / 64;
    let mut hi_w = lo_w; // one past the last word touched
    let mut g = next_free(uni, q);
    let mut ti = 0;
    for r in 0..=q {
        if r > 0 {
            let v = diag[r as usize - 1];
            if v >= q {
                set(diagbits, v);
                set(uni, v);
                hi_w = hi_w.max(v as usize / 64 + 1);
                if v == g {
                    g = next_free(uni, g);
                }
            }
        }
        while ti + 1 < tiles.len() && r >= tiles[ti].g.r1 {
            ti += 1;
        }
        // Rows live in separate allocations: ask for the next ones early
        // (one row's state and own window per cell would be two cache misses).
        let ri = r as usize;
        // The next live rows' words the scan will read: fetch them early.
        if rows.dead_at.get(ri + 3) == Some(&LIVE) {
            prefetch(rows.word_ptr(ri + 3, rows.lo[ri + 3].max(q)).cast());
        }
        let f = if rows.dead_at[ri] != LIVE {
            rows.dead_at[ri]
        } else {
            let lo = least_free(rows, ri, diagbits, rows.lo[ri].max(q));
            rows.lo[ri] = lo;
            let v = least_free(rows, ri, uni, lo.max(g));
            rows.insert(ri, v);
            set(colbits, v);
            set(uni, v);
            hi_w = hi_w.max(v as usize / 64 + 1);
            if v == g {
                g = next_free(uni, g);
            }
            let d = v - q;
            let (hist, run) = (&mut rows.hist[ri], &mut rows.run[ri]);
            for k in 0..PERIODS {
                if hist[k] != d {
                    run[k] = q + 1;
                }
            }
            hist.copy_within(..PERIODS - 1, 1);
            hist[0] = d;
            rows.advance(ri, (q as usize / 64).saturating_sub(1));
            let t = &mut tiles[ti];
            if v <= q_max {
                let i = (v - t.g.q0) as usize;
                if i >= t.my_p_count.len() {
                    t.my_p_count.resize(i + 1, 0);
                }
                t.my_p_count[i] += 1;
            }
            if r == q {
                if v == q {
                    cx.bad(
                        &t.name,
                        format!("({q}, {q}, {q})"),
                        "derived as a P-position (the rules never allow it)",
                    );
                }
                if v <= q_max {
                    t.my_wins.push((v, 1, q));
                }
            }
            if v == q {
                t.my_wins.push((q, 2, r));
                died.push(ri);
            }
            v
        };
        if r == q {
            diag.push(f);
        }
        let t = &mut tiles[ti];
        if q <= 255 {
            t.my_small_f.push((q, r, f));
        }
        if let Some(sm) = small.as_deref_mut() {
            sm.put(q, r, f);
        }
        // The column state this tile hands on, after its last row.
        if r + 1 == t.g.r1 || r == q {
            compare_col(cx, t, q, colbits, hi_w);
        }
        if r == q {
            break;
        }
    }
    // Tiles whose rows start above q hand on the whole column.
    for t in tiles.iter_mut().skip(ti + 1) {
        compare_col(cx, t, q, colbits, hi_w);
    }
    // Rows that died at this column are dead from the next one on.
    for r in died {
        rows.kill(r, q);
    }
    for b in [colbits, diagbits, uni] {
        b[lo_w..hi_w].fill(0);
    }
}

/// The run's tiles by q range (their q0), each range's tiles by r.
fn tile_ranges(cx: &Ctx) -> BTreeMap<u32, Vec<(String, TileMeta)>> {
    let mut ranges: BTreeMap<u32, Vec<(String, TileMeta)>> = BTreeMap::new();
    for job in cx.run().jobs() {
        let Some(g) = geom_of(job) else {
            cx.bad(&job.name, "parameters", "no q0/q1/r0/r1/q_max");
            continue;
        };
        ranges.entry(g.q0).or_default().push((job.name.clone(), g));
    }
    for v in ranges.values_mut() {
        v.sort_by_key(|(_, g)| g.r0);
    }
    ranges
}

/// Reads the tiles of one q range, after checking that they stack (same
/// q1, rows from 0 up without a gap); `None` after reporting what is wrong.
fn read_range(cx: &Ctx, list: &[(String, TileMeta)], q_max: u32) -> Option<Vec<Tile>> {
    let (q0, q1) = (list[0].1.q0, list[0].1.q1);
    let mut tiles: Vec<Tile> = Vec::new();
    let mut r_next = 0;
    for (name, g) in list {
        if g.q1 != q1 || g.r0 != r_next || g.q_max != q_max {
            cx.bad(name, "plan", "tiles of one q range do not stack");
            return None;
        }
        r_next = g.r1;
        cx.job(name);
        match read_tile(cx, name, *g) {
            Some(t) => tiles.push(t),
            None => return None,
        }
    }
    if r_next < q1.min(q_max + 1) {
        cx.bad(
            &list[0].0,
            "plan",
            format!("rows from {r_next} of columns {q0}..{q1} are in no tile"),
        );
        return None;
    }
    Some(tiles)
}

/// What the check covered: `rq` columns from the rules, `swept` columns
/// derived, and the stored items compared (`items`: small-f, diagonal,
/// P-counts, wins, row states, column states).
fn coverage(q_max: u32, rq: u32, rules_done: bool, swept: u32, items: [u64; 6]) -> Vec<Coverage> {
    let cells = |q: u64| (q + 1) * (q + 2) / 2;
    let all = cells(u64::from(q_max));
    let derived = if swept == 0 {
        0
    } else {
        cells(u64::from(swept - 1))
    };
    let names = [
        "small-f",
        "diagonal",
        "P-counts",
        "3×p winning moves",
        "row states",
        "column states",
    ];
    let list: Vec<String> = names
        .iter()
        .zip(items)
        .map(|(n, c)| format!("{n} {}", group(c)))
        .collect();
    vec![
        Coverage {
            what: format!(
                "cells f(q, r), q ≤ {}: every move of (p, q, r) enumerated from the rules",
                rq - 1
            ),
            stored: all,
            checked: if rules_done { cells(u64::from(rq) - 1) } else { 0 },
        },
        Coverage {
            what: "cells f(q, r), all q: least p with no row-1/row-2 move to a P-position (row, diagonal and column sets), dead by a row-0 move".into(),
            stored: all,
            checked: derived.min(all),
        },
        Coverage {
            what: format!("stored items compared with them ({})", list.join(", ")),
            stored: items.iter().sum(),
            checked: items.iter().sum(),
        },
    ]
}

/// Compares a tile's stored items, once the sweep has left its q range.
/// `diag_at[v]`: the `a` with `f(a, a) = v` (`u32::MAX` if none so far).
fn finish_tile(
    cx: &Ctx,
    t: &mut Tile,
    rows: &Rows,
    diag: &[u32],
    diag_at: &[u32],
    items: &mut [u64; 6],
) {
    let g = t.g;
    let name = t.name.clone();
    check_small_f(cx, t, &name);
    items[0] += t.small_f.len() as u64;
    check_diag(cx, t, &name, diag);
    items[1] += t.diag.len() as u64;
    check_p_counts(cx, t, &name);
    items[2] += t.p_count.len() as u64;
    check_wins(cx, t, &name);
    items[3] += t.wins.len() as u64;
    items[4] += check_row_states(cx, t, &name, rows, diag_at);
    items[5] += if t.cols.is_empty() {
        0
    } else {
        u64::from(g.q1 - g.q0)
    };
    if !t.cols.is_empty() && t.col_at != t.cols.len() {
        cx.bad(&name, "cols", "more column states than columns");
    }
}

/// The tile's `small-f` (f(q, r) for q ≤ 255) against the rules'.
fn check_small_f(cx: &Ctx, t: &Tile, name: &str) {
    if t.small_f != t.my_small_f {
        let i = t
            .small_f
            .iter()
            .zip(&t.my_small_f)
            .position(|(a, b)| a != b)
            .unwrap_or(t.small_f.len().min(t.my_small_f.len()));
        match (t.small_f.get(i), t.my_small_f.get(i)) {
            (Some(&(q, r, f)), Some(&(mq, mr, mf))) if (q, r) == (mq, mr) => cx.bad(
                name,
                format!("f({q}, {r})"),
                format!("stored {f}, the rules give {mf}"),
            ),
            _ => cx.bad(
                name,
                "small-f",
                format!(
                    "{} entries stored, {} cells with q ≤ 255 in the tile",
                    t.small_f.len(),
                    t.my_small_f.len()
                ),
            ),
        }
    }
}

/// The tile's `diag`: at least min(r1, q1) values, each f(a, a).
fn check_diag(cx: &Ctx, t: &Tile, name: &str, diag: &[u32]) {
    let g = t.g;
    let need = g.r1.min(g.q1) as usize;
    if t.diag.len() < need {
        cx.bad(
            name,
            "diag",
            format!("{} values, {need} expected", t.diag.len()),
        );
    }
    if let Some(a) = (0..t.diag.len().min(diag.len())).find(|&a| t.diag[a] != diag[a]) {
        cx.bad(
            name,
            format!("f({a}, {a})"),
            format!("stored {}, the rules give {}", t.diag[a], diag[a]),
        );
    }
}

/// The tile's P-position counts by p against the rules'.
fn check_p_counts(cx: &Ctx, t: &Tile, name: &str) {
    let g = t.g;
    let trim = |v: &[u32]| -> Vec<u32> {
        let mut v = v.to_vec();
        while v.last() == Some(&0) {
            v.pop();
        }
        v
    };
    let (s, m) = (trim(&t.p_count), trim(&t.my_p_count));
    if s != m {
        let i = (0..s.len().max(m.len()))
            .find(|&i| s.get(i) != m.get(i))
            .unwrap_or(0);
        cx.bad(
            name,
            format!("P-positions with p = {}", g.q0 as usize + i),
            format!(
                "stored count {}, the rules give {}",
                s.get(i).copied().unwrap_or(0),
                m.get(i).copied().unwrap_or(0)
            ),
        );
    }
}

/// The tile's winning moves of 3×p against the rules'.
fn check_wins(cx: &Ctx, t: &mut Tile, name: &str) {
    let mut sw = t.wins.clone();
    sw.sort_unstable();
    t.my_wins.sort_unstable();
    if sw != t.my_wins {
        let extra: Vec<String> = sw
            .iter()
            .filter(|w| !t.my_wins.contains(w))
            .chain(t.my_wins.iter().filter(|w| !sw.contains(w)))
            .take(4)
            .map(|(p, r, c)| format!("3×{p} bite ({r}, {c})"))
            .collect();
        cx.bad(
            name,
            "wins",
            format!(
                "stored winning moves of 3×p differ from the rules' (first: {})",
                extra.join(", ")
            ),
        );
    }
}

/// The tile's row states at column q1 against the derived rows; returns
/// how many rows it compared.
fn check_row_states(cx: &Ctx, t: &Tile, name: &str, rows: &Rows, diag_at: &[u32]) -> u64 {
    let g = t.g;
    let q1 = g.q1;
    let mut at = 0usize;
    let v = &t.rows;
    let mut n = 0u64;
    for r in g.r0..g.r1.min(q1) {
        let ri = r as usize;
        let dead = rows.dead(ri);
        let pos = format!("row {r} at column {q1}");
        let Some(&tag) = v.get(at) else {
            cx.bad(name, &pos, "missing from the row states");
            return n;
        };
        n += 1;
        if tag == 1 {
            let c = v.get(at + 1).copied();
            at += 2;
            if dead != c {
                cx.bad(
                    name,
                    &pos,
                    format!(
                        "stored dead at column {}, the rules give {}",
                        c.unwrap_or(0),
                        dead.map_or("a live row".into(), |d| format!("dead at column {d}"))
                    ),
                );
            }
            continue;
        }
        let hdr = v.get(at + 1..at + 4);
        let Some(&[m, base, len]) = hdr else {
            cx.bad(name, &pos, "truncated");
            return n;
        };
        let len = len as usize;
        let Some(body) = v.get(at + 4..at + 4 + 2 * len + 2 * PERIODS) else {
            cx.bad(name, &pos, "truncated");
            return n;
        };
        at += 4 + 2 * len + 2 * PERIODS;
        if let Some(d) = dead {
            cx.bad(
                name,
                &pos,
                format!("stored live, the rules give dead at column {d}"),
            );
            continue;
        }
        let own: Vec<u64> = body[..2 * len]
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect();
        let last_d = &body[2 * len..2 * len + PERIODS];
        let run = &body[2 * len + PERIODS..];
        // [q1, m) lies in the row's own and diagonal values; own = the own
        // values ≥ m from word m / 64.
        let in_diag = |x: u32| diag_at.get(x as usize).is_some_and(|&a| a < r);
        let mut problems = Vec::new();
        if (m / 64 != base) || (m as usize / 64) < rows.base[ri] {
            problems.push(format!(
                "lower bound {m} / word {base} outside the derived window"
            ));
        } else {
            if let Some(x) = (q1..m).find(|&x| !rows.has(ri, x) && !in_diag(x)) {
                problems.push(format!(
                    "says every value in [{q1}, {m}) is taken, but {x} is not"
                ));
            }
            let mut mine: Vec<u64> = (base as usize..rows.base[ri] + rows.cap[ri])
                .map(|w| rows.word(ri, w))
                .collect();
            if let Some(w) = mine.first_mut() {
                *w &= !0u64 << (m % 64);
            }
            while mine.last() == Some(&0) {
                mine.pop();
            }
            if mine != own {
                problems.push("own values differ from the derived f(a, r)".into());
            }
        }
        for k in 0..PERIODS {
            // last_d[x % 12] = d(x) for the last 12 columns x.
            let x = q1 - 1 - k as u32;
            let want = rows.hist[ri][k];
            if last_d[(x % PERIODS as u32) as usize] != want {
                problems.push(format!(
                    "d({x}) stored {}, derived {}",
                    last_d[(x % PERIODS as u32) as usize],
                    want
                ));
                break;
            }
        }
        if run != rows.run[ri] {
            problems.push(format!("run starts {run:?}, derived {:?}", rows.run[ri]));
        }
        if !problems.is_empty() {
            cx.bad(name, &pos, problems.join("; "));
        }
    }
    if at != v.len() {
        cx.bad(name, "rows", "longer than the tile's rows");
    }
    n
}
