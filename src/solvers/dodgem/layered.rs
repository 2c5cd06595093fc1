//! Dodgem as a [`LayeredGame`] for the generic retrograde engine, written
//! from the rules alone (moves, [`Board::unsteps`], [`Board::terminal`]):
//! the engine's bytes are compared with this folder's own solver.
//!
//! Layers are Dodgem's layers `(a, b)` (blue cars, red cars), ids
//! `a · n + b` for a, b ≤ n − 1; ranks are [`Layer`]'s indices (both sides to
//! move). Sideways moves stay in the layer, a car leaving the board goes to
//! `(a − 1, b)` or `(a, b − 1)`.

use super::solve::Edges;
use super::{Board, Layer, Position, Side};
use crate::solvers::engine::{LayeredGame, Terminal, placement};

/// Dodgem on an n×n board, layered by cars of each side.
#[derive(Debug, Clone)]
pub struct DodgemLayers {
    board: Board,
    layers: Vec<Layer>,
    /// `steps[side][sq]`: the three targets of a car of `side` on `sq`
    /// ([`Board::step`] by direction): a square, [`OFF`] or [`NO_STEP`].
    steps: [[[u8; 3]; 64]; 2],
    /// `unsteps[side][sq]`: the squares a car of `side` on `sq` can have
    /// come from ([`Board::unsteps`]), [`NO_STEP`] where none.
    unsteps: [[[u8; 3]; 64]; 2],
    /// [`Board::odd_squares`], for the parity class of a position.
    odd: u64,
    /// The board's edges, for counting moves on bit boards.
    edges: Edges,
    /// `mirror[sq]`: the square (x, y) ↦ (y, x) of [`Board::reflect`].
    mirror: [u8; 64],
}

/// A step off the board (forward from the last file or rank).
const OFF: u8 = 254;
/// No step in this direction (sideways off the board).
const NO_STEP: u8 = 255;

impl DodgemLayers {
    /// The layers of `board`.
    pub fn new(board: Board) -> DodgemLayers {
        let cars = board.cars();
        let mut layers = Vec::new();
        for a in 0..=cars {
            for b in 0..=cars {
                layers.push(Layer::new(board, a, b));
            }
        }
        let mut steps = [[[NO_STEP; 3]; 64]; 2];
        let mut unsteps = [[[NO_STEP; 3]; 64]; 2];
        for (si, side) in [Side::Blue, Side::Red].into_iter().enumerate() {
            for sq in 0..board.squares() {
                for (dir, step) in steps[si][sq].iter_mut().enumerate() {
                    *step = match board.step(side, sq, dir) {
                        Some(Some(t)) => t as u8,
                        Some(None) => OFF,
                        None => NO_STEP,
                    };
                }
                for (k, from) in board.unsteps(side, sq).into_iter().enumerate() {
                    unsteps[si][sq][k] = from.map_or(NO_STEP, |f| f as u8);
                }
            }
        }
        DodgemLayers {
            board,
            layers,
            steps,
            unsteps,
            odd: board.odd_squares(),
            edges: Edges::new(board.n()),
            mirror: std::array::from_fn(|sq| {
                let n = board.n();
                ((sq % n) * n + sq / n) as u8
            }),
        }
    }

    /// The targets of the cars of the side to move in `p`: calls `f(from,
    /// to)` per legal move (`to` = [`OFF`] for leaving the board) and
    /// stops early when `f` returns false.
    #[inline]
    fn each_move(&self, p: &Position, mut f: impl FnMut(usize, u8) -> bool) {
        let occ = p.blue | p.red;
        let steps = &self.steps[usize::from(p.to_move == Side::Red)];
        let mut cars = p.cars(p.to_move);
        while cars != 0 {
            let s = cars.trailing_zeros() as usize;
            cars &= cars - 1;
            for &t in &steps[s] {
                let legal = t == OFF || (t != NO_STEP && occ >> t & 1 == 0);
                if legal && !f(s, t) {
                    return;
                }
            }
        }
    }

    /// The position with blue cars `blue`, red cars on the free squares
    /// (`free`, in order) picked by the mask `red_free`, `side` to move.
    #[inline]
    fn place(free: &[u8; 64], blue: u64, mut red_free: u64, side: Side) -> Position {
        let mut red = 0u64;
        while red_free != 0 {
            red |= 1u64 << free[red_free.trailing_zeros() as usize];
            red_free &= red_free - 1;
        }
        Position {
            blue,
            red,
            to_move: side,
        }
    }

    /// The squares not in `blue`, in order.
    #[inline]
    fn free_squares(&self, blue: u64) -> [u8; 64] {
        let mut free = [0u8; 64];
        let mut k = 0;
        for sq in 0..self.board.squares() {
            if blue >> sq & 1 == 0 {
                free[k] = sq as u8;
                k += 1;
            }
        }
        free
    }

    /// Calls `f(q, sq, from, i)` for each in-layer parent `q` of `p`: the
    /// previous mover's `i`-th car (from 1, in square order) on `sq` came
    /// from `from`. The parent is not over, since the player now to move
    /// has a car (else `p` has no parent in play).
    #[inline]
    fn each_unmove(&self, p: &Position, mut f: impl FnMut(Position, usize, usize, usize)) {
        let prev = p.to_move.other();
        if p.cars(p.to_move) == 0 {
            return;
        }
        let occ = p.blue | p.red;
        let mine = p.cars(prev);
        let mut cars = mine;
        let mut i = 0;
        while cars != 0 {
            let sq = cars.trailing_zeros() as usize;
            cars &= cars - 1;
            i += 1;
            for &from in &self.unsteps[usize::from(prev == Side::Red)][sq] {
                if from == NO_STEP || occ >> from & 1 == 1 {
                    continue;
                }
                let from = usize::from(from);
                let moved = (mine & !(1 << sq)) | 1 << from;
                f(p.with_cars(prev, moved, prev), sq, from, i);
            }
        }
    }

    /// The rank in `layer` after the `i`-th car (from 1, in square order)
    /// of `side` moves from `sq` to the next square of its rank, `to`
    /// (`(sq, to)`), in
    /// the position of rank `rank` (blue cars `blue`), the other side then
    /// to move: the car keeps its place among its colour's cars and no car
    /// of the other colour lies between the squares, so only its term
    /// `C(c, i)` of the rank changes (Red's c counts the squares free of
    /// blue cars), and the side bit flips. Used both ways, for moves and
    /// un-moves.
    #[inline]
    fn next_square_rank(
        &self,
        layer: usize,
        rank: u64,
        side: Side,
        blue: u64,
        (sq, to): (usize, usize),
        i: usize,
    ) -> u64 {
        let binom = placement::cell_binomial;
        let (unit, c, c2) = match side {
            Side::Blue => (2 * self.layers[layer].red_ranks(), sq, to),
            Side::Red => {
                let c = sq - (blue & ((1u64 << sq) - 1)).count_ones() as usize;
                (2, c, c + to - sq)
            }
        };
        (rank ^ 1)
            .wrapping_add(binom(c2, i).wrapping_mul(unit))
            .wrapping_sub(binom(c, i).wrapping_mul(unit))
    }

    /// The layer id of `(a, b)`.
    pub fn layer_of(&self, a: usize, b: usize) -> usize {
        a * (self.board.cars() + 1) + b
    }

    /// The ranking of layer id `layer`.
    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    pub fn layer(&self, layer: usize) -> &Layer {
        &self.layers[layer]
    }
}

impl LayeredGame for DodgemLayers {
    type Position = Position;

    fn layer_count(&self) -> usize {
        self.layers.len()
    }

    fn layer_name(&self, layer: usize) -> String {
        let l = &self.layers[layer];
        format!("{}-{}", l.a(), l.b())
    }

    fn layer_size(&self, layer: usize) -> u64 {
        self.layers[layer].len()
    }

    fn child_layers(&self, layer: usize) -> Vec<usize> {
        let l = &self.layers[layer];
        let mut v = Vec::new();
        if l.a() > 0 {
            v.push(self.layer_of(l.a() - 1, l.b()));
        }
        if l.b() > 0 {
            v.push(self.layer_of(l.a(), l.b() - 1));
        }
        v
    }

    fn unrank(&self, layer: usize, rank: u64) -> Position {
        let l = &self.layers[layer];
        let side = if rank & 1 == 0 { Side::Blue } else { Side::Red };
        let rest = rank >> 1;
        let blue = l.blue_set(rest / l.red_ranks());
        Position {
            blue,
            red: placement::expand_sparse(l.red_free_set(rest % l.red_ranks()), blue),
            to_move: side,
        }
    }

    fn layer_of(&self, p: &Position) -> usize {
        let (a, b) = p.layer();
        self.layer_of(a, b)
    }

    fn for_each_position(
        &self,
        layer: usize,
        start: u64,
        end: u64,
        f: &mut impl FnMut(u64, Position),
    ) {
        if start >= end {
            return;
        }
        let l = &self.layers[layer];
        let reds = l.red_ranks();
        let mut r = start;
        while r < end {
            let rb = (r >> 1) / reds;
            let blue = l.blue_set(rb);
            let free = self.free_squares(blue);
            let block_end = (2 * reds * (rb + 1)).min(end);
            while r < block_end {
                let side = if r & 1 == 0 { Side::Blue } else { Side::Red };
                let rr = (r >> 1) % reds;
                f(r, Self::place(&free, blue, l.red_free_set(rr), side));
                r += 1;
            }
        }
    }

    fn rank(&self, p: &Position) -> (usize, u64) {
        let (a, b) = p.layer();
        let id = self.layer_of(a, b);
        (id, self.layers[id].index(p))
    }

    fn rank_in(&self, layer: usize, p: &Position) -> u64 {
        self.layers[layer].index(p)
    }

    /// Layer (a, b) with a > b is the image of (b, a): the reflection in
    /// the diagonal with colours and side to move swapped keeps value and
    /// depth (Dodgem's rules are symmetric under it).
    fn image_layer(&self, layer: usize) -> Option<usize> {
        let l = &self.layers[layer];
        (l.a() > l.b()).then(|| self.layer_of(l.b(), l.a()))
    }

    /// [`Board::reflect`] through a table of squares (no division).
    fn image(&self, p: &Position) -> Position {
        let mirror = |mut m: u64| {
            let mut out = 0u64;
            while m != 0 {
                out |= 1 << self.mirror[m.trailing_zeros() as usize];
                m &= m - 1;
            }
            out
        };
        Position {
            blue: mirror(p.red),
            red: mirror(p.blue),
            to_move: p.to_move.other(),
        }
    }

    /// A layer (a, a) is solved by halves: its parity classes
    /// ([`Board::parity`]) have no in-layer move between them, and the
    /// reflection with the colours swapped maps the layer onto itself,
    /// exchanging them.
    fn halves_by_image(&self, layer: usize) -> bool {
        let l = &self.layers[layer];
        l.a() == l.b()
    }

    fn first_half(&self, p: &Position) -> bool {
        super::parity_class(self.odd, p) == 0
    }

    /// At most 3 moves a car: a car that can leave has at most 2 others,
    /// so in-layer moves plus one for a move out stay within 3 a car.
    fn counter_bound(&self, layer: usize) -> Option<u32> {
        let l = &self.layers[layer];
        Some(3 * l.a().max(l.b()) as u32)
    }

    fn terminal(&self, p: &Position) -> Option<Terminal> {
        // Board::terminal without building the list of moves.
        if p.cars(p.to_move.other()) == 0 {
            return Some(Terminal::Loss);
        }
        let mut any = false;
        self.each_move(p, |_, _| {
            any = true;
            false
        });
        (!any).then_some(Terminal::Win)
    }

    fn children(&self, p: &Position, f: &mut impl FnMut(Position)) {
        self.each_move(p, |from, to| {
            let moved = (p.cars(p.to_move) & !(1 << from)) | if to == OFF { 0 } else { 1 << to };
            f(p.with_cars(p.to_move, moved, p.to_move.other()));
            true
        });
    }

    /// The in-layer moves counted on bit boards (Blue: right, up, down onto
    /// a free square; Red: up, left, right, as [`Board::step`]), and only
    /// the cars on the exit edge ranked in the layer below.
    fn moves_out(&self, layer: usize, p: &Position, f: &mut impl FnMut(usize, u64)) -> u32 {
        let e = &self.edges;
        let free = !(p.blue | p.red) & e.full;
        let (inside, leaving, below) = match p.to_move {
            Side::Blue => {
                let b = p.blue;
                (
                    (((b & !e.last_file) << 1) & free).count_ones()
                        + ((b << e.n) & free).count_ones()
                        + ((b >> e.n) & free).count_ones(),
                    b & e.last_file,
                    layer.wrapping_sub(self.board.cars() + 1),
                )
            }
            Side::Red => {
                let r = p.red;
                (
                    ((r << e.n) & free).count_ones()
                        + (((r & !e.first_file) >> 1) & free).count_ones()
                        + (((r & !e.last_file) << 1) & free).count_ones(),
                    r & e.last_rank,
                    layer.wrapping_sub(1),
                )
            }
        };
        let mut m = leaving;
        while m != 0 {
            let s = m.trailing_zeros();
            m &= m - 1;
            let q = p.with_cars(p.to_move, p.cars(p.to_move) & !(1 << s), p.to_move.other());
            f(below, self.layers[below].index(&q));
        }
        inside
    }

    /// A car un-moved to the next square of its rank (Blue's step right,
    /// Red's steps sideways) changes one binomial term of the rank
    /// ([`DodgemLayers::next_square_rank`]); other un-moves are ranked afresh.
    fn parents_ranked(
        &self,
        layer: usize,
        rank: u64,
        p: &Position,
        f: &mut impl FnMut(Position, u64),
    ) {
        self.each_unmove(p, |q, sq, from, i| {
            let rq = if from + 1 == sq || sq + 1 == from {
                self.next_square_rank(layer, rank, q.to_move, p.blue, (sq, from), i)
            } else {
                self.layers[layer].index(&q)
            };
            f(q, rq);
        });
    }

    /// The mirror of [`parents_ranked`](LayeredGame::parents_ranked): a
    /// car moved to the next square of its rank changes one binomial term
    /// of the rank; other moves inside the layer are ranked afresh.
    fn children_in_layer(&self, layer: usize, rank: u64, p: &Position, f: &mut impl FnMut(u64)) {
        let l = &self.layers[layer];
        let occ = p.blue | p.red;
        let mine = p.cars(p.to_move);
        let steps = &self.steps[usize::from(p.to_move == Side::Red)];
        let mut cars = mine;
        let mut i = 0;
        while cars != 0 {
            let sq = cars.trailing_zeros() as usize;
            cars &= cars - 1;
            i += 1;
            for &t in &steps[sq] {
                if t == OFF || t == NO_STEP || occ >> t & 1 == 1 {
                    continue;
                }
                let to = usize::from(t);
                f(if to + 1 == sq || sq + 1 == to {
                    self.next_square_rank(layer, rank, p.to_move, p.blue, (sq, to), i)
                } else {
                    let moved = (mine & !(1 << sq)) | 1 << to;
                    match p.to_move {
                        Side::Blue => l.index_of(moved, p.red, Side::Red),
                        Side::Red => l.index_of(p.blue, moved, Side::Blue),
                    }
                });
            }
        }
    }

    fn parents(&self, p: &Position, f: &mut impl FnMut(Position)) {
        self.each_unmove(p, |q, _, _, _| f(q));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::engine::{check_rules, solve_all};

    #[test]
    fn the_rules_pass_the_engine_self_test() {
        for n in 2..=5 {
            let g = DodgemLayers::new(Board::new(n).unwrap());
            let per_layer = if n <= 3 { 1 << 20 } else { 400 };
            assert_eq!(
                check_rules(&g, per_layer, n as u64),
                Vec::<String>::new(),
                "{n}×{n}"
            );
        }
    }

    /// The engine's bytes equal those of Dodgem's own solver on every layer
    /// of the 3×3 and 4×4 boards (the values sections of the `dodgem`
    /// shards); 5×5 is an ignored test of the test binary.
    #[test]
    fn the_engine_gives_the_bytes_of_the_dodgem_solver_on_3x3_and_4x4() {
        for n in [3, 4] {
            let board = Board::new(n).unwrap();
            let g = DodgemLayers::new(board);
            let engine = solve_all(&g, 2).unwrap();
            let own = super::super::Tables::solve(board, 2);
            for (id, bytes) in engine.iter().enumerate() {
                let l = g.layer(id);
                assert_eq!(
                    Some(bytes.as_slice()),
                    own.bytes(l.a(), l.b()),
                    "{n}×{n} layer ({}, {})",
                    l.a(),
                    l.b()
                );
            }
        }
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;
    use crate::solvers::engine::{image_values, solve_all};

    /// Every layer (a, b) with a > b, answered as the image of (b, a),
    /// has the bytes the engine gives when it solves it (2×2 to 4×4, on
    /// 1 and 3 threads).
    #[test]
    fn image_layers_equal_the_solved_layers() {
        for n in 2..=4 {
            let g = DodgemLayers::new(Board::new(n).unwrap());
            let solved = solve_all(&g, 2).unwrap();
            let mut images = 0;
            for l in 0..g.layer_count() {
                let Some(src) = g.image_layer(l) else {
                    continue;
                };
                images += 1;
                for threads in [1, 3] {
                    assert_eq!(
                        image_values(&g, l, &solved[src], threads),
                        solved[l],
                        "{n}×{n} layer {} on {threads} threads",
                        g.layer_name(l)
                    );
                }
            }
            assert_eq!(images, (n - 1) * n / 2, "{n}×{n}");
        }
    }
}

#[cfg(test)]
mod big {
    use super::*;
    use crate::solvers::engine::solve_all;

    /// 5×5 (ignored: under a minute on 2 cores): the engine's bytes equal
    /// the Dodgem solver's on every layer.
    #[test]
    #[ignore = "solves Dodgem 5×5 twice"]
    fn the_engine_gives_the_bytes_of_the_dodgem_solver_on_5x5() {
        let board = Board::new(5).unwrap();
        let g = DodgemLayers::new(board);
        let t = std::time::Instant::now();
        let engine = solve_all(&g, 2).unwrap();
        let te = t.elapsed();
        let t = std::time::Instant::now();
        let own = super::super::Tables::solve(board, 2);
        eprintln!("5×5: engine {te:?}, Dodgem solver {:?}", t.elapsed());
        for (id, bytes) in engine.iter().enumerate() {
            let l = g.layer(id);
            assert_eq!(
                Some(bytes.as_slice()),
                own.bytes(l.a(), l.b()),
                "layer ({}, {})",
                l.a(),
                l.b()
            );
        }
    }
}

#[cfg(test)]
mod reach_tests {
    use super::*;
    use crate::solvers::engine::reach_all;

    /// The engine's reachability gives the bits of Dodgem's own
    /// (`reach_layer`, layer by layer from the top) on 3×3 and 4×4.
    #[test]
    fn the_engine_reaches_what_the_dodgem_reachability_reaches() {
        for n in [3, 4] {
            let board = Board::new(n).unwrap();
            let g = DodgemLayers::new(board);
            let bits = reach_all(&g, board.start(), 2);
            let top = board.cars();
            let mut own: std::collections::HashMap<(usize, usize), super::super::ReachBits> =
                std::collections::HashMap::new();
            for sum in (0..=2 * top).rev() {
                for a in (sum.saturating_sub(top)..=sum.min(top)).rev() {
                    let b = sum - a;
                    let layer = Layer::new(board, a, b);
                    let r = super::super::reach_layer(
                        &layer,
                        own.get(&(a + 1, b)),
                        own.get(&(a, b + 1)),
                    );
                    let id = g.layer_of(a, b);
                    for i in 0..layer.len() {
                        assert_eq!(
                            bits[id][(i / 64) as usize] >> (i % 64) & 1 == 1,
                            r.get(i),
                            "{n}×{n} layer ({a}, {b}) index {i}"
                        );
                    }
                    own.insert((a, b), r);
                }
            }
        }
    }
}
