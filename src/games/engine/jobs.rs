//! What every engine job shares: its task and parameters, the game and
//! layer they name, and the estimates of its memory, threads, shard and CPU
//! (see [`super::kind`] for how they are used).

use super::spec::EngineGame;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::kind::JobSpec;
use crate::solvers::engine::{LayeredGame, child_bytes, working_bytes};

/// Memory of a worker before its job allocates (binary, allocator,
/// manifest), bytes.
pub const WORKER_BASE: u64 = 32 << 20;

/// What a job does: solve its layer, or find its reachable positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    Solve,
    /// Copy the values of the layer's image layer through the image
    /// ([`LayeredGame::image_layer`]).
    Image,
    Reach,
}

/// The run's parameters of a job (its own without `layer` and `task`), the
/// layer and the task (`solve` when the job names none).
pub fn job_params(job: &JobSpec) -> Result<(toml::Table, String, Task)> {
    let mut p = job.params.clone();
    let layer = match p.remove("layer") {
        Some(toml::Value::String(s)) => s,
        _ => return Err(Error::job(&job.name, "parameters: no `layer`")),
    };
    let task = match p.remove("task") {
        None => Task::Solve,
        Some(toml::Value::String(t)) if t == "reach" => Task::Reach,
        Some(toml::Value::String(t)) if t == "image" => Task::Image,
        Some(t) => {
            return Err(Error::job(
                &job.name,
                format!("parameters: unknown task {t} (only `reach`, `image`, or none to solve)"),
            ));
        }
    };
    Ok((p, layer, task))
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
    let bytes = size * if game.wide_values(layer) { 2 } else { 1 };
    let kids = child_bytes(game, layer);
    Resources {
        memory: working_bytes(game, layer) + kids + kids / 4 + bytes / 2 + WORKER_BASE,
        threads: if size < 1 << 20 {
            1
        } else {
            (size >> 24).clamp(2, 32) as u32
        },
        shard_bytes: bytes / 5 + 4096,
        cpu_seconds: size as f64 * S::NS_PER_POSITION * 1e-9,
    }
}

/// The estimate of image layer `layer`'s job: its value bytes and its
/// source layer's, a quarter of them for the source's compressed shard and
/// half for its own; one pass over its positions
/// ([`EngineGame::NS_PER_IMAGE_POSITION`]).
pub fn image_resources<S: EngineGame>(game: &S::Game, layer: usize) -> Resources {
    let size = game.layer_size(layer);
    let bytes = size * if game.wide_values(layer) { 2 } else { 1 };
    Resources {
        memory: 2 * bytes + bytes / 4 + bytes / 2 + WORKER_BASE,
        threads: if size < 1 << 20 { 1 } else { 2 },
        shard_bytes: bytes / 5 + 4096,
        cpu_seconds: size as f64 * S::NS_PER_IMAGE_POSITION * 1e-9,
    }
}

/// The estimate of layer `layer`'s reachability job: its value bytes (to
/// count), three bits per position, its parent layers' bits; one pass over
/// its positions and its parents' ([`EngineGame::NS_PER_REACH_POSITION`]).
pub fn reach_resources<S: EngineGame>(
    game: &S::Game,
    layer: usize,
    parents: &[usize],
) -> Resources {
    let size = game.layer_size(layer);
    let above: u64 = parents.iter().map(|&p| game.layer_size(p)).sum();
    Resources {
        memory: size + 3 * size.div_ceil(8) + above.div_ceil(8) + size / 8 + WORKER_BASE,
        threads: if size + above < 1 << 20 { 1 } else { 2 },
        shard_bytes: size / 16 + 4096,
        cpu_seconds: (size + above) as f64 * S::NS_PER_REACH_POSITION * 1e-9,
    }
}
