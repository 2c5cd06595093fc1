//! Probe of octal games: the Grundy values `G(0..=n)` of a code, `G(n)` of
//! heap `n`, and the period proved by the Guy–Smith theorem (R. K. Guy and
//! C. A. B. Smith, "The G-values of various games", Proc. Cambridge Philos.
//! Soc. 52 (1956)): from an `octal` run of that code when one covers `n`
//! (the values read block by block from the range shards, the period from
//! the run's `summary.toml`), else computed in memory.

use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::games::impartial::kind::{RangeMeta, Summary};
use crate::pipeline::Error;
use crate::pipeline::RunView;
use crate::pipeline::codec;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES, RunShards};
use crate::pipeline::probe::{
    Params, Probe, ProbeError, ProbeResult, Progress, Work, param, parse_list, required,
};
use crate::solvers::impartial::octal::{OctalCode, OctalPeriod, OctalWork, find_period};

/// Most values an answer from a run lists: `G(n − 999..=n)`.
pub const RUN_LIST_MAX: usize = 1000;

/// Values computed by a query asked for the period (`period=1`,
/// `--period`) to find one (`G(0..2¹⁴)` at least); without it a query
/// computes `G(0..=n)` only and proves what those values prove.
pub const QUERY_PERIOD_SEARCH: usize = 1 << 14;

/// Largest `n` computed in memory.
pub const MAX_IN_MEMORY_N: usize = 1 << 22;

/// Work (the square of the number of values: the cost of G(0..e) grows like
/// e²) from which an in-memory query says up front that it takes a while:
/// about a second on one core here (Kayles to n = 10⁶ takes 1.9 s of CPU).
pub const LONG_OCTAL_WORK: u64 = 300_000_000_000;

/// Heaps computed to estimate an in-memory query's time
/// ([`estimate_seconds`]): under 0.1 s for the slowest codes tried.
pub const ESTIMATE_PREFIX: usize = 8192;

/// Most seconds the estimate's prefix may take by its own estimate
/// ([`estimate_seconds`] doubles it while the next prefix stays under this
/// and a twentieth of the limit), so a refusal comes within about two
/// seconds (before `query` says it is computing).
pub const ESTIMATE_BUDGET: f64 = 1.0;

/// Nanoseconds of one unit of the certifying scans of
/// [`OctalCode::extend_work`] (vectorised comparisons) on one core here,
/// fitted on `query octal 0.76` (BENCHMARKS.md, "Octal queries").
pub const NS_PER_SCAN_UNIT: f64 = 0.03;

/// Nanoseconds of one unit of the rest of [`OctalCode::extend_work`] (the
/// quick splits read one at a time, each heap's overhead), fitted on
/// `query octal 0.77` (BENCHMARKS.md, "Octal queries").
pub const NS_PER_REST_UNIT: f64 = 0.16;

/// Estimated seconds on one core of computing `G(0..end)` of `code` in
/// memory: the time model by which a query is refused before the bulk of
/// its work ([`Progress::check_time`]). Computes a prefix `G(0..e)` into
/// `values` (which must be empty; the caller goes on from them) and counts
/// its work in two halves. The rest grows linearly (bounded work per
/// heap); the scans like `e^p`, `p` between 1 and 3 (3: Grundy values that
/// grow with the heap, each certified by a scan of all splits), read off
/// the two halves and extrapolated to `end`. The prefix starts at
/// [`ESTIMATE_PREFIX`] heaps and doubles while the estimate is above
/// `limit` seconds and the next prefix is estimated to take at most a
/// twentieth of it and [`ESTIMATE_BUDGET`] (and stops, its values a shorter prefix, once `stop`
/// is set), since `p` measured on a short prefix overstates the
/// growth of some codes (0.6). BENCHMARKS.md ("Octal queries") has the
/// estimate against the time taken.
pub fn estimate_seconds(
    code: &OctalCode,
    values: &mut Vec<u32>,
    end: usize,
    limit: f64,
    stop: &std::sync::atomic::AtomicBool,
) -> f64 {
    debug_assert!(values.is_empty());
    let seconds =
        |scans: f64, rest: f64| (scans * NS_PER_SCAN_UNIT + rest * NS_PER_REST_UNIT) * 1e-9;
    let mut e0 = ESTIMATE_PREFIX.min(end);
    let mut w1 = code.extend_work_until(values, e0 / 2, stop);
    loop {
        let w2 = code.extend_work_until(values, e0, stop);
        let scans = (w1.scans + w2.scans) as f64;
        if end <= e0 {
            return seconds(scans, (w1.rest + w2.rest) as f64);
        }
        let at = |e: usize| {
            let grow = e as f64 / e0 as f64;
            let p = if w1.scans == 0 {
                2.0
            } else {
                (scans / w1.scans as f64).log2().clamp(1.0, 3.0)
            };
            let rest_per_heap = w2.rest as f64 / (e0 - e0 / 2) as f64;
            seconds(scans * grow.powf(p), rest_per_heap * e as f64)
        };
        let estimate = at(end);
        if estimate <= limit
            || 2 * e0 > end
            || at(2 * e0) > (limit / 20.0).min(ESTIMATE_BUDGET)
            || stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            return estimate;
        }
        w1 = OctalWork {
            scans: w1.scans + w2.scans,
            rest: w1.rest + w2.rest,
        };
        e0 *= 2;
    }
}

/// Default `n` of a query.
pub const DEFAULT_N: usize = 80;

/// An octal-game request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalRequest {
    /// The code, e.g. `0.77` (Kayles).
    pub code: String,
    /// Heap size: `G(0..=n)` are answered.
    pub n: usize,
    /// Look for the period: compute at least [`QUERY_PERIOD_SEARCH`] values
    /// (in memory; a run gives its own). Without it only `G(0..=n)` are
    /// computed, and the period is given only if they prove it.
    pub period: bool,
}

impl OctalRequest {
    /// The request from the parameters `code`, `n` (default 80) and the
    /// flag `period`.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] naming a missing or malformed parameter.
    pub fn from_params(params: &Params) -> ProbeResult<OctalRequest> {
        Ok(OctalRequest {
            code: param(params, "code")
                .ok_or_else(|| ProbeError::bad("missing parameter `code` (e.g. code=0.77)"))?
                .to_string(),
            n: match param(params, "n") {
                Some(_) => required(params, "n")?,
                None => DEFAULT_N,
            },
            period: crate::pipeline::probe::flag(params, "period")?,
        })
    }
}

/// The answer of [`OctalProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalAnswer {
    /// The code, normalised (e.g. `0.77`).
    pub code: String,
    /// The largest heap answered.
    pub n: usize,
    /// The first heap listed in `values`: 0 when computed in memory; from a
    /// run, `n + 1 − RUN_LIST_MAX` when `n` is larger.
    pub values_from: usize,
    /// `G(values_from..=n)`.
    pub values: Vec<u32>,
    /// The least period and preperiod proved from the values computed.
    pub period: Option<OctalPeriod>,
    /// Values computed to look for the period (`G(0..searched)`).
    pub searched: usize,
    /// The largest number of tokens a move removes (the theorem's `t`).
    pub t: usize,
    /// Where the values come from (a run, or computed in memory).
    pub source: String,
}

impl OctalAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.code,
            "n": self.n,
            "g": self.values[self.n - self.values_from],
            "values_from": self.values_from,
            "values": self.values,
            "period": self.period.map(|p| serde_json::json!({
                "period": p.period,
                "preperiod": p.preperiod,
                "checked_through": p.checked_through,
            })),
            "searched": self.searched,
            "t": self.t,
            "source": self.source,
        })
    }
}

impl fmt::Display for OctalAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "octal game {}: G({}..={}) = {}",
            self.code,
            self.values_from,
            self.n,
            values_text(&self.values)
        )?;
        match self.period {
            Some(p) => writeln!(
                f,
                "periodic with period {} from n = {} (last exceptional value at n = {}); \
                 proved by the Guy–Smith theorem: values agree for {} ≤ n ≤ {} (t = {})",
                p.period,
                p.preperiod,
                p.preperiod as i64 - 1,
                p.preperiod.max(1),
                p.checked_through,
                self.t
            ),
            None if self.searched <= QUERY_PERIOD_SEARCH => writeln!(
                f,
                "no period proved within n ≤ {} (--period looks further)",
                self.searched - 1
            ),
            None => writeln!(f, "no period proved within n ≤ {}", self.searched - 1),
        }?;
        writeln!(f, "  ({})", self.source)
    }
}

/// What a Grundy value says of a position: a P-position (0, the player to
/// move loses) or an N-position.
pub fn pn_words(grundy: u64) -> &'static str {
    if grundy == 0 {
        "P-position: the player to move loses"
    } else {
        "N-position"
    }
}

/// Values separated by spaces.
pub fn values_text(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// One `octal` run: its code, `n_max`, summary, and its range shards read
/// block by block (each range's `meta` read once).
struct OctalRun {
    shards: RunShards,
    /// The code, normalised.
    code: String,
    n_max: usize,
    /// `(job name, start, end)` of every range, read on first use.
    ranges: OnceLock<Vec<(String, u64, u64)>>,
    summary: OnceLock<Summary>,
}

impl OctalRun {
    /// Every range's `(job, start, end)`, from its `meta` section.
    fn ranges(&self) -> ProbeResult<&[(String, u64, u64)]> {
        if let Some(r) = self.ranges.get() {
            return Ok(r);
        }
        let mut out = Vec::new();
        for j in &self.shards.view().plan.jobs {
            let len = self.shards.section_len(&j.name, "meta")?;
            let bytes = self.shards.range(&j.name, "meta", 0, len)?;
            let bad = |m: String| {
                ProbeError::Run(Error::job(&j.name, format!("malformed shard: meta: {m}")))
            };
            let m: RangeMeta = codec::decode(&bytes).map_err(bad)?;
            if m.code != self.code || m.start > m.end {
                return Err(bad(format!(
                    "code {} range {}..{} in a run of {}",
                    m.code, m.start, m.end, self.code
                )));
            }
            out.push((j.name.clone(), m.start, m.end));
        }
        Ok(self.ranges.get_or_init(|| out))
    }

    /// The run's `tables/summary.toml`, read once.
    fn summary(&self) -> ProbeResult<&Summary> {
        if let Some(s) = self.summary.get() {
            return Ok(s);
        }
        let p = self.shards.view().dir.tables_dir().join("summary.toml");
        let text = std::fs::read_to_string(&p).map_err(Error::io(&p))?;
        let s: Summary = toml::from_str(&text).map_err(|e| {
            ProbeError::Run(Error::job(
                "summary",
                format!("{}: {}", p.display(), e.message()),
            ))
        })?;
        Ok(self.summary.get_or_init(|| s))
    }

    /// `G(from..=to)` from the blocks of the ranges holding them.
    fn values(&self, from: u64, to: u64) -> ProbeResult<Vec<u32>> {
        let mut out = Vec::with_capacity((to + 1 - from) as usize);
        for (name, start, end) in self.ranges()? {
            let (a, b) = (from.max(*start), (to + 1).min(*end));
            if a >= b {
                continue;
            }
            let bytes = self
                .shards
                .range(name, "values", (a - start) * 4, (b - a) * 4)?;
            out.extend(
                bytes
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))),
            );
        }
        if out.len() as u64 != to + 1 - from {
            return Err(ProbeError::Run(Error::job(
                "octal",
                format!(
                    "the ranges of {} do not cover {from}..={to}",
                    self.shards.view().dir.root().display()
                ),
            )));
        }
        Ok(out)
    }
}

/// Answers octal-game requests: from an `octal` run of the same code that
/// covers the heap (values read block by block, the period from the run's
/// summary), else in memory (heaps up to [`MAX_IN_MEMORY_N`]).
pub struct OctalProbe {
    runs: Vec<OctalRun>,
    cache: Arc<BlockCache>,
}

impl Default for OctalProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl OctalProbe {
    /// A probe without runs: everything computed in memory.
    pub fn new() -> OctalProbe {
        Self::with_cache(BlockCache::new(DEFAULT_CACHE_BYTES))
    }

    /// [`OctalProbe::new`], reading runs' blocks through `cache`.
    pub fn with_cache(cache: Arc<BlockCache>) -> OctalProbe {
        OctalProbe {
            runs: Vec::new(),
            cache,
        }
    }

    /// Answers the code of the `octal` run `view` from it, for heaps up to
    /// its `n_max`.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if it is another kind or its plan lacks a
    /// valid code or `n_max`.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<()> {
        let dir = view.dir.root().display().to_string();
        crate::pipeline::probe::require_kind(&view, "octal")?;
        let code = view
            .plan
            .params
            .get("code")
            .and_then(toml::Value::as_str)
            .and_then(|c| OctalCode::parse(c).ok())
            .ok_or_else(|| ProbeError::bad(format!("{dir}: the plan gives no valid code")))?;
        let n_max = view
            .plan
            .params
            .get("n_max")
            .and_then(toml::Value::as_integer)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ProbeError::bad(format!("{dir}: the plan gives no n_max")))?;
        self.runs.push(OctalRun {
            shards: RunShards::new(view, self.cache.clone()),
            code: code.to_string(),
            n_max,
            ranges: OnceLock::new(),
            summary: OnceLock::new(),
        });
        Ok(())
    }

    /// The runs answered from: `(code, n_max, run directory)`.
    pub fn runs(&self) -> Vec<(String, usize, String)> {
        self.runs
            .iter()
            .map(|r| {
                (
                    r.code.clone(),
                    r.n_max,
                    r.shards.view().dir.root().display().to_string(),
                )
            })
            .collect()
    }

    /// `G(n)`, the values listed before it and the proved period.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] for a malformed code;
    /// [`ProbeError::NotSolved`] for `n` above [`MAX_IN_MEMORY_N`] that no
    /// run covers; [`ProbeError::Run`] for a damaged shard or summary.
    pub fn answer(&self, req: &OctalRequest) -> ProbeResult<OctalAnswer> {
        self.answer_with(req, &Progress::default())
    }

    /// [`OctalProbe::answer`], reporting in `progress` how far the values
    /// are (in units of n², as the work grows: a million values of a game
    /// without a rare-value class take about a minute).
    ///
    /// # Errors
    /// As [`OctalProbe::answer`].
    pub fn answer_with(&self, req: &OctalRequest, progress: &Progress) -> ProbeResult<OctalAnswer> {
        let c = OctalCode::parse(&req.code).map_err(ProbeError::bad)?;
        let n = req.n;
        let code = c.to_string();
        if let Some(run) = self.runs.iter().find(|r| r.code == code && n <= r.n_max) {
            let s = run.summary()?;
            let from = (n + 1).saturating_sub(RUN_LIST_MAX);
            let values = run.values(from as u64, n as u64)?;
            return Ok(OctalAnswer {
                code,
                n,
                values_from: from,
                values,
                period: s.periodic.then_some(OctalPeriod {
                    preperiod: s.preperiod as usize,
                    period: s.period as usize,
                    checked_through: s.checked_through as usize,
                }),
                searched: s.n_max as usize + 1,
                t: s.t as usize,
                source: format!(
                    "run {}, n ≤ {}",
                    run.shards.view().dir.root().display(),
                    run.n_max
                ),
            });
        }
        if let Some(run) = self.runs.iter().find(|r| r.code == code) {
            return Err(ProbeError::NotSolved(format!(
                "--n {n}: the run {} of {code} has n ≤ {} only; run an `octal` job with \
                 a larger n_max",
                run.shards.view().dir.root().display(),
                run.n_max
            )));
        }
        if n > MAX_IN_MEMORY_N {
            return Err(ProbeError::NotSolved(format!(
                "--n {n}: at most {MAX_IN_MEMORY_N} here; run an `octal` job for more"
            )));
        }
        let end = if req.period {
            n.max(QUERY_PERIOD_SEARCH)
        } else {
            n
        } + 1;
        progress.check_work(
            end as u64,
            &format!("G(0..{end}) of the octal game {c}"),
            &format!("run an `octal` job (code = \"{c}\", n_max = {n}) and serve or --run-dir it"),
        )?;
        // Values as u32 and the solver's byte copies (value and reversed),
        // the text printed.
        crate::pipeline::resources::check_allocation(
            &format!("--n {n}: G(0..={n}) in memory"),
            end as u64 * 24,
        )
        .map_err(ProbeError::NotSolved)?;
        let square = |x: usize| (x as u64) * (x as u64);
        let what = format!("G(0..{end}) of the octal game {c}");
        // The time model: a short prefix computed now (kept: the values
        // below go on from it), its work extrapolated to `end`.
        let mut values = Vec::new();
        let limit = progress
            .time_limit
            .map_or(f64::INFINITY, |l| l.as_secs_f64());
        progress.start(0, format!("the time of {what} (a prefix of it)"));
        let seconds = estimate_seconds(&c, &mut values, end, limit, &progress.stop);
        if progress.stopped() {
            return Err(progress.stopped_error(&what));
        }
        progress.check_time(
            seconds,
            &what,
            &format!("run an `octal` job (code = \"{c}\", n_max = {n}) and serve or --run-dir it"),
        )?;
        if square(end) >= LONG_OCTAL_WORK {
            progress.start_long(square(end), what.clone());
        } else {
            progress.start(square(end), what.clone());
        }
        // In 64 steps of equal work (the cost of G(0..e) grows like e²).
        for k in 1..=64u64 {
            let e = ((end as f64) * (k as f64 / 64.0).sqrt()).ceil() as usize;
            c.extend_until(&mut values, e.min(end), &progress.stop);
            if progress.stopped() {
                return Err(progress.stopped_error(&what));
            }
            progress
                .done
                .store(square(values.len()), std::sync::atomic::Ordering::Relaxed);
        }
        let period = find_period(&values, c.max_removal());
        let searched = values.len();
        values.truncate(n + 1);
        Ok(OctalAnswer {
            code,
            n,
            values_from: 0,
            values,
            period,
            searched,
            t: c.max_removal(),
            source: format!("computed in memory, n < {searched}"),
        })
    }
}

impl Probe for OctalProbe {
    fn game(&self) -> &'static str {
        "octal"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        if let Some(h) = param(params, "heaps") {
            if let Some(k) = ["n", "period"]
                .into_iter()
                .find(|k| param(params, k).is_some())
            {
                return Err(ProbeError::bad(format!(
                    "parameter `{k}` does not go with `heaps` (every move of the heaps is listed; ask `n` without `heaps` for G(0..=n))"
                )));
            }
            return Ok(octal_heaps_answer(&required::<String>(params, "code")?, h)?.json());
        }
        Ok(self.answer(&OctalRequest::from_params(params)?)?.json())
    }

    fn query_with(&self, params: &Params, progress: &Progress) -> ProbeResult<Vec<u8>> {
        if param(params, "heaps").is_some() {
            return Ok(self.query(params)?.to_string().into_bytes());
        }
        let req = OctalRequest::from_params(params)?;
        Ok(self
            .answer_with(&req, progress)?
            .json()
            .to_string()
            .into_bytes())
    }

    fn keys(&self) -> &'static [&'static str] {
        &["code", "n", "period", "heaps"]
    }

    /// A lookup when a run of the code is served (it answers, or refuses a
    /// heap past its `n_max` at once) or the request is malformed; else
    /// the values are computed in memory.
    fn work_of(&self, params: &Params) -> Work {
        if param(params, "heaps").is_some() {
            return Work::Lookup;
        }
        let Ok(req) = OctalRequest::from_params(params) else {
            return Work::Lookup;
        };
        let Ok(c) = OctalCode::parse(&req.code) else {
            return Work::Lookup;
        };
        let code = c.to_string();
        if req.n > MAX_IN_MEMORY_N || self.runs.iter().any(|r| r.code == code) {
            Work::Lookup
        } else {
            Work::Compute
        }
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "heaps",
            "title": "Octal games",
            "take": "code",
            "code": "0.77",
            "example": "5,7",
            "rules": "An octal game's code says, for each number k of tokens a move takes from one heap, whether the rest may be left as no heap, one heap, or two heaps (0.77 Kayles, 0.07 Dawson's Kayles). Whoever cannot move loses. Grundy values by the Sprague–Grundy theorem, periods proved by the Guy–Smith theorem (R. K. Guy and C. A. B. Smith, The G-values of various games, Proc. Cambridge Philos. Soc. 52, 1956).",
            "in_memory_max_n": MAX_IN_MEMORY_N,
            "runs": self.runs().into_iter().map(|(code, n_max, dir)| serde_json::json!({
                "code": code, "n_max": n_max, "run_dir": dir,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Largest heap [`octal_heaps_answer`] takes (every move of every heap is
/// listed).
pub const MAX_OCTAL_HEAP: usize = 1_000;

/// Most heaps [`octal_heaps_answer`] takes (each move repeats the heaps
/// after it: the answer grows with heaps × moves).
pub const MAX_OCTAL_HEAPS: usize = 64;

/// The answer of [`octal_heaps_answer`]: a sum of heaps of an octal game,
/// its Grundy value (the nim-sum of the heaps' values) and every move with
/// the value it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalHeapsAnswer {
    /// The code, normalised.
    pub code: String,
    /// The heaps.
    pub heaps: Vec<usize>,
    /// The sum's Grundy value.
    pub grundy: u32,
    /// Every move, heap by heap.
    pub moves: Vec<OctalMove>,
}

/// One move of [`OctalHeapsAnswer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalMove {
    /// The heap taken from (0-based).
    pub heap: usize,
    /// Tokens taken.
    pub take: usize,
    /// The heaps left in its place (none, one or two).
    pub leaves: Vec<usize>,
    /// Every heap after the move.
    pub after: Vec<usize>,
    /// Their Grundy value.
    pub grundy: u32,
}

/// Every move of the octal game `code` on `heaps` (written `3,4,5`) with
/// the Grundy value it leaves, values computed in memory (Sprague–Grundy:
/// a sum's value is the nim-sum of its heaps' values).
///
/// # Errors
/// [`ProbeError::BadRequest`] for a malformed code or list, a heap over
/// [`MAX_OCTAL_HEAP`], more than [`MAX_OCTAL_HEAPS`] heaps or more than
/// [`MAX_OCTAL_HEAP`] tokens in all.
pub fn octal_heaps_answer(code: &str, heaps: &str) -> ProbeResult<OctalHeapsAnswer> {
    let c = OctalCode::parse(code).map_err(ProbeError::bad)?;
    let h: Vec<usize> = parse_list(heaps, "heaps")?;
    if let Some(&big) = h.iter().find(|&&x| x > MAX_OCTAL_HEAP) {
        return Err(ProbeError::bad(format!(
            "heaps `{heaps}`: a heap of {big}; every move is listed for heaps of at most {MAX_OCTAL_HEAP} (ask `n` for G(n) of larger heaps)"
        )));
    }
    if h.len() > MAX_OCTAL_HEAPS || h.iter().sum::<usize>() > MAX_OCTAL_HEAP {
        return Err(ProbeError::bad(format!(
            "heaps `{heaps}`: every move is listed for at most {MAX_OCTAL_HEAPS} heaps of {MAX_OCTAL_HEAP} tokens in all"
        )));
    }
    let g = c.grundy_sequence(h.iter().copied().max().unwrap_or(0));
    let grundy = h.iter().fold(0, |x, &n| x ^ g[n]);
    let mut moves = Vec::new();
    for (i, &n) in h.iter().enumerate() {
        for (k, left) in c.moves(n) {
            let value = left.iter().fold(grundy ^ g[n], |x, &m| x ^ g[m]);
            let mut after = h[..i].to_vec();
            after.extend(&left);
            after.extend(&h[i + 1..]);
            moves.push(OctalMove {
                heap: i,
                take: k,
                leaves: left,
                after,
                grundy: value,
            });
        }
    }
    Ok(OctalHeapsAnswer {
        code: c.to_string(),
        heaps: h,
        grundy,
        moves,
    })
}

impl OctalHeapsAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.code,
            "heaps": self.heaps,
            "grundy": self.grundy,
            "p_position": self.grundy == 0,
            "moves": self.moves.iter().map(|m| serde_json::json!({
                "heap": m.heap + 1, "take": m.take, "leaves": m.leaves, "after": m.after,
                "grundy": m.grundy, "winning": m.grundy == 0,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for OctalHeapsAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |h: &[usize]| {
            if h.is_empty() {
                "nothing".to_string()
            } else {
                h.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(" + ")
            }
        };
        writeln!(
            f,
            "octal game {}, heaps {}: Grundy value {} ({})",
            self.code,
            list(&self.heaps),
            self.grundy,
            pn_words(u64::from(self.grundy))
        )?;
        for m in &self.moves {
            writeln!(
                f,
                "  heap {} ({}): take {}, leave {}: value {}{}",
                m.heap + 1,
                self.heaps[m.heap],
                m.take,
                list(&m.leaves),
                m.grundy,
                if m.grundy == 0 { " (winning)" } else { "" }
            )?;
        }
        Ok(())
    }
}
