//! The colour-swapping reflection between layers `(a, b)` and `(b, a)`.
//!
//! Reflecting the board in the diagonal through a1, (x, y) ↦ (y, x), turns
//! Blue's directions (right, up, down; off the right edge) into Red's (up,
//! right, left; off the top edge). So the position (blue B, red R, side s)
//! plays exactly like (blue refl(R), red refl(B), side other(s)) with the
//! colours swapped: value and depth are equal (acceptance item 2 of issue #3 tests it against direct solving). Layer
//! `(b, a)` is therefore a permutation of the bytes of layer `(a, b)`.

use super::{Board, Layer};

/// Reflection of square masks through per-row look-up tables.
#[derive(Debug, Clone)]
pub struct Reflector {
    n: usize,
    /// `rows[y][bits]`: the reflected mask of row y holding `bits` (n bits).
    rows: Vec<Vec<u64>>,
}

impl Reflector {
    /// Tables for `board`.
    pub fn new(board: Board) -> Reflector {
        let n = board.n();
        let rows = (0..n)
            .map(|y| {
                (0..1u64 << n)
                    .map(|bits| {
                        (0..n)
                            .filter(|x| bits >> x & 1 == 1)
                            .fold(0u64, |m, x| m | 1 << (x * n + y))
                    })
                    .collect()
            })
            .collect();
        Reflector { n, rows }
    }

    /// The reflected mask (same as [`Board::reflect_squares`]).
    #[inline]
    pub fn squares(&self, m: u64) -> u64 {
        let row = (1u64 << self.n) - 1;
        let mut out = 0;
        for (y, t) in self.rows.iter().enumerate() {
            out |= t[(m >> (y * self.n) & row) as usize];
        }
        out
    }
}

/// Positions whose scattered writes are prefetched together.
const BATCH: usize = 32;

/// Calls `f(rr, red, j)` for every placement of block `rb` of `src`: its
/// red rank `rr`, its red mask, and the index `j` (even: Blue to move) of
/// its mirror image's placement in `dst` = layer `(src.b(), src.a())`.
fn for_each_image(
    src: &Layer,
    dst: &Layer,
    refl: &Reflector,
    rb: u64,
    mut f: impl FnMut(u64, u64, u64),
) {
    let board = src.board();
    let binom = src.binom();
    let blue = src.blue_set(rb);
    let mut free = [0u8; super::block::BSQ];
    let mut k = 0;
    for sq in 0..board.squares() {
        if blue >> sq & 1 == 0 {
            free[k] = sq as u8;
            k += 1;
        }
    }
    // The mirrored blue cars are the image's red cars.
    let image_red = refl.squares(blue);
    for rr in 0..src.red_ranks() {
        let mut red = 0u64;
        let mut m = src.red_free_set(rr);
        while m != 0 {
            red |= 1 << free[m.trailing_zeros() as usize];
            m &= m - 1;
        }
        let image_blue = refl.squares(red);
        // Colex rank of the image's red cars among the squares free of its blue ones.
        let mut rank_red = 0;
        let mut rest = image_red;
        let mut i = 1;
        while rest != 0 {
            let s = rest.trailing_zeros();
            rest &= rest - 1;
            let c = s - (image_blue & ((1u64 << s) - 1)).count_ones();
            rank_red += binom[i][c as usize];
            i += 1;
        }
        f(
            rr,
            red,
            (dst.rank_blue(image_blue) * dst.red_ranks() + rank_red) << 1,
        );
    }
}

/// The bytes of layer `(b, a)` from the solved bytes `values` of layer
/// `src` = `(a, b)` (same encoding): the byte of position p in `(b, a)` is the
/// byte of its reflection in `(a, b)`.
///
/// # Panics
/// If `values` does not have `src.len()` bytes.
pub fn reflect_layer(src: &Layer, values: &[u8]) -> Vec<u8> {
    assert_eq!(values.len() as u64, src.len(), "source layer length");
    let dst = Layer::new(src.board(), src.b(), src.a());
    let refl = Reflector::new(src.board());
    let mut out = super::block::zeroed_bytes(dst.len() as usize);
    let nr = src.red_ranks();
    // The writes land far apart: each batch's targets are computed and
    // prefetched before the first store, so the cache misses overlap.
    let mut batch = [(0usize, 0usize); BATCH];
    let mut nb = 0;
    for rb in 0..src.blue_ranks() {
        for_each_image(src, &dst, &refl, rb, |rr, _, j| {
            let (i, j) = (((rb * nr + rr) << 1) as usize, j as usize);
            super::block::prefetch(&out[j]);
            batch[nb] = (j, i);
            nb += 1;
            if nb == BATCH || rr + 1 == nr {
                // Blue to move there is Red to move here, and the other way round.
                for &(j, i) in &batch[..nb] {
                    out[j] = values[i + 1];
                    out[j + 1] = values[i];
                }
                nb = 0;
            }
        });
    }
    out
}

/// Fills the parity-class-1 bytes of a diagonal layer `(a, a)` from its
/// class-0 bytes: the mirror maps the layer onto itself and swaps the two
/// classes (it keeps every car's x + y and passes the turn to the other
/// colour), so each class-1 position takes the byte of its mirror image.
/// `threads` ≥ 1 threads share the blocks.
///
/// # Panics
/// If the layer is not diagonal or `values` has the wrong length.
pub fn mirror_class_one(layer: &Layer, values: &mut [u8], threads: usize) {
    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
    assert_eq!(layer.a(), layer.b(), "diagonal layers only");
    assert_eq!(values.len() as u64, layer.len(), "layer length");
    let refl = Reflector::new(layer.board());
    let nr = layer.red_ranks();
    let odd = layer.board().odd_squares();
    // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `values` is
    // borrowed mutably (exclusively) for the life of this view. Each class-1
    // byte is written once (the mirror is a bijection between the classes)
    // and class-0 bytes are only read.
    let cells: &[AtomicU8] = unsafe { &*(values as *mut [u8] as *const [AtomicU8]) };
    super::block::par_range(threads, layer.blue_ranks(), |rb| {
        let blue_odd = (layer.blue_set(rb) & odd).count_ones();
        // Batched and prefetched as in `reflect_layer`.
        let mut batch = [(0usize, 0u8); BATCH];
        let mut nb = 0;
        for_each_image(layer, layer, &refl, rb, |rr, red, j| {
            // The side of this placement in class 0.
            let side0 = u64::from((blue_odd + (red & odd).count_ones()) % 2);
            let i = ((rb * nr + rr) << 1) | side0;
            // The image has the other side to move, and is in class 1.
            let target = (j | (side0 ^ 1)) as usize;
            super::block::prefetch(&cells[target]);
            batch[nb] = (target, cells[i as usize].load(Relaxed));
            nb += 1;
            if nb == BATCH || rr + 1 == nr {
                for &(t, v) in &batch[..nb] {
                    cells[t].store(v, Relaxed);
                }
                nb = 0;
            }
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_reflection_matches_the_board() {
        for n in 2..=5 {
            let board = Board::new(n).unwrap();
            let r = Reflector::new(board);
            for m in [
                0u64,
                1,
                0b1011,
                (1 << (n * n)) - 1,
                0x0155_5555 & ((1 << (n * n)) - 1),
            ] {
                assert_eq!(r.squares(m), board.reflect_squares(m));
            }
        }
    }

    #[test]
    fn reflected_layer_is_a_permutation_matching_positions() {
        let board = Board::new(3).unwrap();
        let src = Layer::new(board, 1, 2);
        let values: Vec<u8> = (0..src.len()).map(|i| (i % 251) as u8).collect();
        let out = reflect_layer(&src, &values);
        let dst = Layer::new(board, 2, 1);
        for j in 0..dst.len() {
            let p = dst.position(j);
            assert_eq!(
                out[j as usize],
                values[src.index(&board.reflect(&p)) as usize]
            );
        }
    }
}
