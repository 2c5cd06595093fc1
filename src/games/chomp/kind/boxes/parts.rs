//! The earlier parts of a split box, read by its last part: their
//! P-positions in rank order, and the rectangles' winning bites.

use super::*;

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
/// order ([`EarlierParts::p_ranks`]) or looked up one rank at a time
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

    /// The P-positions of every earlier part, ascending, one block in
    /// memory at a time. A read error ends the iteration and is left in
    /// `failed`.
    pub(super) fn p_ranks<'a>(&'a self, failed: &'a mut Option<Error>) -> PRanks<'a> {
        PRanks {
            parts: &self.parts,
            name: &self.name,
            part: 0,
            block: 0,
            bytes: Vec::new(),
            pos: 0,
            word: 0,
            base: 0,
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

/// Iterator over the set bits of earlier parts ([`EarlierParts::p_ranks`]).
pub(super) struct PRanks<'a> {
    pub(super) parts: &'a [PartFile],
    pub(super) name: &'a str,
    pub(super) part: usize,
    pub(super) block: usize,
    pub(super) bytes: Vec<u8>,
    /// Next word to take from `bytes` (byte offset).
    pub(super) pos: usize,
    /// Bits of the current word not yet returned.
    pub(super) word: u64,
    /// Rank of bit 0 of `word`.
    pub(super) base: u64,
    pub(super) failed: &'a mut Option<Error>,
}

impl Iterator for PRanks<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            if self.word != 0 {
                let x = self.base + u64::from(self.word.trailing_zeros());
                self.word &= self.word - 1;
                return Some(x);
            }
            if self.pos + 8 <= self.bytes.len() {
                let p = &self.parts[self.part];
                self.base = p.start
                    + (self.block as u64 - 1) * p.file.block_size() * 8
                    + self.pos as u64 * 8;
                self.word = u64::from_le_bytes(
                    self.bytes[self.pos..self.pos + 8]
                        .try_into()
                        .expect("8 bytes"),
                );
                self.pos += 8;
                if self.word != 0 && self.base + 63 - u64::from(self.word.leading_zeros()) >= p.end
                {
                    *self.failed = Some(Error::job(
                        self.name,
                        format!("input part {}..{}: bits set past its end", p.start, p.end),
                    ));
                    return None;
                }
                continue;
            }
            if self.failed.is_some() {
                return None;
            }
            let p = self.parts.get(self.part)?;
            if self.block >= p.file.block_count("p-positions").unwrap_or(0) {
                self.part += 1;
                self.block = 0;
                self.bytes.clear();
                self.pos = 0;
                continue;
            }
            match p.file.read_block("p-positions", self.block) {
                Ok(b) => {
                    self.bytes = b;
                    self.pos = 0;
                    self.block += 1;
                }
                Err(m) => {
                    *self.failed = Some(Error::job(
                        self.name,
                        format!("reading input part {}..{}: {m}", p.start, p.end),
                    ));
                    return None;
                }
            }
        }
    }
}
