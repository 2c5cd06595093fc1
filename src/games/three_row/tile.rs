//! The tile solver: Brouwer's recurrence over `q ∈ [q0, q1)`, `r ∈ [r0, r1)`.

use super::classify::PERIOD_MAX;

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

/// `ROT[q % 12][k − 1] = (q − k) % 12`: where `d(q − k)` sits in `last_d`.
const ROT: [[u8; PERIOD_MAX as usize]; PERIOD_MAX as usize] = {
    let mut t = [[0u8; PERIOD_MAX as usize]; PERIOD_MAX as usize];
    let n = PERIOD_MAX as usize;
    let mut i = 0;
    while i < n {
        let mut k = 1;
        while k <= n {
            t[i][k - 1] = ((i + n - k) % n) as u8;
            k += 1;
        }
        i += 1;
    }
    t
};

#[inline]
fn set_bit(bits: &mut [u64], v: u32) {
    bits[(v / 64) as usize] |= 1u64 << (v % 64);
}

#[inline]
fn clear_bit(bits: &mut [u64], v: u32) {
    bits[(v / 64) as usize] &= !(1u64 << (v % 64));
}

/// Solves one tile.
///
/// # Errors
/// A message if the input does not fit the geometry (wrong number of row or
/// column states, diagonal too short, a row state for a row not started).
pub fn solve_tile(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
) -> Result<TileOutput, String> {
    let TileGeom {
        q0,
        q1,
        r0,
        r1,
        q_max,
    } = *geom;
    if q0 > q1 || r0 > r1 || q1 > q_max + 1 || r1 > q_max + 1 {
        return Err(format!(
            "bad tile q [{q0}, {q1}), r [{r0}, {r1}) for q_max {q_max}"
        ));
    }
    let rows_in = geom.rows_in();
    if input.rows.len() != rows_in.len() {
        return Err(format!(
            "{} row states given, {} needed (rows {}..{})",
            input.rows.len(),
            rows_in.len(),
            rows_in.start,
            rows_in.end
        ));
    }
    if !(input.cols.is_empty() && r0 == 0) && input.cols.len() != (q1 - q0) as usize {
        return Err(format!(
            "{} column states given, {} needed",
            input.cols.len(),
            q1 - q0
        ));
    }
    if (input.diag.len() as u64) < u64::from(geom.diag_in()) {
        return Err(format!(
            "{} diagonal values given, {} needed",
            input.diag.len(),
            geom.diag_in()
        ));
    }
    let nwords = (value_bound(q_max) / 64 + 8) as usize;
    let mut col = vec![0u64; nwords];
    let mut diagbits = vec![0u64; nwords];
    let mut diag = input.diag;
    for &v in &diag[..(r0 as usize).min(diag.len())] {
        if v >= q0 {
            set_bit(&mut diagbits, v);
        }
    }
    let mut rows = input.rows;
    let mut live: Vec<u32> = rows_in
        .clone()
        .filter(|&r| matches!(rows[(r - r0) as usize], RowState::Live(_)))
        .collect();
    let mut out = TileOutput {
        p_count: vec![0; (q_max + 1).saturating_sub(q0) as usize],
        cells: geom.cells(),
        ..TileOutput::default()
    };
    let mut died: Vec<u32> = Vec::new();
    let mut cols_in = input.cols.into_iter();
    for q in q0..q1 {
        let lo = (q / 64) as usize;
        let mut hi = lo;
        if let Some(c) = cols_in.next() {
            let b = c.base as usize;
            if b < lo || b + c.words.len() > nwords {
                return Err(format!("column {q}: state out of range"));
            }
            col[b..b + c.words.len()].copy_from_slice(&c.words);
            hi = b + c.words.len();
        }
        if r0 <= q && q < r1 {
            debug_assert_eq!(rows.len() as u32, q - r0);
            rows.push(RowState::Live(LiveRow::new(q)));
            live.push(q);
        }
        let mut added = r0;
        for &r in &live {
            while added < r {
                let v = diag[added as usize];
                if v >= q {
                    set_bit(&mut diagbits, v);
                }
                added += 1;
            }
            let RowState::Live(row) = &mut rows[(r - r0) as usize] else {
                unreachable!("live list holds live rows")
            };
            let v = mex(row, q, &diagbits, &col);
            out.live_cells += 1;
            set_bit(&mut col, v);
            hi = hi.max((v / 64) as usize + 1);
            let d = v - q;
            let i0 = (q % PERIOD_MAX) as usize;
            // Branch-free: columns before the row started hold NO_D, which
            // never equals a real d, so runs cannot start before r + k.
            for (k, s) in row.run.iter_mut().enumerate() {
                let prev = row.last_d[ROT[i0][k] as usize];
                *s = if prev == d { *s } else { q + 1 };
            }
            row.last_d[i0] = d;
            if v <= q_max {
                out.p_count[(v - q0) as usize] += 1;
            }
            if r == q {
                debug_assert!(v > q, "(q, q, q) is never a P-position");
                if diag.len() as u32 != q {
                    return Err(format!(
                        "diagonal holds {} values at the diagonal cell {q}",
                        diag.len()
                    ));
                }
                diag.push(v);
                if v <= q_max {
                    out.wins.push(WinningMove {
                        p: v,
                        row: 1,
                        col: q,
                    });
                }
            }
            if v == q {
                died.push(r);
                out.wins.push(WinningMove {
                    p: q,
                    row: 2,
                    col: r,
                });
            }
        }
        for a in r0..added {
            let v = diag[a as usize];
            if v >= q {
                clear_bit(&mut diagbits, v);
            }
        }
        if record.f_upto_q.is_some_and(|m| q <= m) {
            for r in r0..r1.min(q + 1) {
                let f = match &rows[(r - r0) as usize] {
                    RowState::Dead { c } => *c,
                    RowState::Live(row) => q + row.d_at(q),
                };
                out.small_f.push((q, r, f));
            }
        }
        if !died.is_empty() {
            for &r in &died {
                rows[(r - r0) as usize] = RowState::Dead { c: q };
            }
            live.retain(|r| !died.contains(r));
            died.clear();
        }
        // Hand the column on (values ≥ q only), then clear it.
        if hi > lo {
            col[lo] &= !0u64 << (q % 64);
        }
        while hi > lo && col[hi - 1] == 0 {
            hi -= 1;
        }
        out.cols.push(ColState {
            base: lo as u32,
            words: col[lo..hi].to_vec(),
        });
        col[lo..hi].fill(0);
    }
    for &v in diag.iter().take(r0 as usize) {
        if v >= q0 {
            clear_bit(&mut diagbits, v);
        }
    }
    for row in &mut rows {
        if let RowState::Live(l) = row {
            l.canonicalize();
        }
    }
    out.rows = rows;
    out.diag = diag;
    out.wins.sort();
    Ok(out)
}

/// Solves a tile as a grid of sub-tiles of `block_q` columns × `block_r`
/// rows, in memory, so that the rows and columns being worked on stay in the
/// CPU caches. Same output as [`solve_tile`] on the whole tile.
///
/// # Errors
/// As [`solve_tile`].
pub fn solve_tile_blocked(
    geom: &TileGeom,
    input: TileInput,
    record: &TileRecord,
    block_q: u32,
    block_r: u32,
) -> Result<TileOutput, String> {
    let (bq, br) = (block_q.max(1), block_r.max(1));
    if geom.q1 - geom.q0 <= bq && geom.r1 - geom.r0 <= br {
        return solve_tile(geom, input, record);
    }
    let rcuts: Vec<(u32, u32)> = (geom.r0..geom.r1)
        .step_by(br as usize)
        .map(|a| (a, (a + br).min(geom.r1)))
        .collect();
    // Row states per r block, carried from one q chunk to the next.
    let mut row_states: Vec<Vec<RowState>> = vec![Vec::new(); rcuts.len()];
    let mut rows_in = input.rows.into_iter();
    for (b, &(ra, rb)) in rcuts.iter().enumerate() {
        let n = rb.min(geom.q0).saturating_sub(ra) as usize;
        row_states[b] = rows_in.by_ref().take(n).collect();
    }
    let mut cols_in = input.cols.into_iter();
    let mut diag = input.diag;
    let mut out = TileOutput {
        p_count: vec![0; (geom.q_max + 1).saturating_sub(geom.q0) as usize],
        cells: geom.cells(),
        ..TileOutput::default()
    };
    let mut q = geom.q0;
    while q < geom.q1 {
        let qe = (q + bq).min(geom.q1);
        let mut cols: Vec<ColState> = cols_in.by_ref().take((qe - q) as usize).collect();
        for (b, &(ra, rb)) in rcuts.iter().enumerate() {
            if ra >= qe {
                break;
            }
            let sub = TileGeom {
                q0: q,
                q1: qe,
                r0: ra,
                r1: rb,
                q_max: geom.q_max,
            };
            let o = solve_tile(
                &sub,
                TileInput {
                    rows: std::mem::take(&mut row_states[b]),
                    cols: std::mem::take(&mut cols),
                    diag: std::mem::take(&mut diag),
                },
                record,
            )?;
            row_states[b] = o.rows;
            cols = o.cols;
            diag = o.diag;
            for (i, c) in o.p_count.iter().enumerate() {
                out.p_count[(q - geom.q0) as usize + i] += c;
            }
            out.wins.extend(o.wins);
            out.small_f.extend(o.small_f);
            out.live_cells += o.live_cells;
        }
        out.cols.extend(cols);
        q = qe;
    }
    out.rows = row_states.into_iter().flatten().collect();
    diag.truncate(geom.diag_out() as usize);
    out.diag = diag;
    out.wins.sort();
    out.small_f.sort();
    Ok(out)
}

/// The least value `v ≥ q` in neither the row's set (own values, diagonal
/// part `diagbits`) nor the column `col`; sets it in the row and moves the
/// row's lower bound `m`.
#[inline]
fn mex(row: &mut LiveRow, q: u32, diagbits: &[u64], col: &[u64]) -> u32 {
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
    // 2. v: the least value ≥ m not in the row's set nor the column.
    let mut free = free & !col[w];
    if free == 0 {
        w += 1;
        // Inside the own window: three bitsets, four words per step.
        while w + 4 <= own_end {
            let f = |i: usize| !(row.own[i - base] | diagbits[i] | col[i]);
            let (a, b, c, d) = (f(w), f(w + 1), f(w + 2), f(w + 3));
            if (a | b | c | d) != 0 {
                break;
            }
            w += 4;
        }
        loop {
            free = !(own_at(&row.own, w) | diagbits[w] | col[w]);
            if free != 0 || w >= own_end {
                break;
            }
            w += 1;
        }
        if free == 0 {
            // Past the own window: two bitsets, four words per step.
            loop {
                let f = |i: usize| !(diagbits[i] | col[i]);
                let (a, b, c, d) = (f(w), f(w + 1), f(w + 2), f(w + 3));
                if (a | b | c | d) != 0 {
                    free = a;
                    for x in [b, c, d] {
                        if free != 0 {
                            break;
                        }
                        w += 1;
                        free = x;
                    }
                    break;
                }
                w += 4;
            }
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
