//! Positions reachable from the start, layer by layer from the top.
//!
//! The start lies in layer `(n−1, n−1)`. A layer's reachable positions are
//! the closure under in-layer moves of its seeds: the start, and the
//! positions entered by a car leaving from the reachable positions of
//! `(a+1, b)` (a Blue car) and `(a, b+1)` (a Red car). Play stops at
//! terminal positions (the opponent has no car, or the mover has no move),
//! so nothing is reached from them.

use super::{Board, Layer, Side};

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
        if len % 64 != 0 && words.last().is_some_and(|w| w >> (len % 64) != 0) {
            return None;
        }
        Some(ReachBits { len, words })
    }
}

/// The reachable positions of `layer`, given the reachable positions of the
/// layers above it: `from_blue_exit` = layer `(a+1, b)` (when a+1 ≤ n−1),
/// `from_red_exit` = layer `(a, b+1)` (when b+1 ≤ n−1).
///
/// # Panics
/// If a layer above that exists on the board is not given, or has the wrong length.
pub fn reach_layer(
    layer: &Layer,
    from_blue_exit: Option<&ReachBits>,
    from_red_exit: Option<&ReachBits>,
) -> ReachBits {
    let board = layer.board();
    let (a, b) = (layer.a(), layer.b());
    let top = board.cars();
    let mut reached = ReachBits::new(layer.len());
    let mut todo = ReachBits::new(layer.len());
    let seed = |i: u64, reached: &mut ReachBits, todo: &mut ReachBits| {
        if reached.set(i) {
            todo.set(i);
        }
    };
    if (a, b) == (top, top) {
        seed(layer.index(&board.start()), &mut reached, &mut todo);
    }
    for (above, side) in [(from_blue_exit, Side::Blue), (from_red_exit, Side::Red)] {
        let (ua, ub) = match side {
            Side::Blue => (a + 1, b),
            Side::Red => (a, b + 1),
        };
        if ua > top || ub > top {
            continue;
        }
        let up = Layer::new(board, ua, ub);
        let bits = above.expect("the layer above is needed");
        assert_eq!(bits.len(), up.len(), "layer ({ua}, {ub}) length");
        for i in bits.iter().filter(|i| i & 1 == side.bit()) {
            let p = up.position(i);
            for m in board.moves(&p).into_iter().filter(|m| m.to.is_none()) {
                seed(layer.index(&board.apply(&p, m)), &mut reached, &mut todo);
            }
        }
    }
    closure(board, layer, &mut reached, &mut todo);
    reached
}

/// Expands every `todo` position by its in-layer moves until nothing is new.
fn closure(board: Board, layer: &Layer, reached: &mut ReachBits, todo: &mut ReachBits) {
    loop {
        let mut any = false;
        for w in 0..todo.words.len() {
            while todo.words[w] != 0 {
                let bit = todo.words[w].trailing_zeros() as u64;
                todo.words[w] &= todo.words[w] - 1;
                any = true;
                let p = layer.position(w as u64 * 64 + bit);
                for m in board.moves(&p) {
                    if m.to.is_some() {
                        let j = layer.index(&board.apply(&p, m));
                        if reached.set(j) {
                            todo.set(j);
                        }
                    }
                }
            }
        }
        if !any {
            break;
        }
    }
}
