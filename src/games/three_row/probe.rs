//! Probe of three-row Chomp: `f(q, r)` (Brouwer's recurrence: the unique `p`
//! with `(p, q, r)` a P-position when `f ≥ q`), the P-position if any, and
//! the class of row `r` (dead, linear, periodic, undetermined) from a
//! `three-row` run's rows table or an in-memory run.
//!
//! With a run, `f(q, r)` for `q ≤ q_max` comes from the run's shards: the
//! tile holding the cell is solved again from the row and column states its
//! neighbour tiles stored (read block by block through the shared
//! [`BlockCache`]), over the part of the tile up to `(q, r)` only
//! ([`f_from_tiles`]): at most one tile of work instead of the whole
//! triangle below `(q, r)`.

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::games::three_row::kind::{MAX_Q, f_from_tiles, row_line};
use crate::pipeline::Error;
use crate::pipeline::RunView;
use crate::pipeline::kind::RunAccess;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES, RunShards};
use crate::pipeline::probe::{
    Params, Probe, ProbeError, ProbeResult, Progress, Work, open_run_of_kind, param, required,
};
use crate::pipeline::resources::{check_allocation, cores};
use crate::pipeline::shard::{Section, Shard, ShardHeader};
use crate::solvers::three_row::{
    RowState, TileGeom, TileInput, TileOutput, TileRecord, classify, solve_tile_blocked_until,
};

/// Default last column of the in-memory classification.
pub const DEFAULT_Q_MAX: u32 = 16_000;

/// A three-row request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreeRowRequest {
    /// Second row length q.
    pub q: u32,
    /// Third row length r (r ≤ q).
    pub r: u32,
    /// Last column of an in-memory classification (default
    /// `max(q, 16000)`); unused when a run gives the class.
    pub q_max: Option<u32>,
}

impl ThreeRowRequest {
    /// The request from the parameters `q`, `r` and optional `q_max`.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] naming a missing or malformed parameter.
    pub fn from_params(params: &Params) -> ProbeResult<ThreeRowRequest> {
        Ok(ThreeRowRequest {
            q: required(params, "q")?,
            r: required(params, "r")?,
            q_max: match param(params, "q_max") {
                Some(_) => Some(required(params, "q_max")?),
                None => None,
            },
        })
    }
}

/// The answer of [`ThreeRowProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreeRowAnswer {
    /// Second row length.
    pub q: u32,
    /// Third row length.
    pub r: u32,
    /// `f(q, r)`.
    pub f: u32,
    /// Where `f` comes from (a tile of a run, or computed in memory).
    pub f_source: String,
    /// Row `r` as a line of the rows table: `r,class,c,q0,period,start,pattern`.
    pub class_line: String,
    /// Where the class comes from.
    pub class_source: String,
}

impl ThreeRowAnswer {
    /// The P-position `(f, q, r)` when `f ≥ q`.
    pub fn p_position(&self) -> Option<(u32, u32, u32)> {
        (self.f >= self.q).then_some((self.f, self.q, self.r))
    }

    /// The JSON form (what `query three-row --json` prints and `serve`
    /// answers). The row's fields are typed: `class` and `pattern` strings,
    /// `q0`, `period` and `start` integers, `c` a number (an integer, or
    /// for a periodic row the mean of its pattern, which may be a fraction:
    /// then `c_exact` gives it exactly, e.g. `"7/3"`); a field the class
    /// has not is `null`.
    pub fn json(&self) -> serde_json::Value {
        let fields: Vec<&str> = self.class_line.split(',').collect();
        let field = |i: usize| fields.get(i).map(|s| s.trim()).filter(|s| !s.is_empty());
        let int = |i: usize| field(i).and_then(|s| s.parse::<i64>().ok());
        serde_json::json!({
            "q": self.q, "r": self.r, "f": self.f, "f_source": self.f_source,
            "p_position": self.p_position().map(|(p, q, r)| [p, q, r]),
            "class": field(1), "c": field(2).and_then(number), "c_exact": field(2),
            "q0": int(3), "period": int(4), "start": int(5), "pattern": field(6),
            "class_source": self.class_source,
        })
    }
}

/// A number written as an integer or a fraction `a/b`, as JSON: an
/// integer, else the nearest float.
fn number(s: &str) -> Option<serde_json::Value> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(i.into());
    }
    let (a, b) = s.split_once('/')?;
    let (a, b) = (a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?);
    (b != 0)
        .then(|| serde_json::Number::from_f64(a as f64 / b as f64))
        .flatten()
        .map(serde_json::Value::Number)
}

impl fmt::Display for ThreeRowAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (q, r, v) = (self.q, self.r, self.f);
        writeln!(f, "f({q}, {r}) = {v}")?;
        match self.p_position() {
            Some((p, q, r)) => writeln!(f, "  P-position: ({p}, {q}, {r})")?,
            None => writeln!(
                f,
                "  no P-position (p, {q}, {r}): row {r} died at column {v}, where ({v}, {v}, {r}) is a P-position"
            )?,
        }
        writeln!(
            f,
            "  row {r}: r,class,c,q0,period,start,pattern = {}",
            self.class_line
        )?;
        writeln!(f, "  (f: {}; class: {})", self.f_source, self.class_source)
    }
}

/// Answers three-row requests: `f` computed in memory (rows `0..=r`,
/// columns `0..=q`), the class from a run's `tables/three-row-rows.csv`
/// (read once) or from an in-memory run to `q_max`.
pub struct ThreeRowProbe {
    run: Option<ThreeRowRun>,
    cache: Arc<BlockCache>,
}

/// A `three-row` run: its shards, its `q_max` (its tiles hold `f(q, r)`
/// for `r ≤ q ≤ q_max`, its rows table every row `r ≤ q_max`) and the rows
/// table, read once.
struct ThreeRowRun {
    shards: RunShards,
    q_max: u32,
    rows: OnceLock<Vec<String>>,
}

/// The sections of tile `name` that a neighbour needs (`meta`, `diag`,
/// `rows`, `cols`), read block by block, as a [`Shard`].
fn tile_sections(shards: &RunShards, name: &str) -> Result<Shard, Error> {
    let view = shards.view();
    let j = view
        .plan
        .job(name)
        .ok_or_else(|| Error::job(name, "no such job in this plan"))?;
    let mut sections = Vec::new();
    for s in ["meta", "diag", "rows", "cols"] {
        let len = shards.section_len(name, s)?;
        sections.push(Section::new(s, shards.range(name, s, 0, len)?));
    }
    Ok(Shard {
        header: ShardHeader {
            kind: view.plan.kind.clone(),
            job_name: j.name.clone(),
            job_id: j.id.clone(),
            sections: sections
                .iter()
                .map(|s| (s.name.clone(), s.bytes.len() as u64))
                .collect(),
        },
        sections,
    })
}

impl Default for ThreeRowProbe {
    fn default() -> Self {
        Self::new()
    }
}

/// The geometry of rows `0..rows`, columns `0..=q_last`.
fn geometry(q_last: u32, rows: u32) -> TileGeom {
    TileGeom {
        q0: 0,
        q1: q_last + 1,
        r0: 0,
        r1: rows,
        q_max: q_last,
    }
}

/// Estimated peak memory in bytes of the in-memory solve of rows `0..rows`,
/// columns `0..=q_last`: the process and its threads (48 MiB), 120 bytes
/// per column (every column's state is kept: its bitset, its P-position
/// count, the diagonal) and a sixth of a byte per cell (the row states).
/// Measured peaks (resident; BENCHMARKS.md): q = 10⁶, r = 0: 122 MB
/// (estimated 171 MB); q = 3·10⁶, r = 1: 352 MB (411); q = 10⁶, r = 100:
/// 123 MB (187); q = 20,000, r = 3,000: 16 MB (62); q = 50,000, r = 10,000:
/// 69 MB (131); q = 200,000, r = 1,000: 51 MB (108). The earlier estimate,
/// `rows · columns / 2`, said 96 MiB for q = 10⁸, r = 1, which needs 12 GB.
pub fn solve_memory(q_last: u32, rows: u32) -> u64 {
    let cols = u64::from(q_last) + 1;
    (48 << 20) + cols.saturating_mul(120) + solve_cells(q_last, rows) / 6
}

/// Refuses, before allocating, an in-memory solve of rows `0..rows` to
/// column `q_last` above the allocation limit (`--memory`) or above the
/// work budget ([`Progress::max_work`] cells).
fn check_solve(q_last: u32, rows: u32, flag: &str, progress: &Progress) -> ProbeResult<()> {
    let what = format!(
        "{flag}: computing rows 0..={} to column {q_last} in memory",
        rows - 1
    );
    check_allocation(&what, solve_memory(q_last, rows)).map_err(|e| {
        ProbeError::NotSolved(format!(
            "{e}; a three-row run (--run-dir) answers classes without it"
        ))
    })?;
    progress.check_work(
        solve_cells(q_last, rows),
        &what,
        "a three-row run covering it (a job file with `kind = \"three-row\"` and a \
         large enough `q_max`, then --run-dir or serve it) answers without it",
    )
}

/// Cells of one in-memory solve from which a query says up front that it
/// takes a while: about 1.4 s of CPU, most of a second on two idle cores
/// (`query three-row --q 20000 --r 3000` solves its 1.1·10⁸ cells in 0.8 s
/// of CPU; BENCHMARKS.md).
pub const LONG_CELLS: u64 = 200_000_000;

/// Cells of the in-memory solve of rows `0..rows`, columns `0..=q_last`
/// (`Σ_q min(rows, q + 1)`, in closed form: [`TileGeom::cells`] counts
/// column by column).
pub fn solve_cells(q_last: u32, rows: u32) -> u64 {
    let (cols, rows) = (u64::from(q_last) + 1, u64::from(rows));
    if cols <= rows {
        cols * (cols + 1) / 2
    } else {
        rows * (rows + 1) / 2 + (cols - rows) * rows
    }
}

/// Solves rows `0..rows` of columns `0..=q_last` in memory, counting cells
/// in `progress` (a long stage from [`LONG_CELLS`] cells on).
fn solve(q_last: u32, rows: u32, progress: &Progress) -> ProbeResult<TileOutput> {
    let g = geometry(q_last, rows);
    let what = format!("f(q, r) for rows r ≤ {} and columns q ≤ {q_last}", rows - 1);
    if g.cells() >= LONG_CELLS {
        progress.start_long(g.cells(), what.clone());
    } else {
        progress.start(g.cells(), what.clone());
    }
    let out = solve_tile_blocked_until(
        &g,
        TileInput::default(),
        &TileRecord::default(),
        256,
        256,
        cores(),
        &progress.done,
        &progress.stop,
    );
    match out {
        Err(_) if progress.stopped() => Err(progress.stopped_error(&what)),
        out => out.map_err(ProbeError::bad),
    }
}

/// Cells of the in-memory solves a request needs (for a progress note).
pub fn cells_of(a: &ThreeRowRequest, with_run: bool) -> u64 {
    let first = solve_cells(a.q, a.r + 1);
    let q_max = a.q_max.unwrap_or(DEFAULT_Q_MAX).max(a.q);
    if with_run || q_max == a.q {
        first
    } else {
        first + solve_cells(q_max, a.r + 1)
    }
}

impl ThreeRowProbe {
    /// A probe without a run: classes are computed in memory.
    pub fn new() -> ThreeRowProbe {
        Self::with_cache(BlockCache::new(DEFAULT_CACHE_BYTES))
    }

    /// [`ThreeRowProbe::new`], reading a run's blocks through `cache`.
    pub fn with_cache(cache: Arc<BlockCache>) -> ThreeRowProbe {
        ThreeRowProbe { run: None, cache }
    }

    /// Takes row classes from the `three-row` run `view`.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if it is another kind or a run is already set.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<()> {
        crate::pipeline::probe::require_kind(&view, "three-row")?;
        if let Some(other) = &self.run {
            return Err(ProbeError::bad(format!(
                "two three-row runs given: {} and {}",
                other.shards.view().dir.root().display(),
                view.dir.root().display()
            )));
        }
        let q_max = view
            .plan
            .params
            .get("q_max")
            .and_then(toml::Value::as_integer)
            .and_then(|q| u32::try_from(q).ok())
            .ok_or_else(|| {
                ProbeError::bad(format!(
                    "{}: the plan gives no q_max",
                    view.dir.root().display()
                ))
            })?;
        self.run = Some(ThreeRowRun {
            shards: RunShards::new(view, self.cache.clone()),
            q_max,
            rows: OnceLock::new(),
        });
        Ok(())
    }

    /// A probe of the run in `dir`.
    ///
    /// # Errors
    /// As [`ThreeRowProbe::add_run`], and if `dir` is not a run directory.
    pub fn open(dir: &Path) -> ProbeResult<ThreeRowProbe> {
        let mut p = ThreeRowProbe::new();
        p.add_run(open_run_of_kind(dir, super::THREE_ROW)?)?;
        Ok(p)
    }

    /// The run directory answering classes, if any.
    pub fn run_dir(&self) -> Option<String> {
        self.run
            .as_ref()
            .map(|r| r.shards.view().dir.root().display().to_string())
    }

    /// Whether `params` reads the run (or is refused at once:
    /// [`Work::Lookup`]) or solves in memory ([`Work::Compute`]).
    pub fn work(&self, params: &Params) -> Work {
        let Ok(a) = ThreeRowRequest::from_params(params) else {
            return Work::Lookup;
        };
        // Refused at once.
        if a.r > a.q || a.q > MAX_Q || a.q_max.is_some_and(|q| q > MAX_Q) {
            return Work::Lookup;
        }
        match &self.run {
            // f from the run's tiles, or a row not in its table (refused).
            Some(run) if a.q <= run.q_max || a.r > run.q_max => Work::Lookup,
            _ => Work::Compute,
        }
    }

    /// Row `r`'s line of the run's rows table (read once), and where it
    /// comes from. Refused, without reading, for a row past the run's
    /// `q_max` (the table has rows `r ≤ q_max` only).
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] for a row the table has not;
    /// [`ProbeError::Run`] if the table cannot be read.
    fn class_from_run(run: &ThreeRowRun, r: u32) -> ProbeResult<(String, String)> {
        let view = run.shards.view();
        let missing = || {
            ProbeError::NotSolved(format!(
                "row r = {r} is not in the rows table of the three-row run {}, which \
                 classifies rows r ≤ {} (a three-row run with q_max ≥ {r} answers it)",
                view.dir.root().display(),
                run.q_max
            ))
        };
        if r > run.q_max {
            return Err(missing());
        }
        let p = view.dir.tables_dir().join("three-row-rows.csv");
        let lines = match run.rows.get() {
            Some(l) => l,
            None => {
                let text = std::fs::read_to_string(&p).map_err(Error::io(&p))?;
                let _ = run.rows.set(text.lines().map(str::to_string).collect());
                run.rows.get().expect("just set")
            }
        };
        let key = r.to_string();
        let line = lines
            .iter()
            .find(|l| l.split(',').next() == Some(key.as_str()))
            .ok_or_else(missing)?;
        Ok((line.clone(), p.display().to_string()))
    }

    /// `f(q, r)`, the P-position and row `r`'s class.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if `r > q`; [`ProbeError::NotSolved`] if the
    /// run's rows table does not have row `r`; [`ProbeError::Run`] if it
    /// cannot be read.
    pub fn answer(&self, a: &ThreeRowRequest) -> ProbeResult<ThreeRowAnswer> {
        self.answer_with(a, &Progress::default())
    }

    /// [`ThreeRowProbe::answer`], counting the cells solved in `progress`.
    /// Refuses, before allocating, a solve above the allocation limit
    /// ([`check_allocation`]; `query --memory`).
    ///
    /// # Errors
    /// As [`ThreeRowProbe::answer`]; [`ProbeError::NotSolved`] naming the
    /// memory needed and the limit.
    pub fn answer_with(
        &self,
        a: &ThreeRowRequest,
        progress: &Progress,
    ) -> ProbeResult<ThreeRowAnswer> {
        if a.r > a.q {
            return Err(ProbeError::bad(format!(
                "--r {} > --q {}: three-row positions have p ≥ q ≥ r",
                a.r, a.q
            )));
        }
        let q_max = a.q_max.unwrap_or(DEFAULT_Q_MAX).max(a.q);
        // Without a run both solves happen in memory: refuse before either.
        if self.run.is_none() {
            let flag = format!("--q {} --r {}", a.q, a.r);
            check_solve(a.q, a.r + 1, &flag, progress)?;
            if q_max != a.q {
                let flag = format!("--q-max {q_max} --r {}", a.r);
                check_solve(q_max, a.r + 1, &flag, progress)?;
                // Both solves are the request's work.
                let both = solve_cells(a.q, a.r + 1) + solve_cells(q_max, a.r + 1);
                progress.check_work(both, &flag, "give --q-max equal to --q, or use a run")?;
            }
        }
        for (flag, v) in [("--q", a.q), ("--q-max", q_max)] {
            if v > MAX_Q {
                return Err(ProbeError::bad(format!(
                    "{flag} {v}: at most {MAX_Q} (as for a three-row run's q_max)"
                )));
            }
        }
        // The class first: a row the run does not classify is refused
        // before f is computed.
        let from_table = match &self.run {
            Some(run) => Some(Self::class_from_run(run, a.r)?),
            None => None,
        };
        let from_run = match &self.run {
            Some(ThreeRowRun { shards, .. }) => {
                f_from_tiles(shards.view().jobs(), a.q, a.r, &|name| {
                    tile_sections(shards, name)
                })?
                .map(|(tile, f)| {
                    (
                        f,
                        format!("{tile} of run {}", shards.view().dir.root().display()),
                    )
                })
            }
            None => None,
        };
        let (f, f_source, out) = match from_run {
            Some((f, source)) => (f, source, None),
            None => {
                check_solve(a.q, a.r + 1, &format!("--q {} --r {}", a.q, a.r), progress)?;
                let out = solve(a.q, a.r + 1, progress)?;
                let f = match &out.rows[a.r as usize] {
                    RowState::Dead { c } => *c,
                    RowState::Live(l) => a.q + l.d_at(a.q),
                };
                (f, format!("computed in memory to q = {}", a.q), Some(out))
            }
        };
        let (class_line, class_source) = match from_table {
            Some(line_and_source) => line_and_source,
            None => {
                // The first solve already went to q_max when q = q_max.
                let again;
                let o = match &out {
                    Some(out) if q_max == a.q => out,
                    _ => {
                        again = solve(q_max, a.r + 1, progress)?;
                        &again
                    }
                };
                let c = classify(a.r, &o.rows[a.r as usize], q_max);
                (
                    row_line(a.r, &c),
                    format!("computed in memory to q_max = {q_max}"),
                )
            }
        };
        Ok(ThreeRowAnswer {
            q: a.q,
            r: a.r,
            f,
            f_source,
            class_line,
            class_source,
        })
    }
}

impl Probe for ThreeRowProbe {
    fn game(&self) -> &'static str {
        "three-row"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        Ok(self.answer(&ThreeRowRequest::from_params(params)?)?.json())
    }

    fn query_with(&self, params: &Params, progress: &Progress) -> ProbeResult<Vec<u8>> {
        let req = ThreeRowRequest::from_params(params)?;
        Ok(self
            .answer_with(&req, progress)?
            .json()
            .to_string()
            .into_bytes())
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "three-row", "title": "Three-row Chomp", "run_dir": self.run_dir(),
            "rules": "Chomp on three rows of p ≥ q ≥ r squares. For each q and r there is at most one p that makes (p, q, r) a P-position, f(q, r); each row r's values settle into a class (A. E. Brouwer, G. Horváth, I. Molnár-Sáska and C. Szabó, On three-rowed Chomp, INTEGERS 5, 2005, G07).",
        })
    }

    fn keys(&self) -> &'static [&'static str] {
        &["q", "r", "q_max"]
    }

    fn work_of(&self, params: &Params) -> Work {
        self.work(params)
    }
}
