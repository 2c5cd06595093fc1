//! Chomp's rules for the full check, written from the rules alone
//! (Gale 1974): staircases, bites, un-bites, and the colex
//! ranks of an m×n box.
//!
//! A position is a staircase `r₀ ≥ r₁ ≥ … ≥ r_{m−1} ≥ 0` of row lengths,
//! row 0 holding the poison at `(0, 0)`. A bite `(i, j)` needs `j < rᵢ` and
//! `(i, j) ≠ (0, 0)` and sets `r_k = min(r_k, j)` for every `k ≥ i`.
//!
//! **Colex ranks** of an m×n box (the combinatorial number system: with
//! `s_k = r_k + m−1−k` a staircase is an m-subset of `{0, …, n+m−1}`):
//! `rank = Σ_k C(r_k + m−1−k, m−k)`, `0 … C(m+n, m) − 1`; rank 0 is the
//! empty board. A bite lowers rows only, so a child's rank is below its
//! parent's.
//!
//! **Un-bites** (move generation in reverse): the positions `R` with a bite
//! into `q` are found at every row `i` that starts a maximal run of rows of
//! `q` equal to some `j` (the zero rows count as a run): raise the run's rows
//! to any non-increasing `R_i ≥ … ≥ R_{e−1} ≥ j` with `R_i > j` and `R_i ≤
//! q_{i−1}` (`≤ n` for `i = 0`); bite `(i, j)` takes `R` back to `q`.
//! Every `(R, bite)` pair with that bite leading to `q` is produced once.

/// Binomial coefficient `C(a, b)`, `None` if it does not fit a `u64`.
pub fn binomial(a: u64, b: u64) -> Option<u64> {
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

/// The colex ranks of the staircases of an m×n box.
#[derive(Debug, Clone)]
pub struct BoxRanks {
    m: usize,
    n: usize,
    len: u64,
    /// `term[k·(n+1) + v] = C(v + m−1−k, m−k)`.
    term: Vec<u64>,
}

impl BoxRanks {
    /// The box of `m` rows and `n` columns; `None` if a side is 0 or the
    /// ranks do not fit a `u64`.
    pub fn new(m: usize, n: usize) -> Option<BoxRanks> {
        if m == 0 || n == 0 || m > 4096 || n > 1 << 20 {
            return None;
        }
        let len = binomial((m + n) as u64, m as u64)?;
        let mut term = Vec::with_capacity(m * (n + 1));
        for k in 0..m {
            for v in 0..=n {
                term.push(binomial((v + m - 1 - k) as u64, (m - k) as u64)?);
            }
        }
        Some(BoxRanks { m, n, len, term })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.m
    }

    /// Columns.
    pub fn cols(&self) -> usize {
        self.n
    }

    /// Number of ranks, `C(m+n, m)`, the empty board included.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false (a box has the empty board at least).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `C(v + m−1−k, m−k)`: row `k`'s share of the rank when it has `v` squares.
    #[inline(always)]
    pub fn term(&self, k: usize, v: u32) -> u64 {
        self.term[k * (self.n + 1) + v as usize]
    }

    /// The rank of `rows` (exactly m entries, non-increasing, ≤ n).
    pub fn rank(&self, rows: &[u32]) -> u64 {
        rows.iter().enumerate().map(|(k, &v)| self.term(k, v)).sum()
    }

    /// The staircase of rank `x < len` (m rows written into `rows`).
    pub fn unrank(&self, x: u64, rows: &mut [u32]) {
        debug_assert!(x < self.len);
        let mut rest = x;
        let mut cap = self.n as u32;
        for (k, row) in rows.iter_mut().enumerate().take(self.m) {
            // Largest v ≤ cap with term(k, v) ≤ rest (term(k, 0) = 0).
            let t = &self.term[k * (self.n + 1)..k * (self.n + 1) + cap as usize + 1];
            let v = t.partition_point(|&c| c <= rest) - 1;
            rest -= t[v];
            *row = v as u32;
            cap = v as u32;
        }
        debug_assert_eq!(rest, 0);
    }

    /// Steps `rows` to the staircase of the next rank; false after the last.
    #[inline]
    pub fn next(&self, rows: &mut [u32]) -> bool {
        // The lowest row that can grow grows by one; the rows below it empty.
        for k in (0..self.m).rev() {
            let cap = if k == 0 { self.n as u32 } else { rows[k - 1] };
            if rows[k] < cap {
                rows[k] += 1;
                for r in &mut rows[k + 1..] {
                    *r = 0;
                }
                return true;
            }
        }
        false
    }

    /// Calls `f(i, j, child_rank)` for every bite `(i, j)` of the staircase
    /// `rows` (rank `x`), row by row, columns ascending.
    #[inline]
    pub fn for_each_bite(&self, rows: &[u32], x: u64, mut f: impl FnMut(u32, u32, u64)) {
        for i in 0..self.m {
            let ri = rows[i];
            let first = u32::from(i == 0);
            for j in first..ri {
                let mut child = x;
                let mut k = i;
                while k < self.m && rows[k] > j {
                    child = child - self.term(k, rows[k]) + self.term(k, j);
                    k += 1;
                }
                f(i as u32, j, child);
            }
        }
    }

    /// Calls `f(parent_rank)` for every position of the box with a bite into
    /// the staircase `rows` (rank `x`), once per (parent, bite) pair.
    pub fn for_each_unbite(&self, rows: &[u32], x: u64, mut f: impl FnMut(u64)) {
        let m = self.m;
        let mut i = 0;
        while i < m {
            let j = rows[i];
            let mut e = i + 1;
            while e < m && rows[e] == j {
                e += 1;
            }
            let cap = if i == 0 { self.n as u32 } else { rows[i - 1] };
            if (i, j) != (0, 0) && cap > j {
                // Rank without the run's rows, and the run's rows all at j
                // from row k on: suffix[k − i].
                let mut suffix = vec![0u64; e - i + 1];
                for k in (i..e).rev() {
                    suffix[k - i] = suffix[k - i + 1] + self.term(k, j);
                }
                let base = x - suffix[0];
                self.raise(i, i, e, j, cap, base, &suffix, &mut f);
            }
            i = e;
        }
    }

    /// Raises row `k` of the run `[i, e)` to every value in `(j, cap]`,
    /// emitting the parent with the later rows at `j`, then raising them too.
    #[allow(clippy::too_many_arguments)]
    fn raise(
        &self,
        i: usize,
        k: usize,
        e: usize,
        j: u32,
        cap: u32,
        acc: u64,
        suffix: &[u64],
        f: &mut impl FnMut(u64),
    ) {
        for v in j + 1..=cap {
            let a = acc + self.term(k, v);
            f(a + suffix[k + 1 - i]);
            if k + 1 < e {
                self.raise(i, k + 1, e, j, v, a, suffix, f);
            }
        }
    }
}

/// A staircase in the notation of `query chomp`: row lengths from the
/// poison row, empty rows left out (`5,3,3`; `empty` for no square).
pub fn staircase_text(rows: &[u32]) -> String {
    let parts: Vec<String> = rows
        .iter()
        .take_while(|&&r| r > 0)
        .map(u32::to_string)
        .collect();
    if parts.is_empty() {
        "empty".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every staircase of the box by brute force, in rank order.
    fn all(b: &BoxRanks) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        let mut rows = vec![0u32; b.rows()];
        loop {
            out.push(rows.clone());
            if !b.next(&mut rows) {
                return out;
            }
        }
    }

    /// Ranks are dense, `next` walks them in order, `unrank` inverts `rank`,
    /// and the count is C(m+n, m) (8×10: 43,758).
    #[test]
    fn ranks_are_dense_and_invertible() {
        assert_eq!(BoxRanks::new(8, 10).unwrap().len(), 43_758);
        for (m, n) in [(1, 5), (2, 4), (3, 3), (4, 6), (5, 2)] {
            let b = BoxRanks::new(m, n).unwrap();
            let list = all(&b);
            assert_eq!(list.len() as u64, b.len());
            let mut back = vec![0; m];
            for (x, rows) in list.iter().enumerate() {
                assert_eq!(b.rank(rows), x as u64, "{m}x{n} {rows:?}");
                b.unrank(x as u64, &mut back);
                assert_eq!(&back, rows);
                assert!(rows.windows(2).all(|w| w[0] >= w[1]) && rows[0] as usize <= n);
            }
        }
    }

    /// Bites by the definition (`r_k = min(r_k, j)` for `k ≥ i`), and un-bites
    /// are exactly the bites read backwards, once per (parent, bite).
    #[test]
    fn unbites_are_the_bites_reversed() {
        for (m, n) in [(1, 6), (2, 5), (3, 4), (4, 4), (5, 3)] {
            let b = BoxRanks::new(m, n).unwrap();
            let list = all(&b);
            let mut forward: Vec<Vec<u64>> = vec![Vec::new(); list.len()];
            for (x, rows) in list.iter().enumerate() {
                let mut seen = Vec::new();
                b.for_each_bite(rows, x as u64, |i, j, c| {
                    let mut child = rows.clone();
                    for r in &mut child[i as usize..] {
                        *r = (*r).min(j);
                    }
                    assert_eq!(b.rank(&child), c);
                    assert!(c < x as u64);
                    seen.push((i, j));
                    forward[c as usize].push(x as u64);
                });
                let squares: u32 = rows.iter().sum();
                assert_eq!(seen.len() as u32, squares.saturating_sub(1));
            }
            for (x, rows) in list.iter().enumerate() {
                let mut back = Vec::new();
                b.for_each_unbite(rows, x as u64, |p| back.push(p));
                back.sort_unstable();
                let mut want = forward[x].clone();
                want.sort_unstable();
                assert_eq!(back, want, "{m}x{n} {rows:?}");
            }
        }
    }
}
