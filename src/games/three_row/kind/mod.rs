//! Job kind `three-row`: three-row Chomp by Brouwer's recurrence, in tiles.
//!
//! Job file:
//! ```toml
//! kind = "three-row"
//! q_max = 16000     # compute f(q, r) for all r ≤ q ≤ q_max
//! q_range = 2000    # columns per tile
//! r_range = 2000    # rows per tile (default: q_range)
//! ```
//!
//! **Jobs.** The columns `0…q_max` are cut into q ranges `Qᵢ = [qaᵢ, qbᵢ)`
//! and the rows into r ranges `Rⱼ = [raⱼ, rbⱼ)`. Tile `(i, j)` (job
//! `tile-qQA-rRA`) holds the cells `q ∈ Qᵢ, r ∈ Rⱼ, r ≤ q` and exists when
//! `raⱼ < qbᵢ`. It reads tile `(i−1, j)` (the state of its rows at column
//! `qaᵢ`: an interrupted run resumes from the last finished range) when that
//! tile exists, and tile `(i, j−1)` (the state of its columns after the rows
//! below `raⱼ`) when `j > 0`; the diagonal `f(a, a)` it needs comes from the
//! one of the two that holds more of it. Tiles on one anti-diagonal `i + j`
//! run at the same time.
//!
//! **Shard sections** (integers little-endian):
//! - `meta`: [`TileMeta`] through the codec.
//! - `rows`: the rows `[raⱼ, min(rbⱼ, qbᵢ))` at column `qbᵢ`, each `u32 tag`:
//!   `1, c` (dead, constant `c`) or `0, m, base, n, n × u64 own words,
//!   12 × u32 last d, 12 × u32 run starts` (see [`LiveRow`]).
//! - `cols`: for each column of `Qᵢ` after the rows `< rbⱼ`: `u32 base, u32 n,
//!   n × u64 words` (only when tile `(i, j+1)` exists).
//! - `diag`: `u32 f(a, a)` for `a < min(rbⱼ, qbᵢ)`.
//! - `p-count`: `u32` per `p ∈ [qaᵢ, q_max]`: P-positions `(p, q, r)` of the tile.
//! - `wins`: `u32 p, row, col` triples: winning moves of `3×p`, `p ≤ q_max`.
//! - `small-f`: `u32 q, r, f` triples for the cells with `q ≤ 255`.
//! - `f-sample`: `u32 q, r, f` triples for the cells with `q` and `r`
//!   multiples of [`sample_step`] (about 512 per side), for `plot` only.
//!
//! **Tables** (none depends on the split into tiles): `three-row-rows.csv`
//! (`r,class,c,q0,period,start,pattern` for every row `r ≤ q_max`),
//! `three-row-classes.csv` (rows by class and period, all rows and rows
//! `≤ 10,000`), `three-row-f-255.csv` (`q,r,f` for `r ≤ q ≤ 255`), and the
//! b-files `b029899.txt` … `b029905.txt` (`n a(n)` lines) as far as `q_max`
//! decides them.

pub use super::layout::TileMeta;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{check_plan_size, error_at_key, parse_params};
use crate::pipeline::kind::{Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
use crate::pipeline::shard::{Section, Shard};
use crate::solvers::three_row::{
    ColState, LiveRow, PERIOD_MAX, RowClass, RowState, TileGeom, TileInput, TileOutput, TileRecord,
    WinningMove, classify, naive_f, solve_tile_blocked,
};

mod claims;

pub use self::claims::*;

/// The `three-row` job kind.
pub struct ThreeRow;

/// Columns recorded in `three-row-f-255.csv`.
pub const SMALL_Q: u32 = 255;

/// Side of the in-memory blocks of a tile (cache blocking and threads inside
/// a job): 1/16 of the tile's longer side, at least 64, so that even the
/// tiles on the diagonal (triangles, whose blocks form a chain along the
/// diagonal) keep two threads busy most of the time, while the work per
/// block column and block row (handing column and row states on) stays small.
pub fn block_side(geom: &TileGeom) -> u32 {
    ((geom.q1 - geom.q0).max(geom.r1 - geom.r0) / 16).max(64)
}

/// Largest `q_max` accepted (values stay far below `u32::MAX`, the
/// per-tile bitsets below 100 MB).
pub const MAX_Q: u32 = 100_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    q_max: u32,
    q_range: u32,
    r_range: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TileParams {
    q0: u32,
    q1: u32,
    r0: u32,
    r1: u32,
    q_max: u32,
}

fn tile_name(q0: u32, r0: u32) -> String {
    format!("tile-q{q0}-r{r0}")
}

fn job_geom(job: &JobSpec) -> Result<TileGeom> {
    let p: TileParams =
        toml::Value::Table(job.params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                Error::job(&job.name, format!("parameters: {}", e.message()))
            })?;
    Ok(TileGeom {
        q0: p.q0,
        q1: p.q1,
        r0: p.r0,
        r1: p.r1,
        q_max: p.q_max,
    })
}

/// Range boundaries `0, step, 2·step, …, end`.
fn cuts(end: u32, step: u32) -> Vec<(u32, u32)> {
    (0..end.div_ceil(step))
        .map(|i| (i * step, ((i + 1) * step).min(end)))
        .collect()
}

/// Estimated peak memory in bytes of solving `rows` rows of a tile whose
/// last column is `q1 − 1` (a job, or a query solving in memory): per row,
/// input and output states hold a bitset of values up to ≈ 2·q1 (q1/4
/// bytes each); plus the process. Measured: `query three-row --q 50000
/// --r 10000` peaks at 121 MB, estimated 298 MB.
pub fn tile_memory(rows: u64, q1: u64) -> u64 {
    rows.saturating_mul(q1) / 2 + (48 << 20)
}

/// CPU seconds of a tile job, recording, writing and checking included
/// (both threads together): per cell 2.4·10⁻⁸ plus 3·10⁻¹³ per column of
/// the tile's middle (the row and column bitsets grow with q). `run` took
/// 2.9·10⁻⁸ s per cell for three-row-16000, 3.9·10⁻⁸ for three-row-50000
/// and 1.2·10⁻⁷ for three-row-131072 (BENCHMARKS.md, "Plan estimates
/// against measured"; a bare in-memory solve takes about 8·10⁻⁹).
pub fn tile_cpu_seconds(g: &TileGeom) -> f64 {
    let q_mid = (f64::from(g.q0) + f64::from(g.q1)) / 2.0;
    g.cells() as f64 * (2.4e-8 + 3.0e-13 * q_mid)
}

/// Most tiles a plan may have.
pub const MAX_TILES: u128 = 100_000;

/// How many tiles [`plan_tiles`] gives and how many inputs they read in
/// all, counted without building them (one step per q range), or `None`
/// as soon as there are more than `cap` tiles.
pub fn count_tiles(q_max: u32, q_range: u32, r_range: u32, cap: u128) -> Option<(u128, u128)> {
    let end = u64::from(q_max) + 1;
    let (qr, rr) = (u64::from(q_range.max(1)), u64::from(r_range.max(1)));
    let nr = end.div_ceil(rr);
    let (mut tiles, mut inputs) = (0u128, 0u128);
    for i in 0..end.div_ceil(qr) {
        let (qa, qb) = (i * qr, ((i + 1) * qr).min(end));
        let here = nr.min(qb.div_ceil(rr)); // r ranges starting below qb
        tiles += u128::from(here);
        if tiles > cap {
            return None;
        }
        inputs += u128::from(here.saturating_sub(1)); // (i, j − 1)
        if i > 0 {
            inputs += u128::from(nr.min(qa.div_ceil(rr))); // (i − 1, j): ra < qa
        }
    }
    Some((tiles, inputs))
}

/// The tiles of a plan in dependency order (by q range, then r range):
/// `(geometry, inputs by name)`.
pub fn plan_tiles(q_max: u32, q_range: u32, r_range: u32) -> Vec<(TileGeom, Vec<String>)> {
    let qs = cuts(q_max + 1, q_range);
    let rs = cuts(q_max + 1, r_range);
    let mut out = Vec::new();
    for (i, &(qa, qb)) in qs.iter().enumerate() {
        for (j, &(ra, rb)) in rs.iter().enumerate() {
            if ra >= qb {
                break;
            }
            let mut inputs = Vec::new();
            if i > 0 && ra < qa {
                inputs.push(tile_name(qs[i - 1].0, ra));
            }
            if j > 0 {
                inputs.push(tile_name(qa, rs[j - 1].0));
            }
            out.push((
                TileGeom {
                    q0: qa,
                    q1: qb,
                    r0: ra,
                    r1: rb,
                    q_max,
                },
                inputs,
            ));
        }
    }
    out
}

// ---- little-endian section encoding -------------------------------------

struct Reader<'a> {
    b: &'a [u8],
    job: &'a str,
    what: &'static str,
}

impl Reader<'_> {
    fn u32(&mut self) -> Result<u32> {
        let (h, t) = self.b.split_at_checked(4).ok_or_else(|| self.bad())?;
        self.b = t;
        Ok(u32::from_le_bytes(h.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64> {
        let (h, t) = self.b.split_at_checked(8).ok_or_else(|| self.bad())?;
        self.b = t;
        Ok(u64::from_le_bytes(h.try_into().expect("8 bytes")))
    }
    fn bad(&self) -> Error {
        Error::job(
            self.job,
            format!("malformed shard: section `{}` truncated or bad", self.what),
        )
    }
    fn done(&self) -> Result<()> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(self.bad())
        }
    }
}

fn put32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn encode_rows(rows: &[RowState]) -> Vec<u8> {
    let mut out = Vec::new();
    for row in rows {
        match row {
            RowState::Dead { c } => {
                put32(&mut out, 1);
                put32(&mut out, *c);
            }
            RowState::Live(l) => {
                put32(&mut out, 0);
                put32(&mut out, l.m);
                put32(&mut out, l.base);
                put32(&mut out, l.own.len() as u32);
                for w in &l.own {
                    out.extend_from_slice(&w.to_le_bytes());
                }
                for v in l.last_d.iter().chain(&l.run) {
                    put32(&mut out, *v);
                }
            }
        }
    }
    out
}

fn decode_rows(job: &str, bytes: &[u8], n: usize) -> Result<Vec<RowState>> {
    let mut rd = Reader {
        b: bytes,
        job,
        what: "rows",
    };
    let mut rows = Vec::with_capacity(n);
    for _ in 0..n {
        match rd.u32()? {
            1 => rows.push(RowState::Dead { c: rd.u32()? }),
            0 => {
                let m = rd.u32()?;
                let base = rd.u32()?;
                let len = rd.u32()? as usize;
                if len > rd.b.len() / 8 {
                    return Err(rd.bad());
                }
                let own = (0..len).map(|_| rd.u64()).collect::<Result<Vec<_>>>()?;
                let mut l = LiveRow {
                    m,
                    base,
                    own,
                    ..LiveRow::default()
                };
                for i in 0..PERIOD_MAX as usize {
                    l.last_d[i] = rd.u32()?;
                }
                for i in 0..PERIOD_MAX as usize {
                    l.run[i] = rd.u32()?;
                }
                if base > m / 64 {
                    return Err(rd.bad());
                }
                rows.push(RowState::Live(l));
            }
            _ => return Err(rd.bad()),
        }
    }
    rd.done()?;
    Ok(rows)
}

fn encode_cols(cols: &[ColState]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in cols {
        put32(&mut out, c.base);
        put32(&mut out, c.words.len() as u32);
        for w in &c.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    out
}

fn decode_cols(job: &str, bytes: &[u8], n: usize) -> Result<Vec<ColState>> {
    let mut rd = Reader {
        b: bytes,
        job,
        what: "cols",
    };
    let mut cols = Vec::with_capacity(n);
    for _ in 0..n {
        let base = rd.u32()?;
        let len = rd.u32()? as usize;
        if len > rd.b.len() / 8 {
            return Err(rd.bad());
        }
        let words = (0..len).map(|_| rd.u64()).collect::<Result<Vec<_>>>()?;
        cols.push(ColState { base, words });
    }
    rd.done()?;
    Ok(cols)
}

fn encode_u32s(v: impl IntoIterator<Item = u32>) -> Vec<u8> {
    v.into_iter().flat_map(u32::to_le_bytes).collect()
}

fn decode_u32s(job: &str, what: &'static str, bytes: &[u8]) -> Result<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Reader {
            b: bytes,
            job,
            what,
        }
        .bad());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

/// The parts of a tile shard that merge, check and claims read.
pub struct TileShard {
    /// The meta section.
    pub meta: TileMeta,
    /// Row states at the tile's last column + 1.
    pub rows: Vec<RowState>,
    /// `f(a, a)` prefix.
    pub diag: Vec<u32>,
    /// P-position counts by `p − q0`.
    pub p_count: Vec<u32>,
    /// Winning moves of `3×p`.
    pub wins: Vec<WinningMove>,
    /// `(q, r, f)` with `q ≤ 255`.
    pub small_f: Vec<(u32, u32, u32)>,
}

fn decode_meta(shard: &Shard) -> Result<TileMeta> {
    shard.meta()
}

/// Decodes a tile shard (all sections but `cols`; `rows` only when
/// `with_rows`, else left empty).
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_tile(shard: &Shard, with_rows: bool) -> Result<TileShard> {
    let job = shard.header.job_name.as_str();
    let meta = decode_meta(shard)?;
    let rows = if with_rows {
        decode_rows(job, shard.section("rows")?, meta.geom().rows_out().len())?
    } else {
        Vec::new()
    };
    let diag = decode_u32s(job, "diag", shard.section("diag")?)?;
    let p_count = decode_u32s(job, "p-count", shard.section("p-count")?)?;
    let w = decode_u32s(job, "wins", shard.section("wins")?)?;
    let s = decode_u32s(job, "small-f", shard.section("small-f")?)?;
    if w.len() % 3 != 0 || s.len() % 3 != 0 {
        return Err(Error::job(job, "malformed shard: wins or small-f length"));
    }
    Ok(TileShard {
        meta,
        rows,
        diag,
        p_count,
        wins: w
            .chunks_exact(3)
            .map(|c| WinningMove {
                p: c[0],
                row: c[1],
                col: c[2],
            })
            .collect(),
        small_f: s.chunks_exact(3).map(|c| (c[0], c[1], c[2])).collect(),
    })
}

/// The input of tile `job` (geometry `geom`) from its input shards, loaded
/// by `load` (only their `meta`, `diag` and `rows` or `cols` sections are
/// read).
///
/// # Errors
/// If an input is missing, malformed or not a neighbour.
fn tile_input(
    job: &JobSpec,
    geom: &TileGeom,
    load: &dyn Fn(&str) -> Result<Shard>,
) -> Result<TileInput> {
    let mut input = TileInput::default();
    for name in &job.inputs {
        let shard = load(name)?;
        let meta = decode_meta(&shard)?;
        let diag = decode_u32s(name, "diag", shard.section("diag")?)?;
        if meta.q1 == geom.q0 && meta.r0 == geom.r0 {
            input.rows = decode_rows(name, shard.section("rows")?, geom.rows_in().len())?;
        } else if meta.q0 == geom.q0 && meta.r1 == geom.r0 {
            input.cols = decode_cols(name, shard.section("cols")?, (geom.q1 - geom.q0) as usize)?;
        } else {
            return Err(Error::job(
                &job.name,
                format!("input {name} is not a neighbour tile"),
            ));
        }
        if diag.len() > input.diag.len() {
            input.diag = diag;
        }
    }
    Ok(input)
}

/// `f(q, r)` from a three-row run without its tables: the tile holding cell
/// `(q, r)` solved again from its input shards over its columns up to `q`
/// and its rows up to `r` only (at most one tile of work), with the tile's
/// job name. `load(name)` gives an input shard; only its `meta`, `diag`,
/// `rows` and `cols` sections are read. `None` if no tile holds the cell
/// (`q > q_max`).
///
/// # Errors
/// If `r > q`, an input is missing or damaged, or the tile does not solve.
pub fn f_from_tiles(
    jobs: &[JobSpec],
    q: u32,
    r: u32,
    load: &dyn Fn(&str) -> Result<Shard>,
) -> Result<Option<(String, u32)>> {
    if r > q {
        return Err(Error::job("three-row", format!("r = {r} > q = {q}")));
    }
    for job in jobs {
        let geom = job_geom(job)?;
        if !(geom.q0..geom.q1).contains(&q) || !(geom.r0..geom.r1).contains(&r) {
            continue;
        }
        let mut input = tile_input(job, &geom, load)?;
        let sub = TileGeom {
            q1: q + 1,
            r1: r + 1,
            ..geom
        };
        input.rows.truncate(sub.rows_in().len());
        if !input.cols.is_empty() {
            input.cols.truncate((sub.q1 - sub.q0) as usize);
        }
        let b = block_side(&sub);
        let threads = crate::pipeline::resources::cores();
        let out = solve_tile_blocked(&sub, input, &TileRecord::default(), b, b, threads)
            .map_err(|e| Error::job(&job.name, e))?;
        let f = match &out.rows[(r - sub.r0) as usize] {
            RowState::Dead { c } => *c,
            RowState::Live(l) => q + l.d_at(q),
        };
        return Ok(Some((job.name.clone(), f)));
    }
    Ok(None)
}

/// Solves one tile from its input shards into its shard sections.
///
/// # Errors
/// If an input is missing or does not fit.
fn run_tile(job: &JobSpec, geom: &TileGeom, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
    let input = tile_input(job, geom, &|name| inputs.load(name))?;
    let record = TileRecord {
        f_upto_q: Some(SMALL_Q),
        sample_step: Some(sample_step(geom.q_max)),
    };
    // Threads inside the job: all cores (the results do not depend on it).
    let threads = crate::pipeline::worker_threads();
    let b = block_side(geom);
    let mut out: TileOutput = solve_tile_blocked(geom, input, &record, b, b, threads)
        .map_err(|e| Error::job(&job.name, e))?;
    out.diag.truncate(geom.diag_out() as usize);
    let meta = TileMeta {
        q0: geom.q0,
        q1: geom.q1,
        r0: geom.r0,
        r1: geom.r1,
        q_max: geom.q_max,
        cells: out.cells,
        live_cells: out.live_cells,
    };
    // Columns go on only if the tile above exists.
    let cols = if geom.r1 < geom.q1 {
        encode_cols(&out.cols)
    } else {
        Vec::new()
    };
    Ok(vec![
        Section::new(
            "meta",
            codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?,
        ),
        Section::new("rows", encode_rows(&out.rows)),
        Section::new("cols", cols),
        Section::new("diag", encode_u32s(out.diag)),
        Section::new("p-count", encode_u32s(out.p_count)),
        Section::new(
            "wins",
            encode_u32s(out.wins.iter().flat_map(|w| [w.p, w.row, w.col])),
        ),
        Section::new(
            "small-f",
            encode_u32s(out.small_f.iter().flat_map(|&(q, r, f)| [q, r, f])),
        ),
        Section::new(
            "f-sample",
            encode_u32s(out.sampled_f.iter().flat_map(|&(q, r, f)| [q, r, f])),
        ),
    ])
}

/// Samples per side of the (q, r) triangle kept for pictures.
pub const SAMPLES_PER_SIDE: u32 = 512;

/// The step of the sample grid of a run to `q_max`: `f(q, r)` is kept in the
/// `f-sample` section for `q` and `r` multiples of it, about
/// [`SAMPLES_PER_SIDE`] values per side (Q = 16,000: every 32nd).
pub fn sample_step(q_max: u32) -> u32 {
    (q_max + 1).div_ceil(SAMPLES_PER_SIDE).max(1)
}

/// The sampled `(q, r, f(q, r))` of a run (every tile's `f-sample`
/// section), sorted by `q` then `r`.
///
/// # Errors
/// If a shard is missing, damaged or has no `f-sample` section (made before
/// the section existed: rerun the job file with `--force`).
pub fn sampled_f(run: &dyn RunAccess) -> Result<Vec<(u32, u32, u32)>> {
    let mut out = Vec::new();
    for job in run.jobs() {
        let shard = run.load(&job.name)?;
        let bytes = shard.section("f-sample").map_err(|_| {
            Error::job(
                &job.name,
                "the shard has no f-sample section (written by an older gametables): \
                 rerun the job file with --force to draw this run",
            )
        })?;
        let v = decode_u32s(&job.name, "f-sample", bytes)?;
        if v.len() % 3 != 0 {
            return Err(Error::job(&job.name, "malformed shard: f-sample length"));
        }
        out.extend(v.chunks_exact(3).map(|c| (c[0], c[1], c[2])));
    }
    out.sort_unstable();
    Ok(out)
}

/// Everything merged from a run, before it becomes tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// Last column.
    pub q_max: u32,
    /// Class of every row `0…=q_max`.
    pub rows: Vec<RowClass>,
    /// `f(a, a)` for `a ≤ q_max`.
    pub diag: Vec<u32>,
    /// P-positions with first row exactly `p`, `p ≤ q_max`.
    pub p_count: Vec<u64>,
    /// Winning moves of `3×p`, `p ≤ q_max` (index `p`), sorted.
    pub wins: Vec<Vec<(u32, u32)>>,
    /// `f(q, r)` for `r ≤ q ≤ min(255, q_max)`, by `q` then `r`.
    pub small_f: Vec<(u32, u32, u32)>,
}

/// The run's `q_max` parameter.
fn run_q_max(run: &dyn RunAccess) -> Result<u32> {
    run.params()
        .get("q_max")
        .and_then(toml::Value::as_integer)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| Error::job("three-row", "run parameters lack q_max"))
}

/// Reads every tile of a run into a [`Merged`].
///
/// # Errors
/// If a shard is missing or damaged, or the tiles do not cover the triangle.
pub fn merge_run(run: &dyn RunAccess) -> Result<Merged> {
    let q_max = run_q_max(run)?;
    let n = q_max as usize + 1;
    let mut rows: Vec<Option<RowClass>> = vec![None; n];
    let mut diag: Vec<u32> = Vec::new();
    let mut p_count = vec![0u64; n];
    let mut wins: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
    let mut small_f = Vec::new();
    for job in run.jobs() {
        // Only the last q range's row states are read (the final states).
        let t = decode_tile(&run.load(&job.name)?, job_geom(job)?.q1 == q_max + 1)?;
        let g = t.meta.geom();
        if g.q1 == q_max + 1 {
            for (r, st) in g.rows_out().zip(&t.rows) {
                rows[r as usize] = Some(classify(r, st, q_max));
            }
        }
        if t.diag.len() > diag.len() {
            diag = t.diag;
        }
        for (i, &c) in t.p_count.iter().enumerate() {
            p_count[g.q0 as usize + i] += u64::from(c);
        }
        for w in t.wins {
            wins[w.p as usize].push((w.row, w.col));
        }
        small_f.extend(t.small_f);
    }
    let rows = rows
        .into_iter()
        .enumerate()
        .map(|(r, c)| {
            c.ok_or_else(|| {
                Error::job(
                    "three-row",
                    format!("no tile holds the final state of row {r}"),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if diag.len() != n {
        return Err(Error::job(
            "three-row",
            format!("diagonal has {} values, {n} expected", diag.len()),
        ));
    }
    for w in &mut wins {
        w.sort();
    }
    small_f.sort();
    Ok(Merged {
        q_max,
        rows,
        diag,
        p_count,
        wins,
        small_f,
    })
}

fn frac((num, den): (i64, i64)) -> String {
    if den == 1 {
        num.to_string()
    } else {
        format!("{num}/{den}")
    }
}

/// One line of `three-row-rows.csv` (without the newline).
pub fn row_line(r: u32, c: &RowClass) -> String {
    match c {
        RowClass::Dead { c } => format!("{r},dead,{c},{c},,,"),
        RowClass::Linear { c, q0 } => format!("{r},linear,{c},{q0},1,{q0},0"),
        RowClass::Periodic { period, start, .. } => {
            let ((mn, md), pat) = c.pattern().expect("periodic");
            let pat: Vec<String> = pat.iter().map(|&x| frac((x, md))).collect();
            format!(
                "{r},periodic,{},,{period},{start},{}",
                frac((mn, md)),
                pat.join(" ")
            )
        }
        RowClass::Undetermined => format!("{r},undetermined,,,,,"),
    }
}

/// The b-files: `(OEIS number, terms from offset 0)`.
pub fn b_files(m: &Merged) -> Vec<(u32, Vec<u64>)> {
    let mut a899 = Vec::with_capacity(m.p_count.len());
    let mut acc = 0u64;
    for &c in &m.p_count {
        acc += c;
        a899.push(acc);
    }
    let a900: Vec<u64> = m.diag.iter().map(|&v| u64::from(v)).collect();
    let (mut g, mut h) = (Vec::new(), Vec::new());
    for (p, w) in m.wins.iter().enumerate() {
        for &(row, col) in w {
            if row == 2 {
                g.push(p as u64);
                h.push(u64::from(col));
            }
        }
    }
    let (mut pp, mut qq, mut rr) = (Vec::new(), Vec::new(), Vec::new());
    for (r, c) in m.rows.iter().enumerate() {
        match c {
            RowClass::Undetermined => break,
            RowClass::Linear { c, q0 } => {
                pp.push(u64::from(*c));
                qq.push(u64::from(*q0));
                rr.push(r as u64);
            }
            _ => {}
        }
    }
    vec![
        (29899, a899),
        (29900, a900),
        (29901, g),
        (29902, h),
        (29903, pp),
        (29904, qq),
        (29905, rr),
    ]
}

/// Rows by class and period: `(class, period, rows ≤ 10,000, all rows)`.
pub fn class_counts(rows: &[RowClass]) -> BTreeMap<(String, u32), (u64, u64)> {
    let mut out: BTreeMap<(String, u32), (u64, u64)> = BTreeMap::new();
    for (r, c) in rows.iter().enumerate() {
        let e = out
            .entry((c.name().to_string(), c.period().unwrap_or(0)))
            .or_default();
        e.0 += u64::from(r <= 10_000);
        e.1 += 1;
    }
    out
}

fn tables_of(m: &Merged) -> Vec<TableFile> {
    let mut rows_csv = String::from("r,class,c,q0,period,start,pattern\n");
    for (r, c) in m.rows.iter().enumerate() {
        rows_csv.push_str(&row_line(r as u32, c));
        rows_csv.push('\n');
    }
    let mut classes = String::from("class,period,rows_le_10000,rows\n");
    for ((name, period), (small, all)) in class_counts(&m.rows) {
        let p = if period == 0 {
            String::new()
        } else {
            period.to_string()
        };
        classes.push_str(&format!("{name},{p},{small},{all}\n"));
    }
    let mut f255 = String::from("q,r,f\n");
    for (q, r, f) in &m.small_f {
        f255.push_str(&format!("{q},{r},{f}\n"));
    }
    let mut out = vec![
        TableFile {
            name: "three-row-rows.csv".into(),
            bytes: rows_csv.into_bytes(),
        },
        TableFile {
            name: "three-row-classes.csv".into(),
            bytes: classes.into_bytes(),
        },
        TableFile {
            name: "three-row-f-255.csv".into(),
            bytes: f255.into_bytes(),
        },
    ];
    for (id, terms) in b_files(m) {
        let mut s = String::new();
        for (n, a) in terms.iter().enumerate() {
            s.push_str(&format!("{n} {a}\n"));
        }
        out.push(TableFile {
            name: format!("b{id:06}.txt"),
            bytes: s.into_bytes(),
        });
    }
    out
}

/// Parses a b-file (`n a(n)` lines) into its terms.
///
/// # Errors
/// A message naming the line if it is malformed or out of order.
pub fn parse_b_file(text: &str) -> std::result::Result<Vec<u64>, String> {
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let (n, a) = l.split_once(' ').ok_or(format!("line {}: `{l}`", i + 1))?;
            if n.parse::<usize>() != Ok(i) {
                return Err(format!("line {}: index {n}", i + 1));
            }
            a.parse::<u64>()
                .map_err(|_| format!("line {}: `{l}`", i + 1))
        })
        .collect()
}

impl JobKind for ThreeRow {
    crate::pipeline::kind::kind_names!(
        "three-row",
        "three-row Chomp: f(q, r) by Brouwer's recurrence in q×r tiles, row classes, OEIS b-files"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        if p.q_max == 0 || p.q_max > MAX_Q {
            return Err(error_at_key(
                path,
                text,
                "q_max",
                format!("`q_max` must be in 1..={MAX_Q}"),
            ));
        }
        if p.q_range == 0 {
            return Err(error_at_key(
                path,
                text,
                "q_range",
                "`q_range` must be at least 1",
            ));
        }
        let r_range = p.r_range.unwrap_or(p.q_range);
        if r_range == 0 {
            return Err(error_at_key(
                path,
                text,
                "r_range",
                "`r_range` must be at least 1",
            ));
        }
        // Counted before built: q_range = 1 at q_max = 10⁸ is 5·10¹⁵ tiles.
        let Some((count, links)) = count_tiles(p.q_max, p.q_range, r_range, MAX_TILES) else {
            return Err(error_at_key(
                path,
                text,
                "q_range",
                "more than 100,000 tiles: use larger ranges",
            ));
        };
        check_plan_size(path, text, "q_range", count, links)?;
        let tiles = plan_tiles(p.q_max, p.q_range, r_range);
        let exact: Vec<f64> = tiles.iter().map(|(g, _)| tile_cpu_seconds(g)).collect();
        let mut jobs: Vec<JobSpec> = tiles
            .into_iter()
            .map(|(g, inputs)| {
                let mut params = toml::Table::new();
                for (k, v) in [
                    ("q0", g.q0),
                    ("q1", g.q1),
                    ("r0", g.r0),
                    ("r1", g.r1),
                    ("q_max", g.q_max),
                ] {
                    params.insert(k.into(), i64::from(v).into());
                }
                let rows = u64::from(g.r1 - g.r0);
                JobSpec::new(tile_name(g.q0, g.r0), params, inputs, g.cells())
                    .with_memory(tile_memory(rows, u64::from(g.q1)))
                    .with_threads(2)
                    .with_shard_bytes(rows * u64::from(g.q1) / 16 + 4096)
            })
            .collect();
        crate::pipeline::kind::spread_cpu_seconds(&mut jobs, &exact);
        let mut table = toml::Table::new();
        table.insert("q_max".into(), i64::from(p.q_max).into());
        table.insert("q_range".into(), i64::from(p.q_range).into());
        table.insert("r_range".into(), i64::from(r_range).into());
        Ok((table, jobs))
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let geom = job_geom(job)?;
        run_tile(job, &geom, inputs)
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        Ok(tables_of(&merge_run(run)?))
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let m = merge_run(run)?;
        // Strategy stealing: every 3×p rectangle has a winning move.
        if let Some(p) = (1..m.wins.len()).find(|&p| m.wins[p].is_empty()) {
            problems.push(format!(
                "3×{p} has no winning move (strategy stealing says it must)"
            ));
        }
        // Each winning move is a P-position: row-1 moves from the diagonal,
        // row-2 moves are rows that die at p.
        for (p, w) in m.wins.iter().enumerate() {
            for &(row, col) in w {
                let ok = match row {
                    1 => m.diag.get(col as usize) == Some(&(p as u32)),
                    2 => m.rows.get(col as usize) == Some(&RowClass::Dead { c: p as u32 }),
                    _ => false,
                };
                if !ok {
                    problems.push(format!(
                        "3×{p}: winning move ({row}, {col}) is not a P-position"
                    ));
                }
            }
        }
        // The small table against the literal recurrence (independent solver).
        let nq = m.q_max.min(80);
        let naive = naive_f(nq);
        for &(q, r, f) in m.small_f.iter().filter(|t| t.0 <= nq) {
            if naive[q as usize][r as usize] != f {
                problems.push(format!(
                    "f({q}, {r}) = {f} but the literal recurrence gives {}",
                    naive[q as usize][r as usize]
                ));
            }
        }
        // The tables on disk are the ones this merge makes.
        for t in tables_of(&m) {
            if run.table(&t.name)? != t.bytes {
                problems.push(format!("table {} differs from a fresh merge", t.name));
            }
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let m = merge_run(run)?;
        three_row_claims(&m)
    }

    /// `three-row-f-minus-q`: d = f(q, r) − q over the triangle from the
    /// tiles' `f-sample` sections, with the row classes of the rows table.
    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        use crate::games::three_row::picture::{RowKind, ThreeRowChart};
        let q_max = run_q_max(run)?;
        let text = String::from_utf8(run.table("three-row-rows.csv")?).unwrap_or_default();
        let classes = text
            .lines()
            .skip(1)
            .enumerate()
            .map(|(i, l)| {
                l.split(',').nth(1).and_then(RowKind::parse).ok_or_else(|| {
                    Error::job(
                        "three-row",
                        format!("three-row-rows.csv line {}: `{l}`", i + 2),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if classes.len() != q_max as usize + 1 {
            return Err(Error::job(
                "three-row",
                format!(
                    "three-row-rows.csv has {} rows, {} expected",
                    classes.len(),
                    q_max + 1
                ),
            ));
        }
        let chart = ThreeRowChart {
            q_max,
            step: sample_step(q_max),
            samples: sampled_f(run)?,
            classes,
        };
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            "three-row-f-minus-q",
            "Three-row Chomp: f(q, r) − q over the (q, r) triangle, with the row classes",
            &chart,
        ))?])
    }
}

impl TileMeta {
    pub(crate) fn geom(&self) -> TileGeom {
        TileGeom {
            q0: self.q0,
            q1: self.q1,
            r0: self.r0,
            r1: self.r1,
            q_max: self.q_max,
        }
    }
}
