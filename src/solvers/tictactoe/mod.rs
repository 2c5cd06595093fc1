//! Tic-tac-toe (noughts and crosses) on the 3×3 board, as a
//! [`LayeredGame`] for the generic retrograde engine: the smallest game of
//! the engine's series and its worked example (ARCHITECTURE.md, "Adding a
//! game").
//!
//! **Rules.** X and O take turns, X first, each putting a mark on an empty
//! cell. A player who makes three marks in a row, column or diagonal wins;
//! a full board without such a line is a draw ([`Terminal::Draw`]).
//!
//! **Positions and layers.** A position is the two sets of marked cells
//! ([`Board`]); who is to move follows from the counts (X when they are
//! equal). Layer `k` holds the boards after `k` plays: ⌈k/2⌉ X marks and
//! ⌊k/2⌋ O marks anywhere, ranked by the engine's two-colour placement
//! ranking ([`Placement`], X first). Every move goes from layer `k` to
//! `k + 1`, so no layer has moves inside it. The 10 layers hold
//! `Σ C(9, ⌈k/2⌉)·C(9 − ⌈k/2⌉, ⌊k/2⌋)` = 6,046 boards, of which 5,478 are
//! reachable from the empty board.
//!
//! **Ended play.** A board where the player who just moved has a line is a
//! loss for the player to move. Boards no game reaches are valued by the
//! same rules read on the board as it stands: a line of the player to move
//! alone is a win for them (their opponent played on after it), a full
//! board without a line a draw.
//!
//! **Symmetry.** The 8 symmetries of the square map lines to lines; the
//! engine checks them ([`LayeredGame::symmetries`]) but, with 6,046
//! boards, solves every board.
//!
//! Cells are numbered `x + 3·(rank − 1)`: `a1` = 0 bottom left, `c3` = 8
//! top right (the notation of `crate::solvers::square`).

use crate::solvers::engine::placement::Placement;
use crate::solvers::engine::{LayeredGame, Terminal};

/// Cells of the board.
pub const CELLS: usize = 9;

/// The 8 lines (rows, columns, diagonals) as cell masks.
pub const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

/// The 8 symmetries of the square as cell permutations: cell `c` goes to
/// `SYMMETRIES[g][c]` (identity first).
const SYMMETRIES: [[u8; CELLS]; 8] = {
    let mut t = [[0u8; CELLS]; 8];
    let mut g = 0;
    while g < 8 {
        let mut c = 0;
        while c < CELLS {
            let (x, y) = (c % 3, c / 3);
            // Rotate g % 4 quarter turns, then mirror if g ≥ 4.
            let (mut u, mut v) = (x, y);
            let mut k = 0;
            while k < g % 4 {
                let w = u;
                u = 2 - v;
                v = w;
                k += 1;
            }
            if g >= 4 {
                u = 2 - u;
            }
            t[g][c] = (u + 3 * v) as u8;
            c += 1;
        }
        g += 1;
    }
    t
};

/// A board: the cells marked X and the cells marked O (bit c = cell c).
/// X is to move when both counts are equal, O when X has one more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Board {
    /// Cells marked X.
    pub x: u16,
    /// Cells marked O.
    pub o: u16,
}

/// Whether `marks` holds a line.
#[inline]
pub fn has_line(marks: u16) -> bool {
    // (A loop: clippy's `manual_contains` misreads `any` here.)
    for l in LINES {
        if marks & l == l {
            return true;
        }
    }
    false
}

impl Board {
    /// The empty board, X to move.
    pub const START: Board = Board { x: 0, o: 0 };

    /// Marks on the board (the layer).
    pub fn plays(self) -> usize {
        (self.x.count_ones() + self.o.count_ones()) as usize
    }

    /// Whether X is to move (the counts are equal).
    pub fn x_to_move(self) -> bool {
        self.x.count_ones() == self.o.count_ones()
    }

    /// The marks of the player to move and of the opponent.
    pub fn sides(self) -> (u16, u16) {
        if self.x_to_move() {
            (self.x, self.o)
        } else {
            (self.o, self.x)
        }
    }

    /// Empty cells.
    pub fn empty(self) -> u16 {
        !(self.x | self.o) & 0x1ff
    }

    /// The board after the player to move marks cell `c` (which must be
    /// empty).
    pub fn play(self, c: usize) -> Board {
        debug_assert!(self.empty() >> c & 1 == 1, "cell {c} is marked");
        if self.x_to_move() {
            Board {
                x: self.x | 1 << c,
                o: self.o,
            }
        } else {
            Board {
                x: self.x,
                o: self.o | 1 << c,
            }
        }
    }

    /// Whether play has ended, and how, for the player to move (module doc,
    /// "Ended play").
    pub fn outcome(self) -> Option<Terminal> {
        let (mine, theirs) = self.sides();
        if has_line(theirs) {
            Some(Terminal::Loss)
        } else if has_line(mine) {
            Some(Terminal::Win)
        } else if self.empty() == 0 {
            Some(Terminal::Draw)
        } else {
            None
        }
    }

    /// The image of the board under symmetry `g` (0 … 7, 0 the identity).
    pub fn image(self, g: usize) -> Board {
        let map = |m: u16| {
            let mut out = 0u16;
            for (c, &to) in SYMMETRIES[g].iter().enumerate() {
                out |= (m >> c & 1) << to;
            }
            out
        };
        Board {
            x: map(self.x),
            o: map(self.o),
        }
    }
}

impl Board {
    /// The ranks of the board, top (rank 3) first, each `X`, `O` or `.` per
    /// cell from file a to c.
    pub fn ranks(self) -> [String; 3] {
        std::array::from_fn(|i| {
            let rank = 2 - i;
            (0..3)
                .map(|file| {
                    let c = file + 3 * rank;
                    if self.x >> c & 1 == 1 {
                        'X'
                    } else if self.o >> c & 1 == 1 {
                        'O'
                    } else {
                        '.'
                    }
                })
                .collect()
        })
    }

    /// Reads a board written as its ranks from the top, `/` between, each
    /// cell `X`, `O` or `.` (`-` also reads as empty; case ignored):
    /// `X.O/.X./...`. An optional `X:` or `O:` in front names the player to
    /// move, which must agree with the counts.
    ///
    /// # Errors
    /// A message naming what is wrong: not 3 ranks of 3 cells, a cell that
    /// is none of those, or counts no game gives (X must have as many marks
    /// as O or one more).
    pub fn parse(text: &str) -> Result<Board, String> {
        let t = text.trim();
        let (mover, body) = match t.split_once(':') {
            Some((m, b)) => (Some(m.trim().to_ascii_uppercase()), b.trim()),
            None => (None, t),
        };
        let ranks: Vec<&str> = body.split('/').map(str::trim).collect();
        if ranks.len() != 3 || ranks.iter().any(|r| r.chars().count() != 3) {
            return Err(format!(
                "`{text}` is not a tic-tac-toe board: write its 3 ranks from the top, `/` between, each 3 cells of X, O or . (e.g. `X.O/.X./...`)"
            ));
        }
        let mut b = Board::default();
        for (i, r) in ranks.iter().enumerate() {
            for (file, ch) in r.chars().enumerate() {
                let c = file + 3 * (2 - i);
                match ch.to_ascii_uppercase() {
                    'X' => b.x |= 1 << c,
                    'O' => b.o |= 1 << c,
                    '.' | '-' => {}
                    other => {
                        return Err(format!("`{text}`: `{other}` is not a cell (X, O, . or -)"));
                    }
                }
            }
        }
        let (xs, os) = (b.x.count_ones(), b.o.count_ones());
        if xs != os && xs != os + 1 {
            return Err(format!(
                "`{text}` has {xs} X and {os} O: X plays first, so X has as many marks as O or one more"
            ));
        }
        let to_move = if b.x_to_move() { "X" } else { "O" };
        if let Some(m) = mover.as_deref().filter(|m| *m != "X" && *m != "O") {
            return Err(format!(
                "`{text}`: `{m}:` names no player (write X: or O: before the ranks, or nothing)"
            ));
        }
        match mover.as_deref() {
            Some(m) if m != to_move => Err(format!(
                "`{text}` names {m} to move, but with {xs} X and {os} O it is {to_move}'s turn"
            )),
            _ => Ok(b),
        }
    }
}

impl std::fmt::Display for Board {
    /// The ranks from the top, `/` between (what [`Board::parse`] reads).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.ranks().join("/"))
    }
}

/// Tic-tac-toe as layers of the engine (module doc).
#[derive(Debug, Clone)]
pub struct TicTacToe {
    /// The ranking of each layer (boards after k plays).
    layers: [Placement; CELLS + 1],
}

impl Default for TicTacToe {
    fn default() -> Self {
        TicTacToe::new()
    }
}

impl TicTacToe {
    /// The 10 layers.
    pub fn new() -> TicTacToe {
        TicTacToe {
            layers: std::array::from_fn(|k| {
                Placement::new(CELLS, k.div_ceil(2), k / 2).expect("k ≤ 9 marks on 9 cells")
            }),
        }
    }
}

impl LayeredGame for TicTacToe {
    type Position = Board;

    fn layer_count(&self) -> usize {
        CELLS + 1
    }

    fn layer_name(&self, layer: usize) -> String {
        layer.to_string()
    }

    fn layer_size(&self, layer: usize) -> u64 {
        self.layers[layer].size()
    }

    fn child_layers(&self, layer: usize) -> Vec<usize> {
        if layer < CELLS {
            vec![layer + 1]
        } else {
            Vec::new()
        }
    }

    fn unrank(&self, layer: usize, rank: u64) -> Board {
        let (x, o) = self.layers[layer].unrank(rank);
        Board {
            x: x as u16,
            o: o as u16,
        }
    }

    fn rank(&self, p: &Board) -> (usize, u64) {
        let k = p.plays();
        (k, self.rank_in(k, p))
    }

    fn layer_of(&self, p: &Board) -> usize {
        p.plays()
    }

    fn rank_in(&self, layer: usize, p: &Board) -> u64 {
        self.layers[layer].rank(u64::from(p.x), u64::from(p.o))
    }

    fn terminal(&self, p: &Board) -> Option<Terminal> {
        p.outcome()
    }

    fn children(&self, p: &Board, f: &mut impl FnMut(Board)) {
        let mut e = p.empty();
        while e != 0 {
            f(p.play(e.trailing_zeros() as usize));
            e &= e - 1;
        }
    }

    /// No move stays in its layer.
    fn parents(&self, _p: &Board, _f: &mut impl FnMut(Board)) {}

    fn symmetries(&self, p: &Board, f: &mut impl FnMut(Board)) {
        for g in 1..8 {
            f(p.image(g));
        }
    }

    fn for_each_position(
        &self,
        layer: usize,
        start: u64,
        end: u64,
        f: &mut impl FnMut(u64, Board),
    ) {
        let it = self.layers[layer].iter_from(start);
        for (r, (x, o)) in (start..end).zip(it) {
            f(
                r,
                Board {
                    x: x as u16,
                    o: o as u16,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests;
