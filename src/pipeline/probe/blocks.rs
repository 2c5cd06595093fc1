//! Block-level access to a run's shards for probes: each shard opened once
//! ([`ShardFile`]: header and index only), blocks read on demand, checked
//! against their own checksums and kept in a cache bounded in bytes that all
//! probes of a process share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::pipeline::Error;
use crate::pipeline::RunView;
use crate::pipeline::shard::ShardFile;
use crate::pipeline::state::shard_error;

/// Default size of the block cache of one `query` (64 MiB: about 500
/// blocks of 128 KiB).
pub const DEFAULT_CACHE_BYTES: u64 = 64 << 20;

/// Default size of the block cache of `serve` (192 MiB: most of 5×5
/// of the largest standard run served in the load test, 240 MB of values; the server stays under
/// 300 MB resident).
/// Under random 5×5 positions it cuts the server's CPU per request by about
/// a quarter against 64 MiB (fewer blocks decompressed).
pub const SERVE_CACHE_BYTES: u64 = 192 << 20;

#[derive(Clone)]
struct ByBytes;

impl quick_cache::Weighter<(u64, u64), Arc<Vec<u8>>> for ByBytes {
    fn weight(&self, _key: &(u64, u64), val: &Arc<Vec<u8>>) -> u64 {
        val.len() as u64 + 64
    }
}

/// Decompressed blocks keyed by (shard, block), at most a given number of
/// bytes (least recently and least often used go first). Cheap to share:
/// clone the `Arc`.
pub struct BlockCache {
    cache: quick_cache::sync::Cache<(u64, u64), Arc<Vec<u8>>, ByBytes>,
    next_shard: AtomicU64,
}

impl BlockCache {
    /// A cache of at most `bytes` decompressed bytes.
    pub fn new(bytes: u64) -> Arc<BlockCache> {
        Arc::new(BlockCache {
            cache: quick_cache::sync::Cache::with_weighter(
                (bytes / (128 << 10)).max(16) as usize,
                bytes,
                ByBytes,
            ),
            next_shard: AtomicU64::new(0),
        })
    }

    /// Bytes held now.
    pub fn weight(&self) -> u64 {
        self.cache.weight()
    }
}

/// One opened shard: its job, the file, and a key in the cache.
struct Opened {
    file: ShardFile,
    key: u64,
}

/// One section of one opened shard, located by [`RunShards::section`].
#[derive(Clone)]
pub struct SectionHandle {
    /// The job's place in the plan.
    job: usize,
    opened: Arc<Opened>,
    /// The section's name and its index in the header.
    name: String,
    index: u64,
    /// Raw bytes of the section, and per block.
    len: u64,
    block_size: u64,
}

impl SectionHandle {
    /// Raw length of the section in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the section is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The shards of one run directory, opened on first use, read block by
/// block through a shared [`BlockCache`].
pub struct RunShards {
    view: RunView,
    opened: Vec<OnceLock<Arc<Opened>>>,
    cache: Arc<BlockCache>,
}

impl RunShards {
    /// Block access to the shards of `view`.
    pub fn new(view: RunView, cache: Arc<BlockCache>) -> RunShards {
        let opened = (0..view.plan.jobs.len()).map(|_| OnceLock::new()).collect();
        RunShards {
            view,
            opened,
            cache,
        }
    }

    /// The run.
    pub fn view(&self) -> &RunView {
        &self.view
    }

    /// The place of job `name` in the plan.
    fn job_index(&self, name: &str) -> Result<usize, Error> {
        self.view
            .plan
            .jobs
            .iter()
            .position(|j| j.name == name)
            .ok_or_else(|| Error::job(name, "no such job in this plan"))
    }

    /// Opens (once) the shard of the plan's job `i`: header and index read
    /// and checked, and the header's job id, name and kind compared with the
    /// plan.
    fn open(&self, i: usize) -> Result<Arc<Opened>, Error> {
        let j = &self.view.plan.jobs[i];
        if let Some(o) = self.opened[i].get() {
            return Ok(o.clone());
        }
        let dir = &self.view.dir;
        let file = ShardFile::open(&dir.shard_path(&j.id))
            .map_err(|m| shard_error(dir, &j.name, &j.id, m))?;
        let h = file.header();
        if h.job_id != j.id || h.kind != self.view.plan.kind || h.job_name != j.name {
            return Err(shard_error(
                dir,
                &j.name,
                &j.id,
                format!(
                    "belongs to job {} ({}), kind {}",
                    h.job_name, h.job_id, h.kind
                ),
            ));
        }
        let key = self.cache.next_shard.fetch_add(1, Ordering::Relaxed);
        let o = Arc::new(Opened { file, key });
        Ok(self.opened[i].get_or_init(|| o).clone())
    }

    /// The error of job `job`'s shard saying `m`.
    fn error(&self, job: usize, m: String) -> Error {
        let j = &self.view.plan.jobs[job];
        shard_error(&self.view.dir, &j.name, &j.id, m)
    }

    /// Locates section `section` of job `name`'s shard (opening the shard on
    /// first use), for repeated lookups that skip finding the job and the
    /// section by name ([`RunShards::byte_at`], [`RunShards::cached_byte`]).
    ///
    /// # Errors
    /// [`Error::Shard`] naming the job and file: missing, old format, damaged
    /// index, no such section.
    pub fn section(&self, name: &str, section: &str) -> Result<SectionHandle, Error> {
        let job = self.job_index(name)?;
        let opened = self.open(job)?;
        let header = opened.file.header();
        let (index, len) = header
            .sections
            .iter()
            .position(|(n, _)| n == section)
            .zip(opened.file.section_len(section))
            .ok_or_else(|| self.error(job, format!("no section `{section}`")))?;
        Ok(SectionHandle {
            job,
            block_size: opened.file.block_size(),
            opened,
            name: section.to_string(),
            index: index as u64,
            len,
        })
    }

    /// The cache key of block `b` of section `s`: the shard's key, the
    /// section's index in the header and the block.
    fn key(s: &SectionHandle, b: u64) -> (u64, u64) {
        (s.opened.key, s.index << 40 | b)
    }

    /// Block `b` of section `s`, from the cache or read, checked and
    /// decompressed (then cached).
    fn block(&self, s: &SectionHandle, b: u64) -> Result<Arc<Vec<u8>>, Error> {
        self.cache
            .cache
            .get_or_insert_with(&Self::key(s, b), || {
                s.opened.file.read_block(&s.name, b as usize).map(Arc::new)
            })
            .map_err(|m| self.error(s.job, m))
    }

    /// The byte at `offset` of section `s`, reading its block if it is not
    /// cached.
    ///
    /// # Errors
    /// As [`RunShards::range`].
    pub fn byte_at(&self, s: &SectionHandle, offset: u64) -> Result<u8, Error> {
        if offset >= s.len {
            return Err(self.error(
                s.job,
                format!("byte {offset} past section `{}` ({} bytes)", s.name, s.len),
            ));
        }
        let b = offset / s.block_size;
        Ok(self.block(s, b)?[(offset - b * s.block_size) as usize])
    }

    /// The byte at `offset` of section `s` if its block is cached (no I/O,
    /// no decompression); `None` if the block must be read, or the offset is
    /// past the section ([`RunShards::byte_at`] says why).
    pub fn cached_byte(&self, s: &SectionHandle, offset: u64) -> Option<u8> {
        if offset >= s.len {
            return None;
        }
        let b = offset / s.block_size;
        let block = self.cache.cache.get(&Self::key(s, b))?;
        block.get((offset - b * s.block_size) as usize).copied()
    }

    /// Raw bytes `start .. start + len` of section `section` of job `name`'s
    /// shard, from the blocks they lie in (cached).
    ///
    /// # Errors
    /// [`Error::Shard`] naming the job and file: missing, old format, damaged
    /// index, damaged block (only the blocks read are checked), range past
    /// the section.
    pub fn range(&self, name: &str, section: &str, start: u64, len: u64) -> Result<Vec<u8>, Error> {
        let s = self.section(name, section)?;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= s.len)
            .ok_or_else(|| {
                self.error(
                    s.job,
                    format!(
                        "bytes {start}..+{len} past section `{section}` ({} bytes)",
                        s.len
                    ),
                )
            })?;
        let bs = s.block_size;
        let mut out = Vec::with_capacity(len as usize);
        let mut pos = start;
        while pos < end {
            let b = pos / bs;
            let block = self.block(&s, b)?;
            let from = (pos - b * bs) as usize;
            let to = ((end - b * bs) as usize).min(block.len());
            out.extend_from_slice(&block[from..to]);
            pos = b * bs + to as u64;
        }
        Ok(out)
    }

    /// The raw length of section `section` of job `name`'s shard (from its
    /// index: no block read).
    ///
    /// # Errors
    /// As [`RunShards::range`]: a missing or damaged shard, no such section.
    pub fn section_len(&self, name: &str, section: &str) -> Result<u64, Error> {
        Ok(self.section(name, section)?.len)
    }

    /// The byte at `offset` of section `section` of job `name`'s shard.
    ///
    /// # Errors
    /// As [`RunShards::range`].
    pub fn byte(&self, name: &str, section: &str, offset: u64) -> Result<u8, Error> {
        self.byte_at(&self.section(name, section)?, offset)
    }
}
