//! Positions reachable from the start, layer by layer from the top.
//!
//! The start lies in layer `(n−1, n−1)`. A layer's reachable positions are
//! the closure under in-layer moves of its seeds: the start, and the
//! positions entered by a car leaving from the reachable positions of
//! `(a+1, b)` (a Blue car) and `(a, b+1)` (a Red car). Play stops at
//! terminal positions (the opponent has no car, or the mover has no move),
//! so nothing is reached from them.
//!
//! Two ways to the same set:
//!
//! - **Forward** ([`reach_layer_forward`]): every reached position marks its
//!   successors, until no position is left to expand. Used for the top
//!   layer, whose only seed is the start.
//! - **Sweeps** ([`reach_layer_with_threads`] below the top): each position
//!   asks whether one of its predecessors is reached, and stops at the first
//!   that is. Seeds first (a predecessor in the layer above), then sweeps in
//!   index order, alternately up and down, over the positions not yet
//!   reached, until a sweep reaches none. Below the top nearly every
//!   position is reached (5×5 (3, 4): all but 1,238 of 33,649,000), mostly
//!   as a seed or through its first predecessor, so this looks at far fewer
//!   moves than expanding every position; the seeds are found from the
//!   positions of this layer instead of from every reached position above.
//!   The result is the least set closed under the rules, as the forward
//!   closure's: a position is marked only when a predecessor is, and the
//!   last sweep finds no unmarked position with a marked predecessor.
//!   From the start alone (the top layer) the sweeps are slow: 5×5 (4, 4)
//!   needs 25 of them and 39 s, against 8.5 s forward.

use super::Layer;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::block::{
    Block, Geometry, NONE, OFF, as_atomic_words, par_range, rank_after_red_step, rank_mask,
    rank_with, zeroed_words,
};

/// One bit per index of a layer (bit `i % 64` of word `i / 64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachBits {
    len: u64,
    words: Vec<u64>,
}

impl ReachBits {
    /// All clear, for a layer of `len` indices.
    pub fn new(len: u64) -> ReachBits {
        ReachBits {
            len,
            words: vec![0; len.div_ceil(64) as usize],
        }
    }
    /// Number of indices.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether the layer has no index.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Whether index `i` is reachable.
    #[inline]
    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    /// Marks `i`; returns whether it was new.
    #[inline]
    pub fn set(&mut self, i: u64) -> bool {
        let w = &mut self.words[(i / 64) as usize];
        let new = *w >> (i % 64) & 1 == 0;
        *w |= 1 << (i % 64);
        new
    }
    /// Number of reachable indices.
    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
    /// The reachable indices, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(k, &w)| {
            let mut m = w;
            std::iter::from_fn(move || {
                (m != 0).then(|| {
                    let b = m.trailing_zeros() as u64;
                    m &= m - 1;
                    k as u64 * 64 + b
                })
            })
        })
    }
    /// (wins, losses, draws) among the reachable indices of `values`, the
    /// solved bytes of the same layer ([`Value::to_byte`](super::Value::to_byte)).
    ///
    /// # Panics
    /// If `values` is shorter than the layer.
    pub fn value_counts(&self, values: &[u8]) -> (u64, u64, u64) {
        assert!(values.len() as u64 >= self.len, "values of the layer");
        // Two histograms, so equal neighbouring bytes do not wait on one counter.
        let mut h = [[0u64; 256]; 2];
        for (k, &w) in self.words.iter().enumerate() {
            let base = k * 64;
            if w == u64::MAX {
                for pair in values[base..base + 64].chunks_exact(2) {
                    h[0][pair[0] as usize] += 1;
                    h[1][pair[1] as usize] += 1;
                }
                continue;
            }
            let mut m = w;
            while m != 0 {
                let b = m.trailing_zeros() as usize;
                m &= m - 1;
                h[b & 1][values[base + b] as usize] += 1;
            }
        }
        let count = |r: std::ops::Range<usize>| -> u64 { r.map(|v| h[0][v] + h[1][v]).sum() };
        let (win, loss) = (super::WIN_BASE as usize, super::LOSS_BASE as usize);
        (count(win..loss), count(loss..256), count(0..1))
    }
    /// Little-endian bytes of the words.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
    /// From [`ReachBits::to_le_bytes`]; `None` if the length is wrong or bits
    /// past `len` are set.
    pub fn from_le_bytes(len: u64, bytes: &[u8]) -> Option<ReachBits> {
        if bytes.len() as u64 != len.div_ceil(64) * 8 {
            return None;
        }
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        if !len.is_multiple_of(64) && words.last().is_some_and(|w| w >> (len % 64) != 0) {
            return None;
        }
        Some(ReachBits { len, words })
    }
}

/// Bytes [`reach_layer_with_threads`] holds for `layer` on top of the
/// reachable sets of the layers above it: one bit per position (two bitsets
/// for the top layer's forward closure: reached and to do), and the blue
/// steps of every block (forward and backward for the top layer, backward
/// only below it; at most three each per blue car).
pub fn reach_working_bytes(layer: &Layer) -> u64 {
    use super::block::BlueStep;
    let top = layer.board().cars();
    let forward = (layer.a(), layer.b()) == (top, top);
    let words = layer.len().div_ceil(64) * 8;
    let steps = 3 * layer.a() as u64 * if forward { 2 } else { 1 };
    let blocks = layer.blue_ranks()
        * (std::mem::size_of::<Block>() as u64 + steps * std::mem::size_of::<BlueStep>() as u64);
    words * if forward { 2 } else { 1 } + blocks + layer.table_bytes()
}

/// The reachable positions of `layer` on one thread; see [`reach_layer_with_threads`].
///
/// # Panics
/// As [`reach_layer_with_threads`].
pub fn reach_layer(
    layer: &Layer,
    from_blue_exit: Option<&ReachBits>,
    from_red_exit: Option<&ReachBits>,
) -> ReachBits {
    reach_layer_with_threads(layer, from_blue_exit, from_red_exit, 1)
}

/// The reachable positions of `layer`, given the reachable positions of the
/// layers above it: `from_blue_exit` = layer `(a+1, b)` (when a+1 ≤ n−1),
/// `from_red_exit` = layer `(a, b+1)` (when b+1 ≤ n−1). The top layer is
/// closed forward from the start on `threads` ≥ 1 threads; the others by
/// sweeps on one thread (see the module doc). The result is the same for
/// any number of threads.
///
/// # Panics
/// If a layer above that exists on the board is not given, or has the wrong length.
pub fn reach_layer_with_threads(
    layer: &Layer,
    from_blue_exit: Option<&ReachBits>,
    from_red_exit: Option<&ReachBits>,
    threads: usize,
) -> ReachBits {
    let top = layer.board().cars();
    if (layer.a(), layer.b()) == (top, top) {
        reach_layer_forward(layer, from_blue_exit, from_red_exit, threads)
    } else {
        reach_layer_by_sweeps(layer, from_blue_exit, from_red_exit)
    }
}

/// The reachable positions of `layer` (arguments as
/// [`reach_layer_with_threads`]) by marking the successors of every reached
/// position, on `threads` ≥ 1 threads. Any layer; the tests compare it with
/// the sweeps.
///
/// # Panics
/// As [`reach_layer_with_threads`].
pub fn reach_layer_forward(
    layer: &Layer,
    from_blue_exit: Option<&ReachBits>,
    from_red_exit: Option<&ReachBits>,
    threads: usize,
) -> ReachBits {
    let board = layer.board();
    let geo = Geometry::new(board);
    let (a, b) = (layer.a(), layer.b());
    let top = board.cars();
    let binom = layer.binom();
    let nwords = layer.len().div_ceil(64) as usize;
    let mut reached_words = zeroed_words(nwords);
    let mut todo_words = zeroed_words(nwords);
    let reached = as_atomic_words(&mut reached_words);
    let todo = as_atomic_words(&mut todo_words);
    let push = |j: u64| {
        let (w, bit) = ((j / 64) as usize, 1u64 << (j % 64));
        // A plain load first: most pushes find the position already reached,
        // and a locked read-modify-write costs far more than the load.
        if reached[w].load(Relaxed) & bit == 0 && reached[w].fetch_or(bit, Relaxed) & bit == 0 {
            todo[w].fetch_or(bit, Relaxed);
        }
    };
    if (a, b) == (top, top) {
        push(layer.index(&board.start()));
    }
    if a < top {
        // Blue cars leaving from reachable positions of (a+1, b), Blue to move.
        let up = Layer::new(board, a + 1, b);
        let bits = from_blue_exit.expect("layer (a+1, b) is needed");
        assert_eq!(bits.len(), up.len(), "layer ({}, {b}) length", a + 1);
        par_range(threads, up.blue_ranks(), |rb| {
            let mut blk: Option<Block> = None;
            let base = rb * up.red_ranks();
            for rr in 0..up.red_ranks() {
                if !bits.get((base + rr) << 1) {
                    continue;
                }
                let blk = blk.get_or_insert_with(|| Block::new(&up, Some(layer), &geo, rb));
                let (reds, k, red) = blk.reds(up.red_free_set(rr));
                if red == 0 {
                    continue;
                }
                for st in blk.fwd.iter().filter(|st| st.to == OFF) {
                    push(
                        ((st.rb * layer.red_ranks() + rank_with(binom, &st.comp, &reds[..k])) << 1)
                            | 1,
                    );
                }
            }
        });
    }
    if b < top {
        // Red cars leaving from reachable positions of (a, b+1), Red to move.
        let up = Layer::new(board, a, b + 1);
        let bits = from_red_exit.expect("layer (a, b+1) is needed");
        assert_eq!(bits.len(), up.len(), "layer ({a}, {}) length", b + 1);
        par_range(threads, up.blue_ranks(), |rb| {
            let mut blk: Option<Block> = None;
            let base = rb * up.red_ranks();
            for rr in 0..up.red_ranks() {
                if !bits.get(((base + rr) << 1) | 1) {
                    continue;
                }
                let blk = blk.get_or_insert_with(|| Block::new(&up, None, &geo, rb));
                if blk.blue == 0 {
                    continue;
                }
                let m = up.red_free_set(rr);
                let (reds, k, _) = blk.reds(m);
                for &s in &reds[..k] {
                    if geo.fwd[1][s as usize].contains(&OFF) {
                        let m2 = m & !(1 << blk.comp[s as usize]);
                        push((rb * layer.red_ranks() + rank_mask(binom, m2)) << 1);
                    }
                }
            }
        });
    }
    // Closure: sweep the todo bits until a sweep finds none. Every block's
    // step tables are built once (5×5 (4, 4): 12,650 blocks, about 15 MB).
    let blocks: Vec<Block> = (0..layer.blue_ranks())
        .map(|rb| Block::new(layer, None, &geo, rb))
        .collect();
    const WORDS: u64 = 1024;
    let nr = layer.red_ranks();
    loop {
        let any = AtomicBool::new(false);
        par_range(threads, (nwords as u64).div_ceil(WORDS), |chunk| {
            for w in chunk * WORDS..((chunk + 1) * WORDS).min(nwords as u64) {
                if todo[w as usize].load(Relaxed) == 0 {
                    continue;
                }
                let mut bits = todo[w as usize].swap(0, Relaxed);
                any.store(true, Relaxed);
                while bits != 0 {
                    let i = w * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    let rb = (i >> 1) / nr;
                    let blk = &blocks[rb as usize];
                    let m = layer.red_free_set((i >> 1) % nr);
                    let (reds, k, red) = blk.reds(m);
                    let reds = &reds[..k];
                    let blue = blk.blue;
                    if i & 1 == 0 {
                        if red == 0 {
                            continue; // Red has no car: play is over.
                        }
                        for st in &blk.fwd {
                            if red >> st.to & 1 == 0 {
                                push(((st.rb * nr + rank_with(binom, &st.comp, reds)) << 1) | 1);
                            }
                        }
                    } else {
                        if blue == 0 {
                            continue;
                        }
                        let occ = blue | red;
                        let r = (i >> 1) % nr;
                        for (k, &s) in reds.iter().enumerate() {
                            let c = blk.comp[s as usize];
                            for &t in &geo.fwd[1][s as usize] {
                                if t != NONE && t != OFF && occ >> t & 1 == 0 {
                                    let c2 = blk.comp[t as usize];
                                    let m2 = m & !(1 << c) | 1 << c2;
                                    let r2 = rank_after_red_step(binom, r, k, c, c2, m2);
                                    push((rb * nr + r2) << 1);
                                }
                            }
                        }
                    }
                }
            }
        });
        if !any.load(Relaxed) {
            break;
        }
    }
    ReachBits {
        len: layer.len(),
        words: reached_words,
    }
}

/// The reachable positions of `layer` by sweeps asking each unmarked
/// position for a marked predecessor (see the module doc); one thread.
///
/// # Panics
/// As [`reach_layer_with_threads`].
pub fn reach_layer_by_sweeps(
    layer: &Layer,
    from_blue_exit: Option<&ReachBits>,
    from_red_exit: Option<&ReachBits>,
) -> ReachBits {
    let board = layer.board();
    let geo = Geometry::new(board);
    let (a, b) = (layer.a(), layer.b());
    let top = board.cars();
    let binom = layer.binom();
    let nr = layer.red_ranks();
    let n = board.n();
    // Blue cars leave from the last file, Red cars from the last rank.
    let last_file = (0..n).fold(0u64, |m, y| m | 1 << (y * n + n - 1));
    let last_rank = ((1u64 << n) - 1) << (n * (n - 1));
    let up_blue = (a < top).then(|| {
        let up = Layer::new(board, a + 1, b);
        let bits = from_blue_exit.expect("layer (a+1, b) is needed");
        assert_eq!(bits.len(), up.len(), "layer ({}, {b}) length", a + 1);
        (up, bits)
    });
    let up_red = (b < top).then(|| {
        let up = Layer::new(board, a, b + 1);
        let bits = from_red_exit.expect("layer (a, b+1) is needed");
        assert_eq!(bits.len(), up.len(), "layer ({a}, {}) length", b + 1);
        (up, bits)
    });
    let blocks: Vec<Block> = (0..layer.blue_ranks())
        .map(|rb| Block::backward_only(layer, &geo, rb))
        .collect();
    let mut out = ReachBits::new(layer.len());
    if (a, b) == (top, top) {
        out.set(layer.index(&board.start()));
    }
    // Seeds: a car of the side that just moved left the board from a
    // reached, non-terminal position of the layer above (it had a car of
    // the other side, which is the side to move here).
    for (rb, blk) in blocks.iter().enumerate() {
        let blue = blk.blue;
        for rr in 0..nr {
            let m = layer.red_free_set(rr);
            let (_, _, red) = blk.reds(m);
            let free = !(blue | red);
            let base = (rb as u64 * nr + rr) << 1;
            // Blue to move: a Red car left from the last rank.
            if let Some((up, bits)) = &up_red
                && blue != 0
                && bits::any(free & last_rank, |q| {
                    bits.get(up.index_of(blue, red | 1 << q, super::Side::Red))
                })
            {
                out.set(base);
            }
            // Red to move: a Blue car left from the last file.
            if let Some((up, bits)) = &up_blue
                && red != 0
                && bits::any(free & last_file, |q| {
                    bits.get(up.index_of(blue | 1 << q, red, super::Side::Blue))
                })
            {
                out.set(base | 1);
            }
        }
    }
    // Closure: whether some in-layer predecessor of index `i` is marked.
    let reached_from_inside = |out: &ReachBits, i: u64| -> bool {
        let (k, side) = (i >> 1, i & 1);
        let rb = k / nr;
        let rr = k % nr;
        let blk = &blocks[rb as usize];
        let m = layer.red_free_set(rr);
        let (reds, kk, red) = blk.reds(m);
        let reds = &reds[..kk];
        let blue = blk.blue;
        let occ = blue | red;
        if side == 0 {
            // Red moved last, from a position with a blue car.
            if blue == 0 {
                return false;
            }
            for (j, &s) in reds.iter().enumerate() {
                let c = blk.comp[s as usize];
                for &t in &geo.back[1][s as usize] {
                    if t == NONE || occ >> t & 1 == 1 {
                        continue;
                    }
                    let c2 = blk.comp[t as usize];
                    let m2 = m & !(1 << c) | 1 << c2;
                    let r2 = rank_after_red_step(binom, rr, j, c, c2, m2);
                    if out.get(((rb * nr + r2) << 1) | 1) {
                        return true;
                    }
                }
            }
            false
        } else {
            // Blue moved last, from a position with a red car.
            if red == 0 {
                return false;
            }
            blk.back.iter().any(|st| {
                red >> st.to & 1 == 0
                    && out.get((st.rb * nr + rank_with(binom, &st.comp, reds)) << 1)
            })
        }
    };
    let nwords = out.words.len();
    let mut up = true;
    loop {
        let mut marked = 0u64;
        for wi in 0..nwords {
            let w = if up { wi } else { nwords - 1 - wi };
            let base = w as u64 * 64;
            let valid = if base + 64 <= out.len {
                u64::MAX
            } else {
                (1u64 << (out.len - base)) - 1
            };
            let mut todo = !out.words[w] & valid;
            while todo != 0 {
                let bit = if up {
                    todo.trailing_zeros()
                } else {
                    63 - todo.leading_zeros()
                };
                todo &= !(1u64 << bit);
                let i = base + u64::from(bit);
                if reached_from_inside(&out, i) {
                    out.words[w] |= 1 << bit;
                    marked += 1;
                }
            }
        }
        if marked == 0 {
            break;
        }
        up = !up;
    }
    out
}

/// Set-bit helpers.
mod bits {
    /// Whether `f` holds for some set bit (as a square number) of `m`.
    #[inline]
    pub fn any(mut m: u64, mut f: impl FnMut(usize) -> bool) -> bool {
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if f(q) {
                return true;
            }
        }
        false
    }
}
