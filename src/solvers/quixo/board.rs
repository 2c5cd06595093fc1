//! Geometry, moves, un-moves and the end-of-play rule of one board size.
//!
//! A move is stored as a *slide*: the cells of the line segment from the
//! source cell to the insertion end (`seg`), the cells that shift by one
//! (`shifted`, every cell of `seg` but the source), the direction and size
//! of that shift in bit positions (1 along a row, n along a column) and the
//! insertion cell (`dest`). Playing it is a handful of mask operations on
//! both masks; un-playing it is the same with the shift reversed.

use super::symmetry::cell_maps;
use super::{MAX_N, MIN_N, QuixoError};

/// The edge of the board a cube is pushed in from.
///
/// `Left` is file a (x = 0), `Right` file n (x = n−1), `Bottom` rank 1
/// (y = 0), `Top` rank n (y = n−1). Pushing in from `Left` shifts the cubes
/// of the source's row between file a and the source one cell right; from
/// `Bottom`, the cubes of the source's column one cell up; and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Edge {
    /// File a (x = 0); the row shifts right.
    Left,
    /// The last file (x = n−1); the row shifts left.
    Right,
    /// Rank 1 (y = 0); the column shifts up.
    Bottom,
    /// The last rank (y = n−1); the column shifts down.
    Top,
}

impl Edge {
    /// The four edges in move order: left, right, bottom, top.
    pub const ALL: [Edge; 4] = [Edge::Left, Edge::Right, Edge::Bottom, Edge::Top];
}

/// A move: take the cube at border cell `source` (index `x + n·y`) and push
/// it back in from `edge`, which must be an edge `source` does not lie on.
///
/// Whether the cube was blank or the mover's is a fact of the board, not of
/// the move. Notation: [`Rules::move_name`] (`b1-a1`: take b1, push it in
/// at a1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// The cell the cube is taken from (on the border).
    pub source: u8,
    /// The edge it is pushed in from.
    pub edge: Edge,
}

/// A board seen by the player to move: `mine` holds the cells showing the
/// mover's symbol, `theirs` the opponent's (bit `x + n·y`); the rest are
/// blank. The masks never overlap and stay inside the n² cells
/// ([`Rules::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Board {
    /// Cells showing the symbol of the player to move.
    pub mine: u32,
    /// Cells showing the opponent's symbol.
    pub theirs: u32,
}

impl Board {
    /// The start: every cube blank.
    pub const EMPTY: Board = Board { mine: 0, theirs: 0 };

    /// The board with these masks (not checked; see [`Rules::check`]).
    pub const fn new(mine: u32, theirs: u32) -> Board {
        Board { mine, theirs }
    }

    /// Its layer: (cubes mine, cubes theirs).
    pub fn layer(self) -> (usize, usize) {
        (
            self.mine.count_ones() as usize,
            self.theirs.count_ones() as usize,
        )
    }

    /// The same cubes seen by the other player (`mine` and `theirs`
    /// swapped). This is the colour swap: the value of `b.swapped()` with
    /// the other player to move has nothing to do with the value of `b`.
    pub fn swapped(self) -> Board {
        Board {
            mine: self.theirs,
            theirs: self.mine,
        }
    }
}

/// The value of a finished position for the player to move (see the module
/// doc: a line of the mover's own symbol is a win, else a line of the
/// opponent's is a loss).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player to move has won (the opponent's last move made a line of
    /// the player's symbol).
    Win,
    /// The player to move has lost (the opponent made a line of their own
    /// symbol and none of the player's).
    Loss,
}

/// One move as mask operations.
#[derive(Debug, Clone, Copy)]
struct Slide {
    mv: Move,
    /// The source cell's bit.
    src: u32,
    /// Cells from the source to the insertion end, both included.
    seg: u32,
    /// Cells of `seg` that shift (all but the source), before the shift.
    shifted: u32,
    /// The insertion cell's bit.
    dest: u32,
    /// Shift towards higher bit numbers (pushed in from left or bottom).
    up: bool,
    /// Bits per step: 1 along a row, n along a column.
    by: u8,
}

impl Slide {
    #[inline]
    fn forward(&self, m: u32) -> u32 {
        if self.up { m << self.by } else { m >> self.by }
    }

    #[inline]
    fn back(&self, m: u32) -> u32 {
        if self.up { m >> self.by } else { m << self.by }
    }

    /// The child of `b` (from the opponent's view). `b.theirs` must not
    /// hold the source.
    #[inline]
    fn apply(&self, b: Board) -> Board {
        let mine = (b.mine & !self.seg) | self.forward(b.mine & self.shifted) | self.dest;
        let theirs = (b.theirs & !self.seg) | self.forward(b.theirs & self.shifted);
        Board {
            mine: theirs,
            theirs: mine,
        }
    }

    /// The parent of `c` with the source cell blank (`c.theirs` must hold
    /// `dest`, the cube just pushed in); the parent with the source the
    /// mover's is this one with `src` added to `mine`. The shifted cubes
    /// now stand on `seg` minus `dest`; they shift back, and the parent's
    /// mover is the child's opponent.
    #[inline]
    fn unapply(&self, c: Board) -> Board {
        let image = self.seg & !self.dest;
        Board {
            mine: (c.theirs & !self.seg) | self.back(c.theirs & image),
            theirs: (c.mine & !self.seg) | self.back(c.mine & image),
        }
    }
}

/// The tables of one board size: cells, border, lines, every move as a
/// slide, and the cell maps of the 8 symmetries. Cheap to build (a few
/// hundred entries); build once per board size and share.
#[derive(Debug, Clone)]
pub struct Rules {
    n: usize,
    full: u32,
    border: u32,
    lines: Vec<u32>,
    slides: Vec<Slide>,
    /// `slot[cell][edge]`: the move's position in `slides`, or `u8::MAX`.
    slot: [[u8; 4]; 32],
    /// `perm[s][c]`: the cell that symmetry `s` sends cell `c` to.
    pub(super) perm: [[u8; 32]; 8],
}

impl Rules {
    /// The rules of the n×n board.
    ///
    /// # Errors
    /// [`QuixoError::BadSize`] unless `MIN_N ≤ n ≤ MAX_N` (2 … 5).
    pub fn new(n: usize) -> Result<Rules, QuixoError> {
        if !(MIN_N..=MAX_N).contains(&n) {
            return Err(QuixoError::BadSize(n));
        }
        let cells = n * n;
        let bit = |x: usize, y: usize| 1u32 << (x + n * y);
        let full = if cells == 32 {
            u32::MAX
        } else {
            (1u32 << cells) - 1
        };
        let mut border = 0;
        for y in 0..n {
            for x in 0..n {
                if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
                    border |= bit(x, y);
                }
            }
        }
        let mut lines = Vec::with_capacity(2 * n + 2);
        for y in 0..n {
            lines.push((0..n).fold(0, |m, x| m | bit(x, y)));
        }
        for x in 0..n {
            lines.push((0..n).fold(0, |m, y| m | bit(x, y)));
        }
        lines.push((0..n).fold(0, |m, i| m | bit(i, i)));
        lines.push((0..n).fold(0, |m, i| m | bit(i, n - 1 - i)));

        let mut slides = Vec::new();
        for cell in 0..cells {
            let (x, y) = (cell % n, cell / n);
            if border & (1 << cell) == 0 {
                continue;
            }
            for edge in Edge::ALL {
                // The cells from the insertion end to the source, in order.
                let (run, up, by): (Vec<u32>, bool, u8) = match edge {
                    Edge::Left if x != 0 => ((0..=x).map(|i| bit(i, y)).collect(), true, 1),
                    Edge::Right if x != n - 1 => {
                        ((x..n).rev().map(|i| bit(i, y)).collect(), false, 1)
                    }
                    Edge::Bottom if y != 0 => ((0..=y).map(|j| bit(x, j)).collect(), true, n as u8),
                    Edge::Top if y != n - 1 => {
                        ((y..n).rev().map(|j| bit(x, j)).collect(), false, n as u8)
                    }
                    _ => continue,
                };
                let seg = run.iter().fold(0, |m, b| m | b);
                let src = 1u32 << cell;
                slides.push(Slide {
                    mv: Move {
                        source: cell as u8,
                        edge,
                    },
                    src,
                    seg,
                    shifted: seg & !src,
                    dest: run[0],
                    up,
                    by,
                });
            }
        }
        let mut slot = [[u8::MAX; 4]; 32];
        for (i, s) in slides.iter().enumerate() {
            slot[s.mv.source as usize][s.mv.edge as usize] = i as u8;
        }
        Ok(Rules {
            n,
            full,
            border,
            lines,
            slides,
            slot,
            perm: cell_maps(n),
        })
    }

    /// Board size n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Cells n².
    pub fn cells(&self) -> usize {
        self.n * self.n
    }
    /// The mask of all n² cells.
    pub fn full_mask(&self) -> u32 {
        self.full
    }
    /// The mask of the 4(n−1) border cells (where cubes are taken).
    pub fn border_mask(&self) -> u32 {
        self.border
    }
    /// The 2n + 2 lines as masks: rows (rank 1 first), columns (file a
    /// first), the diagonal a1–(n)(n), the diagonal a(n)–(n)1.
    pub fn lines(&self) -> &[u32] {
        &self.lines
    }
    /// The number of distinct moves of the board size, legal or not:
    /// 8 + 12(n−2) (20, 32, 44 for n = 3, 4, 5). The most a board can have.
    pub fn move_count(&self) -> usize {
        self.slides.len()
    }
    /// Every move of the board size in move order: by source cell, then
    /// left, right, bottom, top. [`Rules::moves`] keeps this order.
    pub fn all_moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.slides.iter().map(|s| s.mv)
    }
    /// The position of `mv` in [`Rules::all_moves`], if it is a move of this
    /// size (source on the border and not on `edge`).
    pub fn move_index(&self, mv: Move) -> Option<usize> {
        let i = *self.slot.get(mv.source as usize)?.get(mv.edge as usize)?;
        (i != u8::MAX).then_some(i as usize)
    }

    /// The cell where `mv` pushes its cube in: the end of the source's row
    /// (`Left`, `Right`) or column (`Bottom`, `Top`) on that edge.
    ///
    /// # Panics
    /// If `mv` is not a move of this size.
    pub fn dest_cell(&self, mv: Move) -> u8 {
        let s = &self.slides[self.move_index(mv).expect("a move of this board size")];
        s.dest.trailing_zeros() as u8
    }

    /// The move taking the cube at `source` and pushing it in at `dest`, if
    /// that is a move of this size (`dest` the end of the source's row or
    /// column, not the source itself). Each move has one such pair.
    pub fn move_between(&self, source: u8, dest: u8) -> Option<Move> {
        self.slides
            .iter()
            .find(|s| s.mv.source == source && s.dest == 1 << dest)
            .map(|s| s.mv)
    }

    /// Whether `b` is a board of this size: masks disjoint and inside the
    /// n² cells.
    ///
    /// # Errors
    /// [`QuixoError::BadBoard`] otherwise.
    pub fn check(&self, b: Board) -> Result<(), QuixoError> {
        if b.mine & b.theirs != 0 || (b.mine | b.theirs) & !self.full != 0 {
            return Err(QuixoError::BadBoard {
                mine: b.mine,
                theirs: b.theirs,
                n: self.n,
            });
        }
        Ok(())
    }

    /// Whether `mask` holds a whole line.
    #[inline]
    pub fn has_line(&self, mask: u32) -> bool {
        for &l in &self.lines {
            if mask & l == l {
                return true;
            }
        }
        false
    }

    /// The value of `b` for the player to move if play has ended, else
    /// `None`: `Win` if `mine` holds a line (whatever `theirs` holds), else
    /// `Loss` if `theirs` does. Source: Gigamic's rules and GamesmanOne's
    /// `QuixoPrimitive` (module doc). This judges the board alone, so it
    /// also answers for boards no game reaches.
    #[inline]
    pub fn outcome(&self, b: Board) -> Option<Outcome> {
        if self.has_line(b.mine) {
            Some(Outcome::Win)
        } else if self.has_line(b.theirs) {
            Some(Outcome::Loss)
        } else {
            None
        }
    }

    /// Whether `mv` is legal on `b`: a move of this size whose source cube
    /// is blank or the mover's. Legality does not look at the end of play:
    /// a finished board still has its moves (a solver ignores them).
    pub fn is_legal(&self, b: Board, mv: Move) -> bool {
        self.move_index(mv).is_some() && b.theirs & (1 << mv.source) == 0
    }

    /// The legal moves of `b` in move order ([`Rules::all_moves`]): every
    /// move whose source cube is not the opponent's. At most
    /// [`Rules::move_count`]; a board whose play goes on has at least one
    /// (a border all the opponent's holds a row of theirs).
    pub fn moves(&self, b: Board) -> impl Iterator<Item = Move> + '_ {
        self.slides
            .iter()
            .filter(move |s| b.theirs & s.src == 0)
            .map(|s| s.mv)
    }

    /// Every legal move of `b` with its child, in move order. Two moves can
    /// give the same child (a run of equal cubes pushed either way); they
    /// are listed once each.
    pub fn children(&self, b: Board) -> impl Iterator<Item = (Move, Board)> + '_ {
        self.slides
            .iter()
            .filter(move |s| b.theirs & s.src == 0)
            .map(move |s| (s.mv, s.apply(b)))
    }

    /// The child of `b` after `mv`, seen by the opponent (who moves next):
    /// `mine` and `theirs` swap. Its layer is `(b, a)` if the cube taken
    /// was the mover's, `(b, a + 1)` if it was blank, for `b` in `(a, b)`.
    ///
    /// # Errors
    /// [`QuixoError::BadMove`] if `mv` is not a move of this size or its
    /// source cube is the opponent's.
    pub fn play(&self, b: Board, mv: Move) -> Result<Board, QuixoError> {
        let i = self.move_index(mv).ok_or_else(|| QuixoError::BadMove {
            text: format!("{mv:?}"),
            why: format!("not a move of the {0}×{0} board", self.n),
        })?;
        if b.theirs & (1 << mv.source) != 0 {
            return Err(QuixoError::BadMove {
                text: self.move_name(mv),
                why: "the cube taken shows the opponent's symbol".into(),
            });
        }
        Ok(self.slides[i].apply(b))
    }

    /// Every (parent, move) with `play(parent, move) == b` and the move
    /// legal in the parent, each pair once. For each move whose insertion
    /// cell holds an opponent's cube in `b` (the cube just pushed in), there
    /// are two parents: the source cube was blank (parent layer
    /// `(b − 1, a)` for `b` in `(a, b)`) or the mover's (parent layer
    /// `(b, a)`). Parents are seen by their own mover (the player who is
    /// not to move in `b`). Parents whose play had already ended are
    /// included; a retrograde solver skips them ([`Rules::outcome`]).
    pub fn predecessors(&self, b: Board) -> impl Iterator<Item = (Board, Move)> + '_ {
        self.slides
            .iter()
            .filter(move |s| b.theirs & s.dest != 0)
            .flat_map(move |s| {
                let blank = s.unapply(b);
                let own = Board {
                    mine: blank.mine | s.src,
                    theirs: blank.theirs,
                };
                [(blank, s.mv), (own, s.mv)]
            })
    }

    /// The parents of `b` with as many cubes as `b` (the cube taken was
    /// the mover's own, not a blank), one call of `f` per (parent, move):
    /// the half of [`Rules::predecessors`] inside `b`'s pair of layers,
    /// without building the other half. Finished parents are included.
    #[inline]
    pub fn own_cube_predecessors(&self, b: Board, mut f: impl FnMut(Board)) {
        for s in &self.slides {
            if b.theirs & s.dest != 0 {
                let blank = s.unapply(b);
                f(Board {
                    mine: blank.mine | s.src,
                    theirs: blank.theirs,
                });
            }
        }
    }

    /// The name of a cell: file letter and rank (`a1` = cell 0, `b1` = 1).
    ///
    /// # Panics
    /// If `cell ≥ n²`.
    pub fn cell_name(&self, cell: u8) -> String {
        assert!(
            (cell as usize) < self.cells(),
            "cell {cell} on a {0}×{0} board",
            self.n
        );
        crate::solvers::square::square_name(usize::from(cell), self.n)
    }

    /// The cell named `text` (`a1` … e.g. `e5`), case-insensitive.
    ///
    /// # Errors
    /// [`QuixoError::BadCell`] if it is not a cell of this board.
    pub fn parse_cell(&self, text: &str) -> Result<u8, QuixoError> {
        let bad = || QuixoError::BadCell {
            name: text.to_string(),
            n: self.n,
        };
        crate::solvers::square::parse_square(text, self.n)
            .map(|sq| sq as u8)
            .ok_or_else(bad)
    }

    /// The name of a move: source cell, `-`, insertion cell (`b1-a1`: take
    /// the cube on b1 and push it in at a1, shifting a1 to b1; `a1-a3` on
    /// 3×3: take a1 and push it in from the top of file a). Source and
    /// insertion cell determine the edge.
    ///
    /// # Panics
    /// If `mv` is not a move of this size.
    pub fn move_name(&self, mv: Move) -> String {
        format!(
            "{}-{}",
            self.cell_name(mv.source),
            self.cell_name(self.dest_cell(mv))
        )
    }

    /// Parses a move name ([`Rules::move_name`]), without looking at any
    /// board (legality is [`Rules::is_legal`]).
    ///
    /// # Errors
    /// [`QuixoError::BadMove`] unless the text is `<cell>-<cell>` naming a
    /// border cell and the end of its row or column on another edge.
    pub fn parse_move(&self, text: &str) -> Result<Move, QuixoError> {
        let bad = |why: &str| QuixoError::BadMove {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (a, b) = text
            .trim()
            .split_once('-')
            .ok_or_else(|| bad("expected <source>-<insertion cell>, e.g. b1-a1"))?;
        let src = self.parse_cell(a).map_err(|e| bad(&e.to_string()))?;
        let dst = self.parse_cell(b).map_err(|e| bad(&e.to_string()))?;
        if self.border & (1 << src) == 0 {
            return Err(bad("the source is not on the border"));
        }
        self.move_between(src, dst).ok_or_else(|| {
            bad("the insertion cell must be the end of the source's row or column on an edge the source is not on")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Rng, all_boards};
    use super::*;

    fn rules(n: usize) -> Rules {
        Rules::new(n).unwrap()
    }

    /// A naive move on a grid of chars, independent of the slide tables.
    fn naive_play(n: usize, b: Board, source: u8, edge: Edge) -> Board {
        let mut g = vec![0u8; n * n]; // 0 blank, 1 mine, 2 theirs
        for (c, cell) in g.iter_mut().enumerate() {
            *cell = if b.mine >> c & 1 == 1 {
                1
            } else if b.theirs >> c & 1 == 1 {
                2
            } else {
                0
            };
        }
        let (x, y) = (source as usize % n, source as usize / n);
        let at = |x: usize, y: usize| x + n * y;
        match edge {
            Edge::Left => {
                for i in (1..=x).rev() {
                    g[at(i, y)] = g[at(i - 1, y)];
                }
                g[at(0, y)] = 1;
            }
            Edge::Right => {
                for i in x..n - 1 {
                    g[at(i, y)] = g[at(i + 1, y)];
                }
                g[at(n - 1, y)] = 1;
            }
            Edge::Bottom => {
                for j in (1..=y).rev() {
                    g[at(x, j)] = g[at(x, j - 1)];
                }
                g[at(x, 0)] = 1;
            }
            Edge::Top => {
                for j in y..n - 1 {
                    g[at(x, j)] = g[at(x, j + 1)];
                }
                g[at(x, n - 1)] = 1;
            }
        }
        let mut out = Board::EMPTY;
        for (c, &v) in g.iter().enumerate() {
            // Swap: the opponent moves next.
            if v == 2 {
                out.mine |= 1 << c;
            } else if v == 1 {
                out.theirs |= 1 << c;
            }
        }
        out
    }

    #[test]
    fn move_counts_are_8_plus_12_n_minus_2() {
        for (n, moves) in [(2, 8), (3, 20), (4, 32), (5, 44)] {
            let r = rules(n);
            assert_eq!(r.move_count(), moves);
            assert_eq!(r.moves(Board::EMPTY).count(), moves);
            assert_eq!(r.border_mask().count_ones() as usize, 4 * (n - 1));
            assert_eq!(r.lines().len(), 2 * n + 2);
            // Corners 2 moves, other border cubes 3.
            for c in 0..r.cells() as u8 {
                let k = r.all_moves().filter(|m| m.source == c).count();
                let (x, y) = (c as usize % n, c as usize / n);
                let on_x = x == 0 || x == n - 1;
                let on_y = y == 0 || y == n - 1;
                let want = match (on_x, on_y) {
                    (true, true) => 2,
                    (false, false) => 0,
                    _ => 3,
                };
                assert_eq!(k, want, "cell {c} on {n}x{n}");
            }
        }
        for n in 2..=5 {
            let r = rules(n);
            for (i, mv) in r.all_moves().enumerate() {
                assert_eq!(r.move_index(mv), Some(i));
            }
            // a1 is on the left and bottom edges; an inner cell has no move.
            assert_eq!(
                r.move_index(Move {
                    source: 0,
                    edge: Edge::Left
                }),
                None
            );
            assert_eq!(
                r.move_index(Move {
                    source: 0,
                    edge: Edge::Bottom
                }),
                None
            );
            if n >= 3 {
                assert_eq!(
                    r.move_index(Move {
                        source: (n + 1) as u8,
                        edge: Edge::Top
                    }),
                    None
                );
            }
            assert_eq!(
                r.move_index(Move {
                    source: 40,
                    edge: Edge::Top
                }),
                None
            );
        }
        assert_eq!(Rules::new(1).unwrap_err(), QuixoError::BadSize(1));
        assert_eq!(Rules::new(6).unwrap_err(), QuixoError::BadSize(6));
    }

    #[test]
    fn slides_agree_with_a_naive_grid_move() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for n in 2..=5 {
            let r = rules(n);
            for _ in 0..2000 {
                let b = rng.board(&r);
                for mv in r.all_moves() {
                    let legal = b.theirs >> mv.source & 1 == 0;
                    assert_eq!(r.is_legal(b, mv), legal);
                    match r.play(b, mv) {
                        Ok(c) => {
                            assert!(legal);
                            assert_eq!(
                                c,
                                naive_play(n, b, mv.source, mv.edge),
                                "{n}x{n} {b:?} {mv:?}"
                            );
                            r.check(c).unwrap();
                            // Layer rule.
                            let (a, bb) = b.layer();
                            let own = b.mine >> mv.source & 1 == 1;
                            assert_eq!(c.layer(), if own { (bb, a) } else { (bb, a + 1) });
                        }
                        Err(_) => assert!(!legal),
                    }
                }
            }
        }
    }

    #[test]
    fn worked_examples_on_five_by_five() {
        let r = rules(5);
        // Take c1 (blank) and push it in from the left: a1, b1 shift right.
        let b = Board::new(0, 0b1); // theirs on a1
        let c = r.play(b, r.parse_move("c1-a1").unwrap()).unwrap();
        // Mover's cube now on a1, the opponent's moved to b1; seen by the opponent.
        assert_eq!(c, Board::new(0b10, 0b1));
        // Take a1 (blank) and push it in from the top of file a.
        let c = r
            .play(Board::EMPTY, r.parse_move("a1-a5").unwrap())
            .unwrap();
        assert_eq!(c, Board::new(0, 1 << 20));
        assert_eq!(
            r.move_name(Move {
                source: 2,
                edge: Edge::Top
            }),
            "c1-c5"
        );
        assert_eq!(
            r.move_name(Move {
                source: 10,
                edge: Edge::Right
            }),
            "a3-e3"
        );
        // Not on the border, not a line end, back where it came from.
        assert!(r.parse_move("c3-c1").is_err());
        assert!(r.parse_move("b1-c1").is_err());
        assert!(r.parse_move("a1-a1").is_err());
        assert!(r.parse_move("b1-b2").is_err());
        assert!(r.parse_move("b1").is_err());
        // The opponent's cube cannot be taken.
        assert!(
            r.play(Board::new(0, 1 << 2), r.parse_move("c1-a1").unwrap())
                .is_err()
        );
        for mv in r.all_moves() {
            assert_eq!(r.parse_move(&r.move_name(mv)).unwrap(), mv);
        }
    }

    #[test]
    fn outcome_mover_loses_on_a_line_of_the_opponents_symbol() {
        let r = rules(3);
        let row1 = 0b111;
        // The opponent made my line: I win, even if they also have one.
        assert_eq!(r.outcome(Board::new(row1, 0)), Some(Outcome::Win));
        assert_eq!(r.outcome(Board::new(row1, 0b111 << 6)), Some(Outcome::Win));
        assert_eq!(r.outcome(Board::new(0, 0b100_010_001)), Some(Outcome::Loss));
        assert_eq!(r.outcome(Board::new(0b011, 0b100)), None);
        assert_eq!(r.outcome(Board::EMPTY), None);
        // A move making lines of both symbols loses for the mover: every
        // such move of every 3×3 board leaves a win for the opponent.
        let mut both = 0;
        for b in all_boards(3) {
            if r.outcome(b).is_some() {
                continue;
            }
            for (_, c) in r.children(b) {
                // Child seen by the opponent: the mover's cubes are `theirs`.
                if r.has_line(c.mine) && r.has_line(c.theirs) {
                    both += 1;
                    assert_eq!(r.outcome(c), Some(Outcome::Win), "the mover lost");
                }
            }
        }
        assert!(both > 0);
    }

    #[test]
    fn unmoves_invert_moves_exactly() {
        let mut rng = Rng(12345);
        for n in 2..=5 {
            let r = rules(n);
            for _ in 0..3000 {
                let p = rng.board(&r);
                // Every child's predecessors hold (p, mv) exactly once.
                for (mv, c) in r.children(p) {
                    let k = r
                        .predecessors(c)
                        .filter(|&(q, m)| q == p && m == mv)
                        .count();
                    assert_eq!(k, 1, "{n}x{n} parent {p:?} {mv:?} child {c:?}");
                }
                // Every predecessor's move leads back here, and is legal.
                let mut seen = std::collections::HashSet::new();
                for (q, mv) in r.predecessors(p) {
                    r.check(q).unwrap();
                    assert!(r.is_legal(q, mv));
                    assert_eq!(r.play(q, mv).unwrap(), p);
                    assert!(seen.insert((q, mv)), "listed twice");
                    let (a, b) = p.layer();
                    assert!(q.layer() == (b, a) || (b >= 1 && q.layer() == (b - 1, a)));
                }
            }
        }
    }

    #[test]
    fn predecessors_are_complete_on_every_3x3_board() {
        // Exhaustive: the number of (parent, move) pairs found by un-moves
        // equals the number of (parent, move) pairs over all boards.
        let r = rules(3);
        let mut from_moves = std::collections::HashMap::<Board, usize>::new();
        let mut boards = Vec::new();
        for b in all_boards(3) {
            boards.push(b);
            for (_, c) in r.children(b) {
                *from_moves.entry(c).or_default() += 1;
            }
        }
        for b in boards {
            assert_eq!(
                r.predecessors(b).count(),
                from_moves.get(&b).copied().unwrap_or(0)
            );
        }
    }

    #[test]
    fn cells_parse_and_print() {
        let r = rules(5);
        assert_eq!(r.cell_name(0), "a1");
        assert_eq!(r.cell_name(24), "e5");
        assert_eq!(r.parse_cell("C2").unwrap(), 7);
        for bad in ["f1", "a0", "a6", "", "1a", "a"] {
            assert!(r.parse_cell(bad).is_err(), "{bad}");
        }
    }
}
