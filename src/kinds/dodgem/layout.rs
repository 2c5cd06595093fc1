//! The on-disk layout of this game's shards and tables that the kind and
//! its full checker share: plain data, no solver (`tests/architecture.rs`
//! fails if a full checker reaches `crate::games`).

use serde::{Deserialize, Serialize};

/// The `meta` section of a `layer-A-B` shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerMeta {
    /// Board size.
    pub n: u32,
    /// Blue cars.
    pub a: u32,
    /// Red cars.
    pub b: u32,
    /// Positions (indices) in the layer.
    pub positions: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Largest depth of a won position.
    pub max_win_depth: u8,
    /// Largest depth of a lost position.
    pub max_loss_depth: u8,
    /// Placements lost for whoever moves, (blue mask, red mask); the empty board is left out.
    pub lost_for_both: Vec<(u64, u64)>,
}

/// The `meta` section of a `reach-A-B` shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachMeta {
    /// Board size.
    pub n: u32,
    /// Blue cars.
    pub a: u32,
    /// Red cars.
    pub b: u32,
    /// Positions (indices) in the layer.
    pub positions: u64,
    /// Reachable from the start.
    pub reachable: u64,
}
