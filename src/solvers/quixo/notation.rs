//! Positions with the absolute colour to move, and their text forms.
//!
//! **Compact form** (one line): the colour to move, `:`, then the ranks from
//! the top (rank n) down to rank 1, separated by `/`, each rank's files
//! a … left to right as `X`, `O` or `.` (blank). The 3×3 board with X on a3
//! and b2, O on c1 and O to move is `O:X../.X./..O`; the start of 5×5 is
//! `X:...../...../...../...../.....`.
//!
//! **Grid form** (n + 1 lines): the same ranks, one per line, top first,
//! then `X to move` or `O to move`:
//!
//! ```text
//! X..
//! .X.
//! ..O
//! O to move
//! ```
//!
//! Parsing takes either form (letters in either case, `-` also read as a
//! blank) and infers n from the number of ranks; it does not ask whether a
//! game can reach the position.

use super::{Board, MAX_N, MIN_N, Move, QuixoError, Rules};
use std::fmt;
use std::str::FromStr;

/// A player's colour. X moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Colour {
    /// The first player.
    X,
    /// The second player.
    O,
}

impl Colour {
    /// The other colour.
    pub fn other(self) -> Colour {
        match self {
            Colour::X => Colour::O,
            Colour::O => Colour::X,
        }
    }

    /// `'X'` or `'O'`.
    pub fn symbol(self) -> char {
        match self {
            Colour::X => 'X',
            Colour::O => 'O',
        }
    }
}

/// A position: the board seen by the player to move, the board size and
/// that player's colour. `board.mine` are the cubes of colour `to_move`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    n: usize,
    board: Board,
    to_move: Colour,
}

impl Position {
    /// The position with `board` (seen by the player to move) and that
    /// player's colour.
    ///
    /// # Errors
    /// [`QuixoError::BadSize`] or [`QuixoError::BadBoard`] if it is not a
    /// board of size n.
    pub fn new(n: usize, board: Board, to_move: Colour) -> Result<Position, QuixoError> {
        Rules::new(n)?.check(board)?;
        Ok(Position { n, board, to_move })
    }

    /// The start: every cube blank, X to move.
    ///
    /// # Panics
    /// If n is outside 2 … 5.
    pub fn start(n: usize) -> Position {
        assert!((MIN_N..=MAX_N).contains(&n), "board size {n}");
        Position {
            n,
            board: Board::EMPTY,
            to_move: Colour::X,
        }
    }

    /// The position with X on `x`, O on `o` (cell masks) and `to_move` to
    /// move.
    ///
    /// # Errors
    /// As [`Position::new`].
    pub fn from_colours(n: usize, x: u32, o: u32, to_move: Colour) -> Result<Position, QuixoError> {
        let board = match to_move {
            Colour::X => Board::new(x, o),
            Colour::O => Board::new(o, x),
        };
        Position::new(n, board, to_move)
    }

    /// Board size n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// The board seen by the player to move.
    pub fn board(&self) -> Board {
        self.board
    }
    /// The colour to move.
    pub fn to_move(&self) -> Colour {
        self.to_move
    }
    /// The cells showing X.
    pub fn x_mask(&self) -> u32 {
        match self.to_move {
            Colour::X => self.board.mine,
            Colour::O => self.board.theirs,
        }
    }
    /// The cells showing O.
    pub fn o_mask(&self) -> u32 {
        match self.to_move {
            Colour::X => self.board.theirs,
            Colour::O => self.board.mine,
        }
    }

    /// The position after `mv`: the child board, the other colour to move.
    ///
    /// # Errors
    /// As [`Rules::play`]; [`QuixoError::BadSize`] if `rules` is for
    /// another size.
    pub fn play(&self, rules: &Rules, mv: Move) -> Result<Position, QuixoError> {
        if rules.n() != self.n {
            return Err(QuixoError::BadSize(rules.n()));
        }
        Ok(Position {
            n: self.n,
            board: rules.play(self.board, mv)?,
            to_move: self.to_move.other(),
        })
    }

    /// The ranks, top first, as strings of `X`, `O`, `.`.
    fn ranks(&self) -> Vec<String> {
        let (x, o) = (self.x_mask(), self.o_mask());
        (0..self.n)
            .rev()
            .map(|y| {
                (0..self.n)
                    .map(|f| {
                        let c = f + self.n * y;
                        if x >> c & 1 == 1 {
                            'X'
                        } else if o >> c & 1 == 1 {
                            'O'
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The grid form: n ranks, top first, then `X to move` / `O to move`
    /// (lines end with `\n`).
    pub fn grid(&self) -> String {
        let mut s = String::new();
        for r in self.ranks() {
            s += &r;
            s.push('\n');
        }
        s += &format!("{} to move\n", self.to_move.symbol());
        s
    }

    /// Parses the compact or the grid form (module doc).
    ///
    /// # Errors
    /// [`QuixoError::BadPosition`] if the text is neither, the ranks are not
    /// n strings of n cells with 2 ≤ n ≤ 5, or a cell is not `X`, `O`, `.`
    /// or `-`.
    pub fn parse(text: &str) -> Result<Position, QuixoError> {
        let bad = |why: String| QuixoError::BadPosition {
            text: text.to_string(),
            why,
        };
        let t = text.trim();
        let colour = |s: &str| match s.trim().to_ascii_uppercase().as_str() {
            "X" => Some(Colour::X),
            "O" => Some(Colour::O),
            _ => None,
        };
        let (to_move, ranks): (Colour, Vec<&str>) = if let Some((side, rest)) = t.split_once(':') {
            let c = colour(side).ok_or_else(|| bad(format!("`{side}` is not X or O")))?;
            (c, rest.trim().split('/').map(str::trim).collect())
        } else {
            let lines: Vec<&str> = t.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            let (last, ranks) = lines.split_last().ok_or_else(|| bad("empty".into()))?;
            let side = last
                .strip_suffix("to move")
                .and_then(colour)
                .ok_or_else(|| {
                    bad("say who is to move: `X:` or `O:` before the ranks \
                         (e.g. `X:..../..../..../....`), or a last line `X to move`"
                        .into())
                })?;
            (side, ranks.to_vec())
        };
        let n = ranks.len();
        if !(MIN_N..=MAX_N).contains(&n) {
            return Err(bad(format!(
                "{n} ranks: boards are {MIN_N}×{MIN_N} to {MAX_N}×{MAX_N}"
            )));
        }
        let (mut x, mut o) = (0u32, 0u32);
        for (i, rank) in ranks.iter().enumerate() {
            let y = n - 1 - i;
            let cells: Vec<char> = rank.chars().collect();
            if cells.len() != n {
                return Err(bad(format!(
                    "rank {} `{rank}` has {} cells, not {n}",
                    y + 1,
                    cells.len()
                )));
            }
            for (f, ch) in cells.into_iter().enumerate() {
                let bit = 1u32 << (f + n * y);
                match ch {
                    'X' | 'x' => x |= bit,
                    'O' | 'o' => o |= bit,
                    '.' | '-' => {}
                    _ => return Err(bad(format!("`{ch}` is not X, O, . or -"))),
                }
            }
        }
        Position::from_colours(n, x, o, to_move)
    }
}

/// The compact form (module doc), e.g. `O:X../.X./..O`.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.to_move.symbol(), self.ranks().join("/"))
    }
}

impl FromStr for Position {
    type Err = QuixoError;
    fn from_str(s: &str) -> Result<Position, QuixoError> {
        Position::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Rng;
    use super::*;

    #[test]
    fn compact_and_grid_forms() {
        let p: Position = "O:X../.X./..O".parse().unwrap();
        assert_eq!(p.n(), 3);
        assert_eq!(p.to_move(), Colour::O);
        // a3 = cell 6, b2 = 4, c1 = 2.
        assert_eq!(p.x_mask(), (1 << 6) | (1 << 4));
        assert_eq!(p.o_mask(), 1 << 2);
        assert_eq!(p.board(), Board::new(1 << 2, (1 << 6) | (1 << 4)));
        assert_eq!(p.to_string(), "O:X../.X./..O");
        assert_eq!(p.grid(), "X..\n.X.\n..O\nO to move\n");
        assert_eq!(Position::parse(&p.grid()).unwrap(), p);
        assert_eq!(Position::parse("  o : x-- / .x. / ..o ").unwrap(), p);
        assert_eq!(
            Position::start(5).to_string(),
            "X:...../...../...../...../....."
        );
        for bad in [
            "",
            "X:",
            "Z:.../.../...",
            "X:../../..",
            "X:../../../../../..",
            "X:..../..../..../....../....",
            "X:.../.a./...",
            "...\n...\n...\nX moves",
        ] {
            assert!(Position::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn play_swaps_the_colour_and_keeps_the_cubes() {
        let r = Rules::new(3).unwrap();
        let p = Position::start(3);
        let q = p.play(&r, r.parse_move("b1-b3").unwrap()).unwrap();
        // X's cube pushed in at b3, O to move.
        assert_eq!(q.to_string(), "O:.X./.../...");
        let q2 = q.play(&r, r.parse_move("a1-c1").unwrap()).unwrap();
        assert_eq!(q2.to_string(), "X:.X./.../..O");
        assert!(
            q2.play(&r, r.parse_move("c1-a1").unwrap()).is_err(),
            "O's cube, X to move"
        );
        assert!(
            q2.play(&Rules::new(4).unwrap(), r.parse_move("a1-c1").unwrap())
                .is_err()
        );
    }

    #[test]
    fn round_trips() {
        let mut rng = Rng(5);
        for n in 2..=5 {
            let r = Rules::new(n).unwrap();
            for _ in 0..300 {
                let b = rng.board(&r);
                for c in [Colour::X, Colour::O] {
                    let p = Position::new(n, b, c).unwrap();
                    assert_eq!(Position::parse(&p.to_string()).unwrap(), p);
                    assert_eq!(Position::parse(&p.grid()).unwrap(), p);
                    assert_eq!(p.x_mask() & p.o_mask(), 0);
                }
            }
        }
        assert!(Position::new(3, Board::new(1, 1), Colour::X).is_err());
        assert!(Position::new(3, Board::new(1 << 9, 0), Colour::X).is_err());
    }
}
