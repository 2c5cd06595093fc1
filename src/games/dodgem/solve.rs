//! Retrograde analysis of one layer (`BRIEF.md` §Dodgem, seed 002).
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
//! Positions of depth d are found through a *pending* bitset (valued, not
//! yet taken) restricted to the blocks flagged as holding some value of
//! depth d (one bit per block and depth), so no queue is stored: the working
//! memory is the layer's bytes (one per position; the counters live in the
//! bytes 1 … 15 of the value encoding), one bit per position, and the two
//! solved layers it reads. With several threads, thread t owns the blocks
//! rb ≡ t (mod threads) and alone writes their bytes (plain loads and
//! stores; only the pending bits, whose words can straddle two blocks, are
//! set with an atomic or); every thread looks at every position of depth d
//! and updates the predecessors it owns. The result does not depend on the
//! order in which a depth's positions are taken (wins take the minimum
//! depth, counters only count), hence not on the thread count.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

use super::block::{
    Block, Geometry, NONE, OFF, as_atomic_words, par_range, rank_after_red_step, rank_mask,
    rank_with, zeroed_bytes, zeroed_words,
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
    /// index order. The empty board is left out (`BRIEF.md`: not a position of play).
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
/// # Panics
/// If a needed layer below is missing or has the wrong length, or a depth
/// exceeds [`MAX_DEPTH`] (impossible for n ≤ 5).
pub fn solve_layer_with_threads(
    layer: &Layer,
    below_blue: Option<&[u8]>,
    below_red: Option<&[u8]>,
    threads: usize,
) -> Vec<u8> {
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
    let mut pending = zeroed_words(layer.len().div_ceil(64) as usize);
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
            dirty: (0..=MAX_DEPTH as usize)
                .map(|_| {
                    (0..layer.blue_ranks().div_ceil(64))
                        .map(|_| AtomicU64::new(0))
                        .collect()
                })
                .collect(),
            pending: as_atomic_words(&mut pending),
            back: std::sync::OnceLock::new(),
            max_depth: AtomicU8::new(0),
        };
        par_range(threads, s.blocks, |rb| s.seed_block(rb));
        let _ = s.back.set(
            (0..s.blocks)
                .map(|rb| Block::backward_only(layer, &s.geo, rb))
                .collect(),
        );
        // Small layers are not worth a thread per depth.
        let threads = if layer.len() < 1 << 20 { 1 } else { threads };
        // Thread t owns the blocks rb ≡ t (mod threads) and is the only one
        // to write their cells; every thread looks at every position of the
        // current depth and updates the predecessors it owns. Interleaved
        // blocks keep the threads' shares even at every depth.
        let threads = threads.clamp(1, s.blocks as usize) as u64;
        let own = |t: u64| Owner { t, threads };
        let mut d = 0u8;
        while d <= s.max_depth.load(Relaxed) {
            if threads == 1 {
                s.propagate(d, own(0));
            } else {
                std::thread::scope(|sc| {
                    for t in 0..threads {
                        let (s, r) = (&s, own(t));
                        sc.spawn(move || s.propagate(d, r));
                    }
                });
            }
            d += 1;
        }
    }
    for v in &mut bytes {
        if *v < WIN_BASE {
            *v = 0;
        }
    }
    bytes
}

/// The blocks a thread owns: rb ≡ t (mod threads).
#[derive(Clone, Copy)]
struct Owner {
    t: u64,
    threads: u64,
}

impl Owner {
    #[inline]
    fn block(&self, rb: u64) -> bool {
        self.threads == 1 || rb % self.threads == self.t
    }
}

/// Square masks of the board's edges, for counting moves on bit boards.
struct Edges {
    n: u32,
    /// Every square.
    full: u64,
    /// File a (x = 0).
    first_file: u64,
    /// The last file (x = n − 1), Blue's exit edge.
    last_file: u64,
    /// The last rank (y = n − 1), Red's exit edge.
    last_rank: u64,
}

impl Edges {
    fn new(n: usize) -> Edges {
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
    /// `dirty[d]`: one bit per block holding some value of depth d.
    dirty: Vec<Vec<AtomicU64>>,
    /// One bit per index: valued but not yet propagated.
    pending: &'a [AtomicU64],
    /// Backward-step tables of every block, built once after seeding.
    back: std::sync::OnceLock<Vec<Block>>,
    max_depth: AtomicU8,
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
    /// Marks `block` as holding a value of depth `d`.
    #[inline]
    fn mark(&self, block: u64, d: u8) {
        assert!(d <= MAX_DEPTH, "depth {d} exceeds the byte encoding");
        let w = &self.dirty[d as usize][(block / 64) as usize];
        if w.load(Relaxed) >> (block % 64) & 1 == 0 {
            w.fetch_or(1 << (block % 64), Relaxed);
        }
        if self.max_depth.load(Relaxed) < d {
            self.max_depth.fetch_max(d, Relaxed);
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

    /// The seed byte from the in-layer move count and the exits' values.
    fn seed_from(inside: u8, e: &Exits, any_exit: bool) -> u8 {
        if !any_exit {
            return if inside == 0 { WIN_BASE } else { inside };
        }
        if let Some(d) = e.loss_min {
            return Value::Win(d + 1).to_byte();
        }
        if inside == 0 {
            return match (e.draw, e.win_max) {
                (true, _) => 0,
                (false, Some(d)) => Value::Loss(d + 1).to_byte(),
                (false, None) => unreachable!("an exit exists"),
            };
        }
        inside + u8::from(e.draw)
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
        let mut depths = 0u128;
        let (mut word_at, mut word) = (0u64, 0u64);
        for rr in 0..nr {
            let m = l.red_free_set(rr);
            let (reds, k, red) = blk.reds(m);
            let reds = &reds[..k];
            let free = !(blue | red) & edges.full;
            // Blue to move: in-layer moves right, up, down onto free squares
            // (counted on bit boards), exits from the last file.
            let vb = if red == 0 {
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
                Self::seed_from(inside as u8, &e, !blue_exits.is_empty())
            };
            // Red to move: up, left, right; exits from the last rank.
            let vr = if blue == 0 {
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
                Self::seed_from(inside as u8, &e, leaving != 0)
            };
            for (side, v) in [(0u64, vb), (1, vr)] {
                let idx = ((base + rr) << 1) | side;
                self.cells[idx as usize].store(v, Relaxed);
                if v >= WIN_BASE {
                    let d = if v >= LOSS_BASE {
                        v - LOSS_BASE
                    } else {
                        v - WIN_BASE
                    };
                    depths |= 1 << d;
                    if idx / 64 != word_at {
                        if word != 0 {
                            self.pending[word_at as usize].fetch_or(word, Relaxed);
                        }
                        word_at = idx / 64;
                        word = 0;
                    }
                    word |= 1 << (idx % 64);
                }
            }
        }
        if word != 0 {
            self.pending[word_at as usize].fetch_or(word, Relaxed);
        }
        for d in bits(depths as u64).chain(bits((depths >> 64) as u64).map(|d| d + 64)) {
            self.mark(rb, d as u8);
        }
    }

    /// Takes every position of depth `d` and updates its predecessors in
    /// the blocks of `own`; clears the pending bits of owned positions taken
    /// at earlier depths.
    fn propagate(&self, d: u8, own: Owner) {
        let l = self.layer;
        let nr = l.red_ranks();
        let win = WIN_BASE + d;
        let loss = LOSS_BASE + d;
        let dirty = &self.dirty[d as usize];
        for rb in 0..self.blocks {
            if dirty[(rb / 64) as usize].load(Relaxed) >> (rb % 64) & 1 == 0 {
                continue;
            }
            let base = (rb * nr) << 1;
            let end = base + 2 * nr;
            // Predecessors of Blue-to-move positions (Red moved last) lie in
            // this block; only its owners need to look at them.
            let block_owned = own.block(rb);
            let blk = &self.back.get().expect("built after seeding")[rb as usize];
            for w in base / 64..end.div_ceil(64) {
                let word = &self.pending[w as usize];
                let mut bits = word.load(Relaxed);
                if w == base / 64 {
                    bits &= u64::MAX << (base % 64);
                }
                if w == end / 64 {
                    bits &= (1u64 << (end % 64)) - 1;
                }
                while bits != 0 {
                    let idx = w * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    let v = self.cells[idx as usize].load(Relaxed);
                    if v != win && v != loss {
                        let depth = if v >= LOSS_BASE {
                            v - LOSS_BASE
                        } else {
                            v - WIN_BASE
                        };
                        if block_owned && depth < d {
                            word.fetch_and(!(1 << (idx % 64)), Relaxed);
                        }
                        continue;
                    }
                    if idx & 1 == 0 && !block_owned {
                        continue;
                    }
                    self.take(blk, (idx - base) as usize, v == loss, d, &own);
                }
            }
        }
    }

    /// Updates the in-layer predecessors of the position at offset `off`
    /// of block `blk`, whose value has depth `d` and is a loss if `lost`.
    fn take(&self, blk: &Block, off: usize, lost: bool, d: u8, own: &Owner) {
        let l = self.layer;
        let binom = l.binom();
        let nr = l.red_ranks();
        let rb = blk.rb;
        {
            let blue = blk.blue;
            let rr = (off >> 1) as u64;
            let m = l.red_free_set(rr);
            let (reds, k, red) = blk.reds(m);
            let reds = &reds[..k];
            let occ = blue | red;
            if off & 1 == 0 {
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
                            self.make_win(pidx, d + 1);
                        } else {
                            let pred = (blue, red & !(1 << s) | 1 << t);
                            self.count_down(pidx, pred.0, pred.1, Side::Red, d);
                        }
                    }
                }
            } else {
                // Red to move here: Blue moved last.
                if red == 0 {
                    return;
                }
                for st in &blk.back {
                    if red >> st.to & 1 == 1 || !own.block(st.rb) {
                        continue;
                    }
                    let pidx = (st.rb * nr + rank_with(binom, &st.comp, reds)) << 1;
                    if lost {
                        self.make_win(pidx, d + 1);
                    } else {
                        let pb = blue & !(1 << st.from) | 1 << st.to;
                        self.count_down(pidx, pb, red, Side::Blue, d);
                    }
                }
            }
        }
    }

    /// Marks `idx` pending (a word may hold two blocks of different
    /// owners, hence the atomic or).
    #[inline]
    fn set_pending(&self, idx: u64) {
        self.pending[(idx / 64) as usize].fetch_or(1 << (idx % 64), Relaxed);
    }

    /// A predecessor of a loss in d − 1: a win in d unless it wins sooner.
    /// Only the owner of `idx` calls this.
    fn make_win(&self, idx: u64, d: u8) {
        let new = Value::Win(d).to_byte();
        let cell = &self.cells[idx as usize];
        let cur = cell.load(Relaxed);
        if cur < WIN_BASE || (cur < LOSS_BASE && cur > new) {
            cell.store(new, Relaxed);
            self.set_pending(idx);
            self.mark(self.block_of(idx), d);
        }
    }

    /// A predecessor of a win in d: one move fewer left to try; at zero it
    /// is lost. Only the owner of `idx` calls this.
    fn count_down(&self, idx: u64, blue: u64, red: u64, side: Side, d: u8) {
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
        cell.store(Value::Loss(depth).to_byte(), Relaxed);
        self.set_pending(idx);
        self.mark(self.block_of(idx), depth);
    }
}
