//! The m×n box solver: every staircase with at most m rows and n columns.
//!
//! **Ranking** (combinatorial number system, `BRIEF.md` §Chomp): with
//! `s_k = r_k + (m−1−k)` a staircase is an m-subset of `{0, …, n+m−1}`, ranked
//! densely in colex order as `rank = Σ_k C(r_k + m−1−k, m−k)`, so the box has
//! `C(m+n, m)` ranks (8×10: 43,758; 14×14: 40,116,600). Rank 0 is the empty
//! board (no poison) and is never a position of play; rank 1 is the poison
//! alone. The rank does not depend on `n`, so the ranks of an m×n' box with
//! n' < n are a prefix of the m×n box's ranks.
//!
//! **Order**: a bite lowers one row and never raises one, so the child's rank is
//! smaller than the parent's and one ascending pass decides every position.
//!
//! **Solvers**: [`ChompBox::solve`] marks, for each P-position found in the
//! ascending scan, all its predecessors as N-positions; it touches only winning
//! bites (10×10: 312,237 of 9,053,045 legal bites, seed 003).
//! [`ChompBox::solve_ascending`] is the plain pass that tries every bite of a
//! position until one reaches a P-position; it is kept as an independent
//! implementation and for the benchmark.

use super::{Bite, ChompError, Staircase};

/// Largest ranking table accepted, `rows × (cols + 1)` entries (32 MiB).
pub const MAX_TABLE_ENTRIES: u64 = 1 << 22;

/// An m×n box: ranking tables for its staircases.
#[derive(Debug, Clone)]
pub struct ChompBox {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) len: u64,
    /// `term[k*(n+1) + r] = C(r + m−1−k, m−k)`.
    pub(super) term: Vec<u64>,
    /// `colsum[v*(m+1) + k] = Σ_{k' < k} term(k', v)`: the rank added by
    /// rows `k..t` all of length `v` is `colsum(v, t) − colsum(v, k)`.
    pub(super) colsum: Vec<u64>,
    /// `span[k*(n+1) + c] = C(c + m−k, m−k)` for `k ∈ 0..=m`: staircases of
    /// rows `k..m` with no row above `c`.
    pub(super) span: Vec<u64>,
}

/// The P-positions of a box, one bit per rank (bit `x % 64` of word `x / 64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PPositions {
    len: u64,
    bits: Vec<u64>,
}

/// Whole-box statistics, as counted in seed 003 for the 10×10 box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BoxStats {
    /// Staircases with the poison square (ranks 1…len−1).
    pub positions: u64,
    /// P-positions among them.
    pub p_positions: u64,
    /// Legal bites summed over all positions (a position with s squares has s−1).
    pub legal_bites: u64,
    /// Bites that lead to a P-position.
    pub winning_bites: u64,
}

/// `C(a, b)` or `None` if it does not fit in a `u64`.
pub(super) fn binomial(a: u64, b: u64) -> Option<u64> {
    if b > a {
        return Some(0);
    }
    let b = b.min(a - b);
    let mut c: u128 = 1;
    for i in 0..b {
        c = c * u128::from(a - i) / u128::from(i + 1);
        if c > u128::from(u64::MAX) {
            return None;
        }
    }
    u64::try_from(c).ok()
}

impl ChompBox {
    /// The box of `rows` × `cols` (rows ≥ 1, cols ≥ 1, `C(rows+cols, rows)`
    /// ranks that fit in a `u64`, at most [`MAX_TABLE_ENTRIES`] table entries).
    /// Building the box allocates only the ranking tables; what a solver
    /// allocates is up to its caller ([`ChompBox::solve`] needs two bitsets
    /// of `len()` bits, [`ChompBox::solve_window`] one window).
    ///
    /// # Errors
    /// [`ChompError::BadBox`] if a side is zero or the box is too large; no
    /// memory is allocated before the size checks.
    pub fn new(rows: usize, cols: usize) -> Result<Self, ChompError> {
        let bad = |why: String| ChompError::BadBox { rows, cols, why };
        if rows == 0 || cols == 0 {
            return Err(bad("a box needs at least one row and one column".into()));
        }
        if (rows as u64).saturating_mul(cols as u64 + 1) > MAX_TABLE_ENTRIES {
            return Err(bad(format!(
                "rows × (cols + 1) exceeds the ranking-table limit of {MAX_TABLE_ENTRIES}"
            )));
        }
        let len = binomial((rows + cols) as u64, rows as u64).ok_or_else(|| {
            bad(format!(
                "C({}, {rows}) staircases exceed the 64-bit rank limit",
                rows + cols
            ))
        })?;
        let mut term = Vec::with_capacity(rows * (cols + 1));
        for k in 0..rows {
            for r in 0..=cols {
                // Every term is at most `len`, so it fits.
                term.push(binomial((r + rows - 1 - k) as u64, (rows - k) as u64).unwrap_or(0));
            }
        }
        let mut colsum = Vec::with_capacity((cols + 1) * (rows + 1));
        for v in 0..=cols {
            let mut acc = 0u64;
            colsum.push(0);
            for k in 0..rows {
                // Σ over rows of one column length is a rank, so at most `len`.
                acc += term[k * (cols + 1) + v];
                colsum.push(acc);
            }
        }
        let mut span = Vec::with_capacity((rows + 1) * (cols + 1));
        for k in 0..=rows {
            for c in 0..=cols {
                // At most span(0, cols) = len.
                span.push(binomial((c + rows - k) as u64, (rows - k) as u64).unwrap_or(0));
            }
        }
        Ok(ChompBox {
            m: rows,
            n: cols,
            len,
            term,
            colsum,
            span,
        })
    }

    /// Rows of the box.
    pub fn rows(&self) -> usize {
        self.m
    }

    /// Columns of the box.
    pub fn cols(&self) -> usize {
        self.n
    }

    /// Number of ranks, `C(m+n, m)`, including the empty board at rank 0.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: a box has at least the empty board and the poison.
    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline(always)]
    pub(super) fn term(&self, k: usize, r: u32) -> u64 {
        self.term[k * (self.n + 1) + r as usize]
    }

    /// `Σ_{k' < k} term(k', v)`.
    #[inline(always)]
    pub(super) fn colsum(&self, v: u32, k: usize) -> u64 {
        self.colsum[v as usize * (self.m + 1) + k]
    }

    /// Rank of row lengths `rows` (length m, non-increasing, each ≤ n).
    /// Not checked; use [`ChompBox::rank_of`] for outside input.
    #[inline]
    pub fn rank_rows(&self, rows: &[u32]) -> u64 {
        rows.iter().enumerate().map(|(k, &r)| self.term(k, r)).sum()
    }

    /// Rank of a staircase in this box.
    ///
    /// # Errors
    /// [`ChompError::OutsideBox`] if it has more than m rows or more than n columns.
    pub fn rank_of(&self, s: &Staircase) -> Result<u64, ChompError> {
        let rows = self.padded(s)?;
        Ok(self.rank_rows(&rows))
    }

    /// The staircase's rows padded with empty rows to length m.
    pub(super) fn padded(&self, s: &Staircase) -> Result<Vec<u32>, ChompError> {
        if s.rows().len() > self.m || s.rows().first().copied().unwrap_or(0) as usize > self.n {
            return Err(ChompError::OutsideBox {
                pos: s.to_string(),
                rows: self.m,
                cols: self.n,
            });
        }
        let mut rows = s.rows().to_vec();
        rows.resize(self.m, 0);
        Ok(rows)
    }

    /// Writes the row lengths of `rank` into `rows` (length m).
    ///
    /// # Panics
    /// If `rank ≥ len()` or `rows.len() != m`.
    pub fn unrank(&self, rank: u64, rows: &mut [u32]) {
        assert!(rank < self.len, "rank {rank} outside box of {}", self.len);
        assert_eq!(rows.len(), self.m);
        let mut rest = rank;
        let mut hi = self.n;
        for (k, row) in rows.iter_mut().enumerate() {
            let table = &self.term[k * (self.n + 1)..k * (self.n + 1) + hi + 1];
            // Largest r ≤ hi with term(k, r) ≤ rest; terms increase strictly in r.
            let r = table.partition_point(|&t| t <= rest) - 1;
            *row = r as u32;
            rest -= table[r];
            hi = r;
        }
        debug_assert_eq!(rest, 0);
    }

    /// The next staircase in rank order (colex successor), in place.
    /// Returns false after the last one (the full box).
    #[inline]
    pub(super) fn advance(&self, rows: &mut [u32]) -> bool {
        // The lowest row that may grow: row k can grow if r_k < r_{k−1}
        // (row 0: if r_0 < n); then every row above it restarts empty.
        for k in (0..self.m).rev() {
            let cap = if k == 0 { self.n as u32 } else { rows[k - 1] };
            if rows[k] < cap {
                rows[k] += 1;
                for r in rows[k + 1..].iter_mut() {
                    *r = 0;
                }
                return true;
            }
        }
        false
    }

    /// Solves the box by marking the predecessors of every P-position.
    ///
    /// Scans ranks upwards; a rank not yet marked is a P-position, and every
    /// staircase with a bite into it is marked as an N-position. Work is
    /// proportional to the number of positions plus the number of winning bites.
    /// Memory: two bitsets of `len()` bits.
    pub fn solve(&self) -> PPositions {
        let words = self.len.div_ceil(64) as usize;
        let mut known_n = vec![0u64; words];
        let mut p = vec![0u64; words];
        known_n[0] |= 1; // rank 0, the empty board, is not a position
        let mut q = vec![0u32; self.m];
        let mut x = 1u64;
        while x < self.len {
            let w = (x / 64) as usize;
            let free = !known_n[w] >> (x % 64);
            if free == 0 {
                x = (w as u64 + 1) * 64;
                continue;
            }
            x += u64::from(free.trailing_zeros());
            if x >= self.len {
                break;
            }
            p[(x / 64) as usize] |= 1 << (x % 64);
            self.unrank(x, &mut q);
            self.mark_predecessors(x, &q, &mut known_n);
            x += 1;
        }
        PPositions {
            len: self.len,
            bits: p,
        }
    }

    /// Marks every staircase R with a bite (i, j) that leads to `q` (rank `x`).
    ///
    /// R agrees with q below row i; q_i = j and R_i ∈ (j, q_{i−1}] (row 0: ≤ n);
    /// the rows after i that equal j in q may be any non-increasing values
    /// in [j, R_i] in R; rows shorter than j are unchanged.
    fn mark_predecessors(&self, x: u64, q: &[u32], marks: &mut [u64]) {
        for i in 0..self.m {
            let j = q[i];
            if i > 0 && q[i - 1] == j {
                continue; // not the first row of its run: R_i would exceed R_{i−1}
            }
            let upper = if i == 0 { self.n as u32 } else { q[i - 1] };
            if upper <= j {
                continue;
            }
            let mut t = i + 1;
            while t < self.m && q[t] == j {
                t += 1;
            }
            let base = x - (i..t).map(|k| self.term(k, j)).sum::<u64>();
            for ri in j + 1..=upper {
                self.raise_run(i + 1, t, j, ri, base + self.term(i, ri), marks);
            }
        }
    }

    /// Chooses rows k…t−1 in [j, hi], non-increasing, and marks each result.
    fn raise_run(&self, k: usize, t: usize, j: u32, hi: u32, acc: u64, marks: &mut [u64]) {
        if k == t {
            marks[(acc / 64) as usize] |= 1 << (acc % 64);
            return;
        }
        if k + 1 == t {
            for v in j..=hi {
                let y = acc + self.term(k, v);
                marks[(y / 64) as usize] |= 1 << (y % 64);
            }
            return;
        }
        for v in j..=hi {
            self.raise_run(k + 1, t, j, v, acc + self.term(k, v), marks);
        }
    }

    /// Solves the box by the plain ascending pass: a position is N if some
    /// bite reaches a P-position already decided. Same result as
    /// [`ChompBox::solve`]; slower (it looks at up to every legal bite).
    pub fn solve_ascending(&self) -> PPositions {
        let words = self.len.div_ceil(64) as usize;
        let mut p = vec![0u64; words];
        let mut rows = vec![0u32; self.m];
        rows[0] = 1; // rank 1: the poison alone
        let mut x = 1u64;
        loop {
            if !self.any_bite_into(&rows, |y| p[(y / 64) as usize] >> (y % 64) & 1 == 1) {
                p[(x / 64) as usize] |= 1 << (x % 64);
            }
            if !self.advance(&mut rows) {
                break;
            }
            x += 1;
        }
        debug_assert_eq!(x + 1, self.len);
        PPositions {
            len: self.len,
            bits: p,
        }
    }

    /// Calls `hit` on the rank of each child of `rows` (bites in (row, col)
    /// order) until it returns true; returns whether it did.
    #[inline]
    fn any_bite_into(&self, rows: &[u32], mut hit: impl FnMut(u64) -> bool) -> bool {
        self.children_until(rows, |_, y| hit(y))
    }

    /// The winning moves of staircase `s`: the bites that lead to a
    /// P-position, sorted by `(row, col)`. Empty for a P-position.
    ///
    /// # Errors
    /// [`ChompError::OutsideBox`] if `s` does not fit in the box.
    ///
    /// # Panics
    /// If `p` belongs to a box of another size.
    pub fn winning_moves(&self, p: &PPositions, s: &Staircase) -> Result<Vec<Bite>, ChompError> {
        assert_eq!(p.len, self.len, "P-positions of another box");
        let rows = self.padded(s)?;
        let mut out = Vec::new();
        self.any_bite_into_each(&rows, |bite, y| {
            if p.is_p(y) {
                out.push(bite);
            }
        });
        Ok(out)
    }

    /// Calls `f(bite, child rank)` for every legal bite of `rows`.
    fn any_bite_into_each(&self, rows: &[u32], mut f: impl FnMut(Bite, u64)) {
        self.children_until(rows, |bite, y| {
            f(bite, y);
            false
        });
    }

    /// Calls `f(bite, child rank)` for the legal bites of `rows` in
    /// (row, col) order until it returns true; returns whether it did.
    #[inline]
    pub(super) fn children_until(
        &self,
        rows: &[u32],
        mut f: impl FnMut(Bite, u64) -> bool,
    ) -> bool {
        let mut prefix = 0u64;
        for i in 0..self.m {
            let ri = rows[i];
            if ri == 0 {
                break;
            }
            for j in u32::from(i == 0)..ri {
                let mut y = prefix;
                for (k, &rk) in rows.iter().enumerate().skip(i) {
                    y += self.term(k, rk.min(j));
                }
                let bite = Bite {
                    row: i as u32,
                    col: j,
                };
                if f(bite, y) {
                    return true;
                }
            }
            prefix += self.term(i, ri);
        }
        false
    }

    /// Counts positions, P-positions, legal bites and winning bites of the
    /// whole box by visiting every bite (seed 003's 10×10 figures: 184,755 /
    /// 2,612 / 9,053,045 / 312,237).
    ///
    /// # Panics
    /// If `p` belongs to a box of another size.
    pub fn stats(&self, p: &PPositions) -> BoxStats {
        assert_eq!(p.len, self.len, "P-positions of another box");
        let mut st = BoxStats::default();
        let mut rows = vec![0u32; self.m];
        rows[0] = 1;
        let mut x = 1u64;
        loop {
            st.positions += 1;
            if p.is_p(x) {
                st.p_positions += 1;
            }
            self.any_bite_into_each(&rows, |_, y| {
                st.legal_bites += 1;
                if p.is_p(y) {
                    st.winning_bites += 1;
                }
            });
            if !self.advance(&mut rows) {
                break;
            }
            x += 1;
        }
        st
    }
}

impl PPositions {
    /// Number of ranks covered.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True if no rank is covered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether rank `x` is a P-position (false for ranks outside).
    #[inline]
    pub fn is_p(&self, x: u64) -> bool {
        x < self.len && self.bits[(x / 64) as usize] >> (x % 64) & 1 == 1
    }

    /// Number of P-positions.
    pub fn count(&self) -> u64 {
        self.bits.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Number of P-positions among ranks `0..end`.
    pub fn count_below(&self, end: u64) -> u64 {
        let end = end.min(self.len);
        let full = (end / 64) as usize;
        let mut c: u64 = self.bits[..full]
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum();
        if !end.is_multiple_of(64) {
            c += u64::from((self.bits[full] & ((1u64 << (end % 64)) - 1)).count_ones());
        }
        c
    }

    /// The P-positions among ranks `0..len` (a box with the same rows and
    /// fewer columns has exactly these ranks).
    ///
    /// # Panics
    /// If `len` exceeds [`PPositions::len`].
    pub fn prefix(&self, len: u64) -> PPositions {
        assert!(len <= self.len, "prefix longer than the bitset");
        let words = len.div_ceil(64) as usize;
        let mut bits = self.bits[..words].to_vec();
        if !len.is_multiple_of(64) {
            bits[words - 1] &= (1u64 << (len % 64)) - 1;
        }
        PPositions { len, bits }
    }

    /// The bitset as little-endian 64-bit words (`ceil(len/64) × 8` bytes).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.bits.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Rebuilds from [`PPositions::to_le_bytes`]; `None` if the byte count
    /// does not match `len` or bits past `len` are set.
    pub fn from_le_bytes(len: u64, bytes: &[u8]) -> Option<Self> {
        let words = usize::try_from(len.div_ceil(64)).ok()?;
        if bytes.len() != words.checked_mul(8)? {
            return None;
        }
        let bits: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        if !len.is_multiple_of(64) && bits[words - 1] >> (len % 64) != 0 {
            return None;
        }
        Some(PPositions { len, bits })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_unrank_bijection_5x6_exhaustive() {
        let b = ChompBox::new(5, 6).unwrap();
        assert_eq!(b.len(), 462);
        let mut rows = vec![0u32; 5];
        let mut walk = vec![0u32; 5];
        for x in 0..b.len() {
            b.unrank(x, &mut rows);
            assert!(rows.windows(2).all(|w| w[0] >= w[1]) && rows[0] <= 6);
            assert_eq!(b.rank_rows(&rows), x);
            assert_eq!(rows, walk, "colex successor walks ranks in order");
            b.advance(&mut walk);
        }
    }

    #[test]
    fn both_solvers_agree_on_small_boxes() {
        for m in 1..=6 {
            for n in 1..=7 {
                let b = ChompBox::new(m, n).unwrap();
                assert_eq!(b.solve(), b.solve_ascending(), "{m}x{n}");
            }
        }
    }

    #[test]
    fn bitset_round_trip_and_rejects_bad_lengths() {
        let b = ChompBox::new(4, 5).unwrap();
        let p = b.solve();
        let bytes = p.to_le_bytes();
        assert_eq!(PPositions::from_le_bytes(p.len(), &bytes), Some(p.clone()));
        assert_eq!(PPositions::from_le_bytes(p.len(), &bytes[1..]), None);
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 0xff; // bits past len
        assert_eq!(PPositions::from_le_bytes(p.len(), &bad), None);
    }

    #[test]
    fn box_too_large_is_refused() {
        assert!(matches!(
            ChompBox::new(40, 40),
            Err(ChompError::BadBox { .. })
        ));
        assert!(matches!(
            ChompBox::new(0, 4),
            Err(ChompError::BadBox { .. })
        ));
    }
}
