//! Job kind `chomp-census`: Chomp positions by number of squares (every
//! partition of `s` is a position), P-positions and winning-bite counts per
//! size (OEIS A112470–A112473; the sen-ltd Chomp article's census to 60 squares).
//!
//! Job file:
//! ```toml
//! kind = "chomp-census"
//! n_max = 60                  # sizes 1 ..= n_max (at most 400)
//! max_ranks_per_job = 4000000 # optional: split larger sizes into rank ranges
//! ```
//!
//! Jobs: one per size `s` (`s7`), or, when `p(s)` exceeds
//! `max_ranks_per_job`, one per rank range (`s80-2of4`) so that several jobs
//! of one size run at once. Ranges are cut where the largest part changes
//! (see [`PartitionRanks`]), which lets each job skip the P-positions whose
//! first row is too long to reach it. Every job of size `s` reads the shards
//! of all jobs of sizes `< s` (a bite can remove any number of squares).
//!
//! Shard sections (little-endian):
//! - `meta`: [`CensusMeta`] through the codec (size, rank range, counts).
//! - `p-positions`: one bit per rank of the range, `u64` words, bit `i % 64`
//!   of word `i / 64` for rank `rank_start + i` (ranks as in
//!   [`PartitionRanks`]).
//!
//! Tables:
//! - `census.csv`: `squares,positions,p_positions,one_winning,several_winning`
//!   for `s = 1 … n_max`.
//! - `b112470.txt` … `b112473.txt`: OEIS b-files (`n a(n)` lines) at the
//!   OEIS offsets: A112470 and A112471 from `n = 0` (the empty board: `0` and
//!   `1` as published), A112472 and A112473 from `n = 1`.

pub use crate::games::chomp::layout::CensusMeta;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{check_plan_size, error_at_key, parse_params};
use crate::pipeline::kind::{Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
use crate::pipeline::shard::{Section, Shard};
use crate::solvers::chomp::Staircase;
use crate::solvers::chomp::census::{CensusMarker, MAX_SIZE, PartitionRanks, SizeCounts};

/// The `chomp-census` job kind.
pub struct ChompCensus;

/// Default of `max_ranks_per_job`.
pub const DEFAULT_MAX_RANKS_PER_JOB: u64 = 4_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    n_max: u32,
    max_ranks_per_job: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeParams {
    size: u32,
    rank_start: u64,
    rank_end: u64,
}

/// Rank ranges of size `s`: cut at largest-part boundaries into about
/// `ceil(p(s) / max_ranks)` pieces of similar size.
pub fn split_size(pr: &PartitionRanks, s: u32, max_ranks: u64) -> Vec<(u64, u64)> {
    let total = pr.count(s);
    let parts = total.div_ceil(max_ranks.max(1)).max(1);
    let mut cuts = vec![0u64];
    for c in 1..s {
        let edge = pr.first_part_ranks(s, c).end;
        let want = (u128::from(total) * cuts.len() as u128 / u128::from(parts)) as u64;
        if (cuts.len() as u64) < parts && edge >= want && edge > *cuts.last().expect("0") {
            cuts.push(edge);
        }
    }
    cuts.push(total);
    cuts.windows(2).map(|w| (w[0], w[1])).collect()
}

fn job_range(job: &JobSpec) -> Result<RangeParams> {
    toml::Value::Table(job.params.clone())
        .try_into()
        .map_err(|e: toml::de::Error| Error::job(&job.name, format!("parameters: {}", e.message())))
}

/// Decodes a census shard: its meta and P-bits.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_census(shard: &Shard) -> Result<(CensusMeta, Vec<u64>)> {
    let job = &shard.header.job_name;
    let bad = |m: &str| Error::job(job, format!("malformed shard: {m}"));
    let meta: CensusMeta = shard.meta()?;
    let raw = shard.section("p-positions")?;
    let len = meta
        .rank_end
        .checked_sub(meta.rank_start)
        .ok_or_else(|| bad("rank range"))?;
    if raw.len() as u64 != len.div_ceil(64) * 8 {
        return Err(bad("p-positions length"));
    }
    let bits: Vec<u64> = raw
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    if !len.is_multiple_of(64) && bits.last().is_some_and(|w| w >> (len % 64) != 0) {
        return Err(bad("bits past the range"));
    }
    let p: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
    if p != meta.p || meta.p + meta.one + meta.several != len {
        return Err(bad("counts do not match the bits"));
    }
    Ok((meta, bits))
}

/// Counts per size `1 ..= n` from census.csv.
///
/// # Errors
/// A message naming the line if it is malformed.
pub fn parse_census_csv(text: &str) -> std::result::Result<BTreeMap<u32, SizeCounts>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("census.csv line {}: `{line}`", n + 1);
        let f: Vec<u64> = line
            .split(',')
            .map(|x| x.parse::<u64>().map_err(|_| bad()))
            .collect::<std::result::Result<_, _>>()?;
        let [s, total, p, one, several] = f[..] else {
            return Err(bad());
        };
        let c = SizeCounts { p, one, several };
        if c.total() != total {
            return Err(bad());
        }
        out.insert(u32::try_from(s).map_err(|_| bad())?, c);
    }
    Ok(out)
}

/// Every size's counts and P-bits (whole size, ranks from 0) from a run.
fn load_sizes(run: &dyn RunAccess) -> Result<BTreeMap<u32, (SizeCounts, Vec<u64>)>> {
    let mut out: BTreeMap<u32, (SizeCounts, Vec<u64>, u64)> = BTreeMap::new();
    for job in run.jobs() {
        let (meta, bits) = decode_census(&run.load(&job.name)?)?;
        let e = out
            .entry(meta.size)
            .or_insert_with(|| (SizeCounts::default(), Vec::new(), 0));
        if meta.rank_start != e.2 {
            return Err(Error::job(
                &job.name,
                format!(
                    "ranks start at {} but the size's previous jobs end at {}",
                    meta.rank_start, e.2
                ),
            ));
        }
        e.0 = e.0.add(&SizeCounts {
            p: meta.p,
            one: meta.one,
            several: meta.several,
        });
        append_bits(
            &mut e.1,
            meta.rank_start,
            &bits,
            meta.rank_end - meta.rank_start,
        );
        e.2 = meta.rank_end;
    }
    Ok(out.into_iter().map(|(s, (c, b, _))| (s, (c, b))).collect())
}

/// Appends `len` bits at bit offset `at` of `dst` (which holds exactly `at` bits).
fn append_bits(dst: &mut Vec<u64>, at: u64, src: &[u64], len: u64) {
    dst.resize((at + len).div_ceil(64) as usize, 0);
    let shift = at % 64;
    let base = (at / 64) as usize;
    for (i, &w) in src.iter().enumerate() {
        dst[base + i] |= w << shift;
        if shift != 0 && base + i + 1 < dst.len() {
            dst[base + i + 1] |= w >> (64 - shift);
        }
    }
}

fn is_p(bits: &[u64], x: u64) -> bool {
    bits[(x / 64) as usize] >> (x % 64) & 1 == 1
}

impl JobKind for ChompCensus {
    crate::pipeline::kind::kind_names!(
        "chomp-census",
        "Chomp: every position of s ≤ n_max squares (partitions of s); P-positions and winning-bite counts per size"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        if p.n_max == 0 || p.n_max > MAX_SIZE {
            return Err(error_at_key(
                path,
                text,
                "n_max",
                format!("`n_max` = {} must be in 1..={MAX_SIZE}", p.n_max),
            ));
        }
        let max_ranks = p.max_ranks_per_job.unwrap_or(DEFAULT_MAX_RANKS_PER_JOB);
        if max_ranks == 0 || max_ranks > i64::MAX as u64 {
            return Err(error_at_key(
                path,
                text,
                "max_ranks_per_job",
                "`max_ranks_per_job` must be at least 1 (and fit an i64)",
            ));
        }
        let pr = PartitionRanks::new(p.n_max);
        // Every job of size s reads every job of a smaller size: count the
        // plan before building it (n_max = 400 would list ~10⁹ inputs).
        let sizes: Vec<Vec<(u64, u64)>> = (1..=p.n_max)
            .map(|s| split_size(&pr, s, max_ranks))
            .collect();
        let (mut count, mut links) = (0u128, 0u128);
        for r in &sizes {
            links += r.len() as u128 * count;
            count += r.len() as u128;
        }
        check_plan_size(path, text, "n_max", count, links)?;
        let mut jobs: Vec<JobSpec> = Vec::new();
        let mut smaller = 0u64; // positions of every size below s
        for (s, ranges) in (1..=p.n_max).zip(sizes) {
            smaller = smaller.saturating_add(pr.count(s - 1));
            let inputs: Vec<String> = jobs.iter().map(|j| j.name.clone()).collect();
            let k = ranges.len();
            for (i, (a, b)) in ranges.into_iter().enumerate() {
                let mut params = toml::Table::new();
                params.insert("size".into(), i64::from(s).into());
                params.insert("rank_start".into(), (a as i64).into());
                params.insert("rank_end".into(), (b as i64).into());
                let name = if k == 1 {
                    format!("s{s}")
                } else {
                    format!("s{s}-{}of{k}", i + 1)
                };
                // The P-bitsets of every smaller size, two bits of counter
                // and one output bit per rank of the range, the process.
                let memory = smaller / 8 + (b - a) * 3 / 8 + (32 << 20);
                jobs.push(
                    JobSpec::new(name, params, inputs.clone(), b - a)
                        .with_memory(memory)
                        .with_shard_bytes((b - a) / 8 + 4096),
                );
            }
        }
        let mut table = toml::Table::new();
        table.insert("n_max".into(), i64::from(p.n_max).into());
        table.insert("max_ranks_per_job".into(), (max_ranks as i64).into());
        Ok((table, jobs))
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let r = job_range(job)?;
        if r.size == 0 || r.size > MAX_SIZE {
            return Err(Error::job(
                &job.name,
                format!("size {} outside 1..={MAX_SIZE}", r.size),
            ));
        }
        let pr = PartitionRanks::new(r.size);
        if r.rank_start >= r.rank_end || r.rank_end > pr.count(r.size) {
            return Err(Error::job(
                &job.name,
                format!(
                    "ranks {}..{} outside 0..{}",
                    r.rank_start,
                    r.rank_end,
                    pr.count(r.size)
                ),
            ));
        }
        let mut mk = CensusMarker::new(&pr, r.size, r.rank_start..r.rank_end);
        let mut seen = vec![0u64; r.size as usize];
        for name in &job.inputs {
            let (meta, bits) = decode_census(&inputs.load(name)?)?;
            if meta.size == 0 || meta.size >= r.size {
                return Err(Error::job(
                    &job.name,
                    format!("input {name} has size {}", meta.size),
                ));
            }
            seen[meta.size as usize] += meta.rank_end - meta.rank_start;
            mk.add_p_bits(meta.size, meta.rank_start, &bits);
        }
        if let Some(t) = (1..r.size).find(|&t| seen[t as usize] != pr.count(t)) {
            return Err(Error::job(
                &job.name,
                format!(
                    "inputs cover {} of the {} positions of size {t}",
                    seen[t as usize],
                    pr.count(t)
                ),
            ));
        }
        let res = mk.finish();
        let meta = CensusMeta {
            size: r.size,
            rank_start: r.rank_start,
            rank_end: r.rank_end,
            p: res.counts.p,
            one: res.counts.one,
            several: res.counts.several,
        };
        Ok(vec![
            Section::new(
                "meta",
                codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?,
            ),
            Section::new(
                "p-positions",
                res.p_bits.iter().flat_map(|w| w.to_le_bytes()).collect(),
            ),
        ])
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let mut per: BTreeMap<u32, (SizeCounts, u64)> = BTreeMap::new();
        for job in run.jobs() {
            let (meta, _) = decode_census(&run.load(&job.name)?)?;
            let e = per.entry(meta.size).or_default();
            if meta.rank_start != e.1 {
                return Err(Error::job(
                    &job.name,
                    format!(
                        "ranks start at {} but the size's previous jobs end at {}",
                        meta.rank_start, e.1
                    ),
                ));
            }
            e.0 = e.0.add(&SizeCounts {
                p: meta.p,
                one: meta.one,
                several: meta.several,
            });
            e.1 = meta.rank_end;
        }
        let n_max = per.keys().next_back().copied().unwrap_or(0);
        let pr = PartitionRanks::new(n_max);
        let mut csv = String::from("squares,positions,p_positions,one_winning,several_winning\n");
        let mut b: [String; 4] = ["0 0\n".into(), "0 1\n".into(), String::new(), String::new()];
        for (s, (c, end)) in &per {
            if *end != pr.count(*s) {
                return Err(Error::job(
                    self.name(),
                    format!("size {s}: jobs cover ranks 0..{end} of {}", pr.count(*s)),
                ));
            }
            csv.push_str(&format!(
                "{s},{},{},{},{}\n",
                c.total(),
                c.p,
                c.one,
                c.several
            ));
            b[0].push_str(&format!("{s} {}\n", c.p));
            b[1].push_str(&format!("{s} {}\n", c.one + c.several));
            b[2].push_str(&format!("{s} {}\n", c.one));
            b[3].push_str(&format!("{s} {}\n", c.several));
        }
        let mut out = vec![TableFile {
            name: "census.csv".into(),
            bytes: csv.into_bytes(),
        }];
        for (i, text) in b.into_iter().enumerate() {
            out.push(TableFile {
                name: format!("b11247{i}.txt"),
                bytes: text.into_bytes(),
            });
        }
        Ok(out)
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let text = String::from_utf8(run.table("census.csv")?).unwrap_or_default();
        let table = match parse_census_csv(&text) {
            Ok(t) => t,
            Err(e) => return Ok(vec![e]),
        };
        let sizes = load_sizes(run)?;
        let n_max = sizes.keys().next_back().copied().unwrap_or(0);
        let pr = PartitionRanks::new(n_max);
        let all_bits: Vec<&Vec<u64>> = sizes.values().map(|(_, b)| b).collect();
        for (&s, (c, _)) in &sizes {
            if table.get(&s) != Some(c) {
                problems.push(format!("census.csv size {s} differs from the shards"));
            }
            if c.total() != pr.count(s) {
                problems.push(format!(
                    "size {s}: {} positions, p({s}) = {}",
                    c.total(),
                    pr.count(s)
                ));
            }
        }
        // Sampled local consistency, by looking at every bite of a position
        // (independent of the predecessor enumeration that produced the bits).
        let mut rows = Vec::new();
        for (&s, (_, bits)) in &sizes {
            let n = pr.count(s);
            let step = (n / 97).max(1);
            let mut x = 0;
            while x < n {
                pr.unrank(s, x, &mut rows);
                let st = Staircase::new(&rows).expect("partition");
                let wins = st
                    .bites()
                    .into_iter()
                    .filter(|&bt| {
                        let child = st.after(bt).expect("legal");
                        let t = child.squares() as u32;
                        t >= 1 && is_p(all_bits[t as usize - 1], pr.rank(child.rows()))
                    })
                    .count();
                if is_p(bits, x) != (wins == 0) {
                    problems.push(format!(
                        "size {s} rank {x} ({st}) is marked {} but has {wins} winning bites",
                        if is_p(bits, x) { "P" } else { "N" }
                    ));
                    break;
                }
                x += step;
            }
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let text = String::from_utf8(run.table("census.csv")?).unwrap_or_default();
        let t = parse_census_csv(&text).map_err(|e| Error::job(self.name(), e))?;
        Ok(census_claims(&t))
    }

    /// `census-counts`: the counts by number of squares, log scale.
    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        use crate::games::chomp::picture::{CensusChart, CensusRow};
        let text = String::from_utf8(run.table("census.csv")?).unwrap_or_default();
        let t = parse_census_csv(&text).map_err(|e| Error::job(self.name(), e))?;
        let rows = t
            .iter()
            .map(|(&s, c)| CensusRow {
                squares: s,
                positions: c.total(),
                p: c.p,
                one: c.one,
                several: c.several,
            })
            .collect();
        let chart = CensusChart { rows };
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            "census-counts",
            "Chomp positions by number of squares: P-positions, one and several winning bites (OEIS A112470, A112472, A112473)",
            &chart,
        ))?])
    }
}

const SEN: &str = crate::games::chomp::sources::SEN_CHOMP;

/// OEIS data sections as published (`shared/data/literature/oeis-terms.txt`,
/// https://oeis.org/A112470 … A112473). A112470 and A112471 have offset 0,
/// A112472 and A112473 offset 1.
pub const A112470: &[u64] = &[
    0, 1, 0, 1, 0, 3, 0, 3, 2, 5, 2, 3, 10, 9, 10, 9, 14, 17, 14, 23, 42, 45, 28, 55, 74, 67, 96,
    107, 136, 177, 220, 241, 302, 315, 422, 421, 542, 641, 812, 877, 1022, 1221, 1490, 1655, 1970,
    2173, 2754, 3117, 3542, 3993, 4976, 5485, 6508, 7477, 8758, 9859, 11530,
];
/// A112471 (offset 0): N-positions of n squares.
pub const A112471: &[u64] = &[
    1, 0, 2, 2, 5, 4, 11, 12, 20, 25, 40, 53, 67, 92, 125, 167, 217, 280, 371, 467, 585, 747, 974,
    1200, 1501, 1891, 2340, 2903, 3582, 4388, 5384, 6601, 8047, 9828, 11888, 14462, 17435, 20996,
    25203, 30308, 36316,
];
/// A112472 (offset 1): N-positions with exactly one winning move.
pub const A112472: &[u64] = &[
    0, 2, 2, 5, 4, 10, 10, 18, 21, 28, 44, 56, 70, 85, 115, 150, 185, 250, 317, 384, 472, 589, 757,
    931, 1139, 1416, 1708, 2129, 2565, 3082, 3690, 4449, 5325, 6392, 7625, 9255, 10951, 12897,
    15216, 18172,
];
/// A112473 (offset 1): N-positions with several winning moves.
pub const A112473: &[u64] = &[
    0, 0, 0, 0, 0, 1, 2, 2, 4, 12, 9, 11, 22, 40, 52, 67, 95, 121, 150, 201, 275, 385, 443, 570,
    752, 924, 1195, 1453, 1823, 2302, 2911, 3598, 4503, 5496, 6837, 8180, 10045, 12306, 15092,
    18144,
];

/// Compares published terms `a(offset…)` with ours for `1 ≤ n ≤ n_max`.
fn oeis_claim(
    id: &str,
    what: &str,
    terms: &[u64],
    offset: u32,
    t: &BTreeMap<u32, SizeCounts>,
    f: fn(&SizeCounts) -> u64,
) -> Claim {
    let source = format!("OEIS {id} (https://oeis.org/{id})");
    let last = offset + terms.len() as u32 - 1;
    let claim = format!("{what}, n = 1 … {last}");
    let n_max = t.keys().next_back().copied().unwrap_or(0);
    if n_max < last {
        return Claim::not_covered(
            &source,
            &claim,
            format!("{} terms", last),
            &format!("n_max = {n_max}"),
        );
    }
    let first_diff = (1..=last).find(|&n| t.get(&n).map(f) != Some(terms[(n - offset) as usize]));
    let ours = match first_diff {
        None => format!("{last} terms"),
        Some(n) => format!(
            "differs at n = {n}: published {}, ours {}",
            terms[(n - offset) as usize],
            t.get(&n).map_or("-".into(), |c| f(c).to_string())
        ),
    };
    Claim::compare(&source, &claim, format!("{last} terms"), ours)
}

/// The published census claims with our values.
fn census_claims(t: &BTreeMap<u32, SizeCounts>) -> Vec<Claim> {
    let mut c = vec![
        oeis_claim("A112470", "P-positions of n squares", A112470, 0, t, |c| {
            c.p
        }),
        oeis_claim("A112471", "N-positions of n squares", A112471, 0, t, |c| {
            c.one + c.several
        }),
        oeis_claim(
            "A112472",
            "N-positions with one winning move",
            A112472,
            1,
            t,
            |c| c.one,
        ),
        oeis_claim(
            "A112473",
            "N-positions with several winning moves",
            A112473,
            1,
            t,
            |c| c.several,
        ),
    ];
    let n_max = t.keys().next_back().copied().unwrap_or(0);
    let need = |n: u32, claim: &str, expected: &str, ours: &dyn Fn() -> String| {
        if n_max < n {
            Claim::not_covered(SEN, claim, expected, &format!("n_max = {n_max}"))
        } else {
            Claim::compare(SEN, claim, expected, ours())
        }
    };
    c.push(need(
        60,
        "positions with at most 60 squares",
        "6639348",
        &|| {
            t.range(1..=60)
                .map(|(_, c)| c.total())
                .sum::<u64>()
                .to_string()
        },
    ));
    c.push(need(
        41,
        "first size where N-positions with several winning moves outnumber those with one (several vs one)",
        "41 (21908 vs 21454)",
        &|| match t.iter().find(|(_, c)| c.several > c.one) {
            Some((s, c)) => format!("{s} ({} vs {})", c.several, c.one),
            None => "none".into(),
        },
    ));
    c.push(need(
        40,
        "size 40: several vs one",
        "18144 vs 18172",
        &|| format!("{} vs {}", t[&40].several, t[&40].one),
    ));
    c.push(need(
        60,
        "size 60: P / one / several",
        "20106 / 401905 / 544456",
        &|| format!("{} / {} / {}", t[&60].p, t[&60].one, t[&60].several),
    ));
    let upto = n_max.min(NAIVE_UP_TO);
    let naive = naive_counts(upto);
    let agree = (1..=upto)
        .filter(|s| t.get(s) == Some(&naive[*s as usize - 1]))
        .count();
    c.push(Claim::compare(
        &format!(
            "{} (memoized search over every bite, no ranking)",
            crate::pipeline::sources::OWN_CHECK
        ),
        &format!("counts per size agree with a naive search, s ≤ {upto}"),
        format!("{upto} sizes"),
        format!("{agree} sizes"),
    ));
    c
}

/// Sizes covered by the naive cross-check in the report.
const NAIVE_UP_TO: u32 = 25;

/// Counts per size `1 ..= n` by plain memoized game-tree search over
/// [`Staircase::bites`] (independent of the ranking and of the marker).
fn naive_counts(n: u32) -> Vec<SizeCounts> {
    fn wins(s: &Staircase, memo: &mut std::collections::HashMap<Vec<u32>, u32>) -> u32 {
        if let Some(&w) = memo.get(s.rows()) {
            return w;
        }
        let w = s
            .bites()
            .into_iter()
            .filter(|&b| wins(&s.after(b).expect("legal"), memo) == 0)
            .count() as u32;
        memo.insert(s.rows().to_vec(), w);
        w
    }
    fn each(left: u32, cap: u32, rows: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) {
        if left == 0 {
            f(rows);
            return;
        }
        for r in 1..=cap.min(left) {
            rows.push(r);
            each(left - r, r, rows, f);
            rows.pop();
        }
    }
    let mut memo = std::collections::HashMap::new();
    (1..=n)
        .map(|s| {
            let mut c = SizeCounts::default();
            each(s, s, &mut Vec::new(), &mut |rows| match wins(
                &Staircase::new(rows).expect("partition"),
                &mut memo,
            ) {
                0 => c.p += 1,
                1 => c.one += 1,
                _ => c.several += 1,
            });
            c
        })
        .collect()
}
