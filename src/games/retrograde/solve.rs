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
//! **Memory**: two bytes per position of the layer (value, counter) and the
//! flags, on top of the solved child layers the caller holds
//! ([`working_bytes`]).

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering::Relaxed};

use super::rules::{LayeredGame, Terminal};

/// First byte of the win range: a win in d plies is `WIN_BASE + d`.
pub const WIN_BASE: u8 = 16;
/// First byte of the loss range: a loss in d plies is `LOSS_BASE + d`.
pub const LOSS_BASE: u8 = 136;
/// Largest depth the byte encoding holds: 119 plies.
pub const MAX_DEPTH: u8 = LOSS_BASE - WIN_BASE - 1;
/// Positions per flag block.
pub const BLOCK: u64 = 1 << 12;

/// The value of a position for the player to move, and its byte encoding
/// in solved layers:
///
/// | byte | value |
/// |---|---|
/// | 0 | draw |
/// | 16 + d (16 ..= 135) | win for the player to move in d plies |
/// | 136 + d (136 ..= 255) | loss for the player to move in d plies |
///
/// (Dodgem's layer shards use the same encoding, so the engine's bytes and
/// Dodgem's own solver's can be compared directly.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// The player to move wins in this many plies.
    Win(u8),
    /// The player to move loses in this many plies.
    Loss(u8),
    /// Neither player can force a win.
    Draw,
}

impl Value {
    /// The byte of this value (table above).
    ///
    /// # Panics
    /// If the depth exceeds [`MAX_DEPTH`].
    pub fn to_byte(self) -> u8 {
        match self {
            Value::Draw => 0,
            Value::Win(d) => {
                assert!(d <= MAX_DEPTH, "depth {d} past the byte encoding");
                WIN_BASE + d
            }
            Value::Loss(d) => {
                assert!(d <= MAX_DEPTH, "depth {d} past the byte encoding");
                LOSS_BASE + d
            }
        }
    }

    /// Decodes a byte of a solved layer; `None` for the unused bytes 1 … 15.
    pub fn from_byte(b: u8) -> Option<Value> {
        match b {
            0 => Some(Value::Draw),
            1..WIN_BASE => None,
            WIN_BASE..LOSS_BASE => Some(Value::Win(b - WIN_BASE)),
            _ => Some(Value::Loss(b - LOSS_BASE)),
        }
    }

    /// The value for the player who moved into a position of this value.
    pub fn for_mover(self) -> Value {
        match self {
            Value::Win(d) => Value::Loss(d + 1),
            Value::Loss(d) => Value::Win(d + 1),
            Value::Draw => Value::Draw,
        }
    }

    /// `win`, `loss` or `draw`.
    pub fn word(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Loss(_) => "loss",
            Value::Draw => "draw",
        }
    }

    /// The depth in plies (`None` for a draw).
    pub fn depth(self) -> Option<u8> {
        match self {
            Value::Win(d) | Value::Loss(d) => Some(d),
            Value::Draw => None,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Win(d) => write!(f, "win in {d}"),
            Value::Loss(d) => write!(f, "loss in {d}"),
            Value::Draw => write!(f, "draw"),
        }
    }
}

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
    /// A position deeper than the byte encoding holds.
    #[error(
        "layer {layer} has positions at least {depth} plies deep; one byte per position holds depths up to {MAX_DEPTH}"
    )]
    DepthOverflow {
        /// The layer (its name).
        layer: String,
        /// A depth past [`MAX_DEPTH`] that solving reached.
        depth: u32,
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
    pub max_win_depth: u8,
    /// Largest depth of a lost position (0 if none).
    pub max_loss_depth: u8,
}

impl LayerStats {
    /// Counts the bytes of a solved layer.
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
                s.max_win_depth = d;
            }
            if l > 0 {
                s.max_loss_depth = d;
            }
        }
        s
    }
}

/// Bytes [`solve_layer`] allocates for `layer`, on top of the solved child
/// layers the caller holds (one byte per position each): a value byte and a
/// counter byte per position, a pending bit per position, and one flag bit
/// per block of [`BLOCK`] positions and depth.
pub fn working_bytes(game: &impl LayeredGame, layer: usize) -> u64 {
    let size = game.layer_size(layer);
    2 * size
        + size.div_ceil(64) * 8
        + (u64::from(MAX_DEPTH) + 2) * size.div_ceil(BLOCK).div_ceil(64) * 8
}

/// Bytes of the solved child layers [`solve_layer`] reads for `layer`.
pub fn child_bytes(game: &impl LayeredGame, layer: usize) -> u64 {
    game.child_layers(layer)
        .iter()
        .map(|&c| game.layer_size(c))
        .sum()
}

/// Solves `layer` of `game`: one value byte per rank ([`Value::to_byte`]).
///
/// `below` holds the solved bytes of every layer of
/// [`LayeredGame::child_layers`]`(layer)`, as `(layer, bytes)`. `threads` ≥
/// 1 threads share the work; the bytes are the same for any number.
///
/// # Errors
/// [`SolveError::MissingChild`] if a child layer is missing or has the wrong
/// length; [`SolveError::DepthOverflow`] if a depth passes [`MAX_DEPTH`];
/// [`SolveError::Contract`] if a non-terminal position has no move, a move
/// leaves for a layer that is not a child, or a counter overflows.
pub fn solve_layer<G: LayeredGame>(
    game: &G,
    layer: usize,
    below: &[(usize, &[u8])],
    threads: usize,
) -> Result<Vec<u8>, SolveError> {
    let name = game.layer_name(layer);
    let mut children: Vec<Option<&[u8]>> = vec![None; game.layer_count()];
    for c in game.child_layers(layer) {
        let got = below.iter().find(|(l, _)| *l == c).map(|(_, b)| *b);
        let why = match got {
            None => Some("which was not given".to_string()),
            Some(b) if b.len() as u64 != game.layer_size(c) => Some(format!(
                "given with {} bytes for its {} positions",
                b.len(),
                game.layer_size(c)
            )),
            Some(_) => None,
        };
        if let Some(why) = why {
            return Err(SolveError::MissingChild {
                layer: name,
                child: game.layer_name(c),
                why,
            });
        }
        children[c] = got;
    }
    let size = game.layer_size(layer);
    let mut values = vec![0u8; size as usize];
    let mut counters = vec![0u8; size as usize];
    let blocks = size.div_ceil(BLOCK);
    let words = blocks.div_ceil(64) as usize;
    {
        let s = Solver {
            game,
            layer,
            children,
            values: atomic_bytes(&mut values),
            counters: atomic_bytes(&mut counters),
            pending: (0..size.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            dirty: (0..=MAX_DEPTH as usize)
                .map(|_| (0..words).map(|_| AtomicU64::new(0)).collect())
                .collect(),
            overflow: AtomicU64::new(0),
            broken: std::sync::Mutex::new(None),
            failed: AtomicBool::new(false),
            size,
            reduce: game.reduces_by_symmetry(),
        };
        par_blocks(threads, &(0..blocks).collect::<Vec<_>>(), |blk| {
            s.seed(blk);
        });
        s.check(&name)?;
        for d in 0..=MAX_DEPTH {
            let todo = s.dirty_blocks(d);
            if todo.is_empty() {
                continue;
            }
            par_blocks(threads, &todo, |blk| s.propagate(blk, d));
            s.check(&name)?;
        }
        if s.reduce {
            par_blocks(threads, &(0..blocks).collect::<Vec<_>>(), |blk| {
                s.fill(blk);
            });
        }
    }
    Ok(values)
}

/// Views a byte vector as atomics for the solving threads.
fn atomic_bytes(v: &mut [u8]) -> &[AtomicU8] {
    // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `v` is
    // borrowed mutably (exclusively) for the life of the view.
    unsafe { &*(v as *mut [u8] as *const [AtomicU8]) }
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

struct Solver<'a, G: LayeredGame> {
    game: &'a G,
    layer: usize,
    /// The solved bytes of each child layer, by layer id.
    children: Vec<Option<&'a [u8]>>,
    values: &'a [AtomicU8],
    counters: &'a [AtomicU8],
    /// One bit per position: valued and not yet taken by the propagation.
    pending: Vec<AtomicU64>,
    /// `dirty[d]`: one bit per block holding some value of depth d.
    dirty: Vec<Vec<AtomicU64>>,
    /// The first depth past [`MAX_DEPTH`] reached (0: none).
    overflow: AtomicU64,
    /// The first contract broken: (rank, why).
    broken: std::sync::Mutex<Option<(u64, String)>>,
    failed: AtomicBool,
    size: u64,
    /// Solve canonical positions only ([`LayeredGame::reduces_by_symmetry`]).
    reduce: bool,
}

/// What the moves of a position into the child layers say.
#[derive(Default)]
struct Exits {
    in_layer: u32,
    /// Least depth of a lost child (a win in one more).
    lost_child: Option<u8>,
    /// Deepest won child.
    deepest_win: Option<u8>,
    drawn_child: bool,
    /// A move left for a layer that is not a child.
    stray: Option<usize>,
}

impl<G: LayeredGame> Solver<'_, G> {
    fn fail(&self, rank: u64, why: String) {
        self.failed.store(true, Relaxed);
        let mut b = self.broken.lock().unwrap_or_else(|e| e.into_inner());
        if b.as_ref().is_none_or(|(r, _)| rank < *r) {
            *b = Some((rank, why));
        }
    }

    fn check(&self, name: &str) -> Result<(), SolveError> {
        if !self.failed.load(Relaxed) {
            return Ok(());
        }
        let over = self.overflow.load(Relaxed);
        if over > 0 {
            return Err(SolveError::DepthOverflow {
                layer: name.to_string(),
                depth: over as u32,
            });
        }
        let b = self.broken.lock().unwrap_or_else(|e| e.into_inner());
        let (rank, why) = b.clone().unwrap_or((0, "unknown".into()));
        Err(SolveError::Contract {
            layer: name.to_string(),
            rank,
            why,
        })
    }

    fn mark(&self, rank: u64, depth: u8) {
        self.pending[(rank / 64) as usize].fetch_or(1 << (rank % 64), Relaxed);
        let blk = rank / BLOCK;
        let word = &self.dirty[depth as usize][(blk / 64) as usize];
        // Most marks find the flag raised: read before writing, so threads
        // do not fight over the flag's cache line.
        if word.load(Relaxed) >> (blk % 64) & 1 == 0 {
            word.fetch_or(1 << (blk % 64), Relaxed);
        }
    }

    fn set(&self, rank: u64, v: Value) {
        let d = v.depth().unwrap_or(0);
        if d > MAX_DEPTH {
            self.overflow_at(u32::from(d));
            return;
        }
        self.values[rank as usize].store(v.to_byte(), Relaxed);
        if v != Value::Draw {
            self.mark(rank, d);
        }
    }

    fn overflow_at(&self, depth: u32) {
        self.failed.store(true, Relaxed);
        let _ = self
            .overflow
            .compare_exchange(0, u64::from(depth), Relaxed, Relaxed);
    }

    fn dirty_blocks(&self, d: u8) -> Vec<u64> {
        let mut out = Vec::new();
        for (w, word) in self.dirty[d as usize].iter().enumerate() {
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
        self.game.children(p, &mut |c| {
            let l = self.game.layer_of(&c);
            if l == self.layer {
                e.in_layer += 1;
                return;
            }
            let Some(bytes) = self.children.get(l).copied().flatten() else {
                e.stray = Some(l);
                return;
            };
            let r = self.game.rank_in(l, &c);
            match Value::from_byte(bytes[r as usize]) {
                Some(Value::Loss(d)) => {
                    e.lost_child = Some(e.lost_child.map_or(d, |x| x.min(d)));
                }
                Some(Value::Win(d)) => {
                    e.deepest_win = Some(e.deepest_win.map_or(d, |x| x.max(d)));
                }
                Some(Value::Draw) | None => e.drawn_child = true,
            }
        });
        e
    }

    fn seed(&self, blk: u64) {
        let (start, end) = (blk * BLOCK, ((blk + 1) * BLOCK).min(self.size));
        self.game
            .for_each_position(self.layer, start, end, &mut |r, p| {
                if self.reduce && !self.game.is_canonical(&p) {
                    return;
                }
                match self.game.terminal(&p) {
                    Some(Terminal::Win) => return self.set(r, Value::Win(0)),
                    Some(Terminal::Loss) => return self.set(r, Value::Loss(0)),
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
                    return self.set(r, Value::Win(d + 1));
                }
                if e.in_layer == 0 {
                    if !e.drawn_child {
                        self.set(r, Value::Loss(e.deepest_win.unwrap_or(0) + 1));
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
                self.counters[r as usize].store(count as u8, Relaxed);
            });
    }

    /// The depth of a loss found at depth `d`: every child of `p` is won,
    /// those inside the layer at depths ≤ `d` (they were taken in order of
    /// depth, the last at `d`), so the loss lasts 1 + the deepest of `d`
    /// and the wins among its children in the child layers (its longest
    /// resistance). Only moves leaving the layer are ranked.
    fn loss_depth(&self, p: &G::Position, d: u8) -> u32 {
        let mut deepest = d;
        self.game.children(p, &mut |c| {
            let l = self.game.layer_of(&c);
            if l == self.layer {
                return;
            }
            let r = self.game.rank_in(l, &c);
            let b = self.children[l].expect("checked at seeding")[r as usize];
            if let Some(Value::Win(w)) = Value::from_byte(b) {
                deepest = deepest.max(w);
            }
        });
        u32::from(deepest) + 1
    }

    fn propagate(&self, blk: u64, d: u8) {
        let (start, end) = (blk * BLOCK, ((blk + 1) * BLOCK).min(self.size));
        let (win, loss) = (WIN_BASE + d, LOSS_BASE + d);
        let mut buf = Vec::new();
        // BLOCK is a multiple of 64: the block's pending words are its own.
        for w in start / 64..end.div_ceil(64) {
            let word = &self.pending[w as usize];
            let mut bits = word.load(Relaxed);
            let mut taken = 0u64;
            while bits != 0 {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                let r = w * 64 + u64::from(bit);
                let v = self.values[r as usize].load(Relaxed);
                if v == win || v == loss {
                    taken |= 1 << bit;
                    if self.reduce {
                        self.take_reduced(r, v, d, &mut buf);
                    } else {
                        self.take(r, v, d);
                    }
                }
            }
            if taken != 0 {
                word.fetch_and(!taken, Relaxed);
            }
        }
    }

    /// Gives the images of every canonical position of the block its value
    /// (after solving with symmetry reduction; draws, 0, are there already).
    /// Each position that is not canonical has one canonical image, so no
    /// cell is written twice with different values, and canonical cells are
    /// only read.
    fn fill(&self, blk: u64) {
        let (start, end) = (blk * BLOCK, ((blk + 1) * BLOCK).min(self.size));
        self.game
            .for_each_position(self.layer, start, end, &mut |r, p| {
                let v = self.values[r as usize].load(Relaxed);
                if v == 0 || !self.game.is_canonical(&p) {
                    return;
                }
                self.game.symmetries(&p, &mut |s| {
                    if s != p {
                        let rs = self.game.rank_in(self.layer, &s);
                        self.values[rs as usize].store(v, Relaxed);
                    }
                });
            });
    }

    /// Makes the canonical position of rank `rq` a win in `d + 1` unless it
    /// wins sooner (its child of value loss in `d` was found).
    fn win_parent(&self, rq: u64, d: u8) {
        if d >= MAX_DEPTH {
            return self.overflow_at(u32::from(d) + 1);
        }
        let new = WIN_BASE + d + 1;
        let upd = self.values[rq as usize].fetch_update(Relaxed, Relaxed, |cur| {
            (cur == 0 || (cur > new && cur < LOSS_BASE)).then_some(new)
        });
        if upd.is_ok() {
            self.mark(rq, d + 1);
        }
    }

    /// Counts `m` of the moves of `q` (rank `rq`) as leading to positions
    /// won at depth `d`; the last makes `q` a loss.
    fn count_won_moves(&self, rq: u64, q: &G::Position, m: u8, d: u8) {
        let cell = &self.values[rq as usize];
        if (WIN_BASE..LOSS_BASE).contains(&cell.load(Relaxed)) {
            // Won already (a win needs no counting).
            return;
        }
        let Ok(before) =
            self.counters[rq as usize].fetch_update(Relaxed, Relaxed, |c| c.checked_sub(m))
        else {
            return self.fail(rq, "more in-layer parents than moves".into());
        };
        if before == m && cell.load(Relaxed) == 0 {
            let e = self.loss_depth(q, d);
            if e > u32::from(MAX_DEPTH) {
                return self.overflow_at(e);
            }
            let e = e as u8;
            if cell
                .compare_exchange(0, LOSS_BASE + e, Relaxed, Relaxed)
                .is_ok()
            {
                self.mark(rq, e);
            }
        }
    }

    /// [`Solver::take`] with symmetry reduction: the parents of the
    /// canonical rank `r` are replaced by their canonical images, and a won
    /// `r` counts, for each canonical parent, its moves into `r`'s class
    /// (module docs). `buf` is scratch space.
    fn take_reduced(&self, r: u64, v: u8, d: u8, buf: &mut Vec<(u64, u32, G::Position)>) {
        let p = self.game.unrank(self.layer, r);
        buf.clear();
        self.game.parents(&p, &mut |q| {
            let (c, k) = self.game.canonical(&q);
            buf.push((self.game.rank_in(self.layer, &c), k, c));
        });
        if buf.iter().any(|e| e.0 >= self.size) {
            return self.fail(r, "a parent lies outside the layer".into());
        }
        if v == LOSS_BASE + d {
            for &(rq, _, _) in buf.iter() {
                self.win_parent(rq, d);
            }
            return;
        }
        let (_, kc) = self.game.canonical(&p);
        buf.sort_unstable_by_key(|e| e.0);
        let mut i = 0;
        while i < buf.len() {
            let (rq, kq, q) = buf[i];
            let mut j = i;
            while j < buf.len() && buf[j].0 == rq {
                j += 1;
            }
            let moves = u64::from(kq) * (j - i) as u64;
            i = j;
            if kc == 0 || !moves.is_multiple_of(u64::from(kc)) || moves / u64::from(kc) > 255 {
                return self.fail(
                    rq,
                    format!(
                        "symmetry reduction: {moves} / stabiliser {kc} is not a move count (a broken canonical image or stabiliser)"
                    ),
                );
            }
            self.count_won_moves(rq, &q, (moves / u64::from(kc)) as u8, d);
        }
    }

    /// Visits the parents of rank `r`, of value byte `v` at depth `d`.
    fn take(&self, r: u64, v: u8, d: u8) {
        let loss = LOSS_BASE + d;
        let p = self.game.unrank(self.layer, r);
        self.game.parents(&p, &mut |q| {
            // In this layer by contract (checked by `check_rules`).
            let rq = self.game.rank_in(self.layer, &q);
            if rq >= self.size {
                return self.fail(r, "a parent lies outside the layer".into());
            }
            if v == loss {
                self.win_parent(rq, d);
            } else {
                self.count_won_moves(rq, &q, 1, d);
            }
        });
    }
}
