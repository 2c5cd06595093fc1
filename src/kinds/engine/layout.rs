//! The on-disk layout of `engine` shards and tables that the kind and its
//! full checker share: plain data, no solver.
//!
//! A `layer-NAME` shard has two sections: `values`, one byte per position
//! of the layer in rank order, and `meta`, a [`LayerMeta`] (bincode). A
//! value byte is 0 for a draw, 16 + d for a win in d plies and 136 + d for
//! a loss in d plies, for the player to move (d ≤ 119); 1 … 15 are unused.

use std::fmt::Write as _;

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

/// One row of the per-layer table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerRow {
    /// The layer's name.
    pub layer: String,
    /// Positions.
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

/// The per-layer CSV.
pub fn layers_csv(rows: &[LayerRow]) -> String {
    let mut s = format!("{LAYERS_CSV_HEADER}\n");
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{}",
            r.layer, r.positions, r.wins, r.losses, r.draws, r.max_win_depth, r.max_loss_depth
        );
    }
    s
}

/// Parses the per-layer CSV.
///
/// # Errors
/// A message naming the line at fault.
pub fn parse_layers_csv(text: &str) -> std::result::Result<Vec<LayerRow>, String> {
    let mut lines = text.lines();
    if lines.next() != Some(LAYERS_CSV_HEADER) {
        return Err("unexpected header".into());
    }
    lines
        .enumerate()
        .map(|(i, l)| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |k: usize| f.get(k).and_then(|x| x.parse::<u64>().ok());
            let bad = || format!("line {}: `{l}`", i + 2);
            if f.len() != 7 {
                return Err(bad());
            }
            Ok(LayerRow {
                layer: f[0].to_string(),
                positions: num(1).ok_or_else(bad)?,
                wins: num(2).ok_or_else(bad)?,
                losses: num(3).ok_or_else(bad)?,
                draws: num(4).ok_or_else(bad)?,
                max_win_depth: num(5).and_then(|x| u8::try_from(x).ok()).ok_or_else(bad)?,
                max_loss_depth: num(6).and_then(|x| u8::try_from(x).ok()).ok_or_else(bad)?,
            })
        })
        .collect()
}
