//! Probe of Chomp Sprague–Grundy values, read from the box shards of
//! `chomp-grundy` runs (one value: `width` bytes at `rank × width` of the
//! `values` section, so one block), or computed in memory for small boxes.

use std::fmt;
use std::sync::Arc;

use crate::games::chomp::kind::grundy::GrundyMeta;
use crate::games::chomp::probe::box_run::{BoxRun, ChompRequest, box_list, from_first_run};
use crate::pipeline::RunView;
use crate::pipeline::codec;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES};
use crate::pipeline::probe::{ProbeError, ProbeResult};
use crate::solvers::chomp::grundy::grundy_values;
use crate::solvers::chomp::{ChompBox, Staircase};

/// Checks a `chomp-grundy` meta against its box; returns the value width.
fn check_grundy_meta(bytes: &[u8], b: &ChompBox) -> Result<u8, String> {
    let m: GrundyMeta = codec::decode(bytes)?;
    if (m.rows as usize, m.cols as usize, m.ranks) != (b.rows(), b.cols(), b.len()) {
        return Err(format!(
            "{}x{} with {} ranks, the job is {}x{} with {}",
            m.rows,
            m.cols,
            m.ranks,
            b.rows(),
            b.cols(),
            b.len()
        ));
    }
    if !matches!(m.width, 1 | 2 | 4) {
        return Err(format!("value width {}", m.width));
    }
    Ok(m.width)
}

/// The Grundy value of `s` from `run`: the first box (plan order) holding
/// it, else the first holding its transpose (the same game, so the same
/// value), with the box's job name; `None` if no box holds either.
///
/// # Errors
/// [`ProbeError::Run`]: a missing or damaged shard or block.
fn grundy_from_blocks(run: &BoxRun, s: &Staircase) -> ProbeResult<Option<(String, u32)>> {
    if let Some((i, name)) = run.covering(s) {
        return Ok(Some((name.to_string(), grundy_in_box(run, i, s)?)));
    }
    // Built only once a box holds it (it has as many rows as `s` columns).
    let Some((i, name)) = run.covering_transposed(s) else {
        return Ok(None);
    };
    let t = s.transpose();
    Ok(Some((
        format!("{name}, transposed"),
        grundy_in_box(run, i, &t)?,
    )))
}

/// The Grundy value of `s` from box `i` of `run` (which holds it).
///
/// # Errors
/// [`ProbeError::Run`]: a missing or damaged shard or block.
fn grundy_in_box(run: &BoxRun, i: usize, s: &Staircase) -> ProbeResult<u32> {
    let (b, width) = run.ready(i, |m, b, _, _| check_grundy_meta(m, b))?;
    let x = b.rank_of(s).map_err(ProbeError::bad)?;
    let w = u64::from(*width);
    let bytes = run.bytes(i, "values", x * w, w)?;
    let mut v = [0u8; 4];
    v[..bytes.len()].copy_from_slice(&bytes);
    Ok(u32::from_le_bytes(v))
}

/// The answer of [`GrundyProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrundyAnswer {
    /// The request's label (the rectangle as written, or the staircase).
    pub label: String,
    /// The staircase.
    pub position: Staircase,
    /// Its Sprague–Grundy value (0 exactly for a P-position).
    pub grundy: u32,
    /// Where the value comes from (a box of a run, or computed in memory).
    pub source: String,
}

impl GrundyAnswer {
    /// The JSON form (what `query chomp --grundy --json` prints).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({"position": self.position.rows(), "grundy": self.grundy, "source": self.source})
    }
}

impl fmt::Display for GrundyAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.grundy == 0 {
            "P-position"
        } else {
            "N-position"
        };
        writeln!(
            f,
            "{}: Grundy value {} ({kind})\n  ({})",
            self.label, self.grundy, self.source
        )
    }
}

/// Answers Grundy values from `chomp-grundy` runs (the first box that
/// covers the staircase), else by computing the enclosing box in memory
/// when it has at most `in_memory_limit` staircases.
pub struct GrundyProbe {
    runs: Vec<BoxRun>,
    in_memory_limit: u64,
    cache: Arc<BlockCache>,
}

impl GrundyProbe {
    /// A probe with no run directory.
    pub fn new(in_memory_limit: u64) -> GrundyProbe {
        Self::with_cache(in_memory_limit, BlockCache::new(DEFAULT_CACHE_BYTES))
    }

    /// [`GrundyProbe::new`], reading blocks through `cache`.
    pub fn with_cache(in_memory_limit: u64, cache: Arc<BlockCache>) -> GrundyProbe {
        GrundyProbe {
            runs: Vec::new(),
            in_memory_limit,
            cache,
        }
    }

    /// Adds a `chomp-grundy` run; with a run, nothing is computed in memory.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if `view` holds another kind.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<()> {
        crate::pipeline::probe::require_kind(&view, "chomp-grundy")?;
        self.runs.push(BoxRun::new(view, self.cache.clone())?);
        Ok(())
    }

    /// Whether a `chomp-grundy` run is given (then nothing is computed in
    /// memory).
    pub fn has_runs(&self) -> bool {
        !self.runs.is_empty()
    }

    /// The boxes answered from runs: `(rows, cols, run directory)`.
    pub fn boxes(&self) -> Vec<(u32, u32, String)> {
        box_list(self.runs.iter().map(BoxRun::view))
    }

    /// The Sprague–Grundy value of the request's staircase.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] if no box covers it (with runs) or its box
    /// is too large (without); [`ProbeError::Run`] if the covering box's
    /// shard is missing or damaged.
    pub fn answer(&self, req: &ChompRequest) -> ProbeResult<GrundyAnswer> {
        let s = &req.position;
        let (source, grundy) = if self.runs.is_empty() {
            let (rows, cols) = (s.rows().len(), s.rows()[0] as usize);
            let b = ChompBox::new(rows, cols).map_err(ProbeError::bad)?;
            if b.len() > self.in_memory_limit {
                return Err(ProbeError::NotSolved(format!(
                    "the {rows}x{cols} box has {} staircases, too many to solve here; \
                     run a chomp-grundy job covering it and pass --run-dir",
                    b.len()
                )));
            }
            // As a chomp-grundy job: u32 values, the process.
            crate::pipeline::resources::check_allocation(
                &format!("Grundy values of the {rows}x{cols} box in memory"),
                b.len().saturating_mul(4) + (24 << 20),
            )
            .map_err(ProbeError::NotSolved)?;
            let g = grundy_values(&b);
            (
                format!("solved in memory ({rows}x{cols} box)"),
                g[b.rank_of(s).map_err(ProbeError::bad)? as usize],
            )
        } else {
            from_first_run(&self.runs, req, s, grundy_from_blocks)?
        };
        Ok(GrundyAnswer {
            label: req.label.clone(),
            position: s.clone(),
            grundy,
            source,
        })
    }
}
