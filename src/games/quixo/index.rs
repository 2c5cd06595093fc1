//! Dense ranking of one layer `(a, b)` and the layer graph.
//!
//! A set of k cells `c₁ < c₂ < … < c_k` of m cells has the colex rank
//! `Σᵢ C(cᵢ, i)` (combinatorial number system; Knuth, TAOCP 7.2.1.3,
//! eq. (20)): the k-sets get the ranks `0 … C(m, k) − 1` in the numeric
//! order of their masks. In layer `(a, b)` on N = n² cells:
//!
//! ```text
//! rank = rank(mine among the N cells) · C(N − a, b) + rank(theirs among the N − a cells not mine)
//! ```
//!
//! where the opponent's cubes are renumbered among the cells not mine (cell
//! c becomes c − #mine below c). This is the layout of Dodgem's layers.
//! Summed over all layers, `Σ_{a+b ≤ N} C(N, a)·C(N − a, b) = 3^N`.

use super::{Board, MAX_N, MIN_N, QuixoError};

/// Cells of the largest board.
const CELLS: usize = MAX_N * MAX_N;

/// `BINOM[m][k] = C(m, k)` for m, k ≤ 25.
static BINOM: [[u64; CELLS + 1]; CELLS + 1] = binomial_table();

const fn binomial_table() -> [[u64; CELLS + 1]; CELLS + 1] {
    let mut t = [[0u64; CELLS + 1]; CELLS + 1];
    let mut m = 0;
    while m <= CELLS {
        t[m][0] = 1;
        let mut k = 1;
        while k <= m {
            t[m][k] = t[m - 1][k - 1] + if k < m { t[m - 1][k] } else { 0 };
            k += 1;
        }
        m += 1;
    }
    t
}

/// `POP8[x]` = bits set in the byte x (the default x86-64 target has no
/// `popcnt` instruction).
static POP8: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u32).count_ones() as u8;
        i += 1;
    }
    t
};

/// `COLEX8[j][k][x]`: the colex-rank terms of the cells set in byte x of
/// chunk j (cells 8j … 8j+7) when k cells below the chunk are in the set:
/// `Σ C(8j + bit, k + order of bit in x)` (terms past 25 cells are 0).
static COLEX8: [[[u64; 256]; CELLS + 1]; 4] = {
    let mut t = [[[0u64; 256]; CELLS + 1]; 4];
    let mut j = 0;
    while j < 4 {
        let mut k = 0;
        while k <= CELLS {
            let mut x = 0;
            while x < 256 {
                let mut sum = 0;
                let mut cnt = k;
                let mut bit = 0;
                while bit < 8 {
                    if x >> bit & 1 == 1 {
                        cnt += 1;
                        let c = 8 * j + bit;
                        if c <= CELLS && cnt <= CELLS {
                            sum += BINOM[c][cnt];
                        }
                    }
                    bit += 1;
                }
                t[j][k][x] = sum;
                x += 1;
            }
            k += 1;
        }
        j += 1;
    }
    t
};

/// `PEXT8[f][x]`: the bits of x at the set bits of f, packed low (a byte's
/// parallel bit extract).
static PEXT8: [[u8; 256]; 256] = {
    let mut t = [[0u8; 256]; 256];
    let mut f = 0;
    while f < 256 {
        let mut x = 0;
        while x < 256 {
            let mut out = 0;
            let mut o = 0;
            let mut bit = 0;
            while bit < 8 {
                if f >> bit & 1 == 1 {
                    if x >> bit & 1 == 1 {
                        out |= 1 << o;
                    }
                    o += 1;
                }
                bit += 1;
            }
            t[f][x] = out;
            x += 1;
        }
        f += 1;
    }
    t
};

/// `C(m, k)`, exact; 0 when `k > m`.
///
/// # Panics
/// On overflow of `u64` (far above every use here: C(25, 12) = 5,200,300).
pub fn binomial(m: u64, k: u64) -> u64 {
    if k > m {
        return 0;
    }
    if m as usize <= CELLS {
        return BINOM[m as usize][k as usize];
    }
    let k = k.min(m - k);
    let mut r: u128 = 1;
    for i in 0..k as u128 {
        r = r * (m as u128 - i) / (i + 1);
    }
    u64::try_from(r).expect("binomial overflows u64")
}

/// Boards of layer `(a, b)` on the n×n board: `C(n², a) · C(n² − a, b)`,
/// 0 if `a + b > n²`. Example: 5×5 layer (9, 8) has 26,293,088,250.
pub fn layer_size(n: usize, a: usize, b: usize) -> u64 {
    let cells = (n * n) as u64;
    if (a + b) as u64 > cells {
        return 0;
    }
    binomial(cells, a as u64) * binomial(cells - a as u64, b as u64)
}

/// Boards of all layers of the n×n board: `3^(n²)` (19,683; 43,046,721;
/// 847,288,609,443 for n = 3, 4, 5). Every board once, seen by the player to
/// move; with the absolute colour to move, twice as many positions.
pub fn total_boards(n: usize) -> u64 {
    3u64.pow((n * n) as u32)
}

/// Every layer `(a, b)` with `a + b ≤ n²`, by decreasing `a + b`, then
/// decreasing `a`: a solver may take them in this order, solving `(a, b)`
/// together with `(b, a)` ([`solve_order`]).
pub fn layers(n: usize) -> Vec<(usize, usize)> {
    let cells = n * n;
    let mut out = Vec::new();
    for total in (0..=cells).rev() {
        for a in (0..=total).rev() {
            out.push((a, total - a));
        }
    }
    out
}

/// The units of a layered solve, in dependency order: the pairs `(a, b)`
/// with `a ≥ b`, by decreasing `a + b` (then decreasing `a`). The unit
/// `(a, b)` is the layers `(a, b)` and `(b, a)` (one layer if `a = b`),
/// which reach each other; their other moves reach only layers `(b, a + 1)`
/// and `(a, b + 1)`, of units with one more cube, solved before.
pub fn solve_order(n: usize) -> Vec<(usize, usize)> {
    layers(n).into_iter().filter(|&(a, b)| a >= b).collect()
}

/// Colex rank of the set `mask` (cells below 25), a byte at a time.
#[inline]
fn colex_rank(mask: u32) -> u64 {
    let mut r = 0;
    let mut k = 0;
    let mut j = 0;
    let mut m = mask;
    while m != 0 {
        let x = (m & 0xff) as usize;
        r += COLEX8[j][k][x];
        k += POP8[x] as usize;
        m >>= 8;
        j += 1;
    }
    r
}

/// Colex rank of `mask`, a bit at a time (the definition; for tests).
#[cfg(test)]
fn colex_rank_by_bits(mut mask: u32) -> u64 {
    let mut r = 0;
    let mut i = 1;
    while mask != 0 {
        r += BINOM[mask.trailing_zeros() as usize][i];
        mask &= mask - 1;
        i += 1;
    }
    r
}

/// The k-set of cells below `m` with colex rank `r < C(m, k)`.
#[inline]
fn colex_unrank(mut r: u64, k: usize, m: usize) -> u32 {
    let mut mask = 0;
    let mut top = m;
    for i in (1..=k).rev() {
        // The largest c < top with C(c, i) ≤ r.
        let mut c = top - 1;
        while BINOM[c][i] > r {
            c -= 1;
        }
        r -= BINOM[c][i];
        mask |= 1 << c;
        top = c;
    }
    mask
}

/// `theirs` renumbered among the cells of `free` (bit j = the j-th cell of
/// `free`, counting from cell 0); `theirs ⊆ free`.
#[inline]
fn compress(theirs: u32, free: u32) -> u32 {
    let mut out = 0;
    let mut shift = 0;
    let (mut t, mut f) = (theirs, free);
    while t != 0 {
        let fb = (f & 0xff) as usize;
        out |= (PEXT8[fb][(t & 0xff) as usize] as u32) << shift;
        shift += POP8[fb] as u32;
        t >>= 8;
        f >>= 8;
    }
    out
}

/// [`compress`] a bit at a time (the definition; for tests).
#[cfg(test)]
fn compress_by_bits(theirs: u32, free: u32) -> u32 {
    let mut out = 0;
    let mut m = theirs;
    while m != 0 {
        let c = m.trailing_zeros();
        out |= 1 << (free & ((1u32 << c) - 1)).count_ones();
        m &= m - 1;
    }
    out
}

/// The inverse of [`compress`]: bit j of `packed` goes to the j-th cell of
/// `free`.
#[inline]
fn expand(mut packed: u32, free: u32) -> u32 {
    let mut out = 0;
    let mut f = free;
    while packed != 0 {
        if packed & 1 == 1 {
            out |= f & f.wrapping_neg();
        }
        f &= f.wrapping_sub(1);
        packed >>= 1;
    }
    out
}

/// [`Layer::rank`] without the layer: `theirs_ranks` = `C(n² − a, b)` of
/// the board's layer `(a, b)`, `full` the mask of the n² cells.
#[inline]
pub(super) fn rank_in_layer(board: Board, theirs_ranks: u64, full: u32) -> u64 {
    debug_assert_eq!(board.mine & board.theirs, 0);
    let free = !board.mine & full;
    colex_rank(board.mine) * theirs_ranks + colex_rank(compress(board.theirs, free))
}

/// The ranking of layer `(a, b)` of the n×n board: the boards with `a`
/// cubes mine and `b` theirs ↔ `0 … size − 1` (module doc). No tables
/// beyond a shared 26×26 binomial table; `rank` and `unrank` cost O(n²).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layer {
    n: usize,
    a: usize,
    b: usize,
    theirs_ranks: u64,
    size: u64,
}

impl Layer {
    /// The layer with `a` cubes of the player to move and `b` of the
    /// opponent on the n×n board.
    ///
    /// # Errors
    /// [`QuixoError::BadSize`] for n outside 2 … 5, [`QuixoError::BadLayer`]
    /// if `a + b > n²`.
    pub fn new(n: usize, a: usize, b: usize) -> Result<Layer, QuixoError> {
        if !(MIN_N..=MAX_N).contains(&n) {
            return Err(QuixoError::BadSize(n));
        }
        let cells = n * n;
        if a + b > cells {
            return Err(QuixoError::BadLayer { a, b, n });
        }
        Ok(Layer {
            n,
            a,
            b,
            theirs_ranks: BINOM[cells - a][b],
            size: BINOM[cells][a] * BINOM[cells - a][b],
        })
    }

    /// The layer of board `b` on the n×n board.
    ///
    /// # Errors
    /// As [`Layer::new`].
    pub fn of(n: usize, board: Board) -> Result<Layer, QuixoError> {
        let (a, b) = board.layer();
        Layer::new(n, a, b)
    }

    /// Board size n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Cubes of the player to move.
    pub fn a(&self) -> usize {
        self.a
    }
    /// Cubes of the opponent.
    pub fn b(&self) -> usize {
        self.b
    }
    /// Boards in the layer: `C(n², a) · C(n² − a, b)`.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// `C(n² − a, b)`: ranks per `mine` set (the block length; boards with
    /// the same `mine` have consecutive ranks).
    pub fn theirs_ranks(&self) -> u64 {
        self.theirs_ranks
    }

    /// The rank of `board`, which must lie in this layer (checked in debug
    /// builds only).
    #[inline]
    pub fn rank(&self, board: Board) -> u64 {
        debug_assert_eq!(board.layer(), (self.a, self.b));
        rank_in_layer(
            board,
            self.theirs_ranks,
            ((1u64 << (self.n * self.n)) - 1) as u32,
        )
    }

    /// The board of rank `r`.
    ///
    /// # Panics
    /// If `r ≥ size()`.
    #[inline]
    pub fn unrank(&self, r: u64) -> Board {
        assert!(r < self.size, "rank {r} of a layer of {} boards", self.size);
        let cells = self.n * self.n;
        let mine = colex_unrank(r / self.theirs_ranks, self.a, cells);
        let free = !mine & ((1u64 << cells) - 1) as u32;
        let theirs = expand(
            colex_unrank(r % self.theirs_ranks, self.b, cells - self.a),
            free,
        );
        Board { mine, theirs }
    }

    /// Every board of the layer in rank order (rank 0 first), cheaper than
    /// unranking each: the `mine` sets in colex order, and for each the
    /// `theirs` sets among the free cells in colex order.
    pub fn boards(&self) -> LayerBoards {
        let cells = self.n * self.n;
        let mine = (1u32 << self.a) - 1;
        LayerBoards {
            cells,
            b: self.b,
            mine,
            free: !mine & ((1u64 << cells) - 1) as u32,
            packed: (1u32 << self.b) - 1,
            done: false,
        }
    }

    /// The boards of ranks `r`, `r + 1`, … in order ([`Layer::boards`]
    /// started at rank `r < size()`).
    ///
    /// # Panics
    /// If `r ≥ size()`.
    pub fn boards_from(&self, r: u64) -> LayerBoards {
        assert!(r < self.size, "rank {r} of a layer of {} boards", self.size);
        let cells = self.n * self.n;
        let mine = colex_unrank(r / self.theirs_ranks, self.a, cells);
        LayerBoards {
            cells,
            b: self.b,
            mine,
            free: !mine & ((1u64 << cells) - 1) as u32,
            packed: colex_unrank(r % self.theirs_ranks, self.b, cells - self.a),
            done: false,
        }
    }

    /// The layers the moves of this one can reach: `(b, a)` (a cube of the
    /// mover's own taken) and `(b, a + 1)` (a blank taken) when
    /// `a + b < n²`.
    pub fn children(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.b, self.a)];
        if self.a + self.b < self.n * self.n {
            v.push((self.b, self.a + 1));
        }
        v
    }

    /// The layers whose moves can reach this one: `(b, a)` and, if
    /// `b ≥ 1`, `(b − 1, a)`.
    pub fn parents(&self) -> Vec<(usize, usize)> {
        let mut v = vec![(self.b, self.a)];
        if self.b >= 1 {
            v.push((self.b - 1, self.a));
        }
        v
    }
}

/// The next larger mask with as many bits (Gosper's hack), or `None` past
/// `limit` bits. The empty set has no successor.
#[inline]
fn next_set(x: u32, limit: usize) -> Option<u32> {
    if x == 0 {
        return None;
    }
    let x = x as u64;
    let c = x & x.wrapping_neg();
    let r = x + c;
    let y = (((r ^ x) >> 2) / c) | r;
    (y < 1u64 << limit).then_some(y as u32)
}

/// The boards of a layer in rank order ([`Layer::boards`]).
#[derive(Debug, Clone)]
pub struct LayerBoards {
    cells: usize,
    b: usize,
    mine: u32,
    free: u32,
    packed: u32,
    done: bool,
}

impl Iterator for LayerBoards {
    type Item = Board;

    #[inline]
    fn next(&mut self) -> Option<Board> {
        if self.done {
            return None;
        }
        let out = Board {
            mine: self.mine,
            theirs: expand(self.packed, self.free),
        };
        let a = self.mine.count_ones() as usize;
        if let Some(p) = next_set(self.packed, self.cells - a) {
            self.packed = p;
        } else if let Some(m) = next_set(self.mine, self.cells) {
            self.mine = m;
            self.free = !m & ((1u64 << self.cells) - 1) as u32;
            self.packed = (1u32 << self.b) - 1;
        } else {
            self.done = true;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Rng, all_boards};
    use super::*;

    #[test]
    fn boards_from_a_rank_continue_in_rank_order() {
        for (a, b) in [(0, 0), (3, 0), (0, 4), (2, 3), (5, 4), (8, 8)] {
            let l = Layer::new(4, a, b).unwrap();
            for start in [0, 1, l.size() / 3, l.size() - 1]
                .into_iter()
                .filter(|&s| s < l.size())
            {
                let got: Vec<Board> = l.boards_from(start).take(50).collect();
                let want: Vec<Board> = (start..l.size().min(start + 50))
                    .map(|r| l.unrank(r))
                    .collect();
                assert_eq!(got, want, "({a}, {b}) from {start}");
            }
        }
    }

    #[test]
    fn byte_tables_agree_with_the_definitions() {
        let mut rng = Rng(31);
        for _ in 0..200_000 {
            let mask = rng.next() as u32 & ((1 << 25) - 1);
            let free = rng.next() as u32 & ((1 << 25) - 1);
            assert_eq!(colex_rank(mask), colex_rank_by_bits(mask));
            assert_eq!(
                compress(mask & free, free),
                compress_by_bits(mask & free, free)
            );
            assert_eq!(expand(compress(mask & free, free), free), mask & free);
        }
        for mask in 0..1u32 << 16 {
            assert_eq!(colex_rank(mask), colex_rank_by_bits(mask));
        }
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(25, 12), 5_200_300);
        assert_eq!(binomial(25, 9), 2_042_975);
        assert_eq!(binomial(16, 8), 12_870);
        assert_eq!(binomial(3, 5), 0);
        assert_eq!(binomial(60, 30), 118_264_581_564_861_424);
        for m in 0..=25u64 {
            for k in 0..=m {
                assert_eq!(binomial(m, k), binomial(m, m - k));
            }
        }
    }

    #[test]
    fn layer_sizes_and_totals() {
        for (n, total) in [
            (2, 81u64),
            (3, 19_683),
            (4, 43_046_721),
            (5, 847_288_609_443),
        ] {
            let sum: u64 = layers(n).iter().map(|&(a, b)| layer_size(n, a, b)).sum();
            assert_eq!(sum, total);
            assert_eq!(total_boards(n), total);
            let (big, size) = layers(n)
                .iter()
                .map(|&(a, b)| ((a, b), layer_size(n, a, b)))
                .max_by_key(|&(l, s)| (s, l))
                .unwrap();
            println!(
                "{n}x{n}: {} layers, {} boards in all (x2 with the absolute colour to move: {}); largest layer {:?} and its swap: {} boards",
                layers(n).len(),
                total,
                2 * total,
                big,
                size
            );
        }
        assert_eq!(layer_size(5, 9, 8), 26_293_088_250);
        assert_eq!(layer_size(5, 8, 9), 26_293_088_250);
        assert_eq!(layer_size(5, 20, 6), 0);
        // Every 3×3 and 4×4 layer's size, for the record.
        for n in [3, 4] {
            let mut line = format!("{n}x{n} layer sizes (a, b): ");
            for (a, b) in layers(n) {
                line += &format!("({a},{b}) {} ", layer_size(n, a, b));
            }
            println!("{line}");
        }
    }

    #[test]
    fn solve_order_respects_dependencies() {
        for n in 2..=5 {
            let order = solve_order(n);
            let pos = |a: usize, b: usize| {
                order
                    .iter()
                    .position(|&u| u == (a.max(b), a.min(b)))
                    .unwrap()
            };
            for &(a, b) in &order {
                for l in [(a, b), (b, a)] {
                    let layer = Layer::new(n, l.0, l.1).unwrap();
                    for (ca, cb) in layer.children() {
                        let u = pos(ca, cb);
                        assert!(
                            u <= pos(a, b),
                            "{n}: unit {:?} needs {:?}",
                            (a, b),
                            (ca, cb)
                        );
                        if u == pos(a, b) {
                            assert_eq!((ca.max(cb), ca.min(cb)), (a, b));
                        }
                    }
                }
            }
            assert_eq!(
                order.len(),
                layers(n).iter().filter(|&&(a, b)| a >= b).count()
            );
        }
    }

    #[test]
    fn rank_unrank_every_rank_of_small_layers() {
        for n in 2..=4 {
            for (a, b) in layers(n) {
                let layer = Layer::new(n, a, b).unwrap();
                if layer.size() > 2_000_000 {
                    continue;
                }
                let mut prev: Option<Board> = None;
                let mut it = layer.boards();
                for r in 0..layer.size() {
                    let board = layer.unrank(r);
                    assert_eq!(it.next(), Some(board));
                    assert_eq!(board.layer(), (a, b));
                    assert_eq!(board.mine & board.theirs, 0);
                    assert_eq!((board.mine | board.theirs) >> (n * n), 0);
                    assert_eq!(layer.rank(board), r);
                    // Ranks follow (mine, compressed theirs) numerically.
                    if let Some(p) = prev {
                        assert!(
                            p.mine < board.mine
                                || (p.mine == board.mine && p.theirs < board.theirs)
                        );
                    }
                    prev = Some(board);
                }
                assert_eq!(it.next(), None);
            }
        }
    }

    #[test]
    fn every_3x3_board_has_one_rank() {
        let mut seen = std::collections::HashSet::new();
        for b in all_boards(3) {
            let layer = Layer::of(3, b).unwrap();
            let r = layer.rank(b);
            assert!(r < layer.size());
            assert_eq!(layer.unrank(r), b);
            assert!(seen.insert((b.layer(), r)));
        }
    }

    #[test]
    fn rank_unrank_random_ranks_of_big_layers() {
        let mut rng = Rng(777);
        for (a, b) in layers(5) {
            let layer = Layer::new(5, a, b).unwrap();
            for r in [0, layer.size() - 1] {
                assert_eq!(layer.rank(layer.unrank(r)), r);
            }
            for _ in 0..200 {
                let r = rng.below(layer.size());
                assert_eq!(layer.rank(layer.unrank(r)), r, "({a}, {b}) rank {r}");
            }
        }
        assert!(Layer::new(5, 20, 6).is_err());
        assert!(Layer::new(6, 0, 0).is_err());
    }
}
