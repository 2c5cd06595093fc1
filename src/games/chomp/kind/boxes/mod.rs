//! Job kind `chomp-boxes`: solve Chomp m×n boxes, one job per box or, for
//! a box larger than a job may be, a chain of rank windows (parts).
//!
//! Job file:
//! ```toml
//! kind = "chomp-boxes"
//! boxes = [[1, 200], [2, 200], [14, 14]]   # [rows, cols] each
//! job_memory = "3G"         # optional (default 2G): the most one job may need
//! window_positions = 1000000 # optional: force windows of this many ranks (tests)
//! ```
//!
//! **Jobs.** A box whose single job fits `job_memory` is one job `box-RxC`
//! (parameters `rows`, `cols`). A larger box is cut into rank windows
//! `[start, end)` of about equal length, the largest whose estimated peak
//! ([`part_memory`]: the solver's [`window_memory`] plus the worker's
//! overhead) fits `job_memory`, each a job `box-RxC-part-K` (K = 1, 2, …;
//! parameters `rows`, `cols`, `start`, `end`) whose inputs are all the
//! earlier parts of its box: every bite lowers the rank, so a window needs
//! exactly the P-positions below it. Window boundaries are multiples of 64,
//! so the parts' `p-positions` sections laid end to end are the box's
//! bitset. A part streams its inputs' `p-positions` block by block
//! ([`ShardSource::open`]), never a whole input in memory.
//!
//! Shard sections (all integers little-endian):
//! - `meta`: [`BoxMeta`] through the codec (rows, cols, ranks of the box,
//!   the window `start..end`, its P-positions).
//! - `p-positions`: the window's P-positions, one bit per rank, `u64` words
//!   (rank x is bit `(x−start) % 64` of word `(x−start) / 64`), ranks as in
//!   [`ChompBox`].
//! - `sizes`: for every number of squares s = 0 … rows·cols, two `u64`:
//!   the staircases of s squares in the window and the P-positions among
//!   them (rank 0, the empty board, is not counted).
//! - `rectangles` (the single job, or the last part only): `u32` values;
//!   for every rectangle a×b in the box (1 ≤ a ≤ rows, 1 ≤ b ≤ cols, a×b ≠
//!   1×1, in (a, b) order): `a, b, k, row₁, col₁, …, row_k, col_k` — its k
//!   winning moves, sorted.
//!
//! Tables: `rectangles.csv` (`rows,cols,n_winning,moves`, moves as `i:j`
//! separated by spaces, one line per rectangle in any box, sorted by rows
//! then cols), `multi-winning.csv` (the same for n_winning ≥ 2),
//! `boxes.csv` (`box,rows,cols,positions,p_positions`, one line per box,
//! parts summed; positions exclude the empty board), and per box
//! `sizes-RxC.csv` (`squares,positions,p_positions` for 1 … rows·cols
//! squares). Merge reads only the `meta`, `sizes` and `rectangles` sections.

pub use crate::games::chomp::layout::{BoxMeta, RunBox, box_name, run_boxes};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{error_at_key, parse_params};
use crate::pipeline::kind::{
    Claim, ClaimStatus, JobKind, JobSpec, RunAccess, ShardSource, TableFile,
};
use crate::pipeline::resources::{fmt_bytes, parse_size, thousands, worker_threads};
use crate::pipeline::shard::{Section, SectionSink, Shard, ShardFile};
use crate::solvers::chomp::{Bite, BoxWindow, ChompBox, PPositions, Staircase, window_memory};

/// The `chomp-boxes` job kind.
pub struct ChompBoxes;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    boxes: Vec<Vec<u32>>,
    job_memory: Option<String>,
    window_positions: Option<u64>,
}

/// Largest `rows × cols` of a box in a job file: every rectangle's winning
/// moves are listed, which costs about (rows·cols)² bite look-ups.
pub const MAX_BOX_AREA: u64 = 20_000;

/// `job_memory` when the job file gives none: 2 GiB.
pub const DEFAULT_BOX_JOB_MEMORY: u64 = 2 << 30;

/// Most parts one box may be split into (part K reads K − 1 inputs, so the
/// plan grows with the square of this).
pub const MAX_PARTS: u64 = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxParams {
    rows: u32,
    cols: u32,
    start: Option<u64>,
    end: Option<u64>,
}

/// Winning moves per rectangle `(rows, cols)`.
pub use super::counts::RectangleMoves;

mod claims;
mod parts;
#[cfg(test)]
mod tests;

pub use self::claims::*;
use self::parts::*;
use crate::pipeline::claim_table::{Fact, claims_from_table};

/// The window of a box job: its box and rank range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxWindowJob {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// First rank of the window.
    pub start: u64,
    /// End (exclusive) of the window.
    pub end: u64,
    /// Ranks of the whole box.
    pub ranks: u64,
}

impl BoxWindowJob {
    /// Whether this job holds the box's last ranks (and its `rectangles`).
    pub fn is_last(&self) -> bool {
        self.end == self.ranks
    }
}

fn job_params(job: &JobSpec) -> Result<BoxParams> {
    toml::Value::Table(job.params.clone())
        .try_into()
        .map_err(|e: toml::de::Error| Error::job(&job.name, format!("parameters: {}", e.message())))
}

/// The box and window of box job `job` (a job without `start`/`end` is the
/// whole box), with the box's ranking tables.
///
/// # Errors
/// [`Error::Job`] if the parameters are not a box and a window inside it
/// (non-empty, `start` a multiple of 64).
pub fn job_window(job: &JobSpec) -> Result<(BoxWindowJob, ChompBox)> {
    let p = job_params(job)?;
    let b = ChompBox::new(p.rows as usize, p.cols as usize)
        .map_err(|e| Error::job(&job.name, e.to_string()))?;
    let (start, end) = (p.start.unwrap_or(0), p.end.unwrap_or(b.len()));
    if start >= end || end > b.len() || !start.is_multiple_of(64) {
        return Err(Error::job(
            &job.name,
            format!(
                "window {start}..{end} is not a window of the {}x{} box ({} ranks, starts at multiples of 64)",
                p.rows,
                p.cols,
                b.len()
            ),
        ));
    }
    let w = BoxWindowJob {
        rows: p.rows,
        cols: p.cols,
        start,
        end,
        ranks: b.len(),
    };
    Ok((w, b))
}

/// Estimated peak memory of the worker solving a window of `ranks` ranks of
/// the `rows`×`cols` box with `threads` threads, in bytes: the solver's
/// [`window_memory`], plus the process and the shard writer's batches
/// (24 MiB, and 1 MiB per thread) and, for a part reading earlier parts
/// (`reads_inputs`), the input block being streamed and the block cache of
/// the rectangle look-ups (at most [`RECT_CACHE_BLOCKS`] blocks of 128 KiB).
pub fn part_memory(rows: u32, cols: u32, ranks: u64, threads: u32, reads_inputs: bool) -> u64 {
    let inputs = if reads_inputs {
        (RECT_CACHE_BLOCKS as u64 + 2) * (128 << 10)
    } else {
        0
    };
    window_memory(rows as usize, cols as usize, ranks, threads as usize)
        + (24 << 20)
        + u64::from(threads) * (1 << 20)
        + inputs
}

/// Threads a job over `ranks` ranks can use: one per 2²⁵ ranks, 1 to 16
/// (the worker gets at most the cores of its machine; the shard bytes do
/// not depend on it).
pub fn job_threads(ranks: u64) -> u32 {
    (ranks >> 25).clamp(1, 16) as u32
}

/// How a box is cut: `None` for one job, else the window length (a multiple
/// of 64; the last window may be shorter).
///
/// # Errors
/// A message if no window fits `job_memory` or the box would need more than
/// [`MAX_PARTS`] parts.
fn box_window_len(
    rows: u32,
    cols: u32,
    len: u64,
    job_memory: u64,
    forced: Option<u64>,
) -> std::result::Result<Option<u64>, String> {
    let mem = |w: u64| part_memory(rows, cols, w, job_threads(w), true);
    let w = match forced {
        Some(w) => w.div_ceil(64) * 64,
        None => {
            if part_memory(rows, cols, len, job_threads(len), false) <= job_memory {
                return Ok(None);
            }
            // Largest multiple of 64 whose window fits.
            let (mut lo, mut hi) = (0u64, len / 64);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if mem(mid * 64) <= job_memory {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            if lo == 0 {
                return Err(format!(
                    "{rows}x{cols}: even a window of 64 ranks needs about {}, more than \
                     job_memory = {}",
                    fmt_bytes(mem(64)),
                    fmt_bytes(job_memory)
                ));
            }
            lo * 64
        }
    };
    if w >= len {
        return Ok(None);
    }
    let parts = len.div_ceil(w);
    if parts > MAX_PARTS {
        return Err(format!(
            "{rows}x{cols}: {} ranks in windows of {} would be {} parts, more than {MAX_PARTS}; \
             raise job_memory or window_positions",
            thousands(u128::from(len)),
            thousands(u128::from(w)),
            thousands(u128::from(parts))
        ));
    }
    // Equal windows: as many parts, each at most `w` long.
    Ok(Some(len.div_ceil(parts).div_ceil(64) * 64))
}

/// CPU estimate of solving the window `start..start + ranks` of a box,
/// seconds on one core: 9 ns per staircase of the window, and 0.02 ns per
/// staircase below it (the carry: a part reads by rank range the blocks its
/// blocks pull from, at worst a bit a rank of everything below, and pulls
/// from them what a one-job solve would; BENCHMARKS.md, "the carry of a
/// split box"). Fitted on 2 cores with the pull carry (7 Dec 2026): the
/// first six parts of 22×22 took 436, 474, 463, 558, 665 and 468 CPU-s
/// (5.7·10¹⁰ staircases each: 8.1–11.7 ns, following the part's
/// P-positions, not its place); the 11×50 and 12×45 boxes took 8.4 and
/// 9.6 ns a staircase with the carry before. The carry before 7 Dec 2026
/// cost 0.45 ns per staircase below.
fn cpu_seconds(start: u64, ranks: u64) -> u64 {
    let ns = u128::from(ranks) * 9 + u128::from(start) / 50;
    u64::try_from(ns / 1_000_000_000).unwrap_or(u64::MAX)
}

/// Solves box job `job` (the whole box or one window), reading the earlier
/// parts of its box from `inputs` block by block, and writes its sections to
/// `out`: `meta`, `p-positions` (streamed in chunks from the solver's words,
/// no second copy), `sizes` and, for the box's last ranks, `rectangles`.
///
/// # Errors
/// [`Error::Job`] if the parameters are invalid or an earlier part is
/// missing, damaged or not the window below this one; `out`'s errors.
pub fn solve_box_into(
    job: &JobSpec,
    inputs: &dyn ShardSource,
    threads: usize,
    out: &mut dyn SectionSink,
) -> Result<()> {
    let (w, b) = job_window(job)?;
    let earlier = EarlierParts::open(job, inputs, &w)?;
    let mut failed = None;
    let win = {
        let mut reader = earlier.reader(&mut failed);
        b.solve_window_from(w.start, w.end, &mut reader, threads)
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let rects = if w.is_last() {
        Some(rectangles(&b, &win, &earlier)?)
    } else {
        None
    };
    write_sections(&w, &win, rects.as_deref(), out)
}

/// Writes the sections of a solved window.
fn write_sections(
    w: &BoxWindowJob,
    win: &BoxWindow,
    rects: Option<&[u32]>,
    out: &mut dyn SectionSink,
) -> Result<()> {
    let p_positions: u64 = win.p_by_size.iter().sum();
    let meta = BoxMeta {
        rows: w.rows,
        cols: w.cols,
        ranks: w.ranks,
        start: w.start,
        end: w.end,
        p_positions,
    };
    out.begin_section("meta")?;
    out.write(&codec::encode(&meta).map_err(|e| Error::job("meta", e))?)?;
    out.begin_section("p-positions")?;
    // In pieces of 8 MiB, converted into one reused buffer (a word-by-word
    // copy on little-endian machines).
    let mut bytes = vec![0u8; 8 << 20];
    for chunk in win.p_bits.chunks(1 << 20) {
        let part = &mut bytes[..8 * chunk.len()];
        for (b, v) in part.chunks_exact_mut(8).zip(chunk) {
            b.copy_from_slice(&v.to_le_bytes());
        }
        out.write(part)?;
    }
    out.begin_section("sizes")?;
    let sizes: Vec<u8> = win
        .positions_by_size
        .iter()
        .zip(&win.p_by_size)
        .flat_map(|(a, p)| a.to_le_bytes().into_iter().chain(p.to_le_bytes()))
        .collect();
    out.write(&sizes)?;
    if let Some(r) = rects {
        out.begin_section("rectangles")?;
        let bytes: Vec<u8> = r.iter().flat_map(|v| v.to_le_bytes()).collect();
        out.write(&bytes)?;
    }
    Ok(())
}

/// Solves one box (in one job) into its shard sections.
///
/// # Errors
/// If the box is empty or too large.
pub fn solve_box(rows: u32, cols: u32) -> std::result::Result<Vec<Section>, String> {
    let mut params = toml::Table::new();
    params.insert("rows".into(), i64::from(rows).into());
    params.insert("cols".into(), i64::from(cols).into());
    let job = JobSpec::new(box_name(rows, cols), params, vec![], 0);
    let mut out = Vec::new();
    solve_box_into(&job, &NoInputs, worker_threads(), &mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The `rectangles` section (as `u32` values) of a box whose last window is
/// `win`: every rectangle's winning bites, from the window's bits and the
/// earlier parts' blocks.
fn rectangles(b: &ChompBox, win: &BoxWindow, earlier: &EarlierParts) -> Result<Vec<u32>> {
    let is_p = |x: u64| -> Result<bool> {
        if x >= win.start {
            let i = x - win.start;
            Ok(win.p_bits[(i / 64) as usize] >> (i % 64) & 1 == 1)
        } else {
            earlier.is_p(x)
        }
    };
    let mut rect: Vec<u32> = Vec::new();
    for a in 1..=b.rows() as u32 {
        for c in 1..=b.cols() as u32 {
            if (a, c) == (1, 1) {
                continue;
            }
            let s = Staircase::rectangle(a, c).expect("non-empty");
            let children = b
                .children(&s)
                .map_err(|e| Error::job(&earlier.name, e.to_string()))?;
            let mut moves = Vec::new();
            for (bite, x) in children {
                if is_p(x)? {
                    moves.push(bite);
                }
            }
            moves.sort();
            rect.extend([a, c, moves.len() as u32]);
            for m in moves {
                rect.extend([m.row, m.col]);
            }
        }
    }
    Ok(rect)
}

/// Checks a box shard's sections against its job (the whole shard decoded):
/// the meta describes the job's window, `p-positions` has the window's
/// length and the meta's count of set bits (none past the window, rank 0
/// never), `sizes` sums to the window's positions and P-positions, and
/// `rectangles` is present exactly in the box's last job. Returns the meta.
///
/// # Errors
/// [`Error::Job`] naming what does not match.
pub fn check_box_shard(job: &JobSpec, shard: &Shard) -> Result<BoxMeta> {
    let (w, _) = job_window(job)?;
    let bad = |m: &str| Error::job(&job.name, format!("malformed shard: {m}"));
    let meta: BoxMeta = shard.meta()?;
    if (meta.rows, meta.cols, meta.ranks, meta.start, meta.end)
        != (w.rows, w.cols, w.ranks, w.start, w.end)
    {
        return Err(bad(&format!(
            "meta says {}x{} ranks {}..{} of {}, the job is {}x{} ranks {}..{} of {}",
            meta.rows,
            meta.cols,
            meta.start,
            meta.end,
            meta.ranks,
            w.rows,
            w.cols,
            w.start,
            w.end,
            w.ranks
        )));
    }
    let bits = shard.section("p-positions")?;
    let n = w.end - w.start;
    if bits.len() as u64 != n.div_ceil(64) * 8 {
        return Err(bad("p-positions length"));
    }
    // Whole words (the length is a multiple of 8, checked above).
    let count: u64 = bits
        .chunks_exact(8)
        .map(|c| u64::from(u64::from_le_bytes(c.try_into().expect("8 bytes")).count_ones()))
        .sum();
    if count != meta.p_positions {
        return Err(bad(&format!(
            "{count} P-positions in the bits, the meta says {}",
            meta.p_positions
        )));
    }
    let last = bits[(n.div_ceil(8) - 1) as usize];
    let past = n.div_ceil(8) * 8 - n; // unused bits of the last used byte
    if (past > 0 && last >> (8 - past) != 0)
        || bits[n.div_ceil(8) as usize..].iter().any(|&b| b != 0)
        || (w.start == 0 && bits[0] & 1 == 1)
    {
        return Err(bad("p-positions: bits set outside the window's positions"));
    }
    let sizes =
        read_sizes(shard.section("sizes")?, w.rows, w.cols).ok_or_else(|| bad("sizes length"))?;
    let positions = n - u64::from(w.start == 0);
    let (sp, sq): (u64, u64) = sizes.iter().fold((0, 0), |(a, p), s| (a + s.0, p + s.1));
    if (sp, sq) != (positions, meta.p_positions) {
        return Err(bad(&format!(
            "sizes sum to {sp} positions and {sq} P-positions, the window has {positions} and {}",
            meta.p_positions
        )));
    }
    match (w.is_last(), shard.section("rectangles")) {
        (true, Ok(r)) => {
            parse_rectangles(r).map_err(|m| bad(&m))?;
        }
        (true, Err(_)) => return Err(bad("no rectangles section in the box's last job")),
        (false, Ok(_)) => return Err(bad("a rectangles section before the box's last part")),
        (false, Err(_)) => {}
    }
    Ok(meta)
}

/// `(positions, p_positions)` per number of squares from a `sizes` section,
/// if it has the box's length.
fn read_sizes(bytes: &[u8], rows: u32, cols: u32) -> Option<Vec<(u64, u64)>> {
    let n = (rows as usize) * (cols as usize) + 1;
    if bytes.len() != n * 16 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(16)
            .map(|c| {
                (
                    u64::from_le_bytes(c[..8].try_into().expect("8")),
                    u64::from_le_bytes(c[8..].try_into().expect("8")),
                )
            })
            .collect(),
    )
}

/// Parses a `rectangles` section.
fn parse_rectangles(raw: &[u8]) -> std::result::Result<RectangleMoves, String> {
    if !raw.len().is_multiple_of(4) {
        return Err("rectangles length".into());
    }
    let vals: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let mut rects = RectangleMoves::new();
    let mut i = 0;
    while i < vals.len() {
        let (a, c, k) = match vals.get(i..i + 3) {
            Some(&[a, c, k]) => (a, c, k as usize),
            _ => return Err("rectangles truncated".into()),
        };
        let pairs = vals
            .get(i + 3..i + 3 + 2 * k)
            .ok_or_else(|| "rectangles truncated".to_string())?;
        let moves = pairs
            .chunks_exact(2)
            .map(|p| Bite {
                row: p[0],
                col: p[1],
            })
            .collect();
        rects.insert((a, c), moves);
        i += 3 + 2 * k;
    }
    Ok(rects)
}

/// Decodes the shard of a box job in one job (`box-RxC`): its meta,
/// P-positions and rectangles.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed, the meta does not
/// match the job's parameters, or the job is a part of a split box.
pub fn decode_box(job: &JobSpec, shard: &Shard) -> Result<(BoxMeta, PPositions, RectangleMoves)> {
    let meta = check_box_shard(job, shard)?;
    let bad = |m: &str| Error::job(&job.name, format!("malformed shard: {m}"));
    if meta.start != 0 || meta.end != meta.ranks {
        return Err(bad("a part of a split box, not the whole box"));
    }
    let p = PPositions::from_le_bytes(meta.ranks, shard.section("p-positions")?)
        .ok_or_else(|| bad("p-positions length"))?;
    let rects = parse_rectangles(shard.section("rectangles")?).map_err(|m| bad(&m))?;
    Ok((meta, p, rects))
}

fn moves_text(moves: &[Bite]) -> String {
    moves
        .iter()
        .map(|m| format!("{}:{}", m.row, m.col))
        .collect::<Vec<_>>()
        .join(" ")
}

fn pairs_text(moves: &[Bite]) -> String {
    moves
        .iter()
        .map(Bite::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses `rectangles.csv` back into winning moves per rectangle.
///
/// # Errors
/// A message naming the line if it is malformed.
pub fn parse_rectangles_csv(text: &str) -> std::result::Result<RectangleMoves, String> {
    let mut out = RectangleMoves::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("rectangles.csv line {}: `{line}`", n + 1);
        let f: Vec<&str> = line.split(',').collect();
        let [r, c, k, mv] = f[..] else {
            return Err(bad());
        };
        let num = |s: &str| s.parse::<u32>().map_err(|_| bad());
        let moves: Vec<Bite> = mv
            .split_whitespace()
            .map(|p| {
                let (i, j) = p.split_once(':').ok_or_else(bad)?;
                Ok(Bite {
                    row: num(i)?,
                    col: num(j)?,
                })
            })
            .collect::<std::result::Result<_, String>>()?;
        if moves.len() != num(k)? as usize {
            return Err(bad());
        }
        out.insert((num(r)?, num(c)?), moves);
    }
    Ok(out)
}

/// A box's bits read from its jobs' shards block by block.
struct BoxBits {
    parts: EarlierParts,
}

impl BoxBits {
    /// Opens every job of `b` for block reads.
    fn open(run: &dyn RunAccess, b: &RunBox<'_>) -> Result<(BoxBits, ChompBox)> {
        let mut parts = Vec::new();
        let mut cb = None;
        for job in &b.jobs {
            let (w, chomp) = job_window(job)?;
            let file = run.open(&job.name)?;
            let m = read_meta(run, &job.name, &file)?;
            if (m.start, m.end) != (w.start, w.end) {
                return Err(Error::job(
                    &job.name,
                    "malformed shard: meta is not the job's window",
                ));
            }
            parts.push(PartFile {
                start: w.start,
                end: w.end,
                file,
            });
            cb = Some(chomp);
        }
        let cb = cb.ok_or_else(|| Error::job(b.name(), "no jobs"))?;
        Ok((
            BoxBits {
                parts: EarlierParts {
                    name: b.name(),
                    parts,
                    cache: std::cell::RefCell::new(HashMap::new()),
                },
            },
            cb,
        ))
    }

    fn is_p(&self, x: u64) -> Result<bool> {
        self.parts.is_p(x)
    }

    /// The first `len` ranks' bits as a [`PPositions`].
    fn prefix(&self, len: u64) -> Result<PPositions> {
        let mut bytes = Vec::new();
        let need = len.div_ceil(64) * 8;
        for p in &self.parts.parts {
            if bytes.len() as u64 >= need {
                break;
            }
            let have = p.file.section_len("p-positions").unwrap_or(0);
            let take = (need - bytes.len() as u64).min(have);
            bytes.extend(
                p.file
                    .read_range("p-positions", 0, take)
                    .map_err(|m| Error::job(&self.parts.name, m))?,
            );
        }
        bytes.resize(need as usize, 0);
        // Bits past `len` of the last word belong to later ranks: clear them.
        if !len.is_multiple_of(64) {
            let w = bytes.len() - 8;
            let mut word = u64::from_le_bytes(bytes[w..].try_into().expect("8"));
            word &= (1u64 << (len % 64)) - 1;
            bytes[w..].copy_from_slice(&word.to_le_bytes());
        }
        PPositions::from_le_bytes(len, &bytes)
            .ok_or_else(|| Error::job(&self.parts.name, "p-positions length"))
    }
}

/// Winning moves of `s` from a run's box shards: the first box (in plan
/// order) with at least as many rows and columns as `s`, or else as its
/// transpose (moves mirrored back). `None` if no box covers either. Reads
/// only the blocks holding the bits of `s`'s children.
///
/// # Errors
/// If that box's shard is missing or damaged.
pub fn winning_moves_from_run(
    run: &dyn RunAccess,
    s: &Staircase,
) -> Result<Option<(String, Vec<Bite>)>> {
    if let Some(found) = lookup_in_boxes(run, s)? {
        return Ok(Some(found));
    }
    let Some((name, moves)) = lookup_in_boxes(run, &s.transpose())? else {
        return Ok(None);
    };
    let mut mirrored: Vec<Bite> = moves.iter().map(|b| bite(b.col, b.row)).collect();
    mirrored.sort();
    Ok(Some((format!("{name}, transposed"), mirrored)))
}

fn lookup_in_boxes(run: &dyn RunAccess, s: &Staircase) -> Result<Option<(String, Vec<Bite>)>> {
    let need_rows = s.rows().len() as u32;
    let need_cols = s.rows().first().copied().unwrap_or(0);
    for b in run_boxes(run.jobs())? {
        if b.rows >= need_rows && b.cols >= need_cols {
            let (bits, cb) = BoxBits::open(run, &b)?;
            let mut moves = Vec::new();
            for (m, x) in cb
                .children(s)
                .map_err(|e| Error::job(b.name(), e.to_string()))?
            {
                if bits.is_p(x)? {
                    moves.push(m);
                }
            }
            moves.sort();
            return Ok(Some((b.name(), moves)));
        }
    }
    Ok(None)
}

/// A box of a job file: rows, cols and its number of staircases.
pub type PlannedBox = (u32, u32, u64);

/// Checks a job file's `boxes = [[rows, cols], …]` list, shared by the
/// box-based kinds: non-empty, two numbers per entry, a valid box, no
/// repeats, and `extra(rows, cols, staircases)` (a kind's own limit;
/// `Some(why)` refuses). Returns the normalised `boxes` table and the boxes
/// in order with their staircase counts. Memory is linear in the number of
/// entries: each box's ranking tables are dropped as soon as it is checked
/// (a job file of 10,000 boxes `[1, k]` held 2 GB of them).
///
/// # Errors
/// [`Error::JobFile`] at the `boxes` line, naming the entry.
pub fn plan_box_list(
    path: &Path,
    text: &str,
    boxes: &[Vec<u32>],
    extra: impl Fn(u32, u32, u64) -> Option<String>,
) -> Result<(toml::Table, Vec<PlannedBox>)> {
    if boxes.is_empty() {
        return Err(error_at_key(
            path,
            text,
            "boxes",
            "`boxes` is empty: give at least one [rows, cols]",
        ));
    }
    if boxes.len() > crate::pipeline::jobfile::MAX_PLAN_JOBS {
        return Err(error_at_key(
            path,
            text,
            "boxes",
            format!(
                "`boxes` lists {} boxes: {}",
                boxes.len(),
                crate::pipeline::jobfile::too_many_jobs(boxes.len())
            ),
        ));
    }
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, entry) in boxes.iter().enumerate() {
        let at =
            |m: String| error_at_key(path, text, "boxes", format!("`boxes` entry {}: {m}", i + 1));
        let &[rows, cols] = entry.as_slice() else {
            return Err(at(format!(
                "expected [rows, cols], found {} numbers",
                entry.len()
            )));
        };
        // A set, not a scan of the earlier entries: a job file listing
        // 10⁵ boxes must not take 10¹⁰ comparisons.
        if !seen.insert((rows, cols)) {
            return Err(at(format!("{rows}x{cols} repeats")));
        }
        let len = ChompBox::new(rows as usize, cols as usize)
            .map_err(|e| at(e.to_string()))?
            .len();
        if let Some(why) = extra(rows, cols, len) {
            return Err(at(why));
        }
        out.push((rows, cols, len));
    }
    let mut table = toml::Table::new();
    table.insert(
        "boxes".into(),
        toml::Value::Array(
            boxes
                .iter()
                .map(|e| toml::Value::Array(e.iter().map(|&v| i64::from(v).into()).collect()))
                .collect(),
        ),
    );
    Ok((table, out))
}

/// Estimated peak memory of solving a box of `len` ranks in memory with
/// [`ChompBox::solve`] (what `query chomp` does for small boxes), in bytes:
/// two bitsets while solving, a byte copy of the P-bitset and its
/// compressed form, plus the process.
pub fn box_job_memory(len: u64) -> u64 {
    len / 2 + (24 << 20)
}

impl JobKind for ChompBoxes {
    crate::pipeline::kind::kind_names!(
        "chomp-boxes",
        "Chomp: P-positions of m×n boxes and the winning moves of every rectangle in them"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        let job_memory = match &p.job_memory {
            Some(t) => parse_size(t).map_err(|e| {
                error_at_key(path, text, "job_memory", format!("`job_memory`: {e}"))
            })?,
            None => DEFAULT_BOX_JOB_MEMORY,
        };
        if p.window_positions == Some(0) {
            return Err(error_at_key(
                path,
                text,
                "window_positions",
                "`window_positions` must be at least 1",
            ));
        }
        let (mut table, boxes) = plan_box_list(path, text, &p.boxes, |rows, cols, _| {
            (u64::from(rows) * u64::from(cols) > MAX_BOX_AREA).then(|| {
                format!(
                    "{rows}x{cols} has more than {MAX_BOX_AREA} squares; \
                     listing every rectangle's winning moves would take too long"
                )
            })
        })?;
        if let Some(t) = &p.job_memory {
            table.insert("job_memory".into(), t.clone().into());
        }
        if let Some(w) = p.window_positions {
            table.insert(
                "window_positions".into(),
                i64::try_from(w).unwrap_or(i64::MAX).into(),
            );
        }
        let mut jobs = Vec::new();
        let mut inputs = 0u64;
        for (rows, cols, len) in boxes {
            let window = box_window_len(rows, cols, len, job_memory, p.window_positions)
                .map_err(|m| error_at_key(path, text, "boxes", m))?;
            let mut params = toml::Table::new();
            params.insert("rows".into(), i64::from(rows).into());
            params.insert("cols".into(), i64::from(cols).into());
            let Some(w) = window else {
                jobs.push(
                    JobSpec::new(box_name(rows, cols), params, vec![], len)
                        .with_memory(part_memory(rows, cols, len, job_threads(len), false))
                        .with_threads(job_threads(len))
                        .with_shard_bytes(len / 100 + 4096)
                        .with_cpu_seconds(cpu_seconds(0, len)),
                );
                continue;
            };
            // Each part reads every earlier part of its box: a plan's size
            // grows with the square of a box's parts, bounded here before
            // any is listed.
            let parts = len.div_ceil(w);
            let at = |m: String| error_at_key(path, text, "boxes", m);
            if jobs.len() as u64 + parts > crate::pipeline::jobfile::MAX_PLAN_JOBS as u64 {
                return Err(at(crate::pipeline::jobfile::too_many_jobs(
                    jobs.len() + parts as usize,
                )));
            }
            inputs = inputs.saturating_add(parts.saturating_mul(parts.saturating_sub(1)) / 2);
            if inputs > crate::pipeline::jobfile::MAX_PLAN_INPUTS {
                return Err(at(crate::pipeline::jobfile::too_many_inputs(inputs)));
            }
            let mut names = Vec::new();
            let mut start = 0;
            while start < len {
                let end = (start + w).min(len);
                let mut pp = params.clone();
                pp.insert(
                    "start".into(),
                    i64::try_from(start).unwrap_or(i64::MAX).into(),
                );
                pp.insert("end".into(), i64::try_from(end).unwrap_or(i64::MAX).into());
                let name = format!("{}-part-{}", box_name(rows, cols), names.len() + 1);
                jobs.push(
                    JobSpec::new(name.clone(), pp, names.clone(), end - start)
                        .with_memory(part_memory(
                            rows,
                            cols,
                            end - start,
                            job_threads(end - start),
                            !names.is_empty(),
                        ))
                        .with_threads(job_threads(end - start))
                        .with_shard_bytes((end - start) / 100 + 4096)
                        .with_cpu_seconds(cpu_seconds(start, end - start)),
                );
                names.push(name);
                start = end;
            }
        }
        Ok((table, jobs))
    }

    fn check_shard(&self, job: &JobSpec, shard: &Shard) -> Result<()> {
        check_box_shard(job, shard).map(|_| ())
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let mut out = Vec::new();
        solve_box_into(job, inputs, worker_threads(), &mut out)?;
        Ok(out)
    }

    fn run_into(
        &self,
        job: &JobSpec,
        inputs: &dyn ShardSource,
        out: &mut dyn SectionSink,
    ) -> Result<()> {
        solve_box_into(job, inputs, worker_threads(), out)
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let mut all: BTreeMap<(u32, u32), (Vec<Bite>, String)> = BTreeMap::new();
        let mut boxes_csv = String::from("box,rows,cols,positions,p_positions\n");
        let mut sizes_tables = Vec::new();
        for b in run_boxes(run.jobs())? {
            let mut p_total = 0u64;
            let mut sizes = vec![(0u64, 0u64); (b.rows * b.cols) as usize + 1];
            let mut rects = None;
            let mut ranks = 0;
            for job in &b.jobs {
                let (w, _) = job_window(job)?;
                let f = run.open(&job.name)?;
                let m = read_meta(run, &job.name, &f)?;
                if (m.rows, m.cols, m.ranks, m.start, m.end)
                    != (w.rows, w.cols, w.ranks, w.start, w.end)
                {
                    return Err(Error::job(
                        &job.name,
                        "malformed shard: meta is not the job's window",
                    ));
                }
                ranks = m.ranks;
                p_total += m.p_positions;
                let raw = crate::pipeline::kind::read_section(run, &job.name, &f, "sizes")?;
                let part_sizes = read_sizes(&raw, b.rows, b.cols)
                    .ok_or_else(|| Error::job(&job.name, "malformed shard: sizes length"))?;
                for (s, (a, p)) in sizes.iter_mut().zip(part_sizes) {
                    s.0 += a;
                    s.1 += p;
                }
                if w.is_last() {
                    let raw =
                        crate::pipeline::kind::read_section(run, &job.name, &f, "rectangles")?;
                    rects = Some(
                        parse_rectangles(&raw)
                            .map_err(|e| Error::job(&job.name, format!("malformed shard: {e}")))?,
                    );
                }
            }
            boxes_csv.push_str(&format!(
                "{},{},{},{},{}\n",
                b.name(),
                b.rows,
                b.cols,
                ranks - 1,
                p_total
            ));
            let mut t = String::from("squares,positions,p_positions\n");
            for (s, (a, p)) in sizes.iter().enumerate().skip(1) {
                t.push_str(&format!("{s},{a},{p}\n"));
            }
            sizes_tables.push(TableFile {
                name: format!("sizes-{}x{}.csv", b.rows, b.cols),
                bytes: t.into_bytes(),
            });
            let rects =
                rects.ok_or_else(|| Error::job(b.name(), "no job holds the box's last ranks"))?;
            for (rc, moves) in rects {
                match all.get(&rc) {
                    Some((other, by)) if *other != moves => {
                        return Err(Error::job(
                            self.name(),
                            format!(
                                "rectangle {}x{}: {by} gives {} but {} gives {}",
                                rc.0,
                                rc.1,
                                pairs_text(other),
                                b.name(),
                                pairs_text(&moves)
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        all.insert(rc, (moves, b.name()));
                    }
                }
            }
        }
        let header = "rows,cols,n_winning,moves\n";
        let (mut rect_csv, mut multi_csv) = (String::from(header), String::from(header));
        for ((r, c), (moves, _)) in &all {
            let line = format!("{r},{c},{},{}\n", moves.len(), moves_text(moves));
            if moves.len() >= 2 {
                multi_csv.push_str(&line);
            }
            rect_csv.push_str(&line);
        }
        let mut tables = vec![
            TableFile {
                name: "rectangles.csv".into(),
                bytes: rect_csv.into_bytes(),
            },
            TableFile {
                name: "multi-winning.csv".into(),
                bytes: multi_csv.into_bytes(),
            },
            TableFile {
                name: "boxes.csv".into(),
                bytes: boxes_csv.into_bytes(),
            },
        ];
        tables.extend(sizes_tables);
        Ok(tables)
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let text = String::from_utf8(run.table("rectangles.csv")?).unwrap_or_default();
        let rects = match parse_rectangles_csv(&text) {
            Ok(r) => r,
            Err(e) => return Ok(vec![e]),
        };
        for (&(r, c), moves) in &rects {
            if moves.is_empty() {
                problems.push(format!(
                    "rectangle {r}x{c} has no winning move (strategy stealing says it must)"
                ));
            }
            if let Some(mirror) = rects.get(&(c, r)) {
                let t: Vec<Bite> = {
                    let mut v: Vec<Bite> = moves
                        .iter()
                        .map(|m| Bite {
                            row: m.col,
                            col: m.row,
                        })
                        .collect();
                    v.sort();
                    v
                };
                if *mirror != t {
                    problems.push(format!("rectangle {r}x{c} and {c}x{r} do not mirror"));
                }
            }
        }
        let boxes = run_boxes(run.jobs())?;
        // boxes.csv and the sizes tables: every box's sizes sum to its
        // positions and P-positions; a box and its mirror agree.
        let boxes_text = String::from_utf8(run.table("boxes.csv")?).unwrap_or_default();
        let mut totals: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
        for line in boxes_text.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
            match (num(1), num(2), num(3), num(4)) {
                (Some(r), Some(c), Some(a), Some(p)) => {
                    totals.insert((r as u32, c as u32), (a, p));
                }
                _ => problems.push(format!("boxes.csv: malformed line `{line}`")),
            }
        }
        let mut sizes_of: BTreeMap<(u32, u32), String> = BTreeMap::new();
        for b in &boxes {
            let name = format!("sizes-{}x{}.csv", b.rows, b.cols);
            let t = String::from_utf8(run.table(&name)?).unwrap_or_default();
            let (mut a, mut p) = (0u64, 0u64);
            for line in t.lines().skip(1) {
                let f: Vec<u64> = line.split(',').filter_map(|v| v.parse().ok()).collect();
                if let [_, x, y] = f[..] {
                    a += x;
                    p += y;
                } else {
                    problems.push(format!("{name}: malformed line `{line}`"));
                }
            }
            let len = ChompBox::new(b.rows as usize, b.cols as usize)
                .map_err(|e| Error::job(b.name(), e.to_string()))?
                .len();
            if a != len - 1 {
                problems.push(format!(
                    "{name}: {a} positions in all, but the box has C(m+n, m) − 1 = {}",
                    len - 1
                ));
            }
            match totals.get(&(b.rows, b.cols)) {
                Some(&(ta, tp)) if (ta, tp) == (a, p) => {}
                Some(&(ta, tp)) => problems.push(format!(
                    "{name}: {a} positions and {p} P-positions, boxes.csv says {ta} and {tp}"
                )),
                None => problems.push(format!("boxes.csv has no line for {}", b.name())),
            }
            sizes_of.insert((b.rows, b.cols), t);
        }
        for (&(r, c), t) in &sizes_of {
            if r < c
                && let Some(m) = sizes_of.get(&(c, r))
                && m != t
            {
                problems.push(format!(
                    "sizes-{r}x{c}.csv and sizes-{c}x{r}.csv do not mirror"
                ));
            }
        }
        // Every box: the P-bits must be self-consistent on a sample of ranks
        // (a P-position has no bite into a P-position; an N-position has
        // one), read block by block across its parts. The ranks asked for
        // are sorted first, so that each block is decompressed once (the
        // blocks spread over all cores).
        for b in &boxes {
            let (bits, cb) = BoxBits::open(run, b)?;
            let mut rows = vec![0u32; b.rows as usize];
            let step = (cb.len() / 2048).max(1);
            let mut samples: Vec<(u64, Staircase, Vec<u64>)> = Vec::new();
            let mut x = 1;
            while x < cb.len() {
                cb.unrank(x, &mut rows);
                let s = Staircase::new(&rows).expect("ranks ≥ 1 have the poison");
                let kids = cb
                    .children(&s)
                    .map_err(|e| Error::job(b.name(), e.to_string()))?
                    .into_iter()
                    .map(|(_, c)| c)
                    .collect();
                samples.push((x, s, kids));
                x += step;
            }
            let mut asked: Vec<u64> = samples
                .iter()
                .flat_map(|(x, _, kids)| std::iter::once(*x).chain(kids.iter().copied()))
                .collect();
            asked.sort_unstable();
            asked.dedup();
            let answers = bits.parts.are_p(&asked)?;
            let is_p = |y: u64| answers[asked.binary_search(&y).expect("asked")];
            for (x, s, kids) in &samples {
                let wins = kids.iter().filter(|&&c| is_p(c)).count();
                if is_p(*x) != (wins == 0) {
                    problems.push(format!(
                        "{}: rank {x} ({s}) is marked {} but has {wins} winning moves",
                        b.name(),
                        if is_p(*x) { "P" } else { "N" },
                    ));
                    break;
                }
            }
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let text = String::from_utf8(run.table("rectangles.csv")?).unwrap_or_default();
        let rects = parse_rectangles_csv(&text).map_err(|e| Error::job(self.name(), e))?;
        chomp_claims(run, &rects)
    }

    /// The exact policy odds table ([`super::policy`]).
    fn report_notes(&self, run: &dyn RunAccess) -> Result<String> {
        let text = String::from_utf8(run.table("rectangles.csv")?).unwrap_or_default();
        let rects = parse_rectangles_csv(&text).map_err(|e| Error::job(self.name(), e))?;
        let mut s = super::counts::report_section(&rects);
        s.push_str(&super::policy::report_section()?);
        Ok(s)
    }
}
