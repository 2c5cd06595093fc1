//! Chomp census by number of squares (OEIS A112470–A112473; BRIEF.md, Chomp:
//! census; seed 000): published numbers and an independent naive search.

use std::collections::HashMap;

use gametables::solvers::chomp::Staircase;
use gametables::solvers::chomp::census::{PartitionRanks, SizeCounts, census};

/// OEIS data sections as published (copied from
/// `shared/data/literature/oeis-terms.txt`; https://oeis.org/A112470 …).
/// A112470 has offset 0 (a(0) = 0, the empty board), A112472/3 offset 1.
const A112470: &[u64] = &[
    0, 1, 0, 1, 0, 3, 0, 3, 2, 5, 2, 3, 10, 9, 10, 9, 14, 17, 14, 23, 42, 45, 28, 55, 74, 67, 96,
    107, 136, 177, 220, 241, 302, 315, 422, 421, 542, 641, 812, 877, 1022, 1221, 1490, 1655, 1970,
    2173, 2754, 3117, 3542, 3993, 4976, 5485, 6508, 7477, 8758, 9859, 11530,
];
/// A112471, offset 0 (a(0) = 1 by OEIS convention).
const A112471: &[u64] = &[
    1, 0, 2, 2, 5, 4, 11, 12, 20, 25, 40, 53, 67, 92, 125, 167, 217, 280, 371, 467, 585, 747, 974,
    1200, 1501, 1891, 2340, 2903, 3582, 4388, 5384, 6601, 8047, 9828, 11888, 14462, 17435, 20996,
    25203, 30308, 36316,
];
/// A112472, offset 1: N-positions with exactly one winning move.
const A112472: &[u64] = &[
    0, 2, 2, 5, 4, 10, 10, 18, 21, 28, 44, 56, 70, 85, 115, 150, 185, 250, 317, 384, 472, 589, 757,
    931, 1139, 1416, 1708, 2129, 2565, 3082, 3690, 4449, 5325, 6392, 7625, 9255, 10951, 12897,
    15216, 18172,
];
/// A112473, offset 1: N-positions with several winning moves.
const A112473: &[u64] = &[
    0, 0, 0, 0, 0, 1, 2, 2, 4, 12, 9, 11, 22, 40, 52, 67, 95, 121, 150, 201, 275, 385, 443, 570,
    752, 924, 1195, 1453, 1823, 2302, 2911, 3598, 4503, 5496, 6837, 8180, 10045, 12306, 15092,
    18144,
];

fn size(c: &[SizeCounts], s: usize) -> SizeCounts {
    c[s - 1]
}

#[test]
fn oeis_a112470_to_a112473_match() {
    let (c, _) = census(56);
    for (n, &a) in A112470.iter().enumerate().skip(1) {
        assert_eq!(size(&c, n).p, a, "A112470({n})");
    }
    for (n, &a) in A112471.iter().enumerate().skip(1) {
        let s = size(&c, n);
        assert_eq!(s.one + s.several, a, "A112471({n})");
    }
    for (i, (&one, &several)) in A112472.iter().zip(A112473).enumerate() {
        let s = size(&c, i + 1);
        assert_eq!((s.one, s.several), (one, several), "A112472/3({})", i + 1);
    }
}

/// Seed 000: "s ≤ 60 has 6,639,348 positions"; at 41 "several" first exceeds
/// "one" (21,908 vs 21,454; at 40: 18,144 vs 18,172); s = 60: P 20,106, one
/// 401,905, several 544,456.
#[test]
fn seed_000_census_to_60() {
    let (c, _) = census(60);
    let total: u64 = c.iter().map(SizeCounts::total).sum();
    assert_eq!(total, 6_639_348);
    let first = (1..=60).find(|&s| size(&c, s).several > size(&c, s).one);
    assert_eq!(first, Some(41));
    assert_eq!((size(&c, 41).several, size(&c, 41).one), (21_908, 21_454));
    assert_eq!((size(&c, 40).several, size(&c, 40).one), (18_144, 18_172));
    assert_eq!(
        size(&c, 60),
        SizeCounts {
            p: 20_106,
            one: 401_905,
            several: 544_456
        }
    );
}

/// Every partition of `s`, generated directly (no ranking involved).
fn partitions(s: u32, cap: u32, prefix: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
    if s == 0 {
        out.push(prefix.clone());
        return;
    }
    for r in 1..=cap.min(s) {
        prefix.push(r);
        partitions(s - r, r, prefix, out);
        prefix.pop();
    }
}

/// Number of winning bites by plain memoized game-tree search over
/// [`Staircase::bites`] / [`Staircase::after`].
fn winning_bites(s: &Staircase, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    if let Some(&w) = memo.get(s.rows()) {
        return w;
    }
    let w = s
        .bites()
        .into_iter()
        .filter(|&b| winning_bites(&s.after(b).expect("legal"), memo) == 0)
        .count() as u32;
    memo.insert(s.rows().to_vec(), w);
    w
}

#[test]
fn naive_search_agrees_up_to_25_squares() {
    let (c, bits) = census(25);
    let pr = PartitionRanks::new(25);
    let mut memo = HashMap::new();
    for s in 1..=25u32 {
        let mut all = Vec::new();
        partitions(s, s, &mut Vec::new(), &mut all);
        assert_eq!(all.len() as u64, pr.count(s));
        let mut naive = SizeCounts::default();
        for rows in &all {
            let w = winning_bites(&Staircase::new(rows).expect("partition"), &mut memo);
            match w {
                0 => naive.p += 1,
                1 => naive.one += 1,
                _ => naive.several += 1,
            }
            let x = pr.rank(rows);
            let is_p = bits[s as usize - 1][(x / 64) as usize] >> (x % 64) & 1 == 1;
            assert_eq!(is_p, w == 0, "{rows:?} (rank {x})");
        }
        assert_eq!(naive, size(&c, s as usize), "size {s}");
    }
}
