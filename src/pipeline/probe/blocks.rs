//! Block-level access to a run's shards for probes: each shard opened on
//! first use ([`ShardFile`]: header and index only) and again when its file
//! changes ([`RunShards`]), blocks read on demand, checked
//! against their own checksums and kept in a cache bounded in bytes that all
//! probes of a process share.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

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

/// What says whether a shard's path still names the file that was opened:
/// its length, modification time and (on Unix) device and inode. `run`
/// replaces a damaged shard by renaming a new file over it (a new inode);
/// a shard rewritten in place changes its modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    dev: u64,
    ino: u64,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            dev,
            ino,
        }
    }
}

/// One opened shard: the file, its key in the cache and the stamp of the
/// file opened.
struct Opened {
    file: ShardFile,
    key: u64,
    stamp: Option<Stamp>,
}

/// One section of one shard, located by [`RunShards::section`]. It names
/// the section, not the file: a shard reopened because its file changed
/// (see [`RunShards`]) is read through the same handle.
#[derive(Clone)]
pub struct SectionHandle {
    /// The job's place in the plan.
    job: usize,
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
///
/// **Reopened when their files change.** Before every block read that the
/// cache does not answer, the shard's path is stat'ed and compared with the
/// file opened (length, modification time, device and inode): if `run`
/// has since repaired the shard (a new file renamed over it), or it was
/// rewritten in place, the new file is opened (header and index checked
/// again) under a new cache key, so no block of the old file is read again
/// and the old file's cached blocks age out. A long-running server thus
/// answers from a repaired shard at once, without a restart. Blocks cached
/// before the change keep answering: they passed their checksums, and a
/// job's shard is the same bytes whenever it is computed.
pub struct RunShards {
    view: RunView,
    opened: Vec<RwLock<Option<Arc<Opened>>>>,
    cache: Arc<BlockCache>,
}

impl RunShards {
    /// Block access to the shards of `view`.
    pub fn new(view: RunView, cache: Arc<BlockCache>) -> RunShards {
        let opened = (0..view.plan.jobs.len())
            .map(|_| RwLock::new(None))
            .collect();
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

    /// The shard of the plan's job `i` as opened now, if it is.
    fn current(&self, i: usize) -> Option<Arc<Opened>> {
        self.opened[i]
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The shard of the plan's job `i`, opened on first use (and again
    /// after an open failed: a shard missing or damaged now may be repaired
    /// later).
    fn open(&self, i: usize) -> Result<Arc<Opened>, Error> {
        if let Some(o) = self.current(i) {
            return Ok(o);
        }
        let mut slot = self.opened[i]
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(o) = &*slot {
            return Ok(o.clone());
        }
        let o = self.open_file(i)?;
        *slot = Some(o.clone());
        Ok(o)
    }

    /// The shard of job `i` as it is on disk now: `seen` if its file has
    /// not changed since it was opened, else the file reopened (replacing
    /// `seen` for every later request).
    ///
    /// # Errors
    /// As [`RunShards::section`], for a changed file that does not open.
    fn fresh(&self, i: usize, seen: Arc<Opened>) -> Result<Arc<Opened>, Error> {
        let path = self.view.dir.shard_path(&self.view.plan.jobs[i].id);
        let now = std::fs::metadata(&path).ok().map(|m| Stamp::of(&m));
        if now.is_some() && now == seen.stamp {
            return Ok(seen);
        }
        let mut slot = self.opened[i]
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(o) = &*slot
            && !Arc::ptr_eq(o, &seen)
        {
            // Another request reopened it meanwhile.
            return Ok(o.clone());
        }
        match self.open_file(i) {
            Ok(o) => {
                *slot = Some(o.clone());
                Ok(o)
            }
            Err(e) => {
                *slot = None;
                Err(e)
            }
        }
    }

    /// Opens the shard of the plan's job `i`: header and index read and
    /// checked, and the header's job id, name and kind compared with the
    /// plan; a new key in the cache.
    fn open_file(&self, i: usize) -> Result<Arc<Opened>, Error> {
        let j = &self.view.plan.jobs[i];
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
        let stamp = file.file_metadata().ok().map(|m| Stamp::of(&m));
        let key = self.cache.next_shard.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(Opened { file, key, stamp }))
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
            name: section.to_string(),
            index: index as u64,
            len,
        })
    }

    /// The cache key of block `b` of section `s` in shard `o`: the shard's
    /// key, the section's index in the header and the block.
    fn key(o: &Opened, s: &SectionHandle, b: u64) -> (u64, u64) {
        (o.key, s.index << 40 | b)
    }

    /// Block `b` of section `s`, from the cache or read, checked and
    /// decompressed (then cached). Before a read, the shard is reopened if
    /// its file changed ([`RunShards`]).
    fn block(&self, s: &SectionHandle, b: u64) -> Result<Arc<Vec<u8>>, Error> {
        let o = self.open(s.job)?;
        if let Some(block) = self.cache.cache.get(&Self::key(&o, s, b)) {
            return Ok(block);
        }
        let o = self.fresh(s.job, o)?;
        let h = o.file.header();
        let same = h.sections.iter().position(|(n, _)| *n == s.name) == Some(s.index as usize)
            && o.file.section_len(&s.name) == Some(s.len)
            && o.file.block_size() == s.block_size;
        if !same {
            return Err(self.error(
                s.job,
                format!(
                    "section `{}` changed shape since this process located it \
                     (the shard was replaced by another of a different layout)",
                    s.name
                ),
            ));
        }
        self.cache
            .cache
            .get_or_insert_with(&Self::key(&o, s, b), || {
                o.file.read_block(&s.name, b as usize).map(Arc::new)
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
        let o = self.current(s.job)?;
        let block = self.cache.cache.get(&Self::key(&o, s, b))?;
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
