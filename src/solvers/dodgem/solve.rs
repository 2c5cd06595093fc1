//! Retrograde analysis of one layer.
//!
//! Inside a layer sideways moves make cycles, so positions cannot be solved
//! in one pass. Instead:
//!
//! 1. **Seed.** Every position gets a byte: loss in 0 if the opponent has no
//!    car; win in 0 if the mover has no move; otherwise the moves that take a
//!    car off the board are looked up in the two solved layers below
//!    (`(a−1, b)` for Blue, `(a, b−1)` for Red). A move to a lost position
//!    makes the position *won at most* at that depth + 1 (written at once;
//!    lowered if an in-layer loss comes earlier). Otherwise the byte holds a
//!    **counter**: the number of in-layer moves, plus 1 if some exit reaches
//!    a draw (so the counter never runs out and the position cannot be lost).
//!    With no in-layer move the value follows from the exits alone.
//! 2. **Propagate by depth.** For d = 0, 1, 2, …: every position whose value
//!    has depth d is taken in turn and its in-layer predecessors are made by
//!    moving one car of the previous mover backwards. A loss in d makes each
//!    predecessor a win in d + 1 (unless it already wins sooner); a win in d
//!    decrements each predecessor's counter, and a counter reaching zero
//!    means every move loses: a loss in 1 + max(d, deepest exit), the longest
//!    resistance.
//! 3. Positions never valued are **draws**.
//!
//! **Two independent halves.** A move inside a layer keeps the position's
//! parity class ([`Board::parity`](super::Board::parity)): the layer is two
//! separate games, and each is solved on its own, with its own depth loop.
//! Of the two sides of a placement exactly one is in each class, so each
//! class has a *pending* bitset of one bit per placement (valued, not yet
//! taken), and one flag per block and depth saying which blocks hold some
//! value of that depth. No queue is stored: the working memory is the
//! layer's bytes (one per position; the counters live in the bytes 1 … 15 of
//! the value encoding), one bit per position, and the two solved layers it
//! reads. The mirror maps a diagonal layer (a = b) onto itself and swaps its
//! classes, so there only class 0 is solved and class 1 is copied
//! ([`super::mirror_class_one`]).
//!
//! **Threads.** One thread takes the classes block by block at each depth.
//! With two or more, the classes being solved share the threads equally
//! (a diagonal layer's class 0 gets them all), and a class's threads never
//! touch the other class's bytes or bits and never wait for them. Inside a
//! class, thread t of g owns the blocks rb ≡ t (mod g) and alone writes
//! their bytes (plain loads and stores; only the pending bits, whose words
//! can straddle two blocks, are set with an atomic or); each of the g
//! threads looks at every position of depth d of its class and updates the
//! predecessors it owns, and they meet at a barrier after each depth. The
//! result does not depend on the order in which a depth's positions are
//! taken (wins take the minimum depth, counters only count), hence not on
//! the thread count.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering::Relaxed};

use super::block::{
    Block, Geometry, NONE, OFF, as_atomic_words, par_range, prefetch, rank_after_red_step,
    rank_mask, rank_with, zeroed_bytes, zeroed_words,
};
use super::{LOSS_BASE, Layer, MAX_DEPTH, Side, Value, WIN_BASE};

/// Counts of one solved layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerStats {
    /// Positions won for the side to move.
    pub wins: u64,
    /// Positions lost for the side to move.
    pub losses: u64,
    /// Drawn positions.
    pub draws: u64,
    /// Largest depth of a won position (0 if none).
    pub max_win_depth: u8,
    /// Largest depth of a lost position (0 if none).
    pub max_loss_depth: u8,
    /// Car placements lost for whoever moves, as (blue mask, red mask), in
    /// index order. The empty board is left out (not a position of play).
    pub lost_for_both: Vec<(u64, u64)>,
}

impl LayerStats {
    /// Counts a solved layer's bytes.
    ///
    /// # Panics
    /// If `values` has the wrong length or holds a byte outside the encoding.
    pub fn of(layer: &Layer, values: &[u8]) -> LayerStats {
        assert_eq!(values.len() as u64, layer.len());
        let hist = histogram(values);
        assert!(
            hist[1..WIN_BASE as usize].iter().all(|&c| c == 0),
            "solved layer byte"
        );
        let mut s = LayerStats {
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
                s.max_win_depth = d;
            }
            if l > 0 {
                s.max_loss_depth = d;
            }
        }
        if (layer.a(), layer.b()) != (0, 0) {
            for (pair, two) in values.chunks_exact(2).enumerate() {
                if two[0] >= LOSS_BASE && two[1] >= LOSS_BASE {
                    let p = layer.position(2 * pair as u64);
                    s.lost_for_both.push((p.blue, p.red));
                }
            }
        }
        s
    }
}

/// How often each byte value occurs (four interleaved counters per value,
/// so consecutive equal bytes do not wait on one another).
pub fn histogram(values: &[u8]) -> [u64; 256] {
    let mut h = [[0u64; 256]; 4];
    let mut chunks = values.chunks_exact(4);
    for c in &mut chunks {
        h[0][c[0] as usize] += 1;
        h[1][c[1] as usize] += 1;
        h[2][c[2] as usize] += 1;
        h[3][c[3] as usize] += 1;
    }
    for &b in chunks.remainder() {
        h[0][b as usize] += 1;
    }
    let mut out = [0u64; 256];
    for (i, o) in out.iter_mut().enumerate() {
        *o = h[0][i] + h[1][i] + h[2][i] + h[3][i];
    }
    out
}

/// Bytes [`solve_layer_with_threads`] holds for `layer` on top of the two
/// solved layers below it (which the caller owns): one value byte per
/// position (the successor counters live in it while solving), two pending
/// bitsets of one bit per placement (one bit per position in all), the
/// backward blue steps of every block (at most three per blue car), one
/// dirty flag per block, depth and parity class, and the rank tables of the
/// layer and of the two below. The 6×6 (4, 4) layer: 4.77 GB.
pub fn solve_working_bytes(layer: &Layer) -> u64 {
    use super::block::{Block, BlueStep};
    let len = layer.len();
    let blocks = layer.blue_ranks();
    let steps = 3 * layer.a() as u64;
    let board = layer.board();
    let tables = |a: usize, b: usize| {
        if a <= board.cars() && b <= board.cars() {
            Layer::new(board, a, b).table_bytes()
        } else {
            0
        }
    };
    len + 2 * (len / 2).div_ceil(64) * 8
        + blocks
            * (std::mem::size_of::<Block>() as u64 + steps * std::mem::size_of::<BlueStep>() as u64)
        + 2 * (u64::from(MAX_DEPTH) + 1) * blocks.div_ceil(64) * 8
        + layer.table_bytes()
        + tables(layer.a().wrapping_sub(1), layer.b())
        + tables(layer.a(), layer.b().wrapping_sub(1))
}

/// A layer whose positions go deeper than the byte encoding holds
/// ([`MAX_DEPTH`] plies): solving stopped at the first depth past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "layer ({a}, {b}) of the {n}×{n} board has positions at least {depth} plies deep; \
     a value byte holds depths up to {MAX_DEPTH}"
)]
pub struct DepthOverflow {
    /// Board size.
    pub n: usize,
    /// Blue cars.
    pub a: usize,
    /// Red cars.
    pub b: usize,
    /// A depth past [`MAX_DEPTH`] that solving reached.
    pub depth: u32,
}

/// Solves layer `layer` on one thread; see [`solve_layer_with_threads`].
///
/// # Panics
/// As [`solve_layer_with_threads`].
pub fn solve_layer(layer: &Layer, below_blue: Option<&[u8]>, below_red: Option<&[u8]>) -> Vec<u8> {
    solve_layer_with_threads(layer, below_blue, below_red, 1)
}

/// Solves layer `(a, b)`: one byte per index (see [`Value::to_byte`]).
///
/// `below_blue` is the solved layer `(a−1, b)` (needed when a ≥ 1),
/// `below_red` the solved layer `(a, b−1)` (needed when b ≥ 1), both in the
/// same encoding. `threads` ≥ 1 worker threads share the work; the result is
/// the same for any number.
///
/// A diagonal layer (a = b) is its own mirror image, and the mirror
/// ([`reflect_layer`](super::reflect_layer)) swaps its two parity classes:
/// only class 0 is solved, and class 1 is copied from it
/// ([`mirror_class_one`](super::mirror_class_one)), about half the work. [`solve_layer_both_classes`] solves both (for cross-checks).
///
/// # Panics
/// If a needed layer below is missing or has the wrong length, or a depth
/// exceeds [`MAX_DEPTH`] (never on boards up to 5×5, nor on the 6×6 layers
/// with at most four cars a side; [`try_solve_layer_with_threads`] returns
/// the error instead).
pub fn solve_layer_with_threads(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
) -> Vec<u8> {
    try_solve_layer_with_threads(layer, below_blue, below_red, threads)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// [`solve_layer_with_threads`], returning [`DepthOverflow`] instead of
/// panicking when a position is deeper than [`MAX_DEPTH`] plies.
///
/// # Errors
/// [`DepthOverflow`] with the first depth past the encoding that solving reached.
///
/// # Panics
/// If a needed layer below is missing or has the wrong length.
pub fn try_solve_layer_with_threads(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
) -> Result<Vec<u8>, DepthOverflow> {
    if layer.a() == layer.b() {
        let mut v = solve_classes(layer, below_blue, below_red, threads, [true, false])?;
        super::reflect::mirror_class_one(layer, &mut v, threads);
        Ok(v)
    } else {
        solve_classes(layer, below_blue, below_red, threads, [true, true])
    }
}

/// [`solve_layer_with_threads`] solving both parity classes by retrograde
/// analysis on every layer, diagonal ones included (no mirror).
///
/// # Panics
/// As [`solve_layer_with_threads`].
pub fn solve_layer_both_classes(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
) -> Vec<u8> {
    solve_classes(layer, below_blue, below_red, threads, [true, true])
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Solves only the parity classes `which[c]` of the layer (both classes of
/// a diagonal layer can be solved this way, without the mirror); the bytes
/// of a class not solved are 0. For cross-checks: class 1 of a diagonal
/// layer solved directly against its mirror copy.
///
/// # Errors
/// As [`try_solve_layer_with_threads`].
///
/// # Panics
/// As [`solve_layer_with_threads`].
pub fn solve_layer_classes(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
    which: [bool; 2],
) -> Result<Vec<u8>, DepthOverflow> {
    solve_classes(layer, below_blue, below_red, threads, which)
}

/// Solves the parity classes `which[c]` of the layer; the bytes of the
/// other class are left 0.
fn solve_classes(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
    which: [bool; 2],
) -> Result<Vec<u8>, DepthOverflow> {
    let board = layer.board();
    let (a, b) = (layer.a(), layer.b());
    let lb = (a > 0).then(|| {
        let l = Layer::new(board, a - 1, b);
        let v = below_blue.expect("layer (a−1, b) is needed");
        assert_eq!(v.len() as u64, l.len(), "layer ({}, {b}) length", a - 1);
        (l, v)
    });
    let lr = (b > 0).then(|| {
        let l = Layer::new(board, a, b - 1);
        let v = below_red.expect("layer (a, b−1) is needed");
        assert_eq!(v.len() as u64, l.len(), "layer ({a}, {}) length", b - 1);
        (l, v)
    });
    let len = layer.len() as usize;
    let mut bytes = zeroed_bytes(len);
    // One bit per placement and class (see the module doc).
    let pair_words = (layer.len() / 2).div_ceil(64) as usize;
    let mut pending0 = zeroed_words(pair_words);
    let mut pending1 = zeroed_words(pair_words);
    {
        // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `bytes`
        // is borrowed mutably (exclusively) for the life of this view.
        let cells: &[AtomicU8] =
            unsafe { &*(bytes.as_mut_slice() as *mut [u8] as *const [AtomicU8]) };
        let s = Solver {
            layer,
            geo: Geometry::new(board),
            edges: Edges::new(board.n()),
            cells,
            below_blue: lb.as_ref().map(|(l, v)| (l, *v)),
            below_red: lr.as_ref().map(|(l, v)| (l, *v)),
            blocks: layer.blue_ranks(),
            dirty: [dirty_flags(layer), dirty_flags(layer)],
            pending: [
                as_atomic_words(&mut pending0),
                as_atomic_words(&mut pending1),
            ],
            back: std::sync::OnceLock::new(),
            max_depth: [AtomicU8::new(0), AtomicU8::new(0)],
            overflow: [AtomicU32::new(0), AtomicU32::new(0)],
            which,
        };
        par_range(threads, s.blocks, |rb| s.seed_block(rb));
        let _ = s.back.set(
            (0..s.blocks)
                .map(|rb| Block::backward_only(layer, &s.geo, rb))
                .collect(),
        );
        let classes: Vec<u8> = (0..2u8).filter(|&c| which[c as usize]).collect();
        if threads == 1 {
            // The classes depth by depth, block by block: a block's
            // predecessors are looked up for both classes while their cache
            // lines are at hand.
            let owners: Vec<Owner> = classes.iter().map(|&c| Owner::whole(c)).collect();
            s.solve_classes(&owners, None);
        } else {
            // Each class gets an equal share of the threads; interleaved
            // blocks keep a class's threads' shares even at every depth.
            let group = (threads / classes.len()).clamp(1, s.blocks as usize) as u64;
            let barriers = [Barrier::new(group as usize), Barrier::new(group as usize)];
            std::thread::scope(|sc| {
                for &class in &classes {
                    for t in 0..group {
                        let (s, barrier) = (&s, &barriers[class as usize]);
                        let own = Owner { class, t, group };
                        sc.spawn(move || s.solve_classes(&[own], Some(barrier)));
                    }
                }
            });
        }
        let over = s.overflow[0].load(Relaxed).max(s.overflow[1].load(Relaxed));
        if over > 0 {
            return Err(DepthOverflow {
                n: board.n(),
                a,
                b,
                depth: over,
            });
        }
    }
    for v in &mut bytes {
        if *v < WIN_BASE {
            *v = 0;
        }
    }
    Ok(bytes)
}

/// One flag word per 64 blocks, for every depth.
fn dirty_flags(layer: &Layer) -> Vec<Vec<AtomicU64>> {
    (0..=MAX_DEPTH as usize)
        .map(|_| {
            (0..layer.blue_ranks().div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect()
        })
        .collect()
}

/// What a thread owns: the positions of parity class `class` in the blocks
/// rb ≡ t (mod group).
#[derive(Clone, Copy)]
struct Owner {
    class: u8,
    t: u64,
    group: u64,
}

impl Owner {
    /// All of class `class`.
    fn whole(class: u8) -> Owner {
        Owner {
            class,
            t: 0,
            group: 1,
        }
    }

    #[inline]
    fn block(&self, rb: u64) -> bool {
        self.group == 1 || rb % self.group == self.t
    }
}

/// Square masks of the board's edges, for counting moves on bit boards
/// (this solver's seeding and the engine's `DodgemLayers::moves_out`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Edges {
    /// The side of the board.
    pub(super) n: u32,
    /// Every square.
    pub(super) full: u64,
    /// File a (x = 0).
    pub(super) first_file: u64,
    /// The last file (x = n − 1), Blue's exit edge.
    pub(super) last_file: u64,
    /// The last rank (y = n − 1), Red's exit edge.
    pub(super) last_rank: u64,
}

impl Edges {
    pub(super) fn new(n: usize) -> Edges {
        let full = (1u64 << (n * n)) - 1;
        let first_file = (0..n).fold(0u64, |m, y| m | 1 << (y * n));
        Edges {
            n: n as u32,
            full,
            first_file,
            last_file: first_file << (n - 1),
            last_rank: ((1u64 << n) - 1) << (n * (n - 1)),
        }
    }
}

struct Solver<'a> {
    layer: &'a Layer,
    geo: Geometry,
    edges: Edges,
    cells: &'a [AtomicU8],
    below_blue: Option<(&'a Layer, &'a [u8])>,
    below_red: Option<(&'a Layer, &'a [u8])>,
    blocks: u64,
    /// `dirty[class][d]`: one bit per block holding some value of depth d in the class.
    dirty: [Vec<Vec<AtomicU64>>; 2],
    /// `pending[class]`: bit `idx >> 1` for the position `idx` of the class
    /// valued but not yet propagated.
    pending: [&'a [AtomicU64]; 2],
    /// Backward-step tables of every block, built once after seeding.
    back: std::sync::OnceLock<Vec<Block>>,
    /// Largest depth valued so far, per class.
    max_depth: [AtomicU8; 2],
    /// A depth past [`MAX_DEPTH`] that a class reached (0: none). Only the
    /// class's own threads write it; they read it after their barrier.
    overflow: [AtomicU32; 2],
    /// The classes being solved.
    which: [bool; 2],
}

/// What the exits (moves off the board) of a position lead to.
#[derive(Default)]
struct Exits {
    /// Smallest depth of an exit to a position lost for the opponent.
    loss_min: Option<u8>,
    /// Largest depth of an exit to a position won for the opponent.
    win_max: Option<u8>,
    /// Some exit reaches a draw.
    draw: bool,
}

impl Exits {
    /// Adds the value byte (for the opponent) that an exit reaches.
    #[inline]
    fn add(&mut self, byte: u8) {
        match Value::from_byte(byte).expect("solved layer below") {
            Value::Loss(d) => self.loss_min = Some(self.loss_min.map_or(d, |m| m.min(d))),
            Value::Win(d) => self.win_max = Some(self.win_max.map_or(d, |m| m.max(d))),
            Value::Draw => self.draw = true,
        }
    }
}

#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let s = m.trailing_zeros() as usize;
            m &= m - 1;
            s
        })
    })
}

impl Solver<'_> {
    /// Marks `block` as holding a value of depth `d` in `class`.
    #[inline]
    fn mark(&self, block: u64, d: u8, class: u8) {
        assert!(d <= MAX_DEPTH, "depth {d} exceeds the byte encoding");
        let w = &self.dirty[class as usize][d as usize][(block / 64) as usize];
        if w.load(Relaxed) >> (block % 64) & 1 == 0 {
            w.fetch_or(1 << (block % 64), Relaxed);
        }
        let max = &self.max_depth[class as usize];
        if max.load(Relaxed) < d {
            max.fetch_max(d, Relaxed);
        }
    }

    /// Records that `class` reached `depth` > [`MAX_DEPTH`].
    #[cold]
    fn overflowed(&self, class: u8, depth: u32) {
        self.overflow[class as usize].fetch_max(depth, Relaxed);
    }

    /// Takes the depths 0, 1, 2, … of the classes of `owners` until none is
    /// left. The threads of one class meet at `barrier` after each depth;
    /// other classes are never touched.
    fn solve_classes(&self, owners: &[Owner], barrier: Option<&Barrier>) {
        let max = || {
            owners
                .iter()
                .map(|o| self.max_depth[o.class as usize].load(Relaxed))
                .max()
                .unwrap_or(0)
        };
        let over = || {
            owners
                .iter()
                .any(|o| self.overflow[o.class as usize].load(Relaxed) > 0)
        };
        let mut d = 0u8;
        // Every thread of the class reads `max` and `over` after the same
        // barrier, when no thread of the class writes them, so all leave at
        // the same depth.
        while d <= max() && !over() {
            self.propagate(d, owners);
            if let Some(b) = barrier {
                b.wait();
            }
            d += 1;
        }
    }

    #[inline]
    fn block_of(&self, idx: u64) -> u64 {
        (idx >> 1) / self.layer.red_ranks()
    }

    /// The exits of (blue, red) with `side` to move.
    fn exits(&self, blue: u64, red: u64, side: Side) -> Exits {
        let mut e = Exits::default();
        // Only cars on the side's exit edge can leave.
        let leaving = match side {
            Side::Blue => blue & self.edges.last_file,
            Side::Red => red & self.edges.last_rank,
        };
        for s in bits(leaving) {
            let byte = match side {
                Side::Blue => {
                    let (l, v) = self.below_blue.expect("blue cars imply layer (a−1, b)");
                    v[l.index_of(blue & !(1 << s), red, Side::Red) as usize]
                }
                Side::Red => {
                    let (l, v) = self.below_red.expect("red cars imply layer (a, b−1)");
                    v[l.index_of(blue, red & !(1 << s), Side::Blue) as usize]
                }
            };
            e.add(byte);
        }
        e
    }

    /// The seed byte from the in-layer move count and the exits' values;
    /// `Err(depth)` if the value is deeper than [`MAX_DEPTH`].
    fn seed_from(inside: u8, e: &Exits, any_exit: bool) -> Result<u8, u32> {
        let deeper = |d: u8| -> Result<u8, u32> {
            if d < MAX_DEPTH {
                Ok(d + 1)
            } else {
                Err(u32::from(d) + 1)
            }
        };
        if !any_exit {
            return Ok(if inside == 0 { WIN_BASE } else { inside });
        }
        if let Some(d) = e.loss_min {
            return Ok(Value::Win(deeper(d)?).to_byte());
        }
        if inside == 0 {
            return match (e.draw, e.win_max) {
                (true, _) => Ok(0),
                (false, Some(d)) => Ok(Value::Loss(deeper(d)?).to_byte()),
                (false, None) => unreachable!("an exit exists"),
            };
        }
        Ok(inside + u8::from(e.draw))
    }

    fn seed_block(&self, rb: u64) {
        let l = self.layer;
        let blk = Block::new(l, self.below_blue.map(|(bl, _)| bl), &self.geo, rb);
        let binom = l.binom();
        let nr = l.red_ranks();
        let base = rb * nr;
        let blue = blk.blue;
        let edges = &self.edges;
        let blue_exits: Vec<&super::block::BlueStep> =
            blk.fwd.iter().filter(|st| st.to == OFF).collect();
        let mut depths = [0u128; 2];
        let (mut word_at, mut word) = ([0u64; 2], [0u64; 2]);
        for rr in 0..nr {
            let m = l.red_free_set(rr);
            let class0 = blk.class(m);
            let (reds, k, red) = blk.reds(m);
            let reds = &reds[..k];
            let free = !(blue | red) & edges.full;
            // Blue to move: in-layer moves right, up, down onto free squares
            // (counted on bit boards), exits from the last file.
            let vb = if !self.which[class0 as usize] {
                0
            } else if red == 0 {
                LOSS_BASE
            } else {
                let inside = (((blue & !edges.last_file) << 1) & free).count_ones()
                    + ((blue << edges.n) & free).count_ones()
                    + ((blue >> edges.n) & free).count_ones();
                let mut e = Exits::default();
                for st in &blue_exits {
                    let (bl, v) = self.below_blue.expect("blue exits need layer (a−1, b)");
                    let i = ((st.rb * bl.red_ranks() + rank_with(binom, &st.comp, reds)) << 1) | 1;
                    e.add(v[i as usize]);
                }
                Self::seed_from(inside as u8, &e, !blue_exits.is_empty()).unwrap_or_else(|d| {
                    self.overflowed(class0, d);
                    0
                })
            };
            // Red to move: up, left, right; exits from the last rank.
            let vr = if !self.which[(class0 ^ 1) as usize] {
                0
            } else if blue == 0 {
                LOSS_BASE
            } else {
                let inside = ((red << edges.n) & free).count_ones()
                    + (((red & !edges.first_file) >> 1) & free).count_ones()
                    + (((red & !edges.last_file) << 1) & free).count_ones();
                let leaving = red & edges.last_rank;
                let mut e = Exits::default();
                for s in bits(leaving) {
                    let (bl, v) = self.below_red.expect("red exits need layer (a, b−1)");
                    let m2 = m & !(1 << blk.comp[s]);
                    let i = (rb * bl.red_ranks() + rank_mask(binom, m2)) << 1;
                    e.add(v[i as usize]);
                }
                Self::seed_from(inside as u8, &e, leaving != 0).unwrap_or_else(|d| {
                    self.overflowed(class0 ^ 1, d);
                    0
                })
            };
            let k = base + rr;
            for (side, v) in [(0u64, vb), (1, vr)] {
                self.cells[((k << 1) | side) as usize].store(v, Relaxed);
                if v >= WIN_BASE {
                    let d = if v >= LOSS_BASE {
                        v - LOSS_BASE
                    } else {
                        v - WIN_BASE
                    };
                    let c = usize::from(class0 ^ side as u8);
                    depths[c] |= 1 << d;
                    if k / 64 != word_at[c] {
                        if word[c] != 0 {
                            self.pending[c][word_at[c] as usize].fetch_or(word[c], Relaxed);
                        }
                        word_at[c] = k / 64;
                        word[c] = 0;
                    }
                    word[c] |= 1 << (k % 64);
                }
            }
        }
        for c in 0..2 {
            if word[c] != 0 {
                self.pending[c][word_at[c] as usize].fetch_or(word[c], Relaxed);
            }
            let ds = depths[c];
            for d in bits(ds as u64).chain(bits((ds >> 64) as u64).map(|d| d + 64)) {
                self.mark(rb, d as u8, c as u8);
            }
        }
    }

    /// Takes every position of `own`'s class with depth `d` and updates its
    /// predecessors in the blocks of `own`; clears the pending bits of owned
    /// positions taken at earlier depths.
    fn propagate(&self, d: u8, owners: &[Owner]) {
        let l = self.layer;
        let nr = l.red_ranks();
        let win = WIN_BASE + d;
        let loss = LOSS_BASE + d;
        for rb in 0..self.blocks {
            for own in owners {
                let own = *own;
                let dirty = &self.dirty[own.class as usize][d as usize];
                let pending = self.pending[own.class as usize];
                if dirty[(rb / 64) as usize].load(Relaxed) >> (rb % 64) & 1 == 0 {
                    continue;
                }
                // Placements (index >> 1) of the block.
                let base = rb * nr;
                let end = base + nr;
                // Predecessors of Blue-to-move positions (Red moved last) lie in
                // this block; only its owners need to look at them.
                let block_owned = own.block(rb);
                let blk = &self.back.get().expect("built after seeding")[rb as usize];
                for w in base / 64..end.div_ceil(64) {
                    let word = &pending[w as usize];
                    let mut bits = word.load(Relaxed);
                    if w == base / 64 {
                        bits &= u64::MAX << (base % 64);
                    }
                    if w == end / 64 {
                        bits &= (1u64 << (end % 64)) - 1;
                    }
                    while bits != 0 {
                        let k = w * 64 + u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        let rr = k - base;
                        let m = l.red_free_set(rr);
                        // The side whose position of this placement is in the class.
                        let side = blk.class(m) ^ own.class;
                        let v = self.cells[((k << 1) | u64::from(side)) as usize].load(Relaxed);
                        if v != win && v != loss {
                            let depth = if v >= LOSS_BASE {
                                v - LOSS_BASE
                            } else {
                                v - WIN_BASE
                            };
                            if block_owned && depth < d {
                                word.fetch_and(!(1 << (k % 64)), Relaxed);
                            }
                            continue;
                        }
                        if side == 0 && !block_owned {
                            continue;
                        }
                        self.take(blk, rr, m, side == 1, v == loss, d, &own);
                    }
                }
            }
        }
    }

    /// Updates the in-layer predecessors of the position of block `blk`
    /// with red rank `rr` (free-square mask `m`) and Red to move if
    /// `red_to_move`, whose value has depth `d` and is a loss if `lost`.
    #[allow(clippy::too_many_arguments)]
    fn take(
        &self,
        blk: &Block,
        rr: u64,
        m: u64,
        red_to_move: bool,
        lost: bool,
        d: u8,
        own: &Owner,
    ) {
        let l = self.layer;
        let binom = l.binom();
        let nr = l.red_ranks();
        let rb = blk.rb;
        let class = own.class;
        {
            let blue = blk.blue;
            let (reds, k, red) = blk.reds(m);
            let reds = &reds[..k];
            let occ = blue | red;
            if !red_to_move {
                // Blue to move here: Red moved last. Positions with Red to
                // move and no blue car are terminal, not predecessors.
                if blue == 0 {
                    return;
                }
                for (k, &s) in reds.iter().enumerate() {
                    let c = blk.comp[s as usize];
                    for &t in &self.geo.back[1][s as usize] {
                        if t == NONE || occ >> t & 1 == 1 {
                            continue;
                        }
                        let c2 = blk.comp[t as usize];
                        let m2 = m & !(1 << c) | 1 << c2;
                        let pidx =
                            ((rb * nr + rank_after_red_step(binom, rr, k, c, c2, m2)) << 1) | 1;
                        if lost {
                            self.make_win(pidx, d + 1, class);
                        } else {
                            let pred = (blue, red & !(1 << s) | 1 << t);
                            self.count_down(pidx, pred.0, pred.1, Side::Red, d, class);
                        }
                    }
                }
            } else {
                // Red to move here: Blue moved last.
                if red == 0 {
                    return;
                }
                // The predecessors lie in other blocks, far apart: compute
                // them all and prefetch their bytes before the first update,
                // so the cache misses overlap.
                let mut preds = [(0u64, 0u64); 16];
                let mut np = 0;
                for st in &blk.back {
                    if red >> st.to & 1 == 1 || !own.block(st.rb) {
                        continue;
                    }
                    let pidx = (st.rb * nr + rank_with(binom, &st.comp, reds)) << 1;
                    prefetch(&self.cells[pidx as usize]);
                    preds[np] = (pidx, blue & !(1 << st.from) | 1 << st.to);
                    np += 1;
                }
                for &(pidx, pb) in &preds[..np] {
                    if lost {
                        self.make_win(pidx, d + 1, class);
                    } else {
                        self.count_down(pidx, pb, red, Side::Blue, d, class);
                    }
                }
            }
        }
    }

    /// Marks `idx` (of `class`) pending (a word may hold two blocks of
    /// different owners, hence the atomic or).
    #[inline]
    fn set_pending(&self, idx: u64, class: u8) {
        let k = idx >> 1;
        self.pending[class as usize][(k / 64) as usize].fetch_or(1 << (k % 64), Relaxed);
    }

    /// A predecessor (of `class`) of a loss in d − 1: a win in d unless it
    /// wins sooner. Only the owner of `idx` calls this.
    fn make_win(&self, idx: u64, d: u8, class: u8) {
        if d > MAX_DEPTH {
            self.overflowed(class, u32::from(d));
            return;
        }
        let new = Value::Win(d).to_byte();
        let cell = &self.cells[idx as usize];
        let cur = cell.load(Relaxed);
        if cur < WIN_BASE || (cur < LOSS_BASE && cur > new) {
            cell.store(new, Relaxed);
            self.set_pending(idx, class);
            self.mark(self.block_of(idx), d, class);
        }
    }

    /// A predecessor of a win in d: one move fewer left to try; at zero it
    /// is lost. Only the owner of `idx` calls this.
    fn count_down(&self, idx: u64, blue: u64, red: u64, side: Side, d: u8, class: u8) {
        let cell = &self.cells[idx as usize];
        let cur = cell.load(Relaxed);
        if cur >= WIN_BASE {
            return;
        }
        debug_assert!(cur > 0, "counter underflow");
        if cur > 1 {
            cell.store(cur - 1, Relaxed);
            return;
        }
        let e = self.exits(blue, red, side);
        debug_assert!(!e.draw && e.loss_min.is_none());
        let depth = 1 + e.win_max.map_or(d, |w| w.max(d));
        if depth > MAX_DEPTH {
            self.overflowed(class, u32::from(depth));
            return;
        }
        cell.store(Value::Loss(depth).to_byte(), Relaxed);
        self.set_pending(idx, class);
        self.mark(self.block_of(idx), depth, class);
    }
}
