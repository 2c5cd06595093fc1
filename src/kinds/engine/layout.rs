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

/// Name of the job finding the reachable positions of layer `name`.
pub fn reach_job(name: &str) -> String {
    format!("reach-{name}")
}

/// The `meta` section of a `reach-NAME` shard (its other section,
/// `reachable`, holds one bit per position of the layer: bit `r % 64` of
/// little-endian `u64` word `r / 64`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReachMeta {
    /// The layer's name.
    pub layer: String,
    /// Positions in the layer.
    pub positions: u64,
    /// Reachable from the start of play.
    pub reachable: u64,
    /// Reachable and won for the player to move.
    pub wins: u64,
    /// Reachable and lost for the player to move.
    pub losses: u64,
    /// Reachable and drawn.
    pub draws: u64,
}

/// Header of the per-layer table `KIND-VARIANT-layers.csv`.
/// The last four columns (positions reachable from the start of play, and
/// how many of them are won, lost and drawn) are empty in a run without
/// reachability jobs.
pub const LAYERS_CSV_HEADER: &str = "layer,positions,wins,losses,draws,max_win_depth,max_loss_depth,reachable,reachable_wins,reachable_losses,reachable_draws";

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
    /// Reachable from the start, and of those won, lost, drawn (when the
    /// run has reachability jobs).
    pub reach: Option<[u64; 4]>,
}

/// The per-layer CSV.
pub fn layers_csv(rows: &[LayerRow]) -> String {
    let mut s = format!("{LAYERS_CSV_HEADER}\n");
    for r in rows {
        let reach = r.reach.map_or(",,,".to_string(), |x| {
            format!("{},{},{},{}", x[0], x[1], x[2], x[3])
        });
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{reach}",
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
            if f.len() != 11 {
                return Err(bad());
            }
            let reach = if f[7..].iter().all(|x| x.is_empty()) {
                None
            } else {
                Some([
                    num(7).ok_or_else(bad)?,
                    num(8).ok_or_else(bad)?,
                    num(9).ok_or_else(bad)?,
                    num(10).ok_or_else(bad)?,
                ])
            };
            Ok(LayerRow {
                layer: f[0].to_string(),
                positions: num(1).ok_or_else(bad)?,
                wins: num(2).ok_or_else(bad)?,
                losses: num(3).ok_or_else(bad)?,
                draws: num(4).ok_or_else(bad)?,
                max_win_depth: num(5).and_then(|x| u8::try_from(x).ok()).ok_or_else(bad)?,
                max_loss_depth: num(6).and_then(|x| u8::try_from(x).ok()).ok_or_else(bad)?,
                reach,
            })
        })
        .collect()
}
