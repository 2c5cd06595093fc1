//! A generic layered retrograde engine: a game described by its rules
//! ([`LayeredGame`]) gets win / loss / draw and depth of every position,
//! layer by layer ([`solve_layer`]), and a self-test of its rules
//! ([`check_rules`]).
//!
//! The shape follows the field's tier solvers (GamesCrafters'
//! GamesmanOne: tiers, tier size, moves, primitive values, parents,
//! canonical positions): positions fall into layers solved in dependency
//! order, with cycles allowed inside a layer, and each layer is solved by
//! retrograde analysis with successor counting (Thompson, "Retrograde
//! analysis of certain endgames", ICCA Journal 9(3), 1986).
//!
//! - [`rules`]: the trait and its contracts.
//! - [`solve`]: the engine, its byte encoding ([`Value`]) and memory
//!   estimate ([`working_bytes`]).
//! - [`conformance`]: the contracts checked on random positions.
//! - [`value`]: a position's value and its byte encodings.
//! - [`reach`]: the positions of a layer reachable from the start of play.
//! - [`image`]: layers answered as the image of another.
//! - [`split`]: a layer split over ranks that trade updates in rounds.
//! - [`placement`]: the two-colour placement ranking board games share.
#![warn(missing_docs)]

pub mod conformance;
pub mod image;
pub mod placement;
pub mod reach;
pub mod rules;
pub mod solve;
pub mod split;
pub mod value;

#[cfg(test)]
mod tests;

pub use conformance::check_rules;
pub use image::image_values;
pub use rules::{LayeredGame, Terminal};
pub use solve::solve_in_mesh;
pub use solve::{
    BLOCK, LOSS_BASE, LayerStats, MAX_DEPTH, SOLVE_MAX_DEPTH, SolveError, Value, WIDE_LOSS_BASE,
    WIDE_MAX_DEPTH, WIDE_WIN_BASE, WIN_BASE, child_bytes, is_wide, solve_layer, solve_part,
    value_at, working_bytes,
};
pub use split::{Alone, Exchange, Mesh, part_bounds};

/// Solves every layer of `game` in an order where each layer comes after
/// its child layers, keeping them all in memory (for tests and small
/// games): the bytes of each layer (one or two per position, as
/// [`solve_layer`] gives them), by layer id.
///
/// # Errors
/// As [`solve_layer`].
pub fn solve_all<G: LayeredGame>(game: &G, threads: usize) -> Result<Vec<Vec<u8>>, SolveError> {
    let order = solve_order(game);
    let mut done: Vec<Option<Vec<u8>>> = vec![None; game.layer_count()];
    for l in order {
        let kids = game.child_layers(l);
        let below: Vec<(usize, &[u8])> = kids
            .iter()
            .filter_map(|&c| done[c].as_deref().map(|b| (c, b)))
            .collect();
        let v = solve_layer(game, l, &below, threads)?;
        done[l] = Some(v);
    }
    Ok(done.into_iter().map(Option::unwrap_or_default).collect())
}

/// The parent layers of each layer (the layers whose moves reach it), by
/// layer id, each list in increasing order.
pub fn parent_layers<G: LayeredGame>(game: &G) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); game.layer_count()];
    for l in 0..game.layer_count() {
        for c in game.child_layers(l) {
            out[c].push(l);
        }
    }
    out
}

/// The reachable bits of every layer, all in memory (for tests and small
/// games): layers in the reverse of [`solve_order`], parents first.
pub fn reach_all<G: LayeredGame>(game: &G, start: G::Position, threads: usize) -> Vec<reach::Bits> {
    let parents = parent_layers(game);
    let mut done: Vec<Option<reach::Bits>> = vec![None; game.layer_count()];
    for l in solve_order(game).into_iter().rev() {
        let ins: Vec<(usize, &[u64])> = parents[l]
            .iter()
            .filter_map(|&p| done[p].as_deref().map(|b| (p, b)))
            .collect();
        let bits = reach::reach_layer(game, l, &ins, Some(start), threads);
        done[l] = Some(bits);
    }
    done.into_iter().map(Option::unwrap_or_default).collect()
}

/// The layers in an order where each comes after its child layers and
/// its [image layer](LayeredGame::image_layer) (a depth-first topological
/// order, children first, smallest ids first).
///
/// # Panics
/// If the layer graph has a cycle (a contract of [`LayeredGame`]).
pub fn solve_order<G: LayeredGame>(game: &G) -> Vec<usize> {
    let n = game.layer_count();
    let mut state = vec![0u8; n]; // 0 new, 1 open, 2 done
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let deps = |l: usize| {
            let mut d = game.child_layers(l);
            d.extend(game.image_layer(l));
            d
        };
        let mut stack = vec![(root, deps(root), 0usize)];
        state[root] = 1;
        while let Some((l, kids, i)) = stack.last_mut() {
            if let Some(&c) = kids.get(*i) {
                *i += 1;
                match state[c] {
                    0 => {
                        state[c] = 1;
                        stack.push((c, deps(c), 0));
                    }
                    1 => panic!(
                        "the layers of the game have a cycle through layer {}",
                        game.layer_name(c)
                    ),
                    _ => {}
                }
            } else {
                state[*l] = 2;
                order.push(*l);
                stack.pop();
            }
        }
    }
    order
}
