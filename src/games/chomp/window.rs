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
//! **Phases.**
//! 1. *Carry*: the earlier P-positions are read in chunks of
//!    [`CARRY_CHUNK`]; every thread marks their predecessors that fall in its
//!    own part of the window.
//! 2. *Inside, by layers of size* (every bite lowers the number of squares
//!    s): for s = 1, 2, …, m·n, every thread enumerates the staircases of s
//!    squares in its own part (pruned by rank interval and by the sums the
//!    remaining rows can hold), and the unmarked ones are the P-positions of
//!    size s; after a barrier every thread marks the predecessors of all of
//!    them within its own part; a second barrier ends the layer.
//!
//! **Threads and determinism.** The window is cut into `threads` parts of
//! whole 64-bit words; a thread writes only its own part, so there are no
//! atomics and no races, and the set of marks after each layer is the same
//! for any number of threads (marking is an OR, its order does not matter).
//! Navigation above the parts is done by every thread (cheap: a prefix whose
//! interval misses a part is skipped).
//!
//! **Memory** ([`window_memory`]): one bitset of `end − start` bits (asked
//! for transparent huge pages: the marks are random accesses over up to
//! gigabytes), the P-positions of one layer as ranks (8 bytes each) and of
//! one carry chunk, and the ranking tables.

use super::{Bite, ChompBox, ChompError, Staircase};
use std::sync::{Barrier, RwLock};

/// Earlier P-positions read from the iterator at a time (8 MiB of ranks).
pub const CARRY_CHUNK: usize = 1 << 20;

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
/// m×n box: the bitset (`ranks / 8`), the P-positions of one layer (bounded
/// by `ranks / 64` bytes: measured at most … of that up to 18×18), one carry
/// chunk, the ranking tables and 4 MiB for the rest. An upper bound for
/// planning, not a measurement.
pub fn window_memory(m: usize, n: usize, ranks: u64) -> u64 {
    let bitset = ranks.div_ceil(64).saturating_mul(8);
    let tables = ((m as u64 + 1) * (n as u64 + 1)).saturating_mul(24);
    bitset
        .saturating_add(ranks / 64)
        .saturating_add(8 * CARRY_CHUNK as u64)
        .saturating_add(tables)
        .saturating_add(4 << 20)
}

/// One thread's part of the window's marks: bit `y − lo` for rank `y` in
/// `lo..hi` (`lo` is the rank of a word boundary of the window).
struct Part<'a> {
    lo: u64,
    hi: u64,
    bits: &'a mut [u64],
}

impl Part<'_> {
    #[inline(always)]
    fn set(&mut self, y: u64) {
        debug_assert!(y >= self.lo && y < self.hi);
        let i = y - self.lo;
        self.bits[(i / 64) as usize] |= 1 << (i % 64);
    }

    #[inline(always)]
    fn get(&self, y: u64) -> bool {
        let i = y - self.lo;
        self.bits[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// Sets the ranks `a..b` clipped to the part.
    #[inline]
    fn set_range(&mut self, a: u64, b: u64) {
        let a = a.max(self.lo);
        let b = b.min(self.hi);
        if a >= b {
            return;
        }
        let (a, b) = (a - self.lo, b - self.lo);
        let (wa, wb) = ((a / 64) as usize, ((b - 1) / 64) as usize);
        let first = !0u64 << (a % 64);
        let last = !0u64 >> (63 - (b - 1) % 64);
        if wa == wb {
            self.bits[wa] |= first & last;
        } else {
            self.bits[wa] |= first;
            for w in &mut self.bits[wa + 1..wb] {
                *w = !0;
            }
            self.bits[wb] |= last;
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
    /// Memory: about [`window_memory`]`(m, n, end − start)` bytes.
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
        assert!(start <= end, "window {start}..{end} is reversed");
        assert!(
            end <= self.len,
            "window end {end} beyond the box's {}",
            self.len
        );
        let words = (end - start).div_ceil(64) as usize;
        let mut marks = vec![0u64; words];
        advise_huge_pages(&mut marks);
        let parts_n = threads.clamp(1, words.max(1));
        let mut parts: Vec<Part<'_>> = Vec::with_capacity(parts_n);
        {
            let mut rest: &mut [u64] = &mut marks;
            let mut w0 = 0usize;
            for k in 0..parts_n {
                let w1 = words * (k + 1) / parts_n;
                let (mine, tail) = rest.split_at_mut(w1 - w0);
                rest = tail;
                parts.push(Part {
                    lo: start + 64 * w0 as u64,
                    hi: (start + 64 * w1 as u64).min(end),
                    bits: mine,
                });
                w0 = w1;
            }
        }

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
            let carry = |part: &mut Part<'_>| {
                let mut q = vec![0u32; self.m];
                for &x in chunk {
                    self.unrank(x, &mut q);
                    self.mark_predecessors_in(x, &q, part);
                }
            };
            let carry = &carry;
            std::thread::scope(|sc| {
                let (first, others) = parts.split_first_mut().expect("one part at least");
                for p in others {
                    sc.spawn(move || carry(p));
                }
                carry(first);
            });
        }

        // Phase 2: inside the window, layer by layer.
        let sizes = self.m * self.n + 1;
        let layer_p: Vec<RwLock<Vec<u64>>> =
            (0..parts_n).map(|_| RwLock::new(Vec::new())).collect();
        let barrier = Barrier::new(parts_n);
        let layer_p = &layer_p;
        let barrier = &barrier;
        let work = move |k: usize, part: &mut Part<'_>| {
            let mut pos = vec![0u64; sizes];
            let mut pp = vec![0u64; sizes];
            let mut rows = vec![0u32; self.m];
            for s in 1..sizes {
                {
                    let mut mine = layer_p[k].write().expect("no thread panicked");
                    mine.clear();
                    let (lo, hi) = (part.lo, part.hi);
                    let mut seen = 0u64;
                    self.each_of_size(s as u32, lo, hi, &mut rows, &mut |y| {
                        seen += 1;
                        if !part.get(y) {
                            mine.push(y);
                        }
                    });
                    pos[s] = seen;
                    pp[s] = mine.len() as u64;
                }
                barrier.wait();
                for slot in layer_p {
                    let list = slot.read().expect("no thread panicked");
                    for &q in list.iter() {
                        if q + 1 >= part.hi {
                            break;
                        }
                        self.unrank(q, &mut rows);
                        self.mark_predecessors_in(q, &rows, part);
                    }
                }
                barrier.wait();
            }
            (pos, pp)
        };
        let counts: Vec<(Vec<u64>, Vec<u64>)> = std::thread::scope(|sc| {
            let work = &work;
            let mut handles = Vec::new();
            let (first, others) = parts.split_first_mut().expect("one part at least");
            for (k, p) in others.iter_mut().enumerate() {
                handles.push(sc.spawn(move || work(k + 1, p)));
            }
            let mut out = vec![work(0, first)];
            out.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("window thread panicked")),
            );
            out
        });
        drop(parts);

        let mut positions_by_size = vec![0u64; sizes];
        let mut p_by_size = vec![0u64; sizes];
        for (pos, pp) in &counts {
            for s in 0..sizes {
                positions_by_size[s] += pos[s];
                p_by_size[s] += pp[s];
            }
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

    /// Calls `f(rank)` for every staircase of `s` squares (s ≥ 1) whose rank
    /// lies in `lo..hi`, in ascending rank order. `rows` (length m) is
    /// scratch.
    fn each_of_size(&self, s: u32, lo: u64, hi: u64, rows: &mut [u32], f: &mut impl FnMut(u64)) {
        if lo >= hi || u64::from(s) > (self.m * self.n) as u64 {
            return;
        }
        self.each_of_size_from(0, self.n as u32, s, 0, lo, hi, rows, f);
    }

    /// Rows `k..m` with no row above `cap` and `rem` squares in all; `acc` is
    /// the rank of rows `0..k`.
    #[allow(clippy::too_many_arguments)]
    fn each_of_size_from(
        &self,
        k: usize,
        cap: u32,
        rem: u32,
        acc: u64,
        lo: u64,
        hi: u64,
        rows: &mut [u32],
        f: &mut impl FnMut(u64),
    ) {
        if rem == 0 {
            if acc >= lo && acc < hi {
                f(acc);
            }
            return;
        }
        let left = (self.m - k) as u32;
        if left == 1 {
            let y = acc + u64::from(rem);
            if y >= lo && y < hi {
                f(y);
            }
            return;
        }
        let vmin = rem.div_ceil(left);
        let vmax = cap.min(rem);
        for v in vmin..=vmax {
            let a = acc + self.term(k, v);
            if a >= hi {
                break;
            }
            if a + self.span(k + 1, v) <= lo {
                continue;
            }
            rows[k] = v;
            self.each_of_size_from(k + 1, v, rem - v, a, lo, hi, rows, f);
        }
    }

    /// Marks every predecessor of `q` (rank `x`) whose rank lies in the part.
    ///
    /// A predecessor R through the bite (i, j), j = q_i, agrees with q below
    /// row i, has R_i ∈ (j, q_{i−1}] (row 0: ≤ n), rows i+1..t (the rest of
    /// the run of rows equal to j in q) non-increasing in [j, R_i], and the
    /// rows from t on as in q.
    fn mark_predecessors_in(&self, x: u64, q: &[u32], part: &mut Part<'_>) {
        let (lo, hi) = (part.lo, part.hi);
        if hi <= x + 1 {
            return;
        }
        let m = self.m;
        let mut prefix = 0u64;
        for i in 0..m {
            let cap = if i == 0 { self.n as u32 } else { q[i - 1] };
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
                    part.set_range(prefix + self.term(i, 1), prefix + self.span(i, cap));
                } else {
                    let base = x - (self.colsum(j, t) - self.colsum(j, i));
                    let rest_min = self.colsum(j, t) - self.colsum(j, i + 1);
                    for ri in j + 1..=cap {
                        let acc = base + self.term(i, ri);
                        if acc + rest_min >= hi {
                            break;
                        }
                        let rest_max = self.colsum(ri, t) - self.colsum(ri, i + 1);
                        if acc + rest_max < lo {
                            continue;
                        }
                        self.raise_run_in(i + 1, t, j, ri, acc, part);
                    }
                }
            }
            prefix += self.term(i, q[i]);
        }
    }

    /// Chooses rows k..t in [j, top], non-increasing, and marks each result
    /// in the part; `acc` holds the rank of every other row.
    fn raise_run_in(&self, k: usize, t: usize, j: u32, top: u32, acc: u64, part: &mut Part<'_>) {
        if k == t {
            if acc >= part.lo && acc < part.hi {
                part.set(acc);
            }
            return;
        }
        if t == self.m {
            if j == 0 {
                // Rows k.. free in [0, top]: one interval.
                part.set_range(acc, acc + self.span(k, top));
                return;
            }
            if k + 1 == t {
                // The last row alone: term(m−1, v) = v, consecutive ranks.
                part.set_range(acc + u64::from(j), acc + u64::from(top) + 1);
                return;
            }
        }
        let rest_min = self.colsum(j, t) - self.colsum(j, k + 1);
        for v in j..=top {
            let a = acc + self.term(k, v);
            if a + rest_min >= part.hi {
                break;
            }
            let rest_max = self.colsum(v, t) - self.colsum(v, k + 1);
            if a + rest_max < part.lo {
                continue;
            }
            self.raise_run_in(k + 1, t, j, v, a, part);
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
        assert!(window_memory(17, 17, 2_333_606_220) >= 2_333_606_220 / 8);
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
