//! Marking predecessors: the pull of bites at a block's prefix rows, raised
//! runs of rows, and the predecessors of one P-position in a range.

use super::*;

impl ChompBox {
    /// Marks the predecessors of the P-position `q` (rank `x`, free rows
    /// `k..m` at most `cap`) that the prefix scan does not gather as masks:
    /// through a bite (i, c = q_i) at a row k ≤ i ≤ m − 3 that cuts two rows
    /// or more, i.e. R_i ∈ (c, cap_i], rows i+1..t (the rest of q's run of
    /// rows equal to c) raised in [c, R_i] with R_{i+1} > c. (The setting
    /// with every raised row at c is the one-row bite.)
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mark_multirow<S: Marks>(
        &self,
        x: u64,
        q: &[u32],
        k: usize,
        mask_lo: usize,
        cap: u32,
        full: bool,
        sink: &S,
    ) {
        let (lo, hi) = (sink.lo(), sink.hi());
        let m = self.m;
        let mut prefix: u64 = (0..mask_lo).map(|r| self.term(r, q[r])).sum();
        for i in mask_lo..m - 2 {
            let cap_i = if i == k { cap } else { q[i - 1] };
            if prefix >= hi || prefix + self.span(i, cap_i) <= lo {
                break;
            }
            let j = q[i];
            if cap_i > j && (i == 0 || q[i - 1] != j) && q[i + 1] == j {
                let mut t = i + 2;
                while t < m && q[t] == j {
                    t += 1;
                }
                if j == 0 && t == m {
                    // Rows i.. are empty in q: every staircase with q's rows
                    // 0..i and a non-empty row i (the one-row bites too).
                    sink.set_range(prefix + self.term(i, 1), prefix + self.span(i, cap_i));
                } else {
                    let base = x - (self.colsum(j, t) - self.colsum(j, i));
                    for ri in j + 1..=cap_i {
                        let acc = base + self.term(i, ri);
                        if acc >= hi {
                            break;
                        }
                        for v in j + 1..=ri {
                            let acc2 = acc + self.term(i + 1, v);
                            if acc2 >= hi {
                                break;
                            }
                            if full {
                                self.raise_run_all(i + 2, t, j, v, acc2, sink);
                            } else {
                                self.raise_run_in(i + 2, t, j, v, acc2, sink);
                            }
                        }
                    }
                }
            }
            prefix += self.term(i, q[i]);
        }
    }

    /// Marks, in the block with prefix `pre` (rows `0..k`, `k = pre.len()`),
    /// last rows at most `cap`, first rank `base`, every predecessor of a
    /// P-position already filed (in a block of an earlier layer) through a
    /// bite at a prefix row.
    ///
    /// A staircase `pre + T` of the block, bitten at (i, c) with i < k and
    /// c < pre[i], leaves `clip_c(pre) + clip_c(T)` (rows from i cut to c).
    /// For c ≥ θ that lies in the block with prefix `clip_c(pre)` (same k),
    /// at offset `off(clip_c(T))`; for c < θ in the low block at depth i,
    /// at offset `Σ_{l=i}^{k−1} term(l, c) + off(clip_c(T))`. So the block
    /// pulls, for every filed P-position of those blocks whose tail τ =
    /// clip_c(T), every T: τ itself when τ's first row is below c (or c ≥
    /// cap), else τ with its leading run of rows equal to c raised to any
    /// non-increasing values in [c, cap].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pull<S: Marks>(
        &self,
        lay: &Layout,
        pre: &[u32],
        cap: u32,
        base: u64,
        full: bool,
        cx: &Ctx<'_>,
        sink: &S,
        scratch: &mut Scratch,
    ) {
        let k = pre.len();
        let theta = lay.low;
        let (sums, reqs) = (&mut scratch.sums, &mut scratch.reqs);
        sums.clear();
        sums.push(0);
        for l in 0..k {
            let v = sums[l] + lay.d(l, pre[l]);
            sums.push(v);
        }
        // The source blocks, one per (row, column ≥ θ) of the prefix and one
        // low block per row; their directory entries are fetched all at once
        // (each is a cache miss), then their lists' first lines.
        reqs.clear();
        for i in 0..k {
            let mut j = i;
            for c in (theta..pre[i]).rev() {
                while j < k && pre[j] > c {
                    j += 1;
                }
                let key = sums[i] + lay.cold(c, j) - lay.cold(c, i) + sums[k] - sums[j];
                if key >= cx.key_lo {
                    cx.prefetch_entry(key);
                }
                reqs.push((key, i as u32, c));
            }
            if sums[i] >= cx.key_lo {
                cx.prefetch_entry(sums[i]);
            }
            reqs.push((sums[i], i as u32, LOW_SOURCE));
        }
        for r in reqs.iter_mut() {
            r.0 = cx.entry(r.0);
            cx.prefetch_list(r.0);
        }
        for q in 0..scratch.reqs.len() {
            let (e, i, c) = scratch.reqs[q];
            let Some(list) = cx.list_at(e) else {
                continue;
            };
            let i = i as usize;
            if c != LOW_SOURCE {
                if c >= cap {
                    for &o in list {
                        sink.set(base + u64::from(o));
                    }
                } else {
                    self.pull_list(list, 0, c, k, cap, base, full, sink, &mut scratch.group);
                }
                continue;
            }
            let mut from = 0usize;
            for c in 0..theta {
                let sigma = self.colsum(c, k) - self.colsum(c, i);
                let len = self.span(k, c);
                from += list[from..].partition_point(|&o| u64::from(o) < sigma);
                let to = from + list[from..].partition_point(|&o| u64::from(o) < sigma + len);
                if c >= cap {
                    for &o in &list[from..to] {
                        sink.set(base + u64::from(o) - sigma);
                    }
                } else {
                    let group = &mut scratch.group;
                    self.pull_list(&list[from..to], sigma, c, k, cap, base, full, sink, group);
                }
                from = to;
            }
        }
    }

    /// [`ChompBox::pull_one`] for every offset `o − sigma` of `list`
    /// (ascending), c < cap. The leading run r grows with the offset, so the
    /// list falls into runs of equal r; such a run of two or more tails
    /// (rows from k + r alike in rank only) is raised once for all of them
    /// ([`ChompBox::raise_group`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pull_list<S: Marks>(
        &self,
        list: &[u32],
        sigma: u64,
        c: u32,
        k: usize,
        cap: u32,
        base: u64,
        full: bool,
        sink: &S,
        group: &mut Vec<u64>,
    ) {
        let m = self.m;
        let sc = self.span(k, c);
        let mut e = 0;
        while e < list.len() {
            let o = u64::from(list[e]) - sigma;
            let mut r = 0;
            while k + r < m && o >= sc - self.span(k + r + 1, c) {
                r += 1;
            }
            if r == 0 || k + r == m {
                self.pull_one(o, c, k, cap, base, full, sink);
                e += 1;
                continue;
            }
            // Offsets with the same run r: below sc − span(k + r + 1, c).
            let lead = self.colsum(c, k + r) - self.colsum(c, k);
            let limit = sc - self.span(k + r + 1, c);
            group.clear();
            while e < list.len() {
                let o = u64::from(list[e]) - sigma;
                if o >= limit {
                    break;
                }
                group.push(o - lead);
                e += 1;
            }
            if group.len() == 1 {
                self.pull_one(group[0] + lead, c, k, cap, base, full, sink);
            } else if full {
                self.raise_group::<S, false>(k, k + r, c, cap, base, group, sink);
            } else {
                self.raise_group::<S, true>(k, k + r, c, cap, base, group, sink);
            }
        }
    }

    /// Chooses rows k..t (t < m) in [j, top], non-increasing, and marks
    /// `acc + rank of those rows + ρ` for every ρ of `group` (clipped to the
    /// sink's range if `CLIP`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn raise_group<S: Marks, const CLIP: bool>(
        &self,
        k: usize,
        t: usize,
        j: u32,
        top: u32,
        acc: u64,
        group: &[u64],
        sink: &S,
    ) {
        let mark = |a: u64| {
            for &g in group {
                if CLIP {
                    sink.set(a + g);
                } else {
                    sink.set_unclipped(a + g);
                }
            }
        };
        let n1 = self.n + 1;
        // Rows k..t − 1 by an odometer, the last row as a loop.
        let d = t - 1 - k;
        if d > ODOMETER {
            let row = &self.term[k * n1..(k + 1) * n1];
            for v in j..=top {
                self.raise_group::<S, CLIP>(k + 1, t, j, v, acc + row[v as usize], group, sink);
            }
            return;
        }
        let last = &self.term[(t - 1) * n1..t * n1];
        let mut odo = Odometer::new(self, k, d, j, top, acc);
        loop {
            let a = odo.acc();
            for &tv in &last[j as usize..=odo.cap() as usize] {
                mark(a + tv);
            }
            if !odo.advance() {
                return;
            }
        }
    }

    /// Marks the staircases T of rows `k..` (at most `cap`) with clip_c(T) =
    /// τ, where τ is at offset `o` among the staircases of rows `k..` with no
    /// row above c < cap: τ's leading run of rows equal to c (r rows: `o ≥
    /// span(k, c) − span(k + r, c)`) raised to any non-increasing values in
    /// [c, cap], τ itself included.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn pull_one<S: Marks>(
        &self,
        o: u64,
        c: u32,
        k: usize,
        cap: u32,
        base: u64,
        full: bool,
        sink: &S,
    ) {
        let sc = self.span(k, c);
        let mut r = 0;
        while k + r < self.m && o >= sc - self.span(k + r + 1, c) {
            r += 1;
        }
        if r == 0 {
            sink.set(base + o);
            return;
        }
        let acc = base + o - (self.colsum(c, k + r) - self.colsum(c, k));
        if full {
            self.raise_run_all(k, k + r, c, cap, acc, sink);
        } else {
            self.raise_run_in(k, k + r, c, cap, acc, sink);
        }
    }

    /// Writes into `rows[k..]` the tail of rank offset `rest` among the
    /// staircases of rows `k..m` with no row above `cap`.
    pub(super) fn unrank_tail(&self, mut rest: u64, k: usize, cap: u32, rows: &mut [u32]) {
        let mut hi = cap as usize;
        for (kk, row) in rows.iter_mut().enumerate().skip(k) {
            let table = &self.term[kk * (self.n + 1)..kk * (self.n + 1) + hi + 1];
            // Largest r with term(kk, r) ≤ rest (terms increase in r, and
            // term(kk, 0) = 0): a count without branches, as the rows are
            // short and a binary search mispredicts at every step.
            let r = table[1..]
                .iter()
                .map(|&t| usize::from(t <= rest))
                .sum::<usize>();
            *row = r as u32;
            rest -= table[r];
            hi = r;
        }
    }

    /// The next tail of rows `k..m` under `cap` in rank order; returns the
    /// new number of squares (`s` before). Must not be called on the last.
    pub(super) fn advance_tail(&self, rows: &mut [u32], k: usize, cap: u32, s: usize) -> usize {
        let mut s = s;
        for kk in (k..self.m).rev() {
            let c = if kk == k { cap } else { rows[kk - 1] };
            if rows[kk] < c {
                rows[kk] += 1;
                s += 1;
                for r in rows[kk + 1..].iter_mut() {
                    s -= *r as usize;
                    *r = 0;
                }
                return s;
            }
        }
        s
    }

    /// Marks every predecessor of `q` (rank `x`) through a bite at a row in
    /// `bite_rows` whose rank lies in `sink.lo()..sink.hi()`.
    ///
    /// A predecessor R through the bite (i, j), j = q_i, agrees with q below
    /// row i, has R_i ∈ (j, q_{i−1}] (row 0: ≤ n), rows i+1..t (the rest of
    /// the run of rows equal to j in q) non-increasing in [j, R_i], and the
    /// rows from t on as in q. `BISECT`: skip by bisection the R_i whose
    /// predecessors all lie below the sink (the carry's P-positions of the
    /// block the window starts in, which lie below the window; a block's
    /// own P-positions need not).
    pub(super) fn mark_predecessors_in<S: Marks, const BISECT: bool>(
        &self,
        x: u64,
        q: &[u32],
        bite_rows: Range<usize>,
        first_cap: u32,
        sink: &S,
    ) {
        let (lo, hi) = (sink.lo(), sink.hi());
        if hi <= x + 1 {
            return;
        }
        let m = self.m;
        let first = bite_rows.start;
        let mut prefix: u64 = (0..first).map(|k| self.term(k, q[k])).sum();
        for i in bite_rows {
            let cap = if i == first { first_cap } else { q[i - 1] };
            // Every predecessor through a bite at row i or later shares
            // q's rows 0..i: the interval [prefix, prefix + span(i, cap)).
            if prefix >= hi || prefix + self.span(i, cap) <= lo {
                break;
            }
            let j = q[i];
            if cap > j && (i == 0 || q[i - 1] != j) {
                let mut t = i + 1;
                while t < m && q[t] == j {
                    t += 1;
                }
                if j == 0 && t == m {
                    // Rows i.. are empty in q: every staircase with q's rows
                    // 0..i and a non-empty row i.
                    sink.set_range(prefix + self.term(i, 1), prefix + self.span(i, cap));
                } else if i + 1 == m {
                    // A bite in the last row: the longer last rows j+1..=cap
                    // are consecutive ranks (term(m−1, r) = r).
                    sink.set_range(x + 1, x + u64::from(cap - j) + 1);
                } else {
                    let base = x - (self.colsum(j, t) - self.colsum(j, i));
                    let rest_min = self.colsum(j, t) - self.colsum(j, i + 1);
                    // The highest predecessor with row i = ri grows with ri:
                    // skip by bisection the ri whose predecessors all lie
                    // below the sink (a carry far below the window would
                    // otherwise try every length of row 0).
                    let reach = |ri: u32| {
                        base + self.term(i, ri) + self.colsum(ri, t) - self.colsum(ri, i + 1)
                    };
                    // (Only for the carry: inside a block the first length
                    // mostly reaches the sink already.)
                    let mut a = j + 1;
                    if BISECT && reach(a) < lo {
                        let mut b = cap + 1;
                        a += 1;
                        while a < b {
                            let mid = a + (b - a) / 2;
                            if reach(mid) < lo {
                                a = mid + 1;
                            } else {
                                b = mid;
                            }
                        }
                    }
                    for ri in a..=cap {
                        let acc = base + self.term(i, ri);
                        if acc + rest_min >= hi {
                            break;
                        }
                        let rest_max = self.colsum(ri, t) - self.colsum(ri, i + 1);
                        if acc + rest_max < lo {
                            continue;
                        }
                        if acc + rest_min >= lo && acc + rest_max < hi {
                            self.raise_run_all(i + 1, t, j, ri, acc, sink);
                        } else {
                            self.raise_run_in(i + 1, t, j, ri, acc, sink);
                        }
                    }
                }
            }
            prefix += self.term(i, q[i]);
        }
    }

    /// Chooses rows k..t in [j, top], non-increasing, and marks each result
    /// in the sink's range; `acc` holds the rank of every other row.
    pub(super) fn raise_run_in<S: Marks>(
        &self,
        k: usize,
        t: usize,
        j: u32,
        top: u32,
        acc: u64,
        sink: &S,
    ) {
        if k == t {
            sink.set(acc);
            return;
        }
        if t == self.m {
            if j == 0 {
                // Rows k.. free in [0, top]: one interval.
                sink.set_range(acc, acc + self.span(k, top));
                return;
            }
            if k + 1 == t {
                // The last row alone: term(m−1, v) = v, consecutive ranks.
                sink.set_range(acc + u64::from(j), acc + u64::from(top) + 1);
                return;
            }
        }
        let rest_min = self.colsum(j, t) - self.colsum(j, k + 1);
        for v in j..=top {
            let a = acc + self.term(k, v);
            if a + rest_min >= sink.hi() {
                break;
            }
            let rest_max = self.colsum(v, t) - self.colsum(v, k + 1);
            if a + rest_max < sink.lo() {
                continue;
            }
            if a + rest_min >= sink.lo() && a + rest_max < sink.hi() {
                self.raise_run_all(k + 1, t, j, v, a, sink);
            } else {
                self.raise_run_in(k + 1, t, j, v, a, sink);
            }
        }
    }

    /// [`ChompBox::raise_run_in`] where every result is known to lie in the
    /// sink's range: no clipping.
    pub(super) fn raise_run_all<S: Marks>(
        &self,
        k: usize,
        t: usize,
        j: u32,
        top: u32,
        acc: u64,
        sink: &S,
    ) {
        if k == t {
            sink.set_unclipped(acc);
            return;
        }
        if t == self.m {
            if j == 0 {
                sink.set_range(acc, acc + self.span(k, top));
                return;
            }
            if k + 1 == t {
                sink.set_range(acc + u64::from(j), acc + u64::from(top) + 1);
                return;
            }
        }
        if k + 1 == t {
            let row = &self.term[k * (self.n + 1)..(k + 1) * (self.n + 1)];
            for &tv in &row[j as usize..=top as usize] {
                sink.set_unclipped(acc + tv);
            }
            return;
        }
        // Rows k..t − 3 by an odometer (no calls), each setting of them
        // followed by the last three rows as three loops.
        let d = t - 2 - k;
        if d > ODOMETER {
            let row = &self.term[k * (self.n + 1)..(k + 1) * (self.n + 1)];
            for v in j..=top {
                self.raise_run_all(k + 1, t, j, v, acc + row[v as usize], sink);
            }
            return;
        }
        if d == 0 {
            self.last_two_rows(k, j, top, acc, sink);
            return;
        }
        // The third row from the end as a loop too: more marks per turn
        // (the odometer's turns were a quarter of the time with two).
        let third = &self.term[(t - 3) * (self.n + 1)..(t - 2) * (self.n + 1)];
        let mut odo = Odometer::new(self, k, d - 1, j, top, acc);
        loop {
            let a = odo.acc();
            for v in j..=odo.cap() {
                self.last_two_rows(t - 2, j, v, a + third[v as usize], sink);
            }
            if !odo.advance() {
                return;
            }
        }
    }

    /// Rows r and r + 1 chosen in [j, top], non-increasing, each result
    /// `acc` plus their rank terms marked (known to lie in the sink's range).
    #[inline(always)]
    pub(super) fn last_two_rows<S: Marks>(&self, r: usize, j: u32, top: u32, acc: u64, sink: &S) {
        let n1 = self.n + 1;
        let row = &self.term[r * n1..(r + 1) * n1];
        if r + 2 == self.m {
            // The last row's ranks are consecutive.
            for v in j..=top {
                let a = acc + row[v as usize];
                sink.set_range(a + u64::from(j), a + u64::from(v) + 1);
            }
        } else {
            let next = &self.term[(r + 1) * n1..(r + 2) * n1];
            for v in j..=top {
                let a = acc + row[v as usize];
                for &tv in &next[j as usize..=v as usize] {
                    sink.set_unclipped(a + tv);
                }
            }
        }
    }

    /// Every legal bite of `s` with the rank of the staircase it leaves, in
    /// `(row, col)` order (`s.squares() − 1` entries).
    ///
    /// # Errors
    /// [`ChompError::OutsideBox`] if `s` does not fit in the box.
    pub fn children(&self, s: &Staircase) -> Result<Vec<(Bite, u64)>, ChompError> {
        let rows = self.padded(s)?;
        let mut out = Vec::new();
        self.children_until(&rows, |bite, y| {
            out.push((bite, y));
            false
        });
        Ok(out)
    }
}
