//! Quixo on an n×n board (n = 2 … 5): the pure rules, written for a layered
//! retrograde engine.
//!
//! **Sources.** Gigamic's rule sheet (Thierry Chapeau, 1995), as used by
//! Tanaka, Bonnet, Tixeuil and Tamura, "Quixo Is Solved" (Advances in
//! Computer Games 2021, LNCS 13262; arXiv 2007.15895), which solves 3×3, 4×4
//! and 5×5 with these rules, and by GamesCrafters' GamesmanOne
//! (`src/solvers/quixo/quixo.c`, `QuixoPrimitive`).
//!
//! **Board.** Files a, b, … left → right (x = 0 … n−1), ranks 1 … n bottom →
//! top (y = 0 … n−1); cell `x + n·y` (a1 = 0, b1 = 1, …, a2 = n), bit
//! `1 << cell` of a `u32` mask (the same numbering as Dodgem). Each cube
//! shows a blank face, X or O; at the start every cube is blank and X moves.
//!
//! **A move.** The player to move takes a cube from the border (the cells
//! with x or y equal to 0 or n−1) that is blank or shows their own symbol,
//! never one showing the opponent's; turns it to their symbol; and pushes it
//! back in at one end of the row or the column it was taken from, shifting
//! the cubes between by one cell, "never back in the position from which it
//! was taken" (Gigamic). So a move is a source cell and the edge the cube is
//! pushed in from ([`Edge`]): every edge the source cell is not on. A corner
//! cube has 2 moves, another border cube 3: 4·2 + 4·(n−2)·3 moves in all
//! (20, 32, 44 for n = 3, 4, 5).
//!
//! **End of play.** Gigamic: "The winner is the player to make and announce
//! that he/she has made a horizontal, vertical or diagonal line with 5 cubes
//! bearing his/her symbol. The player to make a line with his/her opponent's
//! symbol loses the game, even if he/she makes a line with his/her own symbol
//! at the same time." The lines are the n rows, the n columns and the two
//! long diagonals, n cubes each. Seen from the player to move after the
//! opponent's move ([`Rules::outcome`]): a line of the player's own symbol
//! means the opponent made it, so the player to move has **won** (whether or
//! not the opponent also has a line); otherwise a line of the opponent's
//! symbol means the player to move has **lost**; otherwise play goes on. This
//! is GamesmanOne's `QuixoPrimitive` (the current player wins if there is a
//! line of their pieces, "regardless of whether there is a k in a row of the
//! opponent's piece", else loses if the opponent has one). Play can cycle:
//! positions nobody can force are draws. The paper's own statement of the
//! rules (its §1.1) could not be read here, so no page is cited for it; its
//! authors' code follows this rule, since the tests reproduce their 5×5
//! per-layer counts (Checks, below). The paper's abstract: 5×5 Quixo "is a
//! Draw game".
//!
//! **Side to move is always "mine".** A [`Board`] is two masks, `mine` (the
//! cubes of the player to move) and `theirs`; a move produces the child as
//! the opponent sees it (the colours swap after every move). A [`Position`]
//! adds the absolute colour to move for notation.
//!
//! **Layers.** Blank cubes never come back: a move keeps the mover's count
//! (a cube of their own was taken) or raises it by one (a blank was taken).
//! Layer `(a, b)` = (cubes mine, cubes theirs) moves to `(b, a)` or
//! `(b, a + 1)`. The layers `(a, b)` and `(b, a)` reach each other (cycles)
//! and otherwise only layers with one more cube, so the unit a solver works
//! on is the pair `{a, b}`, in decreasing order of `a + b` ([`solve_order`]).
//! [`Layer`] ranks a layer densely (colex ranks, as Dodgem's layers):
//! `rank = rank(mine among n² cells) · C(n² − a, b) + rank(theirs among the
//! n² − a cells not mine)`. The layers of one board size hold 3^(n²) boards
//! in all (19,683; 43,046,721; 847,288,609,443 for n = 3, 4, 5); counting
//! the absolute colour to move doubles that (GamesmanOne's 1,694,577,218,886
//! for 5×5).
//!
//! **Checks.** The tests (in `brute`) solve 2×2 and 3×3 with a naive
//! solver that shares nothing with these rules and agree on every position;
//! solve 4×4 whole (`#[ignore]`); and solve the 2^25 boards of 5×5 without a
//! blank cube, matching the per-layer win / loss / draw counts of the
//! paper's authors (github.com/st34-satoshi/quixo-cpp,
//! `python/result-5by5-activeIsO.txt`) on all 26 layers (`#[ignore]`).
//!
//! **Symmetry.** The 8 symmetries of the square ([`Symmetry`]) map moves to
//! moves and lines to lines, so they preserve values; [`Rules::canonical`]
//! picks the image of least rank.
//!
//! - [`Rules`]: the tables of one board size; moves ([`Rules::moves`],
//!   [`Rules::play`]), un-moves ([`Rules::predecessors`]), the end of play
//!   ([`Rules::outcome`]), symmetry ([`Rules::transform`],
//!   [`Rules::canonical`]), move notation ([`Rules::move_name`],
//!   [`Rules::parse_move`]).
//! - [`Board`], [`Move`], [`Edge`], [`Outcome`]: plain data.
//! - [`Position`], [`Colour`]: notation with the absolute colour to move
//!   (`X:..X/.O./...` and the n-line grid; see [`Position`]).
//! - [`Layer`], [`binomial`], [`layer_size`], [`total_boards`],
//!   [`solve_order`]: ranking.
#![warn(missing_docs)]

mod board;
mod index;
mod layered;
mod notation;
mod symmetry;

#[cfg(test)]
mod brute;
#[cfg(test)]
mod testutil;

pub use board::{Board, Edge, Move, Outcome, Rules};
pub use index::{Layer, LayerBoards, binomial, layer_size, layers, solve_order, total_boards};
pub use layered::QuixoLayers;
pub use notation::{Colour, Position};
pub use symmetry::{Canonical, MaskMaps, Symmetry};

use std::fmt;

/// Smallest board size handled: 2×2 (every cube a corner; for tests).
pub const MIN_N: usize = 2;
/// Largest board size handled: 5×5 (25 cells fit a `u32` mask).
pub const MAX_N: usize = 5;

/// Win, loss and draw counts of the 5×5 boards without a blank cube, for O
/// to move with `x` X cubes and `o` O cubes: `(x, o, wins, losses,
/// draws)` (the per-layer table of the authors of "Quixo Is Solved":
/// github.com/st34-satoshi/quixo-cpp, `python/result-5by5-activeIsO.txt`,
/// commit 9d71c50; all boards, no symmetry). O to move with (x, o) is our
/// half `(o, x)` (cubes of the player to move first).
pub const FULL_5X5: [(usize, usize, u64, u64, u64); 26] = [
    (25, 0, 0, 1, 0),
    (24, 1, 0, 25, 0),
    (23, 2, 0, 300, 0),
    (22, 3, 0, 2300, 0),
    (21, 4, 0, 12650, 0),
    (20, 5, 12, 53118, 0),
    (19, 6, 304, 176796, 0),
    (18, 7, 3304, 477396, 0),
    (17, 8, 21536, 1060039, 0),
    (16, 9, 110114, 1932861, 0),
    (15, 10, 436320, 2832416, 24),
    (14, 11, 1251548, 3202644, 3208),
    (13, 12, 2572251, 2519395, 108654),
    (12, 13, 4474366, 684731, 41203),
    (11, 14, 4183052, 273388, 960),
    (10, 15, 3188460, 80292, 8),
    (9, 16, 2027081, 15894, 0),
    (8, 17, 1079295, 2280, 0),
    (7, 18, 480320, 380, 0),
    (6, 19, 177060, 40, 0),
    (5, 20, 53128, 2, 0),
    (4, 21, 12650, 0, 0),
    (3, 22, 2300, 0, 0),
    (2, 23, 300, 0, 0),
    (1, 24, 25, 0, 0),
    (0, 25, 1, 0, 0),
];

/// Errors of the Quixo rules: a bad board size, malformed or impossible
/// boards, positions, cells and moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuixoError {
    /// The board size is outside [`MIN_N`] ..= [`MAX_N`].
    BadSize(usize),
    /// A cell name that is not on the board.
    BadCell {
        /// The text given.
        name: String,
        /// Board size.
        n: usize,
    },
    /// The board's masks overlap or reach outside the n² cells.
    BadBoard {
        /// The `mine` mask.
        mine: u32,
        /// The `theirs` mask.
        theirs: u32,
        /// Board size.
        n: usize,
    },
    /// The position text is malformed.
    BadPosition {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// The move text is malformed or the move is not legal here.
    BadMove {
        /// The text given (or the move's name).
        text: String,
        /// What is wrong.
        why: String,
    },
    /// A layer `(a, b)` with `a + b > n²`.
    BadLayer {
        /// Cubes of the player to move.
        a: usize,
        /// Cubes of the opponent.
        b: usize,
        /// Board size.
        n: usize,
    },
}

impl fmt::Display for QuixoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuixoError::BadSize(n) => {
                write!(
                    f,
                    "board size {n}: Quixo here handles {MIN_N} ≤ n ≤ {MAX_N}"
                )
            }
            QuixoError::BadCell { name, n } => {
                let last = (b'a' + *n as u8 - 1) as char;
                write!(
                    f,
                    "`{name}` is not a cell of the {n}×{n} board (files a–{last}, ranks 1–{n})"
                )
            }
            QuixoError::BadBoard { mine, theirs, n } => write!(
                f,
                "masks mine {mine:#x}, theirs {theirs:#x} are not a {n}×{n} board (they overlap or leave the {} cells)",
                n * n
            ),
            QuixoError::BadPosition { text, why } => write!(f, "position `{text}`: {why}"),
            QuixoError::BadMove { text, why } => write!(f, "move `{text}`: {why}"),
            QuixoError::BadLayer { a, b, n } => {
                write!(
                    f,
                    "layer ({a}, {b}): more than the {} cells of the {n}×{n} board",
                    n * n
                )
            }
        }
    }
}

impl std::error::Error for QuixoError {}
