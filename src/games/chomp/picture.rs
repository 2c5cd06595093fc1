//! Chomp positions by number of squares: P-positions and N-positions with one
//! or several winning bites (OEIS A112470, A112472, A112473), log scale.

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::plot::{Chart, DrawResult, Series, bold, font, palette, thousands};

/// Counts of one size `s` (a line of `census.csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CensusRow {
    /// Number of squares.
    pub squares: u32,
    /// Positions of `s` squares (partitions of `s`, OEIS A000041).
    pub positions: u64,
    /// P-positions (A112470).
    pub p: u64,
    /// N-positions with exactly one winning bite (A112472).
    pub one: u64,
    /// N-positions with two or more winning bites (A112473).
    pub several: u64,
}

/// The census chart.
pub struct CensusChart {
    /// Rows by increasing `squares`.
    pub rows: Vec<CensusRow>,
}

impl CensusChart {
    /// The first size where "several" exceeds "one" (41 in the published census).
    pub fn crossover(&self) -> Option<u32> {
        self.rows
            .iter()
            .find(|r| r.several > r.one)
            .map(|r| r.squares)
    }
}

/// The points `(squares, get(row))` of `rows` with a positive count, as
/// runs of consecutive sizes: a size whose count is zero (or missing) ends
/// a run, so that a line on a log scale is never drawn across it.
pub fn positive_runs(rows: &[CensusRow], get: fn(&CensusRow) -> u64) -> Vec<Vec<(u32, u64)>> {
    let mut runs: Vec<Vec<(u32, u64)>> = Vec::new();
    let mut last: Option<u32> = None;
    for r in rows {
        let v = get(r);
        if v == 0 {
            last = None;
            continue;
        }
        match (runs.last_mut(), last) {
            (Some(run), Some(s)) if r.squares == s + 1 => run.push((r.squares, v)),
            _ => runs.push(vec![(r.squares, v)]),
        }
        last = Some(r.squares);
    }
    runs
}

impl Chart for CensusChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let n_max = self.rows.last().map_or(1, |r| r.squares);
        let top = self.rows.iter().map(|r| r.positions).max().unwrap_or(1);
        let y_max = 10u64.pow(top.max(1).ilog10() + 1);
        let title = format!(
            "Chomp positions by number of squares s ≤ {n_max}: OEIS A112470, A112472, A112473"
        );
        let mut chart = ChartBuilder::on(root)
            .caption(title, bold(22.0))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(90)
            .build_cartesian_2d(0u32..n_max + 1, (1u64..y_max).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("number of squares s (poison included)")
            .y_desc("positions (log scale)")
            .label_style(font(15.0))
            .axis_desc_style(font(17.0))
            .y_label_formatter(&|v| thousands(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        let series: [Series<CensusRow>; 4] = [
            (
                "all positions: partitions of s (A000041)",
                palette::GREY,
                |r| r.positions,
            ),
            (
                "N-positions, several winning bites (A112473)",
                palette::VERMILION,
                |r| r.several,
            ),
            (
                "N-positions, one winning bite (A112472)",
                palette::BLUE,
                |r| r.one,
            ),
            (
                "P-positions: the player to move loses (A112470)",
                palette::GREEN,
                |r| r.p,
            ),
        ];
        for (label, colour, get) in series {
            // Zero counts have no place on a log scale: the line stops at
            // one and starts again after it, never drawn across it.
            let runs = positive_runs(&self.rows, get);
            for (k, pts) in runs.iter().enumerate() {
                let line =
                    chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?;
                if k == 0 {
                    line.label(label).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
                    });
                }
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            }
        }
        if let Some(s) = self.crossover() {
            let r = self
                .rows
                .iter()
                .find(|r| r.squares == s)
                .expect("crossover row");
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(s, 1), (s, y_max)],
                palette::INK.mix(0.5).stroke_width(1),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!(
                    "s = {s}: several ({}) first exceed one ({})",
                    thousands(r.several),
                    thousands(r.one)
                ),
                (s + 1, 3),
                font(15.0),
            )))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .label_font(font(15.0))
            .background_style(WHITE.mix(0.9))
            .border_style(palette::INK)
            .draw()?;
        Ok(())
    }
}
