//! Solving a window: its layers of blocks, each block scanned rank by rank,
//! the counts by number of squares.

use super::*;

impl ChompBox {
    /// Number of staircases of the rows `k..m` with no row above `cap`:
    /// `C(cap + m−k, m−k)` (1 for k = m). The staircases sharing rows
    /// `0..k` fill a rank interval of this length.
    #[inline(always)]
    pub(super) fn span(&self, k: usize, cap: u32) -> u64 {
        self.span[k * (self.n + 1) + cap as usize]
    }

    /// Solves ranks `start..end` given every P-position below `start`, in
    /// ascending order, from `earlier_p` (read once; the carry keeps only
    /// those its blocks pull from, see [`ChompBox::solve_window_from`]).
    ///
    /// Uses `threads` threads (0 counts as 1); the result does not depend on
    /// it. Chained windows (`0..a`, `a..b`, …, each given the P-positions of
    /// all windows before) give the same P-positions as [`ChompBox::solve`].
    /// Memory: about [`window_memory`]`(m, n, end − start, threads)` bytes.
    ///
    /// # Panics
    /// If `start > end` or `end > len()`, or if `earlier_p` yields a rank
    /// that is not below `start` or not ascending (it is not read when the
    /// window starts at 0 or is empty).
    pub fn solve_window(
        &self,
        start: u64,
        end: u64,
        earlier_p: &mut dyn Iterator<Item = u64>,
        threads: usize,
    ) -> BoxWindow {
        self.solve_window_scan(start, end, earlier_p, threads, Scan::Auto)
    }

    /// Solves ranks `start..end`, reading from `earlier` only the
    /// P-positions below `start` that the window's blocks pull from (the
    /// carry, see the module documentation): the P-positions of the source
    /// blocks of its blocks (next to the window, and those its bites at the
    /// first rows reach: for a late part of a large box, millions of
    /// intervals and much of what lies below). Same result and memory as
    /// [`ChompBox::solve_window`].
    ///
    /// # Panics
    /// If `start > end` or `end > len()`.
    pub fn solve_window_from(
        &self,
        start: u64,
        end: u64,
        earlier: &mut dyn EarlierP,
        threads: usize,
    ) -> BoxWindow {
        self.solve_window_with(start, end, earlier, threads, TAIL, LOW, Scan::Auto)
    }

    /// [`ChompBox::solve_window`] with the blocks scanned as `scan` says
    /// (same result for every scan; [`Scan::Ranks`] is the rank-by-rank
    /// solver kept as an independent check and for benchmarks).
    ///
    /// # Panics
    /// As [`ChompBox::solve_window`].
    pub fn solve_window_scan(
        &self,
        start: u64,
        end: u64,
        earlier_p: &mut dyn Iterator<Item = u64>,
        threads: usize,
        scan: Scan,
    ) -> BoxWindow {
        let mut earlier = Ascending::new(earlier_p, start);
        self.solve_window_with(start, end, &mut earlier, threads, TAIL, LOW, scan)
    }

    /// [`ChompBox::solve_window`] with standard blocks of `tail` free rows
    /// and θ = `low` (see [`Layout`]; the tests use small values to have
    /// many layers and both kinds of blocks in small boxes).
    ///
    /// Long on purpose (a solver inner loop): the carry, the layer loop and
    /// the per-thread block sweep share the window's bitset, the thread
    /// pool and their progress in locals; split into functions they would
    /// pass a dozen of those around per block.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn solve_window_with(
        &self,
        start: u64,
        end: u64,
        earlier: &mut dyn EarlierP,
        threads: usize,
        tail: usize,
        low: u32,
        scan: Scan,
    ) -> BoxWindow {
        let scan = scan.resolve(self.m, self.n);
        assert!(start <= end, "window {start}..{end} is reversed");
        assert!(
            end <= self.len,
            "window end {end} beyond the box's {}",
            self.len
        );
        let m = self.m;
        let words = (end - start).div_ceil(64) as usize;
        let mut marks = vec![0u64; words];
        advise_huge_pages(&mut marks);
        // SAFETY: same size and alignment (checked above); the view lives
        // while `marks` is borrowed and every access goes through it.
        let bits: &[AtomicU64] =
            unsafe { std::slice::from_raw_parts(marks.as_ptr().cast::<AtomicU64>(), words) };
        let t_n = threads.clamp(1, words.max(1));

        let lay = Layout::new(self, tail, low);
        let lay = &lay;
        let k_top = lay.k;
        let sizes = m * self.n + 1;
        let layers = lay.layers();
        let std_table = self.size_table(m - k_top, self.n as u32);
        let (key_lo, key_hi) = if start < end {
            let mut r = vec![0u32; m];
            self.unrank(start, &mut r);
            let a = lay.block_key(&r);
            self.unrank(end - 1, &mut r);
            (a, lay.block_key(&r))
        } else {
            (0, 0)
        };
        let dir_len = if start < end {
            (key_hi - key_lo + 1) as usize
        } else {
            0
        };
        let mut dir_words = vec![0u64; dir_len];
        // SAFETY: as for `bits`.
        let dir: &[AtomicU64] = unsafe {
            std::slice::from_raw_parts(dir_words.as_mut_ptr().cast::<AtomicU64>(), dir_len)
        };
        assert!(
            ((layers * t_n) as u64) < 1 << 24,
            "an arena number fits the directory's 24 bits"
        );
        // Phase 1, the carry: the P-positions of the source blocks below the
        // window, read once, a chunk at a time, and pulled by every block of
        // the window; those of the block the window starts in, kept.
        let straddle = self.carry(lay, start, end, key_lo, bits, t_n, earlier);
        let arenas: Vec<OnceLock<Vec<u32>>> = (0..layers * t_n).map(|_| OnceLock::new()).collect();
        let claimed: Vec<AtomicUsize> = (0..layers).map(|_| AtomicUsize::new(0)).collect();
        let barrier = Barrier::new(t_n);
        let cx = Ctx {
            start,
            end,
            bits,
            dir,
            key_lo,
            arenas: &arenas,
            below_keys: &[],
            below_entries: &[],
            straddle: &straddle,
        };
        let prefix_terms = match scan {
            Scan::Prefixes => self.prefix_terms(),
            _ => Vec::new(),
        };
        let prefix_terms = &prefix_terms;
        let (cx, barrier, claimed, std_table) = (&cx, &barrier, &claimed, &std_table);
        let work = move |t: usize| -> Counts {
            let mut counts = Counts {
                positions: vec![0; sizes],
                p: vec![0; sizes],
                std_blocks: vec![0; layers * (self.n + 1)],
                low_blocks: vec![0; lay.low_len()],
            };
            let mut rows = vec![0u32; m];
            let mut block_rows = vec![0u32; m];
            let mut scratch = Scratch::default();
            let mut masks = PrefixMasks::default();
            let mut buf: Vec<u64> = Vec::new();
            for (layer, claimed) in claimed.iter().enumerate().skip(lay.first_layer()) {
                let mut arena: Vec<u32> = Vec::new();
                let arena_id = layer * t_n + t;
                // Every thread walks the layer's blocks in rank order and
                // solves the ones it claims: block sizes vary a lot, so a
                // thread that is done asks for the next one.
                let mut index = 0usize;
                let mut next = claimed.fetch_add(1, Relaxed);
                lay.each_block(
                    self,
                    layer as u32,
                    start,
                    end,
                    &mut rows,
                    &mut |blk: &Block, rows: &[u32]| {
                        index += 1;
                        if index - 1 == next {
                            next = claimed.fetch_add(1, Relaxed);
                            block_rows[..blk.k].copy_from_slice(&rows[..blk.k]);
                            self.solve_block(
                                lay,
                                blk,
                                &mut block_rows,
                                cx,
                                std_table.is_some(),
                                &mut counts,
                                &mut arena,
                                arena_id,
                                &mut scratch,
                                &mut buf,
                                (scan == Scan::Prefixes).then_some((&prefix_terms[..], &mut masks)),
                            );
                        }
                    },
                );
                arena.shrink_to_fit();
                cx.arenas[arena_id]
                    .set(arena)
                    .expect("each arena is set once");
                barrier.wait();
            }
            counts
        };
        let work = &work;
        let all: Vec<Counts> = std::thread::scope(|sc| {
            let handles: Vec<_> = (1..t_n).map(|t| sc.spawn(move || work(t))).collect();
            let mut out = vec![work(0)];
            out.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().expect("window thread panicked")),
            );
            out
        });
        drop(arenas);
        drop(dir_words);

        let mut positions_by_size = vec![0u64; sizes];
        let mut p_by_size = vec![0u64; sizes];
        for c in &all {
            for s in 0..sizes {
                positions_by_size[s] += c.positions[s];
                p_by_size[s] += c.p[s];
            }
            if let Some(table) = &std_table {
                let width = (m - k_top) * self.n + 1;
                for p in 0..layers {
                    for cap in 0..=self.n {
                        let nb = c.std_blocks[p * (self.n + 1) + cap];
                        if nb > 0 {
                            for d in 0..width {
                                positions_by_size[p + d] += nb * table[cap * width + d];
                            }
                        }
                    }
                }
            }
        }
        let mut low_blocks = vec![0u64; lay.low_len()];
        for c in &all {
            for (a, b) in low_blocks.iter_mut().zip(&c.low_blocks) {
                *a += b;
            }
        }
        self.add_low_sizes(lay, &low_blocks, &mut positions_by_size);
        if start == 0 && end > 0 {
            positions_by_size[0] -= 1; // the empty board was counted with its block
        }
        // Unmarked = P-position: the marks become the P-bits in place.
        for w in marks.iter_mut() {
            *w = !*w;
        }
        if start == 0 && words > 0 {
            marks[0] &= !1; // the empty board
        }
        if !(end - start).is_multiple_of(64) {
            let keep = (end - start) % 64;
            marks[words - 1] &= (1u64 << keep) - 1;
        }
        BoxWindow {
            start,
            end,
            p_bits: marks,
            positions_by_size,
            p_by_size,
        }
    }

    /// Adds to `positions` (by number of squares) the staircases of the full
    /// low blocks counted in `low` (see [`Layout::low_index`]): a low block
    /// at depth k with `sum` prefix squares holds, for every d, the
    /// staircases of m − k rows with no row above θ − 1 and d squares. Those
    /// counts are built one row at a time up to m rows (θ·(r(θ−1)+1) numbers
    /// for r rows), not kept per depth.
    pub(super) fn add_low_sizes(&self, lay: &Layout, low: &[u64], positions: &mut [u64]) {
        let (m, k_top) = (self.m, lay.k);
        if k_top == 0 || low.iter().all(|&c| c == 0) {
            return;
        }
        let top = lay.low as usize - 1;
        // f[c][d] for r rows, c ≤ θ − 1: f_r(c, d) = f_r(c − 1, d) +
        // f_{r−1}(c, d − c).
        let mut f: Vec<Vec<u64>> = vec![vec![1]; top + 1];
        for r in 1..=m {
            let width = r * top + 1;
            let mut g: Vec<Vec<u64>> = Vec::with_capacity(top + 1);
            for c in 0..=top {
                let mut row = vec![0u64; width];
                for (d, x) in row.iter_mut().enumerate() {
                    let below = if c > 0 { g[c - 1][d] } else { 0 };
                    let prev = if d >= c {
                        f[c].get(d - c).copied().unwrap_or(0)
                    } else {
                        0
                    };
                    *x = below + prev;
                }
                g.push(row);
            }
            f = g;
            if r + k_top > m {
                let k = m - r;
                for sum in k as u32 * lay.low..=k as u32 * self.n as u32 {
                    let nb = low[lay.low_index(k, sum)];
                    if nb > 0 {
                        for (d, &x) in f[top].iter().enumerate() {
                            positions[sum as usize + d] += nb * x;
                        }
                    }
                }
            }
        }
    }

    /// `table[cap * (rows·maxcap + 1) + d]` for cap ≤ `maxcap`: staircases
    /// of `rows` rows with no row above `cap` and `d` squares; `None` if
    /// larger than [`MAX_TAIL_TABLE`].
    pub(super) fn size_table(&self, rows: usize, maxcap: u32) -> Option<Vec<u64>> {
        let maxcap = maxcap as usize;
        let width = rows * maxcap + 1;
        if (maxcap + 1).checked_mul(width)? > MAX_TAIL_TABLE {
            return None;
        }
        // f[c][d] for `r` rows, built up one row at a time:
        // f_r(c, d) = Σ_{v ≤ c} f_{r−1}(v, d − v).
        let mut f = vec![0u64; (maxcap + 1) * width];
        for c in 0..=maxcap {
            f[c * width] = 1;
        }
        for _ in 0..rows {
            let mut g = vec![0u64; (maxcap + 1) * width];
            for c in 0..=maxcap {
                for d in 0..width {
                    let mut s = 0;
                    for v in 0..=c.min(d) {
                        s += f[v * width + d - v];
                    }
                    g[c * width + d] = s;
                }
            }
            f = g;
        }
        Some(f)
    }

    /// Solves one block within the window: marks what it pulls from the
    /// blocks its bites leave for, then scans it upwards (an unmarked rank is
    /// a P-position) marking the predecessors inside the block, and files
    /// its P-positions (offsets from its first rank) under its key.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn solve_block(
        &self,
        lay: &Layout,
        blk: &Block,
        rows: &mut [u32],
        cx: &Ctx<'_>,
        std_table: bool,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        arena_id: usize,
        scratch: &mut Scratch,
        buf: &mut Vec<u64>,
        prefix_scan: Option<(&[u64], &mut PrefixMasks)>,
    ) {
        let m = self.m;
        let (k, cap, base) = (blk.k, blk.cap, blk.base);
        let block_end = base + self.span(k, cap);
        let a = base.max(cx.start);
        let b = block_end.min(cx.end);
        let full = a == base && b == block_end;
        if full && k < lay.k {
            counts.low_blocks[lay.low_index(k, blk.sum)] += 1;
        } else if full && std_table {
            counts.std_blocks[blk.layer as usize * (self.n + 1) + cap as usize] += 1;
        } else {
            // Count the block's staircases in the window one by one.
            self.unrank_tail(a - base, k, cap, rows);
            let mut s = rows.iter().map(|&r| r as usize).sum::<usize>();
            for y in a..b {
                counts.positions[s] += 1;
                if y + 1 < b {
                    s = self.advance_tail(rows, k, cap, s);
                }
            }
        }
        let start = cx.start;
        let (wa, wb) = (
            ((a - start) / 64) as usize,
            ((b.max(a + 1) - 1 - start) / 64) as usize,
        );
        // The block's words, copied out: every mark below lands in them.
        let bits = cx.bits;
        buf.clear();
        buf.reserve_exact(wb + 1 - wa);
        buf.extend(bits[wa..=wb].iter().map(|w| w.load(Relaxed)));
        let origin = start + 64 * wa as u64;
        let local = Local {
            words: Cell::from_mut(&mut buf[..]).as_slice_of_cells(),
            origin,
            lo: a,
            hi: b,
        };
        if k > 0 {
            self.pull(lay, &rows[..k], cap, base, full, cx, &local, scratch);
        }
        // Filed only where another block may pull them (a box of one block
        // files nothing).
        let file = lay.k > 0;
        let head = arena.len();
        if file {
            arena.push(0);
        }
        if blk.key == cx.key_lo && base < cx.start {
            // The block the window starts in: its P-positions below the
            // window (the carry's) mark their predecessors through bites
            // at its free rows, and are filed first, for the blocks that
            // pull from it.
            for &o in cx.straddle {
                self.unrank_tail(u64::from(o), k, cap, rows);
                self.mark_predecessors_in::<_, true>(base + u64::from(o), rows, k..m, cap, &local);
            }
            if file {
                arena.extend_from_slice(cx.straddle);
            }
        }
        let words = local.words;
        if let Some((terms, masks)) = prefix_scan
            && k + 2 <= m
        {
            self.scan_prefixes(
                terms, k, cap, base, a, b, rows, &local, counts, arena, file, masks,
            );
        } else {
            self.scan_ranks(a, b, k, cap, base, rows, &local, counts, arena, file);
        }
        // Back into the window's bitset: the first and last words may hold
        // ranks of other blocks of this layer (solved at the same time), so
        // they are ORed atomically; the words between are this block's alone.
        let last = words.len() - 1;
        for (e, w) in words.iter().enumerate() {
            if e == 0 || e == last {
                bits[wa + e].fetch_or(w.get(), Relaxed);
            } else {
                bits[wa + e].store(w.get(), Relaxed);
            }
        }
        let found = arena.len().saturating_sub(head + 1);
        if found == 0 {
            arena.truncate(head);
        } else {
            arena[head] = found as u32;
            cx.dir[(blk.key - cx.key_lo) as usize]
                .store(((arena_id as u64) << 40) | (head as u64 + 1), Relaxed);
        }
    }

    /// The rank scan of a block (ranks `a..b`, free rows `k..m` at most
    /// `cap`, first rank `base`): an unmarked rank is a P-position; it is
    /// counted, filed (if `file`) and marks all its predecessors in the block.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_ranks(
        &self,
        a: u64,
        b: u64,
        k: usize,
        cap: u32,
        base: u64,
        rows: &mut [u32],
        local: &Local<'_>,
        counts: &mut Counts,
        arena: &mut Vec<u32>,
        file: bool,
    ) {
        let m = self.m;
        let (words, origin) = (local.words, local.origin);
        let mut y = a.max(1);
        while y < b {
            let i = y - origin;
            let w = (i / 64) as usize;
            let free = !words[w].get() >> (i % 64);
            if free == 0 {
                y = origin + 64 * (w as u64 + 1);
                continue;
            }
            y += u64::from(free.trailing_zeros());
            if y >= b {
                break;
            }
            self.unrank_tail(y - base, k, cap, rows);
            let s = rows.iter().map(|&r| r as usize).sum::<usize>();
            counts.p[s] += 1;
            if file {
                arena.push((y - base) as u32);
            }
            self.mark_predecessors_in::<_, false>(y, rows, k..m, cap, local);
            y += 1;
        }
    }

    /// `T(j, r) = C(r + m−2−j, m−1−j)` for j < m − 1, `n + 1` per row: the
    /// rank terms of an (m−1)-row box. The settings of rows `i+1..m−1` (the
    /// prefix rows after i) in rank order are numbered `Σ_{j>i} T(j, r_j)`,
    /// whatever i is.
    pub(super) fn prefix_terms(&self) -> Vec<u64> {
        let (m, n) = (self.m, self.n);
        let mut t = Vec::with_capacity((m - 1) * (n + 1));
        for j in 0..m - 1 {
            for r in 0..=n {
                t.push(binom((r + m - 2 - j) as u64, (m - 1 - j) as u64));
            }
        }
        t
    }
}
