//! The earlier parts of a split box, read by its last part: their
//! P-positions in rank order, and the rectangles' winning bites.

use super::*;
use crate::solvers::chomp::EarlierP;
use std::ops::Range;

pub(super) struct NoInputs;

impl ShardSource for NoInputs {
    fn load(&self, name: &str) -> Result<Shard> {
        Err(Error::job(name, "not an input of this job"))
    }
}

/// One earlier part of a box, opened for block reads.
pub(super) struct PartFile {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) file: ShardFile,
}

/// The earlier parts of a window's box (its inputs, in rank order), opened
/// for block reads: the P-positions below the window, streamed in ascending
/// order by rank range ([`EarlierParts::reader`]) or looked up one rank at a time
/// ([`EarlierParts::is_p`], a few blocks cached).
pub(super) struct EarlierParts {
    pub(super) name: String,
    pub(super) parts: Vec<PartFile>,
    pub(super) cache: std::cell::RefCell<HashMap<(usize, usize), Vec<u8>>>,
}

/// Blocks the rectangle look-ups keep in memory at most.
pub const RECT_CACHE_BLOCKS: usize = 128;

/// The `meta` of job `name`'s shard, read through `f`.
pub(super) fn read_meta(src: &dyn ShardSource, name: &str, f: &ShardFile) -> Result<BoxMeta> {
    let bytes = crate::pipeline::kind::read_section(src, name, f, "meta")?;
    codec::decode(&bytes).map_err(|e| Error::job(name, format!("malformed shard: meta: {e}")))
}

impl EarlierParts {
    pub(super) fn open(
        job: &JobSpec,
        inputs: &dyn ShardSource,
        w: &BoxWindowJob,
    ) -> Result<EarlierParts> {
        let mut parts = Vec::new();
        let mut next = 0;
        for name in &job.inputs {
            let file = inputs.open(name)?;
            let m = read_meta(inputs, name, &file)?;
            let words = (m.end.saturating_sub(m.start)).div_ceil(64);
            if (m.rows, m.cols, m.ranks, m.start) != (w.rows, w.cols, w.ranks, next)
                || m.end <= m.start
                || m.end > w.start
                || file.section_len("p-positions") != Some(words * 8)
            {
                return Err(Error::job(
                    &job.name,
                    format!(
                        "input {name} is not the window of the {}x{} box starting at rank {next}",
                        w.rows, w.cols
                    ),
                ));
            }
            next = m.end;
            parts.push(PartFile {
                start: m.start,
                end: m.end,
                file,
            });
        }
        if next != w.start {
            return Err(Error::job(
                &job.name,
                format!(
                    "its inputs cover ranks 0..{next}, but the window starts at {}",
                    w.start
                ),
            ));
        }
        Ok(EarlierParts {
            name: job.name.clone(),
            parts,
            cache: std::cell::RefCell::new(HashMap::new()),
        })
    }

    /// The earlier parts as the window solver reads them: by rank range,
    /// only the blocks it asks for. A read error ends the reading and is
    /// left in `failed`.
    pub(super) fn reader<'a>(&'a self, failed: &'a mut Option<Error>) -> RangeReader<'a> {
        RangeReader {
            parts: self,
            failed,
        }
    }

    /// Whether rank `x` (below the window) is a P-position.
    pub(super) fn is_p(&self, x: u64) -> Result<bool> {
        let i = self.parts.partition_point(|p| p.end <= x);
        let part = self
            .parts
            .get(i)
            .filter(|p| p.start <= x)
            .ok_or_else(|| Error::job(&self.name, format!("rank {x} is in no earlier part")))?;
        let off = (x - part.start) / 8;
        let bs = part.file.block_size();
        let key = (i, (off / bs) as usize);
        let mut cache = self.cache.borrow_mut();
        if !cache.contains_key(&key) {
            if cache.len() >= RECT_CACHE_BLOCKS {
                cache.clear();
            }
            let block = part
                .file
                .read_block("p-positions", key.1)
                .map_err(|m| Error::job(&self.name, format!("reading an earlier part: {m}")))?;
            cache.insert(key, block);
        }
        let byte = cache[&key][(off % bs) as usize];
        Ok(byte >> ((x - part.start) % 8) & 1 == 1)
    }

    /// Whether each rank of `asked` (ascending, below the window) is a
    /// P-position. Every block they lie in is read once, a batch of blocks
    /// at a time decompressed on all cores ([`ShardFile::read_blocks`]).
    pub(super) fn are_p(&self, asked: &[u64]) -> Result<Vec<bool>> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let batch = 16 * cores;
        let mut answers = Vec::with_capacity(asked.len());
        let mut k = 0;
        while k < asked.len() {
            // The part of asked[k], and the blocks of the ranks after it in
            // that part, up to a batch of them.
            let x = asked[k];
            let part = self
                .parts
                .get(self.parts.partition_point(|p| p.end <= x))
                .filter(|p| p.start <= x)
                .ok_or_else(|| Error::job(&self.name, format!("rank {x} is in no earlier part")))?;
            let per = part.file.block_size() * 8;
            let (mut blocks, mut e) = (Vec::new(), k);
            while e < asked.len() && asked[e] < part.end {
                let b = ((asked[e] - part.start) / per) as usize;
                if blocks.last() != Some(&b) {
                    if blocks.len() == batch {
                        break;
                    }
                    blocks.push(b);
                }
                e += 1;
            }
            let bytes = part
                .file
                .read_blocks("p-positions", &blocks)
                .map_err(|m| Error::job(&self.name, format!("reading an earlier part: {m}")))?;
            let mut j = 0;
            for &y in &asked[k..e] {
                let off = y - part.start;
                while blocks[j] as u64 != off / per {
                    j += 1;
                }
                let bit = off % per;
                answers.push(bytes[j][(bit / 8) as usize] >> (bit % 8) & 1 == 1);
            }
            k = e;
        }
        Ok(answers)
    }
}

/// The earlier parts as the window solver reads them
/// ([`EarlierParts::reader`]): only the shard blocks that meet the rank
/// ranges asked for, a batch at a time decompressed on all cores. A read
/// error ends the reading and is left in `failed`.
pub(super) struct RangeReader<'a> {
    parts: &'a EarlierParts,
    failed: &'a mut Option<Error>,
}

impl EarlierP for RangeReader<'_> {
    fn each_in(&mut self, ranges: &[Range<u64>], found: &mut dyn FnMut(u64)) {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let batch = 16 * cores;
        let name = &self.parts.name;
        for p in &self.parts.parts {
            let per = p.file.block_size() * 8;
            // The blocks of this part that meet a range, ascending.
            let mut blocks: Vec<usize> = Vec::new();
            let first = ranges.partition_point(|r| r.end <= p.start);
            for r in ranges[first..].iter().take_while(|r| r.start < p.end) {
                let (a, b) = (r.start.max(p.start), r.end.min(p.end));
                if a >= b {
                    continue;
                }
                let (ba, bb) = ((a - p.start) / per, (b - 1 - p.start) / per);
                for k in ba as usize..=bb as usize {
                    if blocks.last() != Some(&k) {
                        blocks.push(k);
                    }
                }
            }
            for chunk in blocks.chunks(batch) {
                let bytes = match p.file.read_blocks("p-positions", chunk) {
                    Ok(b) => b,
                    Err(m) => {
                        *self.failed = Some(Error::job(
                            name,
                            format!("reading input part {}..{}: {m}", p.start, p.end),
                        ));
                        return;
                    }
                };
                for (&k, data) in chunk.iter().zip(&bytes) {
                    let base = p.start + k as u64 * per;
                    let words = data.chunks_exact(8);
                    let mut tail = [0u8; 8];
                    tail[..words.remainder().len()].copy_from_slice(words.remainder());
                    let tail = (!words.remainder().is_empty()).then_some(&tail[..]);
                    for (w, word) in words.chain(tail).enumerate() {
                        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes"));
                        while bits != 0 {
                            let x = base + 64 * w as u64 + u64::from(bits.trailing_zeros());
                            bits &= bits - 1;
                            if x >= p.end {
                                *self.failed = Some(Error::job(
                                    name,
                                    format!(
                                        "input part {}..{}: bits set past its end",
                                        p.start, p.end
                                    ),
                                ));
                                return;
                            }
                            found(x);
                        }
                    }
                }
            }
        }
    }
}
