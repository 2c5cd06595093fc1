//! Octal games (Guy & Smith, "The G-values of various games", Proc. Cambridge
//! Philos. Soc. 52 (1956); Berlekamp–Conway–Guy, *Winning Ways*, ch. 4; seed
//! 001 §5.2).
//!
//! A code `d₀.d₁d₂…d_t` has one octal digit per number k of tokens removed
//! from a single heap; the bits of `d_k` say what may remain of the heap:
//! - bit 1: nothing (the heap had exactly k tokens);
//! - bit 2: one non-empty heap;
//! - bit 4: two non-empty heaps (the rest is split in two).
//!
//! `d₀` (removing no token) may only be 0 or 4 (4: split a heap into two
//! non-empty heaps). Examples: `0.77` Kayles, `0.07` Dawson's Kayles,
//! `0.137` Dawson's chess, `4.7`. Sub(S) is the code with `d_k = 3` for k ∈ S.
//!
//! By the Sprague–Grundy theorem a heap of n tokens has a Grundy value
//! `G(n) = mex` of the values of its options, where a split into heaps a and b
//! has value `G(a) ⊕ G(b)`.
//!
//! **Periodicity theorem** (Guy & Smith 1956; *Winning Ways* ch. 4): if
//! `G(n + p) = G(n)` for all n with n₀ ≤ n < 2n₀ + p + t (t the largest
//! number of tokens a move removes), then `G(n + p) = G(n)` for all n ≥ n₀.
//! [`find_period`] checks one more value than needed (through 2n₀ + p + t) and
//! uses max(n₀, 1) in the bound, so that a split option of the shifted heap
//! never becomes an empty heap.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use super::mex;
use super::subtraction::preperiod_for;

/// A parsed octal code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OctalCode {
    /// `digits[k]` for removing k tokens, k = 0…t, without trailing zeros
    /// (`digits[0]` is 0 or 4; the vector always has at least one entry).
    digits: Vec<u8>,
}

/// Why a code string is not an octal code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("octal code `{code}`: {reason}")]
pub struct OctalCodeError {
    /// The text given.
    pub code: String,
    /// What is wrong.
    pub reason: String,
}

impl OctalCode {
    /// Parses `d₀.d₁d₂…` (e.g. `0.77`, `4.7`, or `.07` for `0.07`).
    ///
    /// # Errors
    /// If a digit is not 0–7, the point is missing, there are more than 64
    /// digits after the point, or `d₀` is not 0 or 4 (bits 1 and 2 of `d₀`
    /// would be moves that remove nothing and leave nothing or the same heap).
    pub fn parse(code: &str) -> Result<Self, OctalCodeError> {
        let err = |reason: &str| OctalCodeError {
            code: code.to_string(),
            reason: reason.to_string(),
        };
        let s = code.trim();
        let (head, tail) = s
            .split_once(['.', '·'])
            .ok_or_else(|| err("write d0.d1d2…, e.g. 0.77"))?;
        let d0 = match head {
            "" | "0" => 0u8,
            "4" => 4,
            _ => return Err(err("the digit before the point must be 0 or 4")),
        };
        if tail.is_empty() {
            return Err(err("no digit after the point"));
        }
        if tail.len() > 64 {
            return Err(err("more than 64 digits after the point"));
        }
        let mut digits = vec![d0];
        for c in tail.chars() {
            match c.to_digit(8) {
                Some(d) => digits.push(d as u8),
                None => return Err(err(&format!("`{c}` is not an octal digit"))),
            }
        }
        while digits.len() > 1 && *digits.last().expect("non-empty") == 0 {
            digits.pop();
        }
        Ok(OctalCode { digits })
    }

    /// The subtraction game Sub(S) as an octal code (`d_k = 3` for k ∈ S).
    ///
    /// # Errors
    /// If S is empty, contains 0 or an element above 64.
    pub fn subtraction(set: &[u32]) -> Result<Self, OctalCodeError> {
        let err = |reason: &str| OctalCodeError {
            code: format!("Sub({set:?})"),
            reason: reason.to_string(),
        };
        let max = *set.iter().max().ok_or_else(|| err("empty set"))?;
        if set.contains(&0) || max > 64 {
            return Err(err("elements must be 1…64"));
        }
        let mut digits = vec![0u8; max as usize + 1];
        for &s in set {
            digits[s as usize] = 3;
        }
        Ok(OctalCode { digits })
    }

    /// The digit for removing k tokens (0 beyond the code).
    pub fn digit(&self, k: usize) -> u8 {
        self.digits.get(k).copied().unwrap_or(0)
    }

    /// t: the largest number of tokens a move removes (0 if only splits or no
    /// moves at all).
    pub fn max_removal(&self) -> usize {
        self.digits.len() - 1
    }

    /// Values of the options of a heap of `n` tokens, given `g[0..n]` (at
    /// least n values), by direct enumeration of every move: one value per
    /// move, in move order (k ascending, then nothing / one heap / splits
    /// a + b with a ≤ b ascending).
    ///
    /// # Panics
    /// If `g` has fewer than n values.
    pub fn option_values(&self, n: usize, g: &[u32]) -> Vec<u32> {
        assert!(g.len() >= n, "need G(0..{n})");
        let mut out = Vec::new();
        for (k, &d) in self.digits.iter().enumerate() {
            if k > n {
                break;
            }
            if d & 1 != 0 && k >= 1 && n == k {
                out.push(0);
            }
            if d & 2 != 0 && k >= 1 && n > k {
                out.push(g[n - k]);
            }
            if d & 4 != 0 && n >= k + 2 {
                let m = n - k;
                for a in 1..=m / 2 {
                    out.push(g[a] ^ g[m - a]);
                }
            }
        }
        out
    }

    /// Every move from a heap of `n` tokens: the tokens removed and the
    /// heaps left (none, one, or two non-empty heaps `a ≤ b`), in the order
    /// of [`option_values`](Self::option_values).
    pub fn moves(&self, n: usize) -> Vec<(usize, Vec<usize>)> {
        let mut out = Vec::new();
        for (k, &d) in self.digits.iter().enumerate() {
            if k > n {
                break;
            }
            if d & 1 != 0 && k >= 1 && n == k {
                out.push((k, vec![]));
            }
            if d & 2 != 0 && k >= 1 && n > k {
                out.push((k, vec![n - k]));
            }
            if d & 4 != 0 && n >= k + 2 {
                let m = n - k;
                for a in 1..=m / 2 {
                    out.push((k, vec![a, m - a]));
                }
            }
        }
        out
    }

    /// `G(0..=n_max)` by direct enumeration of every move: O(n_max² · t).
    /// The reference for [`grundy_sequence`](Self::grundy_sequence).
    pub fn naive_sequence(&self, n_max: usize) -> Vec<u32> {
        let mut g = Vec::with_capacity(n_max + 1);
        for n in 0..=n_max {
            let v = mex(self.option_values(n, &g));
            g.push(v);
        }
        g
    }

    /// `G(0..=n_max)`; see [`extend`](Self::extend).
    pub fn grundy_sequence(&self, n_max: usize) -> Vec<u32> {
        let mut g = Vec::new();
        self.extend(&mut g, n_max + 1);
        g
    }

    /// Extends `values` (a prefix `G(0..len)` of this game's sequence) to
    /// `G(0..end)`. Nothing happens if `end ≤ len`.
    ///
    /// Method: values are kept as bytes while they fit (else 16 or 32 bits),
    /// with a reversed copy so that every split `a + b = m` is a pair of
    /// contiguous slices. For each n the options without split and the splits
    /// with a small part give candidate values; the mex is then certified by a
    /// vectorised full scan of all splits for each candidate (usually one
    /// scan; AVX2 when the CPU has it), or, when a rare-value class exists
    /// (see `RareClass`: for Kayles after n = 70), by a scan of the rare
    /// positions only. Worst case O(end² · t), about n/2 byte comparisons per
    /// split digit per heap; Kayles to 2²⁰ takes about a second, Dawson's
    /// Kayles (no rare class) about nine (BENCHMARKS.md).
    ///
    /// # Panics
    /// If `end` exceeds 2²⁸ (values would need more than 32 bits of options).
    pub fn extend(&self, values: &mut Vec<u32>, end: usize) {
        self.extend_until(values, end, &AtomicBool::new(false));
    }

    /// The work of [`extend`](Self::extend) from `G(0..len)` to
    /// `G(0..end)`, counted in units of one vectorised comparison: a split
    /// of a full scan is 1, a split read one at a time (the quick splits,
    /// every rare position) [`SCALAR_WORK`], a heap's own overhead
    /// [`HEAP_WORK`]. The same count on every machine (the scan's speed is
    /// not in it), so a plan may predict time from it
    /// (`games::impartial::kind`; BENCHMARKS.md calibrates it).
    pub fn extend_work(&self, values: &mut Vec<u32>, end: usize) -> OctalWork {
        self.extend_counted(values, end, &AtomicBool::new(false))
    }

    /// [`extend_work`](Self::extend_work), giving up early once `stop` is
    /// set, as [`extend_until`](Self::extend_until) does.
    pub fn extend_work_until(
        &self,
        values: &mut Vec<u32>,
        end: usize,
        stop: &AtomicBool,
    ) -> OctalWork {
        self.extend_counted(values, end, stop)
    }

    /// [`extend`](Self::extend), giving up early once `stop` is set (it is
    /// read every [`STOP_CHECK`] heaps): `values` is then a shorter prefix
    /// `G(0..len)`, still exact, and the caller sees `stop`.
    ///
    /// # Panics
    /// As [`extend`](Self::extend).
    pub fn extend_until(&self, values: &mut Vec<u32>, end: usize, stop: &AtomicBool) {
        self.extend_counted(values, end, stop);
    }

    /// [`extend_until`](Self::extend_until), returning the work done as
    /// [`extend_work`](Self::extend_work) counts it.
    fn extend_counted(&self, values: &mut Vec<u32>, end: usize, stop: &AtomicBool) -> OctalWork {
        assert!(end <= 1 << 28, "n_max above 2^28 is not supported");
        let mut work = OctalWork::default();
        if end <= values.len() {
            return work;
        }
        let done = extend_typed::<u8>(self, values, end, stop, &mut work)
            || extend_typed::<u16>(self, values, end, stop, &mut work)
            || extend_typed::<u32>(self, values, end, stop, &mut work);
        assert!(done, "32-bit values suffice below 2^28");
        work
    }
}

impl fmt::Display for OctalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.", self.digits[0])?;
        if self.digits.len() == 1 {
            return write!(f, "0");
        }
        for d in &self.digits[1..] {
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for OctalCode {
    type Err = OctalCodeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        OctalCode::parse(s)
    }
}

/// Storage type for Grundy values in [`OctalCode::extend`].
trait Val: Copy + Eq + Default + std::ops::BitXor<Output = Self> {
    fn from_u32(v: u32) -> Option<Self>;
    fn to_u32(self) -> u32;
}

macro_rules! impl_val {
    ($t:ty) => {
        impl Val for $t {
            fn from_u32(v: u32) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            fn to_u32(self) -> u32 {
                u32::from(self)
            }
        }
    };
}
impl_val!(u8);
impl_val!(u16);
impl_val!(u32);

/// Whether `left[i] ^ right[i] == x` for some i (same lengths). Written in
/// fixed chunks so that the compiler vectorises the comparison.
#[inline(always)]
fn any_xor_eq<T: Val>(left: &[T], right: &[T], x: T) -> bool {
    const CHUNK: usize = 128;
    let mut lc = left.chunks_exact(CHUNK);
    let mut rc = right.chunks_exact(CHUNK);
    for (l, r) in (&mut lc).zip(&mut rc) {
        let mut hit = 0u8;
        for i in 0..CHUNK {
            hit |= u8::from((l[i] ^ r[i]) == x);
        }
        if hit != 0 {
            return true;
        }
    }
    lc.remainder()
        .iter()
        .zip(rc.remainder())
        .any(|(&a, &b)| (a ^ b) == x)
}

/// [`any_xor_eq`] compiled for AVX2 (32 bytes per instruction).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn any_xor_eq_avx2<T: Val>(left: &[T], right: &[T], x: T) -> bool {
    any_xor_eq(left, right, x)
}

/// The fastest [`any_xor_eq`] this CPU runs (checked once per call of
/// [`OctalCode::extend`]); every variant gives the same answer.
fn scan_fn<T: Val>() -> fn(&[T], &[T], T) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 was detected on this CPU just above.
        return |l, r, x| unsafe { any_xor_eq_avx2(l, r, x) };
    }
    |l, r, x| any_xor_eq(l, r, x)
}

/// The work of [`OctalCode::extend_work`], in units of one vectorised
/// comparison, in two parts that grow differently with n.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OctalWork {
    /// The certifying scans of candidates (full scans and rare positions):
    /// per heap, it grows with n.
    pub scans: u64,
    /// The rest: the quick splits and each heap's overhead, bounded per heap.
    pub rest: u64,
}

impl OctalWork {
    /// Both parts.
    pub fn total(&self) -> u64 {
        self.scans + self.rest
    }
}

/// Work units of a split read one at a time ([`OctalCode::extend_work`]).
pub const SCALAR_WORK: u64 = 32;

/// Work units of a heap's own overhead ([`OctalCode::extend_work`]).
pub const HEAP_WORK: u64 = 64;

/// [`OctalCode::extend_until`] reads its stop flag every this many heaps.
pub const STOP_CHECK: usize = 64;

/// Splits with a part ≤ this are read first to collect candidate values.
const QUICK_SPLITS: usize = 256;

/// [`OctalCode::extend`] with values stored as `T`; false (and `values`
/// unchanged beyond its prefix) if some value does not fit.
fn extend_typed<T: Val>(
    code: &OctalCode,
    values: &mut Vec<u32>,
    end: usize,
    stop: &AtomicBool,
    work: &mut OctalWork,
) -> bool {
    let start = values.len();
    if values.iter().any(|&v| T::from_u32(v).is_none()) {
        return false;
    }
    // g[n] = G(n); r[end - 1 - n] = G(n), so the pairs (G(a), G(m - a)),
    // a = 1…m/2, are g[1..=m/2] against r[end - m .. end - m + m/2].
    let mut g: Vec<T> = vec![T::default(); end];
    let mut r: Vec<T> = vec![T::default(); end];
    for (n, &v) in values.iter().enumerate() {
        let v = T::from_u32(v).expect("checked");
        g[n] = v;
        r[end - 1 - n] = v;
    }
    let t = code.max_removal();
    let split_ks: Vec<usize> = (0..=t).filter(|&k| code.digit(k) & 4 != 0).collect();
    // Every option value is < 2^bits where 2^bits > max value so far.
    let mut max_so_far: u32 = values.iter().copied().max().unwrap_or(0);
    let mut seen: Vec<u64> = Vec::new();
    let mut out: Vec<u32> = Vec::with_capacity(end - start);
    let scan = scan_fn::<T>();
    let mut rare = RareClass::new(&values[..]);
    for n in start..end {
        if n % STOP_CHECK == 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        if n % RareClass::REFRESH == 0 {
            rare.refresh(&g[..n]);
        }
        work.rest += HEAP_WORK;
        let bits = 32 - max_so_far.leading_zeros();
        let width = (1usize << bits).div_ceil(64) + 1;
        seen.clear();
        seen.resize(width, 0);
        let mut mark = |v: u32| {
            let v = v as usize;
            seen[v / 64] |= 1 << (v % 64);
        };
        for k in 1..=t.min(n) {
            let d = code.digit(k);
            if d & 1 != 0 && n == k {
                mark(0);
            }
            if d & 2 != 0 && n > k {
                mark(g[n - k].to_u32());
            }
        }
        for &k in &split_ks {
            if n < k + 2 {
                continue;
            }
            let m = n - k;
            let quick = (m / 2).min(QUICK_SPLITS);
            work.rest += quick as u64 * SCALAR_WORK;
            for a in 1..=quick {
                mark((g[a] ^ g[m - a]).to_u32());
            }
        }
        // Candidates ascending: the first not yet seen is the mex unless a
        // full scan of the splits finds it.
        let mut x = super::first_zero_bit(&seen);
        let scanned = &mut work.scans;
        loop {
            let Some(xt) = u32::try_from(x).ok().and_then(T::from_u32) else {
                return false; // the mex itself may not fit
            };
            let via_rare = rare.covers(x as u32);
            let found = split_ks.iter().any(|&k| {
                if n < k + 2 {
                    return false;
                }
                let m = n - k;
                let half = m / 2;
                if half <= QUICK_SPLITS {
                    return false; // already all seen
                }
                if via_rare {
                    // One part of any split with value x is rare.
                    let mut read = 0u64;
                    let hit = rare
                        .positions
                        .iter()
                        .map(|&q| q as usize)
                        .take_while(|&q| q < m)
                        .any(|q| {
                            read += 1;
                            (g[q] ^ g[m - q]) == xt
                        });
                    *scanned += read * SCALAR_WORK;
                    hit
                } else {
                    // Counted whole: the scan stops early only at a hit,
                    // which ends the candidate anyway.
                    *scanned += half as u64;
                    scan(&g[1..=half], &r[end - m..end - m + half], xt)
                }
            });
            if !found {
                break;
            }
            seen[x / 64] |= 1 << (x % 64);
            x = super::first_zero_bit(&seen);
        }
        let v = x as u32;
        g[n] = T::from_u32(v).expect("checked above");
        r[end - 1 - n] = g[n];
        max_so_far = max_so_far.max(v);
        rare.push(n, v);
        out.push(v);
    }
    values.extend(out);
    true
}

/// The "rare value" shortcut (after Gangolli & Plambeck 1989): for a mask μ
/// let f(v) = parity of the bits of v & μ, a linear map, so
/// f(G(a) ⊕ G(b)) = f(G(a)) ⊕ f(G(b)). If f(x) = 1, a split a + b with value
/// x has exactly one part with f(G) = 0 ("rare"). When the rare positions are
/// few (e.g. Kayles with μ = 15: after n = 70 every value has odd bit count),
/// checking x over the rare positions replaces the scan over all splits. The
/// answer is the same either way; only the work changes.
struct RareClass {
    /// μ, or 0 when the shortcut is off.
    mask: u32,
    /// Positions n ≥ 1 with f(G(n)) = 0, ascending.
    positions: Vec<u32>,
    /// How many positions n ≥ 1 have each value (values < `HIST`).
    hist: Vec<u64>,
    /// Positions counted in `hist`; false once a value ≥ `HIST` appears.
    usable: bool,
    counted: u64,
}

impl RareClass {
    /// Values (and masks) considered: below this.
    const HIST: usize = 1024;
    /// The mask is re-chosen every this many n.
    const REFRESH: usize = 1024;

    fn new(prefix: &[u32]) -> Self {
        let mut r = RareClass {
            mask: 0,
            positions: Vec::new(),
            hist: vec![0; Self::HIST],
            usable: true,
            counted: 0,
        };
        for (n, &v) in prefix.iter().enumerate() {
            r.count(n, v);
        }
        r
    }

    fn f(&self, v: u32) -> bool {
        (v & self.mask).count_ones() % 2 == 1
    }

    fn count(&mut self, n: usize, v: u32) {
        if n == 0 {
            return;
        }
        match self.hist.get_mut(v as usize) {
            Some(h) => *h += 1,
            None => {
                self.usable = false;
                self.mask = 0;
            }
        }
        self.counted += 1;
    }

    fn push(&mut self, n: usize, v: u32) {
        self.count(n, v);
        if self.mask != 0 && n >= 1 && !self.f(v) {
            self.positions.push(n as u32);
        }
    }

    /// Whether x may be checked over the rare positions only.
    fn covers(&self, x: u32) -> bool {
        self.mask != 0 && self.f(x)
    }

    /// Re-chooses μ to make the rare positions fewest; the shortcut is on
    /// only if they are under 1/32 of all positions.
    fn refresh<T: Val>(&mut self, g: &[T]) {
        if !self.usable || self.counted < 256 {
            self.mask = 0;
            return;
        }
        let top = self.hist.iter().rposition(|&h| h > 0).unwrap_or(0) as u32;
        let bits = 32 - top.leading_zeros();
        let mut best = (u64::MAX, 0u32);
        for mask in 1..(1u32 << bits) {
            let rare: u64 = (0..=top)
                .filter(|&v| (v & mask).count_ones() % 2 == 0)
                .map(|v| self.hist[v as usize])
                .sum();
            if rare < best.0 {
                best = (rare, mask);
            }
        }
        let mask = if best.0 * 32 < self.counted {
            best.1
        } else {
            0
        };
        if mask != self.mask {
            self.mask = mask;
            self.positions.clear();
            if mask != 0 {
                for (n, v) in g.iter().enumerate().skip(1) {
                    if !self.f(v.to_u32()) {
                        self.positions.push(n as u32);
                    }
                }
            }
        }
    }
}

/// A proved eventual period of an octal game's Grundy sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OctalPeriod {
    /// The least n₀ with `G(n + p) = G(n)` for every n ≥ n₀ (so the last
    /// exceptional value is at n₀ − 1).
    pub preperiod: usize,
    /// The least period p.
    pub period: usize,
    /// The theorem's check covered n₀′ ≤ n ≤ `checked_through` with
    /// n₀′ = max(n₀, 1) and `checked_through` = 2n₀′ + p + t.
    pub checked_through: usize,
}

/// The least period and preperiod of `values` (a prefix `G(0..len)` of the
/// Grundy sequence of a game with largest removal t) that the Guy–Smith
/// theorem proves from this prefix, or `None` if the prefix is too short.
///
/// For p = 1, 2, …: n₀ = the least index from which the prefix agrees with
/// its shift by p; proved if the prefix covers `n + p` for every n ≤
/// 2·max(n₀, 1) + p + t. The first p proved is the least period of the
/// infinite sequence, and its n₀ the least preperiod (any period is a multiple
/// of the least one and shares its preperiod, and its proof needs no fewer
/// values).
pub fn find_period(values: &[u32], t: usize) -> Option<OctalPeriod> {
    let len = values.len();
    for p in 1..len {
        let n0 = preperiod_for(values, p);
        let n0t = n0.max(1);
        let through = 2 * n0t + p + t;
        if through + p < len {
            return Some(OctalPeriod {
                preperiod: n0,
                period: p,
                checked_through: through,
            });
        }
        // Larger p need even more values once 2 + 2p + t ≥ len.
        if 2 + 2 * p + t >= len {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The moves' heaps give the options' values, move for move, and every
    /// move removes what it says (Kayles 0.77, Dawson's Kayles 0.07, 4.7,
    /// 0.137 and Sub({1,3,4})).
    #[test]
    fn moves_leave_the_heaps_of_the_option_values() {
        for code in ["0.77", "0.07", "4.7", "0.137"] {
            let c = OctalCode::parse(code).unwrap();
            let g = c.naive_sequence(30);
            for n in 0..=30 {
                let moves = c.moves(n);
                let from_moves: Vec<u32> = moves
                    .iter()
                    .map(|(_, left)| left.iter().fold(0, |x, &h| x ^ g[h]))
                    .collect();
                assert_eq!(from_moves, c.option_values(n, &g), "{code}, n = {n}");
                for (k, left) in &moves {
                    assert_eq!(k + left.iter().sum::<usize>(), n, "{code}, n = {n}");
                    assert!(left.iter().all(|&h| h > 0) && left.len() <= 2);
                }
            }
        }
        // Kayles: a heap of 3 can go to 2, 1, 1+1 (take 1) or 1, 0 (take 2).
        let k = OctalCode::parse("0.77").unwrap();
        assert_eq!(
            k.moves(3),
            vec![(1, vec![2]), (1, vec![1, 1]), (2, vec![1])]
        );
    }
}
