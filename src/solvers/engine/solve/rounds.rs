//! The bulk-synchronous rounds of a layer split over ranks
//! ([`super::solve_part`]): how the ranks agree (depths, failures, the
//! checkpoint to resume from), and how an update for a position of
//! another rank's part is queued, traded and applied.

use super::*;

/// The newest round every rank has a checkpoint of (for cells of this
/// width), if any.
pub(super) fn resume_round(
    ex: &mut dyn Exchange,
    ck: &dyn Checkpoints,
    wide: bool,
    name: &str,
) -> Result<Option<u32>, SolveError> {
    let net = |why| SolveError::Exchange {
        layer: name.to_string(),
        why,
    };
    let saved = ck.saved(wide);
    // The least over the ranks of each one's newest (0: none).
    let newest = saved.last().map_or(0, |&r| u64::from(r) + 1);
    let least = u64::MAX - ex.max_all(&[u64::MAX - newest]).map_err(net)?[0];
    if least == 0 {
        return Ok(None);
    }
    let r = (least - 1) as u32;
    let missing = u64::from(!saved.contains(&r));
    Ok((ex.max_all(&[missing]).map_err(net)?[0] == 0).then_some(r))
}

impl<G: LayeredGame, C: Cells + ?Sized> Solver<'_, G, C> {
    pub(super) fn fail(&self, rank: u64, why: String) {
        self.failed.store(true, Relaxed);
        let mut b = self.broken.lock().unwrap_or_else(|e| e.into_inner());
        if b.as_ref().is_none_or(|(r, _)| rank < *r) {
            *b = Some((rank, why));
        }
    }

    /// The ranks agree: the deepest depth any has flagged, or the error
    /// every rank returns when one failed (a depth overflow anywhere makes
    /// every rank report it, so that all solve again with wider cells).
    pub(super) fn agree(
        &self,
        ex: &mut dyn Exchange,
        name: &str,
        due: bool,
    ) -> Result<(u32, bool), SolveError> {
        let over = self.overflow.load(Relaxed);
        let failed = self.failed.load(Relaxed);
        let code = if over > 0 { 2 } else { u64::from(failed) };
        let mine = [
            u64::from(self.deepest_marked.load(Relaxed)),
            code,
            over,
            u64::from(due),
        ];
        let all = if ex.ranks() == 1 {
            mine.to_vec()
        } else {
            ex.max_all(&mine).map_err(|why| SolveError::Exchange {
                layer: name.to_string(),
                why,
            })?
        };
        match all[1] {
            0 => Ok((all[0] as u32, all[3] == 1)),
            2 => Err(SolveError::DepthOverflow {
                layer: name.to_string(),
                depth: all[2] as u32,
            }),
            _ if !failed => Err(SolveError::OtherRank {
                layer: name.to_string(),
            }),
            _ => {
                let b = self.broken.lock().unwrap_or_else(|e| e.into_inner());
                let (rank, why) = b.clone().unwrap_or((0, "unknown".into()));
                Err(SolveError::Contract {
                    layer: name.to_string(),
                    rank,
                    why,
                })
            }
        }
    }

    /// The part's state as bytes: cells, counters, pending bits.
    ///
    /// # Safety
    /// No thread may write the cells, counters or bits while the slices
    /// live.
    pub(super) unsafe fn state(&self) -> [&[u8]; 3] {
        let cells = self.len as usize * std::mem::size_of::<C::Int>();
        // SAFETY: the views are plain memory of these lengths (atomics
        // have the layout of their integers); nobody writes (the caller).
        unsafe {
            [
                std::slice::from_raw_parts(std::ptr::from_ref(self.values).cast::<u8>(), cells),
                std::slice::from_raw_parts(
                    self.counters.as_ptr().cast::<u8>(),
                    self.counters.len(),
                ),
                std::slice::from_raw_parts(
                    self.pending.as_ptr().cast::<u8>(),
                    self.pending.len() * 8,
                ),
            ]
        }
    }

    /// Flags the depths of the block's pending positions (after a
    /// checkpoint is loaded).
    pub(super) fn mark_pending(&self, blk: u64) {
        let start = blk * BLOCK;
        for w in start / 64..(start + BLOCK).min(self.len).div_ceil(64) {
            let mut bits = self.pending[w as usize].load(Relaxed);
            while bits != 0 {
                let i = w * 64 + u64::from(bits.trailing_zeros());
                bits &= bits - 1;
                let v = self.values.load(i as usize);
                if v >= C::LOSS {
                    self.mark(i, v - C::LOSS);
                } else if v >= C::WIN {
                    self.mark(i, v - C::WIN);
                }
            }
        }
    }

    /// Runs `f` on the blocks of `todo` and trades the updates it queues
    /// for other ranks: whenever [`Exchange::batch_words`] are queued and
    /// at the end, as many trades on every rank (they agree on when to
    /// stop). Received updates are applied at depth `d`. One rank runs `f`
    /// on all blocks at once.
    pub(super) fn in_rounds(
        &self,
        ex: &mut dyn Exchange,
        job: &Job<G>,
        todo: &[u64],
        f: impl Fn(u64) + Sync,
        d: u32,
    ) -> Result<(), SolveError> {
        if ex.ranks() == 1 {
            par_blocks(job.threads, todo, f);
            return Ok(());
        }
        let slice = 16 * job.threads.max(1);
        let mut at = 0;
        let net = |why| SolveError::Exchange {
            layer: job.name.to_string(),
            why,
        };
        loop {
            while at < todo.len() && (self.queued.load(Relaxed) as usize) < ex.batch_words() {
                let end = (at + slice).min(todo.len());
                par_blocks(job.threads, &todo[at..end], &f);
                at = end;
            }
            let out: Outgoing = self
                .outbox
                .iter()
                .map(|m| std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner())))
                .collect();
            self.queued.store(0, Relaxed);
            let got: Vec<u64> = ex.exchange(out).map_err(net)?.concat();
            let chunks: Vec<u64> = (0..got.len().div_ceil(1 << 14) as u64).collect();
            par_blocks(job.threads, &chunks, |c| {
                let c = c as usize;
                for &w in &got[c << 14..((c + 1) << 14).min(got.len())] {
                    self.apply(w, d);
                }
            });
            let more = u64::from(at < todo.len());
            if ex.max_all(&[more]).map_err(net)?[0] == 0 {
                return Ok(());
            }
        }
    }

    /// Applies an update another rank sent, at depth `d`.
    pub(super) fn apply(&self, w: u64, d: u32) {
        let local = |r: u64| r.checked_sub(self.base).filter(|&i| i < self.len);
        match Update::unpack(w) {
            Some(Update::Count { rank, moves }) if local(rank).is_some() => {
                self.count_won_moves(rank - self.base, None, moves, d);
            }
            Some(Update::Win { rank }) if local(rank).is_some() => {
                self.win_parent(rank - self.base, d);
            }
            Some(Update::Set { rank, code }) if local(rank).is_some() => {
                self.values.store((rank - self.base) as usize, code);
            }
            _ => self.fail(
                self.base,
                format!("an update {w:#x} from another rank is not for this rank's part"),
            ),
        }
    }

    /// The index in this rank's part of layer rank `r`, if it owns it.
    #[inline]
    pub(super) fn local(&self, r: u64) -> Option<u64> {
        let i = r.wrapping_sub(self.base);
        (i < self.len).then_some(i)
    }

    /// Queues update `u` of layer rank `r` (another rank's) in `out`.
    pub(super) fn send(&self, out: &mut Outgoing, r: u64, u: Update) {
        let k = self.bounds.partition_point(|&b| b <= r) - 1;
        if out.is_empty() {
            out.resize(self.outbox.len(), Vec::new());
        }
        out[k].push(u.pack());
    }

    /// Moves a block's queued updates to the outbox.
    pub(super) fn post(&self, out: Outgoing) {
        for (k, v) in out.into_iter().enumerate() {
            if !v.is_empty() {
                self.queued.fetch_add(v.len() as u64, Relaxed);
                self.outbox[k]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(v);
            }
        }
    }
}

/// Solves `layer` split over `ranks` ranks that are threads of this
/// process (a [`Mesh`]), each with `threads` threads, trading whenever
/// `batch` updates are queued: the parts joined, which are the bytes of
/// [`super::solve_layer`]. For tests and benchmarks of the split.
///
/// # Errors
/// As [`super::solve_part`] (rank 0's error when several fail).
pub fn solve_in_mesh<G: LayeredGame>(
    game: &G,
    layer: usize,
    below: &[(usize, &[u8])],
    ranks: usize,
    threads: usize,
    batch: usize,
) -> Result<Vec<u8>, SolveError> {
    let mesh = Mesh::new(ranks, batch);
    let parts: Vec<Result<Vec<u8>, SolveError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|k| {
                let mut ex = mesh.rank(k);
                s.spawn(move || {
                    solve_part(game, layer, below, threads, &mut ex, &mut NoCheckpoints)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a rank of the mesh panicked"))
            .collect()
    });
    let mut out = Vec::new();
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}
