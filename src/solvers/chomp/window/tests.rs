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

/// [`EarlierP`] as a box's earlier parts answer it: only the P-positions
/// inside the ranges asked for, which must be ascending, disjoint and below
/// the window (so a range the carry forgot shows as a wrong P-position).
struct Strict<'a> {
    p: &'a [u64],
    start: u64,
}

impl<'a> Strict<'a> {
    fn new(p: &'a [u64], start: u64) -> Self {
        Strict { p, start }
    }
}

impl EarlierP for Strict<'_> {
    fn each_in(&mut self, ranges: &[Range<u64>], found: &mut dyn FnMut(u64)) {
        let mut last_end = 0;
        for r in ranges {
            assert!(
                r.start >= last_end && r.start <= r.end && r.end <= self.start,
                "{ranges:?}"
            );
            last_end = r.end;
            let a = self.p.partition_point(|&x| x < r.start);
            for &x in self.p[a..].iter().take_while(|&&x| x < r.end) {
                found(x);
            }
        }
    }
}

/// Marks recorded one by one within `lo..hi` (ranges expanded).
struct Record(std::cell::RefCell<Vec<u64>>, u64, u64);

impl Record {
    /// Records every rank.
    fn all() -> Record {
        Record::within(0, u64::MAX)
    }

    /// Records the ranks `lo..hi`; a single mark outside them panics.
    fn within(lo: u64, hi: u64) -> Record {
        Record(Default::default(), lo, hi)
    }
}

impl Marks for Record {
    fn lo(&self) -> u64 {
        self.1
    }
    fn hi(&self) -> u64 {
        self.2
    }
    fn set_unclipped(&self, y: u64) {
        assert!(
            y >= self.1 && y < self.2,
            "mark {y} outside {}..{}",
            self.1,
            self.2
        );
        self.0.borrow_mut().push(y);
    }
    fn set_range(&self, a: u64, b: u64) {
        self.0.borrow_mut().extend(a.max(self.1)..b.min(self.2));
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
                        let rec = Record::all();
                        b.raise_run_all(k, t, j, top, rest, &rec);
                        let mut got = rec.0.into_inner();
                        got.sort_unstable();
                        assert_eq!(got, want, "{m}x{n} all k {k} t {t} j {j} top {top}");
                        if t < m {
                            let rec = Record::all();
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
                                    &mut Strict::new(&earlier, s0),
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
                            &mut Strict::new(&earlier, c[0]),
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
    let rec = Record::all();
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
fn spans_are_the_lengths_of_prefix_intervals() {
    let b = ChompBox::new(5, 6).unwrap();
    assert_eq!(b.span(0, 6), b.len());
    assert_eq!(b.span(5, 3), 1);
    // Staircases with r₀ = 4: ranks term(0, 4) .. term(0, 5) = span(1, 4) of them.
    assert_eq!(b.term(0, 5) - b.term(0, 4), b.span(1, 4));
}
