//! The `chomp-boxes` report's policy section: the exact odds of the four
//! policies of the day-72 Chomp article against a random opponent, beside the
//! article's five sampled games per bar ([`crate::solvers::chomp::policy`]).
//!
//! A comparison, not a claim: the article's counts are samples, so they are
//! shown with the exact expectation and its standard deviation, never
//! required to match.

use std::fmt::Write as _;

use crate::pipeline::error::{Error, Result};
use crate::solvers::chomp::policy::{BarOdds, Policy, policy_table};

/// Smallest and largest side of the article's bars (2×2 … 8×8).
pub const SIDES: (u32, u32) = (2, 8);

/// Games the article played per bar.
pub const GAMES_PER_BAR: u32 = 5;

/// The article's sampled wins out of 245 games, per policy in
/// [`Policy::ALL`] order ("policy, every bar 2×2 to 8×8, five games each").
pub const SAMPLED_WINS: [u32; 4] = [245, 132, 123, 117];

/// Expected wins and their standard deviation over the article's games
/// (`GAMES_PER_BAR` independent games on each bar).
pub fn expected_wins(table: &[BarOdds], policy: Policy) -> (f64, f64) {
    let g = f64::from(GAMES_PER_BAR);
    let mean = table.iter().map(|t| g * t.of(policy)).sum();
    let var: f64 = table
        .iter()
        .map(|t| g * t.of(policy) * (1.0 - t.of(policy)))
        .sum();
    (mean, var.sqrt())
}

/// The markdown section for `report.md`.
///
/// # Errors
/// Never for the article's bars (kept fallible for the solver's box limits).
pub fn report_section() -> Result<String> {
    let (lo, hi) = SIDES;
    let table = policy_table(lo, hi).map_err(|e| Error::job("chomp-boxes", e.to_string()))?;
    let games = GAMES_PER_BAR * table.len() as u32;
    let mut md = String::new();
    let _ = write!(
        md,
        "## Policies against a random opponent, exactly\n\n\
         The day-72 Chomp article of the “game from zero” series (dev48.infy.uk) played five games \
         on every bar {lo}×{lo} … {hi}×{hi} ({n} bars, {games} games) for each of four first-player \
         policies against an opponent biting uniformly at random. Below is the exact probability \
         that each policy wins, by dynamic programming over every staircase of each bar (no \
         sampling), and what it gives for {games} games. The article's counts are samples: this is \
         a comparison, not a claim that must match.\n\n\
         Policies as computed here (the article names them; it does not define them on every \
         position, so these definitions are ours):\n\n\
         - **perfect play**: a winning bite (any one: each leads to a P-position, so the odds do \
           not depend on which); in a P-position, which it never faces, a random bite.\n\
         - **far corner** (the strategy-stealing argument's move): bite the square farthest from \
           the poison, largest row + column (always a single corner square; on a full bar the \
           square (m−1, n−1)); ties uniformly at random.\n\
         - **biggest bite**: the bite that removes the most squares (always (0, 1) or (1, 0), \
           leaving the shorter of the poison row and column); ties uniformly at random. Its odds \
           are 1 − 1/(min(m, n) − 1).\n\
         - **random**: a uniformly random legal bite; the opponent plays the same way.\n\n\
         Ties are broken at random, so m×n and n×m have the same odds.\n\n\
         | policy | article: wins of {games} (sampled) | exact expected wins of {games} (± 1 s.d.) | exact mean win probability |\n\
         |---|---|---|---|\n",
        n = table.len(),
    );
    for (k, &policy) in Policy::ALL.iter().enumerate() {
        let (mean, sd) = expected_wins(&table, policy);
        let sampled = SAMPLED_WINS[k];
        let _ = writeln!(
            md,
            "| {} | {sampled} / {games} ({:.1}%) | {mean:.2} ± {sd:.2} | {:.4}% |",
            policy.describe(),
            100.0 * f64::from(sampled) / f64::from(games),
            100.0 * mean / f64::from(games),
        );
    }
    md.push_str(
        "\nPer bar (probability that the first player wins; the table is symmetric, m×n = n×m):\n\n\
         | bar | perfect play | far corner | biggest bite | random |\n|---|---|---|---|---|\n",
    );
    for t in table.iter().filter(|t| t.rows <= t.cols) {
        let _ = write!(md, "| {}×{} ", t.rows, t.cols);
        for p in Policy::ALL {
            let _ = write!(md, "| {:.6} ", t.of(p));
        }
        md.push_str("|\n");
    }
    Ok(md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_lists_every_policy_and_every_upright_bar() {
        let md = report_section().unwrap();
        for p in Policy::ALL {
            assert!(md.contains(p.describe()), "{p:?}");
        }
        // 28 bars with rows ≤ cols between 2×2 and 8×8.
        assert_eq!(
            md.lines()
                .filter(|l| l.starts_with("| ") && l.contains('×') && !l.contains("policy"))
                .count(),
            28
        );
        assert!(md.contains("| 8×8 | 1.000000 |"));
        // Perfect play wins every game: 245.00 expected, no spread.
        assert!(md.contains("245 / 245 (100.0%) | 245.00 ± 0.00 | 100.0000% |"));
    }
}
