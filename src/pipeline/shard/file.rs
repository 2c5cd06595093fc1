//! Reading blocks from a shard file without decoding it whole.

use super::*;

// ---------------------------------------------------------------------------
// Reading blocks from a file.

/// A shard file opened for reading block by block: its header and index
/// are read and checked once (the index checksum, the header checksum the
/// index holds, the block lengths against the file size), without reading
/// the body; each block read is checked against its own checksum and length.
/// The whole-file trailer is not checked here (that needs every byte: use
/// [`check`] or `verify`). `&self` methods may be called from several
/// threads at once (positioned reads).
///
/// This is the reader for lookups (`query`, `serve`) and for readers that
/// must not hold a multi-gigabyte body in memory: [`ShardFile::blocks`]
/// streams a section block by block.
#[derive(Debug)]
pub struct ShardFile {
    pub(super) file: std::fs::File,
    pub(super) path: PathBuf,
    pub(super) layout: Layout,
}

impl ShardFile {
    /// Opens `path` and reads its header and index.
    ///
    /// # Errors
    /// A message saying what is wrong (unreadable, old format, damaged
    /// index or header), without the path (callers name the job and file).
    pub fn open(path: &Path) -> std::result::Result<ShardFile, String> {
        let file = std::fs::File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "missing".to_string(),
            _ => e.to_string(),
        })?;
        let file_len = file.metadata().map_err(|e| e.to_string())?.len();
        let read = |off: u64, len: usize| -> std::result::Result<Vec<u8>, String> {
            let mut b = vec![0u8; len];
            file.read_exact_at(&mut b, off)
                .map_err(|e| format!("reading {len} bytes at {off}: {e}"))?;
            Ok(b)
        };
        if file_len < (PREFIX + FOOTER) as u64 {
            if file_len >= PREFIX as u64 {
                old_format(&read(0, PREFIX)?)?;
            }
            return Err(format!("truncated: {file_len} bytes"));
        }
        let hlen = parse_prefix(&read(0, PREFIX)?)? as usize;
        let body_start = (PREFIX + hlen) as u64;
        if body_start + FOOTER as u64 > file_len {
            return Err("header length past end of file".into());
        }
        let head = read(0, PREFIX + hlen)?;
        let tail = read(file_len - FOOTER as u64, FOOTER)?;
        let (ilen, ihash) = parse_footer(&tail, file_len, body_start)?;
        let index_start = file_len - FOOTER as u64 - ilen;
        let index = read(index_start, ilen as usize)?;
        if sha256(&index) != ihash {
            return Err("index checksum mismatch (damaged)".into());
        }
        let layout = parse_index(&index, &head, body_start, index_start)?;
        Ok(ShardFile {
            file,
            path: path.to_path_buf(),
            layout,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header (kind, job, sections and their raw lengths).
    pub fn header(&self) -> &ShardHeader {
        &self.layout.header
    }

    /// Raw bytes per block (every block of a section but its last holds
    /// exactly this many).
    pub fn block_size(&self) -> u64 {
        u64::from(self.layout.block_size)
    }

    /// The raw length of section `name`, if present.
    pub fn section_len(&self, name: &str) -> Option<u64> {
        self.section(name).ok().map(|s| s.len)
    }

    /// The metadata of the file as opened (its length, modification time
    /// and inode: what says whether the path now names another file).
    ///
    /// # Errors
    /// If the file cannot be stat'ed.
    pub fn file_metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// The number of blocks of section `name`, if present.
    pub fn block_count(&self, name: &str) -> Option<usize> {
        self.section(name).ok().map(|s| s.count)
    }

    pub(super) fn section(&self, name: &str) -> std::result::Result<&SectionRef, String> {
        self.layout
            .sections
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("no section `{name}`"))
    }

    /// Reads, checks and decompresses block `i` of section `name` (raw
    /// bytes `i·B .. min((i+1)·B, len)` of the section).
    ///
    /// # Errors
    /// A message naming the section and block: out of range, unreadable,
    /// checksum mismatch, or not decompressing to its length.
    pub fn read_block(&self, name: &str, i: usize) -> std::result::Result<Vec<u8>, String> {
        let s = self.section(name)?;
        if i >= s.count {
            return Err(format!(
                "section `{name}` has {} blocks, not block {i}",
                s.count
            ));
        }
        let b = &self.layout.blocks[s.first + i];
        let mut z = vec![0u8; b.zlen as usize];
        self.file
            .read_exact_at(&mut z, b.offset)
            .map_err(|e| format!("section `{name}` block {i}: {e}"))?;
        let mut out = vec![0u8; b.raw as usize];
        // One decompression context per thread, made once: a server reads
        // blocks on a few threads, many times each.
        thread_local! {
            static DCTX: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
                const { std::cell::RefCell::new(None) };
        }
        DCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?);
            }
            let d = slot.as_mut().expect("made above");
            unpack(d, b, &z, &mut out).map_err(|e| format!("section `{name}` block {i} ({e})"))
        })?;
        Ok(out)
    }

    /// Raw bytes `start .. start + len` of section `name`, reading only the
    /// blocks they lie in.
    ///
    /// # Errors
    /// As [`ShardFile::read_block`]; a range past the section's end.
    pub fn read_range(
        &self,
        name: &str,
        start: u64,
        len: u64,
    ) -> std::result::Result<Vec<u8>, String> {
        let s = self.section(name)?;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= s.len)
            .ok_or_else(|| {
                format!(
                    "bytes {start}..+{len} past the end of section `{name}` ({} bytes)",
                    s.len
                )
            })?;
        let bs = self.block_size();
        let mut out = Vec::with_capacity(len as usize);
        let mut pos = start;
        while pos < end {
            let i = (pos / bs) as usize;
            let block = self.read_block(name, i)?;
            let from = (pos - i as u64 * bs) as usize;
            let to = ((end - i as u64 * bs) as usize).min(block.len());
            out.extend_from_slice(&block[from..to]);
            pos = i as u64 * bs + to as u64;
        }
        Ok(out)
    }

    /// The whole of section `name`, its blocks checked and decompressed in
    /// parallel.
    ///
    /// # Errors
    /// As [`ShardFile::read_block`].
    pub fn read_section(&self, name: &str) -> std::result::Result<Vec<u8>, String> {
        let s = self.section(name)?.clone();
        let mut out = zeroed(s.len as usize)
            .ok_or_else(|| format!("cannot allocate the {} bytes of section `{name}`", s.len))?;
        let blocks = &self.layout.blocks[s.first..s.first + s.count];
        let (first, end) = match (blocks.first(), blocks.last()) {
            (Some(f), Some(l)) => (f.offset, l.offset + u64::from(l.zlen)),
            _ => return Ok(out),
        };
        let mut z = vec![0u8; (end - first) as usize];
        self.file
            .read_exact_at(&mut z, first)
            .map_err(|e| format!("section `{name}`: {e}"))?;
        let by_offset = |b: &BlockRef| {
            let at = (b.offset - first) as usize;
            Ok(&z[at..at + b.zlen as usize])
        };
        decompress_blocks(split_blocks(blocks, &mut out), by_offset)
            .map_err(|(_, e)| format!("section `{name}`: {e}"))?;
        Ok(out)
    }

    /// Blocks `which` (ascending indices) of section `name`, as
    /// [`ShardFile::read_block`] gives them, checked and decompressed in
    /// parallel: for reading many scattered blocks a batch at a time.
    ///
    /// # Errors
    /// As [`ShardFile::read_block`], for the first bad block of `which`
    /// (whatever the cores); `which` not ascending or out of range.
    pub fn read_blocks(
        &self,
        name: &str,
        which: &[usize],
    ) -> std::result::Result<Vec<Vec<u8>>, String> {
        let s = self.section(name)?;
        if !which.is_sorted_by(|a, b| a < b) {
            return Err(format!("blocks of section `{name}` asked out of order"));
        }
        if let Some(&i) = which.last().filter(|&&i| i >= s.count) {
            return Err(format!(
                "section `{name}` has {} blocks, not block {i}",
                s.count
            ));
        }
        let refs: Vec<&BlockRef> = which
            .iter()
            .map(|&i| &self.layout.blocks[s.first + i])
            .collect();
        let mut zs = Vec::with_capacity(refs.len());
        for (&i, b) in which.iter().zip(&refs) {
            let mut z = vec![0u8; b.zlen as usize];
            self.file
                .read_exact_at(&mut z, b.offset)
                .map_err(|e| format!("section `{name}` block {i}: {e}"))?;
            zs.push(z);
        }
        let mut out: Vec<Vec<u8>> = refs.iter().map(|b| vec![0u8; b.raw as usize]).collect();
        let slices = refs
            .iter()
            .copied()
            .zip(out.iter_mut().map(Vec::as_mut_slice))
            .collect();
        // Blocks ascend, so do their offsets.
        let at = |offset: u64| refs.partition_point(|r| r.offset < offset);
        decompress_blocks(slices, |b| Ok(zs[at(b.offset)].as_slice()))
            .map_err(|(o, e)| format!("section `{name}` block {} ({e})", which[at(o)]))?;
        Ok(out)
    }

    /// The blocks of section `name` in order, each read, checked and
    /// decompressed when the iterator reaches it (one block in memory at a
    /// time).
    pub fn blocks<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = std::result::Result<Vec<u8>, String>> + 'a {
        let count = self.block_count(name).unwrap_or(0);
        let missing = self.section(name).err().map(Err::<Vec<u8>, String>);
        missing
            .into_iter()
            .chain((0..count).map(move |i| self.read_block(name, i)))
    }
}

/// Building blocks for tests that craft shards by hand (valid checksums
/// around content the writers would never produce). Not for production use.
#[doc(hidden)]
pub mod craft {
    use super::*;

    /// A shard's parts: header (identity and declared sections), block
    /// size, and the compressed bytes of every block in order.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Parts {
        /// Identity and declared sections (names and raw lengths).
        pub header: ShardHeader,
        /// Raw bytes per block.
        pub block_size: u32,
        /// Compressed blocks, back to back in the body.
        pub blocks: Vec<Vec<u8>>,
    }

    /// Splits a valid shard into its parts.
    ///
    /// # Panics
    /// If the shard does not check.
    pub fn split(bytes: &[u8]) -> Parts {
        let content = sealed(bytes).expect("valid trailer");
        let l = layout_of(content).expect("valid layout");
        Parts {
            blocks: l
                .blocks
                .iter()
                .map(|b| {
                    content[b.offset as usize..(b.offset + u64::from(b.zlen)) as usize].to_vec()
                })
                .collect(),
            header: l.header,
            block_size: l.block_size,
        }
    }

    /// Assembles parts into a shard file with every checksum right (index,
    /// header, blocks, trailer), whatever the blocks hold. The number of
    /// blocks must be what the declared lengths imply.
    pub fn assemble(p: &Parts) -> Vec<u8> {
        let head = codec::encode(&Head {
            kind: p.header.kind.clone(),
            job_name: p.header.job_name.clone(),
            job_id: p.header.job_id.clone(),
        })
        .expect("small header");
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(head.len() as u32).to_le_bytes());
        out.extend_from_slice(&head);
        let head_hash = sha256(&out);
        for b in &p.blocks {
            out.extend_from_slice(b);
        }
        let mut index = p.block_size.to_le_bytes().to_vec();
        index.extend_from_slice(&(p.header.sections.len() as u32).to_le_bytes());
        for (name, len) in &p.header.sections {
            index.extend_from_slice(&(name.len() as u32).to_le_bytes());
            index.extend_from_slice(name.as_bytes());
            index.extend_from_slice(&len.to_le_bytes());
        }
        for b in &p.blocks {
            index.extend_from_slice(&(b.len() as u32).to_le_bytes());
            index.extend_from_slice(&sha256(b));
        }
        index.extend_from_slice(&head_hash);
        out.extend_from_slice(&index);
        out.extend_from_slice(&(index.len() as u64).to_le_bytes());
        out.extend_from_slice(&sha256(&index));
        let t = sha256(&out);
        out.extend_from_slice(&t);
        out
    }

    /// Compresses `raw` as one block the way the writers do.
    pub fn block(raw: &[u8], level: i32) -> Vec<u8> {
        compressor(level)
            .and_then(|mut c| c.compress(raw))
            .expect("zstd")
    }
}
