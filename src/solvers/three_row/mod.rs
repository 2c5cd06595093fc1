//! Three-row Chomp by Brouwer's recurrence, computed in tiles.
//!
//! A position is `(p, q, r)`, the row lengths from the poison row up
//! (`p ≥ q ≥ r`). For each `(q, r)` at most one `p` makes it a P-position; the
//! recurrence of Brouwer et al. (INTEGERS 5 (2005) G07 §8.1; A. E. Brouwer, "The game of
//! Chomp") defines `f(q, r)` for
//! `r ≤ q`, with `F(a, r) = f(a, a)` when `r > a`:
//!
//! - `f(q, r) = f(q−1, r)` if `f(q−1, r) < q` (row `r` has died);
//! - otherwise `f(q, r)` is the least positive integer not in
//!   `{F(a, r) : a < q} ∪ {f(q, b) : b < r}`.
//!
//! `(p, q, r)` is a P-position iff `p = f(q, r) ≥ q`.
//!
//! **How we compute it.** From `(p, q, r)` with `p ≥ q` the moves go to
//! `(p', q, r)` with `q ≤ p' < p`, to `(p, a, min(r, a))` with `a < q` (a
//! P-position iff `p = F(a, r)`), to `(p, q, b)` with `b < r` (iff
//! `p = f(q, b)`), and to `(j, j, min(r, j))` with `j < q`, a P-position only
//! when `j ≥ r` and `f(j, r) = j` (the row has died; the square `(j, j, j)`
//! never is). So while row `r` is alive, `f(q, r)` is the least value `≥ q`
//! missing from the row set and the column set, and the row dies exactly when
//! that value is `q` itself. Values below `q` are never looked at, dead rows
//! cost nothing, and each live cell scans a few 64-bit words of three bitsets:
//! the row's own values ([`LiveRow`]), the diagonal values `f(a, a), a < r`
//! that belong to row `r`, and the column's values. [`naive_f`] is the
//! literal recurrence (least positive integer, plain sets); the tests check
//! that both give the same table, and both against the Chomp box solver.
//!
//! **Tiles.** [`solve_tile`] computes the cells `q ∈ [q0, q1)`, `r ∈ [r0, r1)`,
//! `r ≤ q` from the row states of rows `r0…` at column `q0` (left by the tile
//! before it in `q`), the column states of columns `q0…q1−1` after rows `< r0`
//! (left by the tile before it in `r`), and the diagonal `f(a, a)` below. Any
//! split of the triangle into tiles gives the same `f` and the same
//! classification.
//!
//! **Rows** ([`classify`]): with `d(q) = f(q, r) − q` every row ends dead (`f`
//! constant), linear (`d` constant from `q₀`) or periodic. The detection rule
//! is the sen-ltd Chomp article's: for `k = 1…12` keep the start `s_k` of the current run of
//! columns with `d(q) = d(q−k)`; take the smallest `k` whose run covers at
//! least the last `max(200, 20k)` columns; the periodic part starts at
//! `s_k − k`.

mod classify;
mod tile;

pub use classify::{RowClass, classify, min_run};
pub use tile::PERIOD_MAX;
pub use tile::{
    ColState, LiveRow, RowState, STOPPED, TileGeom, TileInput, TileOutput, TileRecord, WinningMove,
    naive_f, solve_tile, solve_tile_blocked, solve_tile_blocked_progress, solve_tile_blocked_until,
    value_bound,
};

/// `f(q, r)` for every `r ≤ q ≤ q_max` by one tile over the whole triangle:
/// `out[q][r]`. For tests and small tables (memory `O(q_max²)`).
pub fn f_table(q_max: u32) -> Vec<Vec<u32>> {
    let geom = TileGeom::triangle(q_max);
    let out = solve_tile(
        &geom,
        TileInput::default(),
        &TileRecord {
            f_upto_q: Some(q_max),
            ..TileRecord::default()
        },
    )
    .expect("the first tile needs no input");
    let mut t: Vec<Vec<u32>> = (0..=q_max).map(|q| vec![0; q as usize + 1]).collect();
    for &(q, r, f) in &out.small_f {
        t[q as usize][r as usize] = f;
    }
    t
}

/// The final state of every row `0…=q_max` after the whole triangle
/// `r ≤ q ≤ q_max` (one tile), and the tile's output.
pub fn solve_all(q_max: u32, record: &TileRecord) -> TileOutput {
    let geom = TileGeom::triangle(q_max);
    solve_tile(&geom, TileInput::default(), record).expect("the first tile needs no input")
}
