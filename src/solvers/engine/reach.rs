//! The positions of a layer reachable from the start of play, by forward
//! closure: the start (if it lies in the layer) and every position a move
//! of a reachable, unfinished position of a parent layer leads to, then
//! every position reached from those by moves inside the layer. A finished
//! (terminal) position is reachable but its moves are never played.
//!
//! **Symmetry.** When the game solves one position per symmetry class
//! ([`LayeredGame::reduces_by_symmetry`]) and every symmetry fixes the
//! start, the reachable positions are a union of classes (an image of a
//! line of play is a line of play from the start's image, the start). Then
//! only canonical positions are expanded and marked (a move's position by
//! its canonical image), and the marked classes are filled in at the end:
//! the same bits for about an eighth of the moves on a square board.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::rules::LayeredGame;

/// Positions of a parent layer (or of a part's frontier) a rank of a split
/// reach expands between two trades of marks ([`reach_part`]).
pub const REACH_PIECE: u64 = 1 << 22;

/// One bit per position of a layer (bit `r % 64` of word `r / 64`).
pub type Bits = Vec<u64>;

fn get(words: &[u64], r: u64) -> bool {
    words[(r / 64) as usize] >> (r % 64) & 1 == 1
}

/// The reachable positions of `layer`: `parents` holds, for every layer
/// whose moves reach `layer` (its *parent layers*), its reachable bits as
/// `(layer, bits)`; `start` is the start of play if it lies in `layer`.
/// `threads` ≥ 1 share the closure; the bits do not depend on their number.
///
/// Work: every reachable position of each parent layer is enumerated once
/// with its moves out of that layer ([`LayeredGame::moves_out`]; all its
/// moves when positions are marked by class), then every reachable position of `layer` once with its
/// moves. Memory: three bits per position of `layer` besides the inputs.
pub fn reach_layer<G: LayeredGame>(
    game: &G,
    layer: usize,
    parents: &[(usize, &[u64])],
    start: Option<G::Position>,
    threads: usize,
) -> Bits {
    reach_part(
        game,
        layer,
        parents,
        start,
        threads,
        &mut super::split::Alone,
    )
    .expect("one rank trades nothing")
}

/// Runs `f(lo, hi)` over about 64 chunks per thread of `0..len`.
fn par_ranges(threads: usize, len: u64, f: impl Fn(u64, u64) + Sync) {
    if threads <= 1 || len < 4096 {
        f(0, len);
        return;
    }
    let parts = (threads as u64 * 64).min(len);
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    if i >= parts {
                        break;
                    }
                    f(len * i / parts, len * (i + 1) / parts);
                }
            });
        }
    });
}

/// Positions set in `bits`.
pub fn count(bits: &[u64]) -> u64 {
    bits.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// [`reach_layer`] split over the ranks of `ex` ([`super::split`]): this
/// rank's part of the reachable bits (ranks `bounds[k] .. bounds[k + 1]`
/// of [`super::split::part_bounds`], whole words, as bits from bit 0), so that the
/// parts of ranks 0, 1, … joined are the bits [`reach_layer`] gives. Each
/// rank expands its share of each parent layer's reachable positions and
/// the reachable positions of its own part; a move into another rank's
/// part is sent to it, in rounds, until no rank has a frontier left.
///
/// # Errors
/// The transport's, as text.
///
/// Long on purpose (a solver inner loop): the part's bits, the frontier,
/// the per-owner outboxes and the `mark` closure over them are shared by
/// the parents' pass and every round of the frontier's expansion.
pub fn reach_part<G: LayeredGame>(
    game: &G,
    layer: usize,
    parents: &[(usize, &[u64])],
    start: Option<G::Position>,
    threads: usize,
    ex: &mut dyn super::split::Exchange,
) -> Result<Bits, String> {
    let size = game.layer_size(layer);
    let n = ex.ranks();
    let me = ex.rank();
    let bounds = super::split::part_bounds(size, n);
    let (base, end) = (bounds[me], bounds[me + 1]);
    let words = (end - base).div_ceil(64) as usize;
    let reach: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    let owner = |r: u64| bounds.partition_point(|&b| b <= r) - 1;
    // Marks for other ranks, by owner.
    let outbox: Vec<std::sync::Mutex<Vec<u64>>> =
        (0..n).map(|_| std::sync::Mutex::new(Vec::new())).collect();
    let mark = |r: u64, front: &[AtomicU64]| {
        if r < base || r >= end {
            outbox[owner(r)]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(r);
            return;
        }
        let i = r - base;
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        if reach[w].load(Relaxed) & b == 0 && reach[w].fetch_or(b, Relaxed) & b == 0 {
            front[w].fetch_or(b, Relaxed);
        }
    };
    let by_class = game.reduces_by_symmetry()
        && start.is_some_and(|s| {
            let mut fixed = true;
            game.symmetries(&s, &mut |q| fixed &= q == s);
            fixed
        });
    let target = |c: &G::Position| {
        if by_class {
            game.rank_in(layer, &game.canonical(c).0)
        } else {
            game.rank_in(layer, c)
        }
    };
    // Sends the queued marks and marks what comes in, in `front`.
    let trade = |ex: &mut dyn super::split::Exchange, front: &[AtomicU64]| -> Result<(), String> {
        let out: Vec<Vec<u64>> = outbox
            .iter()
            .map(|m| std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner())))
            .collect();
        for r in ex.exchange(out)?.concat() {
            if r < base || r >= end {
                return Err(format!("rank {me}: a mark for rank {r}, outside its part"));
            }
            mark(r, front);
        }
        Ok(())
    };
    let mut frontier: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
    if let Some(s) = start {
        let (l, r) = game.rank(&s);
        if l == layer && r >= base && r < end {
            mark(r, &frontier);
        }
    }
    for &(pl, bits) in parents {
        let psize = game.layer_size(pl);
        // This rank's share of the parent layer, in pieces with a trade
        // after each (as many on every rank: the shares differ by one).
        let (lo, hi) = (
            psize * me as u64 / n as u64,
            psize * (me as u64 + 1) / n as u64,
        );
        let pieces = psize.div_ceil(n as u64).div_ceil(REACH_PIECE).max(1);
        for k in 0..pieces {
            let (a, b) = (
                (lo + k * REACH_PIECE).min(hi),
                (lo + (k + 1) * REACH_PIECE).min(hi),
            );
            par_ranges(threads, b - a, |x, y| {
                game.for_each_position(pl, a + x, a + y, &mut |r, p| {
                    if !get(bits, r)
                        || (by_class && !game.is_canonical(&p))
                        || game.terminal(&p).is_some()
                    {
                        return;
                    }
                    if by_class {
                        game.children(&p, &mut |c| {
                            if game.layer_of(&c) == layer {
                                mark(target(&c), &frontier);
                            }
                        });
                    } else {
                        // Only the moves leaving the parent layer can
                        // reach this one: the seeding pass's view of them.
                        game.moves_out(pl, &p, &mut |l, r| {
                            if l == layer {
                                mark(r, &frontier);
                            }
                        });
                    }
                });
            });
            trade(ex, &frontier)?;
        }
    }
    // Words of the largest part: every rank takes as many pieces.
    let most = bounds
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or(0)
        .div_ceil(64);
    let piece_words = REACH_PIECE / 64;
    let pieces = most.div_ceil(piece_words).max(1);
    loop {
        let next: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
        for k in 0..pieces {
            let (a, b) = (
                (k * piece_words).min(words as u64),
                ((k + 1) * piece_words).min(words as u64),
            );
            par_ranges(threads, b - a, |x, y| {
                for w in a + x..a + y {
                    let mut bits = frontier[w as usize].load(Relaxed);
                    while bits != 0 {
                        let r = base + w * 64 + u64::from(bits.trailing_zeros());
                        bits &= bits - 1;
                        let p = game.unrank(layer, r);
                        if game.terminal(&p).is_some() {
                            continue;
                        }
                        if by_class {
                            game.children(&p, &mut |c| {
                                if game.layer_of(&c) == layer {
                                    mark(target(&c), &next);
                                }
                            });
                        } else {
                            game.children_in_layer(layer, r, &p, &mut |rc| mark(rc, &next));
                        }
                    }
                }
            });
            trade(ex, &next)?;
        }
        let more = next.iter().any(|w| w.load(Relaxed) != 0);
        if ex.max_all(&[u64::from(more)])?[0] == 0 {
            break;
        }
        frontier = next;
    }
    if by_class {
        let marked: Vec<u64> = reach.iter().map(|w| w.load(Relaxed)).collect();
        let set = |r: u64| {
            if r < base || r >= end {
                outbox[owner(r)]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(r);
            } else {
                let i = r - base;
                reach[(i / 64) as usize].fetch_or(1 << (i % 64), Relaxed);
            }
        };
        par_ranges(threads, words as u64, |lo, hi| {
            for w in lo..hi {
                let mut bits = marked[w as usize];
                while bits != 0 {
                    let r = base + w * 64 + u64::from(bits.trailing_zeros());
                    bits &= bits - 1;
                    game.symmetries(
                        &game.unrank(layer, r),
                        &mut |q| set(game.rank_in(layer, &q)),
                    );
                }
            }
        });
        let out: Vec<Vec<u64>> = outbox
            .iter()
            .map(|m| std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner())))
            .collect();
        for r in ex.exchange(out)?.concat() {
            set(r);
        }
    }
    Ok(reach.into_iter().map(AtomicU64::into_inner).collect())
}
