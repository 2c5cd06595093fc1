//! The `engine` job kind, generic over an [`EngineGame`]: one job per
//! layer, in an order where every layer follows the layers its moves reach,
//! each solved by the generic retrograde engine
//! ([`crate::games::retrograde::solve_layer`]) from the shards of those
//! layers.
//!
//! **Tables.** `KIND-VARIANT-layers.csv` (one row per solved layer:
//! positions, wins, losses, draws for the player to move, longest win and
//! loss in plies) and `KIND-VARIANT-summary.toml` (the totals and, when the
//! run solved the start's layer, the start position's value).
//!
//! **Estimates** (per job): memory = the engine's working bytes
//! ([`working_bytes`]: value and counter byte and a pending bit per
//! position) + the child layers (one byte per position) + a quarter of them
//! for decoding their shards + half the layer for the compressed shard +
//! [`WORKER_BASE`]; CPU = positions × [`EngineGame::NS_PER_POSITION`];
//! shard = a fifth of the positions.

use std::marker::PhantomData;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::layout::{LayerMeta, LayerRow, layer_job, layers_csv, parse_layers_csv};
use super::spec::{EngineGame, LayerFacts, RunFacts};
use crate::games::retrograde::{
    LayerStats, LayeredGame, SolveError, Value, child_bytes, solve_layer, solve_order,
    working_bytes,
};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::error_at_key;
use crate::pipeline::kind::{Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
use crate::pipeline::shard::{Section, Shard};

/// The job kind of game `S` (a `const` value: `EngineKind::<S>::NEW`).
pub struct EngineKind<S>(PhantomData<fn() -> S>);

impl<S> EngineKind<S> {
    /// The kind.
    pub const NEW: EngineKind<S> = EngineKind(PhantomData);
}

/// Memory of a worker before its job allocates (binary, allocator,
/// manifest), bytes.
pub const WORKER_BASE: u64 = 32 << 20;

/// The run's parameters of a job (its own without `layer`), and the layer.
fn job_params(job: &JobSpec) -> Result<(toml::Table, String)> {
    let mut p = job.params.clone();
    let layer = match p.remove("layer") {
        Some(toml::Value::String(s)) => s,
        _ => return Err(Error::job(&job.name, "parameters: no `layer`")),
    };
    Ok((p, layer))
}

/// The game of a run's or job's parameters.
pub fn game_of<S: EngineGame>(name: &str, params: &toml::Table) -> Result<S::Game> {
    S::game(params).map_err(|e| Error::job(name, e))
}

/// The id of the layer called `name`.
pub fn layer_id<G: LayeredGame>(game: &G, name: &str) -> Option<usize> {
    (0..game.layer_count()).find(|&l| game.layer_name(l) == name)
}

/// What one layer job needs (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resources {
    /// Peak memory of the worker, bytes.
    pub memory: u64,
    /// Threads it can use.
    pub threads: u32,
    /// Shard bytes.
    pub shard_bytes: u64,
    /// Single-core CPU seconds.
    pub cpu_seconds: f64,
}

/// The estimate of layer `layer`'s job.
pub fn resources<S: EngineGame>(game: &S::Game, layer: usize) -> Resources {
    let size = game.layer_size(layer);
    let kids = child_bytes(game, layer);
    Resources {
        memory: working_bytes(game, layer) + kids + kids / 4 + size / 2 + WORKER_BASE,
        threads: if size < 1 << 20 {
            1
        } else {
            (size >> 24).clamp(2, 32) as u32
        },
        shard_bytes: size / 5 + 4096,
        cpu_seconds: size as f64 * S::NS_PER_POSITION * 1e-9,
    }
}

/// The layers a run solves, in solving order.
pub fn planned_layers<S: EngineGame>(game: &S::Game, params: &toml::Table) -> Vec<usize> {
    solve_order(game)
        .into_iter()
        .filter(|&l| S::solves(game, params, l))
        .collect()
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
        let params = S::params(&file).map_err(|(k, m)| error_at_key(path, text, &k, m))?;
        let game = S::game(&params).map_err(|m| error_at_key(path, text, "kind", m))?;
        let layers = planned_layers::<S>(&game, &params);
        let mut jobs = Vec::new();
        for &l in &layers {
            let name = game.layer_name(l);
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
        Ok((params, jobs))
    }

    /// Level 1, as Dodgem's layers: value bytes compress well and fast.
    fn zstd_level(&self) -> i32 {
        1
    }

    fn max_raw_bytes(&self, job: &JobSpec) -> u64 {
        job_params(job)
            .ok()
            .and_then(|(p, name)| {
                let g = S::game(&p).ok()?;
                layer_id(&g, &name).map(|l| g.layer_size(l) + (1 << 20))
            })
            .unwrap_or(crate::pipeline::shard::MAX_BODY)
    }

    fn check_shard(&self, job: &JobSpec, shard: &Shard) -> Result<()> {
        let (p, name) = job_params(job)?;
        let game = game_of::<S>(&job.name, &p)?;
        let l = layer_id(&game, &name)
            .ok_or_else(|| Error::job(&job.name, format!("no layer {name}")))?;
        let meta: LayerMeta =
            codec::decode(shard.section("meta")?).map_err(|e| Error::job(&job.name, e))?;
        let size = game.layer_size(l);
        let len = shard.section("values")?.len() as u64;
        if meta.layer != name || meta.positions != size || len != size {
            return Err(Error::job(
                &job.name,
                format!(
                    "shard holds layer {} with {} positions and {len} value bytes; the job wants layer {name} with {size}",
                    meta.layer, meta.positions
                ),
            ));
        }
        Ok(())
    }

    fn run(&self, job: &JobSpec, inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (p, name) = job_params(job)?;
        let game = game_of::<S>(&job.name, &p)?;
        let l = layer_id(&game, &name)
            .ok_or_else(|| Error::job(&job.name, format!("no layer {name}")))?;
        let mut below = Vec::new();
        for c in game.child_layers(l) {
            let cname = game.layer_name(c);
            let shard = inputs.load(&layer_job(&cname))?;
            let meta: LayerMeta =
                codec::decode(shard.section("meta")?).map_err(|e| Error::job(&job.name, e))?;
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
        let below: Vec<(usize, &[u8])> = below.iter().map(|(c, v)| (*c, v.as_slice())).collect();
        let threads = if game.layer_size(l) < 1 << 20 {
            1
        } else {
            crate::pipeline::worker_threads()
        };
        let values = solve_layer(&game, l, &below, threads).map_err(|e| {
            let hint = match e {
                SolveError::DepthOverflow { .. } => {
                    ": this build stores one byte per position; a wider value encoding is needed"
                }
                _ => "",
            };
            Error::job(&job.name, format!("{e}{hint}"))
        })?;
        drop(below);
        let s = LayerStats::of(&values);
        let meta = LayerMeta {
            layer: name,
            positions: s.positions,
            wins: s.wins,
            losses: s.losses,
            draws: s.draws,
            max_win_depth: s.max_win_depth,
            max_loss_depth: s.max_loss_depth,
        };
        let meta = codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?;
        Ok(vec![
            Section::new("values", values),
            Section::new("meta", meta),
        ])
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
        Ok(S::claims(run.params(), &s.facts()))
    }

    fn plots(&self, run: &dyn RunAccess) -> Result<Vec<crate::plot::PlotFile>> {
        let s = read_summary::<S>(run)?;
        let v = S::variant(run.params());
        let chart = super::picture::LayersChart {
            title: format!(
                "{} {v}: the player to move wins, loses or draws, by layer",
                S::TITLE
            ),
            layers: s.layers,
        };
        Ok(vec![crate::pipeline::plots::drawn(crate::plot::render(
            &format!("{}-{v}-layers", S::KIND),
            &chart.title.clone(),
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
    pub max_win_depth: u8,
    /// Longest loss, plies.
    pub max_loss_depth: u8,
    /// The start position in the game's notation (when its layer was
    /// solved).
    pub start: Option<String>,
    /// Its value (`win in 21`, `draw`).
    pub start_value: Option<String>,
    /// The rows of the per-layer table.
    #[serde(skip)]
    pub layers: Vec<LayerRow>,
}

impl Summary {
    fn facts(&self) -> RunFacts {
        RunFacts {
            layers: self
                .layers
                .iter()
                .map(|r| LayerFacts {
                    layer: r.layer.clone(),
                    positions: r.positions,
                    wins: r.wins,
                    losses: r.losses,
                    draws: r.draws,
                    max_win_depth: r.max_win_depth,
                    max_loss_depth: r.max_loss_depth,
                })
                .collect(),
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
    for job in run.jobs() {
        let (_, name) = job_params(job)?;
        let file = run.open(&job.name)?;
        let meta: LayerMeta = codec::decode(
            &file
                .read_section("meta")
                .map_err(|e| Error::job(&job.name, e))?,
        )
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
        solved.push(name);
        s.layers.push(LayerRow {
            layer: meta.layer,
            positions: meta.positions,
            wins: meta.wins,
            losses: meta.losses,
            draws: meta.draws,
            max_win_depth: meta.max_win_depth,
            max_loss_depth: meta.max_loss_depth,
        });
    }
    s.layers_solved = s.layers.len() as u64;
    if let Some(start) = S::start(&game) {
        let (l, r) = game.rank(&S::position(&start));
        let lname = game.layer_name(l);
        if solved.contains(&lname) {
            let job = layer_job(&lname);
            let byte = run
                .open(&job)?
                .read_range("values", r, 1)
                .map_err(|e| Error::job(&job, e))?[0];
            let v = Value::from_byte(byte)
                .ok_or_else(|| Error::job(&job, format!("byte {byte} is not a value")))?;
            s.start = Some(S::show(&game, &start));
            s.start_value = Some(v.to_string());
        }
    }
    Ok(s)
}
