//! The on-disk layout of `engine` shards and tables that the kind and its
//! full checker share: plain data, no solver.
//!
//! A `layer-NAME` shard has two sections: `values`, one byte per position
//! of the layer in rank order, and `meta`, a [`LayerMeta`] (bincode). A
//! value byte is 0 for a draw, 16 + d for a win in d plies and 136 + d for
//! a loss in d plies, for the player to move (d ≤ 119); 1 … 15 are unused.

use serde::{Deserialize, Serialize};

/// First byte of a win: a win in d plies is `WIN + d`.
pub const WIN: u8 = 16;
/// First byte of a loss: a loss in d plies is `LOSS + d`.
pub const LOSS: u8 = 136;
/// Deepest depth a byte holds.
pub const DEEPEST: u8 = LOSS - WIN - 1;

/// A value byte in words (`win in 3`, `loss in 0`, `draw`).
pub fn byte_text(b: u8) -> String {
    match b {
        0 => "draw".into(),
        1..WIN => format!("byte {b} (no value)"),
        WIN..LOSS => format!("win in {}", b - WIN),
        _ => format!("loss in {}", b - LOSS),
    }
}

/// The `meta` section of a `layer-NAME` shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerMeta {
    /// The layer's name.
    pub layer: String,
    /// Positions in the layer.
    pub positions: u64,
    /// Won for the player to move.
    pub wins: u64,
    /// Lost for the player to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Longest win, plies.
    pub max_win_depth: u8,
    /// Longest loss, plies.
    pub max_loss_depth: u8,
}

/// Name of the job solving layer `name`.
pub fn layer_job(name: &str) -> String {
    format!("layer-{name}")
}

/// Header of the per-layer table `KIND-VARIANT-layers.csv`.
pub const LAYERS_CSV_HEADER: &str =
    "layer,positions,wins,losses,draws,max_win_depth,max_loss_depth";
