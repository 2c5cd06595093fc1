//! How far can a marking solver go on a wide Chomp box? A measurement, not a
//! part of the pipeline (BENCHMARKS.md, "Chomp boxes: wide boxes").
//!
//! A marking solver (`ChompBox::solve_window`) scans the ranks upwards and,
//! at every P-position, marks each predecessor (each staircase with a bite
//! into it): one mark per winning bite of every N-position. Some bites give
//! whole intervals of ranks, marked a word at a time; the rest are single
//! marks, each a memory access. Which bites give intervals depends on the
//! rank order:
//! - the solver's order (row 0 most significant): a bite at column 0 of the
//!   first empty row, and bites whose run of equal rows reaches the last row
//!   (the last row then takes consecutive lengths);
//! - the reversed order (the last row most significant, row 0 least): a bite
//!   at row 0 (with its run of equal rows raised, the predecessors are every
//!   staircase after the P-position that shares its rows after the run).
//!
//! This program solves an m×n box in the reversed order with plain marks
//! (one thread, one bitset of the whole box), checks its P-positions against
//! `ChompBox::solve` on request, and counts the N-positions that have **no**
//! winning bite of an interval kind in each order: any marking solver in that
//! order must make at least that many single marks, however it schedules
//! them. Arguments: `m n [check]` (e.g. `cargo run --release --example
//! chomp_mark_bound -- 10 30`); memory: four bitsets of C(m+n, m) bits.
use gametables::games::chomp::fullcheck::rules::binomial;
use gametables::solvers::chomp::ChompBox;
use std::time::Instant;

/// The reversed rank order of an m×n box: staircases ordered by their last
/// row, then the row before, …, row 0 last. The rank is a sum of one term
/// per row, `rank = Σ_j h[j][r_j]`, with `h[j][v] = Σ_{v' < v} C(n − v' +
/// j − 1, j)` (row 0: `h[0][v] = v`).
struct Reversed {
    m: usize,
    n: usize,
    h: Vec<Vec<u64>>,
    /// `hh[j][v] = Σ_{l ≤ j} h[l][v]`: rank offset of rows 0..=j all equal to v.
    hh: Vec<Vec<u64>>,
    /// `size[j][v] = C(n − v + j + 1, j + 1)`: staircases of rows 0..=j, all ≥ v.
    size: Vec<Vec<u64>>,
    len: u64,
}

impl Reversed {
    fn new(m: usize, n: usize) -> Reversed {
        let binom = |a, b| binomial(a, b).expect("binomial beyond u64");
        let (m64, n64) = (m as u64, n as u64);
        let mut h = vec![vec![0u64; n + 1]; m];
        let mut hh = vec![vec![0u64; n + 1]; m];
        let mut size = vec![vec![0u64; n + 1]; m];
        for j in 0..m {
            for v in 0..=n {
                let (j64, v64) = (j as u64, v as u64);
                h[j][v] = if j == 0 {
                    v64
                } else {
                    (0..v64).map(|w| binom(n64 - w + j64 - 1, j64)).sum()
                };
                hh[j][v] = h[j][v] + if j > 0 { hh[j - 1][v] } else { 0 };
                size[j][v] = binom(n64 - v64 + j64 + 1, j64 + 1);
            }
        }
        let len = binom(m64 + n64, m64);
        Reversed {
            m,
            n,
            h,
            hh,
            size,
            len,
        }
    }

    fn rank(&self, r: &[u32]) -> u64 {
        r.iter()
            .enumerate()
            .map(|(j, &v)| self.h[j][v as usize])
            .sum()
    }

    /// Rows of rank `x` into `r`, from the rows of a smaller rank already in
    /// `r` with `acc[j] = Σ_{l > j} h[l][r_l]`.
    fn unrank_after(&self, x: u64, r: &mut [u32], acc: &mut [u64]) {
        let m = self.m;
        // The deepest level j whose staircases (rows after j as in r) hold x.
        let mut j = 0;
        while j + 1 < m {
            let below = r[j + 1] as usize;
            if x < acc[j] + self.hh[j][below] + self.size[j][below] {
                break;
            }
            j += 1;
        }
        let mut rest = x - acc[j];
        for jx in (0..=j).rev() {
            let lo = if jx + 1 < m { r[jx + 1] as usize } else { 0 };
            let mut v = lo;
            while v < self.n && self.hh[jx][v + 1] <= rest {
                v += 1;
            }
            r[jx] = v as u32;
            acc[jx] = x - rest;
            rest -= self.h[jx][v];
        }
    }
}

/// A bitset of one bit per rank.
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: u64) -> Bits {
        Bits(vec![0; len.div_ceil(64) as usize])
    }
    #[inline]
    fn set(&mut self, x: u64) {
        self.0[(x >> 6) as usize] |= 1 << (x & 63);
    }
    fn get(&self, x: u64) -> bool {
        self.0[(x >> 6) as usize] >> (x & 63) & 1 == 1
    }
    /// Sets ranks `lo..hi`.
    fn set_range(&mut self, lo: u64, hi: u64) {
        if lo >= hi {
            return;
        }
        let (wl, wh) = ((lo >> 6) as usize, ((hi - 1) >> 6) as usize);
        let (ml, mh) = (!0u64 << (lo & 63), !0u64 >> (63 - ((hi - 1) & 63)));
        if wl == wh {
            self.0[wl] |= ml & mh;
        } else {
            self.0[wl] |= ml;
            self.0[wl + 1..wh].fill(!0);
            self.0[wh] |= mh;
        }
    }
}

/// Where the marks go: the marks, and the N-positions reached by an
/// interval-kind bite in the solver's order (`solver`) and in the reversed
/// order (`reversed`).
struct Sinks<'a> {
    rv: &'a Reversed,
    marks: Bits,
    solver: Bits,
    reversed: Bits,
    count: u64,
}

impl Sinks<'_> {
    /// Marks rank `y`; `solver`: an interval kind in the solver's order.
    #[inline]
    fn mark(&mut self, y: u64, solver: bool) {
        self.marks.set(y);
        self.count += 1;
        if solver {
            self.solver.set(y);
        }
    }

    /// Marks rows `j..e` (j < e) raised to non-increasing lengths in
    /// `[c, top]`, `acc` the rank of every other row.
    fn raise(&mut self, j: usize, e: usize, c: usize, top: usize, acc: u64, solver: bool) {
        for v in c..=top {
            let y = acc + self.rv.h[j][v];
            if j + 1 == e {
                self.mark(y, solver);
            } else {
                self.raise(j + 1, e, c, v, y, solver);
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: chomp_mark_bound M N [check]");
        std::process::exit(2);
    }
    let m: usize = args[0].parse().expect("M: a number of rows");
    let n: usize = args[1].parse().expect("N: a number of columns");
    let check = args.iter().any(|a| a == "check");
    let rv = Reversed::new(m, n);
    assert_eq!(
        rv.rank(&vec![n as u32; m]) + 1,
        rv.len,
        "ranks not a bijection"
    );
    let t0 = Instant::now();
    let mut s = Sinks {
        rv: &rv,
        marks: Bits::new(rv.len),
        solver: Bits::new(rv.len),
        reversed: Bits::new(rv.len),
        count: 0,
    };
    let mut p_bits = Bits::new(rv.len);
    s.marks.set(0); // the empty board: never a P-position
    let (mut r, mut acc) = (vec![0u32; m], vec![0u64; m]);
    let mut p_count = 0u64;
    let words = s.marks.0.len();
    let mut w = 0;
    while w < words {
        let word = s.marks.0[w];
        let b = (!word).trailing_zeros() as u64;
        let x = 64 * w as u64 + b;
        if word == !0 || x >= rv.len {
            w += 1;
            continue;
        }
        // x is a P-position: record it, then mark its predecessors.
        s.marks.0[w] |= 1 << b;
        p_bits.set(x);
        p_count += 1;
        rv.unrank_after(x, &mut r, &mut acc);
        let mut i = 0;
        while i < m {
            let c = r[i];
            let mut e = i + 1;
            while e < m && r[e] == c {
                e += 1;
            }
            // A bite at (i, c) and its run of rows i..e equal to c.
            if i == 0 {
                // Every later staircase that shares rows e.. with x.
                let below = if e < m { r[e] as usize } else { 0 };
                let end = acc[e - 1] + rv.hh[e - 1][below] + rv.size[e - 1][below];
                s.marks.set_range(x + 1, end);
                s.reversed.set_range(x + 1, end);
                s.count += end - x - 1;
            } else {
                let cu = c as usize;
                let base = x - (i..e).map(|j| rv.h[j][cu]).sum::<u64>();
                for v in cu + 1..=r[i - 1] as usize {
                    let y = base + rv.h[i][v];
                    if i + 1 == e {
                        s.mark(y, e == m);
                    } else {
                        s.raise(i + 1, e, cu, v, y, e == m);
                    }
                }
            }
            i = e;
            if c == 0 {
                break;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let (mut single_solver, mut single_reversed, mut single_both) = (0u64, 0u64, 0u64);
    for x in 1..rv.len {
        if p_bits.get(x) {
            continue;
        }
        let (a, b) = (s.solver.get(x), s.reversed.get(x));
        single_solver += u64::from(!a);
        single_reversed += u64::from(!b);
        single_both += u64::from(!a && !b);
    }
    let n_count = rv.len - 1 - p_count;
    let pct = |k: u64| 100.0 * k as f64 / n_count as f64;
    println!(
        "{m}x{n}: {} staircases, {p_count} P-positions, {n_count} N-positions, {} marks \
         ({:.2} per N-position); reversed-order marking solver: {secs:.2} s on one thread",
        rv.len,
        s.count,
        s.count as f64 / n_count as f64
    );
    println!(
        "N-positions without an interval-kind winning bite: solver's order {single_solver} \
         ({:.1} %), reversed order {single_reversed} ({:.1} %), in neither order {single_both} ({:.1} %)",
        pct(single_solver),
        pct(single_reversed),
        pct(single_both)
    );
    if check {
        let b = ChompBox::new(m, n).expect("box");
        let whole = b.solve();
        assert_eq!(whole.count(), p_count, "P-position counts differ");
        let (mut rows, mut acc2) = (vec![0u32; m], vec![0u64; m]);
        for x in (1..rv.len).filter(|&x| p_bits.get(x)) {
            rv.unrank_after(x, &mut rows, &mut acc2);
            assert!(
                whole.is_p(b.rank_rows(&rows)),
                "{rows:?} is not a P-position"
            );
        }
        println!("check: the same {p_count} P-positions as ChompBox::solve");
    }
}
