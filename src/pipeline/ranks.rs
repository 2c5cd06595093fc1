//! Jobs split over ranks: the processes of one job ([`JobSpec::ranks`]
//! of them, e.g. the tasks of one Slurm job under `srun`) that each solve a
//! part of it and talk in bulk-synchronous rounds through [`Ranks`].
//!
//! Two transports: [`FileRanks`] trades through files in the run directory
//! (any shared filesystem, no MPI needed: the default build), and, with the
//! cargo feature `mpi`, MPI (`crate::pipeline::mpi_ranks`).
//!
//! [`JobSpec::ranks`]: super::JobSpec::ranks

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How the ranks of a split job talk: every rank makes the same sequence
/// of calls (bulk-synchronous).
pub trait Ranks {
    /// This rank's number, `0 … ranks − 1`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn ranks(&self) -> usize;

    /// Sends `out[k]` to rank k (`out.len() == ranks`, this rank's own entry
    /// empty) and returns what each rank sent to this one, by sender.
    ///
    /// # Errors
    /// When a message cannot be written or does not come in time: the text
    /// names the rank and round.
    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String>;

    /// Bytes this rank has sent to the others so far (for the log).
    fn sent_bytes(&self) -> u64 {
        0
    }

    /// The element-wise maximum of `x` over all ranks.
    ///
    /// # Errors
    /// As [`Ranks::exchange`].
    fn max_all(&mut self, x: &[u64]) -> Result<Vec<u64>, String> {
        let n = self.ranks();
        let me = self.rank();
        let out = (0..n)
            .map(|k| if k == me { Vec::new() } else { x.to_vec() })
            .collect();
        let got = self.exchange(out)?;
        let mut m = x.to_vec();
        for v in got {
            for (a, b) in m.iter_mut().zip(v) {
                *a = (*a).max(b);
            }
        }
        Ok(m)
    }
}

/// Environment variable: seconds a rank waits for another rank's message
/// before it gives up (default [`DEFAULT_WAIT`]).
pub const WAIT_ENV: &str = "GAMETABLES_RANK_WAIT_S";

/// How long a rank waits for a message by default: 30 minutes (a round of
/// a large layer on a busy node is long).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(1800);

/// Ranks that trade through files in a folder every rank sees (the run
/// directory's `ranks/JOB_ID/`): a message from rank i to rank k in round t
/// is the file `ATTEMPT.t.i.k` (written under a temporary name and renamed,
/// so it is whole when seen), read and deleted by rank k. Files of other
/// attempts (a run killed and started again) are never read.
pub struct FileRanks {
    dir: PathBuf,
    attempt: String,
    rank: usize,
    ranks: usize,
    round: u64,
    wait: Duration,
    sent: u64,
}

impl FileRanks {
    /// Rank `rank` of `ranks` trading in `dir` (created) for attempt
    /// `attempt` (a token all ranks of this attempt share: letters, digits,
    /// `-` and `_`). Rank 0 removes files of other attempts.
    ///
    /// # Errors
    /// If the folder cannot be made or the token is not plain.
    pub fn new(dir: &Path, attempt: &str, rank: usize, ranks: usize) -> Result<FileRanks, String> {
        if attempt.is_empty()
            || !attempt
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "attempt token {attempt:?}: letters, digits, - and _ only"
            ));
        }
        if rank >= ranks {
            return Err(format!(
                "rank {rank} of {ranks}: ranks are 0 … {}",
                ranks - 1
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if rank == 0
            && let Ok(rd) = std::fs::read_dir(dir)
        {
            // Messages (`A.t.i.k`) of other attempts; never a message of
            // this one, nor another rank's temporary file.
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let parts: Vec<&str> = name.split('.').collect();
                if parts.len() == 4 && !parts[0].is_empty() && parts[0] != attempt {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let wait = std::env::var(WAIT_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(DEFAULT_WAIT, Duration::from_secs);
        Ok(FileRanks {
            dir: dir.to_path_buf(),
            attempt: attempt.to_string(),
            rank,
            ranks,
            round: 0,
            wait,
            sent: 0,
        })
    }

    fn path(&self, from: usize, to: usize) -> PathBuf {
        self.dir
            .join(format!("{}.{}.{from}.{to}", self.attempt, self.round))
    }
}

impl Ranks for FileRanks {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn sent_bytes(&self) -> u64 {
        self.sent
    }

    fn exchange(&mut self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, String> {
        for (to, words) in out.into_iter().enumerate() {
            if to == self.rank {
                continue;
            }
            let path = self.path(self.rank, to);
            let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            self.sent += bytes.len() as u64;
            super::atomic::write_atomic_with(&path, &bytes, super::atomic::Durability::Deferred)
                .map_err(|e| format!("rank {}: writing {}: {e}", self.rank, path.display()))?;
        }
        let mut got = vec![Vec::new(); self.ranks];
        for (from, slot) in got.iter_mut().enumerate() {
            if from == self.rank {
                continue;
            }
            let path = self.path(from, self.rank);
            let t0 = Instant::now();
            let mut nap = Duration::from_micros(50);
            let bytes = loop {
                match std::fs::read(&path) {
                    Ok(b) => break b,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        if t0.elapsed() > self.wait {
                            return Err(format!(
                                "rank {}: no message from rank {from} in round {} after {} s \
                                 (is rank {from} running? set {WAIT_ENV} to wait longer)",
                                self.rank,
                                self.round,
                                self.wait.as_secs()
                            ));
                        }
                        std::thread::sleep(nap);
                        nap = (nap * 2).min(Duration::from_millis(20));
                    }
                    Err(e) => return Err(format!("rank {}: {}: {e}", self.rank, path.display())),
                }
            };
            let _ = std::fs::remove_file(&path);
            if bytes.len() % 8 != 0 {
                return Err(format!(
                    "rank {}: {} is {} bytes, not whole words",
                    self.rank,
                    path.display(),
                    bytes.len()
                ));
            }
            *slot = bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
        }
        self.round += 1;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ranks_trade_and_agree() {
        let dir = tempfile::tempdir().unwrap();
        // A stale file of another attempt is removed and never read.
        std::fs::write(dir.path().join("old.0.1.0"), [1u8; 8]).unwrap();
        let n = 3;
        let mut ranks: Vec<FileRanks> = (0..n)
            .map(|k| FileRanks::new(dir.path(), "a1", k, n).unwrap())
            .collect();
        let got: Vec<(Vec<Vec<u64>>, Vec<u64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = ranks
                .iter_mut()
                .map(|r| {
                    s.spawn(move || {
                        let me = r.rank() as u64;
                        let out = (0..3u64)
                            .map(|k| {
                                if k == me {
                                    vec![]
                                } else {
                                    vec![me * 10 + k; k as usize + 1]
                                }
                            })
                            .collect();
                        let g = r.exchange(out).unwrap();
                        let m = r.max_all(&[me, 7 - me]).unwrap();
                        (g, m)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (k, (g, m)) in got.iter().enumerate() {
            for (from, v) in g.iter().enumerate() {
                let want = if from == k {
                    vec![]
                } else {
                    vec![from as u64 * 10 + k as u64; k + 1]
                };
                assert_eq!(v, &want, "rank {k} from {from}");
            }
            assert_eq!(m, &vec![2, 7]);
        }
        assert!(!dir.path().join("old.0.1.0").exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "messages are deleted when read"
        );
    }

    #[test]
    fn a_rank_that_never_sends_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = FileRanks::new(dir.path(), "x", 0, 2).unwrap();
        r.wait = Duration::from_millis(50);
        let e = r.exchange(vec![vec![], vec![1]]).unwrap_err();
        assert!(e.contains("no message from rank 1 in round 0"), "{e}");
    }
}
