//! The second, independent block scan: prefix by prefix, the bites of the
//! last rows as running 64-bit masks (`Scan::Prefixes`).

use super::*;

impl ChompBox {
    /// The prefix scan of a block (ranks `a..b`, free rows `k..m` at most
    /// `cap`, first rank `base`, `k ≤ m − 2`, n ≤ 63), after the carry and
    /// the pull have marked it.
    ///
    /// The staircases sharing their first m − 1 rows R (the *prefix*) are
    /// the consecutive ranks `y₀ ..= y₀ + R_{m−2}` (last row l = 0 ..=
    /// R_{m−2}). A bite in the last row leads to a shorter l of the same
    /// prefix, so at most one l is a P-position: the lowest that no other
    /// bite *kills*. The kills of R, as a mask over l, are the OR of
    /// - the marks already in the bitset (carry, pull, and the marks below);
    /// - row m − 2 (`w`): the bite (m−2, c), c < R_{m−2}, leads to prefix
    ///   R' = R with row m−2 cut to c and last row min(l, c); with g the
    ///   P-length of R' it kills l = g if g < c and every l ≥ c if g = c.
    ///   These are the prefixes just before R, so `w` is a running mask,
    ///   reset when row m − 2 restarts;
    /// - row i, k ≤ i ≤ m − 3, bites (i, c) with c ≥ R_{i+1} (*one-row
    ///   bites*: only row i changes, to c): they kill the P-lengths of the
    ///   prefixes R[i := c], R_{i+1} ≤ c < R_i. `masks.rows[i]` holds this
    ///   OR for every setting of rows i+1..m−1 (numbered by the prefix terms
    ///   `terms`), updated as each prefix is solved: the entry is empty when
    ///   R_i = R_{i+1} (the first prefix of that setting), and gains the
    ///   P-length of every later prefix with that setting.
    ///
    /// So only the bites at rows ≥ k that cut two rows or more mark (see
    /// [`ChompBox::mark_multirow`]). Every staircase of the segment but the
    /// P-position is then marked, so the bitset ends as the rank scan's.
    /// In a block cut by the window's start the masks start empty: the
    /// prefixes before `a` reached the window through the carry's marks.
    ///
    /// Long on purpose (a solver inner loop): the prefix walk keeps its
    /// row masks, terms and bitset cursor in locals across every prefix.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_prefixes(
        &self,
        terms: &[u64],
        k: usize,
        cap: u32,
        base: u64,
        a: u64,
        b: u64,
        rows: &mut [u32],
        local: &Local<'_>,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        file: bool,
        masks: &mut PrefixMasks,
    ) {
        let m = self.m;
        let n1 = self.n + 1;
        let last = m - 2; // the last prefix row
        let mask_lo = last.saturating_sub(mask_rows()).max(k);
        let full = a == base && b == base + self.span(k, cap);
        // Mask arrays of rows k..=m−3: C(cap + d, d) settings of the d =
        // m−2−i rows after i.
        if masks.rows.len() < m {
            masks.rows.resize_with(m, Vec::new);
        }
        for i in mask_lo..last {
            let d = (last - i) as u64;
            let len = binom(u64::from(cap) + d, d) as usize;
            let v = &mut masks.rows[i];
            if v.len() < len {
                v.resize(len, 0);
            }
            if a > base {
                v[..len].fill(0);
            }
        }
        self.unrank_tail(a - base, k, cap, rows);
        let mut y0 = a - u64::from(rows[m - 1]);
        rows[m - 1] = 0;
        let mut ctx = [0u64; 64];
        let mut acc = 0u64;
        for i in (k..last).rev() {
            acc += terms[(i + 1) * n1 + rows[i + 1] as usize];
            ctx[i] = acc;
        }
        let mut squares: usize = rows[..last + 1].iter().map(|&r| r as usize).sum();
        let mut w = 0u64;
        let words = local.words;
        loop {
            let v = rows[last];
            let seg_end = y0 + u64::from(v) + 1;
            // The lengths l of this prefix inside the window (and not the
            // empty board): lo_l..hi_l.
            let lo = a.max(y0).max(1);
            let hi = b.min(seg_end);
            let lengths = if v == 63 {
                !0u64
            } else {
                (1u64 << (v + 1)) - 1
            };
            let mut kill = w | !lengths;
            if lo > y0 {
                kill |= (1u64 << (lo - y0)) - 1;
            }
            if hi < seg_end {
                kill |= !0u64 << (hi - y0);
            }
            if lo < hi {
                // The marks of lo..hi (at most 64 bits, in one or two of the
                // block's words), at their lengths l = y − y₀.
                let i0 = lo - local.origin;
                let (wi, sh) = ((i0 / 64) as usize, i0 % 64);
                let len = hi - lo;
                let mut seg = words[wi].get() >> sh;
                if sh != 0 && sh + len > 64 {
                    seg |= words[wi + 1].get() << (64 - sh);
                }
                if len < 64 {
                    seg &= (1u64 << len) - 1;
                }
                kill |= seg << (lo - y0);
            }
            for i in mask_lo..last {
                let e = &mut masks.rows[i][ctx[i] as usize];
                if rows[i + 1] == rows[i] {
                    *e = 0;
                } else {
                    kill |= *e;
                }
            }
            let free = !kill;
            let found = (free != 0).then(|| free.trailing_zeros());
            if let Some(f) = found {
                let y = y0 + u64::from(f);
                counts.p[squares + f as usize] += 1;
                if file {
                    arena.push((y - base) as u32);
                }
                for (row, &c) in masks.rows[mask_lo..last]
                    .iter_mut()
                    .zip(&ctx[mask_lo..last])
                {
                    row[c as usize] |= 1 << f;
                }
                local.set_range(lo, y);
                local.set_range(y + 1, hi);
                rows[m - 1] = f;
                if mask_lo > k {
                    self.mark_predecessors_in::<_, false>(y, rows, k..mask_lo, cap, local);
                }
                self.mark_multirow(y, rows, k, mask_lo, cap, full, local);
                rows[m - 1] = 0;
            } else if lo < hi {
                local.set_range(lo, hi);
            }
            if seg_end >= b {
                return;
            }
            // The next prefix in rank order.
            let bound = if last == k { cap } else { rows[last - 1] };
            if v < bound {
                if let Some(g) = found {
                    w |= if g < v { 1 << g } else { !0u64 << v };
                }
                rows[last] = v + 1;
                squares += 1;
                for c in ctx[k..last].iter_mut() {
                    *c += 1;
                }
            } else {
                // The deepest row j < last that can grow; rows after it
                // restart at 0.
                let mut j = last;
                loop {
                    debug_assert!(j > k, "the block's last prefix ends the block");
                    j -= 1;
                    let bound = if j == k { cap } else { rows[j - 1] };
                    if rows[j] < bound {
                        break;
                    }
                }
                rows[j] += 1;
                squares += 1;
                for r in rows[j + 1..=last].iter_mut() {
                    squares -= *r as usize;
                    *r = 0;
                }
                w = 0;
                for c in ctx[k..j].iter_mut() {
                    *c += 1;
                }
                for c in ctx[j..last].iter_mut() {
                    *c = 0;
                }
            }
            y0 = seg_end;
        }
    }
}
