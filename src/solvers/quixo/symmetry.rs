//! The 8 symmetries of the square (the dihedral group D4) on boards and
//! moves.
//!
//! Each symmetry permutes the cells, maps the border to the border, rows and
//! columns to rows or columns, the two diagonals to the diagonals, and so
//! maps every move to a move: the image of "take s, push in at d" is "take
//! T(s), push in at T(d)". Hence `play(T(b), T(m)) = T(play(b, m))` and
//! `outcome(T(b)) = outcome(b)`: values are invariant.

use super::index::Layer;
use super::{Board, Move, Rules};

/// One of the 8 symmetries of the square, as a map of (x, y) with files
/// x = 0 … n−1 left → right and ranks y = 0 … n−1 bottom → top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symmetry {
    /// (x, y) ↦ (x, y).
    Identity,
    /// A quarter turn anticlockwise: (x, y) ↦ (n−1−y, x).
    Rotate90,
    /// A half turn: (x, y) ↦ (n−1−x, n−1−y).
    Rotate180,
    /// A quarter turn clockwise: (x, y) ↦ (y, n−1−x).
    Rotate270,
    /// Mirror left ↔ right: (x, y) ↦ (n−1−x, y).
    MirrorFiles,
    /// Mirror top ↔ bottom: (x, y) ↦ (x, n−1−y).
    MirrorRanks,
    /// Reflection in the diagonal a1–(n)(n): (x, y) ↦ (y, x).
    Diagonal,
    /// Reflection in the other diagonal: (x, y) ↦ (n−1−y, n−1−x).
    AntiDiagonal,
}

impl Symmetry {
    /// All 8, in index order (identity first).
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Rotate90,
        Symmetry::Rotate180,
        Symmetry::Rotate270,
        Symmetry::MirrorFiles,
        Symmetry::MirrorRanks,
        Symmetry::Diagonal,
        Symmetry::AntiDiagonal,
    ];

    /// Its position in [`Symmetry::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The image of (x, y) on the n×n board.
    pub fn map(self, n: usize, x: usize, y: usize) -> (usize, usize) {
        let m = n - 1;
        match self {
            Symmetry::Identity => (x, y),
            Symmetry::Rotate90 => (m - y, x),
            Symmetry::Rotate180 => (m - x, m - y),
            Symmetry::Rotate270 => (y, m - x),
            Symmetry::MirrorFiles => (m - x, y),
            Symmetry::MirrorRanks => (x, m - y),
            Symmetry::Diagonal => (y, x),
            Symmetry::AntiDiagonal => (m - y, m - x),
        }
    }

    /// The symmetry undoing this one (the quarter turns swap; the rest are
    /// their own inverses).
    pub fn inverse(self) -> Symmetry {
        match self {
            Symmetry::Rotate90 => Symmetry::Rotate270,
            Symmetry::Rotate270 => Symmetry::Rotate90,
            s => s,
        }
    }
}

/// `maps[s][c]` = the cell symmetry `s` sends cell `c` to (cells ≥ n² map
/// to themselves).
pub(super) fn cell_maps(n: usize) -> [[u8; 32]; 8] {
    let mut maps = [[0u8; 32]; 8];
    for s in Symmetry::ALL {
        for (c, slot) in maps[s.index()].iter_mut().enumerate() {
            *slot = if c < n * n {
                let (x, y) = s.map(n, c % n, c / n);
                (x + n * y) as u8
            } else {
                c as u8
            };
        }
    }
    maps
}

/// The canonical form of a board under the 8 symmetries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Canonical {
    /// The image of least rank in the board's layer.
    pub board: Board,
    /// Its rank in the layer ([`Layer::rank`]).
    pub rank: u64,
    /// The first symmetry (in [`Symmetry::ALL`] order) taking the board to
    /// `board`.
    pub symmetry: Symmetry,
}

impl Rules {
    /// The image of a cell mask under `s`.
    #[inline]
    pub fn transform_mask(&self, mask: u32, s: Symmetry) -> u32 {
        let p = &self.perm[s.index()];
        let mut out = 0;
        let mut m = mask;
        while m != 0 {
            out |= 1 << p[m.trailing_zeros() as usize];
            m &= m - 1;
        }
        out
    }

    /// The image of a board under `s` (both masks mapped; the player to
    /// move stays).
    #[inline]
    pub fn transform(&self, b: Board, s: Symmetry) -> Board {
        Board {
            mine: self.transform_mask(b.mine, s),
            theirs: self.transform_mask(b.theirs, s),
        }
    }

    /// The image of a move under `s`: source and insertion cell mapped.
    ///
    /// # Panics
    /// If `mv` is not a move of this board size.
    pub fn transform_move(&self, mv: Move, s: Symmetry) -> Move {
        let p = &self.perm[s.index()];
        let dest = self.dest_cell(mv);
        self.move_between(p[mv.source as usize], p[dest as usize])
            .expect("a symmetry maps moves to moves")
    }

    /// The canonical form of `b`: the least rank in its layer among its 8
    /// images, the image and the first symmetry giving it. Boards with the
    /// same canonical form have the same value.
    pub fn canonical(&self, b: Board) -> Canonical {
        let layer = Layer::of(self.n(), b).expect("a board of this size");
        let mut best = Canonical {
            board: b,
            rank: layer.rank(b),
            symmetry: Symmetry::Identity,
        };
        for s in &Symmetry::ALL[1..] {
            let t = self.transform(b, *s);
            let r = layer.rank(t);
            if r < best.rank {
                best = Canonical {
                    board: t,
                    rank: r,
                    symmetry: *s,
                };
            }
        }
        best
    }
}

/// The 8 symmetries as table lookups on cell masks (one 256-entry table
/// per byte of the mask and symmetry: 32 KiB), for the engine's symmetry
/// reduction.
#[derive(Debug, Clone)]
pub struct MaskMaps {
    tables: Box<[[[u32; 256]; 4]; 8]>,
    /// Bytes of a mask that can hold cells: ⌈n² / 8⌉.
    bytes: usize,
}

impl MaskMaps {
    /// The tables of the board size of `rules`.
    pub fn new(rules: &Rules) -> MaskMaps {
        let mut tables = Box::new([[[0u32; 256]; 4]; 8]);
        for s in Symmetry::ALL {
            for (chunk, table) in tables[s.index()].iter_mut().enumerate() {
                for (bits, slot) in table.iter_mut().enumerate() {
                    let mask = (bits as u32) << (8 * chunk) & rules.full_mask();
                    *slot = rules.transform_mask(mask, s);
                }
            }
        }
        MaskMaps {
            tables,
            bytes: rules.cells().div_ceil(8),
        }
    }

    /// The image of `mask` under symmetry number `s` ([`Symmetry::index`]).
    #[inline]
    pub fn map(&self, s: usize, mask: u32) -> u32 {
        let t = &self.tables[s];
        let low = t[0][(mask & 255) as usize] | t[1][(mask >> 8 & 255) as usize];
        if self.bytes <= 2 {
            low
        } else {
            low | t[2][(mask >> 16 & 255) as usize] | t[3][(mask >> 24 & 255) as usize]
        }
    }

    /// The canonical image of `b`: of its 8 images, the one with the least
    /// `(mine, theirs)` masks (compared as the number `mine · 2³² +
    /// theirs`), and how many of the 8 symmetries fix `b` (its
    /// stabiliser: 1, 2, 4 or 8). Not the least rank ([`Rules::canonical`]):
    /// this one needs no ranking.
    #[inline]
    pub fn canonical(&self, b: Board) -> (Board, u32) {
        // The `mine` masks first; `theirs` only where `mine` ties with the
        // least or with the board's own.
        let mut mine = [0u32; 8];
        mine[0] = b.mine;
        let mut least = b.mine;
        for (s, m) in mine.iter_mut().enumerate().skip(1) {
            *m = self.map(s, b.mine);
            least = least.min(*m);
        }
        let mut best = u32::MAX;
        let mut fixed = 0;
        for (s, &m) in mine.iter().enumerate() {
            if m != least && m != b.mine {
                continue;
            }
            let t = if s == 0 {
                b.theirs
            } else {
                self.map(s, b.theirs)
            };
            if m == least {
                best = best.min(t);
            }
            fixed += u32::from(m == b.mine && t == b.theirs);
        }
        (Board::new(least, best), fixed)
    }

    /// Whether `b` is its own [canonical image](MaskMaps::canonical)
    /// (stops at the first smaller image).
    #[inline]
    pub fn is_canonical(&self, b: Board) -> bool {
        for s in 1..8 {
            let m = self.map(s, b.mine);
            if m < b.mine || (m == b.mine && self.map(s, b.theirs) < b.theirs) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Rng, all_boards};
    use super::*;

    #[test]
    fn symmetries_form_the_group_d4() {
        for n in 2..=5 {
            let r = Rules::new(n).unwrap();
            let full = r.full_mask();
            let mut images = std::collections::HashSet::new();
            // A board with no symmetry of its own has 8 distinct images.
            let b = Board::new(0b11, 1 << n); // a1, b1 mine; a2 theirs
            for s in Symmetry::ALL {
                assert_eq!(r.transform_mask(full, s), full);
                assert_eq!(r.transform_mask(r.border_mask(), s), r.border_mask());
                let mut lines: Vec<u32> =
                    r.lines().iter().map(|&l| r.transform_mask(l, s)).collect();
                let mut want = r.lines().to_vec();
                lines.sort();
                want.sort();
                assert_eq!(lines, want, "{s:?} maps lines to lines");
                let t = r.transform(b, s);
                assert_eq!(r.transform(t, s.inverse()), b);
                images.insert(t);
                // Closed under composition.
                for s2 in Symmetry::ALL {
                    let tt = r.transform(t, s2);
                    assert!(Symmetry::ALL.iter().any(|&s3| r.transform(b, s3) == tt));
                }
            }
            if n >= 3 {
                assert_eq!(images.len(), 8);
            }
        }
    }

    #[test]
    fn moves_commute_with_symmetry() {
        let mut rng = Rng(4242);
        for n in 2..=5 {
            let r = Rules::new(n).unwrap();
            for _ in 0..1000 {
                let b = rng.board(&r);
                for s in Symmetry::ALL {
                    let t = r.transform(b, s);
                    assert_eq!(r.outcome(t), r.outcome(b));
                    // Move by move.
                    for (mv, c) in r.children(b) {
                        let tm = r.transform_move(mv, s);
                        assert_eq!(
                            r.play(t, tm).unwrap(),
                            r.transform(c, s),
                            "{n} {s:?} {mv:?}"
                        );
                    }
                    // As multisets of children.
                    let mut got: Vec<Board> = r.children(t).map(|(_, c)| c).collect();
                    let mut want: Vec<Board> =
                        r.children(b).map(|(_, c)| r.transform(c, s)).collect();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want);
                    // And predecessors.
                    let mut got: Vec<Board> = r.predecessors(t).map(|(p, _)| p).collect();
                    let mut want: Vec<Board> =
                        r.predecessors(b).map(|(p, _)| r.transform(p, s)).collect();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn canonical_is_least_rank_and_shared_by_all_images() {
        let mut rng = Rng(99);
        for n in 2..=5 {
            let r = Rules::new(n).unwrap();
            for _ in 0..500 {
                let b = rng.board(&r);
                let c = r.canonical(b);
                assert_eq!(r.transform(b, c.symmetry), c.board);
                let layer = Layer::of(n, b).unwrap();
                assert_eq!(layer.rank(c.board), c.rank);
                for s in Symmetry::ALL {
                    let t = r.transform(b, s);
                    assert!(layer.rank(t) >= c.rank);
                    let ct = r.canonical(t);
                    assert_eq!((ct.board, ct.rank), (c.board, c.rank));
                }
            }
        }
    }

    #[test]
    fn mask_tables_agree_with_the_cell_maps_and_canonical_is_shared() {
        let mut rng = Rng(7);
        for n in 2..=5 {
            let r = Rules::new(n).unwrap();
            let m = MaskMaps::new(&r);
            for _ in 0..2000 {
                let b = rng.board(&r);
                let images: Vec<Board> = Symmetry::ALL.iter().map(|&s| r.transform(b, s)).collect();
                for s in Symmetry::ALL {
                    assert_eq!(m.map(s.index(), b.mine), images[s.index()].mine);
                    assert_eq!(m.map(s.index(), b.theirs), images[s.index()].theirs);
                }
                let (c, k) = m.canonical(b);
                assert_eq!(m.is_canonical(b), c == b);
                assert!(images.contains(&c));
                assert_eq!(k as usize, images.iter().filter(|&&t| t == b).count());
                for &t in &images {
                    assert_eq!(m.canonical(t).0, c);
                    assert!((c.mine, c.theirs) <= (t.mine, t.theirs));
                }
            }
        }
    }

    #[test]
    fn counts_of_3x3_symmetry_classes() {
        // Burnside over all 3^9 boards: classes = (1/8) Σ_s 3^(cycles of s).
        let r = Rules::new(3).unwrap();
        let mut classes = std::collections::HashSet::new();
        for b in all_boards(3) {
            classes.insert(r.canonical(b).board);
        }
        // Cycles on 3×3 cells: identity 9, quarter turns 3, half turn 5,
        // the four reflections 6: (3^9 + 2·3^3 + 3^5 + 4·3^6) / 8 = 2,862.
        assert_eq!(classes.len(), (19_683 + 2 * 27 + 243 + 4 * 729) / 8);
        assert_eq!(classes.len(), 2_862);
    }
}
