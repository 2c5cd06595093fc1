//! Chomp on staircases: positions, bites, and the box solver.
//!
//! Conventions (from `BRIEF.md`, section Chomp, and seed 000): a position is a
//! staircase of row lengths `r₀ ≥ r₁ ≥ … ≥ r_{m−1}`; row 0 holds the poison
//! square (0, 0). A bite `(i, j)` needs `j < rᵢ` and `(i, j) ≠ (0, 0)` and sets
//! `r_k = min(r_k, j)` for every `k ≥ i`. The poison-only staircase `[1]` has
//! no move and is a P-position (the player to move loses).
//!
//! - [`Staircase`] and [`Bite`]: positions and moves, validated.
//! - [`ChompBox`]: ranks every staircase of an m×n box with the combinatorial
//!   number system and solves all of them at once ([`ChompBox::solve`]).
//! - [`PPositions`]: the result, one bit per rank.
//! - [`BoxWindow`]: the P-positions of one rank range of a box
//!   ([`ChompBox::solve_window`]), for boxes split across jobs.
//! - [`census`]: every position of `s` squares (partitions of `s`), ranked
//!   by a partition-counting recurrence; P-positions and winning-bite counts
//!   per size (OEIS A112470–A112473).
//! - [`grundy`]: the Sprague–Grundy value of every staircase of a box.
//! - [`policy`]: exact odds of seed 003's policies (perfect play, the
//!   far-corner bite, the biggest bite, a random bite) against a random
//!   opponent on a bar.

mod boxsolve;
pub mod census;
pub mod grundy;
pub mod policy;
mod window;

pub use boxsolve::{BoxStats, ChompBox, PPositions};
pub use window::{BoxWindow, EarlierP, Scan, window_memory};

use std::fmt;

/// Errors of the Chomp solver: malformed positions, bites or boxes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChompError {
    /// Row lengths must not increase from row 0 upwards.
    #[error(
        "row lengths must be non-increasing, but row {row} has {len} squares after a row of {prev}"
    )]
    NotStaircase {
        /// 0-based row index.
        row: usize,
        /// Length of that row.
        len: u32,
        /// Length of the row below it.
        prev: u32,
    },
    /// The staircase has no poison square (row 0 is empty or there are no rows).
    #[error("the position has no poison square (row 0 is empty)")]
    NoPoison,
    /// A box needs at least one row and one column, and must fit in memory.
    #[error("box {rows}x{cols}: {why}")]
    BadBox {
        /// Rows of the box.
        rows: usize,
        /// Columns of the box.
        cols: usize,
        /// What is wrong.
        why: String,
    },
    /// The staircase does not fit into the box it was looked up in.
    #[error("the position {pos} does not fit in a {rows}x{cols} box")]
    OutsideBox {
        /// The staircase, as comma-separated row lengths.
        pos: String,
        /// Rows of the box.
        rows: usize,
        /// Columns of the box.
        cols: usize,
    },
}

/// A bite at row `row`, column `col` (both 0-based from the poison square).
///
/// Ordered by `(row, col)`, which is the order winning moves are reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bite {
    /// Row index, 0 = the poison row.
    pub row: u32,
    /// Column index, 0 = the poison column.
    pub col: u32,
}

impl fmt::Display for Bite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.row, self.col)
    }
}

/// A Chomp position: row lengths, non-increasing, row 0 non-empty.
///
/// Trailing empty rows are dropped, so two staircases that differ only in
/// empty rows compare equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Staircase {
    rows: Vec<u32>,
}

impl Staircase {
    /// Builds a staircase from row lengths (row 0 first).
    ///
    /// # Errors
    /// [`ChompError::NotStaircase`] if a row is longer than the one below it,
    /// [`ChompError::NoPoison`] if row 0 is missing or empty.
    pub fn new(rows: &[u32]) -> Result<Self, ChompError> {
        if rows.first().copied().unwrap_or(0) == 0 {
            return Err(ChompError::NoPoison);
        }
        for k in 1..rows.len() {
            if rows[k] > rows[k - 1] {
                return Err(ChompError::NotStaircase {
                    row: k,
                    len: rows[k],
                    prev: rows[k - 1],
                });
            }
        }
        let keep = rows.iter().take_while(|&&r| r > 0).count();
        Ok(Staircase {
            rows: rows[..keep].to_vec(),
        })
    }

    /// The full `rows × cols` rectangle.
    ///
    /// # Errors
    /// [`ChompError::NoPoison`] if `rows` or `cols` is zero.
    pub fn rectangle(rows: u32, cols: u32) -> Result<Self, ChompError> {
        if rows == 0 {
            return Err(ChompError::NoPoison);
        }
        Staircase::new(&vec![cols; rows as usize])
    }

    /// Row lengths, row 0 first, without trailing empty rows.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// Number of squares (including the poison).
    pub fn squares(&self) -> u64 {
        self.rows.iter().map(|&r| u64::from(r)).sum()
    }

    /// Whether `bite` is legal here: `col < r_row` and not the poison.
    pub fn can_bite(&self, bite: Bite) -> bool {
        (bite.row, bite.col) != (0, 0)
            && self
                .rows
                .get(bite.row as usize)
                .is_some_and(|&r| bite.col < r)
    }

    /// All legal bites, sorted by `(row, col)`.
    pub fn bites(&self) -> Vec<Bite> {
        let mut out = Vec::new();
        for (i, &r) in self.rows.iter().enumerate() {
            for j in 0..r {
                if (i, j) != (0, 0) {
                    out.push(Bite {
                        row: i as u32,
                        col: j,
                    });
                }
            }
        }
        out
    }

    /// The staircase after `bite`, or `None` if the bite is not legal.
    pub fn after(&self, bite: Bite) -> Option<Staircase> {
        if !self.can_bite(bite) {
            return None;
        }
        let mut rows = self.rows.clone();
        for r in rows.iter_mut().skip(bite.row as usize) {
            *r = (*r).min(bite.col);
        }
        let keep = rows.iter().take_while(|&&r| r > 0).count();
        rows.truncate(keep);
        Some(Staircase { rows })
    }

    /// The transposed staircase (rows become columns); bites mirror as
    /// `(i, j) ↦ (j, i)`.
    pub fn transpose(&self) -> Staircase {
        let cols = self.rows.first().copied().unwrap_or(0);
        let rows = (0..cols)
            .map(|j| self.rows.iter().take_while(|&&r| r > j).count() as u32)
            .collect();
        Staircase { rows }
    }
}

impl fmt::Display for Staircase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.rows.iter().map(u32::to_string).collect();
        write!(f, "{}", parts.join(","))
    }
}
