//! Dodgem: wins, losses and draws for the side to move, layer by layer
//! (layer (a, b): a blue and b red cars on the board).

use crate::plot::shares::{ShareBars, ShareRow};
use crate::plot::thousands;

/// Counts of one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerCounts {
    /// Blue cars.
    pub a: u32,
    /// Red cars.
    pub b: u32,
    /// Positions (side to move included).
    pub positions: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
}

/// The per-layer chart.
pub struct DodgemChart {
    /// Board size.
    pub n: u32,
    /// Layers in (a, b) order.
    pub layers: Vec<LayerCounts>,
}

impl DodgemChart {
    /// The chart as [`ShareBars`].
    pub fn bars(&self) -> ShareBars {
        let n = self.n;
        let rows: Vec<ShareRow> = self
            .layers
            .iter()
            .map(|l| ShareRow {
                label: format!("a = {}, b = {}", l.a, l.b),
                total: l.positions,
                parts: [l.wins, l.losses, l.draws],
            })
            .collect();
        let (all, [w, lo, d]) = ShareBars::totals(&rows);
        let pct = |x: u64| 100.0 * x as f64 / all.max(1) as f64;
        ShareBars {
            title: format!(
                "Dodgem {n}×{n} (Colin Vout; Berlekamp, Conway, Guy, Winning Ways): the side to move wins, loses or draws, by layer"
            ),
            x_desc: "share of the layer's positions (side to move included)".into(),
            legend: [
                "side to move wins".into(),
                "side to move loses".into(),
                "draw".into(),
            ],
            rows,
            note: format!(
                "Layer (a, b): a blue and b red cars on the board. All {} positions: {:.1}% won, {:.1}% lost, {:.1}% drawn for the side to move (retrograde analysis of every layer).",
                thousands(all),
                pct(w),
                pct(lo),
                pct(d)
            ),
        }
    }
}
