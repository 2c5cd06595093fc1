//! A game solved by the engine: wins, losses and draws for the player to
//! move, layer by layer (from the per-layer table).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::plot::{Chart, DrawResult, Series, bold, font, palette, thousands};

use super::layout::LayerRow;

/// The per-layer chart.
pub struct LayersChart {
    /// The title.
    pub title: String,
    /// Layers in solving order.
    pub layers: Vec<LayerRow>,
}

impl Chart for LayersChart {
    fn size(&self) -> (u32, u32) {
        (1200, 240 + 30 * self.layers.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let rows = self.layers.len();
        let title = self.title.clone();
        let (upper, lower) = root.split_vertically(root.dim_in_pixel().1 - 70);
        let mut chart = ChartBuilder::on(&upper)
            .caption(title, bold(19.0))
            .margin(15)
            .x_label_area_size(45)
            .build_cartesian_2d(-0.2f64..1.26f64, -0.7f64..rows as f64 - 0.3)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .disable_y_axis()
            .x_labels(11)
            .x_label_formatter(&|x| {
                if (-1e-9..=1.0 + 1e-9).contains(x) {
                    format!("{:.0}%", x * 100.0)
                } else {
                    String::new()
                }
            })
            .x_desc("share of the layer's positions")
            .label_style(font(14.0))
            .axis_desc_style(font(16.0))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let kinds: [Series<LayerRow>; 3] = [
            ("player to move wins", palette::BLUE, |l| l.wins),
            ("player to move loses", palette::VERMILION, |l| l.losses),
            ("draw", palette::GREY, |l| l.draws),
        ];
        let right = Pos::new(HPos::Right, VPos::Center);
        let left = Pos::new(HPos::Left, VPos::Center);
        for (i, l) in self.layers.iter().enumerate() {
            let y = (rows - 1 - i) as f64;
            let total = l.positions.max(1) as f64;
            let mut x = 0.0;
            for &(_, colour, get) in &kinds {
                let w = get(l) as f64 / total;
                if w > 0.0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x, y - 0.38), (x + w, y + 0.38)],
                        colour.filled(),
                    )))?;
                }
                x += w;
            }
            chart.draw_series(std::iter::once(Text::new(
                format!("layer {}", l.layer),
                (-0.015, y),
                font(14.0).pos(right),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{} positions", thousands(l.positions)),
                (1.015, y),
                font(14.0).pos(left),
            )))?;
        }
        let sum = |f: fn(&LayerRow) -> u64| self.layers.iter().map(f).sum::<u64>();
        let (all, w, lo, d) = (
            sum(|l| l.positions),
            sum(|l| l.wins),
            sum(|l| l.losses),
            sum(|l| l.draws),
        );
        let pct = |x: u64| 100.0 * x as f64 / all.max(1) as f64;
        let note = format!(
            "All {} positions of the layers solved: {:.1}% won, {:.1}% lost, {:.1}% drawn for the player to move (retrograde analysis, layer by layer).",
            thousands(all),
            pct(w),
            pct(lo),
            pct(d)
        );
        let mut x = 20;
        for &(label, colour, _) in &kinds {
            lower.draw(&Rectangle::new([(x, 6), (x + 24, 20)], colour.filled()))?;
            lower.draw(&Text::new(label, (x + 32, 6), font(14.0)))?;
            x += 60 + 8 * label.len() as i32;
        }
        lower.draw(&Text::new(note, (20, 38), font(14.0)))?;
        Ok(())
    }
}
