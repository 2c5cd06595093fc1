//! Probe of Chomp staircases: P-position or N-position and every winning
//! bite, read from the box shards of `chomp-boxes` runs block by block (or
//! solved in memory for small boxes); with `grundy`, the Sprague–Grundy
//! value from a `chomp-grundy` run ([`GrundyProbe`]).
//!
//! A staircase with k squares has k − 1 bites: the probe ranks the staircase
//! after each bite in the covering box and reads that rank's bit of the
//! `p-positions` section, so it reads only the blocks holding those k − 1
//! bits (through the shared [`BlockCache`]), never the whole box.

pub mod box_run;
pub mod grundy;

use std::fmt;
use std::sync::Arc;

use crate::games::chomp::probe::grundy::GrundyProbe;
use crate::pipeline::RunView;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES};
use crate::solvers::chomp::{Bite, ChompBox, Staircase};

use crate::pipeline::probe::{Params, Probe, ProbeError, ProbeResult, Work, flag};
pub use box_run::{
    BoxRun, ChompRequest, MAX_QUERY_ROWS, QUERY_IN_MEMORY_LIMIT, box_list, from_first_run,
    parse_rectangle, parse_staircase, winning_from_run,
};

/// The answer of [`ChompProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChompAnswer {
    /// The request's label (the rectangle as written, or the staircase).
    pub label: String,
    /// The staircase.
    pub position: Staircase,
    /// Every winning bite `(row, col)`, sorted; empty for a P-position.
    pub winning_moves: Vec<Bite>,
    /// Where the answer comes from (a box of a run, or solved in memory).
    pub source: String,
}

impl ChompAnswer {
    /// The JSON form (what `query chomp --json` prints and `serve` answers).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "position": self.position.rows(),
            "p_position": self.winning_moves.is_empty(),
            "winning_moves": self.winning_moves.iter().map(|m| [m.row, m.col]).collect::<Vec<_>>(),
            "source": self.source,
        })
    }
}

impl fmt::Display for ChompAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = &self.label;
        let moves = &self.winning_moves;
        if moves.is_empty() {
            writeln!(
                f,
                "{label}: P-position (the player to move loses; no winning move)"
            )?;
        } else {
            let list: Vec<String> = moves.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "{label}: N-position, {} winning move{}: {}",
                moves.len(),
                if moves.len() == 1 { "" } else { "s" },
                list.join(", ")
            )?;
        }
        writeln!(f, "  ({})", self.source)
    }
}

/// Answers Chomp requests from `chomp-boxes` runs (the first box, in the
/// order the runs were given and then plan order, that covers the staircase
/// or its transpose; read block by block), else by solving the enclosing box
/// in memory when it has at most `in_memory_limit` staircases. Grundy values
/// go to [`ChompProbe::grundy`].
pub struct ChompProbe {
    runs: Vec<BoxRun>,
    in_memory_limit: u64,
    cache: Arc<BlockCache>,
    /// The Sprague–Grundy probe (`grundy=1`).
    pub grundy: GrundyProbe,
}

impl ChompProbe {
    /// A probe with no run directory, solving boxes of up to
    /// `in_memory_limit` staircases in memory (Grundy values: a tenth of it).
    pub fn new(in_memory_limit: u64) -> ChompProbe {
        Self::with_cache(in_memory_limit, BlockCache::new(DEFAULT_CACHE_BYTES))
    }

    /// [`ChompProbe::new`], reading blocks (of both probes) through `cache`.
    pub fn with_cache(in_memory_limit: u64, cache: Arc<BlockCache>) -> ChompProbe {
        ChompProbe {
            runs: Vec::new(),
            in_memory_limit,
            grundy: GrundyProbe::with_cache(in_memory_limit / 10, cache.clone()),
            cache,
        }
    }

    /// Adds a `chomp-boxes` run. When a run is given, a staircase no box
    /// covers is not solved in memory.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if `view` holds another kind.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<()> {
        crate::pipeline::probe::require_kind(&view, "chomp-boxes")?;
        self.runs.push(BoxRun::new(view, self.cache.clone())?);
        Ok(())
    }

    /// The boxes answered from runs: `(rows, cols, run directory)`.
    pub fn boxes(&self) -> Vec<(u32, u32, String)> {
        box_list(self.runs.iter().map(BoxRun::view))
    }

    /// P-position or every winning bite of the request's staircase.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] if no box covers it (with runs) or its box
    /// is too large to solve here (without); [`ProbeError::Run`] if the
    /// covering box's shard is missing or damaged.
    pub fn answer(&self, req: &ChompRequest) -> ProbeResult<ChompAnswer> {
        let s = &req.position;
        let (source, winning_moves) = if self.runs.is_empty() {
            let rows = s.rows().len();
            let cols = s.rows()[0] as usize;
            let b = ChompBox::new(rows, cols).map_err(ProbeError::bad)?;
            if b.len() > self.in_memory_limit {
                // A rectangle of the frontier boxes: its winning first moves
                // are in their committed tables (no run directory needed).
                let tables = if s.rows().iter().all(|&r| r as usize == cols) {
                    committed_rectangle_table(rows, cols)
                } else {
                    String::new()
                };
                return Err(ProbeError::NotSolved(format!(
                    "the {rows}x{cols} box has {} staircases, too many to solve here; \
                     run a chomp-boxes job covering it and pass --run-dir{tables}",
                    b.len()
                )));
            }
            crate::pipeline::resources::check_allocation(
                &format!("solving the {rows}x{cols} box in memory"),
                crate::games::chomp::kind::boxes::box_job_memory(b.len()),
            )
            .map_err(ProbeError::NotSolved)?;
            let p = b.solve();
            (
                format!("solved in memory ({rows}x{cols} box)"),
                b.winning_moves(&p, s).map_err(ProbeError::bad)?,
            )
        } else {
            from_first_run(&self.runs, req, s, winning_from_run)?
        };
        Ok(ChompAnswer {
            label: req.label.clone(),
            position: s.clone(),
            winning_moves,
            source,
        })
    }
}

impl Probe for ChompProbe {
    fn game(&self) -> &'static str {
        "chomp"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        let req = ChompRequest::from_params(params)?;
        if flag(params, "grundy")? {
            Ok(self.grundy.answer(&req)?.json())
        } else {
            Ok(self.answer(&req)?.json())
        }
    }

    fn keys(&self) -> &'static [&'static str] {
        &["rect", "rectangle", "position", "grundy"]
    }

    /// A lookup when a run of the kind asked (`chomp-boxes`, or
    /// `chomp-grundy` with `grundy`) is served: it answers, or refuses at
    /// once; without one the box is solved in memory.
    fn work_of(&self, params: &Params) -> Work {
        let with_runs = match flag(params, "grundy") {
            Ok(true) => self.grundy.has_runs(),
            Ok(false) => !self.runs.is_empty(),
            Err(_) => return Work::Lookup,
        };
        if with_runs || ChompRequest::from_params(params).is_err() {
            Work::Lookup
        } else {
            Work::Compute
        }
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "chomp",
            "title": "Chomp",
            "boxes": self.boxes().into_iter().map(|(r, c, d)| serde_json::json!({
                "rows": r, "cols": c, "run_dir": d,
            })).collect::<Vec<_>>(),
            "grundy_boxes": self.grundy.boxes().into_iter().map(|(r, c, d)| serde_json::json!({
                "rows": r, "cols": c, "run_dir": d,
            })).collect::<Vec<_>>(),
            "in_memory_limit": self.in_memory_limit,
        })
    }
}

/// The boxes whose winning first moves of every rectangle the source tree
/// holds (`results/chomp-RxC/rectangles.csv`), as (rows, cols), in the
/// order [`committed_rectangle_table`] looks: a rectangle is named in the
/// first that holds it or its transpose.
const COMMITTED_BOXES: &[(usize, usize)] = &[(22, 22), (10, 60), (11, 50), (12, 45)];

/// Where the source tree holds the winning first moves of the rectangle
/// `rows`×`cols`: the committed table of the first of [`COMMITTED_BOXES`]
/// that holds it (a rectangle taller than a box's rows as the row of its
/// transpose); empty if none does.
fn committed_rectangle_table(rows: usize, cols: usize) -> String {
    for &(r, c) in COMMITTED_BOXES {
        let table = format!("results/chomp-{r}x{c}/rectangles.csv");
        if rows <= r && cols <= c {
            return format!(" (its winning first moves are in {table} of the source tree)");
        }
        if cols <= r && rows <= c {
            return format!(
                " (its winning first moves are in {table} of the source tree, as the row of \
                 {cols}x{rows}, rows and columns swapped)"
            );
        }
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every box a refused query points to has its table in the source
    /// tree, and a rectangle is named in the first box holding it.
    #[test]
    fn committed_boxes_have_their_tables_and_are_looked_up_in_order() {
        for &(r, c) in COMMITTED_BOXES {
            let table = format!("results/chomp-{r}x{c}/rectangles.csv");
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&table);
            assert!(path.is_file(), "{table} is not in the source tree");
        }
        assert!(committed_rectangle_table(22, 20).contains("chomp-22x22/"));
        assert!(committed_rectangle_table(10, 42).contains("chomp-10x60/"));
        assert!(committed_rectangle_table(11, 42).contains("chomp-11x50/"));
        assert!(committed_rectangle_table(45, 12).contains("as the row of 12x45"));
        assert_eq!(committed_rectangle_table(13, 40), "");
    }
}
