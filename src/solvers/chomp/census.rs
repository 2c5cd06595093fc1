//! Chomp census by number of squares: every Young diagram (partition) of `s`
//! squares is a position; count P-positions and N-positions with one or
//! several winning bites (OEIS A112470–A112473; `BRIEF.md`, Chomp: census).
//!
//! **Ranking** ([`PartitionRanks`]): the partitions of `s` (rows
//! `r₀ ≥ r₁ ≥ …`, row 0 holds the poison) are ranked densely `0 … p(s)−1` in
//! ascending lexicographic order of their rows, with the partition-counting
//! recurrence `P(n, k)` = partitions of `n` into parts `≤ k`
//! (`P(n, k) = P(n, k−1) + P(n−k, k)`):
//! `rank = Σ_k P(n_k, r_k − 1)` where `n_k = r_k + r_{k+1} + …` (the squares
//! from row k up). `1,1,…,1` has rank 0 and the single row `s` has rank
//! `p(s) − 1`. The partitions with a given first rows form a contiguous rank
//! interval; those with largest part `c` are `[P(s, c−1), P(s, c))`.
//!
//! **Solver** ([`CensusMarker`]): a bite removes at least one square, so
//! every child of a position of size `s` is smaller. Instead of looking at
//! all `s − 1` bites of every position, the marker starts from the
//! P-positions `q` of the smaller sizes (about 2 % of all positions) and
//! enumerates, for each, exactly the positions `R` of size `s` that have a
//! bite into `q` — as [`ChompBox::solve`](super::ChompBox::solve) marks the
//! predecessors of P-positions. Each (R, winning bite) pair is produced once,
//! so a saturating two-bit counter per position gives P (no winning bite),
//! one winning bite, or several. Work is proportional to the number of
//! winning bites of size `s`, not to the number of bites.
//!
//! Predecessors of `q` (rows `q₀ ≥ … ≥ q_{m−1} > 0`, then zeros): a bite
//! `(i, j)` from `R` leads to `q` exactly when `i` starts a maximal run of rows
//! of `q` equal to `j` (the run of zeros after row m−1 counts; `(0, 0)` is not
//! a bite), `R` agrees with `q` outside the run, and the run rows are raised
//! by `e_i ≥ e_{i+1} ≥ … ≥ 0` with `e_i ≥ 1` and `j + e_i ≤ q_{i−1}` (no bound
//! for `i = 0`). So the predecessors of size `s` are the partitions of
//! `d = s − |q|` into at most (run length) parts with largest part at most
//! `q_{i−1} − j`, one per run start. Their ranks follow from
//! `rank(R) = Σ_k P(n_k(q) + D_k, R_k − 1)` with `D_k` the squares added at
//! rows ≥ k, which leaves `q`'s own terms above the raised rows unchanged.

use std::ops::Range;

/// Largest size accepted: `p(400) ≈ 6.9·10¹⁸` still fits a `u64` rank.
pub const MAX_SIZE: u32 = 400;

/// Counts of one size (or one rank range of a size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SizeCounts {
    /// P-positions (the player to move loses): A112470.
    pub p: u64,
    /// N-positions with exactly one winning bite: A112472.
    pub one: u64,
    /// N-positions with two or more winning bites: A112473.
    pub several: u64,
}

impl SizeCounts {
    /// All positions counted.
    pub fn total(&self) -> u64 {
        self.p + self.one + self.several
    }

    /// The sum of two disjoint parts.
    pub fn add(&self, o: &SizeCounts) -> SizeCounts {
        SizeCounts {
            p: self.p + o.p,
            one: self.one + o.one,
            several: self.several + o.several,
        }
    }
}

/// Ranking tables for partitions of sizes `0 ..= n_max`.
#[derive(Debug, Clone)]
pub struct PartitionRanks {
    n_max: usize,
    /// `table[n * (n_max + 1) + k] = P(n, k)`, partitions of n into parts ≤ k.
    table: Vec<u64>,
}

impl PartitionRanks {
    /// Tables for sizes up to `n_max`.
    ///
    /// # Panics
    /// If `n_max > MAX_SIZE`.
    pub fn new(n_max: u32) -> Self {
        assert!(n_max <= MAX_SIZE, "size {n_max} exceeds {MAX_SIZE}");
        let w = n_max as usize + 1;
        let mut table = vec![0u64; w * w];
        table[..w].fill(1); // P(0, k) = 1
        for n in 1..w {
            for k in 1..w {
                let without_k = table[n * w + k - 1];
                let with_k = if k <= n { table[(n - k) * w + k] } else { 0 };
                table[n * w + k] = without_k + with_k;
            }
        }
        PartitionRanks {
            n_max: n_max as usize,
            table,
        }
    }

    /// Largest size covered.
    pub fn n_max(&self) -> u32 {
        self.n_max as u32
    }

    /// `P(n, k)`: partitions of `n` into parts at most `k` (`k` is clamped to
    /// `n_max`). Requires `n ≤ n_max`.
    #[inline(always)]
    pub fn p_at_most(&self, n: u32, k: u32) -> u64 {
        let w = self.n_max + 1;
        let k = (k as usize).min(self.n_max);
        self.table[n as usize * w + k]
    }

    /// `p(s)`, the number of partitions of `s` (positions of size `s`).
    pub fn count(&self, s: u32) -> u64 {
        self.p_at_most(s, s)
    }

    /// The ranks of partitions of `s` with largest part `c`:
    /// `[P(s, c−1), P(s, c))`.
    pub fn first_part_ranks(&self, s: u32, c: u32) -> Range<u64> {
        debug_assert!(c >= 1);
        self.p_at_most(s, c - 1)..self.p_at_most(s, c)
    }

    /// Rank of `rows` (non-increasing, positive, sum ≤ n_max) among the
    /// partitions of their sum.
    pub fn rank(&self, rows: &[u32]) -> u64 {
        let mut n: u32 = rows.iter().sum();
        let mut x = 0;
        for &r in rows {
            x += self.p_at_most(n, r - 1);
            n -= r;
        }
        x
    }

    /// The partition of `s` with rank `x`, as rows (written into `rows`).
    ///
    /// # Panics
    /// If `x ≥ p(s)` or `s > n_max`.
    pub fn unrank(&self, s: u32, x: u64, rows: &mut Vec<u32>) {
        assert!(x < self.count(s), "rank {x} outside the partitions of {s}");
        rows.clear();
        self.descend(s, s, x, rows);
    }

    /// Appends the partition of `n` into parts ≤ `cap` with rank `rest`.
    #[inline]
    fn descend(&self, mut n: u32, mut cap: u32, mut rest: u64, rows: &mut Vec<u32>) {
        let w = self.n_max + 1;
        while n > 0 {
            let hi = cap.min(n) as usize;
            let row = &self.table[n as usize * w..n as usize * w + hi];
            // Largest r ≤ hi with P(n, r−1) ≤ rest; P(n, 0) = 0 ≤ rest.
            let r = row.partition_point(|&v| v <= rest);
            rest -= row[r - 1];
            rows.push(r as u32);
            n -= r as u32;
            cap = r as u32;
        }
        debug_assert_eq!(rest, 0);
    }
}

/// Walks the partitions of one size at increasing ranks, reusing the rows
/// shared with the previous one (consecutive P-positions share most rows).
struct Cursor {
    s: u32,
    rows: Vec<u32>,
    /// `lo[k]`: rank of the first partition sharing rows `0..k`;
    /// `hi[k]`: one past the last; `left[k]`: squares in rows `k..`.
    lo: Vec<u64>,
    hi: Vec<u64>,
    left: Vec<u32>,
}

impl Cursor {
    fn new(s: u32) -> Self {
        Cursor {
            s,
            rows: Vec::new(),
            lo: Vec::new(),
            hi: Vec::new(),
            left: Vec::new(),
        }
    }

    /// Moves to rank `x` (any order works; increasing ranks are cheap).
    fn seek(&mut self, pr: &PartitionRanks, x: u64) {
        // Keep the longest prefix whose interval still holds x.
        let mut k = 0;
        while k < self.rows.len() && self.lo[k + 1] <= x && x < self.hi[k + 1] {
            k += 1;
        }
        if self.rows.is_empty() {
            self.lo.clear();
            self.hi.clear();
            self.left.clear();
            self.lo.push(0);
            self.hi.push(pr.count(self.s));
            self.left.push(self.s);
        }
        self.rows.truncate(k);
        self.lo.truncate(k + 1);
        self.hi.truncate(k + 1);
        self.left.truncate(k + 1);
        let w = pr.n_max + 1;
        let mut n = self.left[k];
        let mut cap = if k == 0 { self.s } else { self.rows[k - 1] };
        let mut rest = x - self.lo[k];
        let mut base = self.lo[k];
        while n > 0 {
            let hi = cap.min(n) as usize;
            let row = &pr.table[n as usize * w..n as usize * w + hi];
            let r = row.partition_point(|&v| v <= rest);
            rest -= row[r - 1];
            base += row[r - 1];
            self.rows.push(r as u32);
            self.lo.push(base);
            self.hi.push(base + pr.p_at_most(n - r as u32, r as u32));
            n -= r as u32;
            self.left.push(n);
            cap = r as u32;
        }
    }
}

/// Marks the winning bites of the positions of one size `s` whose ranks lie
/// in `range`, from the P-positions of every smaller size.
///
/// Feed every P-position of sizes `1 … s−1` through
/// [`CensusMarker::add_p_bits`] (any order), then [`CensusMarker::finish`].
/// Memory: two bits per rank of the range.
#[derive(Debug)]
pub struct CensusMarker<'a> {
    pr: &'a PartitionRanks,
    s: u32,
    range: Range<u64>,
    /// Whether the range is every rank of size s (no range checks needed).
    whole: bool,
    /// Largest part of the last rank in the range (predecessors with a larger
    /// first row fall outside).
    c_hi: u32,
    /// Largest part of the first rank in the range (a predecessor through a
    /// bite in row 0 needs a first row of at least this).
    c_lo: u32,
    /// Per 64 ranks from `range.start`: `[one, two]`, bit set when at least
    /// one / at least two winning bites were found (same cache line).
    marks: Vec<[u64; 2]>,
}

/// The result of a [`CensusMarker`]: P-bits of the range and its counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeResult {
    /// Size of the positions.
    pub size: u32,
    /// Ranks covered.
    pub range: Range<u64>,
    /// Bit `x − range.start` set iff rank x is a P-position (u64 words, bit
    /// `i % 64` of word `i / 64`; bits past the range are zero).
    pub p_bits: Vec<u64>,
    /// The counts of the range.
    pub counts: SizeCounts,
}

/// One P-position `q` as the predecessor enumeration sees it (borrowed from
/// the cursor): rows, `n_from[k] = q_k + q_{k+1} + …`, and `lo[k]` = the rank
/// of the first partition sharing rows `0..k`, so that q's own rank terms
/// from row k up sum to `x − lo[k]`.
struct QView<'b> {
    q: &'b [u32],
    n_from: &'b [u32],
    lo: &'b [u64],
    x: u64,
}

impl QView<'_> {
    /// Squares of q in rows `k..` (0 past the last row).
    #[inline(always)]
    fn n_from(&self, k: usize) -> u32 {
        self.n_from.get(k).copied().unwrap_or(0)
    }

    /// q's rank terms of rows `k..` (0 past the last row).
    #[inline(always)]
    fn suffix(&self, k: usize) -> u64 {
        self.lo.get(k).map_or(0, |&lo| self.x - lo)
    }
}

/// The first rows of a partition (those equal to its largest part), with
/// the [`QView`] data for them: enough to raise them (a bite in row 0).
#[derive(Debug, Default)]
struct FirstRows {
    rows: Vec<u32>,
    left: Vec<u32>,
    lo: Vec<u64>,
}

impl FirstRows {
    /// The first rows of the partition of `t` with rank `x`.
    fn set(&mut self, pr: &PartitionRanks, t: u32, x: u64) {
        // Largest part c: P(t, c−1) ≤ x < P(t, c).
        let mut c = 1;
        while pr.p_at_most(t, c) <= x {
            c += 1;
        }
        self.rows.clear();
        self.left.clear();
        self.lo.clear();
        let (mut n, mut lo) = (t, 0u64);
        loop {
            // Row of length c with n squares from here on.
            self.rows.push(c);
            self.left.push(n);
            self.lo.push(lo);
            lo += pr.p_at_most(n, c - 1);
            n -= c;
            // The next row is c too iff the rank is past every rest whose
            // first part is < c.
            if n < c || x - lo < pr.p_at_most(n, c - 1) {
                break;
            }
        }
        self.left.push(n);
        self.lo.push(lo);
    }
}

/// The run being raised: its value `j` and end (exclusive; `usize::MAX` for
/// the unbounded run of empty rows).
#[derive(Debug, Clone, Copy)]
struct Run {
    j: u32,
    run_end: usize,
}

impl<'a> CensusMarker<'a> {
    /// A marker for ranks `range` of size `s` (`1 ≤ s ≤ n_max`,
    /// `range ⊆ 0..p(s)`, non-empty).
    ///
    /// # Panics
    /// If the size or range is out of bounds.
    pub fn new(pr: &'a PartitionRanks, s: u32, range: Range<u64>) -> Self {
        assert!(
            s >= 1 && s <= pr.n_max(),
            "size {s} outside 1..={}",
            pr.n_max()
        );
        assert!(
            range.start < range.end && range.end <= pr.count(s),
            "ranks {range:?} outside 0..{}",
            pr.count(s)
        );
        let mut last = Vec::new();
        pr.unrank(s, range.end - 1, &mut last);
        let mut first = Vec::new();
        pr.unrank(s, range.start, &mut first);
        let words = (range.end - range.start).div_ceil(64) as usize;
        CensusMarker {
            pr,
            s,
            whole: range.start == 0 && range.end == pr.count(s),
            c_hi: last[0],
            c_lo: first[0],
            range,
            marks: vec![[0, 0]; words],
        }
    }

    /// Adds P-positions of size `t < s`: bit `i` of `bits` (u64 words, bit
    /// `i % 64` of word `i / 64`) stands for rank `start + i`. Bits past
    /// `p(t)` must be zero.
    ///
    /// # Panics
    /// If `t ≥ s` or `t = 0`.
    pub fn add_p_bits(&mut self, t: u32, start: u64, bits: &[u64]) {
        assert!(
            t >= 1 && t < self.s,
            "P-positions of size {t} cannot be children of size {}",
            self.s
        );
        if self.whole {
            self.scan::<false>(t, start, bits);
        } else {
            self.scan::<true>(t, start, bits);
        }
    }

    /// [`CensusMarker::add_p_bits`]; `CHECK`: the range is not the whole size.
    fn scan<const CHECK: bool>(&mut self, t: u32, start: u64, bits: &[u64]) {
        // A predecessor's first row is at least q₀, so partitions of t whose
        // first row exceeds c_hi (ranks ≥ P(t, c_hi)) have none in range.
        let limit = self.pr.p_at_most(t, self.c_hi);
        // Partitions of t whose first row is shorter than c_lo reach the
        // range only by a bite in row 0; that needs just their first rows.
        let short = if CHECK {
            self.pr.p_at_most(t, self.c_lo - 1)
        } else {
            0
        };
        let mut first = FirstRows::default();
        let mut cur = Cursor::new(t);
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let x = start + (w as u64) * 64 + u64::from(word.trailing_zeros());
                word &= word - 1;
                if x >= limit {
                    return;
                }
                if CHECK && x < short {
                    first.set(self.pr, t, x);
                    let qv = QView {
                        q: &first.rows,
                        n_from: &first.left,
                        lo: &first.lo,
                        x,
                    };
                    let run = Run {
                        j: first.rows[0],
                        run_end: first.rows.len(),
                    };
                    let d = self.s - t;
                    self.raise::<true>(&qv, &run, 0, d, d, 0);
                    continue;
                }
                cur.seek(self.pr, x);
                let qv = QView {
                    q: &cur.rows,
                    n_from: &cur.left,
                    lo: &cur.lo,
                    x,
                };
                self.add_q::<CHECK>(&qv, self.s - t);
            }
        }
    }

    /// Marks every predecessor of `q` with `d` more squares (in range).
    fn add_q<const CHECK: bool>(&mut self, qv: &QView, d: u32) {
        let pr = self.pr;
        let q = qv.q;
        let m = q.len();
        let (a, b) = (self.range.start, self.range.end);
        // pre = Σ_{k<i} P(n_k + d, q_k − 1): the rank terms of the rows
        // below the run, which R shares with q but with d more squares above.
        let mut pre = 0u64;
        let mut i = 0;
        loop {
            let j = if i < m { q[i] } else { 0 };
            let mut run_end = usize::MAX; // the zero run is unbounded
            if i < m {
                run_end = i + 1;
                while run_end < m && q[run_end] == j {
                    run_end += 1;
                }
            }
            let cap = if i == 0 { d } else { (q[i - 1] - j).min(d) };
            let mut inside = !CHECK;
            if CHECK {
                inside = i == 0 && a == 0 && b == pr.count(self.s);
                if i > 0 {
                    // R's with rows 0..i as in q: ranks [pre, pre + count);
                    // later runs give sub-intervals, so a disjoint one ends
                    // the loop.
                    let count = pr.p_at_most(qv.n_from(i) + d, q[i - 1]);
                    if pre >= b || pre + count <= a {
                        return;
                    }
                    inside = pre >= a && pre + count <= b;
                }
            }
            // The run can take at most cap × (run length) squares.
            let room = if i < m {
                cap as u64 * (run_end - i) as u64
            } else {
                u64::MAX
            };
            if cap >= 1 && room >= u64::from(d) {
                let run = Run { j, run_end };
                if inside {
                    self.raise::<false>(qv, &run, i, d, cap, pre);
                } else {
                    self.raise::<true>(qv, &run, i, d, cap, pre);
                }
            }
            if i == m {
                return;
            }
            for (&nk, &qk) in qv.n_from[i..run_end].iter().zip(&q[i..run_end]) {
                pre += pr.p_at_most(nk + d, qk - 1);
            }
            i = run_end;
        }
    }

    /// Raises rows `k…` of the run by a non-increasing sequence of at most
    /// `max_e` each, summing to `left > 0`; `acc` holds the rank terms of
    /// rows below `k`. `CHECK`: some results may fall outside the range.
    fn raise<const CHECK: bool>(
        &mut self,
        qv: &QView,
        run: &Run,
        k: usize,
        left: u32,
        max_e: u32,
        acc: u64,
    ) {
        let pr = self.pr;
        let lo = if run.run_end == usize::MAX {
            1
        } else {
            left.div_ceil((run.run_end - k) as u32)
        };
        let hi = max_e.min(left);
        // Row 0 raised to less than c_lo gives ranks below the range.
        let lo = if CHECK && k == 0 {
            lo.max(self.c_lo.saturating_sub(run.j))
        } else {
            lo
        };
        let n_here = qv.n_from(k) + left;
        let n_next = qv.n_from(k + 1);
        for e in lo..=hi {
            let x = acc + pr.p_at_most(n_here, run.j + e - 1);
            let rest = left - e;
            if CHECK {
                // Every R with rows up to k fixed: [x, x + count).
                let count = pr.p_at_most(n_next + rest, run.j + e);
                if x >= self.range.end {
                    return;
                }
                if x + count <= self.range.start {
                    continue;
                }
                if x < self.range.start || x + count > self.range.end {
                    self.step::<true>(qv, run, k, rest, e, x);
                    continue;
                }
            }
            self.step::<false>(qv, run, k, rest, e, x);
        }
    }

    /// After row k is raised by `e` (rank terms so far `x`), `rest` squares
    /// remain for the rows above.
    #[inline(always)]
    fn step<const CHECK: bool>(
        &mut self,
        qv: &QView,
        run: &Run,
        k: usize,
        rest: u32,
        e: u32,
        x: u64,
    ) {
        if rest == 0 {
            self.mark::<CHECK>(x + qv.suffix(k + 1));
        } else if run.j == 0 && e == 1 {
            // The rest is `rest` new rows of one square: each adds P(·, 0) = 0.
            self.mark::<CHECK>(x);
        } else {
            self.raise::<CHECK>(qv, run, k + 1, rest, e, x);
        }
    }

    #[inline(always)]
    fn mark<const CHECK: bool>(&mut self, x: u64) {
        if CHECK && !(self.range.start <= x && x < self.range.end) {
            return;
        }
        debug_assert!(self.range.contains(&x), "rank {x} outside {:?}", self.range);
        let y = x - self.range.start;
        let (w, bit) = ((y / 64) as usize, 1u64 << (y % 64));
        let m = &mut self.marks[w];
        m[1] |= m[0] & bit;
        m[0] |= bit;
    }

    /// The P-bits and counts of the range.
    pub fn finish(self) -> RangeResult {
        let len = self.range.end - self.range.start;
        let mut p_bits: Vec<u64> = self.marks.iter().map(|m| !m[0]).collect();
        if !len.is_multiple_of(64) {
            *p_bits.last_mut().expect("non-empty") &= (1u64 << (len % 64)) - 1;
        }
        let p = p_bits
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum::<u64>();
        let several = self
            .marks
            .iter()
            .map(|m| u64::from(m[1].count_ones()))
            .sum::<u64>();
        RangeResult {
            size: self.s,
            range: self.range,
            p_bits,
            counts: SizeCounts {
                p,
                one: len - p - several,
                several,
            },
        }
    }
}

/// The whole census up to `n_max` in memory, one size after another: counts
/// per size `1 ..= n_max` (index 0 is size 1) and the P-bits of every size.
///
/// Memory: one bit per position of every size (n ≤ 80: 16 MB).
pub fn census(n_max: u32) -> (Vec<SizeCounts>, Vec<Vec<u64>>) {
    let pr = PartitionRanks::new(n_max);
    let mut counts = Vec::new();
    let mut bits: Vec<Vec<u64>> = Vec::new();
    for s in 1..=n_max {
        let mut mk = CensusMarker::new(&pr, s, 0..pr.count(s));
        for (t, b) in (1..s).zip(&bits) {
            mk.add_p_bits(t, 0, b);
        }
        let r = mk.finish();
        counts.push(r.counts);
        bits.push(r.p_bits);
    }
    (counts, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_a_bijection_in_lex_order() {
        let pr = PartitionRanks::new(20);
        for s in 1..=20 {
            let mut prev: Option<Vec<u32>> = None;
            let mut rows = Vec::new();
            let mut cur = Cursor::new(s);
            for x in 0..pr.count(s) {
                pr.unrank(s, x, &mut rows);
                assert_eq!(rows.iter().sum::<u32>(), s);
                assert!(rows.windows(2).all(|w| w[0] >= w[1]));
                assert_eq!(pr.rank(&rows), x);
                if let Some(p) = &prev {
                    assert!(*p < rows, "lex order");
                }
                cur.seek(&pr, x);
                assert_eq!(cur.rows, rows);
                prev = Some(rows.clone());
            }
        }
        assert_eq!(PartitionRanks::new(60).count(60), 966_467);
    }

    #[test]
    fn split_ranges_agree_with_whole_size() {
        let (counts, bits) = census(30);
        let pr = PartitionRanks::new(30);
        let s = 30;
        let n = pr.count(s);
        for cuts in [
            vec![0, 1, n],
            vec![0, 777, 2000, 3001, n],
            vec![0, n - 1, n],
        ] {
            let mut total = SizeCounts::default();
            for w in cuts.windows(2) {
                let mut mk = CensusMarker::new(&pr, s, w[0]..w[1]);
                for t in 1..s {
                    mk.add_p_bits(t, 0, &bits[t as usize - 1]);
                }
                let r = mk.finish();
                for x in w[0]..w[1] {
                    let y = x - w[0];
                    let whole = bits[s as usize - 1][(x / 64) as usize] >> (x % 64) & 1;
                    assert_eq!(
                        r.p_bits[(y / 64) as usize] >> (y % 64) & 1,
                        whole,
                        "rank {x}"
                    );
                }
                total = total.add(&r.counts);
            }
            assert_eq!(total, counts[s as usize - 1]);
        }
    }
}
