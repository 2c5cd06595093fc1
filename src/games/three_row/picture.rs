//! Three-row Chomp: `d = f(q, r) − q` over the (q, r) triangle, from a grid
//! of samples, with the class of every row (dead, linear, periodic,
//! undetermined) in a side panel.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::colormaps::{ColorMap, ViridisRGB};
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::plot::{Chart, DrawResult, bold, font, palette, thousands};

/// The class of a row, as in `three-row-rows.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// No P-position from some column on.
    Dead,
    /// `d` constant from some column on.
    Linear,
    /// `d` periodic (period ≥ 2).
    Periodic,
    /// Not decided at this `q_max`.
    Undetermined,
}

impl RowKind {
    /// Parses the `class` column of `three-row-rows.csv`.
    pub fn parse(s: &str) -> Option<RowKind> {
        match s {
            "dead" => Some(RowKind::Dead),
            "linear" => Some(RowKind::Linear),
            "periodic" => Some(RowKind::Periodic),
            "undetermined" => Some(RowKind::Undetermined),
            _ => None,
        }
    }

    const ALL: [RowKind; 4] = [
        RowKind::Dead,
        RowKind::Linear,
        RowKind::Periodic,
        RowKind::Undetermined,
    ];

    fn colour(self) -> RGBColor {
        match self {
            RowKind::Dead => palette::GREY,
            RowKind::Linear => palette::BLUE,
            RowKind::Periodic => palette::VERMILION,
            RowKind::Undetermined => palette::ORANGE,
        }
    }

    fn label(self) -> &'static str {
        match self {
            RowKind::Dead => "dead (no P-position from some q on)",
            RowKind::Linear => "linear (d constant)",
            RowKind::Periodic => "periodic (period 2, 3, 4 or 9)",
            RowKind::Undetermined => "undetermined at this q_max",
        }
    }
}

/// The three-row chart.
pub struct ThreeRowChart {
    /// Last column of the run.
    pub q_max: u32,
    /// Sample grid step (`f` known at multiples of it).
    pub step: u32,
    /// `(q, r, f(q, r))` at the sample grid, sorted by `q` then `r`.
    pub samples: Vec<(u32, u32, u32)>,
    /// The class of every row `0…=q_max`.
    pub classes: Vec<RowKind>,
}

/// Colour levels of d (runs of equal level are drawn as one rectangle).
const LEVELS: u32 = 128;

impl ThreeRowChart {
    fn d_max(&self) -> u32 {
        self.samples
            .iter()
            .filter(|&&(q, _, f)| f >= q)
            .map(|&(q, _, f)| f - q)
            .max()
            .unwrap_or(0)
            .max(1)
    }

    fn level_colour(level: u32) -> RGBColor {
        ViridisRGB.get_color(level as f32 / (LEVELS - 1) as f32)
    }

    /// Horizontal runs of equal colour: `(r, q_from, q_to_exclusive, level)`,
    /// level `None` for dead cells (`f < q`).
    fn runs(&self) -> Vec<(u32, u32, u32, Option<u32>)> {
        let d_max = self.d_max();
        let s = self.step;
        let mut by_row: std::collections::BTreeMap<u32, Vec<(u32, Option<u32>)>> =
            std::collections::BTreeMap::new();
        for &(q, r, f) in &self.samples {
            let level = (f >= q).then(|| {
                ((u64::from(f - q) * u64::from(LEVELS - 1) + u64::from(d_max) / 2)
                    / u64::from(d_max)) as u32
            });
            by_row.entry(r).or_default().push((q, level));
        }
        let mut out = Vec::new();
        for (r, cells) in by_row {
            let mut start = 0;
            for i in 1..=cells.len() {
                if i == cells.len()
                    || cells[i].1 != cells[start].1
                    || cells[i].0 != cells[i - 1].0 + s
                {
                    let end = (cells[i - 1].0 + s).min(self.q_max + 1);
                    out.push((r, cells[start].0, end, cells[start].1));
                    start = i;
                }
            }
        }
        out
    }
}

impl Chart for ThreeRowChart {
    fn size(&self) -> (u32, u32) {
        (1400, 1100)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = self.q_max + 1;
        let d_max = self.d_max();
        let (head, body) = root.split_vertically(70);
        head.draw(&Text::new(
            format!(
                "Three-row Chomp: d = f(q, r) − q for r ≤ q ≤ {}, where (f(q, r), q, r) is the P-position",
                thousands(u64::from(self.q_max))
            ),
            (20, 12),
            bold(21.0),
        ))?;
        head.draw(&Text::new(
            format!("Recurrence of Brouwer, Horváth, Molnár-Sáska and Szabó, “On three-rowed Chomp”, INTEGERS 5 (2005) G07; row classes after Nivasch. Sampled every {} columns and rows.", self.step),
            (20, 42),
            font(15.0),
        ))?;
        let (main, side) = body.split_horizontally(1080);
        let mut chart = ChartBuilder::on(&main)
            .margin(15)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(0u32..top, 0u32..top)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("q (length of the second row)")
            .y_desc("r (length of the third row)")
            .x_label_formatter(&|v| thousands(u64::from(*v)))
            .y_label_formatter(&|v| thousands(u64::from(*v)))
            .label_style(font(15.0))
            .axis_desc_style(font(17.0))
            .draw()?;
        let s = self.step;
        chart.draw_series(self.runs().into_iter().map(|(r, q0, q1, level)| {
            let colour = level.map_or(palette::GREY, Self::level_colour);
            Rectangle::new([(q0, r), (q1, (r + s).min(top))], colour.filled())
        }))?;
        // The first undecided row, if any.
        if let Some(u) = self
            .classes
            .iter()
            .position(|&c| c == RowKind::Undetermined)
        {
            let u = u as u32;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(u, u), (self.q_max, u)],
                palette::ORANGE.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!(
                    "rows r ≥ {}: no period yet at q ≤ {} →",
                    thousands(u64::from(u)),
                    thousands(u64::from(self.q_max))
                ),
                (u - top / 100, u),
                font(14.0).pos(Pos::new(HPos::Right, VPos::Center)),
            )))?;
        }
        // Legends in the empty upper-left triangle (r > q): row classes on
        // top, then the colour bar of d and the dead-cell swatch.
        let at = |fx: f64, fy: f64| ((f64::from(top) * fx) as u32, (f64::from(top) * fy) as u32);
        let left_mid = Pos::new(HPos::Left, VPos::Center);
        let sq = top / 60;
        chart.draw_series(std::iter::once(Text::new(
            "row classes (right panel), rows counted to q_max:",
            at(0.04, 0.975),
            bold(15.0).pos(left_mid),
        )))?;
        for (k, kind) in RowKind::ALL.into_iter().enumerate() {
            let count = self.classes.iter().filter(|&&c| c == kind).count();
            let (x, y) = at(0.04, 0.945 - 0.03 * k as f64);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x, y - sq / 2), (x + sq, y + sq / 2)],
                kind.colour().filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{}: {} rows", kind.label(), thousands(count as u64)),
                (x + sq + top / 150, y),
                font(14.0).pos(left_mid),
            )))?;
        }
        let (bx0, by0) = at(0.04, 0.42);
        let (bx1, by1) = at(0.04 + 1.0 / 30.0, 0.78);
        let span = by1 - by0;
        chart.draw_series((0..LEVELS).map(|k| {
            let y0 = by0 + span * k / LEVELS;
            let y1 = by0 + span * (k + 1) / LEVELS;
            Rectangle::new([(bx0, y0), (bx1, y1)], Self::level_colour(k).filled())
        }))?;
        for k in 0..=4 {
            let y = by0 + span * k / 4;
            chart.draw_series(std::iter::once(Text::new(
                thousands(u64::from(d_max) * u64::from(k) / 4),
                (bx1 + top / 150, y),
                font(14.0).pos(left_mid),
            )))?;
        }
        chart.draw_series(std::iter::once(Text::new(
            "colour: d = f(q, r) − q ≥ 0",
            at(0.04, 0.81),
            bold(15.0).pos(left_mid),
        )))?;
        let (x, y) = at(0.04, 0.37);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x, y - sq / 2), (x + sq, y + sq / 2)],
            palette::GREY.filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            "f < q: dead, no P-position",
            (x + sq + top / 150, y),
            font(14.0).pos(left_mid),
        )))?;

        self.draw_side(&side)
    }
}

impl ThreeRowChart {
    /// The side panel: the share of each row class among the rows of each
    /// band of `step` rows.
    fn draw_side<DB: DrawingBackend>(&self, side: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let top = self.q_max + 1;
        let mut side_chart = ChartBuilder::on(side)
            .margin_left(25)
            .margin_top(15)
            .margin_bottom(15)
            .margin_right(15)
            .x_label_area_size(50)
            .build_cartesian_2d(0f64..1f64, 0u32..top)?;
        side_chart
            .configure_mesh()
            .disable_mesh()
            .disable_y_axis()
            .x_labels(3)
            .x_label_formatter(&|x| format!("{:.0}%", x * 100.0))
            .x_desc("row classes (share per band)")
            .label_style(font(13.0))
            .axis_desc_style(font(15.0))
            .draw()?;
        let mut bars = Vec::new();
        let mut r0 = 0u32;
        while r0 < top {
            let r1 = (r0 + self.step).min(top);
            let band = &self.classes[r0 as usize..(r1 as usize).min(self.classes.len())];
            let mut x = 0.0;
            for kind in RowKind::ALL {
                let k = band.iter().filter(|&&c| c == kind).count();
                if k > 0 {
                    let w = k as f64 / band.len() as f64;
                    bars.push(Rectangle::new(
                        [(x, r0), (x + w, r1)],
                        kind.colour().filled(),
                    ));
                    x += w;
                }
            }
            r0 = r1;
        }
        side_chart.draw_series(bars)?;
        Ok(())
    }
}
