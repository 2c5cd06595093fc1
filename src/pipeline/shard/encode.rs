//! Encoding a shard: sections cut into compressed blocks, streamed to a file.

use super::*;

// ---------------------------------------------------------------------------
// Writing.

/// Compresses one block (an independent zstd frame without checksum or
/// content size: the index has both).
pub(super) fn compress_block(
    c: &mut zstd::bulk::Compressor<'_>,
    raw: &[u8],
) -> std::io::Result<Vec<u8>> {
    c.compress(raw)
}

pub(super) fn compressor(level: i32) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(CParameter::ChecksumFlag(false))?;
    c.set_parameter(CParameter::ContentSizeFlag(false))?;
    Ok(c)
}

/// The core of both writers: emits blocks to `out` and keeps the running
/// whole-file checksum and the index.
pub(super) struct BlockWriter<W: Write> {
    pub(super) out: W,
    pub(super) hasher: Sha256,
    pub(super) level: i32,
    pub(super) block_size: usize,
    /// SHA-256 of prefix and header.
    pub(super) head_hash: [u8; 32],
    /// Sections finished or open: name, raw length so far.
    pub(super) sections: Vec<(String, u64)>,
    pub(super) open: bool,
    /// Per block: compressed length and checksum.
    pub(super) blocks: Vec<(u32, [u8; 32])>,
    /// Raw bytes of the open section not yet compressed.
    pub(super) pending: Vec<u8>,
    /// Blocks compressed at once (16 per core, at most 256).
    pub(super) batch: usize,
    pub(super) written: u64,
}

impl<W: Write> BlockWriter<W> {
    pub(super) fn new(
        mut out: W,
        header: &ShardHeader,
        level: i32,
    ) -> std::result::Result<Self, String> {
        let head = codec::encode(&Head {
            kind: header.kind.clone(),
            job_name: header.job_name.clone(),
            job_id: header.job_id.clone(),
        })?;
        let mut prefix = Vec::with_capacity(PREFIX + head.len());
        prefix.extend_from_slice(MAGIC);
        prefix.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        prefix.extend_from_slice(&(head.len() as u32).to_le_bytes());
        prefix.extend_from_slice(&head);
        out.write_all(&prefix).map_err(|e| e.to_string())?;
        let mut hasher = Sha256::new();
        hasher.update(&prefix);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(BlockWriter {
            out,
            hasher,
            level,
            block_size: BLOCK_SIZE as usize,
            head_hash: sha256(&prefix),
            sections: Vec::new(),
            open: false,
            blocks: Vec::new(),
            pending: Vec::new(),
            batch: (cores * 16).min(256),
            written: prefix.len() as u64,
        })
    }

    pub(super) fn begin(&mut self, name: &str) -> std::result::Result<(), String> {
        if self.open {
            self.end()?;
        }
        if self.sections.iter().any(|(n, _)| n == name) {
            return Err(format!("section `{name}` written twice"));
        }
        self.sections.push((name.to_string(), 0));
        self.open = true;
        Ok(())
    }

    pub(super) fn write(&mut self, mut data: &[u8]) -> std::result::Result<(), String> {
        if !self.open {
            return Err("bytes written outside a section".into());
        }
        self.sections.last_mut().expect("open").1 += data.len() as u64;
        let full = self.block_size * self.batch;
        // Whole batches straight from `data` when nothing is pending.
        while self.pending.is_empty() && data.len() >= full {
            let (a, rest) = data.split_at(full);
            self.emit(a)?;
            data = rest;
        }
        self.pending.extend_from_slice(data);
        if self.pending.len() >= full {
            let whole = self.pending.len() / self.block_size * self.block_size;
            let p = std::mem::take(&mut self.pending);
            self.emit(&p[..whole])?;
            self.pending = p[whole..].to_vec();
        }
        Ok(())
    }

    pub(super) fn end(&mut self) -> std::result::Result<(), String> {
        if self.open {
            let p = std::mem::take(&mut self.pending);
            self.emit(&p)?;
            self.open = false;
        }
        Ok(())
    }

    /// Compresses `raw` (whole blocks, the last possibly shorter) in
    /// parallel and writes the blocks in order.
    pub(super) fn emit(&mut self, raw: &[u8]) -> std::result::Result<(), String> {
        if raw.is_empty() {
            return Ok(());
        }
        let chunks: Vec<&[u8]> = raw.chunks(self.block_size).collect();
        let threads = codec_threads(chunks.len());
        let level = self.level;
        // Thread t compresses (and hashes) blocks t, t + threads, …: even
        // shares where some stretches of a section compress slower.
        type Packed = std::io::Result<Vec<(Vec<u8>, [u8; 32])>>;
        let parts: Vec<Packed> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let chunks = &chunks;
                    scope.spawn(move || {
                        let mut c = compressor(level)?;
                        chunks
                            .iter()
                            .skip(t)
                            .step_by(threads)
                            .map(|b| {
                                compress_block(&mut c, b).map(|z| {
                                    let h = sha256(&z);
                                    (z, h)
                                })
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("compression thread"))
                .collect()
        });
        let mut parts = parts
            .into_iter()
            .map(|p| p.map(Vec::into_iter))
            .collect::<std::io::Result<Vec<_>>>()
            .map_err(|e| format!("zstd: {e}"))?;
        for i in 0..chunks.len() {
            let (z, h) = parts[i % threads].next().expect("one block per chunk");
            self.out.write_all(&z).map_err(|e| e.to_string())?;
            self.hasher.update(&z);
            self.blocks.push((z.len() as u32, h));
            self.written += z.len() as u64;
        }
        Ok(())
    }

    /// Writes the index, its length and checksum, and the trailer; returns
    /// the writer, the header as written and the file's length.
    pub(super) fn finish(
        mut self,
        job: &ShardHeader,
    ) -> std::result::Result<(W, ShardHeader, u64), String> {
        self.end()?;
        let mut index = Vec::with_capacity(8 + self.blocks.len() * BLOCK_ENTRY + 64);
        index.extend_from_slice(&(self.block_size as u32).to_le_bytes());
        index.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (name, len) in &self.sections {
            index.extend_from_slice(&(name.len() as u32).to_le_bytes());
            index.extend_from_slice(name.as_bytes());
            index.extend_from_slice(&len.to_le_bytes());
        }
        for (zlen, hash) in &self.blocks {
            index.extend_from_slice(&zlen.to_le_bytes());
            index.extend_from_slice(hash);
        }
        index.extend_from_slice(&self.head_hash);
        let mut footer = index;
        let ilen = (footer.len() as u64).to_le_bytes();
        let ihash = sha256(&footer);
        footer.extend_from_slice(&ilen);
        footer.extend_from_slice(&ihash);
        self.hasher.update(&footer);
        let trailer: [u8; 32] = self.hasher.finalize().into();
        footer.extend_from_slice(&trailer);
        self.out.write_all(&footer).map_err(|e| e.to_string())?;
        let header = ShardHeader {
            sections: self.sections,
            ..job.clone()
        };
        Ok((self.out, header, self.written + footer.len() as u64))
    }
}

/// Encodes a shard to bytes, the body at zstd level [`ZSTD_LEVEL`].
///
/// # Errors
/// [`Error::Job`] if the header cannot be encoded or compression fails.
pub fn encode(header_base: &ShardHeader, sections: &[Section]) -> Result<Vec<u8>> {
    encode_with_level(header_base, sections, ZSTD_LEVEL)
}

/// Encodes a shard to bytes, the body at zstd level `level` (the level is
/// not recorded: any level decodes the same way; it changes the bytes, so a
/// kind's level is part of its reference digests). The sections' names and
/// lengths come from `sections`; `header_base.sections` is ignored.
///
/// # Errors
/// As [`encode`].
pub fn encode_with_level(
    header_base: &ShardHeader,
    sections: &[Section],
    level: i32,
) -> Result<Vec<u8>> {
    let job = || header_base.job_name.clone();
    let total: usize = sections.iter().map(|s| s.bytes.len()).sum();
    let out = Vec::with_capacity(total / 3 + 4096);
    let mut w = BlockWriter::new(out, header_base, level).map_err(|e| Error::job(job(), e))?;
    for s in sections {
        w.begin(&s.name)
            .and_then(|()| w.write(&s.bytes))
            .map_err(|e| Error::job(job(), e))?;
    }
    let (out, _, _) = w.finish(header_base).map_err(|e| Error::job(job(), e))?;
    Ok(out)
}

/// Writes a shard to its file section by section without holding the body
/// in memory: raw bytes are compressed a batch of blocks at a time (a batch
/// is `16 × cores` blocks of 128 KiB, at most 32 MiB, plus what one `write`
/// brings), into a temporary file in the destination's
/// directory that [`ShardWriter::finish`] renames into place. Gives the
/// same bytes as [`encode_with_level`] for the same sections, however the
/// writes are cut. Dropped without `finish`, it leaves no file.
///
/// ```no_run
/// # use gametables::pipeline::shard::{ShardWriter, ShardHeader, Durability};
/// # fn f(header: &ShardHeader) -> gametables::pipeline::Result<()> {
/// let mut w = ShardWriter::create("RUN/shards/ID.shard".as_ref(), header, 1, Durability::Now)?;
/// w.begin_section("values")?;
/// for chunk in [[0u8; 4096], [1u8; 4096]] {
///     w.write(&chunk)?;
/// }
/// w.begin_section("meta")?;
/// w.write(b"...")?;
/// let written = w.finish()?;
/// # Ok(()) }
/// ```
pub struct ShardWriter {
    // The temporary file's handle apart from its path: tempfile's own
    // `Write` would add the temporary path to every error, and errors name
    // `path`, the shard asked for (a full disk: `RUN/shards/ID.shard: No
    // space left on device`). Dropping `tmp` removes the file.
    pub(super) inner: BlockWriter<std::io::BufWriter<std::fs::File>>,
    pub(super) tmp: tempfile::TempPath,
    pub(super) header: ShardHeader,
    pub(super) path: PathBuf,
    pub(super) durability: Durability,
}

/// Where a job writes its sections, in order: a [`ShardWriter`] (the
/// worker), or a `Vec<Section>` (tests, in-memory runs).
pub trait SectionSink {
    /// Starts section `name` (ending the one before).
    ///
    /// # Errors
    /// If a section of that name was written already, or writing fails.
    fn begin_section(&mut self, name: &str) -> Result<()>;
    /// Appends raw bytes to the current section.
    ///
    /// # Errors
    /// If writing fails or no section is open.
    fn write(&mut self, bytes: &[u8]) -> Result<()>;
}

impl SectionSink for ShardWriter {
    fn begin_section(&mut self, name: &str) -> Result<()> {
        ShardWriter::begin_section(self, name)
    }
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        ShardWriter::write(self, bytes)
    }
}

impl SectionSink for Vec<Section> {
    fn begin_section(&mut self, name: &str) -> Result<()> {
        if self.iter().any(|s| s.name == name) {
            return Err(Error::job(name, "section written twice"));
        }
        self.push(Section::new(name, Vec::new()));
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.last_mut()
            .ok_or_else(|| Error::job("shard", "write before any section"))?
            .bytes
            .extend_from_slice(bytes);
        Ok(())
    }
}

impl ShardWriter {
    /// Starts the shard of job `header` (kind, name, id; its `sections` are
    /// ignored) at `path`, at zstd level `level`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory if the temporary file cannot be made.
    pub fn create(
        path: &Path,
        header: &ShardHeader,
        level: i32,
        durability: Durability,
    ) -> Result<ShardWriter> {
        let (file, tmp) = temp_beside(path)?.into_parts();
        let inner = BlockWriter::new(
            std::io::BufWriter::with_capacity(1 << 20, file),
            header,
            level,
        )
        .map_err(|e| Error::io(path)(std::io::Error::other(e)))?;
        Ok(ShardWriter {
            inner,
            tmp,
            header: header.clone(),
            path: path.to_path_buf(),
            durability,
        })
    }

    pub(super) fn err(&self, e: String) -> Error {
        Error::io(&self.path)(std::io::Error::other(e))
    }

    /// Starts section `name` (ending the one before).
    ///
    /// # Errors
    /// [`Error::Io`] if a section of that name was written already, or writing fails.
    pub fn begin_section(&mut self, name: &str) -> Result<()> {
        self.inner.begin(name).map_err(|e| self.err(e))
    }

    /// Appends raw bytes to the current section.
    ///
    /// # Errors
    /// [`Error::Io`] naming the shard if writing fails or no section is open.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner.write(bytes).map_err(|e| self.err(e))
    }

    /// Writes the index and trailer, syncs as `durability` asks, and renames
    /// the file into place. Returns the header as written and the file size.
    ///
    /// # Errors
    /// [`Error::Io`] naming the shard.
    pub fn finish(self) -> Result<(ShardHeader, u64)> {
        let path = self.path.clone();
        let (buf, header, len) = self
            .inner
            .finish(&self.header)
            .map_err(|e| Error::io(&path)(std::io::Error::other(e)))?;
        let file = buf
            .into_inner()
            .map_err(|e| Error::io(&path)(e.into_error()))?;
        persist(
            tempfile::NamedTempFile::from_parts(file, self.tmp),
            &path,
            self.durability,
        )?;
        Ok((header, len))
    }
}
