//! Row classification at the last column (the sen-ltd Chomp article's detection rule).

use super::tile::{PERIOD_MAX, RowState};

/// The run of columns with `d(q) = d(q − k)` that decides period `k`:
/// `max(200, 20k)` columns (the sen-ltd Chomp article).
pub fn min_run(k: u32) -> u32 {
    (20 * k).max(200)
}

/// How row `r` ends, judged at the last column `q_last`, with
/// `d(q) = f(q, r) − q`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowClass {
    /// `f(q, r) = c` for `q ≥ c` (exact: `(c, c, r)` is a P-position).
    Dead {
        /// The constant, also the column where the row died.
        c: u32,
    },
    /// `f(q, r) = q + c` for `q₀ ≤ q ≤ q_last` (period 1).
    Linear {
        /// The constant difference.
        c: u32,
        /// The first column of the final run.
        q0: u32,
    },
    /// `d` periodic with `period ≥ 2` from `start` to `q_last`.
    Periodic {
        /// The period.
        period: u32,
        /// The first column of the periodic part.
        start: u32,
        /// `d(start), …, d(start + period − 1)`.
        d: Vec<u32>,
    },
    /// No period `k ≤ 12` has run for `max(200, 20k)` columns yet.
    Undetermined,
}

impl RowClass {
    /// `dead`, `linear`, `periodic` or `undetermined`.
    pub fn name(&self) -> &'static str {
        match self {
            RowClass::Dead { .. } => "dead",
            RowClass::Linear { .. } => "linear",
            RowClass::Periodic { .. } => "periodic",
            RowClass::Undetermined => "undetermined",
        }
    }

    /// The period: 1 for linear rows, `None` for dead and undetermined ones.
    pub fn period(&self) -> Option<u32> {
        match self {
            RowClass::Linear { .. } => Some(1),
            RowClass::Periodic { period, .. } => Some(*period),
            _ => None,
        }
    }

    /// For periodic rows, the mean of `d` over one period as a reduced
    /// fraction `(numerator, denominator)`, and the pattern: one period of
    /// `d` minus the mean, each as `(numerator, denominator)` over the same
    /// denominator.
    pub fn pattern(&self) -> Option<((i64, i64), Vec<i64>)> {
        let RowClass::Periodic { d, .. } = self else {
            return None;
        };
        let k = d.len() as i64;
        let sum: i64 = d.iter().map(|&x| i64::from(x)).sum();
        let g = gcd(sum, k);
        let (mean_num, den) = (sum / g, k / g);
        Some((
            (mean_num, den),
            d.iter().map(|&x| i64::from(x) * den - mean_num).collect(),
        ))
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs().max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Classifies row `r` from its state after column `q_last` (the sen-ltd Chomp
/// article's rule: the smallest `k ≤ 12` whose current run of `d(q) = d(q − k)` covers
/// at least the last [`min_run`]`(k)` columns; the periodic part starts at
/// `s_k − k`).
pub fn classify(r: u32, state: &RowState, q_last: u32) -> RowClass {
    let row = match state {
        RowState::Dead { c } => return RowClass::Dead { c: *c },
        RowState::Live(row) => row,
    };
    for k in 1..=PERIOD_MAX {
        let s = row.run[(k - 1) as usize];
        let len = (q_last + 1).saturating_sub(s);
        if len < min_run(k) {
            continue;
        }
        let start = s - k;
        debug_assert!(start >= r);
        if k == 1 {
            return RowClass::Linear {
                c: row.d_at(q_last),
                q0: start,
            };
        }
        let d = (start..start + k)
            .map(|q| row.d_at(q_last - (q_last - q) % k))
            .collect();
        return RowClass::Periodic {
            period: k,
            start,
            d,
        };
    }
    RowClass::Undetermined
}
