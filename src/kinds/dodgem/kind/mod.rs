//! Job kind `dodgem`: solve Dodgem n×n completely, one job per layer.
//!
//! Job file:
//! ```toml
//! kind = "dodgem"
//! n = 4            # 2 ..= 5; n ≥ 6 is refused with the memory it would need
//! ```
//!
//! Jobs:
//! - `layer-A-B` for 0 ≤ A ≤ B ≤ n−1 solves layer (A blue cars, B red cars)
//!   by retrograde analysis ([`crate::games::dodgem::solve_layer`]); inputs
//!   `layer-(A−1)-B` and `layer-A-(B−1)`, the layers its exits reach. On the
//!   diagonal (A = B) the second is the mirror image of the first
//!   ([`reflect_layer`]), made in memory, so the only input is
//!   `layer-(A−1)-A`.
//! - `layer-A-B` for A > B (task `reflect`) is the mirror image of
//!   `layer-B-A`, its only input: the reflection (x, y) ↦ (y, x) with
//!   colours and side to move swapped preserves value and depth, so the
//!   bytes are a permutation of those of (B, A). Same shard format.
//! - `reach-A-B` finds the layer's positions reachable from the start;
//!   inputs `reach-(A+1)-B` and `reach-A-(B+1)`. These need no values, so
//!   they run beside the solving jobs.
//!
//! Shard sections (all little-endian):
//! - `layer-A-B`: `values` — one byte per index of the layer (index as in
//!   [`Layer`]: `(rank(blue)·C(N−A, B) + rank(red among free squares))·2 +
//!   side`, side 0 = Blue to move), byte encoding of [`Value::to_byte`]
//!   (0 draw, 16+d win in d, 136+d loss in d); then `meta` — [`LayerMeta`]
//!   through the codec.
//! - `reach-A-B`: `reachable` — one bit per index (`u64` words, bit `i % 64`
//!   of word `i / 64`); then `meta` — [`ReachMeta`].
//!
//! Tables: `dodgem-N-summary.toml` (totals, positions with both sides on the
//! board, reachable positions, positions lost for whoever moves, longest
//! decided positions, the start, per-layer counts),
//! `dodgem-N-first-moves.csv` (`move,desjardins,value,depth` for every first
//! move, from Blue's side) and `dodgem-N-layers.csv` (per layer: positions,
//! wins, losses, draws, longest win and loss, reachable counts; columns in
//! [`layers_csv`]).

pub use super::layout::{LayerMeta, ReachMeta};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::games::dodgem::{
    Board, Layer, LayerStats, MAX_N, Move, Position, ReachBits, Side, Tables, Value, binomial,
    reach_layer_with_threads, reach_working_bytes, reflect_layer, solve_working_bytes,
    try_solve_layer_with_threads,
};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{error_at_key, parse_params};
use crate::pipeline::kind::{
    Claim, ClaimStatus, JobKind, JobSpec, RunAccess, ShardSource, TableFile,
};
use crate::pipeline::shard::{Section, Shard};

mod claims;

use self::claims::*;

/// The `dodgem` job kind.
pub struct Dodgem;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    n: u32,
    /// Solve only the layers with at most this many cars a side (default
    /// n − 1: the whole board, with reachability from the start).
    max_cars: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobParams {
    task: String,
    n: u32,
    a: u32,
    b: u32,
}

/// Name of the solving job of layer (a, b).
pub fn layer_job(a: usize, b: usize) -> String {
    format!("layer-{a}-{b}")
}

/// Name of the reachability job of layer (a, b).
pub fn reach_job(a: usize, b: usize) -> String {
    format!("reach-{a}-{b}")
}

fn params(job: &JobSpec) -> Result<(String, Board, usize, usize)> {
    let p: JobParams =
        toml::Value::Table(job.params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                Error::job(&job.name, format!("parameters: {}", e.message()))
            })?;
    let board = Board::new(p.n as usize).map_err(|e| Error::job(&job.name, e.to_string()))?;
    if p.a as usize > board.cars() || p.b as usize > board.cars() {
        return Err(Error::job(
            &job.name,
            format!(
                "layer ({}, {}) is not on the {}×{} board",
                p.a, p.b, p.n, p.n
            ),
        ));
    }
    Ok((p.task, board, p.a as usize, p.b as usize))
}

/// Thousands separators, for messages and claims.
fn sep(v: u128) -> String {
    crate::pipeline::resources::thousands(v)
}

/// What one job needs, estimated before it runs (see [`job_resources`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobResources {
    /// Peak resident memory of the worker, bytes.
    pub memory: u64,
    /// Threads the job can use.
    pub threads: u32,
    /// Shard size on disk, bytes.
    pub shard_bytes: u64,
    /// CPU time on one core of the 2-core reference machine, seconds.
    pub cpu_seconds_f64: f64,
}

/// Memory of a worker process before its job allocates anything (binary,
/// allocator, the job's manifest), bytes.
const WORKER_BASE: u64 = 24 << 20;

/// The estimate of job `task` on layer `(a, b)` (task `solve`, `reflect` or
/// `reach`), from the layer sizes and rates measured on this 2-core machine
/// (BENCHMARKS.md, §Dodgem 6×6):
///
/// - **memory**: `solve` holds [`solve_working_bytes`] (the layer's value
///   bytes, one pending bit per position, step tables) and the two layers
///   below it as bytes (on the diagonal the second one is the mirror of the
///   first, made in memory); writing the shard holds the values, the
///   compressed body and its copy (at most half the values at the ratios
///   seen, 4–7). `reflect` holds its input and output bytes. `reach` holds
///   [`reach_working_bytes`] and one bit per position of the layers above.
///   Measured peaks are 0.8–0.95 of these (6×6 (4, 4): 5.84 GB for 6.34 GB
///   estimated; (3, 4): 0.81 GB for 0.90; (4, 3): 1.18 GB for 1.49).
/// - **threads**: a solve uses every thread it gets (one per 2²⁴ positions,
///   at least 2 from 2²⁰ positions, at most 32); reflect and reach one.
/// - **CPU**: solving 160 ns per position up to 5×5 and 280 on 6×6 (its
///   (4, 4) layer: 1,192 s of CPU for 4.24·10⁹ positions, more cache
///   misses), mirroring 25 / 65, reachability 60 / 90 (one core; the 6×6
///   reachability rate is a guess, no 6×6 reach job has run).
/// - **shard**: a fifth of the values (zstd level 1 compresses 6×6 layers
///   4.2–11×); reachability bitsets an eighth of a byte per position.
pub fn job_resources(task: &str, board: Board, a: usize, b: usize) -> JobResources {
    let layer = Layer::new(board, a, b);
    let len = layer.len();
    let top = board.cars();
    let six = board.n() >= 6;
    let len_of = |x: usize, y: usize| {
        if x <= top && y <= top {
            Layer::new(board, x, y).len()
        } else {
            0
        }
    };
    let encode = len + len / 2;
    let (memory, ns, shard, threads) = match task {
        "solve" => {
            let below = len_of(a.wrapping_sub(1), b)
                + if a == b {
                    len_of(a.wrapping_sub(1), b)
                } else {
                    len_of(a, b.wrapping_sub(1))
                };
            let solving = solve_working_bytes(&layer) + below;
            let threads = if len < 1 << 20 {
                1
            } else {
                (len >> 24).clamp(2, 32) as u32
            };
            (
                solving.max(encode),
                if six { 280 } else { 160 },
                len / 5,
                threads,
            )
        }
        "reflect" => (2 * len + len / 2, if six { 65 } else { 25 }, len / 5, 1),
        _ => {
            let above = (len_of(a + 1, b) + len_of(a, b + 1)).div_ceil(8);
            (
                reach_working_bytes(&layer) + above + len.div_ceil(8),
                if six { 90 } else { 60 },
                len.div_ceil(8),
                1,
            )
        }
    };
    JobResources {
        memory: memory + WORKER_BASE,
        threads,
        shard_bytes: shard + 4096,
        cpu_seconds_f64: len as f64 * ns as f64 * 1e-9,
    }
}

/// Positions with side to move on an n×n board, and its largest layer's.
fn counts(n: usize) -> (u128, u128) {
    let sq = (n * n) as u64;
    let mut total = 0u128;
    let mut largest = 0u128;
    for a in 0..n as u64 {
        for b in 0..n as u64 {
            let l = 2 * u128::from(binomial(sq, a)) * u128::from(binomial(sq - a, b));
            total += l;
            largest = largest.max(l);
        }
    }
    (total, largest)
}

/// Decodes a `layer-A-B` shard.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_layer(shard: Shard) -> Result<(LayerMeta, Vec<u8>)> {
    let job = shard.header.job_name.clone();
    let bad = |m: String| Error::job(&job, format!("malformed shard: {m}"));
    let meta: LayerMeta = codec::decode(shard.section("meta")?).map_err(bad)?;
    let values = shard
        .sections
        .into_iter()
        .find(|s| s.name == "values")
        .ok_or_else(|| bad("no values".into()))?
        .bytes;
    if values.len() as u64 != meta.positions {
        return Err(bad(format!(
            "{} values for {} positions",
            values.len(),
            meta.positions
        )));
    }
    let hist = crate::games::dodgem::histogram(&values);
    if (1..crate::games::dodgem::WIN_BASE as usize).any(|b| hist[b] != 0)
        && let Some(i) = values.iter().position(|&v| Value::from_byte(v).is_none())
    {
        return Err(bad(format!(
            "byte {} at index {i} is not a value",
            values[i]
        )));
    }
    Ok((meta, values))
}

/// Decodes a `reach-A-B` shard.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_reach(shard: &Shard) -> Result<(ReachMeta, ReachBits)> {
    let job = &shard.header.job_name;
    let bad = |m: String| Error::job(job, format!("malformed shard: {m}"));
    let meta: ReachMeta = codec::decode(shard.section("meta")?).map_err(bad)?;
    let bits = ReachBits::from_le_bytes(meta.positions, shard.section("reachable")?)
        .ok_or_else(|| bad("reachable length".into()))?;
    Ok((meta, bits))
}

/// Loads the solved layers `which` of a run into [`Tables`].
///
/// # Errors
/// If a shard is missing or damaged.
pub fn tables_from_run(
    src: &dyn ShardSource,
    board: Board,
    which: &[(usize, usize)],
) -> Result<Tables> {
    let mut t = Tables::empty(board);
    for &(a, b) in which {
        if a < board.n() && b < board.n() && t.bytes(a, b).is_none() {
            let (_, v) = decode_layer(src.load(&layer_job(a, b))?)?;
            t.insert(a, b, v);
        }
    }
    Ok(t)
}

/// The layers needed to value `p` and all its moves.
pub fn layers_for(p: &Position) -> Vec<(usize, usize)> {
    let (a, b) = p.layer();
    let mut v = vec![(a, b)];
    if a > 0 {
        v.push((a - 1, b));
    }
    if b > 0 {
        v.push((a, b - 1));
    }
    v
}

/// The value of a move for the player making it (the value after it, seen
/// from the other side, one ply longer).
pub fn value_of_move(t: &Tables, p: &Position, m: Move) -> Option<Value> {
    Some(mover_value(t.value(&t.board().apply(p, m))?))
}

/// The value of a move for the player making it, from the value `after` it
/// for the side then to move: the other side's win is the mover's loss one
/// ply longer, and so on.
pub fn mover_value(after: Value) -> Value {
    match after {
        Value::Win(d) => Value::Loss(d + 1),
        Value::Loss(d) => Value::Win(d + 1),
        Value::Draw => Value::Draw,
    }
}

/// Sort key: shortest wins, then draws, then longest losses.
pub fn move_rank(v: Value) -> (u8, i32) {
    match v {
        Value::Win(d) => (0, i32::from(d)),
        Value::Draw => (1, 0),
        Value::Loss(d) => (2, -i32::from(d)),
    }
}

impl JobKind for Dodgem {
    crate::pipeline::kind::kind_names!(
        "dodgem",
        "Dodgem n×n: win/loss/draw and depth of every position, one job per layer (a, b)"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        let n = p.n as usize;
        if n > MAX_N {
            let (total, largest) = counts(n.min(12));
            let what = if n <= 12 {
                format!(
                    "{} positions; its largest layer ({m}, {m}) alone has {} positions, i.e. {:.1} GB \
                     at one byte per position before counting the two layers it reads",
                    sep(total),
                    sep(largest),
                    largest as f64 / 1e9,
                    m = n - 1
                )
            } else {
                "far more positions than any machine holds".to_string()
            };
            return Err(error_at_key(
                path,
                text,
                "n",
                format!(
                    "n = {n} is refused: the {n}×{n} board has {what}; this build solves n ≤ {MAX_N}"
                ),
            ));
        }
        let board = Board::new(n).map_err(|e| error_at_key(path, text, "n", e.to_string()))?;
        let top = board.cars();
        let max_cars = match p.max_cars {
            None => top,
            Some(m) if (m as usize) <= top => m as usize,
            Some(m) => {
                return Err(error_at_key(
                    path,
                    text,
                    "max_cars",
                    format!(
                        "max_cars = {m}: a side has at most {top} cars on the {n}×{n} board \
                         (max_cars = {top}, or leaving it out, solves the whole board)"
                    ),
                ));
            }
        };
        let mut jobs = Vec::new();
        let job = |task: &str, a: usize, b: usize, inputs: Vec<String>| {
            let mut params = toml::Table::new();
            params.insert("task".into(), task.into());
            params.insert("n".into(), (n as i64).into());
            params.insert("a".into(), (a as i64).into());
            params.insert("b".into(), (b as i64).into());
            let name = if task == "reach" {
                reach_job(a, b)
            } else {
                layer_job(a, b)
            };
            let r = job_resources(task, board, a, b);
            JobSpec::new(name, params, inputs, (r.cpu_seconds_f64 * 1e9) as u64)
                .with_memory(r.memory)
                .with_threads(r.threads)
                .with_shard_bytes(r.shard_bytes)
                // Whole seconds, rounded: the many tiny jobs count as
                // negligible (0) instead of a second each.
                .with_cpu_seconds(r.cpu_seconds_f64.round() as u64)
        };
        for sum in 0..=2 * max_cars {
            for a in sum.saturating_sub(max_cars)..=sum.min(max_cars) {
                let b = sum - a;
                if a > b {
                    // The mirror image of layer (b, a).
                    jobs.push(job("reflect", a, b, vec![layer_job(b, a)]));
                    continue;
                }
                let mut inputs = Vec::new();
                if a > 0 {
                    inputs.push(layer_job(a - 1, b));
                }
                // On the diagonal, layer (a, a−1) is the mirror of (a−1, a).
                if b > a {
                    inputs.push(layer_job(a, b - 1));
                }
                jobs.push(job("solve", a, b, inputs));
            }
        }
        // Reachability starts from the start position, in the top layer:
        // only a run of the whole board has it.
        if max_cars == top {
            for sum in (0..=2 * top).rev() {
                for a in (sum.saturating_sub(top)..=sum.min(top)).rev() {
                    let b = sum - a;
                    let mut inputs = Vec::new();
                    if a < top {
                        inputs.push(reach_job(a + 1, b));
                    }
                    if b < top {
                        inputs.push(reach_job(a, b + 1));
                    }
                    jobs.push(job("reach", a, b, inputs));
                }
            }
        }
        let mut table = toml::Table::new();
        table.insert("n".into(), (n as i64).into());
        if let Some(m) = p.max_cars {
            table.insert("max_cars".into(), i64::from(m).into());
        }
        Ok((table, jobs))
    }

    /// Level 1: on the 5×5 top layer's bytes (151 MB) it is both faster and
    /// smaller than the default 3 (zstd 1.5 command line: 234 vs 147 MB/s to
    /// compress, 739 vs 465 MB/s to decompress, ratio 5.67 vs 5.62).
    fn zstd_level(&self) -> i32 {
        1
    }

    fn check_shard(&self, job: &JobSpec, shard: &Shard) -> Result<()> {
        let (task, board, a, b) = params(job)?;
        let len = Layer::new(board, a, b).len();
        let bad = |m: String| Error::job(&job.name, m);
        let want = (board.n() as u32, a as u32, b as u32, len);
        let (got, body) = match task.as_str() {
            "solve" | "reflect" => {
                let m: LayerMeta = codec::decode(shard.section("meta")?).map_err(bad)?;
                let ok = shard.section("values")?.len() as u64 == len;
                ((m.n, m.a, m.b, m.positions), ok)
            }
            _ => {
                let m: ReachMeta = codec::decode(shard.section("meta")?).map_err(bad)?;
                let ok = shard.section("reachable")?.len() as u64 == len.div_ceil(64) * 8;
                ((m.n, m.a, m.b, m.positions), ok)
            }
        };
        if got != want || !body {
            return Err(bad(format!(
                "shard holds n, a, b, positions = {got:?} (body length {}), job wants {want:?}",
                if body { "ok" } else { "wrong" }
            )));
        }
        Ok(())
    }

    /// One byte per position of the job's layer (a reach bitset is an
    /// eighth of that), plus 1 MiB for `meta`.
    fn max_raw_bytes(&self, job: &JobSpec) -> u64 {
        params(job).map_or(crate::pipeline::shard::MAX_BODY, |(_, board, a, b)| {
            Layer::new(board, a, b).len() + (1 << 20)
        })
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (task, board, a, b) = params(job)?;
        let layer = Layer::new(board, a, b);
        match task.as_str() {
            "solve" | "reflect" => {
                let below = |x: usize, y: usize| -> Result<Vec<u8>> {
                    let (m, v) = decode_layer(inputs.load(&layer_job(x, y))?)?;
                    if (m.n, m.a, m.b) != (board.n() as u32, x as u32, y as u32) {
                        return Err(Error::job(
                            &job.name,
                            format!("input layer-{x}-{y} holds another layer"),
                        ));
                    }
                    Ok(v)
                };
                let values = if task == "reflect" {
                    let src = Layer::new(board, b, a);
                    reflect_layer(&src, &below(b, a)?)
                } else {
                    let vb = if a > 0 { Some(below(a - 1, b)?) } else { None };
                    let vr = match (a, b) {
                        (_, 0) => None,
                        // Layer (a, a−1) is the mirror of (a−1, a), loaded above.
                        (a, b) if a == b => {
                            let src = Layer::new(board, a - 1, a);
                            Some(reflect_layer(&src, vb.as_deref().expect("a ≥ 1")))
                        }
                        _ => Some(below(a, b - 1)?),
                    };
                    // Layers under 2²⁰ positions are not worth threads.
                    let threads = if layer.len() < 1 << 20 {
                        1
                    } else {
                        crate::pipeline::worker_threads()
                    };
                    try_solve_layer_with_threads(&layer, vb.as_deref(), vr.as_deref(), threads)
                        .map_err(|e| {
                            Error::job(
                                &job.name,
                                format!(
                                    "{e}: this build stores one byte per position (draw, or win or \
                                     loss with its depth); a wider value encoding is needed for this layer"
                                ),
                            )
                        })?
                };
                let s = LayerStats::of(&layer, &values);
                let meta = LayerMeta {
                    n: board.n() as u32,
                    a: a as u32,
                    b: b as u32,
                    positions: layer.len(),
                    wins: s.wins,
                    losses: s.losses,
                    draws: s.draws,
                    max_win_depth: s.max_win_depth,
                    max_loss_depth: s.max_loss_depth,
                    lost_for_both: s.lost_for_both,
                };
                let meta = codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?;
                Ok(vec![
                    Section::new("values", values),
                    Section::new("meta", meta),
                ])
            }
            "reach" => {
                let top = board.cars();
                let above = |x: usize, y: usize| -> Result<Option<ReachBits>> {
                    if x > top || y > top {
                        return Ok(None);
                    }
                    let (m, bits) = decode_reach(&inputs.load(&reach_job(x, y))?)?;
                    if (m.n, m.a, m.b) != (board.n() as u32, x as u32, y as u32) {
                        return Err(Error::job(
                            &job.name,
                            format!("input reach-{x}-{y} holds another layer"),
                        ));
                    }
                    Ok(Some(bits))
                };
                let ub = above(a + 1, b)?;
                let ur = above(a, b + 1)?;
                // One thread: reachability runs beside the solving jobs (the
                // critical path), which get the cores.
                let threads = 1;
                let bits = reach_layer_with_threads(&layer, ub.as_ref(), ur.as_ref(), threads);
                let meta = ReachMeta {
                    n: board.n() as u32,
                    a: a as u32,
                    b: b as u32,
                    positions: layer.len(),
                    reachable: bits.count(),
                };
                let meta = codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?;
                Ok(vec![
                    Section::new("reachable", bits.to_le_bytes()),
                    Section::new("meta", meta),
                ])
            }
            other => Err(Error::job(
                &job.name,
                format!("unknown task `{other}` (solve, reflect or reach)"),
            )),
        }
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let s = summarize(run)?;
        let mut tables = vec![TableFile {
            name: format!("dodgem-{}-summary.toml", s.n),
            bytes: s.summary_toml().into_bytes(),
        }];
        // The first moves need the start's layer: whole-board runs only.
        if s.file.start.is_some() {
            tables.push(TableFile {
                name: format!("dodgem-{}-first-moves.csv", s.n),
                bytes: s.first_moves_csv().into_bytes(),
            });
        }
        tables.push(TableFile {
            name: format!("dodgem-{}-layers.csv", s.n),
            bytes: layers_csv(&s.file.layers).into_bytes(),
        });
        Ok(tables)
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        check_run(run)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let n = run_board(run)?.n();
        let text =
            String::from_utf8(run.table(&format!("dodgem-{n}-summary.toml"))?).unwrap_or_default();
        let summary: SummaryFile = toml::from_str(&text)
            .map_err(|e| Error::job(self.name(), format!("summary table: {}", e.message())))?;
        let csv = if summary.start.is_some() {
            String::from_utf8(run.table(&format!("dodgem-{n}-first-moves.csv"))?)
                .unwrap_or_default()
        } else {
            String::new()
        };
        Ok(dodgem_claims(run, &summary, &csv))
    }

    /// `dodgem-N-layers`: wins, losses and draws per layer, from the
    /// per-layer table `dodgem-N-layers.csv`.
    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        use crate::kinds::dodgem::picture::{DodgemChart, LayerCounts};
        let n = run_board(run)?.n();
        let name = format!("dodgem-{n}-layers.csv");
        let text = String::from_utf8(run.table(&name)?).unwrap_or_default();
        let mut lines = text.lines();
        if lines.next() != Some(LAYERS_CSV_HEADER) {
            return Err(Error::job(
                self.name(),
                format!("{name}: unexpected header"),
            ));
        }
        let layers = lines
            .enumerate()
            .map(|(i, l)| {
                let f: Vec<&str> = l.split(',').collect();
                let num = |k: usize| f.get(k).and_then(|x| x.parse::<u64>().ok());
                let cols = LAYERS_CSV_HEADER.split(',').count();
                match (
                    f.len() == cols,
                    num(0),
                    num(1),
                    num(2),
                    num(3),
                    num(4),
                    num(5),
                ) {
                    (
                        true,
                        Some(a),
                        Some(b),
                        Some(positions),
                        Some(wins),
                        Some(losses),
                        Some(draws),
                    ) => Ok(LayerCounts {
                        a: a as u32,
                        b: b as u32,
                        positions,
                        wins,
                        losses,
                        draws,
                    }),
                    _ => Err(Error::job(
                        self.name(),
                        format!("{name} line {}: `{l}`", i + 2),
                    )),
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let chart = DodgemChart {
            n: n as u32,
            layers,
        };
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            &format!("dodgem-{n}-layers"),
            &format!("Dodgem {n}×{n}: wins, losses and draws for the side to move, per layer"),
            &chart.bars(),
        ))?])
    }
}

fn run_board(run: &dyn RunAccess) -> Result<Board> {
    let n = run
        .params()
        .get("n")
        .and_then(toml::Value::as_integer)
        .ok_or_else(|| Error::job("dodgem", "run parameters have no `n`"))?;
    Board::new(n as usize).map_err(|e| Error::job("dodgem", e.to_string()))
}

/// The largest number of cars a side in the layers a run solves (`max_cars`
/// of its job file, n − 1 for the whole board).
pub fn solved_max_cars(params: &toml::Table, board: Board) -> usize {
    params
        .get("max_cars")
        .and_then(toml::Value::as_integer)
        .map_or(board.cars(), |m| (m.max(0) as usize).min(board.cars()))
}

/// Counts of one layer in the summary table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerRow {
    /// Blue cars.
    pub a: u32,
    /// Red cars.
    pub b: u32,
    /// Positions (with side to move).
    pub positions: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Longest win.
    pub max_win_depth: u8,
    /// Longest loss.
    pub max_loss_depth: u8,
    /// Reachable from the start (absent when the run solves only the
    /// layers with at most `max_cars` cars a side).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable: Option<u64>,
    /// Reachable and won for the side to move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_wins: Option<u64>,
    /// Reachable and lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_losses: Option<u64>,
    /// Reachable and drawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_draws: Option<u64>,
}

/// `tables/dodgem-N-summary.toml`. Counts are over the layers the run
/// solves (every layer, or those with at most `max_cars` cars a side); what
/// needs the whole board (reachability, the start) is absent otherwise.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryFile {
    /// Board size.
    pub n: u32,
    /// The largest number of cars a side in the layers solved, when the run
    /// solves only part of the board (`max_cars` of the job file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cars: Option<u32>,
    /// All positions with side to move.
    pub positions: u64,
    /// Won for the side to move.
    pub wins: u64,
    /// Lost for the side to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Positions with at least one car of each colour on the board.
    pub both_sides_positions: u64,
    /// Drawn among those.
    pub both_sides_draws: u64,
    /// Car placements (side to move ignored) with both colours on the board.
    pub both_sides_placements: u64,
    /// Reachable from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable: Option<u64>,
    /// Reachable, won for the side to move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_wins: Option<u64>,
    /// Reachable, lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_losses: Option<u64>,
    /// Reachable, drawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable_draws: Option<u64>,
    /// Longest win (plies).
    pub longest_win: u8,
    /// Longest loss (plies).
    pub longest_loss: u8,
    /// The start's value: `win in D`, `loss in D` or `draw`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Placements lost for whoever moves (empty board left out), as position text with Blue to move.
    pub lost_for_both: Vec<String>,
    /// Per-layer counts, in (a, b) order.
    pub layers: Vec<LayerRow>,
}

struct Summary {
    n: usize,
    file: SummaryFile,
    first: Vec<(String, String, Value)>,
}

impl Summary {
    fn summary_toml(&self) -> String {
        let mut s = format!(
            "# Dodgem {n}×{n}, merged from the layer shards (gametables, kind `dodgem`).\n\
             # Values are for the side to move; depths in plies under best play.\n",
            n = self.n
        );
        if let Some(m) = self.file.max_cars {
            let _ = writeln!(
                s,
                "# Only the layers with at most {m} cars a side: no start, no reachability."
            );
        }
        s.push_str(&toml::to_string(&self.file).expect("summary serializes"));
        s
    }

    fn first_moves_csv(&self) -> String {
        let mut s = String::from("move,desjardins,value,depth\n");
        for (m, dj, v) in &self.first {
            let d = v.depth().map_or(String::new(), |d| d.to_string());
            let _ = writeln!(s, "{m},{dj},{},{d}", v.word());
        }
        s
    }
}

/// Header of `tables/dodgem-N-layers.csv` (see [`layers_csv`]).
pub const LAYERS_CSV_HEADER: &str = "a,b,positions,wins,losses,draws,longest_win,longest_loss,\
     reachable,reachable_wins,reachable_losses,reachable_draws";

/// `tables/dodgem-N-layers.csv`: one row per layer (a, b) in (a, b) order.
///
/// Columns: `a`, `b` (blue and red cars on the board); `positions` (with
/// side to move: 2·C(n², a)·C(n² − a, b)); `wins`, `losses`, `draws` (for
/// the side to move; they sum to `positions`); `longest_win`,
/// `longest_loss` (largest depth in plies of a won / lost position, 0 if
/// there is none); `reachable` and its `reachable_wins`,
/// `reachable_losses`, `reachable_draws` (positions reachable from the
/// start), empty when the run does not compute reachability.
pub fn layers_csv(rows: &[LayerRow]) -> String {
    let mut s = format!("{LAYERS_CSV_HEADER}\n");
    for r in rows {
        let _ = write!(
            s,
            "{},{},{},{},{},{},{},{},",
            r.a, r.b, r.positions, r.wins, r.losses, r.draws, r.max_win_depth, r.max_loss_depth
        );
        let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
        let _ = writeln!(
            s,
            "{},{},{},{}",
            opt(r.reachable),
            opt(r.reachable_wins),
            opt(r.reachable_losses),
            opt(r.reachable_draws)
        );
    }
    s
}

fn summarize(run: &dyn RunAccess) -> Result<Summary> {
    let board = run_board(run)?;
    let n = board.n();
    let m = solved_max_cars(run.params(), board);
    let whole = m == board.cars();
    let mut f = SummaryFile {
        n: n as u32,
        max_cars: (!whole).then_some(m as u32),
        ..Default::default()
    };
    let mut lost: Vec<Position> = Vec::new();
    let start = board.start();
    let mut start_tables = None;
    let mut scratch: Vec<u8>;
    let mut reach_totals = [0u64; 4];
    for a in 0..=m {
        for b in 0..=m {
            let (meta, values) = decode_layer(run.load(&layer_job(a, b))?)?;
            let values = if whole && (a, b) == start.layer() {
                // Keep the start's layer (the last one) for the first moves.
                let mut t = Tables::empty(board);
                t.insert(a, b, values);
                start_tables = Some(t);
                start_tables
                    .as_ref()
                    .and_then(|t| t.bytes(a, b))
                    .expect("inserted")
            } else {
                scratch = values;
                &scratch
            };
            let mut row = LayerRow {
                a: a as u32,
                b: b as u32,
                positions: meta.positions,
                wins: meta.wins,
                losses: meta.losses,
                draws: meta.draws,
                max_win_depth: meta.max_win_depth,
                max_loss_depth: meta.max_loss_depth,
                ..Default::default()
            };
            if whole {
                let (rmeta, bits) = decode_reach(&run.load(&reach_job(a, b))?)?;
                if rmeta.positions != meta.positions {
                    return Err(Error::job(
                        "dodgem",
                        format!("layer ({a}, {b}): reach and values differ in length"),
                    ));
                }
                let (w, l, d) = bits.value_counts(values);
                for (t, v) in reach_totals.iter_mut().zip([rmeta.reachable, w, l, d]) {
                    *t += v;
                }
                row.reachable = Some(rmeta.reachable);
                (
                    row.reachable_wins,
                    row.reachable_losses,
                    row.reachable_draws,
                ) = (Some(w), Some(l), Some(d));
            }
            f.positions += row.positions;
            f.wins += row.wins;
            f.losses += row.losses;
            f.draws += row.draws;
            if a > 0 && b > 0 {
                f.both_sides_positions += row.positions;
                f.both_sides_draws += row.draws;
                f.both_sides_placements += row.positions / 2;
            }
            f.longest_win = f.longest_win.max(row.max_win_depth);
            f.longest_loss = f.longest_loss.max(row.max_loss_depth);
            lost.extend(meta.lost_for_both.iter().map(|&(blue, red)| Position {
                blue,
                red,
                to_move: Side::Blue,
            }));
            f.layers.push(row);
        }
    }
    f.lost_for_both = lost.iter().map(|p| board.position_text(p)).collect();
    let mut first = Vec::new();
    if whole {
        [
            f.reachable,
            f.reachable_wins,
            f.reachable_losses,
            f.reachable_draws,
        ] = reach_totals.map(Some);
        let mut t = start_tables.expect("the start's layer is on the board");
        // The layers a first move's exit reaches (none: no car starts on the
        // exit edge), loaded only if needed.
        for mv in board.moves(&start) {
            let (x, y) = board.apply(&start, mv).layer();
            if t.bytes(x, y).is_none() {
                t.insert(x, y, decode_layer(run.load(&layer_job(x, y))?)?.1);
            }
        }
        f.start = Some(t.value(&start).expect("top layer loaded").to_string());
        for mv in board.moves(&start) {
            let v = value_of_move(&t, &start, mv).expect("layers loaded");
            let ours = board.move_name(mv);
            let dj = crate::games::dodgem::from_desjardins(&board, &ours).expect("own notation");
            first.push((ours, dj, v));
        }
    }
    Ok(Summary { n, file: f, first })
}

/// Internal checks: meta against values, reflection and local consistency on a sample.
fn check_run(run: &dyn RunAccess) -> Result<Vec<String>> {
    let board = run_board(run)?;
    let mut problems = Vec::new();
    // Layers by car count: checking (a, b) reads (b, a) (same count) and the
    // exits' layers (one car fewer), so each layer is decoded once and at
    // most two counts are held (5×5: (4, 4) with (3, 4) and (4, 3), 218 MB;
    // the 6×6 endgame: (4, 4) with them, 5.4 GB). `top`: the most cars a
    // side in the layers the run solves.
    let top = solved_max_cars(run.params(), board);
    let mut t = Tables::empty(board);
    for sum in 0..=2 * top {
        let here: Vec<(usize, usize)> = (sum.saturating_sub(top)..=sum.min(top))
            .map(|a| (a, sum - a))
            .collect();
        if sum >= 2 {
            for a in (sum - 2).saturating_sub(top)..=(sum - 2).min(top) {
                t.remove(a, sum - 2 - a);
            }
        }
        let below: Vec<(usize, usize)> = match sum {
            0 => Vec::new(),
            s => ((s - 1).saturating_sub(top)..=(s - 1).min(top))
                .map(|a| (a, s - 1 - a))
                .collect(),
        };
        // The top layer is the largest: decode it before the layers below
        // (again), so its compressed and decompressed bytes are never held
        // beside them.
        let last = sum == 2 * top && sum > 0;
        if last {
            for &(a, b) in &below {
                t.remove(a, b);
            }
        }
        let mut metas = Vec::new();
        for &(a, b) in &here {
            let (meta, values) = decode_layer(run.load(&layer_job(a, b))?)?;
            t.insert(a, b, values);
            metas.push(meta);
        }
        if last {
            for &(a, b) in &below {
                t.insert(a, b, decode_layer(run.load(&layer_job(a, b))?)?.1);
            }
        }
        for (&(a, b), meta) in here.iter().zip(&metas) {
            let (layer, values) = t.layer(a, b).expect("loaded");
            let s = LayerStats::of(layer, values);
            if (
                s.wins,
                s.losses,
                s.draws,
                s.max_win_depth,
                s.max_loss_depth,
                &s.lost_for_both,
            ) != (
                meta.wins,
                meta.losses,
                meta.draws,
                meta.max_win_depth,
                meta.max_loss_depth,
                &meta.lost_for_both,
            ) {
                problems.push(format!(
                    "layer ({a}, {b}): meta counts differ from the values"
                ));
            }
            let step = (layer.len() / 4096).max(1);
            let mut i = 0;
            while i < layer.len() {
                let p = layer.position(i);
                let v = Value::from_byte(values[i as usize]).expect("decoded");
                if t.value(&board.reflect(&p)) != Some(v) {
                    problems.push(format!(
                        "layer ({a}, {b}): {} and its reflection differ",
                        board.position_text(&p)
                    ));
                    break;
                }
                let after: Vec<Value> = board
                    .moves(&p)
                    .into_iter()
                    .map(|m| value_of_move(&t, &p, m).expect("loaded"))
                    .collect();
                let ok = match v {
                    Value::Win(0) | Value::Loss(0) => {
                        after.is_empty() && board.terminal(&p) == Some(v)
                    }
                    _ if after.is_empty() => false,
                    Value::Win(_) | Value::Draw | Value::Loss(_) => {
                        after.iter().copied().min_by_key(|x| move_rank(*x)) == Some(v)
                    }
                };
                if !ok {
                    problems.push(format!(
                        "layer ({a}, {b}): {} is {v} but its moves give {after:?}",
                        board.position_text(&p)
                    ));
                    break;
                }
                i += step;
            }
        }
    }
    Ok(problems)
}
