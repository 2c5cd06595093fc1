//! Chomp Sprague–Grundy values (seed 004; BRIEF.md, Chomp: Grundy values):
//! a naive memoized mex search, the box solver, and the 3×n rectangles.

use std::collections::HashMap;

use gametables::solvers::chomp::grundy::grundy_values;
use gametables::solvers::chomp::{ChompBox, Staircase};

/// Seed 004's method: memoized recursion, value = mex of the children's
/// values, over [`Staircase::bites`] / [`Staircase::after`] (no ranks).
fn naive(s: &Staircase, memo: &mut HashMap<Vec<u32>, u32>) -> u32 {
    if let Some(&g) = memo.get(s.rows()) {
        return g;
    }
    let children: Vec<u32> = s
        .bites()
        .into_iter()
        .map(|b| naive(&s.after(b).expect("legal"), memo))
        .collect();
    let g = (0..).find(|v| !children.contains(v)).expect("mex exists");
    memo.insert(s.rows().to_vec(), g);
    g
}

#[test]
fn naive_mex_search_agrees_on_every_position_up_to_4x5() {
    let mut memo = HashMap::new();
    for (m, n) in (1..=4)
        .flat_map(|m| (1..=5).map(move |n| (m, n)))
        .chain([(5, 4)])
    {
        let b = ChompBox::new(m, n).unwrap();
        let g = grundy_values(&b);
        let mut rows = vec![0u32; m];
        for x in 1..b.len() {
            b.unrank(x, &mut rows);
            let s = Staircase::new(&rows).unwrap();
            assert_eq!(
                g[x as usize],
                naive(&s, &mut memo),
                "{m}x{n} box, position {s}"
            );
        }
    }
}

/// BRIEF.md: P-positions are exactly value 0; the box solver decides P on
/// its own. Seed 003: the 10×10 box has 2,612 P-positions.
#[test]
fn value_zero_exactly_on_box_solver_p_positions_10x10() {
    let b = ChompBox::new(10, 10).unwrap();
    let g = grundy_values(&b);
    let p = b.solve();
    let mut zeros = 0;
    for x in 1..b.len() {
        assert_eq!(g[x as usize] == 0, p.is_p(x), "rank {x}");
        zeros += u64::from(g[x as usize] == 0);
    }
    assert_eq!(zeros, 2612);
}

/// 3×n for n ≤ 200 from one 3×200 box: every rectangle is an N-position
/// (strategy stealing), and the values agree with the separately solved
/// small boxes 3×n (n ≤ 12).
#[test]
fn three_by_n_up_to_200() {
    let b = ChompBox::new(3, 200).unwrap();
    let g = grundy_values(&b);
    let value = |b: &ChompBox, g: &[u32], n: u32| {
        g[b.rank_of(&Staircase::rectangle(3, n).unwrap()).unwrap() as usize]
    };
    for n in 1..=200 {
        assert_ne!(value(&b, &g, n), 0, "3x{n}");
    }
    for n in 1..=12 {
        let small = ChompBox::new(3, n as usize).unwrap();
        assert_eq!(
            value(&b, &g, n),
            value(&small, &grundy_values(&small), n),
            "3x{n}"
        );
    }
    // 3×1 is a column of three squares: a Nim heap of 2.
    assert_eq!(value(&b, &g, 1), 2);
}
