//! The on-disk layout of this game's shards and tables that the kind and
//! its full checker share: plain data, no solver (`tests/it/architecture.rs`
//! fails if a full checker reaches `crate::solvers`).

use serde::{Deserialize, Serialize};

/// The `meta` section of a tile shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileMeta {
    /// First column.
    pub q0: u32,
    /// One past the last column.
    pub q1: u32,
    /// First row.
    pub r0: u32,
    /// One past the last row.
    pub r1: u32,
    /// Last column of the computation.
    pub q_max: u32,
    /// Cells of the tile.
    pub cells: u64,
    /// Cells of live rows.
    pub live_cells: u64,
}
