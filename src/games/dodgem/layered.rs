//! Dodgem as a [`LayeredGame`] for the generic retrograde engine, written
//! from the rules alone (moves, [`Board::unsteps`], [`Board::terminal`]):
//! the engine's bytes are compared with this folder's own solver.
//!
//! Layers are Dodgem's layers `(a, b)` (blue cars, red cars), ids
//! `a · n + b` for a, b ≤ n − 1; ranks are [`Layer`]'s indices (both sides to
//! move). Sideways moves stay in the layer, a car leaving the board goes to
//! `(a − 1, b)` or `(a, b − 1)`.

use super::{Board, Layer, Position, Side, Value};
use crate::games::retrograde::{LayeredGame, Terminal};

/// Dodgem on an n×n board, layered by cars of each side.
#[derive(Debug, Clone)]
pub struct DodgemLayers {
    board: Board,
    layers: Vec<Layer>,
}

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
        DodgemLayers { board, layers }
    }

    /// The layer id of `(a, b)`.
    pub fn layer_of(&self, a: usize, b: usize) -> usize {
        a * (self.board.cars() + 1) + b
    }

    /// The ranking of layer id `layer`.
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
        self.layers[layer].position(rank)
    }

    fn rank(&self, p: &Position) -> (usize, u64) {
        let (a, b) = p.layer();
        let id = self.layer_of(a, b);
        (id, self.layers[id].index(p))
    }

    fn terminal(&self, p: &Position) -> Option<Terminal> {
        self.board.terminal(p).map(|v| match v {
            Value::Win(_) => Terminal::Win,
            _ => Terminal::Loss,
        })
    }

    fn children(&self, p: &Position, f: &mut impl FnMut(Position)) {
        for m in self.board.moves(p) {
            f(self.board.apply(p, m));
        }
    }

    fn parents(&self, p: &Position, f: &mut impl FnMut(Position)) {
        // The previous mover moved one of its cars sideways or forward to
        // where it stands; the parent is not over, since the player now to
        // move has a car (else `p` has no parent in play).
        let prev = p.to_move.other();
        if p.cars(p.to_move) == 0 {
            return;
        }
        let occ = p.blue | p.red;
        let mut cars = p.cars(prev);
        while cars != 0 {
            let sq = cars.trailing_zeros() as usize;
            cars &= cars - 1;
            for from in self.board.unsteps(prev, sq).into_iter().flatten() {
                if occ >> from & 1 == 1 {
                    continue;
                }
                let moved = (p.cars(prev) & !(1 << sq)) | 1 << from;
                f(match prev {
                    Side::Blue => Position {
                        blue: moved,
                        red: p.red,
                        to_move: Side::Blue,
                    },
                    Side::Red => Position {
                        blue: p.blue,
                        red: moved,
                        to_move: Side::Red,
                    },
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::retrograde::{check_rules, solve_all};

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
mod big {
    use super::*;
    use crate::games::retrograde::solve_all;

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
