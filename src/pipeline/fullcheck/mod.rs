//! `verify --full`: every stored value checked against the game's rules.
//!
//! The cheap [`verify`](super::merge::verify) proves that the shards are the
//! bytes the workers wrote and that the tables follow from them; it cannot
//! see a value that was *computed* wrong (a solver bug, a bit flipped in
//! memory before the checksum was taken). The full check reads every shard
//! of a run through the shard API, decodes the documented section layouts
//! (docs/design/job-kinds.md) and checks each stored value against the
//! values of its successors, by move generation written here again from the
//! rules of each game. It never calls a solver, its ranking tables or its
//! shortcuts: where it must map a shard index to a position (a colex rank,
//! a partition rank, a layer index) it implements the documented formula
//! itself, which cross-checks the solver's ranking.
//!
//! A local check suffices because every game is finite: values that satisfy
//! the local rule at every position (P iff no move leads to P; the mex of
//! the options; for games with draws, a win in d having a move to a loss in
//! d − 1 and none shorter, a loss in d only moves to wins, the longest
//! d − 1, a draw no move to a loss and one to a draw) are the unique
//! solution, so they are the game's values.
//! What each kind's check proves, and what it does not, is in
//! docs/design/verify-full.md.
//!
//! - One [`Checker`] per kind, in the kind's game folder
//!   (`src/games/<game>/fullcheck…`), listed in the game's
//!   [`Game`](super::registry::Game) value. A checker imports no solver
//!   (`src/solvers/`): `tests/it/architecture.rs` fails the build's tests if one
//!   does, directly or through another module.
//! - [`full_check`] runs the kind's checker over a run directory and
//!   returns a [`FullReport`]: every bad value counted, the first
//!   [`Options::max_listed`] listed (kind, job, position in the game's
//!   notation, what is wrong), and what share of the stored values was
//!   checked.
//!
//! Memory: a checker holds what one step of its game needs (a box, a layer
//! with the layers its moves reach, a sequence), decoding shards one at a
//! time; each game's checker says what.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::error::{Error, Result};
use super::kind::RunAccess;
use super::run_view::RunView;
use super::shard::Shard;

/// How a full check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Threads to use (≥ 1).
    pub threads: usize,
    /// Draw a progress bar on stderr (only shown on a terminal).
    pub progress: bool,
    /// Bad values listed in full; the rest are only counted.
    pub max_listed: usize,
    /// Check one run of [`SAMPLE_RUN`] positions in this many (1: every
    /// position), for checkers that [sample](Checker::samples).
    pub sample: u64,
}

/// Consecutive positions checked together when a check samples
/// ([`Options::sample`]).
pub const SAMPLE_RUN: u64 = 4096;

impl Default for Options {
    fn default() -> Self {
        Options {
            // The cores (or SLURM_CPUS_PER_TASK inside a Slurm task).
            threads: crate::pipeline::resources::worker_threads(),
            progress: false,
            max_listed: DEFAULT_MAX_LISTED,
            sample: 1,
        }
    }
}

/// Bad values listed by default (the total is always counted).
pub const DEFAULT_MAX_LISTED: usize = 30;

/// One bad value (or unreadable shard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Job kind.
    pub kind: String,
    /// Job name.
    pub job: String,
    /// The position in the game's notation (or the stored item).
    pub position: String,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}: {}",
            self.kind, self.job, self.position, self.what
        )
    }
}

/// How much of one kind of stored value was checked from the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// What the values are and how they were checked.
    pub what: String,
    /// Values stored.
    pub stored: u64,
    /// Values checked from the rules.
    pub checked: u64,
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.stored == 0 {
            // Nothing of this kind was selected: no percentage, which would
            // read as "100 %" of nothing.
            return write!(f, "{}: none selected, nothing checked", self.what);
        }
        let pct = 100.0 * self.checked as f64 / self.stored as f64;
        // A sample of a large table: two significant digits, not "0.0%".
        let decimals = if pct > 0.0 && pct < 0.1 {
            (-pct.log10()).ceil() as usize + 1
        } else {
            1
        };
        write!(
            f,
            "{}: {} of {} checked ({pct:.decimals$}%)",
            self.what,
            group(self.checked),
            group(self.stored)
        )
    }
}

/// `1234567` → `1,234,567` ([`crate::pipeline::resources::thousands`]).
pub fn group(v: u64) -> String {
    crate::pipeline::resources::thousands(u128::from(v))
}

/// The outcome of a full check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullReport {
    /// Job kind.
    pub kind: String,
    /// Bad values found in all.
    pub total: u64,
    /// The first of them (at most [`Options::max_listed`]), in the order found.
    pub listed: Vec<Finding>,
    /// What was checked.
    pub coverage: Vec<Coverage>,
}

impl FullReport {
    /// One line per listed finding and, if some were left out, a line with
    /// the total.
    pub fn problem_lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.listed.iter().map(ToString::to_string).collect();
        if self.total > self.listed.len() as u64 {
            out.push(format!(
                "… and {} more: {} bad values in all (full check)",
                group(self.total - self.listed.len() as u64),
                group(self.total)
            ));
        }
        out
    }
}

/// What a kind's checker works with: the run, the options, where findings
/// and progress go.
pub struct Ctx<'a> {
    run: &'a (dyn RunAccess + Sync),
    kind: &'static str,
    opts: Options,
    /// The jobs to check (`None`: all), for checkers that
    /// [check some jobs](Checker::checks_some_jobs).
    only: Option<&'a [String]>,
    found: Mutex<Vec<Finding>>,
    total: AtomicU64,
    bar: ProgressBar,
}

impl Ctx<'_> {
    /// The run.
    pub fn run(&self) -> &(dyn RunAccess + Sync) {
        self.run
    }

    /// Threads to use.
    pub fn threads(&self) -> usize {
        self.opts.threads.max(1)
    }

    /// One run of [`SAMPLE_RUN`] positions in this many is checked
    /// (`verify --full --sample`; 1: every position).
    pub fn sample(&self) -> u64 {
        self.opts.sample.max(1)
    }

    /// Whether job `name`'s values are to be checked (every job unless the
    /// check was limited to some, `verify --full --jobs`).
    pub fn wanted(&self, name: &str) -> bool {
        self.only.is_none_or(|o| o.iter().any(|j| j == name))
    }

    /// Records a bad value.
    pub fn bad(&self, job: &str, position: impl fmt::Display, what: impl fmt::Display) {
        let n = self.total.fetch_add(1, Ordering::Relaxed);
        if n < self.opts.max_listed as u64 {
            let f = Finding {
                kind: self.kind.to_string(),
                job: job.to_string(),
                position: position.to_string(),
                what: what.to_string(),
            };
            self.bar.suspend(|| tracing::debug!("{f}"));
            self.found
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(f);
        }
    }

    /// Bad values recorded so far.
    pub fn bad_count(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Loads and decodes job `name`'s shard; a shard that cannot be read is
    /// recorded as a finding and `None` returned (the check goes on with the
    /// other shards).
    pub fn load(&self, name: &str) -> Option<Shard> {
        match self.run.load(name) {
            Ok(s) => Some(s),
            Err(e) => {
                self.bad(name, "shard", format!("cannot be read: {e}"));
                None
            }
        }
    }

    /// Sets the progress bar's total (values to check).
    pub fn set_total(&self, values: u64) {
        self.bar.set_length(values);
    }

    /// Names the job being checked in the progress bar.
    pub fn job(&self, name: &str) {
        self.bar.set_message(name.to_string());
    }

    /// Counts `values` more values checked in the progress bar.
    pub fn advance(&self, values: u64) {
        self.bar.inc(values);
    }
}

/// A kind's full checker.
pub trait Checker: Sync {
    /// The job kind it checks.
    fn kind(&self) -> &'static str;
    /// Checks every stored value of the run, recording bad ones through
    /// [`Ctx::bad`]; returns what was checked.
    ///
    /// # Errors
    /// If the run's parameters are unusable (a damaged shard is a finding,
    /// not an error).
    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>>;
    /// Whether it can check some jobs only ([`Ctx::wanted`]), reading the
    /// others' shards as the inputs of those. Default: no (it checks the
    /// whole run).
    fn checks_some_jobs(&self) -> bool {
        false
    }
    /// Whether it can check a sample of the positions
    /// ([`Ctx::sample`]). Default: no (it checks every one).
    fn samples(&self) -> bool {
        false
    }
}

/// Runs the full check of a run directory's kind over its shards.
///
/// # Errors
/// [`Error::Job`] if the kind has no full checker or the run's parameters
/// are unusable; bad values and unreadable shards are findings in the
/// report, not errors.
pub fn full_check(
    view: &RunView,
    checker: Option<&dyn Checker>,
    opts: Options,
) -> Result<FullReport> {
    full_check_jobs(view, checker, opts, None)
}

/// [`full_check`] of the jobs named in `only` (`None`: all), for a kind
/// whose checker [checks some jobs](Checker::checks_some_jobs).
///
/// # Errors
/// As [`full_check`]; also a name in `only` that is not a job of the run,
/// or a checker that checks whole runs only.
pub fn full_check_jobs(
    view: &RunView,
    checker: Option<&dyn Checker>,
    opts: Options,
    only: Option<&[String]>,
) -> Result<FullReport> {
    let kind = view.kind.name();
    let checker = checker.ok_or_else(|| Error::job(kind, "no full check for this kind"))?;
    if opts.sample > 1 && !checker.samples() {
        return Err(Error::job(
            kind,
            "the full check of this kind checks every position (no --sample)",
        ));
    }
    if let Some(only) = only {
        if !checker.checks_some_jobs() {
            return Err(Error::job(
                kind,
                "the full check of this kind checks whole runs only (no --jobs)",
            ));
        }
        if only.iter().any(|j| j.trim().is_empty()) {
            return Err(Error::job(kind, "an empty job name in --jobs"));
        }
        let unknown: Vec<&str> = only
            .iter()
            .filter(|j| !view.plan.jobs.iter().any(|p| &p.name == *j))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let names: Vec<&str> = view.plan.jobs.iter().map(|p| p.name.as_str()).collect();
            let shown = if names.len() > 12 {
                format!(
                    "{}, … ({} in all; `gametables status DIR` lists them)",
                    names[..12].join(", "),
                    names.len()
                )
            } else {
                names.join(", ")
            };
            return Err(Error::job(
                kind,
                format!(
                    "--jobs {}: not jobs of this run; its jobs are {shown}",
                    unknown.join(", ")
                ),
            ));
        }
    }
    full_check_inner(view, checker, opts, only)
}

/// [`full_check`] of a run given by its access (every job).
///
/// # Errors
/// As [`Checker::check`].
pub fn full_check_with(
    run: &(dyn RunAccess + Sync),
    checker: &dyn Checker,
    opts: Options,
) -> Result<FullReport> {
    full_check_inner(run, checker, opts, None)
}

fn full_check_inner(
    run: &(dyn RunAccess + Sync),
    checker: &dyn Checker,
    opts: Options,
    only: Option<&[String]>,
) -> Result<FullReport> {
    let bar = ProgressBar::with_draw_target(
        Some(0),
        if opts.progress {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} full check [{bar:30}] {percent}% of {len} values  {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let cx = Ctx {
        run,
        kind: checker.kind(),
        opts,
        only,
        found: Mutex::new(Vec::new()),
        total: AtomicU64::new(0),
        bar,
    };
    let coverage = checker.check(&cx);
    cx.bar.finish_and_clear();
    let coverage = coverage?;
    // A check that checked nothing (a selection of no values of any kind)
    // must not read as a pass.
    if coverage.iter().all(|c| c.checked == 0) && cx.total.load(Ordering::Relaxed) == 0 {
        let what: Vec<String> = coverage.iter().map(ToString::to_string).collect();
        return Err(Error::job(
            checker.kind(),
            format!(
                "the full check checked no value{}; select jobs that store values \
                 (`gametables status DIR` lists them)",
                if what.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", what.join("; "))
                }
            ),
        ));
    }
    Ok(FullReport {
        kind: checker.kind().to_string(),
        total: cx.total.load(Ordering::Relaxed),
        listed: cx
            .found
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        coverage,
    })
}

/// Splits `0..len` into about `parts` contiguous chunks (at least one).
pub fn chunks(len: u64, parts: usize) -> Vec<std::ops::Range<u64>> {
    let parts = (parts.max(1) as u64).min(len.max(1));
    (0..parts)
        .map(|i| len * i / parts..len * (i + 1) / parts)
        .collect()
}

/// Runs `f` on contiguous chunks of `0..len` (about 16 per thread) from
/// `threads` threads, each taking the next chunk when done with one.
pub fn for_chunks(len: u64, threads: usize, f: impl Fn(std::ops::Range<u64>) + Sync) {
    let parts = chunks(len, threads.max(1) * 16);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(parts.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = parts.get(i) else { break };
                    f(r.clone());
                }
            });
        }
    });
}

/// Reads little-endian `u64` words.
pub fn le_u64s(bytes: &[u8]) -> Option<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    )
}

/// Reads little-endian `u32` values.
pub fn le_u32s(bytes: &[u8]) -> Option<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect(),
    )
}

/// Bit `i` of a `u64`-word bitset.
#[inline]
pub fn bit(words: &[u64], i: u64) -> bool {
    words[(i / 64) as usize] >> (i % 64) & 1 == 1
}

/// Writes [`Checker::kind`] inside an `impl Checker` block:
/// `checks_kind!("my-kind");`.
macro_rules! checks_kind {
    ($name:literal) => {
        fn kind(&self) -> &'static str {
            $name
        }
    };
}
pub(crate) use checks_kind;

#[cfg(test)]
mod tests {
    use super::{Checker, Coverage, Ctx, Options, full_check_with};
    use crate::pipeline::Result;
    use crate::pipeline::kind::{JobSpec, RunAccess, ShardSource};
    use crate::pipeline::shard::Shard;

    /// A run with no jobs and a checker that checks what it is told.
    struct Empty(toml::Table);
    impl ShardSource for Empty {
        fn load(&self, name: &str) -> Result<Shard> {
            Err(crate::pipeline::Error::job(name, "no shards here"))
        }
    }
    impl RunAccess for Empty {
        fn params(&self) -> &toml::Table {
            &self.0
        }
        fn jobs(&self) -> &[JobSpec] {
            &[]
        }
        fn table(&self, name: &str) -> Result<Vec<u8>> {
            Err(crate::pipeline::Error::job(name, "no tables here"))
        }
    }
    struct Checks(u64, u64);
    impl Checker for Checks {
        fn kind(&self) -> &'static str {
            "test"
        }
        fn check(&self, _: &Ctx) -> Result<Vec<Coverage>> {
            Ok(vec![Coverage {
                what: "values".into(),
                stored: self.0,
                checked: self.1,
            }])
        }
    }

    /// Issue 44, row 5: a full check that checked no value of any kind
    /// fails (it printed "0 of 0 checked (100.0%)" and passed); one that
    /// checked something passes.
    #[test]
    fn a_full_check_that_checks_nothing_fails() {
        let run = Empty(toml::Table::new());
        let e = full_check_with(&run, &Checks(0, 0), Options::default()).unwrap_err();
        assert!(e.to_string().contains("checked no value"), "{e}");
        assert!(full_check_with(&run, &Checks(5, 0), Options::default()).is_err());
        let r = full_check_with(&run, &Checks(5, 5), Options::default()).unwrap();
        assert_eq!(r.total, 0);
    }

    /// A sample's share shows two significant digits (regression: a
    /// sampled box printed "280,713 of 847,660,528 checked (0.0%)").
    #[test]
    fn coverage_of_a_small_sample_is_not_shown_as_zero() {
        let c = |checked, stored| {
            Coverage {
                what: "ranks".into(),
                stored,
                checked,
            }
            .to_string()
        };
        assert_eq!(
            c(280_713, 847_660_528),
            "ranks: 280,713 of 847,660,528 checked (0.033%)"
        );
        assert_eq!(c(5, 10), "ranks: 5 of 10 checked (50.0%)");
        assert_eq!(c(0, 10), "ranks: 0 of 10 checked (0.0%)");
        assert_eq!(c(0, 0), "ranks: none selected, nothing checked");
    }
}
