//! A game solved by the engine: wins, losses and draws for the player to
//! move, layer by layer (from the per-layer table), as
//! [`ShareBars`](crate::plot::shares::ShareBars).

use super::layout::LayerRow;
use crate::plot::shares::{ShareBars, ShareRow};
use crate::plot::thousands;

/// The per-layer chart titled `title`.
pub fn layers_chart(title: String, layers: &[LayerRow]) -> ShareBars {
    let rows: Vec<ShareRow> = layers
        .iter()
        .map(|l| ShareRow {
            label: format!("layer {}", l.layer),
            total: l.positions,
            parts: [l.wins, l.losses, l.draws],
        })
        .collect();
    let (all, [w, lo, d]) = ShareBars::totals(&rows);
    let pct = |x: u64| 100.0 * x as f64 / all.max(1) as f64;
    ShareBars {
        title,
        x_desc: "share of the layer's positions".into(),
        legend: [
            "player to move wins".into(),
            "player to move loses".into(),
            "draw".into(),
        ],
        rows,
        note: format!(
            "All {} positions of the layers solved: {:.1}% won, {:.1}% lost, {:.1}% drawn for the player to move (retrograde analysis, layer by layer).",
            thousands(all),
            pct(w),
            pct(lo),
            pct(d)
        ),
    }
}
