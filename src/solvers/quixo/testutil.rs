//! Helpers shared by the tests: a small deterministic generator and the
//! enumeration of every board of a size.

use super::{Board, Rules};

/// xorshift64* (Vigna), so the tests need no crate.
pub(super) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, k: u64) -> u64 {
        self.next() % k
    }

    /// A random board: each cell blank, mine or theirs, with the cell
    /// probabilities themselves drawn at random (so sparse and full boards
    /// both occur).
    pub fn board(&mut self, r: &Rules) -> Board {
        let pm = self.below(101);
        let pt = self.below(101 - pm);
        let mut b = Board::EMPTY;
        for c in 0..r.cells() {
            let u = self.below(100);
            if u < pm {
                b.mine |= 1 << c;
            } else if u < pm + pt {
                b.theirs |= 1 << c;
            }
        }
        b
    }
}

/// Every board of the n×n board, in ternary order (digit c of the index is
/// cell c: 0 blank, 1 mine, 2 theirs).
pub(super) fn all_boards(n: usize) -> impl Iterator<Item = Board> {
    let cells = n * n;
    (0..3u64.pow(cells as u32)).map(move |t| {
        let mut b = Board::EMPTY;
        let mut v = t;
        for c in 0..cells {
            match v % 3 {
                1 => b.mine |= 1 << c,
                2 => b.theirs |= 1 << c,
                _ => {}
            }
            v /= 3;
        }
        b
    })
}
