//! Retrograde analysis of one layer of a [`LayeredGame`], by successor
//! counting, level by level.
//!
//! 1. **Seed.** Every position of the layer gets a value byte and a
//!    counter byte. A terminal position is a win or loss in 0. Otherwise its
//!    moves are generated: a move into a solved child layer is looked up; a
//!    move to a lost position makes the position a **win** in at most (that
//!    depth + 1) (an in-layer loss found later may lower it). If no child is
//!    lost, the counter holds the number of in-layer moves, plus 1 if some
//!    move reaches a draw in a child layer (so it never runs out: the
//!    position cannot be lost). With no in-layer move the value follows from
//!    the child layers alone (a loss in 1 + the deepest win among them, or a
//!    draw).
//! 2. **Propagate by depth.** For d = 0, 1, 2, …: every position whose value
//!    has depth d is taken and its in-layer parents
//!    ([`LayeredGame::parents`]) are visited. A loss in d makes each parent a
//!    win in d + 1 unless it wins sooner; a win in d decrements each parent's
//!    counter, and a counter reaching zero means every move of that parent
//!    loses: a loss in 1 + the deepest win among its children (its longest
//!    resistance), at least d + 1.
//! 3. Positions never valued are **draws**.
//!
//! **Symmetry reduction** (when [`LayeredGame::reduces_by_symmetry`]): only
//! canonical positions ([`LayeredGame::canonical`]) are seeded and
//! propagated; a parent is replaced by its canonical image. A won child
//! `c` of stabiliser `|Stab(c)|` lowers the counter of a canonical parent
//! `P` by the number of `P`'s moves into `c`'s class, which is
//! `|Stab(P)| · S / |Stab(c)|` with `S` the number of `c`'s un-moves whose
//! canonical image is `P` (sum over the group of the moves of `g⁻¹P` to `c`,
//! counted both ways). At the end each canonical position gives its value
//! to its images, so the bytes are those of the plain solve.
//!
//! **Determinism.** A depth's positions may be taken in any order and by any
//! number of threads: wins take the minimum (compare-and-swap), counters
//! only count, and a counter reaches zero at exactly one decrement, at the
//! depth of the parent's last in-layer child. The bytes are the same for
//! any thread count. Values of one depth are found through one flag per
//! block of [`BLOCK`] positions and depth, so no queue is stored.
//!
//! **Value width.** A solved layer is stored with one byte per position
//! ([`Value::to_byte`], depths up to [`MAX_DEPTH`] = 119 plies) when every
//! depth fits, else with two ([`Value::to_wide`], little-endian, depths up to
//! [`WIDE_MAX_DEPTH`]; the solver's cells hold [`SOLVE_MAX_DEPTH`]): the length of the bytes, one or two times the
//! layer's size, says which ([`is_wide`]). The width depends only on the
//! values, so the bytes are the same however the layer was solved. A layer
//! [`LayeredGame::wide_values`] names is solved with two-byte cells from
//! the start; any other is solved with one-byte cells and, if a depth
//! passes 119, solved again with two.
//!
//! **Memory**: a value cell (one or two bytes) per position, a counter
//! byte per position unless the game bounds its counters so that they fit
//! the cell's spare codes (1 … 15 of a byte; 1 … 255 of two bytes, whose
//! codes are moved up while solving: [`WIDE_SHIFT`]), a pending bit per
//! position and the flags, on top of the solved child layers the caller
//! holds ([`working_bytes`]).

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};

use super::rules::{LayeredGame, Terminal};
use crate::solvers::hint::{zeroed_bytes, zeroed_words};
mod rounds;
use rounds::resume_round;
pub use rounds::solve_in_mesh;

pub use super::split::BLOCK;
use super::split::{Alone, Checkpoints, Exchange, Mesh, NoCheckpoints, Update, part_bounds};
pub use super::value::{
    LOSS_BASE, MAX_DEPTH, Value, WIDE_LOSS_BASE, WIDE_MAX_DEPTH, WIDE_WIN_BASE, WIN_BASE, is_wide,
    value_at,
};

/// Why a layer could not be solved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SolveError {
    /// A solved child layer the moves reach was not given, or has the
    /// wrong length.
    #[error("layer {layer}: its moves reach layer {child}, {why}")]
    MissingChild {
        /// The layer being solved (its name).
        layer: String,
        /// The child layer (its name).
        child: String,
        /// "which was not given" or the length mismatch.
        why: String,
    },
    /// A position deeper than the two-byte encoding holds.
    #[error(
        "layer {layer} has positions at least {depth} plies deep; the solver's two-byte cells hold depths up to {SOLVE_MAX_DEPTH}"
    )]
    DepthOverflow {
        /// The layer (its name).
        layer: String,
        /// A depth past [`SOLVE_MAX_DEPTH`] that solving reached.
        depth: u32,
    },
    /// Another rank of a split layer ([`solve_part`]) found a broken
    /// contract (its own error names the position).
    #[error(
        "layer {layer}: another rank of the split found a broken contract (its error names the position)"
    )]
    OtherRank {
        /// The layer (its name).
        layer: String,
    },
    /// A checkpoint could not be saved or read ([`Checkpoints`]).
    #[error("layer {layer}: checkpoint: {why}")]
    Checkpoint {
        /// The layer (its name).
        layer: String,
        /// What went wrong.
        why: String,
    },
    /// The ranks of a split layer could not talk ([`Exchange`]).
    #[error("layer {layer}: exchange between the ranks failed: {why}")]
    Exchange {
        /// The layer (its name).
        layer: String,
        /// What the transport said.
        why: String,
    },
    /// The game broke a contract of [`LayeredGame`].
    #[error("layer {layer}, rank {rank}: {why}")]
    Contract {
        /// The layer (its name).
        layer: String,
        /// The position's rank.
        rank: u64,
        /// The contract broken.
        why: String,
    },
}

/// Counts of one solved layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerStats {
    /// Positions in the layer.
    pub positions: u64,
    /// Won for the player to move.
    pub wins: u64,
    /// Lost for the player to move.
    pub losses: u64,
    /// Drawn.
    pub draws: u64,
    /// Largest depth of a won position (0 if none).
    pub max_win_depth: u16,
    /// Largest depth of a lost position (0 if none).
    pub max_loss_depth: u16,
}

impl LayerStats {
    /// Adds the counts of another run of positions of the layer (a part of
    /// a split layer).
    pub fn add(&mut self, o: &LayerStats) {
        self.positions += o.positions;
        self.wins += o.wins;
        self.losses += o.losses;
        self.draws += o.draws;
        self.max_win_depth = self.max_win_depth.max(o.max_win_depth);
        self.max_loss_depth = self.max_loss_depth.max(o.max_loss_depth);
    }

    /// Counts the bytes of a solved layer of one byte per position.
    ///
    /// # Panics
    /// If a byte is outside the encoding (1 … 15).
    pub fn of(values: &[u8]) -> LayerStats {
        let mut hist = [0u64; 256];
        for &b in values {
            hist[b as usize] += 1;
        }
        assert!(
            hist[1..WIN_BASE as usize].iter().all(|&c| c == 0),
            "a byte of a solved layer is outside the encoding"
        );
        let mut s = LayerStats {
            positions: values.len() as u64,
            draws: hist[0],
            ..LayerStats::default()
        };
        for d in 0..=MAX_DEPTH {
            let (w, l) = (
                hist[(WIN_BASE + d) as usize],
                hist[(LOSS_BASE + d) as usize],
            );
            s.wins += w;
            s.losses += l;
            if w > 0 {
                s.max_win_depth = u16::from(d);
            }
            if l > 0 {
                s.max_loss_depth = u16::from(d);
            }
        }
        s
    }

    /// Counts the solved bytes of a layer of `size` positions, one or two
    /// bytes per position ([`is_wide`]).
    ///
    /// # Panics
    /// If the length is neither, or a value is outside the encoding.
    pub fn of_layer(values: &[u8], size: u64) -> LayerStats {
        match is_wide(values, size) {
            Some(false) => LayerStats::of(values),
            Some(true) => {
                let mut s = LayerStats {
                    positions: size,
                    ..LayerStats::default()
                };
                for c in values.chunks_exact(2) {
                    match Value::from_wide(u16::from_le_bytes([c[0], c[1]])) {
                        Some(Value::Draw) => s.draws += 1,
                        Some(Value::Win(d)) => {
                            s.wins += 1;
                            s.max_win_depth = s.max_win_depth.max(d);
                        }
                        Some(Value::Loss(d)) => {
                            s.losses += 1;
                            s.max_loss_depth = s.max_loss_depth.max(d);
                        }
                        None => panic!("a value of a solved layer is outside the encoding"),
                    }
                }
                s
            }
            None => panic!(
                "{} bytes are not the values of {size} positions",
                values.len()
            ),
        }
    }
}

/// Depths whose flags [`working_bytes`] counts for a layer solved with
/// two-byte cells (flags are allocated per depth that occurs).
const WIDE_DEPTHS_ESTIMATE: u64 = 512;

/// Bytes [`solve_layer`] allocates for `layer`, on top of the solved child
/// layers the caller holds (one or two bytes per position each): a value
/// cell (two bytes if [`LayeredGame::wide_values`], else one) and a counter
/// byte per position (none when the counters fit the value cells:
/// [`LayeredGame::counter_bound`]), a pending bit per position, and one flag
/// bit per block of [`BLOCK`] positions and depth.
pub fn working_bytes(game: &impl LayeredGame, layer: usize) -> u64 {
    let size = game.layer_size(layer);
    let wide = game.wide_values(layer);
    let (cell, depths) = if wide {
        (2, WIDE_DEPTHS_ESTIMATE)
    } else {
        (1, u64::from(MAX_DEPTH) + 2)
    };
    let counter = u64::from(!inline_counters(game, layer, wide));
    (cell + counter) * size + size.div_ceil(64) * 8 + depths * size.div_ceil(BLOCK).div_ceil(64) * 8
}

/// How far the solver's two-byte cells move the codes of
/// [`Value::to_wide`] up while solving, so that codes 1 … 255 hold
/// successor counters (a one-byte cell holds 1 … 15). A solved layer's
/// bytes are moved back ([`finish_wide`]): its encoding does not change.
/// Losses then hold depths up to 32,527 plies while solving.
const WIDE_SHIFT: u16 = 240;

/// Deepest depth a layer may have: the two-byte encoding holds
/// [`WIDE_MAX_DEPTH`] = 32,751 plies, the solver's cells 32,527
/// ([`WIDE_SHIFT`]).
pub const SOLVE_MAX_DEPTH: u16 = u16::MAX - WIDE_LOSS_BASE - WIDE_SHIFT;

/// Whether the counters of `layer` live in its value cells
/// ([`LayeredGame::counter_bound`] at most 15 for one-byte cells, 255 for
/// two-byte ones: `wide`).
fn inline_counters(game: &impl LayeredGame, layer: usize, wide: bool) -> bool {
    let max = if wide {
        <[AtomicU16] as Cells>::INLINE_MAX
    } else {
        <[AtomicU8] as Cells>::INLINE_MAX
    };
    game.counter_bound(layer).is_some_and(|b| b <= max)
}

/// The codes of [`Value::to_wide`] from the solver's two-byte cells
/// ([`WIDE_SHIFT`]; a counter never taken to zero is a draw).
fn finish_wide(cells: &mut [u16]) {
    let win = <[AtomicU16] as Cells>::WIN as u16;
    for c in cells {
        *c = if *c >= win { *c - WIDE_SHIFT } else { 0 };
    }
}

/// Bytes of the solved child layers [`solve_layer`] reads for `layer` (one
/// per position, two for a child [`LayeredGame::wide_values`] names).
pub fn child_bytes(game: &impl LayeredGame, layer: usize) -> u64 {
    game.child_layers(layer)
        .iter()
        .map(|&c| game.layer_size(c) * if game.wide_values(c) { 2 } else { 1 })
        .sum()
}

/// Solves `layer` of `game`: its values, one byte per rank
/// ([`Value::to_byte`]) when every depth is at most [`MAX_DEPTH`], else two
/// ([`Value::to_wide`], little-endian).
///
/// `below` holds the solved bytes of every layer of
/// [`LayeredGame::child_layers`]`(layer)`, as `(layer, bytes)`, each of
/// either width. `threads` ≥ 1 threads share the work; the bytes are the
/// same for any number, and whether or not the game names the layer in
/// [`LayeredGame::wide_values`].
///
/// # Errors
/// [`SolveError::MissingChild`] if a child layer is missing or has a length
/// that is neither one nor two bytes per position;
/// [`SolveError::DepthOverflow`] if a depth passes [`SOLVE_MAX_DEPTH`];
/// [`SolveError::Contract`] if a non-terminal position has no move, a move
/// leaves for a layer that is not a child, or a counter overflows.
pub fn solve_layer<G: LayeredGame>(
    game: &G,
    layer: usize,
    below: &[(usize, &[u8])],
    threads: usize,
) -> Result<Vec<u8>, SolveError> {
    solve_part(game, layer, below, threads, &mut Alone, &mut NoCheckpoints)
}

/// Solves this rank's part of `layer`, split over the ranks of `ex`
/// ([`super::split`]): the values of ranks `bounds[k] .. bounds[k + 1]`
/// ([`part_bounds`]) for rank k, in the width of the whole layer (one byte
/// a position when every depth of the layer is at most [`MAX_DEPTH`], else
/// two), so that the parts of ranks 0, 1, … joined are the bytes
/// [`solve_layer`] gives. Every rank must call it with the same game,
/// layer and child layers (`below`, whole); `threads` may differ.
///
/// # Errors
/// As [`solve_layer`], on every rank together: a rank whose own positions
/// broke no contract reports [`SolveError::OtherRank`];
/// [`SolveError::Exchange`] when the transport fails.
pub fn solve_part<G: LayeredGame>(
    game: &G,
    layer: usize,
    below: &[(usize, &[u8])],
    threads: usize,
    ex: &mut dyn Exchange,
    ck: &mut dyn Checkpoints,
) -> Result<Vec<u8>, SolveError> {
    let name = game.layer_name(layer);
    let mut children: Vec<Option<Child>> = vec![None; game.layer_count()];
    for c in game.child_layers(layer) {
        let got = below.iter().find(|(l, _)| *l == c).map(|(_, b)| *b);
        let size = game.layer_size(c);
        let wide = got.and_then(|b| is_wide(b, size));
        let why = match (got, wide) {
            (None, _) => Some("which was not given".to_string()),
            (Some(b), None) => Some(format!(
                "given with {} bytes for its {size} positions (one or two a position)",
                b.len(),
            )),
            _ => None,
        };
        if let Some(why) = why {
            return Err(SolveError::MissingChild {
                layer: name,
                child: game.layer_name(c),
                why,
            });
        }
        children[c] = got.zip(wide).map(|(bytes, wide)| Child { bytes, wide });
    }
    let bounds = part_bounds(game.layer_size(layer), ex.ranks());
    let me = ex.rank();
    let len = (bounds[me + 1] - bounds[me]) as usize;
    let job = Job {
        game,
        layer,
        children: &children,
        threads,
        name: &name,
        bounds: &bounds,
    };
    // A checkpoint of a solve with two-byte cells (every rank has one)
    // skips the one-byte solve that overflowed.
    let wide_saved = ex
        .max_all(&[u64::from(!ck.saved(true).is_empty())])
        .map_err(|why| SolveError::Exchange {
            layer: name.clone(),
            why,
        })?[0]
        == 1;
    if !game.wide_values(layer) && !wide_saved {
        let mut values = zeroed_bytes(len);
        match solve_cells::<G, [AtomicU8]>(&job, ex, ck, &mut values) {
            Ok(()) => return Ok(values),
            Err(SolveError::DepthOverflow { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let mut raw = zeroed_bytes(2 * len);
    // SAFETY: every bit pattern is a valid `u16`.
    let (head, cells, _) = unsafe { raw.align_to_mut::<u16>() };
    if head.is_empty() {
        solve_cells::<G, [AtomicU16]>(&job, ex, ck, cells)?;
        finish_wide(cells);
        if cfg!(target_endian = "big") {
            cells.iter_mut().for_each(|c| *c = c.to_le());
        }
    } else {
        // An allocator that did not align the bytes for `u16` (never seen):
        // solve in a vector of its own and copy.
        let mut cells = vec![0u16; len];
        solve_cells::<G, [AtomicU16]>(&job, ex, ck, &mut cells)?;
        finish_wide(&mut cells);
        raw = cells.iter().flat_map(|c| c.to_le_bytes()).collect();
    }
    let wide = |i: usize| Value::from_wide(u16::from_le_bytes([raw[2 * i], raw[2 * i + 1]]));
    let mine = (0..len)
        .filter_map(|i| wide(i).and_then(Value::depth))
        .max()
        .unwrap_or(0);
    let deepest = ex
        .max_all(&[u64::from(mine)])
        .map_err(|why| SolveError::Exchange {
            layer: name.clone(),
            why,
        })?[0];
    Ok(if deepest <= u64::from(MAX_DEPTH) {
        (0..len)
            .map(|i| wide(i).map_or(0, Value::to_byte))
            .collect()
    } else {
        raw
    })
}

/// What every rank solves: the layer, its children, the split.
struct Job<'a, G> {
    game: &'a G,
    layer: usize,
    children: &'a [Option<Child<'a>>],
    threads: usize,
    name: &'a str,
    /// [`part_bounds`] of the layer for the ranks.
    bounds: &'a [u64],
}

/// A solved child layer's bytes and their width.
#[derive(Clone, Copy)]
struct Child<'a> {
    bytes: &'a [u8],
    wide: bool,
}

impl Child<'_> {
    #[inline]
    fn value(&self, r: u64) -> Option<Value> {
        value_at(self.bytes, self.wide, r)
    }
}

/// The value cells the solver works on: one byte per position (the
/// encoding of [`Value::to_byte`]) or two ([`Value::to_wide`]), as atomics
/// shared by the threads. Codes are handled as `u32`.
trait Cells: Sync {
    /// The stored integer type.
    type Int: Copy + Default + Send;
    /// First win code.
    const WIN: u32;
    /// First loss code.
    const LOSS: u32;
    /// Deepest depth the cells hold.
    const MAX: u32;
    /// Largest successor counter a cell holds (codes 1 ..= `INLINE_MAX`,
    /// below `WIN`).
    const INLINE_MAX: u32;
    /// The cells over `v` (borrowed exclusively for the view's life).
    fn view(v: &mut [Self::Int]) -> &Self;
    fn load(&self, i: usize) -> u32;
    fn store(&self, i: usize, v: u32);
    fn cas(&self, i: usize, old: u32, new: u32) -> bool;
    /// `fetch_update`; true if `f` gave a new value.
    fn update(&self, i: usize, f: impl FnMut(u32) -> Option<u32>) -> bool;
    /// Asks for the cache line of cell `i` (a hint).
    fn prefetch(&self, i: usize);
}

impl Cells for [AtomicU8] {
    type Int = u8;
    const WIN: u32 = WIN_BASE as u32;
    const LOSS: u32 = LOSS_BASE as u32;
    const MAX: u32 = MAX_DEPTH as u32;
    const INLINE_MAX: u32 = WIN_BASE as u32 - 1;
    fn view(v: &mut [u8]) -> &[AtomicU8] {
        // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `v` is
        // borrowed mutably (exclusively) for the life of the view.
        unsafe { &*(v as *mut [u8] as *const [AtomicU8]) }
    }
    #[inline]
    fn load(&self, i: usize) -> u32 {
        u32::from(self[i].load(Relaxed))
    }
    #[inline]
    fn store(&self, i: usize, v: u32) {
        self[i].store(v as u8, Relaxed);
    }
    #[inline]
    fn cas(&self, i: usize, old: u32, new: u32) -> bool {
        self[i]
            .compare_exchange(old as u8, new as u8, Relaxed, Relaxed)
            .is_ok()
    }
    #[inline]
    fn update(&self, i: usize, mut f: impl FnMut(u32) -> Option<u32>) -> bool {
        self[i]
            .fetch_update(Relaxed, Relaxed, |c| f(u32::from(c)).map(|v| v as u8))
            .is_ok()
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        if let Some(c) = self.get(i) {
            crate::solvers::hint::prefetch(c);
        }
    }
}

impl Cells for [AtomicU16] {
    type Int = u16;
    const WIN: u32 = (WIDE_WIN_BASE + WIDE_SHIFT) as u32;
    const LOSS: u32 = (WIDE_LOSS_BASE + WIDE_SHIFT) as u32;
    const MAX: u32 = u16::MAX as u32 - Self::LOSS;
    const INLINE_MAX: u32 = Self::WIN - 1;
    fn view(v: &mut [u16]) -> &[AtomicU16] {
        // SAFETY: `AtomicU16` has the size and alignment of `u16`, and `v`
        // is borrowed mutably (exclusively) for the life of the view.
        unsafe { &*(v as *mut [u16] as *const [AtomicU16]) }
    }
    #[inline]
    fn load(&self, i: usize) -> u32 {
        u32::from(self[i].load(Relaxed))
    }
    #[inline]
    fn store(&self, i: usize, v: u32) {
        self[i].store(v as u16, Relaxed);
    }
    #[inline]
    fn cas(&self, i: usize, old: u32, new: u32) -> bool {
        self[i]
            .compare_exchange(old as u16, new as u16, Relaxed, Relaxed)
            .is_ok()
    }
    #[inline]
    fn update(&self, i: usize, mut f: impl FnMut(u32) -> Option<u32>) -> bool {
        self[i]
            .fetch_update(Relaxed, Relaxed, |c| f(u32::from(c)).map(|v| v as u16))
            .is_ok()
    }
    #[inline(always)]
    fn prefetch(&self, i: usize) {
        if let Some(c) = self.get(i) {
            crate::solvers::hint::prefetch(c);
        }
    }
}

/// Solves this rank's part of the layer into `out` (one cell per position
/// of the part, codes of `C`). [`SolveError::DepthOverflow`] when a depth
/// passes `C::MAX` on any rank.
fn solve_cells<G: LayeredGame, C: Cells + ?Sized>(
    job: &Job<G>,
    ex: &mut dyn Exchange,
    ck: &mut dyn Checkpoints,
    out: &mut [C::Int],
) -> Result<(), SolveError> {
    let game = job.game;
    let len = out.len() as u64;
    let wide = std::mem::size_of::<C::Int>() == 2;
    let inline = inline_counters(game, job.layer, wide);
    let mut counters = zeroed_bytes(if inline { 0 } else { len as usize });
    let blocks = len.div_ceil(BLOCK);
    let words = blocks.div_ceil(64) as usize;
    let me = ex.rank();
    let store = |why| SolveError::Checkpoint {
        layer: job.name.to_string(),
        why,
    };
    let mut pending = zeroed_words(len.div_ceil(64) as usize);
    let mut resume = resume_round(ex, ck, wide, job.name)?;
    if let Some(r) = resume {
        let cells = std::mem::size_of_val(out);
        // SAFETY: plain integers seen as their bytes, borrowed exclusively.
        let mut parts = unsafe {
            [
                std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), cells),
                &mut counters[..],
                std::slice::from_raw_parts_mut(
                    pending.as_mut_ptr().cast::<u8>(),
                    pending.len() * 8,
                ),
            ]
        };
        let loaded = ck.load(wide, r, &mut parts);
        // Any rank that cannot read its checkpoint makes all start again.
        let bad =
            ex.max_all(&[u64::from(loaded.is_err())])
                .map_err(|why| SolveError::Exchange {
                    layer: job.name.to_string(),
                    why,
                })?[0]
                == 1;
        if bad {
            ck.discard(&loaded.err().unwrap_or_else(|| "another rank's".into()));
            parts.iter_mut().for_each(|p| p.fill(0));
            resume = None;
        }
    }
    let s = Solver::<G, C> {
        game,
        layer: job.layer,
        children: job.children,
        values: C::view(out),
        counters: <[AtomicU8]>::view(&mut counters),
        pending: pending.into_iter().map(AtomicU64::new).collect(),
        dirty: (0..=C::MAX).map(|_| OnceLock::new()).collect(),
        dirty_words: words,
        deepest_marked: AtomicU32::new(0),
        overflow: AtomicU64::new(0),
        broken: std::sync::Mutex::new(None),
        failed: AtomicBool::new(false),
        size: game.layer_size(job.layer),
        base: job.bounds[me],
        len,
        bounds: job.bounds,
        outbox: (0..ex.ranks()).map(|_| Mutex::new(Vec::new())).collect(),
        queued: AtomicU64::new(0),
        reduce: game.reduces_by_symmetry(),
        half: !game.reduces_by_symmetry() && ex.ranks() == 1 && game.halves_by_image(job.layer),
        inline,
    };
    let every: Vec<u64> = (0..blocks).collect();
    let t = job.threads;
    let mut d = match resume {
        Some(r) => {
            par_blocks(t, &every, |blk| s.mark_pending(blk));
            r
        }
        None => {
            par_blocks(t, &every, |blk| s.seed(blk));
            0
        }
    };
    loop {
        ck.round(d);
        let due = ck.due();
        let (deepest, save) = s.agree(ex, job.name, due)?;
        if d > deepest {
            break;
        }
        if save {
            // SAFETY: no thread runs, and the cells are only read.
            let parts = unsafe { s.state() };
            ck.save(wide, d, &parts).map_err(store)?;
            // Every rank saved round d before any forgets the one before.
            s.agree(ex, job.name, false)?;
            ck.keep_from(d);
        }
        let todo = s.dirty_blocks(d);
        s.in_rounds(ex, job, &todo, |blk| s.propagate(blk, d), d)?;
        d += 1;
    }
    if s.inline {
        // Counters left are draws (their positions were never valued).
        par_blocks(t, &every, |blk| s.clear_counters(blk));
    }
    if s.reduce {
        s.in_rounds(ex, job, &every, |blk| s.fill(blk), 0)?;
        s.agree(ex, job.name, false)?;
    }
    if s.half {
        par_blocks(t, &every, |blk| s.fill_half(blk));
    }
    Ok(())
}

/// Runs `f(block)` for each block of `todo` on `threads` threads (inline
/// for one thread or a few blocks).
fn par_blocks(threads: usize, todo: &[u64], f: impl Fn(u64) + Sync) {
    if threads <= 1 || todo.len() < 4 {
        todo.iter().for_each(|&b| f(b));
        return;
    }
    let next = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Relaxed) as usize;
                    if i >= todo.len() {
                        break;
                    }
                    f(todo[i]);
                }
            });
        }
    });
}

struct Solver<'a, G: LayeredGame, C: Cells + ?Sized> {
    game: &'a G,
    layer: usize,
    /// The solved bytes of each child layer, by layer id.
    children: &'a [Option<Child<'a>>],
    /// The cells of this rank's part, by rank − `base`.
    values: &'a C,
    counters: &'a [AtomicU8],
    /// One bit per position of the part: valued and not yet taken by the
    /// propagation.
    pending: Vec<AtomicU64>,
    /// `dirty[d]`: one bit per block of the part holding some value of
    /// depth d (allocated when a value of depth d is first found).
    dirty: Vec<OnceLock<Box<[AtomicU64]>>>,
    /// Words of one depth's flags.
    dirty_words: usize,
    /// The deepest depth given a flag so far.
    deepest_marked: AtomicU32,
    /// The first depth past `C::MAX` reached (0: none).
    overflow: AtomicU64,
    /// The first contract broken: (rank, why).
    broken: std::sync::Mutex<Option<(u64, String)>>,
    failed: AtomicBool,
    /// Positions in the layer.
    size: u64,
    /// The first rank of this rank's part.
    base: u64,
    /// Positions in the part.
    len: u64,
    /// [`part_bounds`] of the split.
    bounds: &'a [u64],
    /// Updates for the other ranks' parts, by owner ([`Update::pack`]).
    outbox: Vec<Mutex<Vec<u64>>>,
    /// Words in `outbox`, all owners.
    queued: AtomicU64,
    /// Solve canonical positions only ([`LayeredGame::reduces_by_symmetry`]).
    reduce: bool,
    /// Solve the first half only and copy the other through the image
    /// ([`LayeredGame::halves_by_image`]; one process, no reduction).
    half: bool,
    /// The counters live in the value cells, codes 1 … `C::INLINE_MAX`
    /// ([`LayeredGame::counter_bound`]); `counters` is empty.
    inline: bool,
}

/// What the moves of a position into the child layers say.
#[derive(Default)]
struct Exits {
    in_layer: u32,
    /// Least depth of a lost child (a win in one more).
    lost_child: Option<u32>,
    /// Deepest won child.
    deepest_win: Option<u32>,
    drawn_child: bool,
    /// A move left for a layer that is not a child.
    stray: Option<usize>,
}

/// Second-half positions [`Solver::fill_half`] ranks before copying.
const FILL_BATCH: usize = 32;

/// Updates one block sends to other ranks' parts, by owner.
type Outgoing = Vec<Vec<u64>>;

impl<G: LayeredGame, C: Cells + ?Sized> Solver<'_, G, C> {
    /// Marks part index `i` as valued at `depth`, to be taken.
    fn mark(&self, i: u64, depth: u32) {
        self.pending[(i / 64) as usize].fetch_or(1 << (i % 64), Relaxed);
        let blk = i / BLOCK;
        let flags = self.dirty[depth as usize].get_or_init(|| {
            self.deepest_marked.fetch_max(depth, Relaxed);
            (0..self.dirty_words).map(|_| AtomicU64::new(0)).collect()
        });
        let word = &flags[(blk / 64) as usize];
        // Most marks find the flag raised: read before writing, so threads
        // do not fight over the flag's cache line.
        if word.load(Relaxed) >> (blk % 64) & 1 == 0 {
            word.fetch_or(1 << (blk % 64), Relaxed);
        }
    }

    /// Stores value `v` (a win or loss of depth `d`, or a draw) at part
    /// index `i`.
    fn set(&self, i: u64, v: Value) {
        let code = match v {
            Value::Draw => 0,
            Value::Win(d) | Value::Loss(d) if u32::from(d) > C::MAX => {
                return self.overflow_at(u32::from(d));
            }
            Value::Win(d) => C::WIN + u32::from(d),
            Value::Loss(d) => C::LOSS + u32::from(d),
        };
        self.values.store(i as usize, code);
        if let Some(d) = v.depth() {
            self.mark(i, u32::from(d));
        }
    }

    fn overflow_at(&self, depth: u32) {
        self.failed.store(true, Relaxed);
        let _ = self
            .overflow
            .compare_exchange(0, u64::from(depth), Relaxed, Relaxed);
    }

    fn dirty_blocks(&self, d: u32) -> Vec<u64> {
        let mut out = Vec::new();
        let Some(flags) = self.dirty.get(d as usize).and_then(OnceLock::get) else {
            return out;
        };
        for (w, word) in flags.iter().enumerate() {
            let mut bits = word.load(Relaxed);
            while bits != 0 {
                out.push(w as u64 * 64 + u64::from(bits.trailing_zeros()));
                bits &= bits - 1;
            }
        }
        out
    }

    /// Looks at every move of `p` (not terminal).
    fn exits(&self, p: &G::Position) -> Exits {
        let mut e = Exits::default();
        e.in_layer = self.game.moves_out(self.layer, p, &mut |l, r| {
            let Some(child) = self.children.get(l).copied().flatten() else {
                e.stray = Some(l);
                return;
            };
            match child.value(r) {
                Some(Value::Loss(d)) => {
                    let d = u32::from(d);
                    e.lost_child = Some(e.lost_child.map_or(d, |x| x.min(d)));
                }
                Some(Value::Win(d)) => {
                    let d = u32::from(d);
                    e.deepest_win = Some(e.deepest_win.map_or(d, |x| x.max(d)));
                }
                Some(Value::Draw) | None => e.drawn_child = true,
            }
        });
        e
    }

    /// A value of depth `d` (as found, possibly past the cells' range:
    /// [`Solver::set`] reports that).
    fn clamp_depth(d: u32) -> u16 {
        d.min(u32::from(u16::MAX)) as u16
    }

    /// The part's block `blk`: its ranks in the layer.
    fn block_ranks(&self, blk: u64) -> (u64, u64) {
        let start = blk * BLOCK;
        (self.base + start, self.base + (start + BLOCK).min(self.len))
    }

    fn seed(&self, blk: u64) {
        let (start, end) = self.block_ranks(blk);
        let base = self.base;
        self.game
            .for_each_position(self.layer, start, end, &mut |r, p| {
                if self.reduce && !self.game.is_canonical(&p) {
                    return;
                }
                if self.half && !self.game.first_half(&p) {
                    return;
                }
                let i = r - base;
                match self.game.terminal(&p) {
                    Some(Terminal::Win) => return self.set(i, Value::Win(0)),
                    Some(Terminal::Loss) => return self.set(i, Value::Loss(0)),
                    // A draw is the value of a cell never set.
                    Some(Terminal::Draw) => return,
                    None => {}
                }
                let e = self.exits(&p);
                if let Some(l) = e.stray {
                    return self.fail(
                        r,
                        format!(
                            "a move leads to layer {}, not one of this layer's child layers",
                            self.game.layer_name(l)
                        ),
                    );
                }
                if e.in_layer == 0
                    && e.lost_child.is_none()
                    && e.deepest_win.is_none()
                    && !e.drawn_child
                {
                    return self.fail(r, "a position that is not terminal has no move".into());
                }
                if let Some(d) = e.lost_child {
                    // A win: an in-layer loss found later may lower its depth.
                    return self.set(i, Value::Win(Self::clamp_depth(d + 1)));
                }
                if e.in_layer == 0 {
                    if !e.drawn_child {
                        self.set(
                            i,
                            Value::Loss(Self::clamp_depth(e.deepest_win.unwrap_or(0) + 1)),
                        );
                    }
                    return;
                }
                let count = e.in_layer + u32::from(e.drawn_child);
                if count > 255 {
                    return self.fail(
                        r,
                        format!("{count} in-layer moves: at most 255 are counted"),
                    );
                }
                if self.inline {
                    if count > C::INLINE_MAX {
                        return self.fail(
                            r,
                            format!(
                                "{count} in-layer moves (and a drawn move out), past the game's counter_bound"
                            ),
                        );
                    }
                    self.values.store(i as usize, count);
                } else {
                    self.counters[i as usize].store(count as u8, Relaxed);
                }
            });
    }

    /// Sets the cells of the block that still hold a counter (positions
    /// never valued) to draw.
    fn clear_counters(&self, blk: u64) {
        let start = blk * BLOCK;
        for i in start as usize..(start + BLOCK).min(self.len) as usize {
            let c = self.values.load(i);
            if c != 0 && c < C::WIN {
                self.values.store(i, 0);
            }
        }
    }

    /// The depth of a loss found at depth `d`: every child of `p` is won,
    /// those inside the layer at depths ≤ `d` (they were taken in order of
    /// depth, the last at `d`), so the loss lasts 1 + the deepest of `d`
    /// and the wins among its children in the child layers (its longest
    /// resistance). Only moves leaving the layer are ranked.
    fn loss_depth(&self, p: &G::Position, d: u32) -> u32 {
        let mut deepest = d;
        self.game.moves_out(self.layer, p, &mut |l, r| {
            let child = self.children[l].expect("checked at seeding");
            if let Some(Value::Win(w)) = child.value(r) {
                deepest = deepest.max(u32::from(w));
            }
        });
        deepest + 1
    }

    fn propagate(&self, blk: u64, d: u32) {
        let start = blk * BLOCK;
        let end = (start + BLOCK).min(self.len);
        let (win, loss) = (C::WIN + d, C::LOSS + d);
        let mut buf = Vec::new();
        let mut out = Outgoing::new();
        // BLOCK is a multiple of 64: the block's pending words are its own.
        for w in start / 64..end.div_ceil(64) {
            let word = &self.pending[w as usize];
            let mut bits = word.load(Relaxed);
            let mut taken = 0u64;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let i = w * 64 + u64::from(bit);
                let v = self.values.load(i as usize);
                if v == win || v == loss {
                    taken |= 1 << bit;
                    if self.reduce {
                        self.take_reduced(i, v == loss, d, &mut buf, &mut out);
                    } else {
                        self.take(i, v == loss, d, &mut out);
                    }
                }
            }
            if taken != 0 {
                word.fetch_and(!taken, Relaxed);
            }
        }
        self.post(out);
    }

    /// Gives the images of every canonical position of the block its value
    /// (after solving with symmetry reduction; draws, 0, are there already).
    /// Each position that is not canonical has one canonical image, so no
    /// cell is written twice with different values, and canonical cells are
    /// only read.
    fn fill(&self, blk: u64) {
        let (start, end) = self.block_ranks(blk);
        let mut out = Outgoing::new();
        self.game
            .for_each_position(self.layer, start, end, &mut |r, p| {
                let v = self.values.load((r - self.base) as usize);
                if v == 0 || !self.game.is_canonical(&p) {
                    return;
                }
                self.game.symmetries(&p, &mut |s| {
                    if s != p {
                        let rs = self.game.rank_in(self.layer, &s);
                        match self.local(rs) {
                            Some(i) => self.values.store(i as usize, v),
                            None => self.send(&mut out, rs, Update::Set { rank: rs, code: v }),
                        }
                    }
                });
            });
        self.post(out);
    }

    /// Gives each position of the block's second half the value of its
    /// image in the first half (after solving by halves: the first half's
    /// cells are final, draws included, and only read; each second-half
    /// cell is written once, by the block that holds it).
    ///
    /// The images lie anywhere in the layer, so each read would wait for
    /// its cache line: the image ranks of [`FILL_BATCH`] positions are
    /// found first, each asking for its line, and copied after (87 % of
    /// the copy's time was that wait on Dodgem 5×5's layer 4-4).
    fn fill_half(&self, blk: u64) {
        let (start, end) = self.block_ranks(blk);
        let mut batch: Vec<(usize, usize)> = Vec::with_capacity(FILL_BATCH);
        let copy = |batch: &mut Vec<(usize, usize)>| {
            for (to, from) in batch.drain(..) {
                self.values.store(to, self.values.load(from));
            }
        };
        self.game
            .for_each_position(self.layer, start, end, &mut |r, p| {
                if self.game.first_half(&p) {
                    return;
                }
                let q = self.game.rank_in(self.layer, &self.game.image(&p));
                let from = (q - self.base) as usize;
                self.values.prefetch(from);
                batch.push(((r - self.base) as usize, from));
                if batch.len() == FILL_BATCH {
                    copy(&mut batch);
                }
            });
        copy(&mut batch);
    }

    /// Makes the canonical position at part index `i` a win in `d + 1`
    /// unless it wins sooner (its child of value loss in `d` was found).
    fn win_parent(&self, i: u64, d: u32) {
        if d >= C::MAX {
            return self.overflow_at(d + 1);
        }
        let new = C::WIN + d + 1;
        // Below `C::WIN`: not valued (0, or a counter kept in the cell).
        let upd = self.values.update(i as usize, |cur| {
            (cur < C::WIN || (cur > new && cur < C::LOSS)).then_some(new)
        });
        if upd {
            self.mark(i, d + 1);
        }
    }

    /// Counts `m` of the moves of the position at part index `i` (`q`, or
    /// unranked when needed if `None`) as leading to positions won at depth
    /// `d`; the last makes it a loss.
    fn count_won_moves(&self, i: u64, q: Option<&G::Position>, m: u32, d: u32) {
        if self.inline {
            return self.count_in_cell(i, q, m, d);
        }
        let cell = i as usize;
        if (C::WIN..C::LOSS).contains(&self.values.load(cell)) {
            // Won already (a win needs no counting).
            return;
        }
        let m = m as u8;
        let Ok(before) = self.counters[cell].fetch_update(Relaxed, Relaxed, |c| c.checked_sub(m))
        else {
            return self.fail(self.base + i, "more in-layer parents than moves".into());
        };
        if before == m && self.values.load(cell) == 0 {
            let e = self.loss_depth_at(i, q, d);
            if e > C::MAX {
                return self.overflow_at(e);
            }
            if self.values.cas(cell, 0, C::LOSS + e) {
                self.mark(i, e);
            }
        }
    }

    /// [`Solver::loss_depth`] of the position at part index `i`.
    fn loss_depth_at(&self, i: u64, q: Option<&G::Position>, d: u32) -> u32 {
        match q {
            Some(q) => self.loss_depth(q, d),
            None => self.loss_depth(&self.game.unrank(self.layer, self.base + i), d),
        }
    }

    /// [`Solver::count_won_moves`] with the counter in the value cell: the
    /// last of its moves makes `q` a loss in the same compare-and-swap.
    fn count_in_cell(&self, i: u64, q: Option<&G::Position>, m: u32, d: u32) {
        let cell = i as usize;
        let mut cur = self.values.load(cell);
        loop {
            if (C::WIN..C::LOSS).contains(&cur) {
                // Won already (a win needs no counting).
                return;
            }
            if cur == 0 || cur >= C::LOSS || cur < m {
                return self.fail(self.base + i, "more in-layer parents than moves".into());
            }
            let new = if cur > m {
                cur - m
            } else {
                let e = self.loss_depth_at(i, q, d);
                if e > C::MAX {
                    return self.overflow_at(e);
                }
                C::LOSS + e
            };
            if self.values.cas(cell, cur, new) {
                if new >= C::LOSS {
                    self.mark(i, new - C::LOSS);
                }
                return;
            }
            cur = self.values.load(cell);
        }
    }

    /// [`Solver::take`] with symmetry reduction: the parents of the
    /// canonical position at part index `i` are replaced by their canonical
    /// images, and a won position counts, for each canonical parent, its
    /// moves into its class (module docs). `buf` is scratch space.
    fn take_reduced(
        &self,
        i: u64,
        lost: bool,
        d: u32,
        buf: &mut Vec<(u64, u32, G::Position)>,
        out: &mut Outgoing,
    ) {
        let r = self.base + i;
        let p = self.game.unrank(self.layer, r);
        buf.clear();
        self.game.parents(&p, &mut |q| {
            let (c, k) = self.game.canonical(&q);
            buf.push((self.game.rank_in(self.layer, &c), k, c));
        });
        if buf.iter().any(|e| e.0 >= self.size) {
            return self.fail(r, "a parent lies outside the layer".into());
        }
        if lost {
            for &(rq, _, _) in buf.iter() {
                match self.local(rq) {
                    Some(j) => self.win_parent(j, d),
                    None => self.send(out, rq, Update::Win { rank: rq }),
                }
            }
            return;
        }
        let (_, kc) = self.game.canonical(&p);
        buf.sort_unstable_by_key(|e| e.0);
        let mut a = 0;
        while a < buf.len() {
            let (rq, kq, q) = buf[a];
            let mut b = a;
            while b < buf.len() && buf[b].0 == rq {
                b += 1;
            }
            let moves = u64::from(kq) * (b - a) as u64;
            a = b;
            if kc == 0 || !moves.is_multiple_of(u64::from(kc)) || moves / u64::from(kc) > 255 {
                return self.fail(
                    rq,
                    format!(
                        "symmetry reduction: {moves} / stabiliser {kc} is not a move count (a broken canonical image or stabiliser)"
                    ),
                );
            }
            let m = (moves / u64::from(kc)) as u32;
            match self.local(rq) {
                Some(j) => self.count_won_moves(j, Some(&q), m, d),
                None => self.send(out, rq, Update::Count { rank: rq, moves: m }),
            }
        }
    }

    /// Visits the parents of the position at part index `i`, lost (`lost`)
    /// or won at depth `d`.
    fn take(&self, i: u64, lost: bool, d: u32, out: &mut Outgoing) {
        let r = self.base + i;
        let p = self.game.unrank(self.layer, r);
        self.game.parents_ranked(self.layer, r, &p, &mut |q, rq| {
            // In this layer by contract (checked by `check_rules`).
            if rq >= self.size {
                return self.fail(r, "a parent lies outside the layer".into());
            }
            match (self.local(rq), lost) {
                (Some(j), true) => self.win_parent(j, d),
                (Some(j), false) => self.count_won_moves(j, Some(&q), 1, d),
                (None, true) => self.send(out, rq, Update::Win { rank: rq }),
                (None, false) => self.send(out, rq, Update::Count { rank: rq, moves: 1 }),
            }
        });
    }
}
