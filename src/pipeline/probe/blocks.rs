//! Block-level access to a run's shards for probes: each shard opened once
//! ([`ShardFile`]: header and index only), blocks read on demand, checked
//! against their own checksums and kept in a cache bounded in bytes that all
//! probes of a process share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::pipeline::Error;
use crate::pipeline::merge::RunView;
use crate::pipeline::plan::shard_error;
use crate::pipeline::shard::ShardFile;

/// Default size of the block cache of one `query` (64 MiB: about 500
/// blocks of 128 KiB).
pub const DEFAULT_CACHE_BYTES: u64 = 64 << 20;

/// Default size of the block cache of `serve` (192 MiB: most of 5×5
/// Dodgem's 240 MB of values; the server stays under 300 MB resident).
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

    /// Opens (once) the shard of job `name`: header and index read and
    /// checked, and the header's job id, name and kind compared with the plan.
    fn open(&self, name: &str) -> Result<Arc<Opened>, Error> {
        let (i, j) = self
            .view
            .plan
            .jobs
            .iter()
            .enumerate()
            .find(|(_, j)| j.name == name)
            .ok_or_else(|| Error::job(name, "no such job in this plan"))?;
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

    /// Raw bytes `start .. start + len` of section `section` of job `name`'s
    /// shard, from the blocks they lie in (cached).
    ///
    /// # Errors
    /// [`Error::Shard`] naming the job and file: missing, old format, damaged
    /// index, damaged block (only the blocks read are checked), range past
    /// the section.
    pub fn range(&self, name: &str, section: &str, start: u64, len: u64) -> Result<Vec<u8>, Error> {
        let o = self.open(name)?;
        let j = self.view.plan.job(name).expect("opened");
        let err = |m: String| shard_error(&self.view.dir, &j.name, &j.id, m);
        let slen = o
            .file
            .section_len(section)
            .ok_or_else(|| err(format!("no section `{section}`")))?;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= slen)
            .ok_or_else(|| {
                err(format!(
                    "bytes {start}..+{len} past section `{section}` ({slen} bytes)"
                ))
            })?;
        let bs = o.file.block_size();
        let mut out = Vec::with_capacity(len as usize);
        let mut pos = start;
        // Cache keys: the section's index in the header and the block.
        let si = o
            .file
            .header()
            .sections
            .iter()
            .position(|(n, _)| n == section)
            .expect("section exists") as u64;
        while pos < end {
            let b = pos / bs;
            let key = (o.key, si << 40 | b);
            let block = self
                .cache
                .cache
                .get_or_insert_with(&key, || {
                    o.file.read_block(section, b as usize).map(Arc::new)
                })
                .map_err(err)?;
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
        let o = self.open(name)?;
        o.file.section_len(section).ok_or_else(|| {
            let j = self.view.plan.job(name).expect("opened");
            shard_error(
                &self.view.dir,
                &j.name,
                &j.id,
                format!("no section `{section}`"),
            )
        })
    }

    /// The byte at `offset` of section `section` of job `name`'s shard.
    ///
    /// # Errors
    /// As [`RunShards::range`].
    pub fn byte(&self, name: &str, section: &str, offset: u64) -> Result<u8, Error> {
        Ok(self.range(name, section, offset, 1)?[0])
    }
}
