//! `gametables plot RUN_DIR`: asks the run's job kind for its pictures
//! ([`JobKind::plots`](super::JobKind::plots)) and writes each as
//! `RUN_DIR/plots/STEM.svg` and `STEM.png`.
//!
//! Pictures are not results: they are never listed in `result.toml`, never
//! read by `verify`, and a new `plot` simply replaces them (each file is
//! written atomically). Drawing reads the merged tables (and, for some
//! kinds, sections of the shards, each shard verified on reading), so the
//! run must be merged first.

use std::path::PathBuf;

use super::atomic::write_atomic;
use super::error::{Error, Result};
use super::run_view::RunView;
use crate::plot::{PlotError, PlotFile};

/// A drawn picture, or the pipeline error that names it.
///
/// # Errors
/// [`Error::Job`] naming the picture if drawing failed.
pub fn drawn(r: std::result::Result<PlotFile, PlotError>) -> Result<PlotFile> {
    r.map_err(|e| Error::job(format!("plot {}", e.stem), e.message))
}

/// Draws every picture of the run's kind into `RUN_DIR/plots/`; returns each
/// picture with the paths written (SVG, PNG). A kind that draws none gets
/// no `plots/` folder.
///
/// # Errors
/// If the run is not merged (no `result.toml`), a table or shard cannot be
/// read, a picture cannot be drawn or a file cannot be written.
pub fn write_plots(view: &RunView) -> Result<Vec<(PlotFile, PathBuf, PathBuf)>> {
    let result = view.dir.result_path();
    if !result.exists() {
        return Err(Error::job(
            "plot",
            format!(
                "{} is not merged yet (no {}): run or merge it first",
                view.dir.root().display(),
                result.display()
            ),
        ));
    }
    // Drawn first: a kind that draws nothing, or a picture that fails,
    // leaves no empty `plots/` behind.
    let plots = view.kind.plots(view)?;
    if plots.is_empty() {
        return Ok(Vec::new());
    }
    let dir = view.dir.plots_dir();
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let mut out = Vec::new();
    for p in plots {
        let svg = dir.join(format!("{}.svg", p.stem));
        let png = dir.join(format!("{}.png", p.stem));
        write_atomic(&svg, &p.svg)?;
        write_atomic(&png, &p.png)?;
        out.push((p, svg, png));
    }
    Ok(out)
}
