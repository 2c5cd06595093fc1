//! Probe of Dodgem positions: the value and depth of a position for the side
//! to move and of every legal move for the player making it, best first,
//! read from the layer shards of `dodgem` runs (or solved in memory for
//! n ≤ 4).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::games::dodgem::{Board, Layer, Position, Side, Tables, Value, from_desjardins};
use crate::kinds::dodgem::kind::{layer_job, move_rank, mover_value, solved_max_cars};
use crate::pipeline::RunView;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES, RunShards, SectionHandle};
use crate::pipeline::probe::{
    Params, Probe, ProbeError, ProbeResult, Work, flag, open_run_of_kind, param, required,
};

/// Largest board solved in memory when no run directory holds it (4×4
/// takes well under a second).
pub const IN_MEMORY_MAX_N: usize = 4;

/// A Dodgem probe request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DodgemRequest {
    /// Board size.
    pub n: usize,
    /// A position, `blue:a2,a3 red:b1,c1 to-move:blue` (`None`: the start).
    pub position: Option<String>,
    /// Moves played from the position, e.g. `a2-a1 b1-b2 c4-off`; move
    /// numbers (`1.`, `...`) are skipped.
    pub moves: Option<String>,
    /// The moves are in desJardins' notation (reflected in the diagonal
    /// through a1).
    pub desjardins: bool,
}

impl DodgemRequest {
    /// The request from `n`, `position`, `moves` and `desjardins` parameters.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] naming a missing or malformed parameter.
    pub fn from_params(params: &Params) -> ProbeResult<DodgemRequest> {
        Ok(DodgemRequest {
            n: required(params, "n")?,
            position: param(params, "position")
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string),
            moves: param(params, "moves").map(str::to_string),
            desjardins: flag(params, "desjardins")?,
        })
    }
}

/// One legal move and its value for the player making it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DodgemMove {
    /// The move in our notation, e.g. `a2-b2`, `c4-off`.
    pub name: String,
    /// The same move in desJardins' notation.
    pub desjardins: String,
    /// Its value for the player making it (the value after it, for the
    /// other side, one ply longer).
    pub value: Value,
    /// The position after the move.
    pub after: String,
}

/// The answer of [`DodgemProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DodgemAnswer {
    /// Board size.
    pub n: usize,
    /// The position reached, as text.
    pub position: String,
    /// The side to move.
    pub to_move: Side,
    /// Its value for the side to move.
    pub value: Value,
    /// Why the game is over, if it is.
    pub note: Option<String>,
    /// Every legal move, best first (shortest wins, draws, longest losses;
    /// ties by name).
    pub moves: Vec<DodgemMove>,
    /// Where the values come from (`run DIR` or `solved in memory`).
    pub source: String,
}

/// The JSON form of a [`DodgemAnswer`], borrowed from it. Fields in
/// alphabetical order, so the bytes [`serde_json::to_vec`] writes equal the
/// printed [`serde_json::Value`] (whose objects sort their keys).
#[derive(Serialize)]
struct AnswerJson<'a> {
    depth: Option<u8>,
    moves: Vec<MoveJson<'a>>,
    n: usize,
    note: Option<&'a str>,
    position: &'a str,
    source: &'a str,
    to_move: &'static str,
    value: &'static str,
}

/// One move of [`AnswerJson`].
#[derive(Serialize)]
struct MoveJson<'a> {
    after: &'a str,
    depth: Option<u8>,
    desjardins: &'a str,
    #[serde(rename = "move")]
    name: &'a str,
    value: &'static str,
}

impl DodgemAnswer {
    fn wire(&self) -> AnswerJson<'_> {
        AnswerJson {
            depth: self.value.depth(),
            moves: self
                .moves
                .iter()
                .map(|m| MoveJson {
                    after: &m.after,
                    depth: m.value.depth(),
                    desjardins: &m.desjardins,
                    name: &m.name,
                    value: m.value.word(),
                })
                .collect(),
            n: self.n,
            note: self.note.as_deref(),
            position: &self.position,
            source: &self.source,
            to_move: self.to_move.name(),
            value: self.value.word(),
        }
    }

    /// The JSON form (what `query dodgem --json` prints and `serve` answers):
    /// `n`, `position`, `to_move`, `value` (`win`, `loss`, `draw`), `depth`
    /// (plies to the end with best play, `null` for a draw), `note`, `moves`
    /// (each with `move`, `desjardins`, `value`, `depth` for the mover,
    /// `after`) and `source`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.wire()).expect("plain data serialises")
    }

    /// [`DodgemAnswer::json`] written as compact JSON bytes, without building
    /// the [`serde_json::Value`] (what `serve` sends).
    pub fn json_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.wire()).expect("plain data serialises")
    }
}

impl fmt::Display for DodgemAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.n;
        let side = self.to_move.name();
        writeln!(f, "{}  ({n}×{n})", self.position)?;
        writeln!(f, "value for {side} (to move): {}", self.value)?;
        if let Some(note) = &self.note {
            writeln!(f, "  {note}")?;
        }
        if !self.moves.is_empty() {
            writeln!(
                f,
                "moves of {side}, best first (value for {side}; desJardins' notation in brackets):"
            )?;
            for m in &self.moves {
                writeln!(f, "  {:<8} [{:<8}] {}", m.name, m.desjardins, m.value)?;
            }
        }
        writeln!(f, "  ({})", self.source)
    }
}

/// One layer of a run: its ranking and its `values` section, made on first
/// use.
struct RunLayer {
    layer: Layer,
    values: SectionHandle,
}

/// A `dodgem` run directory of one board size, read block by block.
struct RunBoard {
    shards: RunShards,
    /// `layers[a · n + b]`, located on first use.
    layers: Vec<OnceLock<RunLayer>>,
    /// Where the answers say they come from (`run DIR`).
    source: String,
}

/// Where the layers of one board size come from.
enum Layers {
    /// A `dodgem` run directory.
    Run(Box<RunBoard>),
    /// Solved in memory on first use.
    Memory(OnceLock<Tables>),
}

/// Looks one position's value up (from a run's blocks or from memory);
/// `Ok(None)`: not without I/O or a solve (asked with `io` false).
type Lookup<'a> = Box<dyn Fn(&Position) -> ProbeResult<Option<Value>> + 'a>;

/// Answers Dodgem requests from `dodgem` run directories, one per board
/// size, and solves boards up to [`IN_MEMORY_MAX_N`] in memory when no run
/// holds them.
pub struct DodgemProbe {
    boards: BTreeMap<usize, Layers>,
    cache: Arc<BlockCache>,
}

impl Default for DodgemProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl DodgemProbe {
    /// A probe with no run directory: boards up to [`IN_MEMORY_MAX_N`] are
    /// solved in memory on first use.
    pub fn new() -> DodgemProbe {
        Self::with_cache(BlockCache::new(DEFAULT_CACHE_BYTES))
    }

    /// [`DodgemProbe::new`], reading blocks through `cache`.
    pub fn with_cache(cache: Arc<BlockCache>) -> DodgemProbe {
        let boards = (2..=IN_MEMORY_MAX_N)
            .map(|n| (n, Layers::Memory(OnceLock::new())))
            .collect();
        DodgemProbe { boards, cache }
    }

    /// Answers board size `n` from the `dodgem` run `view` (replacing the
    /// in-memory solve for that size).
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if `view` is not a dodgem run, or another
    /// run directory already gives this size.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<usize> {
        let dir = view.dir.root().display().to_string();
        crate::pipeline::probe::require_kind(&view, "dodgem")?;
        let n = view
            .plan
            .params
            .get("n")
            .and_then(toml::Value::as_integer)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ProbeError::bad(format!("{dir}: the plan gives no board size n")))?;
        if let Some(Layers::Run(other)) = self.boards.get(&n) {
            return Err(ProbeError::bad(format!(
                "{dir} and {} both solve n = {n}",
                other.shards.view().dir.root().display()
            )));
        }
        let layers = (0..n * n).map(|_| OnceLock::new()).collect();
        let source = format!("run {dir}");
        self.boards.insert(
            n,
            Layers::Run(Box::new(RunBoard {
                shards: RunShards::new(view, self.cache.clone()),
                layers,
                source,
            })),
        );
        Ok(n)
    }

    /// A probe of the run in `dir`, which must solve board size `n`.
    ///
    /// # Errors
    /// As [`DodgemProbe::add_run`], and if the run solves another size.
    pub fn open(dir: &Path, n: usize) -> ProbeResult<DodgemProbe> {
        let mut probe = DodgemProbe::new();
        let run_n = probe.add_run(open_run_of_kind(dir, super::DODGEM)?)?;
        if run_n != n {
            return Err(ProbeError::bad(format!(
                "{} solves n = {run_n}, not {n}",
                dir.display()
            )));
        }
        Ok(probe)
    }

    /// The board sizes answered: `(n, run directory or None for in memory)`.
    pub fn sizes(&self) -> Vec<(usize, Option<String>)> {
        self.boards
            .iter()
            .map(|(&n, l)| match l {
                Layers::Run(r) => (n, Some(r.shards.view().dir.root().display().to_string())),
                Layers::Memory(_) => (n, None),
            })
            .collect()
    }

    /// The position a request names: its position (or the start) after its
    /// moves.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] for a bad board size, a malformed or
    /// impossible position, an illegal move (naming the position it was
    /// played in).
    pub fn position(req: &DodgemRequest) -> ProbeResult<(Board, Position)> {
        let board = Board::new(req.n).map_err(ProbeError::bad)?;
        let mut p = match &req.position {
            Some(text) => board.parse_position(text).map_err(ProbeError::bad)?,
            None => board.start(),
        };
        for w in req.moves.as_deref().unwrap_or("").split_whitespace() {
            if w.ends_with('.') || w == "..." || w == "…" {
                continue; // move numbers
            }
            let ours = if req.desjardins {
                from_desjardins(&board, w).map_err(ProbeError::bad)?
            } else {
                w.to_string()
            };
            let m = board
                .parse_move(&p, &ours)
                .map_err(|e| ProbeError::bad(format!("after {}: {e}", board.position_text(&p))))?;
            p = board.apply(&p, m);
        }
        Ok((board, p))
    }

    /// The value of the position a request names and of each of its moves.
    ///
    /// # Errors
    /// As [`DodgemProbe::position`]; [`ProbeError::NotSolved`] if no run
    /// directory gives the board size; [`ProbeError::Run`] if a layer shard
    /// is missing or damaged.
    pub fn answer(&self, req: &DodgemRequest) -> ProbeResult<DodgemAnswer> {
        Ok(self
            .answer_in(req, true)?
            .expect("every value found when reading is allowed"))
    }

    /// [`DodgemProbe::answer`] if it needs no disk read, decompression or
    /// solve (every value it needs is in the block cache or solved in
    /// memory already): `None` otherwise. For answering on a server's async
    /// threads without handing the request to a blocking pool.
    pub fn answer_cached(&self, req: &DodgemRequest) -> Option<ProbeResult<DodgemAnswer>> {
        self.answer_in(req, false).transpose()
    }

    /// The answer; with `io` false, `Ok(None)` as soon as a value needs a
    /// block read or a solve.
    fn answer_in(&self, req: &DodgemRequest, io: bool) -> ProbeResult<Option<DodgemAnswer>> {
        let (board, p) = Self::position(req)?;
        let n = req.n;
        let (lookup, source): (Lookup<'_>, &str) = match self.boards.get(&n) {
            Some(Layers::Run(run)) => {
                let RunBoard {
                    shards,
                    layers,
                    source,
                } = &**run;
                let view = shards.view();
                let m = solved_max_cars(&view.plan.params, board);
                let (a, b) = p.layer();
                if a > m || b > m {
                    return Err(ProbeError::NotSolved(format!(
                        "{} is in layer ({a}, {b}) ({a} blue and {b} red cars), but the run {} \
                         solves only the layers with at most {m} cars a side: layer ({a}, {b}) needs \
                         a run of the whole board (jobs/dodgem-{n}.toml)",
                        board.position_text(&p),
                        view.dir.root().display()
                    )));
                }
                // Moves only take cars off, so every position a move reaches
                // is in a solved layer too.
                (
                    Box::new(move |q: &Position| {
                        let (a, b) = q.layer();
                        let cell = &layers[a * n + b];
                        let l = match cell.get() {
                            Some(l) => l,
                            None if !io => return Ok(None),
                            None => {
                                let values = shards.section(&layer_job(a, b), "values")?;
                                cell.get_or_init(|| RunLayer {
                                    layer: Layer::new(board, a, b),
                                    values,
                                })
                            }
                        };
                        let i = l.layer.index(q);
                        let byte = if io {
                            shards.byte_at(&l.values, i)?
                        } else {
                            match shards.cached_byte(&l.values, i) {
                                Some(byte) => byte,
                                None => return Ok(None),
                            }
                        };
                        Value::from_byte(byte).map(Some).ok_or_else(|| {
                            ProbeError::Run(crate::pipeline::Error::job(
                                layer_job(a, b),
                                format!("byte {byte} at index {i} is not a value"),
                            ))
                        })
                    }),
                    source.as_str(),
                )
            }
            Some(Layers::Memory(cell)) => {
                let t = match cell.get() {
                    Some(t) => t,
                    None if !io => return Ok(None),
                    None => cell.get_or_init(|| Tables::solve(board, 1)),
                };
                (
                    Box::new(move |q: &Position| Ok(Some(t.value(q).expect("every layer solved")))),
                    "solved in memory",
                )
            }
            None => {
                let what = if n >= 6 {
                    format!(
                        "run `gametables run jobs/dodgem-{n}-endgame.toml` first (the layers with at \
                         most four cars a side; the whole board needs a cluster)"
                    )
                } else {
                    format!("run `gametables run jobs/dodgem-{n}.toml` first")
                };
                return Err(ProbeError::NotSolved(format!(
                    "no run directory for {n}×{n}: {what}, or pass --run-dir"
                )));
            }
        };
        let Some(value) = lookup(&p)? else {
            return Ok(None);
        };
        let mut moves = Vec::new();
        for m in board.moves(&p) {
            let after = board.apply(&p, m);
            let Some(v) = lookup(&after)? else {
                return Ok(None);
            };
            moves.push(DodgemMove {
                name: board.move_name(m),
                desjardins: board.desjardins_move_name(m),
                value: mover_value(v),
                after: board.position_text(&after),
            });
        }
        moves.sort_by(|x, y| {
            move_rank(x.value)
                .cmp(&move_rank(y.value))
                .then(x.name.cmp(&y.name))
        });
        let side = p.to_move;
        let note = if p.cars(side.other()) == 0 {
            Some(format!(
                "game over: {} has no car left and has won",
                side.other().name()
            ))
        } else if moves.is_empty() {
            Some(format!("{} has no legal move and so wins", side.name()))
        } else {
            None
        };
        Ok(Some(DodgemAnswer {
            n,
            position: board.position_text(&p),
            to_move: side,
            value,
            note,
            moves,
            source: source.to_string(),
        }))
    }
}

impl Probe for DodgemProbe {
    fn game(&self) -> &'static str {
        "dodgem"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        Ok(self.answer(&DodgemRequest::from_params(params)?)?.json())
    }

    fn query_json(&self, params: &Params) -> ProbeResult<Vec<u8>> {
        Ok(self
            .answer(&DodgemRequest::from_params(params)?)?
            .json_bytes())
    }

    fn query_cached(&self, params: &Params) -> Option<ProbeResult<Vec<u8>>> {
        let req = match DodgemRequest::from_params(params) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        Some(self.answer_cached(&req)?.map(|a| a.json_bytes()))
    }

    fn keys(&self) -> &'static [&'static str] {
        &["n", "position", "moves", "desjardins"]
    }

    /// A lookup for a board read from a run, or solved in memory already
    /// (or refused at once); the first request of a board solved in memory
    /// computes.
    fn work_of(&self, params: &Params) -> Work {
        let Ok(n) = required::<usize>(params, "n") else {
            return Work::Lookup;
        };
        match self.boards.get(&n) {
            Some(Layers::Memory(cell)) if cell.get().is_none() => Work::Compute,
            _ => Work::Lookup,
        }
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "sizes": self.sizes().into_iter().map(|(n, dir)| serde_json::json!({
                "n": n, "run_dir": dir,
            })).collect::<Vec<_>>(),
        })
    }
}
