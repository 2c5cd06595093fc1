//! The probe of a game solved by the engine: the value and depth of a
//! position for the player to move and of every legal move for the player
//! making it, best first, in the game's notation; read from the layer
//! shards of runs of its kind (or solved in memory for the boards the game
//! allows, [`EngineGame::in_memory`]).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use super::kind::game_of;
use super::layout::{layer_job, reach_job};
use super::spec::EngineGame;
use crate::pipeline::RunView;
use crate::pipeline::probe::blocks::{BlockCache, DEFAULT_CACHE_BYTES, RunShards, SectionHandle};
use crate::pipeline::probe::{Params, Probe, ProbeError, ProbeResult, Work, flag, param, required};
use crate::solvers::engine::{LayeredGame, Value, is_wide, reach_all, solve_all, value_at};

/// A request: the board, a position (default: the start) and moves played
/// from it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineRequest {
    /// The board ([`EngineGame::VARIANT_PARAM`]).
    pub variant: String,
    /// A position in the game's notation (`None`: the start).
    pub position: Option<String>,
    /// Moves played from it, separated by spaces (move numbers such as
    /// `1.` or `1…` are skipped).
    pub moves: Option<String>,
    /// The moves are in the game's
    /// [other notation](EngineGame::OTHER_NOTATION).
    pub other_notation: bool,
}

impl EngineRequest {
    /// The request from its `key=value` parameters.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] naming a missing parameter.
    pub fn from_params<S: EngineGame>(params: &Params) -> ProbeResult<EngineRequest> {
        Ok(EngineRequest {
            variant: match S::VARIANT_PARAM {
                Some(name) => required::<String>(params, name)?,
                None => String::new(),
            },
            position: param(params, "position")
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string),
            moves: param(params, "moves").map(str::to_string),
            other_notation: match S::OTHER_NOTATION {
                Some((name, _)) => flag(params, name)?,
                None => false,
            },
        })
    }
}

/// One legal move and its value for the player making it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineMove {
    /// The move in the game's notation.
    pub name: String,
    /// The move in the game's [other notation](EngineGame::OTHER_NOTATION),
    /// if it has one: the notation's name and the move.
    pub other: Option<(&'static str, String)>,
    /// Its value for the player making it.
    pub value: Value,
    /// The position after it.
    pub after: String,
}

/// The answer of [`EngineProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineAnswer {
    /// The game.
    pub game: &'static str,
    /// The board.
    pub variant: String,
    /// The position, in the game's notation.
    pub position: String,
    /// Who is to move.
    pub to_move: String,
    /// Rows of a picture of the board, top first.
    pub grid: Vec<String>,
    /// Its value for the player to move.
    pub value: Value,
    /// Why play has ended, if it has.
    pub note: Option<String>,
    /// Whether play from the start can reach the position: `Some(false)` for
    /// a position no game reaches (its value is still that of the position
    /// as given: who wins from here with perfect play); `None` when not
    /// known (a run without reachability jobs, or a game with no start).
    pub reachable: Option<bool>,
    /// Every legal move, best first (shortest wins, draws, longest
    /// losses; ties by name).
    pub moves: Vec<EngineMove>,
    /// Where the values come from.
    pub source: String,
}

#[derive(Serialize)]
struct MoveJson<'a> {
    after: &'a str,
    depth: Option<u16>,
    /// The other notation, under its name (empty for most games).
    #[serde(flatten)]
    other: BTreeMap<&'static str, &'a str>,
    #[serde(rename = "move")]
    name: &'a str,
    value: &'static str,
}

#[derive(Serialize)]
struct AnswerJson<'a> {
    depth: Option<u16>,
    game: &'a str,
    grid: &'a [String],
    moves: Vec<MoveJson<'a>>,
    note: Option<&'a str>,
    position: &'a str,
    reachable: Option<bool>,
    source: &'a str,
    to_move: &'a str,
    value: &'static str,
    variant: serde_json::Value,
}

impl EngineAnswer {
    fn wire(&self) -> AnswerJson<'_> {
        AnswerJson {
            depth: self.value.depth(),
            game: self.game,
            grid: &self.grid,
            moves: self
                .moves
                .iter()
                .map(|m| MoveJson {
                    after: &m.after,
                    depth: m.value.depth(),
                    other: m.other.iter().map(|(k, o)| (*k, o.as_str())).collect(),
                    name: &m.name,
                    value: m.value.word(),
                })
                .collect(),
            note: self.note.as_deref(),
            position: &self.position,
            reachable: self.reachable,
            source: &self.source,
            to_move: &self.to_move,
            value: self.value.word(),
            variant: variant_json(&self.variant),
        }
    }

    /// The JSON form (`query … --json`, `serve`): `game`, `variant` (a
    /// number for a numeric board, e.g. Quixo's `n`),
    /// `position`, `to_move`, `grid`, `value` (`win`, `loss`, `draw`),
    /// `depth` (plies, `null` for a draw), `note`, `reachable` (`false`: no
    /// game from the start reaches it; `null`: not known), `moves` (each `move`,
    /// `value` and `depth` for the player making it, `after`), `source`.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self.wire()).expect("plain data serialises")
    }

    /// [`EngineAnswer::json`] as compact bytes.
    pub fn json_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.wire()).expect("plain data serialises")
    }
}

impl fmt::Display for EngineAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.position)?;
        for row in &self.grid {
            writeln!(f, "  {row}")?;
        }
        writeln!(f, "value for {} (to move): {}", self.to_move, self.value)?;
        if let Some(note) = &self.note {
            writeln!(f, "  {note}")?;
        }
        if self.reachable == Some(false) {
            writeln!(
                f,
                "  unreachable: no game from the start position reaches this position \
                 (the value is that of the position as given)"
            )?;
        }
        if !self.moves.is_empty() {
            writeln!(
                f,
                "moves of {}, best first (value for {}):",
                self.to_move, self.to_move
            )?;
            for m in &self.moves {
                writeln!(f, "  {:<10} {}", m.name, m.value)?;
            }
        }
        writeln!(f, "  ({})", self.source)
    }
}

/// Where the layers of one board come from.
enum Source {
    /// A run directory: its shards and each layer's `values` section.
    Run {
        shards: Box<RunShards>,
        values: Vec<OnceLock<SectionHandle>>,
        solved: Vec<bool>,
        /// Each layer's `reachable` section, for layers the run has a
        /// reachability job of (`reached`).
        reach: Vec<OnceLock<SectionHandle>>,
        reached: Vec<bool>,
        source: String,
    },
    /// Solved in memory for the request (small boards only), and the
    /// reachable bits of every layer (`None` if the game has no start).
    Memory(OnceLock<Vec<Vec<u8>>>, OnceLock<Option<Vec<Vec<u64>>>>),
}

struct BoardSource<S: EngineGame> {
    game: S::Game,
    source: Source,
}

/// Answers requests for game `S` from its runs, one per board, and from
/// memory for the boards it allows.
pub struct EngineProbe<S: EngineGame> {
    boards: BTreeMap<String, BoardSource<S>>,
    /// Boards solved in memory, each once, on first request.
    memory: std::sync::Mutex<BTreeMap<String, Arc<BoardSource<S>>>>,
    cache: Arc<BlockCache>,
}

impl<S: EngineGame> Default for EngineProbe<S> {
    fn default() -> Self {
        Self::with_cache(BlockCache::new(DEFAULT_CACHE_BYTES))
    }
}

impl<S: EngineGame> EngineProbe<S> {
    /// A probe with no run directory.
    pub fn with_cache(cache: Arc<BlockCache>) -> Self {
        EngineProbe {
            boards: BTreeMap::new(),
            memory: std::sync::Mutex::new(BTreeMap::new()),
            cache,
        }
    }

    /// Answers the board of run `view` from it.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if it is another kind's run, or another
    /// run already gives this board.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<String> {
        let dir = view.dir.root().display().to_string();
        crate::pipeline::probe::require_kind(&view, S::KIND)?;
        let params = view.plan.params.clone();
        let variant = S::board(&params);
        if let Some(BoardSource {
            source: Source::Run { source, .. },
            ..
        }) = self.boards.get(&variant)
        {
            return Err(ProbeError::bad(
                format!("{dir} and {source} both solve {} {variant}", S::TITLE)
                    .trim_end()
                    .to_string(),
            ));
        }
        let game = game_of::<S>(&dir, &params)?;
        let names: Vec<String> = view.plan.jobs.iter().map(|j| j.name.clone()).collect();
        let solved = (0..game.layer_count())
            .map(|l| names.contains(&layer_job(&game.layer_name(l))))
            .collect();
        let values = (0..game.layer_count()).map(|_| OnceLock::new()).collect();
        let reached = (0..game.layer_count())
            .map(|l| names.contains(&reach_job(&game.layer_name(l))))
            .collect();
        let reach = (0..game.layer_count()).map(|_| OnceLock::new()).collect();
        self.boards.insert(
            variant.clone(),
            BoardSource {
                game,
                source: Source::Run {
                    shards: Box::new(RunShards::new(view, self.cache.clone())),
                    values,
                    solved,
                    reach,
                    reached,
                    source: format!("run {dir}"),
                },
            },
        );
        Ok(variant)
    }

    /// A probe answering from the run in `dir` (and from memory for the
    /// boards the game allows).
    ///
    /// # Errors
    /// `dir` holds no run of this game's kind.
    pub fn open(dir: &std::path::Path) -> ProbeResult<Self> {
        let kind = crate::games::registry()
            .kind(S::KIND)
            .expect("the game's kind is registered");
        let mut p = Self::default();
        p.add_run(crate::pipeline::probe::open_run_of_kind(dir, kind)?)?;
        Ok(p)
    }

    /// The answer to `req` if every byte it needs is cached (no I/O):
    /// `None` when something must be read first.
    pub fn answer_cached(&self, req: &EngineRequest) -> Option<ProbeResult<EngineAnswer>> {
        self.answer_in(req, false).transpose()
    }

    /// The boards answered: `(variant, run directory or None for memory)`.
    pub fn boards(&self) -> Vec<(String, Option<String>)> {
        self.boards
            .iter()
            .map(|(v, b)| match &b.source {
                Source::Run { source, .. } => (
                    v.clone(),
                    Some(source.strip_prefix("run ").unwrap_or(source).to_string()),
                ),
                _ => (v.clone(), None),
            })
            .collect()
    }

    /// The answer to `req`.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] for a bad board, position or move;
    /// [`ProbeError::NotSolved`] if no run (or in-memory solve) gives the
    /// position's layer; [`ProbeError::Run`] for a damaged shard.
    pub fn answer(&self, req: &EngineRequest) -> ProbeResult<EngineAnswer> {
        Ok(self
            .answer_in(req, true)?
            .expect("every value found when reading is allowed"))
    }

    fn answer_in(&self, req: &EngineRequest, io: bool) -> ProbeResult<Option<EngineAnswer>> {
        let canon = canonical_variant::<S>(&req.variant)?;
        let v = canon.as_str();
        let memory_board;
        let board = match self.boards.get(v) {
            Some(b) => b,
            None if S::in_memory(v) => {
                let mut solved = self.memory.lock().unwrap_or_else(|e| e.into_inner());
                memory_board = match solved.get(v) {
                    Some(b) => b.clone(),
                    None => {
                        let params = S::variant_params(v).map_err(ProbeError::bad)?;
                        let b = Arc::new(BoardSource::<S> {
                            game: S::game(&params).map_err(ProbeError::bad)?,
                            source: Source::Memory(OnceLock::new(), OnceLock::new()),
                        });
                        solved.insert(v.to_string(), b.clone());
                        b
                    }
                };
                drop(solved);
                &*memory_board
            }
            None => {
                S::variant_params(v).map_err(ProbeError::bad)?;
                let job = S::local_job(v);
                return Err(ProbeError::NotSolved(format!(
                    "no run directory for {} {v}: run `gametables run jobs/{job}.toml` first (`query` then finds runs/{job}), or pass --run-dir",
                    S::TITLE,
                )));
            }
        };
        let game = &board.game;
        let p = position_of::<S>(game, req)?;
        let lookup = |q: &S::Shown| board.value_of(q, io);
        let Some(value) = lookup(&p)? else {
            return Ok(None);
        };
        let (l, r) = game.rank(&S::position(&p));
        let Some(reachable) = reach_bit::<S>(game, &board.source, l, r, io) else {
            return Ok(None);
        };
        let note = S::over(game, &p);
        let mut moves = Vec::new();
        if note.is_none() {
            for (name, after) in S::moves(game, &p) {
                let Some(v) = lookup(&after)? else {
                    return Ok(None);
                };
                moves.push(EngineMove {
                    other: S::OTHER_NOTATION.map(|(k, _)| (k, S::to_other_notation(game, &name))),
                    name,
                    value: v.for_mover(),
                    after: S::show(game, &after),
                });
            }
        }
        moves.sort_by(|x, y| rank(x.value).cmp(&rank(y.value)).then(x.name.cmp(&y.name)));
        let source = match &board.source {
            Source::Run { source, .. } => source.clone(),
            _ => "solved in memory".to_string(),
        };
        Ok(Some(EngineAnswer {
            game: S::KIND,
            variant: v.to_string(),
            position: S::show(game, &p),
            to_move: S::to_move(&p),
            grid: S::grid(game, &p),
            value,
            note,
            reachable,
            moves,
            source,
        }))
    }
}

/// The position a request names: its `position` (or the start) after its
/// `moves` (in the game's other notation when asked).
fn position_of<S: EngineGame>(game: &S::Game, req: &EngineRequest) -> ProbeResult<S::Shown> {
    let mut p = match &req.position {
        Some(t) => S::parse(game, t).map_err(ProbeError::bad)?,
        None => S::start(game)
            .ok_or_else(|| ProbeError::bad("this game has no start: give a position"))?,
    };
    for m in req.moves.as_deref().unwrap_or("").split_whitespace() {
        // Move numbers of a game record (`1.`, `12...`, `…`) are skipped.
        let m = m.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '…');
        if m.is_empty() {
            continue;
        }
        p = if req.other_notation {
            let ours = S::from_other_notation(game, m).map_err(ProbeError::bad)?;
            let notation = S::OTHER_NOTATION.map_or("", |(n, _)| n);
            S::play(game, &p, &ours).map_err(|e| {
                ProbeError::bad(format!(
                    "move {m} (in {notation} notation; {ours} here): {e}"
                ))
            })?
        } else {
            S::play(game, &p, m).map_err(ProbeError::bad)?
        };
    }
    Ok(p)
}

impl<S: EngineGame> BoardSource<S> {
    /// The value of position `q`, read from the run's shards or the board
    /// solved in memory; `Ok(None)` when `io` is false and it is not cached.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] if the run does not solve `q`'s layer; a
    /// read error of the shard; bytes that are not a value.
    fn value_of(&self, q: &S::Shown, io: bool) -> ProbeResult<Option<Value>> {
        let game = &self.game;
        let (l, r) = game.rank(&S::position(q));
        // One byte per position, or two for a layer deeper than 119
        // plies (the section's length says which).
        let (bytes, wide): ([u8; 2], bool) = match &self.source {
            Source::Run {
                shards,
                values,
                solved,
                ..
            } => {
                if !solved[l] {
                    return Err(ProbeError::NotSolved(format!(
                        "{} lies in layer {}, which the run {} does not solve",
                        S::show(game, q),
                        game.layer_name(l),
                        shards.view().dir.root().display()
                    )));
                }
                let h = match values[l].get() {
                    Some(h) => h,
                    None if !io => return Ok(None),
                    None => {
                        let h = shards.section(&layer_job(&game.layer_name(l)), "values")?;
                        values[l].get_or_init(|| h)
                    }
                };
                let wide = h.len() == 2 * game.layer_size(l) && !h.is_empty();
                let w = if wide { 2 } else { 1 };
                let mut b = [0u8; 2];
                for (i, x) in b.iter_mut().take(w as usize).enumerate() {
                    let at = r * w + i as u64;
                    *x = if io {
                        shards.byte_at(h, at)?
                    } else {
                        match shards.cached_byte(h, at) {
                            Some(b) => b,
                            None => return Ok(None),
                        }
                    };
                }
                (b, wide)
            }
            Source::Memory(cell, _) => {
                if !io && cell.get().is_none() {
                    return Ok(None);
                }
                let t = cell.get_or_init(|| solve_all(game, 1).expect("a small board solves"));
                let wide = is_wide(&t[l], game.layer_size(l)) == Some(true);
                let i = if wide { 2 * r as usize } else { r as usize };
                ([t[l][i], if wide { t[l][i + 1] } else { 0 }], wide)
            }
        };
        value_at(&bytes, wide, 0).map(Some).ok_or_else(|| {
            ProbeError::Run(crate::pipeline::Error::job(
                layer_job(&game.layer_name(l)),
                format!("bytes {bytes:?} at rank {r} are not a value"),
            ))
        })
    }
}

/// The board a request names, as runs name it (`3` for `03` or `+3`): the
/// board of the parameters [`EngineGame::variant_params`] reads from it.
///
/// # Errors
/// [`ProbeError::BadRequest`]: no board of the game.
pub fn canonical_variant<S: EngineGame>(v: &str) -> ProbeResult<String> {
    if S::VARIANT_PARAM.is_none() {
        return Ok(String::new());
    }
    let params = S::variant_params(v).map_err(ProbeError::bad)?;
    Ok(S::board(&params))
}

/// A board as JSON: a number when it is one (Quixo's `n`), else its text.
fn variant_json(v: &str) -> serde_json::Value {
    v.trim()
        .parse::<u64>()
        .map_or_else(|_| v.into(), serde_json::Value::from)
}

/// Whether play from the start reaches rank `r` of layer `l` (see
/// [`EngineAnswer::reachable`]): from the run's `reach-LAYER` shard, or
/// from the reachable bits computed in memory. `None` when the bit is not
/// cached and `io` is false (the caller asks again with I/O allowed);
/// `Some(None)` when not known: no reachability job of that layer, or its
/// shard unreadable (logged; the value is answered all the same).
fn reach_bit<S: EngineGame>(
    game: &S::Game,
    source: &Source,
    l: usize,
    r: u64,
    io: bool,
) -> Option<Option<bool>> {
    match source {
        Source::Run {
            shards,
            reach,
            reached,
            ..
        } => {
            if !reached[l] {
                return Some(None);
            }
            let job = reach_job(&game.layer_name(l));
            let h = match reach[l].get() {
                Some(h) => h,
                None if !io => return None,
                None => match shards.section(&job, "reachable") {
                    Ok(h) => reach[l].get_or_init(|| h),
                    Err(e) => {
                        tracing::warn!("{job}: reachable bits unreadable: {e}");
                        return Some(None);
                    }
                },
            };
            let byte = if io {
                match shards.byte_at(h, r / 8) {
                    Ok(b) => b,
                    Err(e) => {
                        tracing::warn!("{job}: reachable bits unreadable: {e}");
                        return Some(None);
                    }
                }
            } else {
                shards.cached_byte(h, r / 8)?
            };
            // Bit r of the little-endian u64 words is bit r % 8 of byte r / 8.
            Some(Some((byte >> (r % 8)) & 1 == 1))
        }
        Source::Memory(_, bits) if !io && bits.get().is_none() => None,
        Source::Memory(_, bits) => Some(
            bits.get_or_init(|| S::start(game).map(|s| reach_all(game, S::position(&s), 1)))
                .as_ref()
                .map(|b| (b[l][(r / 64) as usize] >> (r % 64)) & 1 == 1),
        ),
    }
}

/// Best first: shortest wins, draws, longest losses.
fn rank(v: Value) -> (u8, i32) {
    match v {
        Value::Win(d) => (0, i32::from(d)),
        Value::Draw => (1, 0),
        Value::Loss(d) => (2, -i32::from(d)),
    }
}

impl<S: EngineGame> Probe for EngineProbe<S> {
    fn game(&self) -> &'static str {
        S::KIND
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        Ok(self
            .answer(&EngineRequest::from_params::<S>(params)?)?
            .json())
    }

    fn query_json(&self, params: &Params) -> ProbeResult<Vec<u8>> {
        Ok(self
            .answer(&EngineRequest::from_params::<S>(params)?)?
            .json_bytes())
    }

    fn query_cached(&self, params: &Params) -> Option<ProbeResult<Vec<u8>>> {
        let req = match EngineRequest::from_params::<S>(params) {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        self.answer_in(&req, false)
            .transpose()
            .map(|r| r.map(|a| a.json_bytes()))
    }

    /// The boards served (`boards`: from runs, and `in_memory`: solved
    /// here on request) and the board view of the web page (`view`:
    /// `board`, with `pieces`, `moves`, `rules`, `param`, `position_help`;
    /// [`super::spec::BoardView`]).
    fn describe(&self) -> serde_json::Value {
        let param = S::VARIANT_PARAM.unwrap_or("board");
        // Boards of one to nine cells a side (or the one board) that the
        // probe solves on request without a run.
        let candidates: Vec<String> = match S::VARIANT_PARAM {
            None => vec![String::new()],
            Some(_) => (1..=9).map(|n| n.to_string()).collect(),
        };
        let in_memory: Vec<serde_json::Value> = candidates
            .iter()
            .filter(|v| S::in_memory(v))
            .map(|v| variant_json(v))
            .collect();
        let view = S::VIEW;
        serde_json::json!({
            "view": "board",
            "title": S::TITLE,
            "param": S::VARIANT_PARAM,
            "boards": self.boards().into_iter().map(|(v, dir)| serde_json::json!({
                param: variant_json(&v), "run_dir": dir,
            })).collect::<Vec<_>>(),
            "in_memory": in_memory,
            "pieces": view.pieces.iter().map(|&(symbol, side, colour)| serde_json::json!({
                "symbol": symbol.to_string(), "side": side, "colour": colour,
            })).collect::<Vec<_>>(),
            "moves": view.moves.name(),
            "rules": view.rules,
            "position_help": S::POSITION_HELP,
            // A second notation of moves: the key answers give each move
            // under, and its name (from its help: "The moves are in NAME (…)").
            "other_notation": S::OTHER_NOTATION.map(|(key, help)| serde_json::json!({
                "key": key,
                "label": help.trim_start_matches("The moves are in ").split(" (").next().unwrap_or(key),
            })),
        })
    }

    fn keys(&self) -> &'static [&'static str] {
        const {
            match (S::VARIANT_PARAM, S::OTHER_NOTATION) {
                (Some(name), Some((other, _))) => &[name, "position", "moves", other],
                (Some(name), None) => &[name, "position", "moves"],
                (None, Some((other, _))) => &["position", "moves", other],
                (None, None) => &["position", "moves"],
            }
        }
    }

    /// A lookup for a board read from a run (or refused at once); a board
    /// solved in memory computes.
    fn work_of(&self, params: &Params) -> Work {
        let v = match S::VARIANT_PARAM {
            Some(name) => param(params, name).and_then(|v| canonical_variant::<S>(v).ok()),
            None => Some(String::new()),
        };
        match v {
            Some(v) if !self.boards.contains_key(&v) && S::in_memory(&v) => Work::Compute,
            _ => Work::Lookup,
        }
    }
}

/// The probe constructor of a [`Game`](crate::pipeline::registry::Game):
/// one probe over every run of the game.
///
/// # Errors
/// Two runs of one board.
pub fn probes<S: EngineGame>(
    runs: Vec<RunView>,
    cache: Arc<BlockCache>,
) -> ProbeResult<Vec<Box<dyn Probe>>> {
    crate::pipeline::probe::one_probe(EngineProbe::<S>::with_cache(cache), runs, |p, v| {
        p.add_run(v).map(drop)
    })
}
