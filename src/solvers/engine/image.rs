//! Layers answered as the image of another ([`LayeredGame::image_layer`]):
//! their values copied through the symmetry instead of solved.

use super::rules::LayeredGame;

/// Positions whose image ranks are found before their values are copied.
const BATCH: usize = 32;

/// The value bytes of image layer `layer` from those of its source layer
/// `image_layer(layer)` (`src`: one byte a position, or two, as
/// [`super::solve_layer`] gives them; the result has the same width): the
/// value of rank `r` is that of the image of the position of rank `r`.
/// Deterministic: the bytes do not depend on `threads`.
///
/// # Panics
/// If `layer` has no image layer, or `src` is not one or two bytes for
/// each of its positions.
pub fn image_values<G: LayeredGame>(game: &G, layer: usize, src: &[u8], threads: usize) -> Vec<u8> {
    image_range(game, layer, src, 0, game.layer_size(layer), threads)
}

/// [`image_values`] of the ranks `start .. end` of `layer` only (a part of
/// a layer split over ranks), in the same width.
///
/// # Panics
/// As [`image_values`], or if the range is not within the layer.
pub fn image_range<G: LayeredGame>(
    game: &G,
    layer: usize,
    src: &[u8],
    start: u64,
    end: u64,
    threads: usize,
) -> Vec<u8> {
    let from = game
        .image_layer(layer)
        .expect("image_values is asked for an image layer");
    let size = game.layer_size(layer);
    assert!(start <= end && end <= size, "a range of the layer");
    let w = if src.len() as u64 == 2 * size && size > 0 {
        2
    } else {
        assert_eq!(src.len() as u64, size, "one or two bytes a position");
        1
    };
    let mut out = crate::solvers::hint::zeroed_bytes((end - start) as usize * w);
    // One run of ranks a thread: every position costs about the same.
    let per = (end - start).div_ceil(threads.max(1) as u64).max(1 << 14) as usize;
    std::thread::scope(|s| {
        for (k, mine) in out.chunks_mut(per * w).enumerate() {
            let at = start + (k * per) as u64;
            s.spawn(move || {
                let stop = at + (mine.len() / w) as u64;
                // The images lie anywhere in `src`: the ranks of a batch are
                // found first, each asking for its cache line, and copied
                // after, so the waits overlap.
                let mut batch: Vec<(usize, usize)> = Vec::with_capacity(BATCH);
                let mut copy = |batch: &mut Vec<(usize, usize)>| {
                    for (i, q) in batch.drain(..) {
                        if w == 1 {
                            mine[i] = src[q];
                        } else {
                            mine[2 * i] = src[2 * q];
                            mine[2 * i + 1] = src[2 * q + 1];
                        }
                    }
                };
                game.for_each_position(layer, at, stop, &mut |r, p| {
                    let q = game.rank_in(from, &game.image(&p)) as usize;
                    if let Some(b) = src.get(q * w) {
                        crate::solvers::hint::prefetch(b);
                    }
                    batch.push(((r - at) as usize, q));
                    if batch.len() == BATCH {
                        copy(&mut batch);
                    }
                });
                copy(&mut batch);
            });
        }
    });
    out
}
