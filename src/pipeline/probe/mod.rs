//! Probes: answers about single positions, read from run directories (or
//! computed in memory for small games), for `query` and `serve`.
//!
//! Each game has its probes in `games/<game>/probe.rs` or `probe/` (e.g.
//! `games/chomp/probe/`, and `games/impartial/probe/`, whose `mod.rs`
//! answers Nim, subtraction and Hackenbush, games without a job kind):
//! a typed request, a typed answer that prints itself as text
//! ([`std::fmt::Display`]) and as JSON (`json()`), and a constructor that
//! opens its run directories once. The command line only parses arguments
//! and prints answers; `serve` reaches every probe through [`Probe`], which
//! takes the request as `key=value` pairs (an HTTP query string).
//!
//! Errors are [`ProbeError`]: the request is malformed
//! ([`ProbeError::BadRequest`]), the position is outside what the run
//! directories (or the in-memory limits) solve ([`ProbeError::NotSolved`]),
//! or a shard is missing or damaged ([`ProbeError::Run`]).

pub mod blocks;

use std::collections::BTreeMap;
use std::path::Path;

use super::error::Error;
use super::kind::JobKind;
use super::run_view::RunView;

/// Why a probe gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The request is malformed or impossible (a bad position, an illegal
    /// move, a missing parameter). `serve` answers 400.
    #[error("{0}")]
    BadRequest(String),
    /// The request is well formed but outside the solved tables (no run
    /// directory covers it, or it is too large to compute here). `serve` answers 404.
    #[error("{0}")]
    NotSolved(String),
    /// A shard or table needed for the answer is missing, damaged or
    /// unreadable. `serve` answers 500.
    #[error(transparent)]
    Run(#[from] Error),
    /// The answer was no longer wanted before it was done: its client
    /// left, its time ran out or the server is stopping
    /// ([`Progress::stop`]). `serve` answers 503.
    #[error("{0}")]
    Stopped(String),
}

impl ProbeError {
    /// A [`ProbeError::BadRequest`] from anything printable.
    pub fn bad(message: impl std::fmt::Display) -> ProbeError {
        ProbeError::BadRequest(message.to_string())
    }
}

/// Result of a probe.
pub type ProbeResult<T> = std::result::Result<T, ProbeError>;

/// How far a long in-memory answer is, for a progress display: the probe
/// sets `total` (in units of its choosing, e.g. cells) and `what`, then adds
/// to `done` as it goes (work done, never time); another thread reads them.
/// A probe that finishes quickly may leave it untouched.
///
/// A stage the probe knows to be long from the work it will do (e.g. the
/// cells of a solve, above a threshold of about a second's work on a 2-core
/// machine) starts with [`Progress::start_long`], which tells
/// [`Progress::on_long_stage`] before the work begins: the CLI says so at
/// once, whatever the speed of the machine.
///
/// It also bounds the work: [`Progress::max_work`] is what one answer may
/// compute in memory (checked by the probe before it starts, from the size
/// of the request), and [`Progress::stop`], set by another thread, asks a
/// long computation to give up at its next check.
pub struct Progress {
    /// Units done so far.
    pub done: std::sync::atomic::AtomicU64,
    /// Units in all (0: unknown yet).
    pub total: std::sync::atomic::AtomicU64,
    /// What is being computed, e.g. `f(q, r) for 9.0e8 cells`.
    pub what: std::sync::Mutex<String>,
    /// Told `what` of every stage started with [`Progress::start_long`],
    /// before the stage's work begins (e.g. the CLI prints a line).
    pub on_long_stage: Option<LongStageHook>,
    /// Most units of work (the values an in-memory computation produces:
    /// three-row cells, octal Grundy values) one answer may need; a request
    /// needing more is refused before any of it is done
    /// ([`Progress::check_work`]). [`DEFAULT_MAX_WORK`] unless set.
    pub max_work: u64,
    /// Set (by a server whose client left or whose time ran out, or on
    /// shutdown) to make a long computation stop at its next check; the
    /// probe then answers [`ProbeError::Stopped`].
    pub stop: std::sync::atomic::AtomicBool,
    /// Longest an in-memory computation may take by its estimate: a probe
    /// with a time model refuses at once what it estimates to take longer
    /// ([`Progress::check_time`]). `None`: no bound.
    pub time_limit: Option<std::time::Duration>,
}

/// What one answer may compute in memory unless `--max-work` says
/// otherwise: 3·10⁸ values, about two seconds of CPU here for three-row
/// cells (BENCHMARKS.md).
pub const DEFAULT_MAX_WORK: u64 = 300_000_000;

impl Default for Progress {
    fn default() -> Self {
        Progress {
            done: Default::default(),
            total: Default::default(),
            what: Default::default(),
            on_long_stage: None,
            max_work: DEFAULT_MAX_WORK,
            stop: Default::default(),
            time_limit: None,
        }
    }
}

/// What [`Progress::on_long_stage`] holds: told `what` a long stage computes.
pub type LongStageHook = Box<dyn Fn(&str) + Send + Sync>;

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("done", &self.done)
            .field("total", &self.total)
            .field("what", &self.what)
            .field("on_long_stage", &self.on_long_stage.is_some())
            .field("max_work", &self.max_work)
            .field("stop", &self.stop)
            .field("time_limit", &self.time_limit)
            .finish()
    }
}

impl Progress {
    /// Starts a new stage of `total` units described by `what`.
    pub fn start(&self, total: u64, what: impl Into<String>) {
        use std::sync::atomic::Ordering;
        *self
            .what
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = what.into();
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// Whether the answer is no longer wanted ([`Progress::stop`] is set).
    pub fn stopped(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The error of a computation stopped by [`Progress::stop`].
    pub fn stopped_error(&self, what: &str) -> ProbeError {
        ProbeError::Stopped(format!(
            "stopped computing {what}: the answer was no longer wanted (the client left, \
             its time ran out or the server is stopping)"
        ))
    }

    /// Refuses, before any of it is done, an in-memory computation of
    /// `units` values (`what`) above [`Progress::max_work`];
    /// `instead` says what to run for it.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] naming the work, the budget and `instead`.
    pub fn check_work(&self, units: u64, what: &str, instead: &str) -> ProbeResult<()> {
        if units <= self.max_work {
            return Ok(());
        }
        Err(ProbeError::NotSolved(format!(
            "{what} needs {units} values computed in memory, more than the {} allowed \
             per request here (--max-work); {instead}",
            self.max_work
        )))
    }

    /// Refuses, before the bulk of it is done, an in-memory computation
    /// (`what`) whose estimated time, `seconds` on one core here, is above
    /// [`Progress::time_limit`]; `instead` says what to run for it.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] naming the estimate, the limit and `instead`.
    pub fn check_time(&self, seconds: f64, what: &str, instead: &str) -> ProbeResult<()> {
        match self.time_limit {
            Some(limit) if seconds > limit.as_secs_f64() => Err(ProbeError::NotSolved(format!(
                "{what} would take about {} by its estimate, more than the {} s \
                 allowed per request here (--time-limit); {instead}",
                crate::pipeline::resources::fmt_seconds(seconds.ceil() as u64),
                limit.as_secs_f64()
            ))),
            _ => Ok(()),
        }
    }

    /// As [`Progress::start`], for a stage the probe knows to be long from
    /// its size; [`Progress::on_long_stage`] hears of it first.
    pub fn start_long(&self, total: u64, what: impl Into<String>) {
        let what = what.into();
        if let Some(tell) = &self.on_long_stage {
            tell(&what);
        }
        self.start(total, what);
    }
}

/// A request as `key=value` pairs (the query string of an HTTP request).
pub type Params = BTreeMap<String, String>;

/// What answering one request takes, so that a server can keep the two
/// apart ([`Probe::work_of`]): `serve` runs lookups and computations under
/// separate limits, so that a lookup never waits behind a solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Reads a run's shards (a few blocks, or at most one tile solved
    /// again), or answers from memory already filled, or refuses at once:
    /// milliseconds.
    Lookup,
    /// Computes in memory (a solve, Grundy values beyond a run): up to the
    /// work budget, seconds.
    Compute,
}

/// The parameters of a request from its `key=value` pairs in order (a
/// query string parsed), refusing a key given twice and a key not in
/// `known` (what the probe of `game` accepts).
///
/// # Errors
/// [`ProbeError::BadRequest`] naming the repeated or unknown parameter and,
/// for an unknown one, the parameters `game` knows.
pub fn params_of(
    game: &str,
    known: &[&str],
    pairs: impl IntoIterator<Item = (String, String)>,
) -> ProbeResult<Params> {
    let mut out = Params::new();
    for (k, v) in pairs {
        if !known.contains(&k.as_str()) {
            return Err(ProbeError::bad(format!(
                "unknown parameter `{k}` for {game}: the parameters are {}",
                known
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        if let Some(first) = out.get(&k) {
            return Err(ProbeError::bad(format!(
                "parameter `{k}` given twice (`{k}={first}` and `{k}={v}`): give it once"
            )));
        }
        out.insert(k, v);
    }
    Ok(out)
}

/// A game's probe as `serve` sees it: requests as `key=value` pairs,
/// answers as the JSON that `gametables query … --json` prints.
pub trait Probe: Send + Sync {
    /// The game's name in URLs (`/api/v1/NAME`).
    fn game(&self) -> &'static str;

    /// Answers one request.
    ///
    /// # Errors
    /// [`ProbeError`]: a malformed request, a position outside the solved
    /// tables, a damaged shard.
    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value>;

    /// [`Probe::query`]'s answer as compact JSON bytes (what `serve` sends).
    /// The default prints [`Probe::query`]'s value; a probe may write the
    /// same JSON without building a [`serde_json::Value`].
    ///
    /// # Errors
    /// As [`Probe::query`].
    fn query_json(&self, params: &Params) -> ProbeResult<Vec<u8>> {
        Ok(self.query(params)?.to_string().into_bytes())
    }

    /// [`Probe::query_json`] under `progress`'s bounds: at most
    /// [`Progress::max_work`] values computed in memory, and a long
    /// computation stops when [`Progress::stop`] is set (what `serve` calls
    /// on its blocking pool). The default ignores them (a probe whose every
    /// answer is small).
    ///
    /// # Errors
    /// As [`Probe::query`]; [`ProbeError::NotSolved`] above the budget,
    /// [`ProbeError::Stopped`] when stopped.
    fn query_with(&self, params: &Params, progress: &Progress) -> ProbeResult<Vec<u8>> {
        let _ = progress;
        self.query_json(params)
    }

    /// [`Probe::query_json`] if the answer needs no disk read,
    /// decompression or long computation (everything it needs is in memory
    /// already), so that a server may answer it on its async threads;
    /// `None` if it needs more (the server then asks [`Probe::query_json`]
    /// on its blocking pool). Errors found without I/O (a malformed request)
    /// may be given here. The default answers nothing here.
    fn query_cached(&self, _params: &Params) -> Option<ProbeResult<Vec<u8>>> {
        None
    }

    /// What this probe can answer (run directories, board sizes, boxes), as
    /// JSON for `GET /api/v1/` and the web page.
    fn describe(&self) -> serde_json::Value;

    /// The parameters a request may give (any other is refused by
    /// [`params_of`]), e.g. `["q", "r", "q_max"]`.
    fn keys(&self) -> &'static [&'static str];

    /// Whether answering `params` reads a run (or refuses at once:
    /// [`Work::Lookup`]) or computes in memory ([`Work::Compute`]); decided
    /// from the request and what the probe holds, without I/O. The default
    /// says it computes (a probe that says nothing is kept off the lookups'
    /// threads).
    fn work_of(&self, params: &Params) -> Work {
        let _ = params;
        Work::Compute
    }
}

/// The value of parameter `key`, if given.
pub fn param<'a>(params: &'a Params, key: &str) -> Option<&'a str> {
    params.get(key).map(String::as_str)
}

/// The value of parameter `key` parsed as `T`.
///
/// # Errors
/// [`ProbeError::BadRequest`] naming the parameter if it is missing or does
/// not parse.
pub fn required<T: std::str::FromStr>(params: &Params, key: &str) -> ProbeResult<T> {
    let v =
        param(params, key).ok_or_else(|| ProbeError::bad(format!("missing parameter `{key}`")))?;
    v.trim()
        .parse()
        .map_err(|_| ProbeError::bad(format!("parameter `{key}`: `{v}` is not a valid value")))
}

/// A boolean flag parameter: absent, `0` or `false` is false; present and
/// empty, `1` or `true` is true.
///
/// # Errors
/// [`ProbeError::BadRequest`] for any other value.
pub fn flag(params: &Params, key: &str) -> ProbeResult<bool> {
    match param(params, key).map(str::trim) {
        None | Some("0" | "false") => Ok(false),
        Some("" | "1" | "true") => Ok(true),
        Some(v) => Err(ProbeError::bad(format!(
            "parameter `{key}`: `{v}` is not a flag (write 1 or 0)"
        ))),
    }
}

/// Parses a comma-separated list of non-negative integers, e.g. `3,4,5`
/// (spaces around items are allowed). The one list parser of every query:
/// heap sizes, sets, row lengths.
///
/// # Errors
/// [`ProbeError::BadRequest`] quoting the list as the user wrote it: empty
/// (`""`), an empty item (`3,,4`, `3,4,`), or an item that is not a
/// non-negative integer of the type (`3,x`, `-1`).
pub fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> ProbeResult<Vec<T>> {
    let example = "write non-negative integers separated by commas, like 3,4,5";
    if s.trim().is_empty() {
        return Err(ProbeError::bad(format!("{what} `{s}` is empty: {example}")));
    }
    s.split(',')
        .enumerate()
        .map(|(i, item)| {
            let t = item.trim();
            if t.is_empty() {
                return Err(ProbeError::bad(format!(
                    "{what} `{s}`: item {} is empty: {example}",
                    i + 1
                )));
            }
            t.parse::<T>().map_err(|_| {
                ProbeError::bad(format!(
                    "{what} `{s}`: item {} (`{t}`) is not a non-negative integer in range: {example}",
                    i + 1
                ))
            })
        })
        .collect()
}

/// Refuses a run of another job kind than `kind` (what every probe's
/// `add_run` checks first).
///
/// # Errors
/// [`ProbeError::BadRequest`] naming the run, its kind and `kind`.
pub fn require_kind(view: &RunView, kind: &str) -> ProbeResult<()> {
    if view.plan.kind == kind {
        return Ok(());
    }
    Err(ProbeError::bad(format!(
        "{} is a `{}` run, not {kind}",
        view.dir.root().display(),
        view.plan.kind
    )))
}

/// Opens a run directory that must hold a run of job kind `kind`.
///
/// # Errors
/// [`ProbeError::Run`] if it is not a planned run directory;
/// [`ProbeError::BadRequest`] if it holds another kind.
pub fn open_run_of_kind(dir: &Path, kind: &'static dyn JobKind) -> ProbeResult<RunView> {
    let plan = super::plan::PlanFile::load(&super::rundir::RunDir::new(dir))?;
    if plan.kind != kind.name() {
        return Err(ProbeError::bad(format!(
            "{} is a `{}` run, not {}",
            dir.display(),
            plan.kind,
            kind.name()
        )));
    }
    Ok(RunView::open_as(dir, kind)?)
}

/// The run directories of `runs`, separated by commas (for messages).
pub fn run_dirs<'a>(runs: impl IntoIterator<Item = &'a RunView>) -> String {
    runs.into_iter()
        .map(|v| v.dir.root().display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A game's one probe over its runs: `probe` (made with the server's
/// cache) given each run by `add`; what a [`Game`](super::registry::Game)'s
/// probe constructor usually is.
///
/// # Errors
/// What `add` refuses (e.g. two runs of the same board).
pub fn one_probe<P: Probe + 'static>(
    mut probe: P,
    runs: Vec<RunView>,
    add: impl Fn(&mut P, RunView) -> ProbeResult<()>,
) -> ProbeResult<Vec<Box<dyn Probe>>> {
    for view in runs {
        add(&mut probe, view)?;
    }
    Ok(vec![Box::new(probe)])
}

/// Every game's probe over a set of run directories, for `serve`
/// ([`Registry::probes`](super::registry::Registry::probes) opens them):
/// each directory goes to the probes of its kind's game; games without a
/// run answer from memory where they can.
pub struct Probes {
    /// The probes, one per game, in URL order.
    pub games: Vec<Box<dyn Probe>>,
    /// The run directories given, with their kinds.
    pub runs: Vec<(std::path::PathBuf, String)>,
}

impl Probes {
    /// The probe of game `name` as URLs name it (`/api/v1/NAME`).
    pub fn game(&self, name: &str) -> Option<&dyn Probe> {
        self.games
            .iter()
            .find(|g| g.game() == name)
            .map(AsRef::as_ref)
    }
}
