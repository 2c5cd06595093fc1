//! Layer jobs split over ranks ([`crate::pipeline::ranks`]): which jobs are
//! split and what a rank costs ([`split`]), and one rank's run
//! ([`run_rank`]): its part of the layer solved by the engine
//! ([`solve_part`]), copied through the image (an image layer), or its part
//! of the reachable bits ([`crate::solvers::engine::reach::reach_part`]); the
//! parts are gathered on rank 0, which writes the shard of the whole layer
//! (the same bytes as an unsplit job).
//!
//! **Estimates** of a rank: the engine's working bytes of its part (a
//! `1/ranks` share of [`working_bytes`]), the update queues
//! ([`QUEUE_BYTES`]) and [`WORKER_BASE`]; CPU: the unsplit job's times
//! [`SPLIT_CPU_FACTOR`] (the updates that cross ranks are packed, written,
//! read and applied once more). The child layers are not counted: the ranks
//! read them mapped from decompressed copies in the run directory's
//! `scratch/` ([`ShardSource::mapped`]), page cache that the ranks of a node
//! share and the kernel may drop; a node with less memory than the child
//! layers reads them from disk, slower.

use super::jobs::{Resources, Task, WORKER_BASE, game_of, job_params, layer_id, resources};
use super::layout::LayerInfo;
use super::layout::layer_job;
use super::spec::EngineGame;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::kind::{JobSpec, SectionBytes, ShardSource, Split, SplitPolicy};
use crate::pipeline::ranks::{RankStore, Ranks};
use crate::pipeline::resources::fmt_bytes;
use crate::pipeline::shard::SectionSink;
use crate::solvers::engine::split::Checkpoints;
use crate::solvers::engine::{
    Exchange, LayerStats, LayeredGame, image::image_range, part_bounds, solve_part, working_bytes,
};

/// Bytes of update queues a rank holds at most: the engine's batch of
/// 2²³ updates of 8 bytes, as queued, as received and as joined.
pub const QUEUE_BYTES: u64 = (3 * 8) << 23;

/// The CPU of a split layer over the unsplit one's (an estimate until
/// measured on large layers).
pub const SPLIT_CPU_FACTOR: f64 = 1.15;

/// The most ranks a layer is split over.
pub const MAX_RANKS: u32 = 4096;

/// Peak memory of one of `ranks` ranks of layer `layer`'s job.
pub fn rank_memory<S: EngineGame>(game: &S::Game, layer: usize, ranks: u32) -> u64 {
    let part = game.layer_size(layer).div_ceil(u64::from(ranks));
    // Queued and received updates: a batch at most, and no more than eight
    // parents a position of the part, as queued, received and joined.
    let queues = QUEUE_BYTES.min(3 * 8 * 8 * part);
    working_bytes(game, layer).div_ceil(u64::from(ranks)) + queues + WORKER_BASE
}

/// Peak memory of one of `ranks` ranks of a reachability job of a layer
/// of `size` positions: three bits a position of its part (reached, this
/// frontier, the next), queues of marks, [`WORKER_BASE`]; the parent layers'
/// bits and the layer's values are mapped ([`ShardSource::mapped`]).
pub fn reach_rank_memory(size: u64, ranks: u32) -> u64 {
    let part = size.div_ceil(u64::from(ranks));
    3 * part.div_ceil(8) + QUEUE_BYTES.min(3 * 8 * 8 * part) + WORKER_BASE
}

/// How the job of layer `layer` is split under `policy` (module docs), if
/// it is: solving jobs only, `--ranks` above `policy.above` positions, or
/// `--task-memory` when the whole job is over it.
///
/// # Errors
/// When a rank cannot fit `task_memory` however many ranks (its child
/// layers alone are too large), naming the layer and the bytes.
pub fn split<S: EngineGame>(job: &JobSpec, policy: &SplitPolicy) -> Result<Option<Split>> {
    let Ok((p, name, task)) = job_params(job) else {
        return Ok(None);
    };
    let game = game_of::<S>(&job.name, &p)?;
    let Some(l) = layer_id(&game, &name) else {
        return Ok(None);
    };
    let whole = match task {
        Task::Solve => resources::<S>(&game, l),
        _ => Resources {
            memory: job.memory,
            threads: job.threads,
            shard_bytes: job.shard_bytes,
            cpu_seconds: job.cpu_seconds as f64,
        },
    };
    let size = game.layer_size(l);
    let value_bytes = size * if game.wide_values(l) { 2 } else { 1 };
    let rank_memory = |n: u32| match task {
        Task::Solve => rank_memory::<S>(&game, l, n),
        Task::Reach => reach_rank_memory(size, n),
        // Its part of the values, the source mapped.
        Task::Image => value_bytes.div_ceil(u64::from(n)) + WORKER_BASE,
    };
    let ranks = match (policy.ranks, policy.task_memory) {
        (Some(n), _) if game.layer_size(l) >= policy.above => n,
        (_, Some(t)) if whole.memory > t => {
            let Some(n) = (2..=MAX_RANKS).find(|&n| rank_memory(n) <= t) else {
                return Err(Error::job(
                    &job.name,
                    format!(
                        "no split brings a rank within {}: even {MAX_RANKS} ranks need {} each",
                        fmt_bytes(t),
                        fmt_bytes(rank_memory(MAX_RANKS))
                    ),
                ));
            };
            n
        }
        _ => return Ok(None),
    };
    Ok(Some(Split {
        ranks,
        memory: rank_memory(ranks),
        cpu_seconds: (whole.cpu_seconds * SPLIT_CPU_FACTOR).round() as u64,
    }))
}

/// The solved child layers of layer `l`, mapped from decompressed copies
/// of their shards' values ([`ShardSource::mapped`]): the ranks of a node
/// share their pages instead of each holding them.
///
/// # Errors
/// A missing or damaged shard, or one holding another layer.
fn map_children<G: LayeredGame>(
    job: &JobSpec,
    game: &G,
    l: usize,
    inputs: &dyn ShardSource,
) -> Result<Vec<(usize, SectionBytes)>> {
    let mut below = Vec::new();
    for c in game.child_layers(l) {
        let cname = game.layer_name(c);
        let name = layer_job(&cname);
        let f = inputs.open(&name)?;
        let meta = crate::pipeline::kind::read_section(inputs, &name, &f, "meta")?;
        let meta = LayerInfo::decode(&meta).map_err(|e| Error::job(&job.name, e))?;
        if meta.layer != cname {
            return Err(Error::job(
                &job.name,
                format!("input {name} holds layer {}", meta.layer),
            ));
        }
        below.push((c, inputs.mapped(&name, "values")?));
    }
    Ok(below)
}

/// The engine's [`Exchange`] over the pipeline's [`Ranks`].
struct Over<'a>(&'a mut dyn Ranks);

impl Exchange for Over<'_> {
    fn rank(&self) -> usize {
        self.0.rank()
    }
    fn ranks(&self) -> usize {
        self.0.ranks()
    }
    fn exchange(&mut self, out: Vec<Vec<u64>>) -> std::result::Result<Vec<Vec<u64>>, String> {
        self.0.exchange(out)
    }
    fn max_all(&mut self, x: &[u64]) -> std::result::Result<Vec<u64>, String> {
        self.0.max_all(x)
    }
}

/// The engine's [`Checkpoints`] over the pipeline's [`RankStore`].
struct Saved<'a>(&'a mut dyn RankStore);

impl Checkpoints for Saved<'_> {
    fn round(&mut self, round: u32) {
        self.0.round(round);
    }
    fn due(&mut self) -> bool {
        self.0.due()
    }
    fn save(&mut self, wide: bool, round: u32, parts: &[&[u8]]) -> std::result::Result<(), String> {
        self.0.save(wide, round, parts)
    }
    fn saved(&self, wide: bool) -> Vec<u32> {
        self.0.saved(wide)
    }
    fn load(
        &mut self,
        wide: bool,
        round: u32,
        into: &mut [&mut [u8]],
    ) -> std::result::Result<(), String> {
        self.0.load(wide, round, into)
    }
    fn keep_from(&mut self, round: u32) {
        self.0.keep_from(round);
    }
    fn discard(&mut self, why: &str) {
        self.0.discard(why);
    }
}

/// Bytes of a part sent to rank 0 in one exchange while gathering.
const GATHER_BYTES: usize = 16 << 20;

/// One rank's run of a split layer job (module docs): rank 0 writes the
/// `values` and `meta` sections to `out`.
///
/// # Errors
/// As an unsplit job's, the engine's split errors, and the transport's.
pub fn run_rank<S: EngineGame>(
    job: &JobSpec,
    inputs: &dyn ShardSource,
    ranks: &mut dyn Ranks,
    store: &mut dyn RankStore,
    out: &mut dyn SectionSink,
) -> Result<()> {
    let (p, name, task) = job_params(job)?;
    let game = game_of::<S>(&job.name, &p)?;
    let l =
        layer_id(&game, &name).ok_or_else(|| Error::job(&job.name, format!("no layer {name}")))?;
    match task {
        Task::Solve => {}
        Task::Reach => return reach_rank::<S>(job, &game, l, inputs, ranks, out),
        Task::Image => {
            // This rank's part, copied from the source layer through the
            // image (the source mapped, not held).
            let src = game
                .image_layer(l)
                .ok_or_else(|| Error::job(&job.name, "the layer is not an image layer"))?;
            let from = inputs.mapped(&layer_job(&game.layer_name(src)), "values")?;
            let bounds = part_bounds(game.layer_size(l), ranks.ranks());
            let me = ranks.rank();
            let threads = crate::pipeline::worker_threads();
            let part = image_range(&game, l, &from, bounds[me], bounds[me + 1], threads);
            drop(from);
            return gather_layer(job, &game, l, name, &part, ranks, out);
        }
    }
    let below = map_children(job, &game, l, inputs)?;
    let below_ref: Vec<(usize, &[u8])> = below.iter().map(|(c, v)| (*c, &v[..])).collect();
    let threads = crate::pipeline::worker_threads();
    let (me, n) = (ranks.rank(), ranks.ranks());
    let part = solve_part(
        &game,
        l,
        &below_ref,
        threads,
        &mut Over(&mut *ranks),
        &mut Saved(store),
    )
    .map_err(|e| Error::job(&job.name, format!("rank {me} of {n}: {e}")))?;
    drop(below_ref);
    drop(below);
    gather_layer(job, &game, l, name, &part, ranks, out)
}

/// Gathers the parts of layer `l`'s values on rank 0, which writes the
/// `values` and `meta` sections an unsplit job writes (`part` is this
/// rank's part, in the layer's width).
///
/// # Errors
/// The transport's errors, a part of the wrong length, the sink's errors.
fn gather_layer<G: LayeredGame>(
    job: &JobSpec,
    game: &G,
    l: usize,
    name: String,
    part: &[u8],
    ranks: &mut dyn Ranks,
    out: &mut dyn SectionSink,
) -> Result<()> {
    let (me, n) = (ranks.rank(), ranks.ranks());
    let net = |e: String| Error::job(&job.name, format!("rank {me} of {n}: {e}"));
    let bounds = part_bounds(game.layer_size(l), n);
    let own = bounds[me + 1] - bounds[me];
    // The width every part has (an empty part does not show it).
    let width = (part.len() as u64).checked_div(own).unwrap_or(0);
    let width = ranks.max_all(&[width]).map_err(net)?[0].max(1);
    // Rank 0 counts every part as it writes it.
    let mut stats = if me == 0 && own > 0 {
        LayerStats::of_layer(part, own)
    } else {
        LayerStats::default()
    };
    if me == 0 {
        out.begin_section("values")?;
        out.write(part)?;
    }
    for k in 1..n {
        let bytes = (bounds[k + 1] - bounds[k]) * width;
        let mut at = 0u64;
        let mut from_me = if me == k { Some(part) } else { None };
        while at < bytes {
            let step = (bytes - at).min(GATHER_BYTES as u64) as usize;
            let mut msg = vec![Vec::new(); n];
            if let Some(mine) = from_me.as_mut() {
                let (head, rest) = mine.split_at(step);
                msg[0] = head
                    .chunks(8)
                    .map(|c| {
                        let mut w = [0u8; 8];
                        w[..c.len()].copy_from_slice(c);
                        u64::from_le_bytes(w)
                    })
                    .collect();
                *mine = rest;
            }
            let got = ranks.exchange(msg).map_err(net)?;
            if me == 0 {
                let chunk: Vec<u8> = got[k]
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .take(step)
                    .collect();
                if chunk.len() != step {
                    return Err(net(format!(
                        "rank {k} sent {} bytes of its part, not {step}",
                        chunk.len()
                    )));
                }
                stats.add(&LayerStats::of_layer(&chunk, step as u64 / width));
                out.write(&chunk)?;
            }
            at += step as u64;
        }
    }
    if me == 0 {
        let meta = LayerInfo {
            layer: name,
            positions: game.layer_size(l),
            wins: stats.wins,
            losses: stats.losses,
            draws: stats.draws,
            max_win_depth: stats.max_win_depth,
            max_loss_depth: stats.max_loss_depth,
            wide: width == 2,
        };
        out.begin_section("meta")?;
        out.write(&meta.encode().map_err(|e| Error::job(&job.name, e))?)?;
    }
    Ok(())
}

/// One rank of a split reachability job: its part of the bits
/// ([`crate::solvers::engine::reach::reach_part`]) and its counts of the
/// values there; rank 0 gathers both and writes the shard an unsplit job
/// writes.
fn reach_rank<S: EngineGame>(
    job: &JobSpec,
    game: &S::Game,
    l: usize,
    inputs: &dyn ShardSource,
    ranks: &mut dyn Ranks,
    out: &mut dyn SectionSink,
) -> Result<()> {
    use crate::solvers::engine::{Value, is_wide, reach, value_at};
    let name = game.layer_name(l);
    let (me, n) = (ranks.rank(), ranks.ranks());
    let net = |e: String| Error::job(&job.name, format!("rank {me} of {n}: {e}"));
    let mut parents = Vec::new();
    for inp in &job.inputs {
        let Some(pname) = inp.strip_prefix("reach-") else {
            continue;
        };
        let pl = layer_id(game, pname)
            .ok_or_else(|| Error::job(&job.name, format!("input {inp} names no layer")))?;
        let bytes = inputs.mapped(inp, "reachable")?;
        if bytes.len() as u64 != game.layer_size(pl).div_ceil(64) * 8 {
            return Err(Error::job(inp, "reachable bits of the wrong length"));
        }
        parents.push((pl, bytes));
    }
    // The mapped bytes as words (a map is page-aligned; a copy otherwise).
    let words: Vec<(usize, std::borrow::Cow<[u64]>)> = parents
        .iter()
        .map(|(pl, b)| {
            // SAFETY: every bit pattern is a u64.
            let (head, w, tail) = unsafe { b.align_to::<u64>() };
            let w = if head.is_empty() && tail.is_empty() && cfg!(target_endian = "little") {
                std::borrow::Cow::Borrowed(w)
            } else {
                std::borrow::Cow::Owned(
                    b.chunks_exact(8)
                        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                        .collect(),
                )
            };
            (*pl, w)
        })
        .collect();
    let ins: Vec<(usize, &[u64])> = words.iter().map(|(p, w)| (*p, &w[..])).collect();
    let start = S::start(game).map(|s| S::position(&s));
    let threads = crate::pipeline::worker_threads();
    let bits =
        reach::reach_part(game, l, &ins, start, threads, &mut Over(&mut *ranks)).map_err(net)?;
    drop(ins);
    drop(words);
    drop(parents);
    let values = inputs.mapped(&layer_job(&name), "values")?;
    let size = game.layer_size(l);
    let wide = is_wide(&values, size)
        .ok_or_else(|| Error::job(layer_job(&name), "values of the wrong length"))?;
    let bounds = part_bounds(size, n);
    let base = bounds[me];
    let mut counts = [0u64; 4];
    for (i, word) in bits.iter().enumerate() {
        let mut m = *word;
        while m != 0 {
            let r = base + i as u64 * 64 + u64::from(m.trailing_zeros());
            m &= m - 1;
            counts[0] += 1;
            match value_at(&values, wide, r) {
                Some(Value::Win(_)) => counts[1] += 1,
                Some(Value::Loss(_)) => counts[2] += 1,
                _ => counts[3] += 1,
            }
        }
    }
    drop(values);
    // Rank 0 gathers the counts, then the bits, part by part.
    let mut msg = vec![Vec::new(); n];
    if me != 0 {
        msg[0] = counts.to_vec();
    }
    let got = ranks.exchange(msg).map_err(net)?;
    if me == 0 {
        for c in got.iter().skip(1) {
            for (a, b) in counts.iter_mut().zip(c) {
                *a += b;
            }
        }
        out.begin_section("reachable")?;
        out.write(
            &bits
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect::<Vec<u8>>(),
        )?;
    }
    let step = GATHER_BYTES / 8;
    for k in 1..n {
        let words = (bounds[k + 1] - bounds[k]).div_ceil(64) as usize;
        let mut at = 0;
        while at < words {
            let end = (at + step).min(words);
            let mut msg = vec![Vec::new(); n];
            if me == k {
                msg[0] = bits[at..end].to_vec();
            }
            let got = ranks.exchange(msg).map_err(net)?;
            if me == 0 {
                if got[k].len() != end - at {
                    return Err(net(format!(
                        "rank {k} sent {} words of its bits, not {}",
                        got[k].len(),
                        end - at
                    )));
                }
                out.write(
                    &got[k]
                        .iter()
                        .flat_map(|w| w.to_le_bytes())
                        .collect::<Vec<u8>>(),
                )?;
            }
            at = end;
        }
    }
    if me == 0 {
        let meta = super::layout::ReachMeta {
            layer: name,
            positions: size,
            reachable: counts[0],
            wins: counts[1],
            losses: counts[2],
            draws: counts[3],
        };
        out.begin_section("meta")?;
        out.write(&crate::pipeline::codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?)?;
    }
    Ok(())
}
