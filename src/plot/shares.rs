//! A horizontal bar per row, split into the shares of three parts of its
//! total (e.g. won, lost and drawn positions of each layer of a game), the
//! rows' totals at the right, a legend and a note below.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Chart, DrawResult, bold, font, palette, thousands};

/// One bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareRow {
    /// Its label, at the left.
    pub label: String,
    /// Its total (printed at the right as `N positions`).
    pub total: u64,
    /// The three parts, drawn blue, vermilion and grey.
    pub parts: [u64; 3],
}

/// The chart: rows top to bottom in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareBars {
    /// The title.
    pub title: String,
    /// The x axis' description.
    pub x_desc: String,
    /// The legend of the three parts.
    pub legend: [String; 3],
    /// The bars.
    pub rows: Vec<ShareRow>,
    /// One line below the legend.
    pub note: String,
}

impl ShareBars {
    /// The sums of the rows' totals and of each part.
    pub fn totals(rows: &[ShareRow]) -> (u64, [u64; 3]) {
        let mut parts = [0u64; 3];
        for r in rows {
            for (p, x) in parts.iter_mut().zip(r.parts) {
                *p += x;
            }
        }
        (rows.iter().map(|r| r.total).sum(), parts)
    }
}

impl Chart for ShareBars {
    fn size(&self) -> (u32, u32) {
        (1200, 240 + 30 * self.rows.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let rows = self.rows.len();
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
            .x_desc(self.x_desc.as_str())
            .label_style(font(14.0))
            .axis_desc_style(font(16.0))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let colours = [palette::BLUE, palette::VERMILION, palette::GREY];
        let right = Pos::new(HPos::Right, VPos::Center);
        let left = Pos::new(HPos::Left, VPos::Center);
        for (i, l) in self.rows.iter().enumerate() {
            let y = (rows - 1 - i) as f64;
            let total = l.total.max(1) as f64;
            let mut x = 0.0;
            for (&part, colour) in l.parts.iter().zip(colours) {
                let w = part as f64 / total;
                if w > 0.0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(x, y - 0.38), (x + w, y + 0.38)],
                        colour.filled(),
                    )))?;
                }
                x += w;
            }
            chart.draw_series(std::iter::once(Text::new(
                l.label.clone(),
                (-0.015, y),
                font(14.0).pos(right),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{} positions", thousands(l.total)),
                (1.015, y),
                font(14.0).pos(left),
            )))?;
        }
        let mut x = 20;
        for (label, colour) in self.legend.iter().zip(colours) {
            lower.draw(&Rectangle::new([(x, 6), (x + 24, 20)], colour.filled()))?;
            lower.draw(&Text::new(label.as_str(), (x + 32, 6), font(14.0)))?;
            x += 60 + 8 * label.len() as i32;
        }
        lower.draw(&Text::new(self.note.as_str(), (20, 38), font(14.0)))?;
        Ok(())
    }
}
