//! What a game must say about itself to be solved by the engine: the
//! [`LayeredGame`] trait.

use std::fmt;

/// The value of a position where play has ended, for the player to move
/// (depth 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Terminal {
    /// The player to move has won (e.g. the opponent's last move made a
    /// line of the mover's symbol, or the mover is left without a move in a
    /// game where that wins).
    Win,
    /// The player to move has lost.
    Loss,
    /// Play has ended and neither player has won (e.g. a full tic-tac-toe
    /// board without a line). Stored as a draw, like a position neither
    /// player can force; a parent with a move into it is never lost.
    Draw,
}

/// A two-player game of perfect information whose positions fall into
/// **layers** solved one after another: every move of a position of layer
/// `L` leads to a position of `L` itself (cycles allowed: the engine finds
/// draws) or of one of `L`'s [child layers](LayeredGame::child_layers),
/// which are solved before `L`. The graph of layers must be acyclic.
///
/// Positions are seen from the player to move (the value of a position is
/// its value for that player). Each layer `L` holds
/// [`layer_size(L)`](LayeredGame::layer_size) positions, ranked
/// `0 … size − 1` by a bijection ([`rank`](LayeredGame::rank),
/// [`unrank`](LayeredGame::unrank)).
///
/// The engine ([`super::solve_layer`]) computes win / loss / draw and the
/// depth (remoteness, in plies) of every position of a layer by
/// retrograde analysis with successor counting: it needs the moves of a
/// position ([`children`](LayeredGame::children)) and, inside a layer, the
/// moves into a position ([`parents`](LayeredGame::parents)). A win takes
/// the shortest route, a loss the longest resistance; a position neither
/// side can force is a draw.
///
/// **Contracts** (checked on random positions by [`super::check_rules`],
/// which the conformance tests run for every game):
/// - `rank(unrank(L, r)) == (L, r)` for every `r < layer_size(L)`;
/// - every child of a position of `L` lies in `L` or in
///   `child_layers(L)`;
/// - a position that is not [`terminal`](LayeredGame::terminal) has at
///   least one move; the moves of a terminal position are never asked for;
/// - `parents(p)` yields exactly the non-terminal positions `q` of `p`'s
///   own layer with a move to `p`, each as many times as `q` has moves
///   leading to `p` (the multiset of in-layer moves into `p`);
/// - the [symmetries](LayeredGame::symmetries) of a position map its
///   children to the children of its image (as multisets, up to symmetry)
///   and keep it terminal or not, with the same outcome;
/// - with [`reduces_by_symmetry`](LayeredGame::reduces_by_symmetry), the
///   [canonical image](LayeredGame::canonical) of a position is one of its
///   images, is shared by all of them, and the stabiliser counts the
///   images (identity included) equal to the position itself.
pub trait LayeredGame: Sync {
    /// One position (with whatever says who is to move).
    type Position: Copy + PartialEq + fmt::Debug + Send + Sync;

    /// Number of layers; they are `0 … layer_count − 1`.
    fn layer_count(&self) -> usize;

    /// A short name of the layer for job and table names: letters, digits,
    /// `-`, `_` and `.` only (e.g. `9-8`).
    fn layer_name(&self, layer: usize) -> String;

    /// Positions in the layer.
    fn layer_size(&self, layer: usize) -> u64;

    /// The other layers the moves of positions of `layer` reach, each once.
    fn child_layers(&self, layer: usize) -> Vec<usize>;

    /// The position of rank `rank` (< `layer_size(layer)`) in `layer`.
    fn unrank(&self, layer: usize, rank: u64) -> Self::Position;

    /// The layer of `p` and its rank there.
    fn rank(&self, p: &Self::Position) -> (usize, u64);

    /// The layer of `p`: `rank(p).0` (the default), which a game may
    /// compute without ranking (the engine asks for it on every move and
    /// ranks only the moves that leave the layer).
    fn layer_of(&self, p: &Self::Position) -> usize {
        self.rank(p).0
    }

    /// The rank of `p`, which lies in `layer`: `rank(p).1` (the default),
    /// which a game may compute without finding the layer again.
    fn rank_in(&self, layer: usize, p: &Self::Position) -> u64 {
        debug_assert_eq!(self.layer_of(p), layer);
        self.rank(p).1
    }

    /// `Some` if play has ended in `p` (value for the player to move, in 0
    /// plies), else `None`.
    fn terminal(&self, p: &Self::Position) -> Option<Terminal>;

    /// Calls `f` with the position after each legal move of `p` (once per
    /// move: two moves giving the same position give it twice), seen from
    /// the player who moves next. Never called on a terminal position.
    fn children(&self, p: &Self::Position, f: &mut impl FnMut(Self::Position));

    /// Calls `f` with every non-terminal position of `p`'s layer that has a
    /// move to `p`, once per such move (see the trait's contracts).
    fn parents(&self, p: &Self::Position, f: &mut impl FnMut(Self::Position));

    /// [`parents`](LayeredGame::parents) of `p`, the position of rank `rank`
    /// in `layer`, each with its rank in `layer`: the default ranks each
    /// with [`rank_in`](LayeredGame::rank_in); a game may find a parent's
    /// rank from `rank` (Dodgem: a car moved to the next square keeps its
    /// place among its colour's cars, so the rank changes by one binomial
    /// term). The propagation asks for it for every position it takes; the
    /// conformance check compares it with `parents` and `rank_in`.
    fn parents_ranked(
        &self,
        layer: usize,
        rank: u64,
        p: &Self::Position,
        f: &mut impl FnMut(Self::Position, u64),
    ) {
        let _ = rank;
        self.parents(p, &mut |q| f(q, self.rank_in(layer, &q)));
    }

    /// The ranks of the positions the moves of `p` (the position of rank
    /// `rank` in `layer`, not terminal) lead to inside `layer`, once per
    /// move: the reachability's closure inside a layer asks for them. The
    /// default makes every move and ranks those that stay; a game may find
    /// them from `rank` as in [`parents_ranked`](LayeredGame::parents_ranked).
    /// The conformance check compares it with `children`.
    fn children_in_layer(
        &self,
        layer: usize,
        rank: u64,
        p: &Self::Position,
        f: &mut impl FnMut(u64),
    ) {
        let _ = rank;
        self.children(p, &mut |c| {
            if self.layer_of(&c) == layer {
                f(self.rank_in(layer, &c));
            }
        });
    }

    /// The moves of `p`, a position of `layer` that is not terminal, as the
    /// engine's seeding pass needs them: returns how many stay in `layer`,
    /// and calls `f(child_layer, rank)` for each move that leaves it. The
    /// default makes every move ([`children`](LayeredGame::children)) and
    /// ranks those that leave; a game may count its in-layer moves without
    /// making them (Dodgem counts them on bit boards, and ranks only the
    /// cars that leave the board). The conformance check
    /// ([`super::check_rules`]) compares it with `children`.
    fn moves_out(&self, layer: usize, p: &Self::Position, f: &mut impl FnMut(usize, u64)) -> u32 {
        let mut inside = 0;
        self.children(p, &mut |c| {
            let l = self.layer_of(&c);
            if l == layer {
                inside += 1;
            } else {
                f(l, self.rank_in(l, &c));
            }
        });
        inside
    }

    /// Calls `f` with the images of `p` under the game's symmetry group,
    /// once for each element other than the identity (so images repeat
    /// when `p` is symmetric). Symmetric positions have the same value.
    /// Default: no symmetry.
    fn symmetries(&self, _p: &Self::Position, _f: &mut impl FnMut(Self::Position)) {}

    /// Whether the engine solves one position per symmetry class
    /// ([`canonical`](LayeredGame::canonical)) and copies its value to the
    /// rest of the class. Default: `false` (every position is solved).
    fn reduces_by_symmetry(&self) -> bool {
        false
    }

    /// The canonical image of `p` under the symmetry group, and the number
    /// of the group's elements (identity included) that fix `p` (its
    /// stabiliser, ≥ 1). Every image of `p` has the same canonical image,
    /// which is one of them. Only asked for when
    /// [`reduces_by_symmetry`](LayeredGame::reduces_by_symmetry); the
    /// default is `(p, 1)`.
    fn canonical(&self, p: &Self::Position) -> (Self::Position, u32) {
        (*p, 1)
    }

    /// Whether `p` is its own [canonical image](LayeredGame::canonical)
    /// (the default asks `canonical`; a game may stop early).
    fn is_canonical(&self, p: &Self::Position) -> bool {
        self.canonical(p).0 == *p
    }

    /// The layer whose image `layer` is, if it is one: `Some(src)` when
    /// [`image`](LayeredGame::image) maps the positions of `layer` one to
    /// one onto those of `src`, each to a position of the same value and
    /// depth (a symmetry of the game that moves positions between layers,
    /// e.g. Dodgem's reflection in the diagonal with the colours swapped,
    /// which maps layer (a, b) onto (b, a)). The engine's job kind then
    /// answers `layer` by copying `src`'s values through the image instead
    /// of solving it. `src` must not be an image layer itself, nor reach
    /// `layer` through its child layers. Default: `None`.
    fn image_layer(&self, _layer: usize) -> Option<usize> {
        None
    }

    /// The image of `p` under the symmetry behind
    /// [`image_layer`](LayeredGame::image_layer): a position with `p`'s
    /// value and depth, in `image_layer(L)` when `p`'s layer `L` has one.
    /// Defined on every position (the self-test checks that the moves of
    /// an image are the images of the moves); the default returns `p`.
    fn image(&self, p: &Self::Position) -> Self::Position {
        *p
    }

    /// Whether the engine solves `layer` by halves: its positions fall in
    /// two classes ([`first_half`](LayeredGame::first_half) says which)
    /// with no in-layer move between them, and [`image`](LayeredGame::image)
    /// maps the layer onto itself, exchanging the classes. The engine then
    /// solves the first half alone (its in-layer parents never leave it)
    /// and copies the other through the image: half the propagation, and
    /// the same bytes. Dodgem's layers (a, a): the parity class of Σ (x + y)
    /// over the cars plus the side to move, which every in-layer move keeps
    /// and the reflection flips. Used only when the layer is solved in one
    /// process and without symmetry reduction. Default: `false`.
    fn halves_by_image(&self, _layer: usize) -> bool {
        false
    }

    /// Whether `p` lies in the first half of its layer (asked only for a
    /// layer [`halves_by_image`](LayeredGame::halves_by_image) names).
    /// Default: `true`.
    fn first_half(&self, _p: &Self::Position) -> bool {
        true
    }

    /// A bound on the successor counter of the non-terminal positions of
    /// `layer`: the number of a position's moves that stay in the layer,
    /// plus one if it also has a move out of the layer. When the game gives
    /// one that fits the value cell's spare codes (1 … 15 of a one-byte
    /// cell, 1 … 255 of a two-byte one: [`LayeredGame::wide_values`]), the
    /// engine keeps each counter in its value cell instead of a byte of its
    /// own: one byte a position less, and one memory access less per
    /// counted move. A position past the bound breaks the contract
    /// ([`super::check_rules`] reports it; the solve fails on a counter past
    /// the cell's codes).
    /// Default: `None` (no bound known: a counter byte per position).
    fn counter_bound(&self, _layer: usize) -> Option<u32> {
        None
    }

    /// Whether positions of `layer` may be more than 119 plies deep, so that
    /// the engine solves it with two-byte values from the start (and plans
    /// two bytes per position for it). The values and their bytes do not
    /// depend on it: a layer solved with two-byte values whose depths all
    /// fit one byte is stored with one, and a layer not named here that
    /// turns out deeper is solved again with two. Default: `false`.
    fn wide_values(&self, _layer: usize) -> bool {
        false
    }

    /// Calls `f(rank, position)` for the ranks `start .. end` of `layer` in
    /// order. The default unranks each; a game may enumerate faster.
    fn for_each_position(
        &self,
        layer: usize,
        start: u64,
        end: u64,
        f: &mut impl FnMut(u64, Self::Position),
    ) {
        for r in start..end {
            f(r, self.unrank(layer, r));
        }
    }
}
