//! `verify --full` for the Chomp kinds: every stored value from the rules of
//! Chomp, written here again ([`rules`]: bites, un-bites and colex ranks),
//! never from the solver (`crate::solvers::chomp`, which no module here
//! imports: `tests/it/architecture.rs`).
//!
//! - [`boxes`]: `chomp-boxes`; [`census`]: `chomp-census`; [`grundy`]:
//!   `chomp-grundy`.

pub mod boxes;
pub mod census;
pub mod grundy;
pub mod rules;
pub mod sampled;
