//! Subtraction games Sub(S): one heap; a move removes s
//! tokens for some s in the finite set S. `G(n) = mex{G(n − s) : s ∈ S, s ≤ n}`.
//!
//! Sub(S) is the octal game whose digit k is 3 for k ∈ S (see
//! [`super::octal`]); here it has its own, tighter periodicity proof: `G(n)`
//! for n ≥ 0 depends only on the previous `max S` values, so if the window
//! `G(n₀ .. n₀ + max S)` reappears at `n₀ + p`, the sequence has period p
//! from n₀ on (a pigeonhole argument).

use super::mex;

/// A subtraction game with a finite subtraction set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtraction {
    set: Vec<u32>,
}

/// A proved eventual period of a Grundy sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// The least n₀ with `G(n + p) = G(n)` for all n ≥ n₀.
    pub preperiod: usize,
    /// The least period p.
    pub period: usize,
}

impl Subtraction {
    /// The game Sub(S). `set` is sorted and deduplicated.
    ///
    /// # Errors
    /// If `set` is empty or contains 0.
    pub fn new(set: &[u32]) -> Result<Self, String> {
        let mut set = set.to_vec();
        set.sort_unstable();
        set.dedup();
        if set.is_empty() {
            return Err("the subtraction set is empty".into());
        }
        if set[0] == 0 {
            return Err("the subtraction set contains 0 (a move must remove tokens)".into());
        }
        Ok(Subtraction { set })
    }

    /// The subtraction set, ascending.
    pub fn set(&self) -> &[u32] {
        &self.set
    }

    /// `G(0), …, G(n_max)`: O(n_max · |S|).
    pub fn grundy_sequence(&self, n_max: usize) -> Vec<u32> {
        let mut g: Vec<u32> = Vec::with_capacity(n_max + 1);
        for n in 0..=n_max {
            let v = mex(self
                .set
                .iter()
                .filter(|&&s| s as usize <= n)
                .map(|&s| g[n - s as usize]));
            g.push(v);
        }
        g
    }

    /// The least period and preperiod of `values` (a prefix of this game's
    /// Grundy sequence), if the prefix proves them: the window of `max S`
    /// values at n₀ must reappear at n₀ + p inside the prefix. `None` if the
    /// prefix is too short.
    pub fn period(&self, values: &[u32]) -> Option<Period> {
        let m = *self.set.last().expect("non-empty") as usize;
        let len = values.len();
        // A period p is proved only if n₀ + p + m ≤ len, with n₀ ≥ 0.
        for p in 1..len.saturating_sub(m).saturating_add(1) {
            let n0 = preperiod_for(values, p);
            if n0 + p + m <= len {
                return Some(Period {
                    preperiod: n0,
                    period: p,
                });
            }
        }
        None
    }

    /// Every winning move in the sum of heaps `heaps`: `(heap index, tokens
    /// taken)`, by heap then by tokens. Empty iff the sum is a P-position
    /// (Sprague–Grundy: P iff the XOR of the heaps' values is 0). Computes
    /// `G` up to the largest heap: see [`Subtraction::winning_moves_from`]
    /// for heaps beyond what memory holds.
    pub fn winning_moves(&self, heaps: &[u64]) -> Vec<(usize, u32)> {
        let max = heaps.iter().copied().max().unwrap_or(0) as usize;
        let g = self.grundy_sequence(max);
        self.winning_moves_from(&g, None, heaps)
            .expect("values cover every heap")
    }

    /// [`Subtraction::winning_moves`] with `G` read from `values` (a prefix
    /// of this game's sequence) and, past its end, from `period` (proved by
    /// that prefix, [`Subtraction::period`]): heaps of any size without
    /// computing up to them. `None` if a heap lies past `values` and no
    /// period is given.
    pub fn winning_moves_from(
        &self,
        values: &[u32],
        period: Option<Period>,
        heaps: &[u64],
    ) -> Option<Vec<(usize, u32)>> {
        let g = |n: u64| value_at(values, period, n);
        let mut total = 0;
        for &h in heaps {
            total ^= g(h)?;
        }
        let mut out = Vec::new();
        if total == 0 {
            return Some(out);
        }
        for (i, &h) in heaps.iter().enumerate() {
            let want = g(h)? ^ total;
            for &s in &self.set {
                if u64::from(s) <= h && g(h - u64::from(s))? == want {
                    out.push((i, s));
                }
            }
        }
        Some(out)
    }
}

/// `G(n)` from a prefix `values` of a Grundy sequence and, past its end, from
/// the period it proves: `G(n) = G(n₀ + (n − n₀) mod p)`. `None` if `n` is past
/// `values` and there is no period.
pub fn value_at(values: &[u32], period: Option<Period>, n: u64) -> Option<u32> {
    if let Some(&v) = usize::try_from(n).ok().and_then(|i| values.get(i)) {
        return Some(v);
    }
    let p = period?;
    let (n0, per) = (p.preperiod as u64, p.period as u64);
    let i = n0 + (n - n0) % per;
    values.get(usize::try_from(i).ok()?).copied()
}

/// The least n₀ such that `values[n + p] == values[n]` for every n ≥ n₀
/// inside `values` (scanning back from the end).
pub(crate) fn preperiod_for(values: &[u32], p: usize) -> usize {
    let len = values.len();
    if p >= len {
        return 0;
    }
    let mut n0 = len - p;
    while n0 > 0 && values[n0 - 1] == values[n0 - 1 + p] {
        n0 -= 1;
    }
    n0
}
