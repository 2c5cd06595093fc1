//! The carry of a window: the P-positions below it that its blocks pull
//! from, read once by rank interval.
//!
//! Every predecessor in the window of a P-position x below it is reached
//! by a bite of the window's staircase at some row: at a prefix row of its
//! block, x lies in one of the block's *source blocks* (see
//! [`ChompBox::pull`]); at a free row, x lies in the same block, which
//! then starts below the window (the block the window starts in, the
//! *straddling* block). So a window needs from below only the P-positions
//! of the source blocks below it and of the straddling block's ranks below
//! `start`. The carry reads those intervals once, in ascending order
//! ([`EarlierP`]), a chunk at a time, and after each chunk every block of
//! the window pulls from it as it pulls from the blocks inside the window.
//!
//! **Cost.** The marks are those a whole-box solve makes through the same
//! bites, each made once, by the thread that owns the block: no thread
//! repeats another's work. What grows with the part's number is only the
//! reading: sources through bites at the late prefix rows lie next to the
//! window, but those through bites at the first rows (the first row cut to
//! a shorter one, the rest clipped to it) cover, for a late part of a large
//! box, much of what lies below. Reading is a bit a rank of the earlier
//! parts' bitsets, decompressed on all cores, and a few nanoseconds a
//! P-position.

use super::*;

/// The P-positions below a window, read by rank interval: what
/// [`ChompBox::solve_window_from`] asks of the earlier parts of a box.
pub trait EarlierP {
    /// Calls `found(x)` for the P-positions `x` of `ranges` (ascending,
    /// disjoint, all below the window), in ascending order. It may also call
    /// it, in ascending order, for P-positions outside `ranges` (they are
    /// ignored). On a read error the implementation stops calling and
    /// reports it to its own caller (the window's result is then not used).
    fn each_in(&mut self, ranges: &[Range<u64>], found: &mut dyn FnMut(u64));
}

/// [`EarlierP`] over an iterator of every P-position below `start`,
/// ascending (read whole, as [`ChompBox::solve_window`] takes them).
pub(super) struct Ascending<'a> {
    iter: &'a mut dyn Iterator<Item = u64>,
    start: u64,
}

impl<'a> Ascending<'a> {
    pub(super) fn new(iter: &'a mut dyn Iterator<Item = u64>, start: u64) -> Self {
        Ascending { iter, start }
    }
}

impl EarlierP for Ascending<'_> {
    /// # Panics
    /// If a rank is not below the window start or the ranks do not ascend.
    fn each_in(&mut self, _ranges: &[Range<u64>], found: &mut dyn FnMut(u64)) {
        let mut last = None;
        for x in &mut *self.iter {
            assert!(
                x < self.start,
                "earlier P-position {x} not below the window start {}",
                self.start
            );
            assert!(last < Some(x), "earlier P-positions not ascending at {x}");
            last = Some(x);
            found(x);
        }
    }
}

/// Fewest offsets the carry reads before its blocks pull (4 MiB; in the
/// unit tests 64, so that small windows pull in many chunks).
const MIN_CARRY_CHUNK: u64 = if cfg!(test) { 64 } else { 1 << 20 };

/// Pushes `v`, growing `arena` by doubling but not past `budget` plus one
/// block's worth while it stays under that (a chunk may end a block past
/// `budget`), so that the chunk's memory stays what the plan counts.
#[inline(always)]
fn push_within(arena: &mut Vec<u32>, v: u32, budget: usize) {
    if arena.len() == arena.capacity() {
        let cap = arena.capacity();
        let limit = budget + (1 << 20);
        let more = if cap < limit {
            cap.max(1 << 16).min(limit - cap)
        } else {
            cap.max(1 << 16)
        };
        arena.reserve_exact(more);
    }
    arena.push(v);
}

impl ChompBox {
    /// The carry of the window `start..end` (see the module documentation):
    /// reads from `earlier` the P-positions of the source blocks below the
    /// window, a chunk of at most about `(end − start) / 64` offsets at a
    /// time (the allowance [`window_memory`] gives the filed P-positions,
    /// free until the blocks are solved, less the sources' 36 bytes each),
    /// and after each chunk every block of the window pulls from it on
    /// `threads` threads, into `bits`.
    /// Returns the offsets of the P-positions below `start` of the block
    /// holding `start` (from its first rank, ascending; empty if the window
    /// starts a block). `key_lo`: that block's key.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn carry(
        &self,
        lay: &Layout,
        start: u64,
        end: u64,
        key_lo: u64,
        bits: &[AtomicU64],
        threads: usize,
        earlier: &mut dyn EarlierP,
    ) -> Vec<u32> {
        let mut straddle = Vec::new();
        if start == 0 || start >= end {
            return straddle;
        }
        // (key, first rank, ranks) of every source block below the window.
        let src = self.sources_below(lay, start, end, key_lo);
        // The straddling block: its first rank, from the rows of `start`.
        let mut rows = vec![0u32; self.m];
        self.unrank(start, &mut rows);
        let depth = rows
            .iter()
            .take(lay.k)
            .position(|&r| r < lay.low)
            .unwrap_or(lay.k);
        let base: u64 = (0..depth).map(|l| self.term(l, rows[l])).sum();
        let mut ranges: Vec<Range<u64>> = src.iter().map(|&(_, a, len)| a..a + len).collect();
        debug_assert!(ranges.windows(2).all(|w| w[0].end <= w[1].start));
        debug_assert!(ranges.last().is_none_or(|r| r.end <= base));
        ranges.push(base..start);
        let keys: Vec<u64> = src.iter().map(|s| s.0).collect();
        let n_src = src.len();
        drop(src);
        // The offsets of a chunk get the window's allowance for filed
        // P-positions (`(end − start) / 16` bytes, free until the blocks
        // file theirs) less what the sources take: a range, a key, a head
        // and a chunk's entry each (36 bytes).
        let allowance = (end - start) / 16;
        let budget =
            (allowance.saturating_sub(36 * n_src as u64) / 4).max(MIN_CARRY_CHUNK) as usize;
        let mut arena: Vec<u32> = Vec::new();
        let mut heads = vec![u32::MAX; n_src];
        let mut first = 0usize;
        let mut r = 0usize;
        let pulled = |arena: &mut Vec<u32>, heads: &[u32], a: usize, b: usize| {
            let entries: Vec<u64> = heads[a..b]
                .iter()
                .map(|&h| if h == u32::MAX { 0 } else { u64::from(h) + 1 })
                .collect();
            let cell = OnceLock::new();
            cell.set(std::mem::take(arena)).expect("a new cell");
            self.pull_carry(
                lay,
                start,
                end,
                key_lo,
                bits,
                threads,
                &keys[a..b],
                &entries,
                &cell,
            );
            *arena = cell.into_inner().expect("set above");
            arena.clear();
        };
        earlier.each_in(&ranges, &mut |x| {
            while r < ranges.len() && x >= ranges[r].end {
                r += 1;
            }
            if r == ranges.len() || x < ranges[r].start {
                return;
            }
            let o = u32::try_from(x - ranges[r].start).expect("a block fits u32 offsets");
            if r == n_src {
                straddle.push(o);
                return;
            }
            if heads[r] == u32::MAX {
                if arena.len() >= budget && r > first {
                    pulled(&mut arena, &heads, first, r);
                    first = r;
                }
                heads[r] = u32::try_from(arena.len()).expect("a chunk fits 2³² offsets");
                push_within(&mut arena, 0, budget);
            }
            arena[heads[r] as usize] += 1;
            push_within(&mut arena, o, budget);
        });
        if !arena.is_empty() {
            pulled(&mut arena, &heads, first, n_src);
        }
        straddle
    }

    /// Every block of the window `start..end` pulls from the source blocks
    /// `keys` (ascending, all below `key_lo`, with their `entries` into
    /// `arena`), on `threads` threads, into `bits`. The blocks (of every
    /// layer: the carry's marks depend only on what lies below the window)
    /// are claimed one at a time; a block's middle words are its own and
    /// are stored, its first and last (which other blocks may share) ORed
    /// atomically.
    #[allow(clippy::too_many_arguments)]
    fn pull_carry(
        &self,
        lay: &Layout,
        start: u64,
        end: u64,
        key_lo: u64,
        bits: &[AtomicU64],
        threads: usize,
        keys: &[u64],
        entries: &[u64],
        arena: &OnceLock<Vec<u32>>,
    ) {
        let arenas = std::slice::from_ref(arena);
        let cx = Ctx {
            start,
            end,
            bits,
            dir: &[],
            key_lo,
            arenas,
            below_keys: keys,
            below_entries: entries,
            straddle: &[],
        };
        let claimed = AtomicUsize::new(0);
        let (cx, claimed) = (&cx, &claimed);
        let work = move || {
            let mut rows = vec![0u32; self.m];
            let mut scratch = Scratch::default();
            let mut buf: Vec<u64> = Vec::new();
            let mut index = 0usize;
            let mut next = claimed.fetch_add(1, Relaxed);
            {
                lay.each_block(self, ANY_LAYER, start, end, &mut rows, &mut |blk, rows| {
                    index += 1;
                    if index - 1 != next {
                        return;
                    }
                    next = claimed.fetch_add(1, Relaxed);
                    if blk.k == 0 {
                        return;
                    }
                    let block_end = blk.base + self.span(blk.k, blk.cap);
                    let (a, b) = (blk.base.max(start), block_end.min(end));
                    let full = a == blk.base && b == block_end;
                    let (wa, wb) = (((a - start) / 64) as usize, ((b - 1 - start) / 64) as usize);
                    buf.clear();
                    buf.resize(wb + 1 - wa, 0);
                    let local = Local {
                        words: Cell::from_mut(&mut buf[..]).as_slice_of_cells(),
                        origin: start + 64 * wa as u64,
                        lo: a,
                        hi: b,
                    };
                    self.pull(
                        lay,
                        &rows[..blk.k],
                        blk.cap,
                        blk.base,
                        full,
                        cx,
                        &local,
                        &mut scratch,
                    );
                    let last = wb - wa;
                    for (e, w) in buf.iter().enumerate() {
                        if *w == 0 {
                            continue;
                        }
                        if e == 0 || e == last {
                            bits[wa + e].fetch_or(*w, Relaxed);
                        } else {
                            let v = bits[wa + e].load(Relaxed);
                            bits[wa + e].store(v | *w, Relaxed);
                        }
                    }
                });
            }
        };
        let work = &work;
        std::thread::scope(|sc| {
            for _ in 1..threads {
                sc.spawn(work);
            }
            work();
        });
    }

    /// `(key, first rank, ranks)` of the source blocks below `key_lo` of
    /// every block meeting `start..end`, ascending, each once: the blocks
    /// [`ChompBox::pull`] reads, found by the same rows and columns. The
    /// blocks are walked in rank order, where neighbours share most of
    /// their sources: a source is kept only if it differs from the last
    /// one kept for the same row and column.
    fn sources_below(
        &self,
        lay: &Layout,
        start: u64,
        end: u64,
        key_lo: u64,
    ) -> Vec<(u64, u64, u64)> {
        let theta = lay.low;
        let n1 = self.n + 1;
        let mut src = Vec::new();
        // The last key kept for (row, column), column n + 1 for the low block.
        let mut last = vec![u64::MAX; lay.k * (n1 + 1)];
        let mut dedup_at = 1 << 16;
        let mut rows = vec![0u32; self.m];
        let (mut sums, mut pt) = (vec![0u64; lay.k + 1], vec![0u64; lay.k + 1]);
        lay.each_block(self, ANY_LAYER, start, end, &mut rows, &mut |blk, rows| {
            let k = blk.k;
            let pre = &rows[..k];
            for l in 0..k {
                sums[l + 1] = sums[l] + lay.d(l, pre[l]);
                pt[l + 1] = pt[l] + self.term(l, pre[l]);
            }
            let span = |last: u32| {
                if k == lay.k {
                    self.span(k, last)
                } else {
                    self.span(k, theta - 1)
                }
            };
            for i in 0..k {
                let mut j = i;
                let seen = &mut last[i * (n1 + 1)..(i + 1) * (n1 + 1)];
                for c in (theta..pre[i]).rev() {
                    while j < k && pre[j] > c {
                        j += 1;
                    }
                    let key = sums[i] + lay.cold(c, j) - lay.cold(c, i) + sums[k] - sums[j];
                    if key < key_lo && seen[c as usize] != key {
                        seen[c as usize] = key;
                        let base = pt[i] + self.colsum(c, j) - self.colsum(c, i) + pt[k] - pt[j];
                        let last = if j == k { c } else { pre[k - 1] };
                        src.push((key, base, span(last)));
                    }
                }
                if sums[i] < key_lo && seen[n1] != sums[i] {
                    seen[n1] = sums[i];
                    src.push((sums[i], pt[i], self.span(i, theta - 1)));
                }
            }
            if src.len() >= dedup_at {
                src.sort_unstable();
                src.dedup();
                dedup_at = (2 * src.len()).max(1 << 16);
            }
        });
        src.sort_unstable();
        src.dedup();
        src.shrink_to_fit();
        src
    }
}
