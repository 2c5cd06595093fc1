//! Pure game solvers: plain data in, plain data out. No I/O, no async, no
//! logging in inner loops. The pipeline (`crate::pipeline`) wraps them into jobs.

pub mod chomp;
pub mod dodgem;
pub mod engine;
pub mod impartial;
pub mod quixo;
pub mod square;
pub mod three_row;
pub mod tictactoe;
