//! Grundy values G(n) of an octal game, with the preperiod and the period
//! marked (as proved by the Guy–Smith periodicity theorem).

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::plot::{Chart, DrawResult, bold, font, palette, thousands};

/// The octal chart.
pub struct OctalChart {
    /// The octal code, e.g. `0.77`.
    pub code: String,
    /// G(0), G(1), … (as many as should be drawn).
    pub values: Vec<u32>,
    /// The last n computed by the run.
    pub n_max: u64,
    /// The largest G(n), n ≤ n_max.
    pub max_value: u32,
    /// `(preperiod, period)` if proved.
    pub period: Option<(u64, u64)>,
}

impl OctalChart {
    /// How many values to draw: the preperiod and eight periods, at least
    /// 120 and at most 400 values (and never more than computed).
    pub fn shown(n_max: u64, period: Option<(u64, u64)>) -> u64 {
        let want = period.map_or(200, |(pre, p)| (pre + 8 * p).clamp(120, 400));
        want.min(n_max + 1)
    }

    fn name(&self) -> String {
        match self.code.as_str() {
            "0.77" => "Kayles (0.77)".into(),
            "0.07" => "Dawson's Kayles (0.07)".into(),
            c => format!("octal game {c}"),
        }
    }
}

/// A tick label for a whole number (never `-0`), none between them.
pub fn whole_tick(x: f64) -> String {
    let r = x.round();
    if (x - r).abs() > 1e-6 {
        return String::new();
    }
    format!("{}", r as i64)
}

impl Chart for OctalChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        let shown = self.values.len() as u32;
        let top = self.values.iter().copied().max().unwrap_or(0) + 1;
        let title = match self.period {
            Some((pre, p)) => format!(
                "{}: Grundy values G(n), period {p} from n = {pre} (Guy–Smith periodicity theorem)",
                self.name()
            ),
            None => format!(
                "{}: Grundy values G(n), no period proved up to n = {}",
                self.name(),
                thousands(self.n_max)
            ),
        };
        let (upper, lower) = root.split_vertically(root.dim_in_pixel().1 - 40);
        let mut chart = ChartBuilder::on(&upper)
            .caption(title, bold(22.0))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(60)
            // At least ten heaps wide, so that a short run (n_max = 0) still
            // has whole-number ticks.
            .build_cartesian_2d(
                -1f64..f64::from(shown.max(10)),
                -0.5f64..f64::from(top) + 0.5,
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| whole_tick(*x))
            .y_label_formatter(&|y| whole_tick(*y))
            .y_labels(top as usize + 2)
            .x_desc("heap size n")
            .y_desc("G(n)")
            .label_style(font(15.0))
            .axis_desc_style(font(17.0))
            .light_line_style(RGBColor(240, 240, 240))
            .draw()?;
        if let Some((pre, p)) = self.period {
            let (pre, p) = (pre as f64, p as f64);
            let y0 = -0.5;
            let y1 = f64::from(top) + 0.5;
            // The preperiod: exceptional values.
            if pre > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(-0.5, y0), (pre - 0.5, y1)],
                        palette::ORANGE.mix(0.18).filled(),
                    )))?
                    .label(format!("preperiod n < {pre}"))
                    .legend(|(x, y)| {
                        Rectangle::new(
                            [(x, y - 6), (x + 24, y + 6)],
                            palette::ORANGE.mix(0.35).filled(),
                        )
                    });
            }
            // Alternate shading of the periods that follow.
            let mut k = 0;
            let mut a = pre;
            while a < f64::from(shown) {
                if k % 2 == 0 {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(a - 0.5, y0), (a + p - 0.5, y1)],
                        palette::SKY.mix(0.15).filled(),
                    )))?;
                }
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(a - 0.5, y0), (a - 0.5, y1)],
                    palette::BLUE.mix(0.5).stroke_width(1),
                )))?;
                a += p;
                k += 1;
            }
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label(format!("one period ({} values) per band", p))
                .legend(|(x, y)| {
                    Rectangle::new(
                        [(x, y - 6), (x + 24, y + 6)],
                        palette::SKY.mix(0.35).filled(),
                    )
                });
        }
        let pts: Vec<(f64, f64)> = self
            .values
            .iter()
            .enumerate()
            .map(|(n, &g)| (n as f64, f64::from(g)))
            .collect();
        chart.draw_series(LineSeries::new(
            pts.clone(),
            palette::INK.mix(0.25).stroke_width(1),
        ))?;
        chart
            .draw_series(
                pts.iter()
                    .map(|&p| Circle::new(p, 3, palette::VERMILION.filled())),
            )?
            .label("G(n)")
            .legend(|(x, y)| Circle::new((x + 12, y), 4, palette::VERMILION.filled()));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .label_font(font(15.0))
            .background_style(WHITE.mix(0.9))
            .border_style(palette::INK)
            .draw()?;
        let range = match shown {
            0 | 1 => "n = 0".to_string(),
            s => format!("n = 0 … {}", s - 1),
        };
        let proof = if self.period.is_some() {
            "the period is proved by the Guy–Smith theorem (Proc. Cambridge Philos. Soc. 52, 1956)"
        } else {
            "too few values to prove a period by the Guy–Smith theorem (Proc. Cambridge Philos. Soc. 52, 1956)"
        };
        let note = format!(
            "Shown: {range} of {} value{} computed (largest value {}). Values from the run's b-file; {proof}.",
            thousands(self.n_max + 1),
            if self.n_max == 0 { "" } else { "s" },
            self.max_value
        );
        lower.draw(&Text::new(note, (20, 10), font(14.0)))?;
        Ok(())
    }
}
