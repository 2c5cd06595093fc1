//! The `engine` job kind, generic over an [`EngineGame`]: one job per
//! layer, in an order where every layer follows the layers its moves reach,
//! each solved by the generic retrograde engine
//! ([`crate::solvers::engine::solve_layer`]) from the shards of those
//! layers.
//!
//! **Tables.** `KIND-VARIANT-layers.csv` (one row per solved layer:
//! positions, wins, losses, draws for the player to move, longest win and
//! loss in plies) and `KIND-VARIANT-summary.toml` (the totals and, when the
//! run solved the start's layer, the start position's value).
//!
//! **Estimates** (per job): memory = the engine's working bytes
//! ([`working_bytes`](crate::solvers::engine::working_bytes): a value cell of one byte, or two for a layer the
//! game names in [`LayeredGame::wide_values`], a counter byte and a pending
//! bit per position) + the child layers (one or two bytes per position) +
//! a quarter of them for decoding their shards + half the layer's value
//! bytes for the compressed shard + [`WORKER_BASE`]; CPU = positions ×
//! [`EngineGame::NS_PER_POSITION`]; shard = a fifth of the value bytes.
//! A layer solved with one-byte cells that turns out deeper than 119 plies
//! is solved again with two, needing one byte per position more than
//! planned.

use std::marker::PhantomData;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::layout::{
    LayerInfo, LayerRow, ReachMeta, layer_job, layers_csv, parse_layers_csv, reach_job,
};
use super::spec::{EngineGame, RunFacts};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::error_at_key;
use crate::pipeline::kind::{
    Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile, read_section,
};
use crate::pipeline::kind::{Split, SplitPolicy};
use crate::pipeline::ranks::{RankStore, Ranks};
use crate::pipeline::shard::{Section, SectionSink, Shard};
use crate::solvers::engine::{
    LayerStats, LayeredGame, Value, image_values, is_wide, parent_layers, reach, solve_layer,
    solve_order, value_at,
};

/// The job kind of game `S` (a `const` value: `EngineKind::<S>::NEW`).
pub struct EngineKind<S>(PhantomData<fn() -> S>);

impl<S> EngineKind<S> {
    /// The kind.
    pub const NEW: EngineKind<S> = EngineKind(PhantomData);
}

pub use super::jobs::{
    Resources, WORKER_BASE, game_of, image_resources, layer_id, reach_resources, resources,
};
pub(super) use super::jobs::{Task, job_params};

/// The layers a run solves, in solving order.
pub fn planned_layers<S: EngineGame>(game: &S::Game, params: &toml::Table) -> Vec<usize> {
    solve_order(game)
        .into_iter()
        .filter(|&l| S::solves(game, params, l))
        .collect()
}

/// The layers of `layers` (in solving order) whose job's memory estimate
/// ([`resources`]) is at most `budget` bytes and whose child layers are all
/// kept: every layer of the selection that fits, closed under moves (a job
/// file's `job_memory`).
pub fn within_memory<S: EngineGame>(game: &S::Game, layers: &[usize], budget: u64) -> Vec<usize> {
    let mut kept = vec![false; game.layer_count()];
    let mut out = Vec::new();
    for &l in layers {
        if resources::<S>(game, l).memory <= budget && game.child_layers(l).iter().all(|&c| kept[c])
        {
            kept[l] = true;
            out.push(l);
        }
    }
    out
}

/// The layers `roots` and every layer their moves reach (child layers, and
/// the source of an image layer), as a flag per layer (a job file's
/// `layers`).
pub fn reached_from<G: LayeredGame>(game: &G, roots: &[usize]) -> Vec<bool> {
    let mut keep = vec![false; game.layer_count()];
    let mut todo = roots.to_vec();
    while let Some(l) = todo.pop() {
        if std::mem::replace(&mut keep[l], true) {
            continue;
        }
        todo.extend(game.child_layers(l));
        todo.extend(game.image_layer(l));
    }
    keep
}

impl<S: EngineGame> JobKind for EngineKind<S> {
    fn name(&self) -> &'static str {
        S::KIND
    }

    fn about(&self) -> &'static str {
        S::ABOUT
    }

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let mut file: toml::Table = toml::from_str(text).map_err(|e| Error::JobFile {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
            message: e.message().trim().to_string(),
        })?;
        file.remove("kind");
        // `job_memory` selects layers at planning time; it is not one of the
        // run's parameters, so the layers it keeps are the very jobs (same
        // ids, same shards) of a plan of the whole game.
        let budget = match file.remove("job_memory") {
            None => None,
            Some(toml::Value::String(t)) => Some(
                crate::pipeline::resources::parse_size(&t)
                    .map_err(|m| error_at_key(path, text, "job_memory", m))?,
            ),
            Some(_) => {
                return Err(error_at_key(
                    path,
                    text,
                    "job_memory",
                    "job_memory is a size in quotes, e.g. \"20G\"".to_string(),
                ));
            }
        };
        // `layers` also selects at planning time: these layers and every
        // layer their moves reach.
        let wanted = match file.remove("layers") {
            None => None,
            Some(toml::Value::Array(a)) if a.iter().all(toml::Value::is_str) => Some(
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect::<Vec<_>>(),
            ),
            Some(_) => {
                return Err(error_at_key(
                    path,
                    text,
                    "layers",
                    "layers is a list of layer names in quotes, e.g. [\"14-5\"]".to_string(),
                ));
            }
        };
        let params = S::params(&file).map_err(|(k, m)| error_at_key(path, text, &k, m))?;
        let game = S::game(&params).map_err(|m| error_at_key(path, text, "kind", m))?;
        let mut layers = planned_layers::<S>(&game, &params);
        if let Some(names) = wanted {
            let mut roots = Vec::new();
            for n in &names {
                let l = layer_id(&game, n)
                    .filter(|l| layers.contains(l))
                    .ok_or_else(|| {
                        error_at_key(
                            path,
                            text,
                            "layers",
                            format!("no layer {n} among the layers this job file solves"),
                        )
                    })?;
                roots.push(l);
            }
            let keep = reached_from(&game, &roots);
            layers.retain(|&l| keep[l]);
        }
        if let Some(b) = budget {
            let least = layers
                .iter()
                .map(|&l| resources::<S>(&game, l).memory)
                .min()
                .unwrap_or(0);
            layers = within_memory::<S>(&game, &layers, b);
            if layers.is_empty() {
                return Err(error_at_key(
                    path,
                    text,
                    "job_memory",
                    format!(
                        "no layer's job fits job_memory = {}: the smallest needs {}",
                        crate::pipeline::resources::fmt_bytes(b),
                        crate::pipeline::resources::fmt_bytes(least)
                    ),
                ));
            }
        }
        let mut jobs = Vec::new();
        for &l in &layers {
            let name = game.layer_name(l);
            // An image layer whose source the run solves copies its values.
            if let Some(src) = game.image_layer(l).filter(|s| layers.contains(s)) {
                let mut p = params.clone();
                p.insert("layer".into(), name.clone().into());
                p.insert("task".into(), "image".into());
                let r = image_resources::<S>(&game, l);
                let input = layer_job(&game.layer_name(src));
                jobs.push(
                    JobSpec::new(
                        layer_job(&name),
                        p,
                        vec![input],
                        (r.cpu_seconds * 1e9) as u64,
                    )
                    .with_memory(r.memory)
                    .with_threads(r.threads)
                    .with_shard_bytes(r.shard_bytes)
                    .with_cpu_seconds(r.cpu_seconds.round() as u64),
                );
                continue;
            }
            let mut inputs = Vec::new();
            for c in game.child_layers(l) {
                if !layers.contains(&c) {
                    return Err(error_at_key(
                        path,
                        text,
                        "kind",
                        format!(
                            "layer {name} is selected but its child layer {} is not",
                            game.layer_name(c)
                        ),
                    ));
                }
                inputs.push(layer_job(&game.layer_name(c)));
            }
            let mut p = params.clone();
            p.insert("layer".into(), name.clone().into());
            let r = resources::<S>(&game, l);
            jobs.push(
                JobSpec::new(layer_job(&name), p, inputs, (r.cpu_seconds * 1e9) as u64)
                    .with_memory(r.memory)
                    .with_threads(r.threads)
                    .with_shard_bytes(r.shard_bytes)
                    .with_cpu_seconds(r.cpu_seconds.round() as u64),
            );
        }
        // Reachability from the start, when the run solves the start's
        // layer (and so every layer play can reach): parents first.
        if let Some(start) = S::start(&game) {
            let (sl, _) = game.rank(&S::position(&start));
            if layers.contains(&sl) {
                let parents = parent_layers(&game);
                for &l in layers.iter().rev() {
                    let name = game.layer_name(l);
                    let ps: Vec<usize> = parents[l]
                        .iter()
                        .copied()
                        .filter(|p| layers.contains(p))
                        .collect();
                    let mut inputs = vec![layer_job(&name)];
                    inputs.extend(ps.iter().map(|&p| reach_job(&game.layer_name(p))));
                    let mut p = params.clone();
                    p.insert("layer".into(), name.clone().into());
                    p.insert("task".into(), "reach".into());
                    let r = reach_resources::<S>(&game, l, &ps);
                    jobs.push(
                        JobSpec::new(reach_job(&name), p, inputs, (r.cpu_seconds * 1e9) as u64)
                            .with_memory(r.memory)
                            .with_threads(r.threads)
                            .with_shard_bytes(r.shard_bytes)
                            .with_cpu_seconds(r.cpu_seconds.round() as u64),
                    );
                }
            }
        }
        Ok((params, jobs))
    }

    /// Level 1, as Dodgem's layers: value bytes compress well and fast.
    fn zstd_level(&self) -> i32 {
        1
    }

    fn max_raw_bytes(&self, job: &JobSpec) -> u64 {
        job_params(job)
            .ok()
            .and_then(|(p, name, _)| {
                let g = S::game(&p).ok()?;
                // Two bytes per position at most.
                layer_id(&g, &name).map(|l| 2 * g.layer_size(l) + (1 << 20))
            })
            .unwrap_or(crate::pipeline::shard::MAX_BODY)
    }

    fn check_shard(&self, job: &JobSpec, shard: &Shard) -> Result<()> {
        let (p, name, task) = job_params(job)?;
        let game = game_of::<S>(&job.name, &p)?;
        let l = layer_id(&game, &name)
            .ok_or_else(|| Error::job(&job.name, format!("no layer {name}")))?;
        if task == Task::Reach {
            let meta: ReachMeta = shard.meta()?;
            let size = game.layer_size(l);
            let len = shard.section("reachable")?.len() as u64;
            if meta.layer != name || meta.positions != size || len != size.div_ceil(64) * 8 {
                return Err(Error::job(
                    &job.name,
                    format!(
                        "shard holds the reachable bits of layer {} ({} positions, {len} bytes); the job wants layer {name} with {size}",
                        meta.layer, meta.positions
                    ),
                ));
            }
            return Ok(());
        }
        let meta =
            LayerInfo::decode(shard.section("meta")?).map_err(|e| Error::job(&job.name, e))?;
        let size = game.layer_size(l);
        let len = shard.section("values")?.len() as u64;
        if meta.layer != name || meta.positions != size || len != size * meta.value_bytes() {
            return Err(Error::job(
                &job.name,
                format!(
                    "shard holds layer {} with {} positions and {len} value bytes ({} a position); the job wants layer {name} with {size}",
                    meta.layer,
                    meta.positions,
                    meta.value_bytes()
                ),
            ));
        }
        Ok(())
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (p, name, task) = job_params(job)?;
        let game = game_of::<S>(&job.name, &p)?;
        let l = layer_id(&game, &name)
            .ok_or_else(|| Error::job(&job.name, format!("no layer {name}")))?;
        if task == Task::Reach {
            return run_reach::<S>(job, &game, l, inputs);
        }
        if task == Task::Image {
            return run_image::<S>(job, &game, l, inputs);
        }
        let below = load_children(job, &game, l, inputs)?;
        let below: Vec<(usize, &[u8])> = below.iter().map(|(c, v)| (*c, v.as_slice())).collect();
        let threads = if game.layer_size(l) < 1 << 20 {
            1
        } else {
            crate::pipeline::worker_threads()
        };
        let values = solve_layer(&game, l, &below, threads)
            .map_err(|e| Error::job(&job.name, e.to_string()))?;
        drop(below);
        layer_sections(job, &game, l, values)
    }

    fn split(&self, job: &JobSpec, policy: &SplitPolicy) -> Result<Option<Split>> {
        super::split::split::<S>(job, policy)
    }

    fn run_rank(
        &self,
        job: &JobSpec,
        inputs: &dyn ShardSource,
        ranks: &mut dyn Ranks,
        store: &mut dyn RankStore,
        out: &mut dyn SectionSink,
    ) -> Result<()> {
        super::split::run_rank::<S>(job, inputs, ranks, store, out)
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let s = summarize::<S>(run)?;
        let v = S::variant(run.params());
        Ok(vec![
            TableFile {
                name: format!("{}-{v}-summary.toml", S::KIND),
                bytes: toml::to_string(&s)
                    .map_err(|e| Error::job(S::KIND, e.to_string()))?
                    .into_bytes(),
            },
            TableFile {
                name: format!("{}-{v}-layers.csv", S::KIND),
                bytes: layers_csv(&s.layers).into_bytes(),
            },
        ])
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let want = summarize::<S>(run)?;
        let v = S::variant(run.params());
        let mut problems = Vec::new();
        let got = read_summary::<S>(run)?;
        if got != want {
            problems.push(format!(
                "{}-{v}-summary.toml differs from what the shards give",
                S::KIND
            ));
        }
        let csv = String::from_utf8(run.table(&format!("{}-{v}-layers.csv", S::KIND))?)
            .unwrap_or_default();
        if csv != layers_csv(&want.layers) {
            problems.push(format!(
                "{}-{v}-layers.csv differs from the shards' counts",
                S::KIND
            ));
        }
        for r in &want.layers {
            if r.wins + r.losses + r.draws != r.positions {
                problems.push(format!(
                    "layer {}: {} wins + {} losses + {} draws ≠ {} positions",
                    r.layer, r.wins, r.losses, r.draws, r.positions
                ));
            }
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let s = read_summary::<S>(run)?;
        let game = game_of::<S>(S::KIND, run.params())?;
        let values = super::values::RunValues::new(&game, run);
        let claims = S::claims(run.params(), &s.facts(), &values)?;
        // A value the claims could not read would show as a mismatch with
        // the published one: refuse them instead, naming the shard.
        if let Some(e) = values.errors().into_iter().next() {
            return Err(Error::job(
                S::KIND,
                format!("the claims read a shard that is damaged or missing: {e}"),
            ));
        }
        Ok(claims)
    }

    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        let s = read_summary::<S>(run)?;
        let v = S::variant(run.params());
        let title = format!(
            "{} {v}: the player to move wins, loses or draws, by layer",
            S::TITLE
        );
        let chart = super::picture::layers_chart(title.clone(), &s.layers);
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            &format!("{}-{v}-layers", S::KIND),
            &title,
            &chart,
        ))?])
    }
}

/// `KIND-VARIANT-summary.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The game (`quixo`).
    pub game: String,
    /// The board (`4`).
    pub variant: String,
    /// Layers solved.
    pub layers_solved: u64,
    /// Layers of the whole game.
    pub layers_in_game: u64,
    /// Positions solved.
    pub positions: u64,
    /// Won for the player to move.
    pub wins: u64,
    /// Lost for the player to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Longest win, plies.
    pub max_win_depth: u16,
    /// Longest loss, plies.
    pub max_loss_depth: u16,
    /// The start position in the game's notation (when its layer was
    /// solved).
    pub start: Option<String>,
    /// Its value (`win in 21`, `draw`).
    pub start_value: Option<String>,
    /// Positions reachable from the start, and of those won, lost and
    /// drawn for the player to move (runs with reachability jobs).
    pub reachable: Option<[u64; 4]>,
    /// The rows of the per-layer table.
    #[serde(skip)]
    pub layers: Vec<LayerRow>,
}

impl Summary {
    fn facts(&self) -> RunFacts {
        RunFacts {
            layers: self.layers.clone(),
            start: self.start_value.clone(),
        }
    }
}

/// The summary and the per-layer rows as merged (from the tables).
fn read_summary<S: EngineGame>(run: &dyn RunAccess) -> Result<Summary> {
    let v = S::variant(run.params());
    let name = format!("{}-{v}-summary.toml", S::KIND);
    let text = String::from_utf8(run.table(&name)?).unwrap_or_default();
    let mut s: Summary = toml::from_str(&text)
        .map_err(|e| Error::job(S::KIND, format!("{name}: {}", e.message())))?;
    let csv_name = format!("{}-{v}-layers.csv", S::KIND);
    let csv = String::from_utf8(run.table(&csv_name)?).unwrap_or_default();
    s.layers =
        parse_layers_csv(&csv).map_err(|e| Error::job(S::KIND, format!("{csv_name}: {e}")))?;
    Ok(s)
}

/// The summary from the shards (their `meta` sections and, for the
/// start's value, one byte of its layer).
fn summarize<S: EngineGame>(run: &dyn RunAccess) -> Result<Summary> {
    let params = run.params();
    let game = game_of::<S>(S::KIND, params)?;
    let mut s = Summary {
        game: S::KIND.to_string(),
        variant: S::variant(params),
        layers_in_game: game.layer_count() as u64,
        ..Summary::default()
    };
    let mut solved = Vec::new();
    let mut reached: Vec<ReachMeta> = Vec::new();
    for job in run.jobs() {
        let (_, name, task) = job_params(job)?;
        let file = run.open(&job.name)?;
        if task == Task::Reach {
            let meta: ReachMeta = codec::decode(&read_section(run, &job.name, &file, "meta")?)
                .map_err(|e| Error::job(&job.name, e))?;
            reached.push(meta);
            continue;
        }
        let meta = LayerInfo::decode(&read_section(run, &job.name, &file, "meta")?)
            .map_err(|e| Error::job(&job.name, e))?;
        if meta.layer != name {
            return Err(Error::job(
                &job.name,
                format!("shard holds layer {}", meta.layer),
            ));
        }
        s.positions += meta.positions;
        s.wins += meta.wins;
        s.losses += meta.losses;
        s.draws += meta.draws;
        s.max_win_depth = s.max_win_depth.max(meta.max_win_depth);
        s.max_loss_depth = s.max_loss_depth.max(meta.max_loss_depth);
        solved.push((name, meta.wide));
        s.layers.push(LayerRow {
            layer: meta.layer,
            positions: meta.positions,
            wins: meta.wins,
            losses: meta.losses,
            draws: meta.draws,
            max_win_depth: meta.max_win_depth,
            max_loss_depth: meta.max_loss_depth,
            reach: None,
        });
    }
    s.layers_solved = s.layers.len() as u64;
    for m in reached {
        let row = s
            .layers
            .iter_mut()
            .find(|r| r.layer == m.layer)
            .ok_or_else(|| Error::job(reach_job(&m.layer), "reaches a layer not solved"))?;
        row.reach = Some([m.reachable, m.wins, m.losses, m.draws]);
        let t = s.reachable.get_or_insert([0; 4]);
        for (x, y) in t.iter_mut().zip([m.reachable, m.wins, m.losses, m.draws]) {
            *x += y;
        }
    }
    if let Some(start) = S::start(&game) {
        let (l, r) = game.rank(&S::position(&start));
        let lname = game.layer_name(l);
        if let Some(&(_, wide)) = solved.iter().find(|(n, _)| *n == lname) {
            let job = layer_job(&lname);
            let w = if wide { 2 } else { 1 };
            let bytes = run
                .open(&job)?
                .read_range("values", r * w, w)
                // A whole-shard read names the shard and what is wrong.
                .map_err(|e| run.load(&job).err().unwrap_or_else(|| Error::job(&job, e)))?;
            let v = value_at(&bytes, wide, 0)
                .ok_or_else(|| Error::job(&job, format!("bytes {bytes:?} are not a value")))?;
            s.start = Some(S::show(&game, &start));
            s.start_value = Some(v.to_string());
        }
    }
    Ok(s)
}

/// Runs a `reach-NAME` job: the reachable bits of layer `l` from its parent
/// layers' bits and the start, counted against the layer's values.
fn run_reach<S: EngineGame>(
    job: &JobSpec,
    game: &S::Game,
    l: usize,
    inputs: &dyn ShardSource,
) -> Result<Vec<Section>> {
    let name = game.layer_name(l);
    let values = {
        let shard = inputs.load(&layer_job(&name))?;
        shard
            .sections
            .into_iter()
            .find(|s| s.name == "values")
            .map(|s| s.bytes)
            .ok_or_else(|| Error::job(layer_job(&name), "shard has no values"))?
    };
    let mut parents = Vec::new();
    for inp in &job.inputs {
        let Some(pname) = inp.strip_prefix("reach-") else {
            continue;
        };
        let pl = layer_id(game, pname)
            .ok_or_else(|| Error::job(&job.name, format!("input {inp} names no layer")))?;
        let shard = inputs.load(inp)?;
        let bytes = shard.section("reachable")?;
        let words = crate::pipeline::fullcheck::le_u64s(bytes)
            .filter(|w| w.len() as u64 == game.layer_size(pl).div_ceil(64))
            .ok_or_else(|| Error::job(inp, "reachable bits of the wrong length"))?;
        parents.push((pl, words));
    }
    let wide = is_wide(&values, game.layer_size(l))
        .ok_or_else(|| Error::job(layer_job(&name), "values of the wrong length"))?;
    let ins: Vec<(usize, &[u64])> = parents.iter().map(|(p, w)| (*p, w.as_slice())).collect();
    let threads = if game.layer_size(l) < 1 << 20 {
        1
    } else {
        crate::pipeline::worker_threads()
    };
    let start = S::start(game).map(|s| S::position(&s));
    let bits = reach::reach_layer(game, l, &ins, start, threads);
    drop(parents);
    let (mut w, mut lo, mut d) = (0, 0, 0);
    for (i, word) in bits.iter().enumerate() {
        let mut m = *word;
        while m != 0 {
            let r = i * 64 + m.trailing_zeros() as usize;
            m &= m - 1;
            match value_at(&values, wide, r as u64) {
                Some(Value::Win(_)) => w += 1,
                Some(Value::Loss(_)) => lo += 1,
                _ => d += 1,
            }
        }
    }
    let meta = ReachMeta {
        layer: name,
        positions: game.layer_size(l),
        reachable: reach::count(&bits),
        wins: w,
        losses: lo,
        draws: d,
    };
    let meta = codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?;
    let bytes: Vec<u8> = bits.iter().flat_map(|x| x.to_le_bytes()).collect();
    Ok(vec![
        Section::new("reachable", bytes),
        Section::new("meta", meta),
    ])
}

/// An image layer's job: the values of its source layer's shard, copied
/// through the image ([`image_values`]); the same sections as a solving
/// job's.
fn run_image<S: EngineGame>(
    job: &JobSpec,
    game: &S::Game,
    l: usize,
    inputs: &dyn ShardSource,
) -> Result<Vec<Section>> {
    let src = game
        .image_layer(l)
        .ok_or_else(|| Error::job(&job.name, "the layer is not an image layer"))?;
    let sname = game.layer_name(src);
    let shard = inputs.load(&layer_job(&sname))?;
    let meta = LayerInfo::decode(shard.section("meta")?).map_err(|e| Error::job(&job.name, e))?;
    if meta.layer != sname {
        return Err(Error::job(
            &job.name,
            format!("input {} holds layer {}", layer_job(&sname), meta.layer),
        ));
    }
    let from = shard.section("values")?;
    if from.len() as u64 != game.layer_size(src) * meta.value_bytes() {
        return Err(Error::job(
            &job.name,
            format!(
                "input {} holds {} value bytes for {} positions",
                layer_job(&sname),
                from.len(),
                game.layer_size(src)
            ),
        ));
    }
    let threads = if game.layer_size(l) < 1 << 20 {
        1
    } else {
        crate::pipeline::worker_threads()
    };
    let values = image_values(game, l, from, threads);
    layer_sections(job, game, l, values)
}

/// The solved child layers of layer `l` from their jobs' shards: `(layer
/// id, value bytes)`, each checked to hold its layer.
///
/// # Errors
/// A missing or damaged shard, or one holding another layer.
pub(super) fn load_children<G: LayeredGame>(
    job: &JobSpec,
    game: &G,
    l: usize,
    inputs: &dyn ShardSource,
) -> Result<Vec<(usize, Vec<u8>)>> {
    let mut below = Vec::new();
    for c in game.child_layers(l) {
        let cname = game.layer_name(c);
        let shard = inputs.load(&layer_job(&cname))?;
        let meta =
            LayerInfo::decode(shard.section("meta")?).map_err(|e| Error::job(&job.name, e))?;
        if meta.layer != cname {
            return Err(Error::job(
                &job.name,
                format!("input {} holds layer {}", layer_job(&cname), meta.layer),
            ));
        }
        let values = shard
            .sections
            .into_iter()
            .find(|s| s.name == "values")
            .map(|s| s.bytes)
            .ok_or_else(|| Error::job(layer_job(&cname), "shard has no values"))?;
        below.push((c, values));
    }
    Ok(below)
}

/// The `values` and `meta` sections of layer `l`'s shard from its value
/// bytes.
fn layer_sections<G: LayeredGame>(
    job: &JobSpec,
    game: &G,
    l: usize,
    values: Vec<u8>,
) -> Result<Vec<Section>> {
    let name = game.layer_name(l);
    let size = game.layer_size(l);
    let s = LayerStats::of_layer(&values, size);
    let meta = LayerInfo {
        layer: name,
        positions: s.positions,
        wins: s.wins,
        losses: s.losses,
        draws: s.draws,
        max_win_depth: s.max_win_depth,
        max_loss_depth: s.max_loss_depth,
        wide: is_wide(&values, size) == Some(true),
    };
    let meta = meta.encode().map_err(|e| Error::job(&job.name, e))?;
    Ok(vec![
        Section::new("values", values),
        Section::new("meta", meta),
    ])
}
