//! Impartial games under the Sprague–Grundy theory (Winning Ways, vol. 1).
//!
//! - [`mex`]: the minimum excluded value, the building block of every Grundy
//!   value: `G(u) = mex{G(v) : v an option of u}` (Sprague 1935, Grundy 1939).
//! - [`nim`]: Bouton's solution of Nim (1901), normal and misère play: the
//!   P-position test and every winning move.
//! - [`subtraction`]: subtraction games Sub(S) for a finite set S, their
//!   Grundy sequence, proved periodicity and winning moves in sums of heaps.
//! - [`octal`]: octal games given by their standard code (`0.77` Kayles,
//!   `0.07` Dawson's Kayles, `0.137` Dawson's chess, `4.7`, …): the Grundy
//!   sequence (fast and naive), and periodicity proved by the Guy–Smith
//!   periodicity theorem.
//! - [`hackenbush`]: Green Hackenbush on rooted trees by the colon principle.
//!
//! Everything here is pure: plain data in, plain data out, normal play unless
//! a function says otherwise.

pub mod hackenbush;
pub mod nim;
pub mod octal;
pub mod subtraction;

/// The minimum excluded value: the least non-negative integer not in `values`.
///
/// `mex{} = 0`, `mex{0, 1, 2} = 3`, `mex{1, 2, 4, 5} = 0`, `mex{0, 2, 3, 7} = 1`
/// Runs in O(len) time and space; duplicates are fine.
pub fn mex(values: impl IntoIterator<Item = u32>) -> u32 {
    let values: Vec<u32> = values.into_iter().collect();
    // The mex is at most the number of values, so larger ones never matter.
    let mut seen = vec![false; values.len() + 1];
    for v in values {
        if let Some(s) = seen.get_mut(v as usize) {
            *s = true;
        }
    }
    seen.iter().position(|&s| !s).unwrap_or(0) as u32
}

/// The first zero bit of a bitset given as `u64` words (bit `x % 64` of word
/// `x / 64`); `64 * words.len()` if every bit is set.
pub(crate) fn first_zero_bit(words: &[u64]) -> usize {
    for (i, w) in words.iter().enumerate() {
        if *w != u64::MAX {
            return i * 64 + w.trailing_ones() as usize;
        }
    }
    words.len() * 64
}
