//! The on-disk layout of this game's shards and tables that the kind and
//! its full checker share: plain data, no solver (`tests/it/architecture.rs`
//! fails if a full checker reaches `crate::solvers`).

use serde::{Deserialize, Serialize};

use crate::pipeline::error::{Error, Result};
use crate::pipeline::kind::JobSpec;

/// The `meta` section of a box shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxMeta {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// Ranks of the whole box, `C(rows+cols, rows)`, including the empty board.
    pub ranks: u64,
    /// First rank of this job's window (0 for a box in one job).
    pub start: u64,
    /// End (exclusive) of this job's window (`ranks` for a box in one job).
    pub end: u64,
    /// P-positions in the window.
    pub p_positions: u64,
}

/// One box of a run: its jobs (one, or its parts in rank order).
pub struct RunBox<'a> {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// Its jobs, in plan (= rank) order.
    pub jobs: Vec<&'a JobSpec>,
}

/// The job name of the whole box `rows`×`cols` (`box-RxC`).
pub fn box_name(rows: u32, cols: u32) -> String {
    format!("box-{rows}x{cols}")
}

impl RunBox<'_> {
    /// `box-RxC`.
    pub fn name(&self) -> String {
        box_name(self.rows, self.cols)
    }
}

/// The boxes of a run, in plan order, each with its jobs.
///
/// # Errors
/// If a job is not a box job.
pub fn run_boxes(jobs: &[JobSpec]) -> Result<Vec<RunBox<'_>>> {
    let mut out: Vec<RunBox<'_>> = Vec::new();
    for job in jobs {
        let (rows, cols) = job_box(job)?;
        match out.last_mut() {
            Some(b) if (b.rows, b.cols) == (rows, cols) => b.jobs.push(job),
            _ => out.push(RunBox {
                rows,
                cols,
                jobs: vec![job],
            }),
        }
    }
    Ok(out)
}

/// `(rows, cols)` of a box job.
fn job_box(job: &JobSpec) -> Result<(u32, u32)> {
    let get = |k: &str| {
        job.params
            .get(k)
            .and_then(toml::Value::as_integer)
            .and_then(|v| u32::try_from(v).ok())
    };
    match (get("rows"), get("cols")) {
        (Some(r), Some(c)) => Ok((r, c)),
        _ => Err(Error::job(&job.name, "parameters: no box (`rows`, `cols`)")),
    }
}

/// The `meta` section of a census shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusMeta {
    /// Number of squares of the positions.
    pub size: u32,
    /// First rank covered.
    pub rank_start: u64,
    /// One past the last rank covered.
    pub rank_end: u64,
    /// P-positions in the range.
    pub p: u64,
    /// N-positions with one winning bite.
    pub one: u64,
    /// N-positions with several winning bites.
    pub several: u64,
}

/// The `meta` section of a Grundy shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrundyMeta {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// Ranks, `C(rows+cols, rows)`, including the empty board.
    pub ranks: u64,
    /// Bytes per value in the `values` section (1, 2 or 4).
    pub width: u8,
    /// Largest value in the box.
    pub max_value: u32,
    /// Positions of value 0 (the empty board excluded).
    pub p_positions: u64,
}
