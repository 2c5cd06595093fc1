//! Nim and Bouton's theorem (C. L. Bouton, "Nim, a game with a complete
//! mathematical theory", Annals of Mathematics 3 (1901/02), 35–39).
//!
//! A position is a list of heap sizes; a move lowers one heap to any smaller
//! size. Normal play: the player who cannot move loses, and a position is a
//! P-position iff the nim-sum (XOR) of the heaps is 0. Misère play (the
//! player who takes the last token loses): as normal play unless every heap
//! is ≤ 1; then it is a P-position iff the number of 1-heaps is odd.

/// Which player wins when no move is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Play {
    /// The player who cannot move loses (the last mover wins).
    Normal,
    /// The player who cannot move wins (the last mover loses).
    Misere,
}

/// A Nim move: heap `heap` (0-based index) goes from `from` tokens to `to`
/// tokens (`to < from`), i.e. `from - to` tokens are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NimMove {
    /// 0-based index of the heap.
    pub heap: usize,
    /// Its size before the move.
    pub from: u64,
    /// Its size after the move.
    pub to: u64,
}

impl NimMove {
    /// Tokens removed.
    pub fn taken(&self) -> u64 {
        self.from - self.to
    }
}

impl std::fmt::Display for NimMove {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "take {} from heap {} ({} → {})",
            self.taken(),
            self.heap + 1,
            self.from,
            self.to
        )
    }
}

/// The nim-sum (bitwise XOR) of the heaps.
pub fn nim_sum(heaps: &[u64]) -> u64 {
    heaps.iter().fold(0, |s, h| s ^ h)
}

/// Whether `heaps` is a P-position (the player to move loses) under `play`
/// (Bouton 1901, both normal and misère play).
pub fn is_p_position(heaps: &[u64], play: Play) -> bool {
    let s = nim_sum(heaps);
    match play {
        Play::Normal => s == 0,
        Play::Misere if heaps.iter().all(|&h| h <= 1) => s == 1,
        Play::Misere => s == 0,
    }
}

/// Every winning move of `heaps` under `play`, ordered by heap index: the
/// moves to a P-position. O(len) time. Empty for a P-position, and also for
/// the one N-position without moves: no token left in misère play (the
/// player to move has already won, the last token taken by the other); so
/// tell P from N with [`is_p_position`], not by this list being empty.
///
/// Normal play: heap i goes to `hᵢ ⊕ S` when that is smaller (S the
/// nim-sum). Misère play: the same while a heap ≥ 2 remains afterwards;
/// otherwise the move must leave an odd number of 1-heaps.
pub fn winning_moves(heaps: &[u64], play: Play) -> Vec<NimMove> {
    let s = nim_sum(heaps);
    let big = heaps.iter().filter(|&&h| h >= 2).count();
    let ones = heaps.iter().filter(|&&h| h == 1).count();
    let mut out = Vec::new();
    for (i, &h) in heaps.iter().enumerate() {
        let push = |to: u64, out: &mut Vec<NimMove>| {
            out.push(NimMove {
                heap: i,
                from: h,
                to,
            })
        };
        let to = h ^ s;
        match play {
            Play::Normal => {
                if to < h {
                    push(to, &mut out);
                }
            }
            Play::Misere => {
                let big_others = big - usize::from(h >= 2);
                let ones_others = ones - usize::from(h == 1);
                // Results that keep a heap ≥ 2: P iff nim-sum 0.
                if to < h && (to >= 2 || big_others > 0) {
                    push(to, &mut out);
                }
                // Results with every heap ≤ 1: P iff an odd number of 1-heaps.
                if big_others == 0 {
                    for to in [0u64, 1] {
                        if to < h && (ones_others + to as usize) % 2 == 1 {
                            push(to, &mut out);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The first winning move (lowest heap index), or `None` for a P-position.
pub fn winning_move(heaps: &[u64], play: Play) -> Option<NimMove> {
    winning_moves(heaps, play).into_iter().next()
}
