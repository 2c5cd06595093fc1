//! The solved values of a run of an engine game, read layer by layer as a
//! game's claims ask for them ([`RunValues`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::layout::layer_job;
use crate::pipeline::kind::RunAccess;
use crate::solvers::engine::rules::LayeredGame;
use crate::solvers::engine::value::{Value, value_at};

/// One layer's value bytes (one a position, or two when `wide`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerValues {
    /// The `values` section of the layer's shard.
    pub bytes: Vec<u8>,
    /// Two bytes a position.
    pub wide: bool,
}

impl LayerValues {
    /// The value of rank `r` (`None` past the end or for bytes that are
    /// no value).
    pub fn value(&self, r: u64) -> Option<Value> {
        value_at(&self.bytes, self.wide, r)
    }
}

/// The values of a run's layers, loaded from their shards when first asked
/// for and kept (a claim that reads every layer of a board holds them all:
/// 240 MB for Dodgem 5×5).
pub struct RunValues<'a, G: LayeredGame> {
    game: &'a G,
    run: &'a dyn RunAccess,
    layers: RefCell<BTreeMap<usize, Rc<LayerValues>>>,
    /// Every read that failed (a damaged or missing shard), in order.
    errors: RefCell<Vec<String>>,
}

impl<'a, G: LayeredGame> RunValues<'a, G> {
    /// The values of `run`, a run of `game`.
    pub fn new(game: &'a G, run: &'a dyn RunAccess) -> Self {
        RunValues {
            game,
            run,
            layers: RefCell::new(BTreeMap::new()),
            errors: RefCell::new(Vec::new()),
        }
    }

    /// The reads of layers the run solves that failed so far (a damaged or
    /// missing shard): claims computed after one may be wrong, so the kind
    /// refuses them. A layer the run does not solve is no such error.
    pub fn errors(&self) -> Vec<String> {
        self.errors.borrow().clone()
    }

    /// The game.
    pub fn game(&self) -> &G {
        self.game
    }

    /// Whether the run has a job solving `layer`.
    pub fn solves(&self, layer: usize) -> bool {
        let job = layer_job(&self.game.layer_name(layer));
        self.run.jobs().iter().any(|j| j.name == job)
    }

    /// The values of `layer`.
    ///
    /// # Errors
    /// The run does not solve the layer, or its shard is missing or
    /// damaged (the message names the job).
    pub fn layer(&self, layer: usize) -> Result<Rc<LayerValues>, String> {
        if let Some(v) = self.layers.borrow().get(&layer) {
            return Ok(v.clone());
        }
        if !self.solves(layer) {
            // Not a damaged shard: the claim is not covered by this run.
            let job = layer_job(&self.game.layer_name(layer));
            return Err(format!("the run has no job {job}"));
        }
        self.read(layer)
            .inspect_err(|e| self.errors.borrow_mut().push(e.clone()))
    }

    fn read(&self, layer: usize) -> Result<Rc<LayerValues>, String> {
        let job = layer_job(&self.game.layer_name(layer));
        let shard = self.run.load(&job).map_err(|e| e.to_string())?;
        let bytes = shard
            .sections
            .into_iter()
            .find(|s| s.name == "values")
            .ok_or_else(|| format!("{job}: no values section"))?
            .bytes;
        let size = self.game.layer_size(layer);
        let wide = bytes.len() as u64 == 2 * size && size > 0;
        if !wide && bytes.len() as u64 != size {
            return Err(format!(
                "{job}: {} value bytes for {size} positions",
                bytes.len()
            ));
        }
        let v = Rc::new(LayerValues { bytes, wide });
        self.layers.borrow_mut().insert(layer, v.clone());
        Ok(v)
    }

    /// The value of `p` for the player to move.
    ///
    /// # Errors
    /// As [`RunValues::layer`], or bytes that are no value.
    pub fn value(&self, p: &G::Position) -> Result<Value, String> {
        let (l, r) = self.game.rank(p);
        self.layer(l)?.value(r).ok_or_else(|| {
            format!(
                "{}: the bytes at rank {r} are not a value",
                layer_job(&self.game.layer_name(l))
            )
        })
    }
}
