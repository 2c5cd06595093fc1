//! Pictures of merged tables, as SVG and PNG bytes (`gametables plot`).
//!
//! Drawing uses the `plotters` crate: every chart is one [`Chart`], drawn
//! once onto an SVG backend and once onto a bitmap backend, so both files
//! show the same picture. Nothing here touches files; the pipeline
//! (`pipeline::plots`) asks the run's job kind for its pictures
//! ([`crate::pipeline::JobKind::plots`]) and writes them to `RUN_DIR/plots/`.
//!
//! **Determinism.** The same input gives the same SVG and PNG bytes on any
//! machine: text is measured and (in the PNG) rasterised with the DejaVu
//! Sans font embedded in the binary (the `dejavu` crate) by the pure-Rust
//! `ab_glyph` rasteriser, never with system fonts; the PNG is encoded by the
//! `png` crate without timestamps; charts iterate over ordered data only.
//! The SVG names the font family `DejaVu Sans, sans-serif`, so a viewer
//! without DejaVu substitutes its own sans-serif (the layout was measured
//! with DejaVu).
//!
//! The charts themselves live with their games (`src/games/<game>/picture.rs`),
//! each a [`Chart`] over plain data; this module knows no game.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// The font family every chart uses (registered from the embedded font).
pub const FONT: &str = "DejaVu Sans";

/// One picture in both formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotFile {
    /// File stem (files `STEM.svg`, `STEM.png`).
    pub stem: String,
    /// What it shows, one line (for `plot`'s output and the web page).
    pub title: String,
    /// The SVG document.
    pub svg: Vec<u8>,
    /// The PNG image.
    pub png: Vec<u8>,
}

/// Why a picture could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot {stem}: {message}")]
pub struct PlotError {
    /// The picture's file stem.
    pub stem: String,
    /// What failed.
    pub message: String,
}

/// A bar per row split into three shares ([`shares::ShareBars`]).
pub mod shares;

/// The result of drawing on a backend `DB`.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// One data series of a chart: its legend label, its colour and how to
/// read its value from a row.
pub type Series<T> = (&'static str, RGBColor, fn(&T) -> u64);

/// A picture that can be drawn on any plotters backend.
pub trait Chart {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32) {
        (1200, 800)
    }

    /// Draws the whole picture on `root` (already filled white).
    ///
    /// # Errors
    /// A backend error.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// Registers the embedded fonts with plotters (once per process).
fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded bytes are valid TrueType: a failure is a build error.
        let ok = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .is_ok()
            && plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok();
        assert!(ok, "the embedded DejaVu Sans font does not parse");
    });
}

/// A text style of the chart font.
pub fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().into()
}

/// A bold text style of the chart font.
pub fn bold(size: f64) -> TextStyle<'static> {
    (FONT, size, FontStyle::Bold).into_font().into()
}

fn err(stem: &str, e: impl std::fmt::Display) -> PlotError {
    PlotError {
        stem: stem.into(),
        message: e.to_string(),
    }
}

/// Draws `chart` as SVG and as PNG.
///
/// # Errors
/// [`PlotError`] if drawing or encoding fails.
pub fn render<C: Chart>(stem: &str, title: &str, chart: &C) -> Result<PlotFile, PlotError> {
    register_fonts();
    let (w, h) = chart.size();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(stem, e))?;
        chart.draw(&root).map_err(|e| err(stem, e))?;
        root.present().map_err(|e| err(stem, e))?;
    }
    // The SVG backend writes the family as registered; let viewers without
    // DejaVu fall back to any sans-serif.
    let svg = svg.replace(
        &format!("font-family=\"{FONT}\""),
        &format!("font-family=\"{FONT}, sans-serif\""),
    );
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(stem, e))?;
        chart.draw(&root).map_err(|e| err(stem, e))?;
        root.present().map_err(|e| err(stem, e))?;
    }
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut writer = enc.write_header().map_err(|e| err(stem, e))?;
        writer.write_image_data(&rgb).map_err(|e| err(stem, e))?;
        writer.finish().map_err(|e| err(stem, e))?;
    }
    Ok(PlotFile {
        stem: stem.into(),
        title: title.into(),
        svg: svg.into_bytes(),
        png: png_bytes,
    })
}

/// `n` with thousands separators (`16000` → `16,000`).
pub fn thousands(n: u64) -> String {
    crate::util::thousands(u128::from(n))
}

/// Colours of categories, shared by the charts (colour-blind safe, after
/// Okabe and Ito).
pub mod palette {
    use plotters::style::RGBColor;
    /// Blue.
    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    /// Vermilion.
    pub const VERMILION: RGBColor = RGBColor(213, 94, 0);
    /// Bluish green.
    pub const GREEN: RGBColor = RGBColor(0, 158, 115);
    /// Orange.
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    /// Reddish purple.
    pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
    /// Sky blue.
    pub const SKY: RGBColor = RGBColor(86, 180, 233);
    /// Grey for "nothing here" (dead rows, draws).
    pub const GREY: RGBColor = RGBColor(190, 190, 190);
    /// Dark grey for text and frames.
    pub const INK: RGBColor = RGBColor(40, 40, 40);
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Hello;
    impl Chart for Hello {
        fn size(&self) -> (u32, u32) {
            (200, 100)
        }
        fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
            root.draw(&Text::new("Hello 16,000", (10, 40), font(20.0)))
        }
    }

    #[test]
    fn rendering_twice_gives_the_same_bytes_and_text_is_drawn() {
        let a = render("hello", "Hello", &Hello).unwrap();
        let b = render("hello", "Hello", &Hello).unwrap();
        assert_eq!(a, b);
        let svg = String::from_utf8(a.svg).unwrap();
        assert!(svg.contains("Hello 16,000"), "{svg}");
        assert!(
            svg.contains("font-family=\"DejaVu Sans, sans-serif\""),
            "{svg}"
        );
        assert_eq!(&a.png[1..4], b"PNG");
        // The text was rasterised: some pixel is not white.
        let decoder = png::Decoder::new(std::io::Cursor::new(&a.png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        reader.next_frame(&mut buf).unwrap();
        assert!(buf.iter().any(|&v| v < 128));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(16000), "16,000");
        assert_eq!(thousands(240_060_402), "240,060,402");
    }
}
