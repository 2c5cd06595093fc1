//! Dodgem on an n×n board (Colin Vout; Winning Ways, vol. 3).
//!
//! **Board.** Files a, b, … left → right (x = 0 … n−1), ranks 1 … n bottom →
//! top (y = 0 … n−1); square `x + n·y` (a1 = 0, b1 = 1, …, a2 = n). Blue
//! starts with n−1 cars on a2 … an and moves right, up or down, leaving only
//! off the right edge; Red starts with n−1 cars on b1 … (n)1 and moves up,
//! left or right, leaving only off the top edge. No captures, no sharing.
//! Blue moves first.
//!
//! **End of play.** If the opponent of the player to move has no car left,
//! the opponent has won (checked first). Otherwise a player to move who has
//! no legal move **wins** (so a move that leaves the opponent without moves
//! loses).
//!
//! **Positions** are `(blue set, red set, side to move)`. Cars never come
//! back, so the layer `(a, b)` = (blue cars, red cars) only moves within
//! itself or to `(a−1, b)` / `(a, b−1)`. [`Layer`] ranks a layer densely
//! (colex ranks of the car sets), [`solve_layer`] solves it by retrograde
//! analysis, [`reach_layer`] finds the positions reachable from the start.
//!
//! **Values** are one byte per position ([`Value::to_byte`]): draw, or win /
//! loss for the side to move with the depth in plies under best play (the
//! winner takes the shortest win, the loser the longest loss).
//!
//! - [`Board`], [`Side`], [`Position`], [`Move`]: rules, move generation,
//!   parsing and printing (`blue:a2,a3 red:b1,c1 to-move:blue`, `a2-b2`,
//!   `c3-off`), and the desJardins-notation converter [`from_desjardins`].

mod block;
mod index;
mod layered;
mod reach;
mod reflect;
mod solve;

pub use index::{Layer, binomial};
pub use layered::DodgemLayers;
pub use reach::{
    ReachBits, reach_layer, reach_layer_by_sweeps, reach_layer_forward, reach_layer_with_threads,
    reach_working_bytes,
};
pub use reflect::{Reflector, mirror_class_one, reflect_layer};
pub use solve::{
    DepthOverflow, LayerStats, histogram, solve_layer, solve_layer_both_classes,
    solve_layer_classes, solve_layer_with_threads, solve_working_bytes,
    try_solve_layer_with_threads,
};

use std::fmt;

/// Largest board the rules, the ranking and the solver handle: 6×6 (36
/// squares, 5 cars a side, 188,710,690,706 positions with side to move).
/// Square masks are `u64`; the rank tables cover sets of up to 5 of 36
/// squares.
pub const MAX_N: usize = 6;

/// Errors of the Dodgem rules: malformed or impossible positions and moves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DodgemError {
    /// The board size is outside 2 ..= [`MAX_N`].
    #[error("board size {0}: the solver handles 2 ≤ n ≤ {MAX_N}")]
    BadSize(usize),
    /// A square name that is not on the board.
    #[error("`{name}` is not a square of the {n}×{n} board (files a–{last_file}, ranks 1–{n})")]
    BadSquare {
        /// The text given.
        name: String,
        /// Board size.
        n: usize,
        /// The last file letter.
        last_file: char,
    },
    /// The position text is malformed.
    #[error("position `{text}`: {why}")]
    BadPosition {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
    /// The move text is malformed or the move is not legal here.
    #[error("move `{text}`: {why}")]
    BadMove {
        /// The text given.
        text: String,
        /// What is wrong.
        why: String,
    },
}

/// A player. Blue moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// Moves right / up / down, leaves off the right edge. Index bit 0.
    Blue,
    /// Moves up / left / right, leaves off the top edge. Index bit 1.
    Red,
}

impl Side {
    /// The other player.
    pub fn other(self) -> Side {
        match self {
            Side::Blue => Side::Red,
            Side::Red => Side::Blue,
        }
    }
    /// 0 for Blue, 1 for Red (the low bit of a position index).
    pub fn bit(self) -> u64 {
        match self {
            Side::Blue => 0,
            Side::Red => 1,
        }
    }
    /// `blue` or `red`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Blue => "blue",
            Side::Red => "red",
        }
    }
}

/// A position: car sets as bit masks over squares `x + n·y`, and the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// Blue cars.
    pub blue: u64,
    /// Red cars.
    pub red: u64,
    /// Side to move.
    pub to_move: Side,
}

impl Position {
    /// The cars of `side`.
    pub fn cars(&self, side: Side) -> u64 {
        match side {
            Side::Blue => self.blue,
            Side::Red => self.red,
        }
    }
    /// The layer `(blue cars, red cars)`.
    pub fn layer(&self) -> (usize, usize) {
        (
            self.blue.count_ones() as usize,
            self.red.count_ones() as usize,
        )
    }
    /// The same cars with `side` to move.
    pub fn with_to_move(self, side: Side) -> Position {
        Position {
            to_move: side,
            ..self
        }
    }
    /// The position with `side`'s cars replaced by the mask `cars` (the
    /// other side's kept) and `to_move` to move: a move or an un-move of
    /// one of `side`'s cars.
    #[inline]
    pub fn with_cars(self, side: Side, cars: u64, to_move: Side) -> Position {
        match side {
            Side::Blue => Position {
                blue: cars,
                red: self.red,
                to_move,
            },
            Side::Red => Position {
                blue: self.blue,
                red: cars,
                to_move,
            },
        }
    }
}

/// A move: a car from `from` to `to`, or off the board when `to` is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// Square the car leaves.
    pub from: u8,
    /// Square it enters; `None` = off the board.
    pub to: Option<u8>,
}

/// The value of a position for the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// The side to move wins in this many plies.
    Win(u8),
    /// The side to move loses in this many plies.
    Loss(u8),
    /// Neither side can force a win.
    Draw,
}

/// First byte of the win range: win in d plies is `WIN_BASE + d`.
pub const WIN_BASE: u8 = 16;
/// First byte of the loss range: loss in d plies is `LOSS_BASE + d`.
pub const LOSS_BASE: u8 = 136;
/// Largest depth the byte encoding holds (119 plies; 5×5 needs 81).
pub const MAX_DEPTH: u8 = LOSS_BASE - WIN_BASE - 1;

impl Value {
    /// The on-disk byte (the encoding of layer shards):
    ///
    /// | byte | value |
    /// |---|---|
    /// | 0 | draw |
    /// | 16 + d (16 ..= 135) | win for the side to move in d plies |
    /// | 136 + d (136 ..= 255) | loss for the side to move in d plies |
    ///
    /// Bytes 1 … 15 never appear in a solved layer (the solver uses them
    /// internally for successor counters).
    ///
    /// # Panics
    /// If the depth exceeds [`MAX_DEPTH`].
    pub fn to_byte(self) -> u8 {
        match self {
            Value::Draw => 0,
            Value::Win(d) => {
                assert!(d <= MAX_DEPTH, "depth {d} too large for the byte encoding");
                WIN_BASE + d
            }
            Value::Loss(d) => {
                assert!(d <= MAX_DEPTH, "depth {d} too large for the byte encoding");
                LOSS_BASE + d
            }
        }
    }

    /// Decodes a byte of a solved layer; `None` for the unused bytes 1 … 15.
    pub fn from_byte(b: u8) -> Option<Value> {
        match b {
            0 => Some(Value::Draw),
            1..WIN_BASE => None,
            WIN_BASE..LOSS_BASE => Some(Value::Win(b - WIN_BASE)),
            _ => Some(Value::Loss(b - LOSS_BASE)),
        }
    }

    /// The depth in plies (`None` for a draw).
    pub fn depth(self) -> Option<u8> {
        match self {
            Value::Win(d) | Value::Loss(d) => Some(d),
            Value::Draw => None,
        }
    }

    /// `win`, `loss` or `draw`.
    pub fn word(self) -> &'static str {
        match self {
            Value::Win(_) => "win",
            Value::Loss(_) => "loss",
            Value::Draw => "draw",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(d) => write!(f, "win in {d}"),
            Value::Loss(d) => write!(f, "loss in {d}"),
            Value::Draw => write!(f, "draw"),
        }
    }
}

/// [`Board::parity`] with the board's odd squares (`odd`,
/// [`Board::odd_squares`]) given, for loops that ask it of every position.
#[inline]
pub fn parity_class(odd: u64, p: &Position) -> u8 {
    let cars = ((p.blue | p.red) & odd).count_ones();
    ((cars + u32::from(p.to_move == Side::Red)) % 2) as u8
}

/// The rules on an n×n board: geometry and move generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Board {
    n: usize,
}

impl Board {
    /// The n×n board.
    ///
    /// # Errors
    /// [`DodgemError::BadSize`] unless 2 ≤ n ≤ [`MAX_N`].
    pub fn new(n: usize) -> Result<Board, DodgemError> {
        if (2..=MAX_N).contains(&n) {
            Ok(Board { n })
        } else {
            Err(DodgemError::BadSize(n))
        }
    }

    /// Side length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of squares n².
    pub fn squares(&self) -> usize {
        self.n * self.n
    }

    /// Cars per side at the start (n − 1).
    pub fn cars(&self) -> usize {
        self.n - 1
    }

    /// The squares whose coordinates x + y are odd (the dark squares of a
    /// checkerboard colouring), as a mask.
    pub fn odd_squares(&self) -> u64 {
        (0..self.squares())
            .filter(|&s| (s % self.n + s / self.n) % 2 == 1)
            .fold(0, |m, s| m | 1 << s)
    }

    /// The position's **parity class**: (Σ over all cars of x + y, plus 1 if
    /// Red is to move) mod 2, as 0 or 1.
    ///
    /// Every move that keeps its car on the board changes one coordinate of
    /// one car by 1 and passes the turn, so it keeps the class: a layer
    /// splits into two classes with no in-layer move between them, which the
    /// solver works on independently. From the start (class 0 on every n)
    /// only class-0 positions of the top layer can be reached.
    pub fn parity(&self, p: &Position) -> u8 {
        parity_class(self.odd_squares(), p)
    }

    /// The start position: Blue on a2 … an, Red on b1 … (n)1, Blue to move.
    pub fn start(&self) -> Position {
        let n = self.n;
        let blue = (1..n).fold(0u64, |m, y| m | 1 << (n * y));
        let red = (1..n).fold(0u64, |m, x| m | 1 << x);
        Position {
            blue,
            red,
            to_move: Side::Blue,
        }
    }

    /// The square a car of `side` on `sq` reaches in direction `dir`
    /// (0 = forward, 1 and 2 = sideways): `Some(Some(t))` on the board,
    /// `Some(None)` off the board (forward from the last file / rank), `None`
    /// if the direction leaves the board sideways.
    #[inline]
    pub fn step(&self, side: Side, sq: usize, dir: usize) -> Option<Option<usize>> {
        let n = self.n;
        let (x, y) = (sq % n, sq / n);
        match (side, dir) {
            (Side::Blue, 0) => Some((x + 1 < n).then_some(sq + 1)),
            (Side::Red, 0) => Some((y + 1 < n).then_some(sq + n)),
            // `then`, not `then_some`: the square is computed only on the
            // board (`sq - n` on the first rank overflowed in builds with
            // overflow checks, e.g. a plain `cargo test`).
            (Side::Blue, 1) => (y + 1 < n).then_some(Some(sq + n)),
            (Side::Blue, _) => (y > 0).then(|| Some(sq - n)),
            (Side::Red, 1) => (x > 0).then(|| Some(sq - 1)),
            (Side::Red, _) => (x + 1 < n).then_some(Some(sq + 1)),
        }
    }

    /// The squares a car of `side` now on `sq` can have come from in one
    /// move on the board (the reverse of [`Board::step`]).
    #[inline]
    pub fn unsteps(&self, side: Side, sq: usize) -> [Option<usize>; 3] {
        let n = self.n;
        let (x, y) = (sq % n, sq / n);
        match side {
            // Blue moved right, up or down.
            Side::Blue => [
                (x > 0).then(|| sq - 1),
                (y > 0).then(|| sq - n),
                (y + 1 < n).then(|| sq + n),
            ],
            // Red moved up, left or right.
            Side::Red => [
                (y > 0).then(|| sq - n),
                (x + 1 < n).then(|| sq + 1),
                (x > 0).then(|| sq - 1),
            ],
        }
    }

    /// The game-theoretic value of a position where play has ended: loss in
    /// 0 if the opponent has no car (the opponent has won), win in 0 if the
    /// side to move has no legal move, else `None`.
    pub fn terminal(&self, p: &Position) -> Option<Value> {
        if p.cars(p.to_move.other()) == 0 {
            return Some(Value::Loss(0));
        }
        if self.moves(p).is_empty() {
            return Some(Value::Win(0));
        }
        None
    }

    /// Every legal move of the side to move, by square of the car then
    /// direction (forward first). Empty when the opponent has no car left
    /// (the game is over).
    pub fn moves(&self, p: &Position) -> Vec<Move> {
        let mut out = Vec::new();
        if p.cars(p.to_move.other()) == 0 {
            return out;
        }
        let occ = p.blue | p.red;
        let mut cars = p.cars(p.to_move);
        while cars != 0 {
            let s = cars.trailing_zeros() as usize;
            cars &= cars - 1;
            for dir in 0..3 {
                match self.step(p.to_move, s, dir) {
                    Some(None) => out.push(Move {
                        from: s as u8,
                        to: None,
                    }),
                    Some(Some(t)) if occ >> t & 1 == 0 => out.push(Move {
                        from: s as u8,
                        to: Some(t as u8),
                    }),
                    _ => {}
                }
            }
        }
        out
    }

    /// The position after `m` (not checked for legality; see [`Board::parse_move`]).
    pub fn apply(&self, p: &Position, m: Move) -> Position {
        let bit = |s: u8| 1u64 << s;
        let moved = (p.cars(p.to_move) & !bit(m.from)) | m.to.map_or(0, bit);
        p.with_cars(p.to_move, moved, p.to_move.other())
    }

    /// The reflection in the diagonal through a1, (x, y) ↦ (y, x), of a set of squares.
    pub fn reflect_squares(&self, m: u64) -> u64 {
        let n = self.n;
        let mut out = 0;
        let mut rest = m;
        while rest != 0 {
            let s = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            out |= 1u64 << ((s % n) * n + s / n);
        }
        out
    }

    /// The reflected position: squares reflected, colours and side to move
    /// swapped. Value and depth are preserved.
    pub fn reflect(&self, p: &Position) -> Position {
        Position {
            blue: self.reflect_squares(p.red),
            red: self.reflect_squares(p.blue),
            to_move: p.to_move.other(),
        }
    }

    /// The name of a square, e.g. `a2`.
    pub fn square_name(&self, sq: usize) -> String {
        let mut s = String::with_capacity(3);
        self.push_square_name(&mut s, sq);
        s
    }

    /// Appends the name of square `sq` to `out` (no allocation beyond
    /// `out`'s growth).
    fn push_square_name(&self, out: &mut String, sq: usize) {
        use std::fmt::Write;
        out.push((b'a' + (sq % self.n) as u8) as char);
        let _ = write!(out, "{}", sq / self.n + 1);
    }

    /// Parses a square name (`a2`, case-insensitive).
    ///
    /// # Errors
    /// [`DodgemError::BadSquare`] if it is not on this board.
    pub fn parse_square(&self, s: &str) -> Result<usize, DodgemError> {
        let bad = || DodgemError::BadSquare {
            name: s.to_string(),
            n: self.n,
            last_file: (b'a' + self.n as u8 - 1) as char,
        };
        crate::solvers::square::parse_square(s, self.n).ok_or_else(bad)
    }

    /// A move in our notation: `a2-b2`, or `e4-off` for a car leaving.
    pub fn move_name(&self, m: Move) -> String {
        self.move_name_with(m, |sq| sq)
    }

    /// A move in David desJardins' notation (the reflection (x, y) ↦ (y, x)
    /// of [`Board::move_name`]: our `a2-a1` is his `b1-a1`); the same as
    /// [`from_desjardins`] of the move's name, which the reflection undoes.
    pub fn desjardins_move_name(&self, m: Move) -> String {
        let n = self.n;
        self.move_name_with(m, |sq| (sq % n) * n + sq / n)
    }

    /// `FROM-TO` or `FROM-off`, the squares mapped by `map`.
    fn move_name_with(&self, m: Move, map: impl Fn(usize) -> usize) -> String {
        let mut s = String::with_capacity(7);
        self.push_square_name(&mut s, map(m.from as usize));
        s.push('-');
        match m.to {
            Some(t) => self.push_square_name(&mut s, map(t as usize)),
            None => s.push_str("off"),
        }
        s
    }

    /// Parses a move (`a2-b2`, `d4-off`) and checks it is legal in `p`.
    ///
    /// # Errors
    /// [`DodgemError::BadMove`] saying why: malformed, not the mover's car,
    /// not a step the car can make, target occupied, or the game is over.
    pub fn parse_move(&self, p: &Position, text: &str) -> Result<Move, DodgemError> {
        let bad = |why: String| DodgemError::BadMove {
            text: text.to_string(),
            why,
        };
        let (f, t) = text
            .trim()
            .split_once('-')
            .ok_or_else(|| bad("write FROM-TO, e.g. a2-b2 or d4-off".into()))?;
        let from = self.parse_square(f).map_err(|e| bad(e.to_string()))?;
        let to = if t.trim().eq_ignore_ascii_case("off") {
            None
        } else {
            Some(self.parse_square(t).map_err(|e| bad(e.to_string()))?)
        };
        if p.cars(p.to_move.other()) == 0 {
            return Err(bad(format!(
                "the game is over: {} has no car left and has won",
                p.to_move.other().name()
            )));
        }
        if p.cars(p.to_move) >> from & 1 == 0 {
            return Err(bad(format!(
                "{} has no car on {} ({} to move)",
                p.to_move.name(),
                self.square_name(from),
                p.to_move.name()
            )));
        }
        let m = Move {
            from: from as u8,
            to: to.map(|t| t as u8),
        };
        if !self.moves(p).contains(&m) {
            let is_step = (0..3).any(|dir| self.step(p.to_move, from, dir) == Some(to));
            let why = match to {
                Some(t) if is_step && (p.blue | p.red) >> t & 1 == 1 => {
                    format!("{} is occupied", self.square_name(t))
                }
                _ => format!(
                    "a {} car cannot go there ({} moves {})",
                    p.to_move.name(),
                    p.to_move.name(),
                    match p.to_move {
                        Side::Blue => "right, up or down, and off the right edge",
                        Side::Red => "up, left or right, and off the top edge",
                    }
                ),
            };
            return Err(bad(why));
        }
        Ok(m)
    }

    /// The board's ranks as text, the top rank first: `B` a blue car, `R` a
    /// red car, `.` an empty square (n strings of n characters).
    pub fn ranks(&self, p: &Position) -> Vec<String> {
        let n = self.n;
        (0..n)
            .rev()
            .map(|y| {
                (y * n..(y + 1) * n)
                    .map(|sq| match (p.blue >> sq & 1, p.red >> sq & 1) {
                        (1, _) => 'B',
                        (_, 1) => 'R',
                        _ => '.',
                    })
                    .collect()
            })
            .collect()
    }

    /// Prints a position as `blue:a2,a3 red:b1,c1 to-move:blue` (squares
    /// in index order; `-` for a side with no car).
    pub fn position_text(&self, p: &Position) -> String {
        let mut s = String::with_capacity(64);
        let list = |s: &mut String, m: u64| {
            if m == 0 {
                s.push('-');
            }
            let mut first = true;
            for sq in (0..self.squares()).filter(|&sq| m >> sq & 1 == 1) {
                if !first {
                    s.push(',');
                }
                first = false;
                self.push_square_name(s, sq);
            }
        };
        s.push_str("blue:");
        list(&mut s, p.blue);
        s.push_str(" red:");
        list(&mut s, p.red);
        s.push_str(" to-move:");
        s.push_str(p.to_move.name());
        s
    }

    /// Parses `blue:a2,a3,a4 red:b1,c1,d1 to-move:blue` (fields in any
    /// order, separated by spaces; `blue:` or `blue:-` for no car;
    /// `to-move` defaults to blue).
    ///
    /// # Errors
    /// [`DodgemError::BadPosition`] for a bad square, a repeated square,
    /// cars sharing a square, more than n − 1 cars of a colour, or a
    /// missing or unknown field.
    pub fn parse_position(&self, text: &str) -> Result<Position, DodgemError> {
        let bad = |why: String| DodgemError::BadPosition {
            text: text.to_string(),
            why,
        };
        let (mut blue, mut red, mut to_move) = (None, None, None);
        for field in text.split_whitespace() {
            let (key, val) = field
                .split_once(':')
                .ok_or_else(|| bad(format!("`{field}`: write KEY:VALUE")))?;
            match key.to_ascii_lowercase().as_str() {
                "blue" | "red" => {
                    let mut m = 0u64;
                    let squares: Vec<&str> = if val.is_empty() || val == "-" {
                        Vec::new()
                    } else {
                        val.split(',').collect()
                    };
                    if squares.iter().any(|s| s.is_empty()) {
                        return Err(bad(format!(
                            "`{field}` has an empty square: write squares like {key}:a2,a3"
                        )));
                    }
                    for s in squares {
                        let sq = self.parse_square(s).map_err(|e| bad(e.to_string()))?;
                        if m >> sq & 1 == 1 {
                            return Err(bad(format!("{key} lists {s} twice")));
                        }
                        m |= 1 << sq;
                    }
                    let slot = if key.eq_ignore_ascii_case("blue") {
                        &mut blue
                    } else {
                        &mut red
                    };
                    if slot.replace(m).is_some() {
                        return Err(bad(format!("`{key}` given twice")));
                    }
                }
                "to-move" | "tomove" | "to_move" => {
                    let side = match val.to_ascii_lowercase().as_str() {
                        "blue" | "b" => Side::Blue,
                        "red" | "r" => Side::Red,
                        _ => return Err(bad(format!("to-move `{val}`: blue or red"))),
                    };
                    to_move = Some(side);
                }
                _ => return Err(bad(format!("unknown field `{key}` (blue, red, to-move)"))),
            }
        }
        let blue = blue.ok_or_else(|| bad("missing `blue:` (use `blue:-` for no car)".into()))?;
        let red = red.ok_or_else(|| bad("missing `red:` (use `red:-` for no car)".into()))?;
        if blue == 0 && red == 0 {
            return Err(bad(
                "no car at all: no game reaches this board (the game ends when one side's \
                 last car leaves)"
                    .into(),
            ));
        }
        if blue & red != 0 {
            let s = (blue & red).trailing_zeros() as usize;
            return Err(bad(format!(
                "blue and red cars share {} (cars never share a square)",
                self.square_name(s)
            )));
        }
        for (name, m) in [("blue", blue), ("red", red)] {
            if m.count_ones() as usize > self.cars() {
                return Err(bad(format!(
                    "{name} has {} cars; each side has at most {} on a {n}×{n} board",
                    m.count_ones(),
                    self.cars(),
                    n = self.n
                )));
            }
        }
        Ok(Position {
            blue,
            red,
            to_move: to_move.unwrap_or(Side::Blue),
        })
    }
}

/// Converts a move written in David desJardins' notation (X moves up from
/// the bottom and moves first, O moves right from the left) to ours by the
/// reflection (x, y) ↦ (y, x): his `b1-a1` is our `a2-a1`, his `d3-off` is
/// our `c4-off`. Text that is not a square (`off`, `!`) is kept.
///
/// # Errors
/// [`DodgemError::BadMove`] if a square is not on the board.
pub fn from_desjardins(board: &Board, text: &str) -> Result<String, DodgemError> {
    let t = text.trim().trim_end_matches(['!', '?']);
    let (f, to) = t.split_once('-').ok_or_else(|| DodgemError::BadMove {
        text: text.to_string(),
        why: "write FROM-TO".into(),
    })?;
    let conv = |s: &str| -> Result<String, DodgemError> {
        if s.eq_ignore_ascii_case("off") {
            return Ok("off".into());
        }
        let sq = board.parse_square(s).map_err(|e| DodgemError::BadMove {
            text: text.to_string(),
            why: e.to_string(),
        })?;
        let n = board.n();
        Ok(board.square_name((sq % n) * n + sq / n))
    };
    Ok(format!("{}-{}", conv(f)?, conv(to)?))
}

/// Solved layers of one board, looked up by position.
#[derive(Debug, Clone)]
pub struct Tables {
    board: Board,
    /// `layers[a · n + b]`: the layer's ranking and bytes, if loaded.
    layers: Vec<Option<(Layer, Vec<u8>)>>,
}

impl Tables {
    /// No layer loaded.
    pub fn empty(board: Board) -> Tables {
        Tables {
            board,
            layers: vec![None; board.n() * board.n()],
        }
    }

    /// Solves every layer of `board` in dependency order (fewest cars first)
    /// with `threads` threads per layer, as the job kind does: layers
    /// `(a, b)` with a ≤ b by retrograde analysis (class 1 of a diagonal
    /// layer as the mirror of its class 0), layers with a > b as the
    /// reflection of `(b, a)` ([`reflect_layer`]).
    pub fn solve(board: Board, threads: usize) -> Tables {
        Tables::solve_with(board, threads, true, &|_, _| true)
    }

    /// Solves every layer by retrograde analysis, none by reflection, and
    /// both parity classes of every diagonal layer (for cross-checks).
    pub fn solve_direct(board: Board, threads: usize) -> Tables {
        Tables::solve_with(board, threads, false, &|_, _| true)
    }

    /// [`Tables::solve`] restricted to the layers `(a, b)` with `keep(a, b)`,
    /// a set that must be closed under removing a car and under swapping a
    /// and b (e.g. a + b ≤ 4, or a, b ≤ 3 on 6×6, whose whole board does not
    /// fit in memory).
    ///
    /// # Panics
    /// If a kept layer has a layer one car below it, or a mirror image, that
    /// is not kept.
    pub fn solve_layers(
        board: Board,
        threads: usize,
        keep: &dyn Fn(usize, usize) -> bool,
    ) -> Tables {
        Tables::solve_with(board, threads, true, keep)
    }

    /// [`Tables::solve_direct`] restricted as [`Tables::solve_layers`].
    ///
    /// # Panics
    /// As [`Tables::solve_layers`].
    pub fn solve_layers_direct(
        board: Board,
        threads: usize,
        keep: &dyn Fn(usize, usize) -> bool,
    ) -> Tables {
        Tables::solve_with(board, threads, false, keep)
    }

    fn solve_with(
        board: Board,
        threads: usize,
        reflect: bool,
        keep: &dyn Fn(usize, usize) -> bool,
    ) -> Tables {
        let mut t = Tables::empty(board);
        let top = board.cars();
        for sum in 0..=2 * top {
            let range = sum.saturating_sub(top)..=sum.min(top);
            for a in range
                .clone()
                .filter(|&a| (!reflect || a <= sum - a) && keep(a, sum - a))
            {
                let b = sum - a;
                assert!(
                    (a == 0 || keep(a - 1, b)) && (b == 0 || keep(a, b - 1)),
                    "layer ({a}, {b}) needs the layers one car below it"
                );
                let layer = Layer::new(board, a, b);
                let (bb, br) = (t.bytes(a.wrapping_sub(1), b), t.bytes(a, b.wrapping_sub(1)));
                let v = if reflect {
                    solve_layer_with_threads(&layer, bb, br, threads)
                } else {
                    solve_layer_both_classes(&layer, bb, br, threads)
                };
                t.insert(a, b, v);
            }
            for a in range.filter(|&a| reflect && a > sum - a && keep(a, sum - a)) {
                let b = sum - a;
                let (src, v) = t.layer(b, a).expect("solved above");
                let v = reflect_layer(src, v);
                t.insert(a, b, v);
            }
        }
        t
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// Stores the solved bytes of layer `(a, b)`.
    ///
    /// # Panics
    /// If the length is not the layer's.
    pub fn insert(&mut self, a: usize, b: usize, values: Vec<u8>) {
        let layer = Layer::new(self.board, a, b);
        assert_eq!(values.len() as u64, layer.len(), "layer ({a}, {b}) length");
        self.layers[a * self.board.n() + b] = Some((layer, values));
    }

    /// Drops layer `(a, b)` (no effect if it is not loaded).
    pub fn remove(&mut self, a: usize, b: usize) {
        let n = self.board.n();
        if a < n && b < n {
            self.layers[a * n + b] = None;
        }
    }

    /// The bytes of layer `(a, b)`, if loaded (`None` also for a or b out of range).
    pub fn bytes(&self, a: usize, b: usize) -> Option<&[u8]> {
        let n = self.board.n();
        if a >= n || b >= n {
            return None;
        }
        self.layers[a * n + b].as_ref().map(|(_, v)| v.as_slice())
    }

    /// The layer ranking and bytes of `(a, b)`, if loaded.
    pub fn layer(&self, a: usize, b: usize) -> Option<(&Layer, &[u8])> {
        let n = self.board.n();
        if a >= n || b >= n {
            return None;
        }
        self.layers[a * n + b]
            .as_ref()
            .map(|(l, v)| (l, v.as_slice()))
    }

    /// The value of `p` if its layer is loaded.
    pub fn value(&self, p: &Position) -> Option<Value> {
        let (a, b) = p.layer();
        let (l, v) = self.layer(a, b)?;
        Value::from_byte(v[l.index(p) as usize])
    }
}
