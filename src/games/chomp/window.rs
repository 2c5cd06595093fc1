//! A window of box ranks solved on its own: the P-positions of ranks
//! `start..end` of an m×n box, given the P-positions below `start`.
//!
//! Every bite lowers the rank (see [`ChompBox`]), so a position in the window
//! is an N-position exactly when some P-position below it has it as a
//! predecessor: either a P-position below `start` (the *carry*) or one inside
//! the window below it. The window is solved in two phases:
//!
//! 1. **Carry.** For every earlier P-position `q`, mark its predecessors whose
//!    rank lies in the window. The predecessors through a bite at row `i` fix
//!    row `i` and raise the run of rows of `q` equal to `q_i` after it; with
//!    the rows in lexicographic order (which is the rank order), each choice
//!    of a prefix leaves an interval of ranks, so the enumeration is pruned to
//!    the window.
//! 2. **Inside.** Scan the window upwards; an unmarked rank is a P-position
//!    and marks its predecessors inside the window.
//!
//! Memory: two bitsets of `end − start` bits (marks and P-positions) plus the
//! ranking tables; see [`window_memory`].

use super::{Bite, ChompBox, ChompError, Staircase};

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
/// m×n box: two bitsets of `ranks` bits, the ranking tables and 1 MiB for
/// the rest. An upper bound for planning, not a measurement.
pub fn window_memory(m: usize, n: usize, ranks: u64) -> u64 {
    let bitset = ranks.div_ceil(64).saturating_mul(8);
    let tables = ((m as u64 + 1) * (n as u64 + 1)).saturating_mul(16);
    bitset
        .saturating_mul(2)
        .saturating_add(tables)
        .saturating_add(1 << 20)
}

/// Marks of one window: bit `y − lo` for rank `y` in `lo..hi`.
struct Marks<'a> {
    lo: u64,
    hi: u64,
    bits: &'a mut [u64],
}

impl Marks<'_> {
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
}

impl ChompBox {
    /// Solves ranks `start..end` given every P-position below `start`, in
    /// ascending order, from `earlier_p`.
    ///
    /// `threads` is the number of threads the solver may use (0 counts as 1);
    /// the result does not depend on it. Chained windows
    /// (`0..a`, `a..b`, …, each given the P-positions of all windows before)
    /// give the same P-positions as [`ChompBox::solve`].
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
        let _ = threads;
        let words = (end - start).div_ceil(64) as usize;
        let mut mark_bits = vec![0u64; words];
        let mut marks = Marks {
            lo: start,
            hi: end,
            bits: &mut mark_bits,
        };
        let mut q = vec![0u32; self.m];
        let mut last = None;
        for x in earlier_p {
            assert!(
                x < start,
                "earlier P-position {x} not below the window start {start}"
            );
            assert!(last < Some(x), "earlier P-positions not ascending at {x}");
            last = Some(x);
            self.unrank(x, &mut q);
            self.mark_predecessors_in(x, &q, &mut marks);
        }

        let sizes = self.m * self.n + 1;
        let mut out = BoxWindow {
            start,
            end,
            p_bits: vec![0u64; words],
            positions_by_size: vec![0; sizes],
            p_by_size: vec![0; sizes],
        };
        let first = start.max(1);
        if first >= end {
            return out;
        }
        let mut rows = vec![0u32; self.m];
        self.unrank(first, &mut rows);
        let mut x = first;
        loop {
            let s = rows.iter().map(|&r| r as usize).sum::<usize>();
            out.positions_by_size[s] += 1;
            if !marks.get(x) {
                let i = x - start;
                out.p_bits[(i / 64) as usize] |= 1 << (i % 64);
                out.p_by_size[s] += 1;
                self.mark_predecessors_in(x, &rows, &mut marks);
            }
            x += 1;
            if x == end {
                break;
            }
            self.advance(&mut rows);
        }
        out
    }

    /// Marks every predecessor of `q` (rank `x`) whose rank lies in
    /// `marks.lo..marks.hi`, pruning by rank interval.
    ///
    /// A predecessor R through the bite (i, j), j = q_i, agrees with q below
    /// row i, has R_i ∈ (j, q_{i−1}] (row 0: ≤ n), rows i+1..t (the rest of
    /// the run of rows equal to j in q) non-increasing in [j, R_i], and the
    /// rows from t on as in q.
    fn mark_predecessors_in(&self, x: u64, q: &[u32], marks: &mut Marks<'_>) {
        let (lo, hi) = (marks.lo, marks.hi);
        if hi <= x + 1 {
            return;
        }
        for i in 0..self.m {
            let j = q[i];
            if i > 0 && q[i - 1] == j {
                continue;
            }
            let upper = if i == 0 { self.n as u32 } else { q[i - 1] };
            if upper <= j {
                continue;
            }
            let mut t = i + 1;
            while t < self.m && q[t] == j {
                t += 1;
            }
            let base = x - (self.colsum(j, t) - self.colsum(j, i));
            let rest_min = self.colsum(j, t) - self.colsum(j, i + 1);
            for ri in j + 1..=upper {
                let acc = base + self.term(i, ri);
                if acc + rest_min >= hi {
                    break;
                }
                let rest_max = self.colsum(ri, t) - self.colsum(ri, i + 1);
                if acc + rest_max < lo {
                    continue;
                }
                self.raise_run_in(i + 1, t, j, ri, acc, marks);
            }
        }
    }

    /// Chooses rows k..t in [j, top], non-increasing, and marks each result
    /// in the window; `acc` holds the rank of every other row.
    fn raise_run_in(&self, k: usize, t: usize, j: u32, top: u32, acc: u64, marks: &mut Marks<'_>) {
        if k == t {
            if acc >= marks.lo && acc < marks.hi {
                marks.set(acc);
            }
            return;
        }
        let rest_min = self.colsum(j, t) - self.colsum(j, k + 1);
        for v in j..=top {
            let a = acc + self.term(k, v);
            if a + rest_min >= marks.hi {
                break;
            }
            let rest_max = self.colsum(v, t) - self.colsum(v, k + 1);
            if a + rest_max < marks.lo {
                continue;
            }
            self.raise_run_in(k + 1, t, j, v, a, marks);
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
    fn memory_estimate_covers_two_bitsets() {
        assert!(window_memory(17, 17, 2_333_606_220) >= 2 * 2_333_606_220 / 8);
    }
}
