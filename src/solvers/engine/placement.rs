//! The two-colour placement ranking every board game of the engine shares:
//! the positions with `a` pieces of one colour and `b` of the other on
//! `cells` cells (each cell empty or holding one piece) ↔ the ranks
//! `0 … C(cells, a) · C(cells − a, b) − 1` ([`Placement`]).
//!
//! A set of k cells `c₁ < c₂ < … < c_k` has the colex rank `Σᵢ C(cᵢ, i)`
//! (the combinatorial number system; Knuth, *The Art of Computer
//! Programming* 4A, 7.2.1.3, eq. (20)): the k-sets of m cells get the ranks
//! `0 … C(m, k) − 1` in the numeric order of their bit masks. A placement
//! `(first, second)` has the rank
//!
//! ```text
//! rank = colex(first among the cells) · C(cells − a, b) + colex(second among the cells − a cells not first)
//! ```
//!
//! where the second colour's pieces are renumbered among the cells the
//! first leaves free (cell c becomes c − #first below c: [`compress`]).
//! Positions with the same first-colour set have consecutive ranks (a
//! *block* of `C(cells − a, b)`), which a game whose moves change one
//! colour at a time can use. Summed over all `(a, b)`,
//! `Σ C(N, a)·C(N − a, b) = 3^N`. GamesCrafters' GamesmanOne ships the same
//! idea once for its games as its "two-piece" hash.
//!
//! Quixo (mine / theirs), Dodgem (blue / red cars) and tic-tac-toe (X / O)
//! rank their layers with it. Masks are `u64`, bit c = cell c, up to
//! [`MAX_CELLS`] cells; ranks and unranks cost a few table look-ups per
//! byte of the mask.

/// Largest number of cells the byte tables hold (a 6×6 board).
pub const MAX_CELLS: usize = 36;

/// Bytes of a mask of [`MAX_CELLS`] cells.
const CHUNKS: usize = MAX_CELLS.div_ceil(8);

/// `BINOM[m][k] = C(m, k)` for m, k ≤ [`MAX_CELLS`].
static BINOM: [[u64; MAX_CELLS + 1]; MAX_CELLS + 1] = binomial_table();

const fn binomial_table() -> [[u64; MAX_CELLS + 1]; MAX_CELLS + 1] {
    let mut t = [[0u64; MAX_CELLS + 1]; MAX_CELLS + 1];
    let mut m = 0;
    while m <= MAX_CELLS {
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
/// `Σ C(8j + bit, k + order of bit in x)` (terms past [`MAX_CELLS`] are 0).
static COLEX8: [[[u64; 256]; MAX_CELLS + 1]; CHUNKS] = {
    let mut t = [[[0u64; 256]; MAX_CELLS + 1]; CHUNKS];
    let mut j = 0;
    while j < CHUNKS {
        let mut k = 0;
        while k <= MAX_CELLS {
            let mut x = 0;
            while x < 256 {
                let mut sum = 0;
                let mut cnt = k;
                let mut bit = 0;
                while bit < 8 {
                    if x >> bit & 1 == 1 {
                        cnt += 1;
                        let c = 8 * j + bit;
                        if c <= MAX_CELLS && cnt <= MAX_CELLS {
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

/// `C(m, k)` for `k ≤ m ≤` [`MAX_CELLS`] from the table (0 when `k > m`).
///
/// # Panics
/// If `m` or `k` is past [`MAX_CELLS`].
#[inline]
pub fn cell_binomial(m: usize, k: usize) -> u64 {
    BINOM[m][k]
}

/// `C(m, k)`, exact; 0 when `k > m`.
///
/// # Panics
/// On overflow of `u64` (far above every use here: C(36, 18) ≈ 9.1 · 10⁹).
pub fn binomial(m: u64, k: u64) -> u64 {
    if k > m {
        return 0;
    }
    if m as usize <= MAX_CELLS {
        return BINOM[m as usize][k as usize];
    }
    let k = k.min(m - k);
    let mut r: u128 = 1;
    for i in 0..k as u128 {
        r = r * (m as u128 - i) / (i + 1);
    }
    u64::try_from(r).expect("binomial overflows u64")
}

/// Colex rank of the set `mask` (cells below [`MAX_CELLS`]), a byte at a
/// time: `Σᵢ C(cᵢ, i)` over its cells `c₁ < c₂ < …`.
#[inline]
pub fn colex_rank(mask: u64) -> u64 {
    debug_assert!(mask >> MAX_CELLS == 0, "mask {mask:#x} past the cells");
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

/// The k-set of cells below `m` (≤ [`MAX_CELLS`]) with colex rank
/// `r < C(m, k)`.
#[inline]
pub fn colex_unrank(mut r: u64, k: usize, m: usize) -> u64 {
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

/// `second` renumbered among the cells of `free` (bit j = the j-th cell of
/// `free`, counting from cell 0); `second ⊆ free`.
#[inline]
pub fn compress(second: u64, free: u64) -> u64 {
    // One instruction where the build targets BMI2 (`-C target-cpu=native`
    // on most x86-64 machines since 2013); the same bits either way.
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        // SAFETY: the build enables BMI2, so the instruction exists.
        unsafe { std::arch::x86_64::_pext_u64(second, free) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
    compress_by_bytes(second, free)
}

/// [`compress`] a byte at a time through tables (any target).
#[inline]
pub fn compress_by_bytes(second: u64, free: u64) -> u64 {
    let mut out = 0;
    let mut shift = 0;
    let (mut t, mut f) = (second, free);
    while t != 0 {
        let fb = (f & 0xff) as usize;
        out |= u64::from(PEXT8[fb][(t & 0xff) as usize]) << shift;
        shift += u32::from(POP8[fb]);
        t >>= 8;
        f >>= 8;
    }
    out
}

/// The inverse of [`compress`]: bit j of `packed` goes to the j-th cell of
/// `free`.
#[inline]
pub fn expand(mut packed: u64, free: u64) -> u64 {
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

/// The next larger mask with as many bits (Gosper's hack), or `None` past
/// `limit` bits. The empty set has no successor.
#[inline]
pub fn next_set(x: u64, limit: usize) -> Option<u64> {
    if x == 0 {
        return None;
    }
    let c = x & x.wrapping_neg();
    let r = x + c;
    let y = (((r ^ x) >> 2) / c) | r;
    (y < 1u64 << limit).then_some(y)
}

/// [`Placement::rank`] without the placement: `second_ranks` =
/// `C(cells − a, b)` of the placement's `(a, b)`, `full` the mask of its
/// cells.
#[inline]
pub fn rank_pair(first: u64, second: u64, second_ranks: u64, full: u64) -> u64 {
    debug_assert_eq!(first & second, 0);
    colex_rank(first) * second_ranks + colex_rank(compress(second, !first & full))
}

/// [`rank_pair`] a piece at a time, for placements of few pieces (Dodgem's
/// at most 2 × 5 cars): each first-colour piece on cell c adds `C(c, i)`
/// from the binomial table and removes cell c from the second colour's
/// cells (the bits above it shift down one), and each second-colour piece
/// then adds its `C(c, i)`. Loops of a fixed count and no byte table: no
/// branch to mispredict and nothing to wait for beyond L1.
#[inline]
pub fn rank_pair_sparse(first: u64, second: u64, second_ranks: u64) -> u64 {
    debug_assert_eq!(first & second, 0);
    let mut hi = 0;
    let mut m = first;
    let mut packed = second;
    let mut removed = 0;
    while m != 0 {
        let c = m.trailing_zeros();
        removed += 1;
        hi += BINOM[c as usize][removed];
        // Cell c is now at c − (cells removed below it).
        let low = (1u64 << (c + 1 - removed as u32)) - 1;
        packed = (packed & low) | ((packed >> 1) & !low);
        m &= m - 1;
    }
    let mut lo = 0;
    let mut i = 1;
    while packed != 0 {
        lo += BINOM[packed.trailing_zeros() as usize][i];
        packed &= packed - 1;
        i += 1;
    }
    hi * second_ranks + lo
}

/// [`expand`] for few pieces: bit j of `packed` goes to the j-th cell not
/// in `taken` (below [`MAX_CELLS`]): a free bit is opened at each taken
/// cell, lowest first.
#[inline]
pub fn expand_sparse(mut packed: u64, taken: u64) -> u64 {
    let mut t = taken;
    while t != 0 {
        let low = t & t.wrapping_neg();
        // Bits at or above the taken cell move up one.
        let keep = packed & (low - 1);
        packed = keep | ((packed ^ keep) << 1);
        t &= t - 1;
    }
    packed
}

/// The ranking of the placements of `a` first-colour and `b` second-colour
/// pieces on `cells` cells (module doc): `(first, second)` masks ↔
/// `0 … size − 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    cells: usize,
    a: usize,
    b: usize,
    second_ranks: u64,
    size: u64,
}

impl Placement {
    /// The placements of `a` and `b` pieces on `cells` cells, or `None` if
    /// `a + b > cells` or `cells > MAX_CELLS`.
    pub fn new(cells: usize, a: usize, b: usize) -> Option<Placement> {
        if cells > MAX_CELLS || a + b > cells {
            return None;
        }
        Some(Placement {
            cells,
            a,
            b,
            second_ranks: BINOM[cells - a][b],
            size: BINOM[cells][a] * BINOM[cells - a][b],
        })
    }

    /// Cells.
    pub fn cells(&self) -> usize {
        self.cells
    }
    /// First-colour pieces.
    pub fn a(&self) -> usize {
        self.a
    }
    /// Second-colour pieces.
    pub fn b(&self) -> usize {
        self.b
    }
    /// Placements: `C(cells, a) · C(cells − a, b)`.
    pub fn size(&self) -> u64 {
        self.size
    }
    /// `C(cells, a)`: blocks (first-colour sets).
    pub fn first_ranks(&self) -> u64 {
        self.size / self.second_ranks
    }
    /// `C(cells − a, b)`: ranks per first-colour set (the block length).
    pub fn second_ranks(&self) -> u64 {
        self.second_ranks
    }
    /// The mask of the cells.
    pub fn full(&self) -> u64 {
        (1u64 << self.cells) - 1
    }

    /// The rank of `(first, second)`, which must hold `a` and `b` cells,
    /// disjoint, below `cells` (checked in debug builds only).
    #[inline]
    pub fn rank(&self, first: u64, second: u64) -> u64 {
        debug_assert_eq!(
            (first.count_ones() as usize, second.count_ones() as usize),
            (self.a, self.b)
        );
        debug_assert_eq!((first | second) & !self.full(), 0);
        rank_pair(first, second, self.second_ranks, self.full())
    }

    /// The `(first, second)` masks of rank `r`.
    ///
    /// # Panics
    /// If `r ≥ size()`.
    #[inline]
    pub fn unrank(&self, r: u64) -> (u64, u64) {
        assert!(r < self.size, "rank {r} of {} placements", self.size);
        let first = colex_unrank(r / self.second_ranks, self.a, self.cells);
        let second = expand(
            colex_unrank(r % self.second_ranks, self.b, self.cells - self.a),
            !first & self.full(),
        );
        (first, second)
    }

    /// The placements of ranks `r`, `r + 1`, … in rank order, cheaper than
    /// unranking each (`r = 0` for all of them; `r = size()` for none).
    ///
    /// # Panics
    /// If `r > size()`.
    pub fn iter_from(&self, r: u64) -> Placements {
        assert!(r <= self.size, "rank {r} of {} placements", self.size);
        if r == self.size {
            return Placements {
                cells: self.cells,
                b: self.b,
                first: 0,
                free: 0,
                packed: 0,
                done: true,
            };
        }
        let first = colex_unrank(r / self.second_ranks, self.a, self.cells);
        Placements {
            cells: self.cells,
            b: self.b,
            first,
            free: !first & self.full(),
            packed: colex_unrank(r % self.second_ranks, self.b, self.cells - self.a),
            done: false,
        }
    }
}

/// The placements of a [`Placement`] in rank order, as `(first, second)`
/// masks ([`Placement::iter_from`]).
#[derive(Debug, Clone)]
pub struct Placements {
    cells: usize,
    b: usize,
    first: u64,
    free: u64,
    packed: u64,
    done: bool,
}

impl Iterator for Placements {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.done {
            return None;
        }
        let out = (self.first, expand(self.packed, self.free));
        let a = self.first.count_ones() as usize;
        if let Some(p) = next_set(self.packed, self.cells - a) {
            self.packed = p;
        } else if let Some(m) = next_set(self.first, self.cells) {
            self.first = m;
            self.free = !m & ((1u64 << self.cells) - 1);
            self.packed = (1u64 << self.b) - 1;
        } else {
            self.done = true;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Colex rank a bit at a time (the definition).
    fn colex_rank_by_bits(mut mask: u64) -> u64 {
        let mut r = 0;
        let mut i = 1;
        while mask != 0 {
            r += binomial(u64::from(mask.trailing_zeros()), i);
            mask &= mask - 1;
            i += 1;
        }
        r
    }

    /// [`compress`] a bit at a time (the definition).
    fn compress_by_bits(second: u64, free: u64) -> u64 {
        let mut out = 0;
        let mut m = second;
        while m != 0 {
            let c = m.trailing_zeros();
            out |= 1 << (free & ((1u64 << c) - 1)).count_ones();
            m &= m - 1;
        }
        out
    }

    /// A small deterministic generator (xorshift64*).
    fn next(s: &mut u64) -> u64 {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn byte_tables_agree_with_the_definitions() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let cells = (1u64 << MAX_CELLS) - 1;
        for _ in 0..200_000 {
            let mask = next(&mut s) & cells;
            let free = next(&mut s) & cells;
            assert_eq!(colex_rank(mask), colex_rank_by_bits(mask));
            assert_eq!(
                compress(mask & free, free),
                compress_by_bits(mask & free, free)
            );
            assert_eq!(
                compress_by_bytes(mask & free, free),
                compress_by_bits(mask & free, free)
            );
            assert_eq!(expand(compress(mask & free, free), free), mask & free);
        }
        for mask in 0..1u64 << 16 {
            assert_eq!(colex_rank(mask), colex_rank_by_bits(mask));
        }
    }

    /// The piece-at-a-time rank and expansion equal the byte tables' on
    /// random placements of up to 36 cells (sparse and dense ones).
    #[test]
    fn sparse_rank_and_expand_agree_with_the_byte_tables() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let cells = (1u64 << MAX_CELLS) - 1;
        for round in 0..200_000 {
            let (mut first, mut second) = (next(&mut s) & cells, next(&mut s) & cells);
            if round % 2 == 0 {
                // Few pieces, as in Dodgem.
                first &= next(&mut s) & next(&mut s);
                second &= next(&mut s) & next(&mut s);
            }
            second &= !first;
            let ranks = 1 << 40;
            assert_eq!(
                rank_pair_sparse(first, second, ranks),
                rank_pair(first, second, ranks, cells)
            );
            let packed = compress(second, !first & cells);
            assert_eq!(expand_sparse(packed, first), second);
            assert_eq!(expand_sparse(packed, first), expand(packed, !first & cells));
        }
    }

    #[test]
    fn binomials() {
        assert_eq!(binomial(25, 12), 5_200_300);
        assert_eq!(binomial(36, 18), 9_075_135_300);
        assert_eq!(binomial(3, 5), 0);
        assert_eq!(binomial(60, 30), 118_264_581_564_861_424);
        for m in 0..=MAX_CELLS as u64 {
            for k in 0..=m {
                assert_eq!(binomial(m, k), binomial(m, m - k));
            }
        }
    }

    /// Every placement of small boards has one rank, in the numeric order
    /// of (first, compressed second), and iteration follows rank order.
    #[test]
    fn rank_is_a_bijection_in_mask_order() {
        for cells in [0, 1, 4, 9, 12] {
            let mut total = 0;
            for a in 0..=cells {
                for b in 0..=cells - a {
                    let p = Placement::new(cells, a, b).unwrap();
                    let mut it = p.iter_from(0);
                    let mut prev = None;
                    for r in 0..p.size() {
                        let (f, s) = p.unrank(r);
                        assert_eq!(it.next(), Some((f, s)));
                        assert_eq!(f & s, 0);
                        assert_eq!((f | s) >> cells, 0);
                        assert_eq!((f.count_ones(), s.count_ones()), (a as u32, b as u32));
                        assert_eq!(p.rank(f, s), r);
                        let key = (f, compress(s, !f & p.full()));
                        assert!(prev < Some(key), "{cells} cells ({a}, {b}) rank {r}");
                        prev = Some(key);
                    }
                    assert_eq!(it.next(), None);
                    for start in [0, p.size() / 2, p.size()] {
                        let got: Vec<_> = p.iter_from(start).take(20).collect();
                        let want: Vec<_> = (start..p.size().min(start + 20))
                            .map(|r| p.unrank(r))
                            .collect();
                        assert_eq!(got, want);
                    }
                    total += p.size();
                }
            }
            assert_eq!(total, 3u64.pow(cells as u32), "{cells} cells: 3^cells");
        }
        assert!(Placement::new(9, 5, 5).is_none());
        assert!(Placement::new(MAX_CELLS + 1, 0, 0).is_none());
    }

    #[test]
    fn random_ranks_of_36_cells_come_back() {
        let mut s = 7u64;
        for (a, b) in [(0, 0), (5, 5), (18, 18), (12, 7), (36, 0), (0, 36)] {
            let p = Placement::new(36, a, b).unwrap();
            for _ in 0..500 {
                let r = next(&mut s) % p.size();
                let (f, sec) = p.unrank(r);
                assert_eq!(p.rank(f, sec), r, "({a}, {b}) rank {r}");
            }
            let last = p.unrank(p.size() - 1);
            assert_eq!(p.rank(last.0, last.1), p.size() - 1);
        }
    }
}
