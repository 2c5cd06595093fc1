//! The on-disk layout of `engine` shards and tables that the kind and its
//! full checker share: plain data, no solver.
//!
//! A `layer-NAME` shard has two sections: `values`, the value of every
//! position of the layer in rank order, and `meta` (bincode). Values are
//! one byte per position when every depth of the layer is at most 119
//! plies, with a [`LayerMeta`]: 0 for a draw, 16 + d for a win in d plies
//! and 136 + d for a loss in d plies, for the player to move; 1 … 15 are
//! unused. A layer with a deeper position (5×5 Quixo with two or more
//! blanks) has two bytes per position, a little-endian `u16`: 0 for a draw,
//! 16 + d for a win in d and 32,768 + d for a loss in d; its `meta` is a
//! [`WideLayerMeta`]. Readers tell the two apart by the length of `values`
//! (one or two bytes per position) and of `meta` (the wide meta is three
//! bytes longer); the width is canonical: two bytes only when one does not
//! suffice.
//!
//! Code: readers normalise both widths to the two-byte code (a `u16`,
//! [`code_at`]).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::pipeline::codec;

/// First byte of a win: a win in d plies is `WIN + d`.
pub const WIN: u8 = 16;
/// First byte of a loss: a loss in d plies is `LOSS + d`.
pub const LOSS: u8 = 136;
/// Deepest depth a byte holds.
pub const DEEPEST: u8 = LOSS - WIN - 1;
/// First two-byte code of a win: a win in d plies is `WIDE_WIN + d`.
pub const WIDE_WIN: u16 = 16;
/// First two-byte code of a loss: a loss in d plies is `WIDE_LOSS + d`.
pub const WIDE_LOSS: u16 = 0x8000;
/// Deepest depth two bytes hold.
pub const WIDE_DEEPEST: u16 = WIDE_LOSS - WIDE_WIN - 1;

/// The two-byte code of a one-byte value (1 … 15, unused, stay as they
/// are).
pub fn widen(b: u8) -> u16 {
    match b {
        0..WIN => u16::from(b),
        WIN..LOSS => WIDE_WIN + u16::from(b - WIN),
        _ => WIDE_LOSS + u16::from(b - LOSS),
    }
}

/// The value of rank `r` of a layer's `values` bytes as a two-byte code
/// (`wide`: two bytes per position); `None` past the end.
pub fn code_at(values: &[u8], wide: bool, r: u64) -> Option<u16> {
    if wide {
        let i = usize::try_from(r).ok()?.checked_mul(2)?;
        Some(u16::from_le_bytes([*values.get(i)?, *values.get(i + 1)?]))
    } else {
        values.get(usize::try_from(r).ok()?).map(|&b| widen(b))
    }
}

/// A two-byte code in words (`win in 3`, `loss in 0`, `draw`).
pub fn code_text(c: u16) -> String {
    match c {
        0 => "draw".into(),
        1..WIDE_WIN => format!("code {c} (no value)"),
        WIDE_WIN..WIDE_LOSS => format!("win in {}", c - WIDE_WIN),
        _ => format!("loss in {}", c - WIDE_LOSS),
    }
}

/// A value byte in words (`win in 3`, `loss in 0`, `draw`).
pub fn byte_text(b: u8) -> String {
    code_text(widen(b))
}

/// The `meta` section of a `layer-NAME` shard with one byte per position.
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

/// The `meta` section of a `layer-NAME` shard with two bytes per position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WideLayerMeta {
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
    pub max_win_depth: u16,
    /// Longest loss, plies.
    pub max_loss_depth: u16,
    /// Bytes per position of `values`: 2.
    pub value_bytes: u8,
}

/// A layer's meta of either width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerInfo {
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
    pub max_win_depth: u16,
    /// Longest loss, plies.
    pub max_loss_depth: u16,
    /// Two bytes per position in `values` (else one).
    pub wide: bool,
}

impl LayerInfo {
    /// Bytes per position of the layer's `values`.
    pub fn value_bytes(&self) -> u64 {
        if self.wide { 2 } else { 1 }
    }

    /// The `meta` section: a [`LayerMeta`] or, for a wide layer, a
    /// [`WideLayerMeta`].
    ///
    /// # Errors
    /// A depth past one byte in a layer that is not wide, or bincode's
    /// message.
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        if self.wide {
            return codec::encode(&WideLayerMeta {
                layer: self.layer.clone(),
                positions: self.positions,
                wins: self.wins,
                losses: self.losses,
                draws: self.draws,
                max_win_depth: self.max_win_depth,
                max_loss_depth: self.max_loss_depth,
                value_bytes: 2,
            });
        }
        let narrow = |d: u16| {
            u8::try_from(d)
                .ok()
                .filter(|&d| d <= DEEPEST)
                .ok_or(format!("depth {d} in a layer of one byte per position"))
        };
        codec::encode(&LayerMeta {
            layer: self.layer.clone(),
            positions: self.positions,
            wins: self.wins,
            losses: self.losses,
            draws: self.draws,
            max_win_depth: narrow(self.max_win_depth)?,
            max_loss_depth: narrow(self.max_loss_depth)?,
        })
    }

    /// Reads a `meta` section of either width.
    ///
    /// # Errors
    /// Bytes that are neither meta, or a wide meta that does not say two
    /// bytes per position.
    pub fn decode(bytes: &[u8]) -> Result<LayerInfo, String> {
        if let Ok(m) = codec::decode::<LayerMeta>(bytes) {
            return Ok(LayerInfo {
                layer: m.layer,
                positions: m.positions,
                wins: m.wins,
                losses: m.losses,
                draws: m.draws,
                max_win_depth: u16::from(m.max_win_depth),
                max_loss_depth: u16::from(m.max_loss_depth),
                wide: false,
            });
        }
        let m: WideLayerMeta = codec::decode(bytes)?;
        if m.value_bytes != 2 {
            return Err(format!(
                "meta says {} bytes per position (2 expected)",
                m.value_bytes
            ));
        }
        Ok(LayerInfo {
            layer: m.layer,
            positions: m.positions,
            wins: m.wins,
            losses: m.losses,
            draws: m.draws,
            max_win_depth: m.max_win_depth,
            max_loss_depth: m.max_loss_depth,
            wide: true,
        })
    }
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
    pub max_win_depth: u16,
    /// Longest loss, plies.
    pub max_loss_depth: u16,
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
                max_win_depth: num(5).and_then(|x| u16::try_from(x).ok()).ok_or_else(bad)?,
                max_loss_depth: num(6).and_then(|x| u16::try_from(x).ok()).ok_or_else(bad)?,
                reach,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(wide: bool, deepest: u16) -> LayerInfo {
        LayerInfo {
            layer: "12-11".into(),
            positions: 811,
            wins: 500,
            losses: 300,
            draws: 11,
            max_win_depth: deepest,
            max_loss_depth: deepest - 1,
            wide,
        }
    }

    #[test]
    fn meta_of_either_width_round_trips_and_the_narrow_one_keeps_its_bytes() {
        for (wide, deepest) in [(false, 119), (true, 120), (true, 4000)] {
            let i = info(wide, deepest);
            assert_eq!(LayerInfo::decode(&i.encode().unwrap()).unwrap(), i);
        }
        // A one-byte layer's meta is exactly the `LayerMeta` of the shards
        // written before two-byte values existed.
        let old = codec::encode(&LayerMeta {
            layer: "12-11".into(),
            positions: 811,
            wins: 500,
            losses: 300,
            draws: 11,
            max_win_depth: 119,
            max_loss_depth: 118,
        })
        .unwrap();
        assert_eq!(info(false, 119).encode().unwrap(), old);
        assert!(info(false, 120).encode().is_err());
    }

    #[test]
    fn codes_of_both_widths_agree() {
        let narrow = [0u8, WIN, WIN + 7, LOSS, LOSS + 119];
        let wide: Vec<u8> = [0u16, WIDE_WIN, WIDE_WIN + 7, WIDE_LOSS, WIDE_LOSS + 119]
            .iter()
            .flat_map(|c| c.to_le_bytes())
            .collect();
        for r in 0..5 {
            assert_eq!(code_at(&narrow, false, r), code_at(&wide, true, r));
        }
        assert_eq!(code_at(&narrow, false, 5), None);
        assert_eq!(code_text(WIDE_LOSS + 300), "loss in 300");
        assert_eq!(byte_text(WIN + 3), "win in 3");
    }
}
