//! Pure game solvers: plain data in, plain data out. No I/O, no async, no
//! logging in inner loops; one folder per game, and `engine/`, the layered
//! retrograde engine every board game is solved by. Each game's folder of
//! [`crate::games`] wraps its solver into jobs, probes and checks.

pub mod chomp;
pub mod dodgem;
pub mod engine;
pub mod hint;
pub mod impartial;
pub mod quixo;
pub mod square;
pub mod three_row;
pub mod tictactoe;
