//! A layer split over ranks: each of N ranks (processes, or threads in a
//! test) owns a run of the layer's positions and solves it in
//! bulk-synchronous rounds ([`super::solve_part`]), trading the updates that
//! belong to other ranks through an [`Exchange`].
//!
//! The scheme is the distributed retrograde analysis of the field: Romein
//! and Bal ("Solving Awari with parallel retrograde analysis", IEEE
//! Computer 36(10), 2003) spread each database over the memories of many
//! processors and sent each update to the processor owning its position;
//! Irving's pentago solver (arXiv 1404.0743) exchanges blocks between MPI
//! ranks in the same way.
//!
//! **Parts.** Rank k owns ranks `bounds[k] .. bounds[k + 1]` of the layer
//! ([`part_bounds`]): an even split into whole blocks of
//! [`super::BLOCK`] positions.
//!
//! **Rounds.** One round per depth d, as in the one-process solve: every
//! rank takes its positions of depth d; an update for a parent it owns is
//! applied at once, any other is queued for the parent's owner. Queues are
//! traded ([`Exchange::exchange`]) whenever they pass
//! [`Exchange::batch_words`] and at the end of the round, and the ranks
//! agree ([`Exchange::max_all`]) on the deepest depth any of them holds and
//! on failures before the next round. An update makes a value of depth at
//! least d + 1, so applying it at any point of round d is what the
//! one-process solve does; the values, and so the bytes, are those of the
//! unsplit layer for any number of ranks.
//!
//! An update is one `u64` ([`Update`]): what it does (count a won move,
//! make a win, set a value), a count or value code, and the parent's rank.

use std::sync::{Barrier, Mutex};

/// Positions per block: the unit of a part ([`part_bounds`]) and of the
/// solver's flags ([`super::solve`]).
pub const BLOCK: u64 = 1 << 12;

/// The ranks of a split layer talking to each other, bulk-synchronously:
/// every rank makes the same sequence of calls.
pub trait Exchange {
    /// This rank's number, `0 … ranks − 1`.
    fn rank(&self) -> usize;

    /// The number of ranks (≥ 1).
    fn ranks(&self) -> usize;

    /// Sends `out[k]` to rank k for every k (`out.len() == ranks`; this
    /// rank's own entry is empty) and returns what every rank sent to this
    /// one, by sender.
    ///
    /// # Errors
    /// When the transport fails (a message lost, a rank gone): the text
    /// says what and where.
    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String>;

    /// The element-wise maximum of `x` over all ranks (every rank gives the
    /// same length).
    ///
    /// # Errors
    /// As [`Exchange::exchange`].
    fn max_all(&mut self, x: &[u64]) -> Result<Vec<u64>, String>;

    /// Updates a rank queues (all destinations together) before it trades
    /// them in the middle of a round: the bound on its message memory, 8
    /// bytes an update. Default 2²³ (64 MiB).
    fn batch_words(&self) -> usize {
        1 << 23
    }
}

/// Where a rank saves the state of its part between rounds and finds it
/// again after a crash ([`super::solve_part`]): at the start of a round
/// the part is quiescent (every update of the round before applied), and
/// its cells, counters and pending bits are the whole state. The ranks
/// checkpoint together, when any says one is [due](Checkpoints::due), and
/// resume from the newest round all of them saved.
pub trait Checkpoints {
    /// Called at the start of every round (progress, e.g. for `status`).
    fn round(&mut self, _round: u32) {}

    /// Whether this rank would save now (e.g. minutes since the last).
    fn due(&mut self) -> bool {
        false
    }

    /// Saves the state at the start of round `round` of a solve with
    /// `wide` cells: `parts` in order, whole or not at all (the previous
    /// checkpoint stays until [`Checkpoints::keep_from`]).
    ///
    /// # Errors
    /// When it cannot be written.
    fn save(&mut self, _wide: bool, _round: u32, _parts: &[&[u8]]) -> Result<(), String> {
        Err("this rank keeps no checkpoints".into())
    }

    /// The rounds saved whole for `wide` cells, in increasing order.
    fn saved(&self, _wide: bool) -> Vec<u32> {
        Vec::new()
    }

    /// Reads round `round`'s parts into `into` (their exact lengths).
    ///
    /// # Errors
    /// A missing or damaged checkpoint.
    fn load(&mut self, _wide: bool, _round: u32, _into: &mut [&mut [u8]]) -> Result<(), String> {
        Err("this rank keeps no checkpoints".into())
    }

    /// Forgets the rounds before `round` (every rank saved `round`).
    fn keep_from(&mut self, _round: u32) {}

    /// Forgets every checkpoint: one could not be read (`why`: damaged, cut
    /// short, another rank's), and every rank starts the layer again.
    fn discard(&mut self, _why: &str) {}
}

/// No checkpoints: a crash starts the layer again.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCheckpoints;

impl Checkpoints for NoCheckpoints {}

/// The one rank of an unsplit layer: nothing to trade.
#[derive(Debug, Clone, Copy, Default)]
pub struct Alone;

impl Exchange for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn ranks(&self) -> usize {
        1
    }
    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String> {
        Ok(vec![Vec::new(); out.len()])
    }
    fn max_all(&mut self, x: &[u64]) -> Result<Vec<u64>, String> {
        Ok(x.to_vec())
    }
}

/// The first rank of each of the `ranks` parts of a layer of `size`
/// positions, and `size` last (`ranks + 1` entries): an even split into
/// whole blocks of [`BLOCK`] positions (a part is empty when there are
/// fewer blocks than ranks).
///
/// # Panics
/// If `ranks` is 0.
pub fn part_bounds(size: u64, ranks: usize) -> Vec<u64> {
    assert!(ranks >= 1, "a layer is split over at least one rank");
    let blocks = u128::from(size.div_ceil(BLOCK));
    (0..=ranks)
        .map(|k| {
            let b = (blocks * k as u128 / ranks as u128) as u64;
            (b * BLOCK).min(size)
        })
        .collect()
}

/// One update traded between ranks, packed in a `u64`: bits 0–45 the
/// parent's rank in the layer, 46–61 a count or value code, 62–63 what to
/// do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// `moves` of the parent's moves lead to positions won at the round's
    /// depth.
    Count {
        /// The parent's rank.
        rank: u64,
        /// Moves counted (≤ 255).
        moves: u32,
    },
    /// The parent has a move to a position lost at the round's depth.
    Win {
        /// The parent's rank.
        rank: u64,
    },
    /// The position takes the value code `code` of its canonical image
    /// (after solving with symmetry reduction).
    Set {
        /// The position's rank.
        rank: u64,
        /// The value cell's code.
        code: u32,
    },
}

/// Ranks a traded update holds: 2⁴⁶ positions a layer.
pub const UPDATE_RANKS: u64 = 1 << 46;

impl Update {
    /// The packed word.
    pub fn pack(self) -> u64 {
        let (kind, rank, x) = match self {
            Update::Count { rank, moves } => (0u64, rank, moves),
            Update::Win { rank } => (1, rank, 0),
            Update::Set { rank, code } => (2, rank, code),
        };
        debug_assert!(rank < UPDATE_RANKS && x <= 0xFFFF);
        kind << 62 | u64::from(x) << 46 | rank
    }

    /// The update of a packed word (`None` for a word no update packs to).
    pub fn unpack(w: u64) -> Option<Update> {
        let rank = w & (UPDATE_RANKS - 1);
        let x = (w >> 46 & 0xFFFF) as u32;
        match w >> 62 {
            0 => Some(Update::Count { rank, moves: x }),
            1 if x == 0 => Some(Update::Win { rank }),
            2 => Some(Update::Set { rank, code: x }),
            _ => None,
        }
    }
}

/// The meeting place of `ranks` threads acting as the ranks of a split
/// layer in one process ([`Mesh::rank`] gives each its [`Exchange`]): for
/// tests and benchmarks of the split without processes.
pub struct Mesh {
    ranks: usize,
    batch: usize,
    /// `slots[to][from]`.
    slots: Mutex<Vec<Vec<Vec<u64>>>>,
    maxes: Mutex<Vec<Vec<u64>>>,
    barrier: Barrier,
}

impl Mesh {
    /// A mesh of `ranks` (≥ 1) ranks trading whenever `batch` updates are
    /// queued ([`Exchange::batch_words`]).
    pub fn new(ranks: usize, batch: usize) -> Mesh {
        Mesh {
            ranks,
            batch: batch.max(1),
            slots: Mutex::new(vec![vec![Vec::new(); ranks]; ranks]),
            maxes: Mutex::new(vec![Vec::new(); ranks]),
            barrier: Barrier::new(ranks),
        }
    }

    /// Rank `rank`'s end of the mesh (one thread each).
    pub fn rank(&self, rank: usize) -> MeshRank<'_> {
        MeshRank { mesh: self, rank }
    }
}

/// One rank's end of a [`Mesh`].
pub struct MeshRank<'a> {
    mesh: &'a Mesh,
    rank: usize,
}

impl Exchange for MeshRank<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.mesh.ranks
    }
    fn batch_words(&self) -> usize {
        self.mesh.batch
    }
    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String> {
        {
            let mut s = self.mesh.slots.lock().map_err(|e| e.to_string())?;
            for (to, v) in out.into_iter().enumerate() {
                s[to][self.rank] = v;
            }
        }
        self.mesh.barrier.wait();
        let got = {
            let mut s = self.mesh.slots.lock().map_err(|e| e.to_string())?;
            std::mem::replace(&mut s[self.rank], vec![Vec::new(); self.mesh.ranks])
        };
        self.mesh.barrier.wait();
        Ok(got)
    }
    fn max_all(&mut self, x: &[u64]) -> Result<Vec<u64>, String> {
        self.mesh.maxes.lock().map_err(|e| e.to_string())?[self.rank] = x.to_vec();
        self.mesh.barrier.wait();
        let m = {
            let all = self.mesh.maxes.lock().map_err(|e| e.to_string())?;
            let mut m = x.to_vec();
            for v in all.iter() {
                for (a, b) in m.iter_mut().zip(v) {
                    *a = (*a).max(*b);
                }
            }
            m
        };
        self.mesh.barrier.wait();
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_layer_in_whole_blocks() {
        for (size, ranks) in [(0, 1), (1, 3), (10 * BLOCK + 7, 4), (3 * BLOCK, 3), (5, 1)] {
            let b = part_bounds(size, ranks);
            assert_eq!(b.len(), ranks + 1);
            assert_eq!((b[0], b[ranks]), (0, size));
            assert!(b.windows(2).all(|w| w[0] <= w[1]));
            assert!(b[..ranks].iter().all(|&x| x % BLOCK == 0 || x == size));
        }
        assert_eq!(
            part_bounds(10 * BLOCK, 4),
            vec![0, 2 * BLOCK, 5 * BLOCK, 7 * BLOCK, 10 * BLOCK]
        );
    }

    #[test]
    fn updates_pack_and_unpack() {
        for u in [
            Update::Count { rank: 0, moves: 1 },
            Update::Count {
                rank: UPDATE_RANKS - 1,
                moves: 255,
            },
            Update::Win { rank: 12345 },
            Update::Set {
                rank: 7,
                code: 0xFFFF,
            },
        ] {
            assert_eq!(Update::unpack(u.pack()), Some(u));
        }
        assert_eq!(Update::unpack(3 << 62), None);
    }
}
