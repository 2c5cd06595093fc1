//! Full check of `chomp-census`: every position's P/N state and its
//! one/several winning-bite counter.
//!
//! Positions of `s` squares are the partitions of `s` (rows `r₀ ≥ r₁ ≥ … > 0`,
//! the poison in row 0), ranked in ascending lexicographic order of their
//! rows: `rank = Σ_k P(n_k, r_k − 1)` with `n_k = r_k + r_{k+1} + …` and
//! `P(n, c)` the partitions of `n` into parts `≤ c` (docs/design/job-kinds.md,
//! `chomp-census`; the table is built here again from
//! `P(n, c) = P(n, c−1) + P(n−c, c)`).
//!
//! **Check.** All shards are read first (their P-bits, 1 bit per position).
//! Then every stored P-position `q` pushes to its predecessors of every
//! larger size (un-bites, [`super::rules`]' rule with unbounded rows: a bite
//! `(i, j)` at the start of a run of rows of `q` equal to `j`, the run raised
//! by a partition of the missing squares, row `i` above `j` and at most
//! `q_{i−1}`; the zero rows after `q` are a run of any length), bumping a
//! saturating counter 0 / 1 / several per position (two bitsets per thread,
//! combined). The counter of a position is then its number of bites into a
//! stored P-position, and the rule is checked everywhere: P iff the counter
//! is 0; each job's `one` and `several` counts equal the counters'. Work:
//! the winning bites, as for the solver. Memory: 1 bit per position for
//! the P-bits and 2 per position and thread for the counters (census-80:
//! 123 M positions, ≈ 77 MB with two threads).

use super::super::layout::CensusMeta;
use crate::pipeline::error::{Error, Result};

use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, bit, group, le_u64s};

/// The `chomp-census` checker.
pub struct CensusChecker;

/// Largest size handled (`p(400)` still fits a `u64`).
const MAX_SIZE: usize = 400;

/// `P(n, c)`: partitions of `n` into parts `≤ c`, for `n, c ≤ n_max`.
struct Parts {
    w: usize,
    t: Vec<u64>,
}

impl Parts {
    fn new(n_max: usize) -> Parts {
        let w = n_max + 1;
        let mut t = vec![0u64; w * w];
        t[..w].fill(1);
        for n in 1..w {
            for c in 1..w {
                t[n * w + c] = t[n * w + c - 1] + if c <= n { t[(n - c) * w + c] } else { 0 };
            }
        }
        Parts { w, t }
    }
    /// `P(n, c)`, `c` clamped to `n_max`; `P(n, −1)` is never asked.
    #[inline(always)]
    fn p(&self, n: usize, c: usize) -> u64 {
        self.t[n * self.w + c.min(self.w - 1)]
    }
    /// `p(s)`, the positions of size `s`.
    fn count(&self, s: usize) -> u64 {
        self.p(s, s)
    }
    fn rank(&self, rows: &[u32]) -> u64 {
        let mut n: usize = rows.iter().map(|&r| r as usize).sum();
        let mut x = 0;
        for &r in rows {
            x += self.p(n, r as usize - 1);
            n -= r as usize;
        }
        x
    }
    fn unrank(&self, s: usize, mut x: u64, rows: &mut Vec<u32>) {
        rows.clear();
        let (mut n, mut cap) = (s, s);
        while n > 0 {
            // Largest r ≤ min(cap, n) with P(n, r − 1) ≤ x.
            let mut r = cap.min(n);
            while self.p(n, r - 1) > x {
                r -= 1;
            }
            x -= self.p(n, r - 1);
            rows.push(r as u32);
            n -= r;
            cap = r;
        }
    }
}

/// Saturating counters 0 / 1 / several for every position of every size.
struct Counters {
    once: Vec<Vec<u64>>,
    more: Vec<Vec<u64>>,
}

impl Counters {
    fn new(pr: &Parts, n_max: usize) -> Counters {
        let words = |s: usize| pr.count(s).div_ceil(64) as usize;
        Counters {
            once: (0..=n_max).map(|s| vec![0; words(s)]).collect(),
            more: (0..=n_max).map(|s| vec![0; words(s)]).collect(),
        }
    }
    #[inline]
    fn bump(&mut self, s: usize, x: u64) {
        let (w, b) = ((x / 64) as usize, 1u64 << (x % 64));
        self.more[s][w] |= self.once[s][w] & b;
        self.once[s][w] |= b;
    }
    fn absorb(&mut self, o: Counters) {
        for s in 0..self.once.len() {
            for w in 0..self.once[s].len() {
                self.more[s][w] |= o.more[s][w] | (self.once[s][w] & o.once[s][w]);
                self.once[s][w] |= o.once[s][w];
            }
        }
    }
}

/// Every predecessor (of size ≤ `n_max`) of the position `q`: `f(size, rank)`.
fn for_each_unbite(pr: &Parts, n_max: usize, q: &[u32], f: &mut impl FnMut(usize, u64)) {
    let t: usize = q.iter().map(|&r| r as usize).sum();
    let m = q.len();
    // n_k(q) and the rank terms of q.
    let mut nk = vec![0usize; m + 1];
    for k in (0..m).rev() {
        nk[k] = nk[k + 1] + q[k] as usize;
    }
    let term: Vec<u64> = (0..m).map(|k| pr.p(nk[k], q[k] as usize - 1)).collect();
    let mut tail = vec![0u64; m + 1]; // Σ_{k ≥ i} term
    for k in (0..m).rev() {
        tail[k] = tail[k + 1] + term[k];
    }
    let mut i = 0;
    while i <= m {
        // The run starting at i: rows equal to j (the zero rows when i = m).
        let j = if i < m { q[i] } else { 0 };
        let mut e = i + 1;
        while e < m && q[e] == j {
            e += 1;
        }
        let e = if i == m { usize::MAX } else { e };
        let cap = if i == 0 {
            usize::MAX
        } else {
            q[i - 1] as usize
        };
        if (i, j) != (0, 0) && cap > j as usize {
            let run = Run {
                pr,
                q,
                nk: &nk,
                tail: &tail,
                e,
                j: j as usize,
                rest: if i < m { tail[e.min(m)] } else { 0 },
            };
            for d in 1..=n_max - t {
                let prefix: u64 = (0..i).map(|k| pr.p(nk[k] + d, q[k] as usize - 1)).sum();
                let top = (cap - j as usize).min(d);
                run.raise(i, d, top, prefix, &mut |x| f(t + d, x));
            }
        }
        if i == m {
            break;
        }
        i = e;
    }
}

/// One run of equal rows being raised.
struct Run<'a> {
    pr: &'a Parts,
    q: &'a [u32],
    nk: &'a [usize],
    /// `tail[k]`: Σ of `q`'s rank terms of rows `≥ k`.
    tail: &'a [u64],
    /// One past the run's last row (`usize::MAX` for the zero rows).
    e: usize,
    j: usize,
    /// Rank terms of the rows after the run.
    rest: u64,
}

impl Run<'_> {
    /// Raises rows `k, k+1, …` of the run by a partition of `rem` squares
    /// into parts `≤ top` (row `k` at least 1).
    fn raise(&self, k: usize, rem: usize, top: usize, acc: u64, f: &mut impl FnMut(u64)) {
        let rows_left = self.e.saturating_sub(k);
        let least = rem.div_ceil(rows_left.max(1)).max(1);
        let n_here = if k < self.q.len() { self.nk[k] } else { 0 };
        for v in least..=top.min(rem) {
            let a = acc + self.pr.p(n_here + rem, self.j + v - 1);
            if v == rem {
                // The run's later rows keep their squares.
                let end = self.e.min(self.q.len());
                let unchanged = if k + 1 < end {
                    self.tail[k + 1] - self.tail[end]
                } else {
                    0
                };
                f(a + unchanged + self.rest);
            } else if k + 1 < self.e {
                self.raise(k + 1, rem - v, v, a, f);
            }
        }
    }
}

impl Checker for CensusChecker {
    crate::pipeline::fullcheck::checks_kind!("chomp-census");

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let run = cx.run();
        let n_max = run
            .params()
            .get("n_max")
            .and_then(|v| v.as_integer())
            .filter(|&n| (1..=MAX_SIZE as i64).contains(&n))
            .ok_or_else(|| Error::job("chomp-census", "no usable `n_max` parameter"))?
            as usize;
        let pr = Parts::new(n_max);
        let total: u64 = (1..=n_max).map(|s| pr.count(s)).sum();
        cx.set_total(total);
        let stored = read_stored(cx, &pr, n_max);
        let c = bites_from_p_positions(cx, &pr, n_max, &stored.pbits);
        let mut checked = 0u64;
        for (name, s, a, b, meta) in &stored.jobs {
            cx.job(name);
            if !stored.readable[*s] {
                continue;
            }
            compare_job(cx, &pr, &stored.pbits[*s], &c, name, (*s, *a, *b), meta);
            checked += b - a;
            cx.advance(b - a);
        }
        debug_assert_eq!(pr.rank(&[1]), 0);
        Ok(vec![Coverage {
            what:
                "positions' P/N state and one/several winning-bite counts (P iff no bite reaches P)"
                    .into(),
            stored: total,
            checked,
        }])
    }
}

/// One range job of the run: name, size, ranks `a..b` and its meta.
type StoredJob = (String, usize, u64, u64, CensusMeta);

/// The run's stored P-bits of every size, assembled from its range jobs,
/// with each job and whether every job of a size could be read (and the
/// jobs cover every rank of it).
struct Stored {
    pbits: Vec<Vec<u64>>,
    jobs: Vec<StoredJob>,
    readable: Vec<bool>,
}

/// Reads every range job's shard, reporting what is malformed.
fn read_stored(cx: &Ctx, pr: &Parts, n_max: usize) -> Stored {
    // The stored P-bits of every size, assembled from the range jobs.
    let mut pbits: Vec<Vec<u64>> = (0..=n_max)
        .map(|s| vec![0u64; pr.count(s).div_ceil(64) as usize])
        .collect();
    let mut jobs = Vec::new();
    let mut readable = vec![true; n_max + 1];
    let mut covered: Vec<u64> = vec![0; n_max + 1];
    for job in cx.run().jobs() {
        cx.job(&job.name);
        let get = |k: &str| job.params.get(k).and_then(|v| v.as_integer());
        let (Some(s), Some(a), Some(b)) = (get("size"), get("rank_start"), get("rank_end")) else {
            cx.bad(&job.name, "parameters", "no size/rank_start/rank_end");
            continue;
        };
        let (s, a, b) = (s as usize, a as u64, b as u64);
        if s == 0 || s > n_max || a > b || b > pr.count(s) {
            cx.bad(&job.name, "parameters", format!("size {s} ranks {a}..{b}"));
            continue;
        }
        covered[s] += b - a;
        let Some(shard) = cx.load(&job.name) else {
            readable[s] = false;
            continue;
        };
        let meta: Option<CensusMeta> = shard.meta().ok();
        let bits = shard.section("p-positions").ok().and_then(le_u64s);
        let (Some(meta), Some(bits)) = (meta, bits) else {
            cx.bad(
                &job.name,
                "shard",
                "meta or p-positions missing or malformed",
            );
            readable[s] = false;
            continue;
        };
        if bits.len() as u64 != (b - a).div_ceil(64)
            || ((b - a) % 64 != 0 && bits.last().is_some_and(|w| w >> ((b - a) % 64) != 0))
        {
            cx.bad(&job.name, "p-positions", format!("not {} bits", b - a));
            readable[s] = false;
            continue;
        }
        let p: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
        if (meta.size as usize, meta.rank_start, meta.rank_end, meta.p) != (s, a, b, p)
            || meta.p + meta.one + meta.several != b - a
        {
            cx.bad(
                &job.name,
                "meta",
                format!(
                    "says size {} ranks {}..{} with P {} one {} several {}; the job is size {s} ranks {a}..{b} with {p} P-bits",
                    meta.size, meta.rank_start, meta.rank_end, meta.p, meta.one, meta.several
                ),
            );
        }
        for i in 0..b - a {
            if bit(&bits, i) {
                let x = a + i;
                pbits[s][(x / 64) as usize] |= 1 << (x % 64);
            }
        }
        jobs.push((job.name.clone(), s, a, b, meta));
    }
    for s in 1..=n_max {
        if covered[s] != pr.count(s) {
            cx.bad(
                "plan",
                format!("size {s}"),
                format!(
                    "the jobs cover {} of its {} positions",
                    covered[s],
                    pr.count(s)
                ),
            );
            readable[s] = false;
        }
    }
    Stored {
        pbits,
        jobs,
        readable,
    }
}

/// Marks every position one bite above a stored P-position (of sizes
/// < n_max), on all threads: a position is P iff no mark reaches it.
fn bites_from_p_positions(cx: &Ctx, pr: &Parts, n_max: usize, pbits: &[Vec<u64>]) -> Counters {
    // Push from every stored P-position (of sizes < n_max).
    cx.job("winning bites from every P-position");
    let ps: Vec<(usize, u64)> = (1..n_max)
        .flat_map(|s| {
            let len = pr.count(s);
            let bits = &pbits[s];
            (0..len).filter(move |&x| bit(bits, x)).map(move |x| (s, x))
        })
        .collect();
    let threads = cx.threads().min(ps.len().max(1));
    let mut parts: Vec<Counters> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let ps = &ps;
                sc.spawn(move || {
                    let mut c = Counters::new(pr, n_max);
                    let mut rows = Vec::new();
                    for &(s, x) in ps.iter().skip(t).step_by(threads) {
                        pr.unrank(s, x, &mut rows);
                        for_each_unbite(pr, n_max, &rows, &mut |s2, y| c.bump(s2, y));
                    }
                    c
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("census thread"))
            .collect()
    });
    let mut c = parts.pop().expect("one thread at least");
    for o in parts {
        c.absorb(o);
    }
    c
}

/// Compares one job's ranks `a..b` of size `s` with the marks: P iff no
/// bite reaches a P-position, and the meta's one/several counts.
fn compare_job(
    cx: &Ctx,
    pr: &Parts,
    pbits: &[u64],
    c: &Counters,
    name: &str,
    (s, a, b): (usize, u64, u64),
    meta: &CensusMeta,
) {
    let mut rows = Vec::new();
    let (mut one, mut several) = (0u64, 0u64);
    for x in a..b {
        let p = bit(pbits, x);
        let (o, m) = (bit(&c.once[s], x), bit(&c.more[s], x));
        one += u64::from(o && !m);
        several += u64::from(m);
        if p == o {
            pr.unrank(s, x, &mut rows);
            let pos = format!(
                "{} (size {s}, rank {x})",
                rows.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            );
            if p {
                cx.bad(
                    name,
                    pos,
                    "stored as a P-position, but a bite leads to a P-position",
                );
            } else {
                cx.bad(
                    name,
                    pos,
                    "stored as an N-position, but no bite leads to a P-position",
                );
            }
        }
    }
    if (meta.one, meta.several) != (one, several) {
        cx.bad(
            name,
            format!("size {s} ranks {a}..{b}"),
            format!(
                "meta counts {} with one winning bite and {} with several; the bites give {} and {}",
                group(meta.one),
                group(meta.several),
                group(one),
                group(several)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Partitions ranked densely in lexicographic order; `p(60)` positions
    /// of 60 squares and 6,639,348 of at most 60 (the sen-ltd Chomp article).
    #[test]
    fn partition_ranks() {
        let pr = Parts::new(60);
        assert_eq!((1..=60).map(|s| pr.count(s)).sum::<u64>(), 6_639_348);
        let mut rows = Vec::new();
        for s in 1..=12 {
            let mut prev: Option<Vec<u32>> = None;
            for x in 0..pr.count(s) {
                pr.unrank(s, x, &mut rows);
                assert_eq!(pr.rank(&rows), x);
                assert_eq!(rows.iter().sum::<u32>() as usize, s);
                if let Some(p) = &prev {
                    assert!(p < &rows, "{p:?} !< {rows:?}");
                }
                prev = Some(rows.clone());
            }
        }
    }

    /// Un-bites are the bites read backwards: for every position of ≤ 14
    /// squares, its parents by un-bite are exactly the positions with a
    /// bite into it, once per bite.
    #[test]
    fn unbites_are_the_bites_reversed() {
        let n_max = 14;
        let pr = Parts::new(n_max);
        let mut forward: std::collections::BTreeMap<(usize, u64), Vec<(usize, u64)>> =
            Default::default();
        let mut rows = Vec::new();
        for s in 1..=n_max {
            for x in 0..pr.count(s) {
                pr.unrank(s, x, &mut rows);
                for i in 0..rows.len() {
                    for j in u32::from(i == 0)..rows[i] {
                        let child: Vec<u32> = rows
                            .iter()
                            .enumerate()
                            .map(|(k, &r)| if k >= i { r.min(j) } else { r })
                            .filter(|&r| r > 0)
                            .collect();
                        let cs: usize = child.iter().map(|&r| r as usize).sum();
                        forward
                            .entry((cs, pr.rank(&child)))
                            .or_default()
                            .push((s, x));
                    }
                }
            }
        }
        for s in 1..=n_max {
            for x in 0..pr.count(s) {
                pr.unrank(s, x, &mut rows);
                let mut back = Vec::new();
                for_each_unbite(&pr, n_max, &rows, &mut |s2, y| back.push((s2, y)));
                back.sort_unstable();
                let mut want = forward.remove(&(s, x)).unwrap_or_default();
                want.sort_unstable();
                assert_eq!(back, want, "{rows:?}");
            }
        }
    }
}
