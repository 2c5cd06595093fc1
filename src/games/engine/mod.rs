//! What every game solved by the generic layered retrograde engine
//! (`crate::solvers::engine`) shares: a game describes its rules as a
//! [`LayeredGame`](crate::solvers::engine::LayeredGame) and itself as an
//! [`EngineGame`] (kind name, job-file keys, notation, start, claims), and
//! gets from here
//!
//! - [`jobs`]: a job's task, parameters and estimates;
//! - [`kind`]: the job kind (one job per layer in dependency order, merge
//!   into a per-layer table and a summary, checks, claims, the picture);
//! - [`fullcheck`]: `verify --full` from the trait's move generation;
//! - [`probe`] and [`query`]: the probe (`serve`) and `query KIND`;
//! - [`layout`]: the shard layout the kind and the checker share;
//! - [`picture`]: wins, losses and draws per layer;
//! - [`values`]: a run's values, for the claims;
//! - [`split`]: layer jobs split over ranks.
//!
//! This folder names no game; a game's folder (e.g. `games/quixo/`) holds
//! its [`EngineGame`] and its [`Game`](crate::pipeline::registry::Game)
//! value built from these parts.

pub mod fullcheck;
pub mod jobs;
pub mod kind;
pub mod layout;
pub mod picture;
pub mod probe;
pub mod query;
pub mod spec;
pub mod split;
pub mod values;

pub use spec::{BoardView, EngineGame, MoveStyle, RunFacts, first_moves};
pub use values::RunValues;
