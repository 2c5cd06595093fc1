//! Job kind `octal`: the Grundy sequence of an octal game up to `n_max`, in
//! ranges, with its periodicity proved by the Guy–Smith theorem.
//!
//! Job file:
//! ```toml
//! kind = "octal"
//! code = "0.77"      # the octal code (see solvers::impartial::octal)
//! n_max = 1048576    # compute G(0..=n_max)
//! ranges = 8         # jobs; optional, default 8
//! ```
//!
//! Jobs `range-K` (K = 0…ranges−1) cover consecutive intervals
//! `[start, end)` of 0…n_max, chosen so that each takes about the same time
//! (the cost of `[0, end)` grows like end², so the k-th boundary is
//! ⌈(n_max+1)·√(k/ranges)⌉). `G(n)` needs every earlier value, so range K
//! reads the shards of ranges 0…K−1 (its inputs) and nothing else.
//!
//! Shard sections (little-endian):
//! - `meta`: [`RangeMeta`] through the codec (code, start, end, largest value).
//! - `values`: `u32` G(start), …, G(end − 1).
//!
//! Tables:
//! - `b-file.txt`: OEIS b-file, `n G(n)` per line for n = 0…n_max, after
//!   `#` comment lines naming the game.
//! - `summary.toml`: code, n_max, t, largest value, and, if proved, period,
//!   preperiod, last exceptional n and the range the theorem checked.
//!
//! Checks: every value recomputed by direct move enumeration for n ≤ 1000 and
//! at 64 sampled n above; the summary agrees with the b-file.

pub use crate::games::impartial::layout::{RangeMeta, Summary};
use std::path::Path;

use serde::Deserialize;

use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{check_plan_size, error_at_key, parse_params};
use crate::pipeline::kind::{Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
use crate::pipeline::shard::{Section, Shard};
use crate::solvers::impartial::mex;
use crate::solvers::impartial::octal::{OctalCode, OctalPeriod, find_period};

/// The `octal` job kind.
pub struct Octal;

/// Largest `n_max` accepted (the solver's limit).
pub const MAX_N: u64 = (1 << 28) - 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    code: String,
    n_max: u64,
    ranges: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeParams {
    code: String,
    start: u64,
    end: u64,
}

/// The boundaries `0 = b₀ < … < b_r = n_max + 1` of `ranges` ranges of about
/// equal cost (cost of `[0, b)` ∝ b²); fewer ranges if n_max is small.
/// Values the plan computes to predict the work of a code: `G(0..4096)`
/// (about a second for a code of forty digits, far less for short ones).
pub const WORK_SAMPLE: usize = 4096;

/// Units of [`OctalCode::extend_work`] per CPU second on one core of the
/// reference machine: 2.2·10¹⁰ to 4.5·10¹⁰ measured for Kayles, Dawson's
/// Kayles and codes of 20 and 40 sevens (BENCHMARKS.md).
pub const WORK_PER_SECOND: f64 = 3.0e10;

/// The predicted work ([`OctalCode::extend_work`] units) of `G(0..n)` for
/// `code`, from `G(0..m)`, `m = min(WORK_SAMPLE, n_max + 1)`, computed here:
/// the bounded part per heap grows like n; the scans like `n^e`, `e` the
/// growth of the scans' work from `[m/4, m/2)` to `[m/2, m)` (`2^e`),
/// between 1 (a rare-value class: Kayles) and 3 (long codes whose values
/// keep growing). Deterministic: the same plan on every machine.
pub fn work_model(code: &OctalCode, n_max: u64) -> impl Fn(u64) -> f64 + use<> {
    let m = WORK_SAMPLE.min(n_max as usize + 1).max(4);
    let mut v = Vec::new();
    let a = code.extend_work(&mut v, m / 4);
    let b = code.extend_work(&mut v, m / 2);
    let c = code.extend_work(&mut v, m);
    let scans_m = (a.scans + b.scans + c.scans) as f64;
    let rest_m = (a.rest + b.rest + c.rest) as f64;
    // Work of the scans in the last doubling, and its growth.
    let (d_prev, d_last) = (b.scans.max(1) as f64, c.scans.max(1) as f64);
    let e = (d_last / d_prev).log2().clamp(1.0, 3.0);
    let g = 2f64.powf(e);
    let m = m as f64;
    move |n: u64| {
        let x = n as f64 / m;
        if x <= 1.0 {
            return (scans_m + rest_m) * x;
        }
        // Σ over the doublings past m of d_last·2^(e·k).
        scans_m + d_last * g * (x.powf(e) - 1.0) / (g - 1.0) + rest_m * x
    }
}

pub fn range_bounds(n_max: u64, ranges: u64) -> Vec<u64> {
    let total = u128::from(n_max + 1);
    let mut b = vec![0u64];
    for k in 1..=ranges {
        // ⌈√(total² · k / ranges)⌉
        let sq = (total * total * u128::from(k)).div_ceil(u128::from(ranges));
        let mut s = (sq as f64).sqrt() as u128;
        while s * s < sq {
            s += 1;
        }
        while s > 0 && (s - 1) * (s - 1) >= sq {
            s -= 1;
        }
        let s = s as u64;
        if s > *b.last().expect("non-empty") {
            b.push(s);
        }
    }
    *b.last_mut().expect("non-empty") = n_max + 1;
    b
}

fn range_params(job: &JobSpec) -> Result<(OctalCode, usize, usize)> {
    let p: RangeParams =
        toml::Value::Table(job.params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                Error::job(&job.name, format!("parameters: {}", e.message()))
            })?;
    let code = OctalCode::parse(&p.code).map_err(|e| Error::job(&job.name, e.to_string()))?;
    if p.start >= p.end || p.end > MAX_N + 1 {
        return Err(Error::job(
            &job.name,
            format!("bad range {}..{}", p.start, p.end),
        ));
    }
    Ok((code, p.start as usize, p.end as usize))
}

/// Decodes a range shard.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_range(shard: &Shard) -> Result<(RangeMeta, Vec<u32>)> {
    let job = &shard.header.job_name;
    let bad = |m: &str| Error::job(job, format!("malformed shard: {m}"));
    let meta: RangeMeta = shard.meta()?;
    let raw = shard.section("values")?;
    if raw.len() % 4 != 0 || (raw.len() / 4) as u64 != meta.end.saturating_sub(meta.start) {
        return Err(bad("values length"));
    }
    let values = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok((meta, values))
}

/// G(0..) from the shards of `names`, which must be consecutive ranges from 0
/// of the game `code`.
fn load_prefix(src: &dyn ShardSource, names: &[String], code: &OctalCode) -> Result<Vec<u32>> {
    let mut values = Vec::new();
    for name in names {
        let (meta, v) = decode_range(&src.load(name)?)?;
        if meta.code != code.to_string() {
            return Err(Error::job(
                name,
                format!("code {} but the run is {code}", meta.code),
            ));
        }
        if meta.start != values.len() as u64 {
            return Err(Error::job(
                name,
                format!(
                    "starts at {} but the values before it end at {}",
                    meta.start,
                    values.len()
                ),
            ));
        }
        values.extend(v);
    }
    Ok(values)
}

/// The whole sequence and the game of a run.
fn run_values(run: &dyn RunAccess) -> Result<(OctalCode, Vec<u32>)> {
    let first = run
        .jobs()
        .first()
        .ok_or_else(|| Error::job("octal", "no jobs"))?;
    let (code, _, _) = range_params(first)?;
    let names: Vec<String> = run.jobs().iter().map(|j| j.name.clone()).collect();
    let values = load_prefix(run, &names, &code)?;
    Ok((code, values))
}

fn summarize(code: &OctalCode, values: &[u32]) -> Summary {
    let per: Option<OctalPeriod> = find_period(values, code.max_removal());
    Summary {
        code: code.to_string(),
        n_max: values.len() as u64 - 1,
        t: code.max_removal() as u64,
        max_value: values.iter().copied().max().unwrap_or(0),
        periodic: per.is_some(),
        period: per.map_or(0, |p| p.period as u64),
        preperiod: per.map_or(0, |p| p.preperiod as u64),
        last_exceptional: per.map_or(-1, |p| p.preperiod as i64 - 1),
        checked_through: per.map_or(0, |p| p.checked_through as u64),
    }
}

fn b_file(code: &OctalCode, values: &[u32]) -> String {
    let mut s = format!(
        "# Grundy values G(n) of the octal game {code}, n = 0..{} (gametables)\n",
        values.len() - 1
    );
    s.reserve(values.len() * 12);
    for (n, v) in values.iter().enumerate() {
        use std::fmt::Write;
        writeln!(s, "{n} {v}").expect("string write");
    }
    s
}

/// Parses a b-file back into values (n must run 0, 1, 2, …).
///
/// # Errors
/// A message naming the line if it is malformed.
pub fn parse_b_file(text: &str) -> std::result::Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let bad = || format!("b-file line {}: `{line}`", i + 1);
        let (n, v) = line.split_once(' ').ok_or_else(bad)?;
        if n.parse::<usize>().map_err(|_| bad())? != out.len() {
            return Err(bad());
        }
        out.push(v.parse::<u32>().map_err(|_| bad())?);
    }
    Ok(out)
}

impl JobKind for Octal {
    crate::pipeline::kind::kind_names!(
        "octal",
        "Octal games: the Grundy sequence to n_max in ranges, periodicity proved by the Guy–Smith theorem"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        let code = OctalCode::parse(&p.code)
            .map_err(|e| error_at_key(path, text, "code", e.to_string()))?;
        if p.n_max > MAX_N {
            return Err(error_at_key(
                path,
                text,
                "n_max",
                format!("`n_max` above {MAX_N}"),
            ));
        }
        let ranges = p.ranges.unwrap_or(8);
        if !(1..=1000).contains(&ranges) {
            return Err(error_at_key(
                path,
                text,
                "ranges",
                "`ranges` must be 1…1000",
            ));
        }
        // Range k reads ranges 0…k−1.
        check_plan_size(
            path,
            text,
            "ranges",
            u128::from(ranges),
            u128::from(ranges) * u128::from(ranges - 1) / 2,
        )?;
        let bounds = range_bounds(p.n_max, ranges);
        let width = (bounds.len() - 1).to_string().len().max(2);
        let work = work_model(&code, p.n_max);
        let mut seconds = Vec::new();
        let mut jobs: Vec<JobSpec> = Vec::new();
        for (k, w) in bounds.windows(2).enumerate() {
            let mut params = toml::Table::new();
            params.insert("code".into(), code.to_string().into());
            params.insert("start".into(), (w[0] as i64).into());
            params.insert("end".into(), (w[1] as i64).into());
            let inputs = jobs.iter().map(|j| j.name.clone()).collect();
            let cost = (w[1] * w[1] - w[0] * w[0]) / 1024 + 1;
            // Every value so far as u32 (inputs and this range), twice while
            // encoding, the process.
            seconds.push((work(w[1]) - work(w[0])) / WORK_PER_SECOND);
            jobs.push(
                JobSpec::new(format!("range-{k:0width$}"), params, inputs, cost)
                    .with_memory(w[1] * 12 + (24 << 20))
                    .with_shard_bytes((w[1] - w[0]) * 2 + 4096),
            );
        }
        crate::pipeline::kind::spread_cpu_seconds(&mut jobs, &seconds);
        let mut table = toml::Table::new();
        table.insert("code".into(), code.to_string().into());
        table.insert("n_max".into(), (p.n_max as i64).into());
        table.insert("ranges".into(), (ranges as i64).into());
        Ok((table, jobs))
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (code, start, end) = range_params(job)?;
        let mut values = load_prefix(inputs, &job.inputs, &code)?;
        if values.len() != start {
            return Err(Error::job(
                &job.name,
                format!(
                    "inputs give G(0..{}) but the range starts at {start}",
                    values.len()
                ),
            ));
        }
        code.extend(&mut values, end);
        let own = &values[start..end];
        let meta = RangeMeta {
            code: code.to_string(),
            start: start as u64,
            end: end as u64,
            max_value: own.iter().copied().max().unwrap_or(0),
        };
        Ok(vec![
            Section::new(
                "meta",
                codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?,
            ),
            Section::new("values", own.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ])
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let (code, values) = run_values(run)?;
        let summary = summarize(&code, &values);
        Ok(vec![
            TableFile {
                name: "b-file.txt".into(),
                bytes: b_file(&code, &values).into_bytes(),
            },
            TableFile {
                name: "summary.toml".into(),
                bytes: toml::to_string(&summary)
                    .expect("summary serializes")
                    .into_bytes(),
            },
        ])
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let (code, _) = run_values(run)?;
        let text = String::from_utf8(run.table("b-file.txt")?).unwrap_or_default();
        let values = match parse_b_file(&text) {
            Ok(v) => v,
            Err(e) => return Ok(vec![e]),
        };
        let mut problems = Vec::new();
        let n = values.len();
        let mut sample: Vec<usize> = (0..n.min(1001)).collect();
        if n > 1001 {
            sample.extend((1..=64).map(|i| 1000 + (n - 1001) * i / 64));
        }
        for &k in &sample {
            let direct = mex(code.option_values(k, &values[..k]));
            if direct != values[k] {
                problems.push(format!(
                    "G({k}) is {} but direct move enumeration gives {direct}",
                    values[k]
                ));
                break;
            }
        }
        let stext = String::from_utf8(run.table("summary.toml")?).unwrap_or_default();
        match toml::from_str::<Summary>(&stext) {
            Ok(s) if s == summarize(&code, &values) => {}
            Ok(_) => problems.push("summary.toml does not match the b-file".into()),
            Err(e) => problems.push(format!("summary.toml: {}", e.message())),
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let (code, values) = run_values(run)?;
        Ok(octal_claims(&code, &values))
    }

    /// `octal-grundy`: G(n) with the preperiod and period marked, from the
    /// b-file and the summary table.
    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        use crate::games::impartial::picture::OctalChart;
        let stext = String::from_utf8(run.table("summary.toml")?).unwrap_or_default();
        let s: Summary = toml::from_str(&stext)
            .map_err(|e| Error::job(self.name(), format!("summary.toml: {}", e.message())))?;
        let btext = String::from_utf8(run.table("b-file.txt")?).unwrap_or_default();
        let mut values = parse_b_file(&btext).map_err(|e| Error::job(self.name(), e))?;
        let period = s.periodic.then_some((s.preperiod, s.period));
        values.truncate(OctalChart::shown(s.n_max, period) as usize);
        let chart = OctalChart {
            code: s.code.clone(),
            values,
            n_max: s.n_max,
            max_value: s.max_value,
            period,
        };
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            "octal-grundy",
            &format!(
                "Octal game {}: Grundy values G(n) with the period marked",
                s.code
            ),
            &chart,
        ))?])
    }
}

// Claim sources: names of this game's `sources::WORKS`.
const GUY_SMITH: &str = "Guy and Smith 1956; Winning Ways, vol. 1, ch. 4";

/// A claim about the published values `expected` (space-separated) of
/// G(`from`), G(`from` + 1), …: compared when the run computed all of them;
/// when it computed only some, a mismatch if those differ, else not covered
/// (showing the values it has).
fn values_claim(source: &str, claim: &str, from: usize, expected: &str, values: &[u32]) -> Claim {
    let want: Vec<&str> = expected.split_whitespace().collect();
    let ours: Vec<String> = values
        .iter()
        .skip(from)
        .take(want.len())
        .map(u32::to_string)
        .collect();
    if ours.len() == want.len() || ours.iter().zip(&want).any(|(o, w)| o != w) {
        return Claim::compare(source, claim, expected, ours.join(" "));
    }
    let n_max = values.len().saturating_sub(1);
    let why = if ours.is_empty() {
        format!("n_max = {n_max}")
    } else {
        format!(
            "n_max = {n_max}: G({from}..={n_max}) = {} (agree so far)",
            ours.join(" ")
        )
    };
    Claim::not_covered(source, claim, expected, &why)
}

/// A period claim: compared if our values prove a period, else not covered.
fn period_claim(
    source: &str,
    claim: &str,
    expected: &str,
    ours: Option<String>,
    s: &Summary,
) -> Claim {
    match ours {
        Some(o) => Claim::compare(source, claim, expected, o),
        None => Claim::not_covered(
            source,
            claim,
            expected,
            &format!("no period proved within n ≤ {} (raise n_max)", s.n_max),
        ),
    }
}

/// The published claims about `code` (Kayles and Dawson's Kayles) with our
/// values.
fn octal_claims(code: &OctalCode, values: &[u32]) -> Vec<Claim> {
    let s = summarize(code, values);
    let proved = s
        .periodic
        .then(|| format!("period {}, preperiod {}", s.period, s.preperiod));
    let mut c = Vec::new();
    match code.to_string().as_str() {
        "0.77" => {
            c.push(values_claim(
                GUY_SMITH,
                "Kayles G(0..=10)",
                0,
                "0 1 2 3 1 4 3 2 1 4 2",
                values,
            ));
            let at_latest = proved.as_ref().map(|p| {
                if s.period == 12 && s.preperiod <= 72 {
                    "period 12 from ≤ 72".to_string()
                } else {
                    p.clone()
                }
            });
            c.push(period_claim(
                GUY_SMITH,
                "Kayles is periodic with period 12 from n = 72 at the latest (proved by the theorem)",
                "period 12 from ≤ 72",
                at_latest,
                &s,
            ));
            c.push(period_claim(
                GUY_SMITH,
                "Kayles: least period and preperiod (last exceptional value at n = 70)",
                "period 12, preperiod 71",
                proved.clone(),
                &s,
            ));
            c.push(values_claim(
                GUY_SMITH,
                "Kayles G(72..=83), one period",
                72,
                "4 1 2 8 1 4 7 2 1 8 2 7",
                values,
            ));
        }
        "0.07" => {
            c.push(period_claim(
                GUY_SMITH,
                "Dawson's Kayles: least period and preperiod",
                "period 34, preperiod 53",
                proved,
                &s,
            ));
        }
        _ => {}
    }
    c
}
