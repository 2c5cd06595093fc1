//! Quixo as a [`LayeredGame`] for the generic retrograde engine.
//!
//! **Layers.** A move keeps the cubes of the player who moved or adds one
//! (a blank taken), and the colours swap: layer `(a, b)` (cubes mine,
//! theirs) moves to `(b, a)` or `(b, a + 1)`. The engine's layer is the
//! pair `{a, b}` (`a ≥ b` below): the boards `(a, b)` first, then, when
//! `a ≠ b`, the boards `(b, a)`; its moves stay in the pair (cycles) or
//! reach a pair with one more cube. Layer ids count the pairs by cubes on
//! the board, then by `a` (id 0 is the empty board). Ranks inside each
//! half are [`Layer`]'s colex ranks.
//!
//! **Symmetry.** The 8 symmetries of the square ([`Symmetry`]).

use super::{Board, Layer, MaskMaps, Outcome, Rules, Symmetry};
use crate::solvers::engine::{LayeredGame, Terminal};

/// Quixo on an n×n board, layered by pairs of cube counts.
#[derive(Debug, Clone)]
pub struct QuixoLayers {
    rules: Rules,
    /// `(a, b)` of each layer id, `a ≥ b`.
    pairs: Vec<(usize, usize)>,
    /// Layer id of the pair containing `(a, b)`, by `a * 26 + b`.
    id: Vec<usize>,
    /// The ranking of `(a, b)`, by `a * 26 + b`.
    halves: Vec<Option<Layer>>,
    /// The symmetries as mask tables (canonical images).
    maps: MaskMaps,
    /// Solve one board per symmetry class (the default).
    reduce: bool,
}

const W: usize = 26;

impl QuixoLayers {
    /// The layers of the n×n board.
    ///
    /// # Errors
    /// [`super::QuixoError::BadSize`] for n outside 2 … 5.
    pub fn new(n: usize) -> Result<QuixoLayers, super::QuixoError> {
        let rules = Rules::new(n)?;
        let cells = n * n;
        let mut pairs = Vec::new();
        let mut id = vec![usize::MAX; W * W];
        let mut halves = vec![None; W * W];
        for total in 0..=cells {
            for a in total.div_ceil(2)..=total {
                let b = total - a;
                id[a * W + b] = pairs.len();
                id[b * W + a] = pairs.len();
                pairs.push((a, b));
                halves[a * W + b] = Some(Layer::new(n, a, b)?);
                halves[b * W + a] = Some(Layer::new(n, b, a)?);
            }
        }
        Ok(QuixoLayers {
            maps: MaskMaps::new(&rules),
            rules,
            pairs,
            id,
            halves,
            reduce: true,
        })
    }

    /// The same layers, solved without symmetry reduction (every board
    /// solved on its own; the bytes are the same, the time about 5× more
    /// on 4×4). For tests and benchmarks.
    pub fn without_symmetry_reduction(mut self) -> QuixoLayers {
        self.reduce = false;
        self
    }

    /// The rules of this board size.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The pair `(a, b)`, `a ≥ b`, of layer `layer`.
    pub fn pair(&self, layer: usize) -> (usize, usize) {
        self.pairs[layer]
    }

    /// The layer id of the pair holding boards `(a, b)`.
    ///
    /// # Panics
    /// If `a + b > n²`.
    pub fn layer_of(&self, a: usize, b: usize) -> usize {
        let id = self.id[a * W + b];
        assert_ne!(id, usize::MAX, "layer ({a}, {b}) is not on the board");
        id
    }

    fn half(&self, a: usize, b: usize) -> &Layer {
        self.halves[a * W + b]
            .as_ref()
            .expect("a layer of the board")
    }
}

impl LayeredGame for QuixoLayers {
    type Position = Board;

    fn layer_count(&self) -> usize {
        self.pairs.len()
    }

    fn layer_name(&self, layer: usize) -> String {
        let (a, b) = self.pairs[layer];
        format!("{a}-{b}")
    }

    fn layer_size(&self, layer: usize) -> u64 {
        let (a, b) = self.pairs[layer];
        let one = self.half(a, b).size();
        if a == b { one } else { 2 * one }
    }

    fn child_layers(&self, layer: usize) -> Vec<usize> {
        let (a, b) = self.pairs[layer];
        if a + b == self.rules.cells() {
            return Vec::new();
        }
        // (a, b) → (b, a + 1); (b, a) → (a, b + 1).
        let mut v = vec![self.layer_of(b, a + 1)];
        let other = self.layer_of(a, b + 1);
        if other != v[0] {
            v.push(other);
        }
        v
    }

    fn unrank(&self, layer: usize, rank: u64) -> Board {
        let (a, b) = self.pairs[layer];
        let first = self.half(a, b);
        if rank < first.size() {
            first.unrank(rank)
        } else {
            self.half(b, a).unrank(rank - first.size())
        }
    }

    fn rank(&self, p: &Board) -> (usize, u64) {
        let (a, b) = p.layer();
        let layer = self.id[a * W + b];
        let r = self.half(a, b).rank(*p);
        if a >= b {
            (layer, r)
        } else {
            (layer, self.half(b, a).size() + r)
        }
    }

    fn for_each_position(
        &self,
        layer: usize,
        start: u64,
        end: u64,
        f: &mut impl FnMut(u64, Board),
    ) {
        let (a, b) = self.pairs[layer];
        let first = self.half(a, b);
        let mut r = start;
        // The first half, then (a ≠ b) the second, each walked in rank
        // order instead of unranking every board.
        for (half, offset) in [(first, 0), (self.half(b, a), first.size())] {
            if r >= end || (offset > 0 && a == b) {
                break;
            }
            let half_end = (offset + half.size()).min(end);
            if r >= half_end {
                continue;
            }
            for board in half.boards_from(r - offset) {
                f(r, board);
                r += 1;
                if r >= half_end {
                    break;
                }
            }
        }
    }

    fn terminal(&self, p: &Board) -> Option<Terminal> {
        self.rules.outcome(*p).map(|o| match o {
            Outcome::Win => Terminal::Win,
            Outcome::Loss => Terminal::Loss,
        })
    }

    fn children(&self, p: &Board, f: &mut impl FnMut(Board)) {
        for (_, c) in self.rules.children(*p) {
            f(c);
        }
    }

    fn parents(&self, p: &Board, f: &mut impl FnMut(Board)) {
        // Same layer: the cube taken was the mover's own (a blank taken
        // comes from the pair with one cube fewer).
        self.rules.own_cube_predecessors(*p, |q| {
            if self.rules.outcome(q).is_none() {
                f(q);
            }
        });
    }

    fn layer_of(&self, p: &Board) -> usize {
        let (a, b) = p.layer();
        self.id[a * W + b]
    }

    fn rank_in(&self, layer: usize, p: &Board) -> u64 {
        let (a, b) = self.pairs[layer];
        let mine = p.mine.count_ones() as usize;
        if mine == a {
            self.half(a, b).rank(*p)
        } else {
            self.half(a, b).size() + self.half(b, a).rank(*p)
        }
    }

    fn symmetries(&self, p: &Board, f: &mut impl FnMut(Board)) {
        for s in 1..Symmetry::ALL.len() {
            f(Board::new(
                self.maps.map(s, p.mine),
                self.maps.map(s, p.theirs),
            ));
        }
    }

    fn reduces_by_symmetry(&self) -> bool {
        self.reduce
    }

    fn canonical(&self, p: &Board) -> (Board, u32) {
        self.maps.canonical(*p)
    }

    fn is_canonical(&self, p: &Board) -> bool {
        self.maps.is_canonical(*p)
    }

    /// On 5×5, the layers with two or more blanks: some boards of layer
    /// 12-11 are more than 119 plies deep (found by solving it with
    /// one-byte values), and layers with more blanks are expected to be as
    /// deep or deeper.
    fn wide_values(&self, layer: usize) -> bool {
        let (a, b) = self.pairs[layer];
        self.rules.n() == 5 && a + b + 2 <= self.rules.cells()
    }

    /// A position has at most one move per border cell and side it may be
    /// pushed in from: 2 at each of the 4 corners, 3 at each of the
    /// 4(n − 2) other border cells, 12n − 16 in all (44 on 5×5), plus one
    /// for a drawn move out. Within the 255 a two-byte cell holds, so the
    /// 5×5 layers solved with two-byte values keep their counters in their
    /// cells (two bytes a board while solving instead of three).
    fn counter_bound(&self, _layer: usize) -> Option<u32> {
        Some(12 * self.rules.n() as u32 - 16 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::engine::{LayerStats, check_rules, solve_all};

    #[test]
    fn the_rules_pass_the_engine_self_test_on_every_board_size() {
        for n in 2..=5 {
            let g = QuixoLayers::new(n).unwrap();
            let per_layer = if n <= 3 { 1 << 20 } else { 300 };
            assert_eq!(
                check_rules(&g, per_layer, n as u64),
                Vec::<String>::new(),
                "{n}×{n}"
            );
        }
    }

    #[test]
    fn layers_cover_every_board_once() {
        for n in 2..=5 {
            let g = QuixoLayers::new(n).unwrap();
            let total: u64 = (0..g.layer_count()).map(|l| g.layer_size(l)).sum();
            assert_eq!(total, super::super::total_boards(n), "{n}×{n}");
        }
        // 5×5: the largest layer is the pair {9, 8}, 2 × 26,293,088,250 boards.
        let g = QuixoLayers::new(5).unwrap();
        let big = (0..g.layer_count())
            .max_by_key(|&l| g.layer_size(l))
            .unwrap();
        assert_eq!(g.pair(big), (9, 8));
        assert_eq!(g.layer_size(big), 2 * 26_293_088_250);
    }

    /// 3×3: the engine's values of every board against the brute-force
    /// solver's counts (tests in `brute`): 12,748 wins, 6,935 losses, no draw.
    #[test]
    fn the_engine_solves_3x3() {
        let g = QuixoLayers::new(3).unwrap();
        let all = solve_all(&g, 2).unwrap();
        let (mut w, mut l, mut d) = (0, 0, 0);
        for v in &all {
            let s = LayerStats::of(v);
            (w, l, d) = (w + s.wins, l + s.losses, d + s.draws);
        }
        assert_eq!((w, l, d), (12_748, 6_935, 0));
        // The start: the first player wins in 7.
        let (layer, r) = g.rank(&Board::EMPTY);
        assert_eq!(
            crate::solvers::engine::Value::from_byte(all[layer][r as usize]),
            Some(crate::solvers::engine::Value::Win(7))
        );
    }
}

#[cfg(test)]
mod symmetry_tests {
    use super::*;
    use crate::solvers::engine::{solve_all, solve_layer};

    /// Solving one board per symmetry class gives the bytes of the plain
    /// solve, on every layer of 2×2 and 3×3, for 1 and 2 threads.
    #[test]
    fn symmetry_reduction_gives_the_plain_bytes_on_2x2_and_3x3() {
        for n in 2..=3 {
            let plain = solve_all(
                &QuixoLayers::new(n).unwrap().without_symmetry_reduction(),
                1,
            )
            .unwrap();
            for threads in [1, 2] {
                let reduced = solve_all(&QuixoLayers::new(n).unwrap(), threads).unwrap();
                assert_eq!(reduced, plain, "{n}×{n}, {threads} thread(s)");
            }
        }
    }

    /// 4×4: the layers with 13 … 16 cubes (about a third of the boards),
    /// reduced against plain, each from the same (plain) child layers.
    #[test]
    fn symmetry_reduction_gives_the_plain_bytes_on_full_4x4_layers() {
        let g = QuixoLayers::new(4).unwrap();
        let plain_g = g.clone().without_symmetry_reduction();
        let mut solved: Vec<Option<Vec<u8>>> = vec![None; g.layer_count()];
        let mut layers: Vec<usize> = (0..g.layer_count())
            .filter(|&l| {
                let (a, b) = g.pair(l);
                a + b >= 13
            })
            .collect();
        layers.sort_by_key(|&l| std::cmp::Reverse(g.pair(l).0 + g.pair(l).1));
        for l in layers {
            let below: Vec<(usize, &[u8])> = g
                .child_layers(l)
                .into_iter()
                .map(|c| (c, solved[c].as_deref().expect("solved before")))
                .collect();
            let plain = solve_layer(&plain_g, l, &below, 2).unwrap();
            let reduced = solve_layer(&g, l, &below, 2).unwrap();
            assert!(reduced == plain, "layer {}", g.layer_name(l));
            solved[l] = Some(plain);
        }
    }
}

#[cfg(test)]
mod reach_tests {
    use super::*;
    use crate::solvers::engine::reach_all;
    use std::collections::HashSet;

    /// The engine's reachable boards of 3×3 are those of a plain
    /// breadth-first search from the empty board over `Rules::children`
    /// (finished boards not expanded), layer by layer; by symmetry classes
    /// (the default: canonical boards expanded, classes filled in at the
    /// end) and board by board alike.
    #[test]
    fn the_engine_reaches_what_a_plain_search_reaches_on_3x3() {
        let g = QuixoLayers::new(3).unwrap();
        let bits = reach_all(&g, Board::EMPTY, 2);
        let plain = g.clone().without_symmetry_reduction();
        assert_eq!(reach_all(&plain, Board::EMPTY, 1), bits);
        let mut seen = HashSet::from([Board::EMPTY]);
        let mut todo = vec![Board::EMPTY];
        while let Some(b) = todo.pop() {
            if g.rules().outcome(b).is_some() {
                continue;
            }
            for (_, c) in g.rules().children(b) {
                if seen.insert(c) {
                    todo.push(c);
                }
            }
        }
        let mut from_bits = 0;
        for (l, words) in bits.iter().enumerate() {
            for r in 0..g.layer_size(l) {
                if words[(r / 64) as usize] >> (r % 64) & 1 == 1 {
                    from_bits += 1;
                    assert!(seen.contains(&g.unrank(l, r)), "layer {l} rank {r}");
                }
            }
        }
        assert_eq!(from_bits, seen.len());
        // Not every board: some cannot arise in play.
        assert!(seen.len() < 19_683, "{}", seen.len());
    }
}

#[cfg(test)]
mod big {
    use super::*;
    use crate::solvers::engine::{LayerStats, Value, solve_all};

    /// 4×4, every board (ignored: about a minute): the counts of the
    /// brute-force check in `brute` (26,434,489 wins, 15,003,736 losses,
    /// 1,608,496 draws) and the start, a first-player win in 21.
    #[test]
    #[ignore = "solves all 43,046,721 boards of 4×4"]
    fn the_engine_solves_4x4() {
        let g = QuixoLayers::new(4).unwrap();
        let t = std::time::Instant::now();
        let all = solve_all(&g, 2).unwrap();
        eprintln!("4×4 solved in {:?}", t.elapsed());
        let (mut w, mut l, mut d) = (0, 0, 0);
        for v in &all {
            let s = LayerStats::of(v);
            (w, l, d) = (w + s.wins, l + s.losses, d + s.draws);
        }
        assert_eq!((w, l, d), (26_434_489, 15_003_736, 1_608_496));
        let (layer, r) = g.rank(&Board::EMPTY);
        assert_eq!(
            Value::from_byte(all[layer][r as usize]),
            Some(Value::Win(21))
        );
    }
}
