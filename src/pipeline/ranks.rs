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

    /// How the ranks talk, for the log: `files` ([`FileRanks`]) or `mpi`.
    fn transport(&self) -> &'static str {
        "files"
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

/// Where a rank of a split job keeps its checkpoints and says how far it
/// got (the pipeline's side of the engine's checkpoints: a kind adapts it).
pub trait RankStore {
    /// At the start of every round: progress for `status`.
    fn round(&mut self, _round: u32) {}
    /// Whether this rank would save now.
    fn due(&mut self) -> bool {
        false
    }
    /// Saves round `round` (cells of two bytes if `wide`): `parts` in order,
    /// whole or not at all.
    ///
    /// # Errors
    /// When it cannot be written.
    fn save(&mut self, wide: bool, round: u32, parts: &[&[u8]]) -> Result<(), String>;
    /// The rounds saved whole, increasing.
    fn saved(&self, wide: bool) -> Vec<u32>;
    /// Reads round `round` into `into` (exact lengths).
    ///
    /// # Errors
    /// A missing or damaged checkpoint.
    fn load(&mut self, wide: bool, round: u32, into: &mut [&mut [u8]]) -> Result<(), String>;
    /// Forgets the rounds before `round`.
    fn keep_from(&mut self, round: u32);
    /// Forgets every checkpoint: one could not be read (`why`), and the
    /// ranks start the layer again.
    fn discard(&mut self, why: &str);
}

/// Environment variable: seconds between a rank's checkpoints (default
/// [`DEFAULT_CHECKPOINT`]; 0: at every round, for tests).
pub const CHECKPOINT_ENV: &str = "GAMETABLES_CHECKPOINT_S";

/// Time between checkpoints by default: 15 minutes, so a lost rank, node
/// or time limit costs at most about that.
pub const DEFAULT_CHECKPOINT: Duration = Duration::from_secs(900);

/// Test hook: milliseconds a rank sleeps at the start of every round, so
/// fault tests can kill it mid-layer. Not for production use.
pub const ROUND_DELAY_ENV: &str = "GAMETABLES_TEST_ROUND_DELAY_MS";

/// How far one rank of a split job got: `RUN_DIR/ranks/JOB_ID/progress-rK.toml`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RankProgress {
    /// The rank.
    pub rank: usize,
    /// Ranks of the job.
    pub ranks: usize,
    /// The round (depth) it is at.
    pub round: u32,
    /// The newest round it saved, if any.
    pub checkpoint: Option<u32>,
    /// The round it resumed from, if it did.
    pub resumed_from: Option<u32>,
}

/// What the ranks of the split job `job_id` of the run at `root` last said
/// of their progress (`ranks/JOB_ID/progress-rK.toml`), by rank; empty when
/// none ran or the job is done.
pub fn split_progress(root: &Path, job_id: &str) -> Vec<RankProgress> {
    let dir = root.join("ranks").join(job_id);
    let mut out: Vec<RankProgress> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("progress-r"))
        .filter_map(|e| toml::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
        .collect();
    out.sort_by_key(|p| p.rank);
    out
}

/// One line for `status`: which round each rank of a split job reached and
/// its newest checkpoint, e.g. `split over 3 ranks: rank 0 round 12
/// (checkpoint 11), …`.
pub fn progress_text(ranks: u32, p: &[RankProgress]) -> String {
    let each: Vec<String> = p
        .iter()
        .map(|r| {
            format!(
                "rank {} round {}{}",
                r.rank,
                r.round,
                r.checkpoint
                    .map_or(String::new(), |c| format!(" (checkpoint {c})"))
            )
        })
        .collect();
    if each.is_empty() {
        format!("split over {ranks} ranks")
    } else {
        format!("split over {ranks} ranks: {}", each.join(", "))
    }
}

/// Checkpoints in files: `DIR/n{ranks}-r{rank}-w{0|1}-d{round}.ckpt`
/// (written under a temporary name, fsynced and renamed; a sha256 of the
/// content ends the file), and the rank's progress in
/// `DIR/../progress-r{rank}.toml`.
pub struct FileStore {
    dir: PathBuf,
    /// The job's id: part of every checkpoint's header.
    job_id: String,
    rank: usize,
    ranks: usize,
    every: Duration,
    last: Instant,
    progress: RankProgress,
    delay: Option<Duration>,
}

impl FileStore {
    /// The store of rank `rank` of `ranks` of job `job_id` in `dir`
    /// (created). A checkpoint's header names the job, the rank, the ranks,
    /// the width and the round; one that does not match is not loaded.
    ///
    /// # Errors
    /// If the folder cannot be made.
    pub fn new(dir: &Path, job_id: &str, rank: usize, ranks: usize) -> Result<FileStore, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let every = std::env::var(CHECKPOINT_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(DEFAULT_CHECKPOINT, Duration::from_secs);
        let delay = std::env::var(ROUND_DELAY_ENV)
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Duration::from_millis);
        Ok(FileStore {
            dir: dir.to_path_buf(),
            job_id: job_id.to_string(),
            rank,
            ranks,
            every,
            last: Instant::now(),
            progress: RankProgress {
                rank,
                ranks,
                round: 0,
                checkpoint: None,
                resumed_from: None,
            },
            delay,
        })
    }

    /// The header every checkpoint of round `round` starts with. Its format
    /// number changes with the engine's cells (2: two-byte cells hold
    /// their counters, codes moved up), so an older checkpoint is refused
    /// and the layer solved again.
    fn header(&self, wide: bool, round: u32) -> Vec<u8> {
        format!(
            "gametables checkpoint 2 job {} rank {} of {} wide {} round {round}\n",
            self.job_id,
            self.rank,
            self.ranks,
            u8::from(wide)
        )
        .into_bytes()
    }

    fn prefix(&self) -> String {
        format!("n{}-r{}-", self.ranks, self.rank)
    }

    fn path(&self, wide: bool, round: u32) -> PathBuf {
        self.dir.join(format!(
            "{}w{}-d{round}.ckpt",
            self.prefix(),
            u8::from(wide)
        ))
    }

    fn rounds(&self) -> Vec<(bool, u32, PathBuf)> {
        let prefix = self.prefix();
        let mut out: Vec<(bool, u32, PathBuf)> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix(&prefix)?.strip_suffix(".ckpt")?;
                let (w, d) = rest.split_once("-d")?;
                let wide = match w {
                    "w0" => false,
                    "w1" => true,
                    _ => return None,
                };
                Some((wide, d.parse().ok()?, e.path()))
            })
            .collect();
        out.sort_by_key(|r| (r.0, r.1));
        out
    }

    /// The rank's progress file.
    pub fn progress_path(&self) -> PathBuf {
        let parent = self.dir.parent().unwrap_or(&self.dir);
        parent.join(format!("progress-r{}.toml", self.rank))
    }

    fn write_progress(&self) {
        if let Ok(t) = toml::to_string(&self.progress) {
            let _ = super::atomic::write_atomic_with(
                &self.progress_path(),
                t.as_bytes(),
                super::atomic::Durability::Deferred,
            );
        }
    }

    /// What the rank has said of its progress.
    pub fn progress(&self) -> &RankProgress {
        &self.progress
    }

    /// Removes every checkpoint and the progress file of this rank (its
    /// part is done).
    pub fn clear(&mut self) {
        for (_, _, p) in self.rounds() {
            let _ = std::fs::remove_file(p);
        }
        let _ = std::fs::remove_file(self.progress_path());
        let _ = std::fs::remove_dir(&self.dir);
    }
}

impl RankStore for FileStore {
    fn round(&mut self, round: u32) {
        self.progress.round = round;
        self.write_progress();
        if let Some(d) = self.delay {
            std::thread::sleep(d);
        }
    }

    fn due(&mut self) -> bool {
        self.last.elapsed() >= self.every
    }

    fn save(&mut self, wide: bool, round: u32, parts: &[&[u8]]) -> Result<(), String> {
        use sha2::Digest;
        use std::io::Write;
        let path = self.path(wide, round);
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(err)?;
        let mut hash = sha2::Sha256::new();
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
            let mut put = |b: &[u8]| -> std::io::Result<()> {
                hash.update(b);
                w.write_all(b)
            };
            put(&self.header(wide, round)).map_err(err)?;
            put(&(parts.len() as u64).to_le_bytes()).map_err(err)?;
            for p in parts {
                put(&(p.len() as u64).to_le_bytes()).map_err(err)?;
            }
            for p in parts {
                put(p).map_err(err)?;
            }
            w.write_all(&hash.finalize()).map_err(err)?;
            w.flush().map_err(err)?;
        }
        tmp.as_file().sync_all().map_err(err)?;
        tmp.persist(&path).map_err(|e| err(e.error))?;
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        self.last = Instant::now();
        self.progress.checkpoint = Some(round);
        self.write_progress();
        Ok(())
    }

    fn saved(&self, wide: bool) -> Vec<u32> {
        self.rounds()
            .into_iter()
            .filter(|r| r.0 == wide)
            .map(|r| r.1)
            .collect()
    }

    fn load(&mut self, wide: bool, round: u32, into: &mut [&mut [u8]]) -> Result<(), String> {
        use sha2::Digest;
        use std::io::Read;
        let path = self.path(wide, round);
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        let f = std::fs::File::open(&path).map_err(err)?;
        let mut r = std::io::BufReader::with_capacity(1 << 20, f);
        let mut hash = sha2::Sha256::new();
        let header = self.header(wide, round);
        let mut got = vec![0u8; header.len()];
        r.read_exact(&mut got)
            .map_err(|_| format!("{}: too short for a checkpoint", path.display()))?;
        if got != header {
            return Err(format!(
                "{}: the checkpoint of another job, rank or round ({:?})",
                path.display(),
                String::from_utf8_lossy(&got).trim_end()
            ));
        }
        hash.update(&header);
        let short = |_| format!("{}: cut short (not a whole checkpoint)", path.display());
        let mut word = || -> Result<u64, String> {
            let mut b = [0u8; 8];
            r.read_exact(&mut b).map_err(short)?;
            Ok(u64::from_le_bytes(b))
        };
        let n = word()?;
        let lens: Vec<u64> = (0..n).map(|_| word()).collect::<Result<_, _>>()?;
        if lens.len() != into.len()
            || lens
                .iter()
                .zip(into.iter())
                .any(|(&l, b)| l != b.len() as u64)
        {
            return Err(format!(
                "{}: parts of {lens:?} bytes, this part needs {:?}",
                path.display(),
                into.iter().map(|b| b.len()).collect::<Vec<_>>()
            ));
        }
        hash.update(n.to_le_bytes());
        for l in &lens {
            hash.update(l.to_le_bytes());
        }
        for b in into.iter_mut() {
            r.read_exact(b).map_err(short)?;
            hash.update(&b[..]);
        }
        let mut sum = [0u8; 32];
        r.read_exact(&mut sum).map_err(short)?;
        if sum[..] != hash.finalize()[..] {
            return Err(format!(
                "{}: damaged (its sha256 does not match)",
                path.display()
            ));
        }
        self.progress.resumed_from = Some(round);
        self.progress.checkpoint = Some(round);
        self.last = Instant::now();
        Ok(())
    }

    fn discard(&mut self, why: &str) {
        tracing::warn!(
            rank = self.rank,
            why,
            "checkpoints not usable: the layer starts again"
        );
        for (_, _, p) in self.rounds() {
            let _ = std::fs::remove_file(p);
        }
        self.progress.resumed_from = None;
        self.progress.checkpoint = None;
    }

    fn keep_from(&mut self, round: u32) {
        for (_, d, p) in self.rounds() {
            if d < round {
                let _ = std::fs::remove_file(p);
            }
        }
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

    /// A checkpoint names its job, rank and round: one copied onto another
    /// rank's name, cut short or changed is refused, never loaded.
    #[test]
    fn checkpoints_are_refused_under_another_name_or_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = FileStore::new(dir.path(), "job1", 0, 2).unwrap();
        let mut b = FileStore::new(dir.path(), "job1", 1, 2).unwrap();
        let (x, y) = (vec![1u8, 2, 3], vec![9u8; 16]);
        a.save(false, 5, &[&x, &y]).unwrap();
        let (mut x2, mut y2) = (vec![0u8; 3], vec![0u8; 16]);
        a.load(false, 5, &mut [&mut x2, &mut y2]).unwrap();
        assert_eq!((x2, y2), (x.clone(), y.clone()));
        std::fs::copy(a.path(false, 5), b.path(false, 5)).unwrap();
        let (mut x2, mut y2) = (vec![0u8; 3], vec![0u8; 16]);
        let e = b.load(false, 5, &mut [&mut x2, &mut y2]).unwrap_err();
        assert!(e.contains("another job, rank or round"), "{e}");
        let bytes = std::fs::read(a.path(false, 5)).unwrap();
        std::fs::write(a.path(false, 5), &bytes[..bytes.len() - 5]).unwrap();
        let e = a
            .load(false, 5, &mut [&mut [0u8; 3][..], &mut [0u8; 16][..]])
            .unwrap_err();
        assert!(e.contains("cut short"), "{e}");
        let mut flipped = bytes.clone();
        let at = flipped.len() - 40;
        flipped[at] ^= 1;
        std::fs::write(a.path(false, 5), &flipped).unwrap();
        let e = a
            .load(false, 5, &mut [&mut [0u8; 3][..], &mut [0u8; 16][..]])
            .unwrap_err();
        assert!(e.contains("damaged"), "{e}");
        a.discard("test");
        assert!(a.saved(false).is_empty());
    }
}
