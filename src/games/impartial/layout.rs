//! The on-disk layout of this game's shards and tables that the kind and
//! its full checker share: plain data, no solver (`tests/it/architecture.rs`
//! fails if a full checker reaches `crate::solvers`).

use serde::{Deserialize, Serialize};

/// The `meta` section of a range shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeMeta {
    /// The octal code in canonical form.
    pub code: String,
    /// First n of the range.
    pub start: u64,
    /// One past the last n.
    pub end: u64,
    /// Largest G(n) in the range.
    pub max_value: u32,
}

/// `summary.toml` of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The octal code.
    pub code: String,
    /// Largest n computed.
    pub n_max: u64,
    /// Largest number of tokens a move removes.
    pub t: u64,
    /// Largest G(n), 0 ≤ n ≤ n_max.
    pub max_value: u32,
    /// Whether the periodicity theorem proved a period from these values.
    pub periodic: bool,
    /// Least period (0 if not proved).
    pub period: u64,
    /// Least preperiod n₀ (0 if not proved).
    pub preperiod: u64,
    /// n₀ − 1, or −1 if the sequence is periodic from 0 or not proved.
    pub last_exceptional: i64,
    /// The theorem's check covered max(n₀,1) ≤ n ≤ this (0 if not proved).
    pub checked_through: u64,
}
