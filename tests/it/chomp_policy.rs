//! Seed 003's policy table: the exact odds of `solvers::chomp::policy` against
//! simulated games (10⁵ per bar and policy, seeded), played on
//! [`Staircase`] values with the policies written out again here.

use gametables::solvers::chomp::policy::{Policy, bar_odds, policy_table};
use gametables::solvers::chomp::{Bite, ChompBox, PPositions, Staircase};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

const GAMES: u32 = 100_000;

fn pick<'a>(rng: &mut StdRng, v: &'a [Bite]) -> &'a Bite {
    &v[rng.random_range(0..v.len())]
}

/// One game from the full `rows × cols` bar; true if the first player wins.
fn play(
    rows: u32,
    cols: u32,
    policy: Policy,
    bx: &ChompBox,
    p: &PPositions,
    rng: &mut StdRng,
) -> bool {
    let mut s = Staircase::rectangle(rows, cols).unwrap();
    let mut first_to_move = true;
    loop {
        let bites = s.bites();
        if bites.is_empty() {
            // Whoever is to move at the poison alone loses.
            return !first_to_move;
        }
        let choice: Vec<Bite> = if !first_to_move {
            bites
        } else {
            match policy {
                Policy::Random => bites,
                Policy::Perfect => {
                    let w: Vec<Bite> = bites
                        .iter()
                        .copied()
                        .filter(|&b| p.is_p(bx.rank_of(&s.after(b).unwrap()).unwrap()))
                        .collect();
                    if w.is_empty() { bites } else { w }
                }
                Policy::FarCorner => {
                    // Farthest square from the poison: largest row + col.
                    let far = bites.iter().map(|b| b.row + b.col).max().unwrap();
                    bites.into_iter().filter(|b| b.row + b.col == far).collect()
                }
                Policy::Biggest => {
                    let left = |b: &Bite| s.after(*b).unwrap().squares();
                    let fewest = bites.iter().map(left).min().unwrap();
                    bites
                        .iter()
                        .copied()
                        .filter(|b| left(b) == fewest)
                        .collect()
                }
            }
        };
        let b = *pick(rng, &choice);
        s = s.after(b).unwrap();
        first_to_move = !first_to_move;
    }
}

#[test]
fn exact_odds_agree_with_100000_simulated_games_per_bar_and_policy_within_one_point() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0003);
    for (rows, cols) in [(2, 5), (3, 3), (5, 7), (8, 8)] {
        let odds = bar_odds(rows, cols).unwrap();
        let bx = ChompBox::new(rows as usize, cols as usize).unwrap();
        let p = bx.solve();
        for policy in Policy::ALL {
            let wins = (0..GAMES)
                .filter(|_| play(rows, cols, policy, &bx, &p, &mut rng))
                .count();
            let sim = wins as f64 / f64::from(GAMES);
            let exact = odds.of(policy);
            // One percentage point is more than six standard errors
            // (√(¼ / 10⁵) ≈ 0.16 points).
            assert!(
                (sim - exact).abs() < 0.01,
                "{rows}x{cols} {policy:?}: simulated {sim} vs exact {exact}"
            );
        }
    }
}

#[test]
fn seed_003_sampled_counts_are_within_sampling_error_of_the_exact_expectation() {
    // Seed 003 played five games per bar 2×2 … 8×8 (245 in all) and counted
    // perfect 245, far corner 132, biggest 123, random 117 wins. Those are
    // samples: each must lie within four standard deviations of our exact
    // expectation (not a claim that must match exactly).
    let table = policy_table(2, 8).unwrap();
    assert_eq!(table.len(), 49);
    for (policy, sampled) in [
        (Policy::Perfect, 245.0),
        (Policy::FarCorner, 132.0),
        (Policy::Biggest, 123.0),
        (Policy::Random, 117.0),
    ] {
        let mean: f64 = table.iter().map(|t| 5.0 * t.of(policy)).sum();
        let var: f64 = table
            .iter()
            .map(|t| 5.0 * t.of(policy) * (1.0 - t.of(policy)))
            .sum();
        assert!(
            (sampled - mean).abs() <= 4.0 * var.sqrt() + 1e-9,
            "{policy:?}: sampled {sampled}, expected {mean} ± {}",
            var.sqrt()
        );
    }
}
