//! Shard files: one job's output, compressed in independent blocks and
//! checksummed, readable whole or one block at a time.
//!
//! Layout (format version 2), all integers little-endian:
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `GTSHARD\0` |
//! | 4 | format version (`u32`, = 2) |
//! | 4 | header length H (`u32`, ≤ 1 MiB) |
//! | H | header: kind, job name, job id through [`codec`](super::codec) (bincode) |
//! | … | body: the blocks, one independent zstd frame each, in index order |
//! | L | index (below) |
//! | 8 | index length L (`u64`) |
//! | 32 | SHA-256 of the index |
//! | 32 | trailer: SHA-256 of every byte before it |
//!
//! Index: `u32` block size B (raw bytes per block), `u32` section count; per
//! section `u32` name length, the name (UTF-8), `u64` raw length; per block
//! of every section in order `u32` compressed length and the SHA-256 of the
//! compressed bytes (36 bytes); then the SHA-256 of the 16 + H bytes before
//! the body. Every section is cut into ⌈len / B⌉ blocks of B raw bytes (the
//! last shorter; an empty section has none), so a block's raw length and
//! file offset follow from the index: blocks are stored back to back from
//! the end of the header to the start of the index.
//!
//! **Three levels of checks.** The trailer covers the whole file (what
//! [`check`], [`decode`], `merge` and `verify` check, as in format 1). The
//! index carries its own checksum, and the index holds the checksum of the
//! header and of every block, so that [`ShardFile`] can open a shard by
//! reading its header and index only, and read one block by checking that
//! block only: a damaged block fails the probes that need it and no other.
//!
//! **Bounds.** Nothing is allocated from a declared size before it is
//! checked: the header is at most 1 MiB, the index at most what the file
//! holds, a block's raw length at most B (≤ [`MAX_BLOCK`]), and the raw
//! total at most what the caller allows ([`decode_bounded`]: the job kind's
//! [`max_raw_bytes`](super::kind::JobKind::max_raw_bytes) for the job), so a
//! small crafted shard that declares gigabytes is refused before any
//! decompression.
//!
//! Same sections → same bytes: nothing in a shard depends on time, host,
//! thread count or hash-map order (blocks are compressed in parallel but
//! each independently, and written in order). The bytes do depend on the
//! zstd library version, which `Cargo.lock` pins, and on the kind's level.
//!
//! Format 1 (one zstd frame for the whole body, no index) is recognised and
//! named as the old format: a run directory written by an older gametables
//! is recomputed by `run`.

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use super::atomic::Durability;
use super::atomic::{persist, temp_beside};
use super::codec;
use super::digest::sha256;
use super::error::{Error, Result};

/// The first 8 bytes of every shard.
pub const MAGIC: &[u8; 8] = b"GTSHARD\0";
/// The shard format version written by this build.
pub const FORMAT_VERSION: u32 = 2;
/// zstd compression level of shard bodies, unless the job kind picks another.
pub const ZSTD_LEVEL: i32 = 3;
/// Largest decompressed body accepted (64 GiB); guards against absurd headers.
pub const MAX_BODY: u64 = 64 << 30;
/// Raw bytes per block written by this build (128 KiB): a lookup reads and
/// decompresses one block (about 0.1 ms), while compression stays within a
/// few percent of one frame for the whole body.
pub const BLOCK_SIZE: u32 = 128 << 10;
/// Largest block size accepted when reading (16 MiB).
pub const MAX_BLOCK: u32 = 16 << 20;
/// Largest header accepted (1 MiB).
const MAX_HEADER: u32 = 1 << 20;
/// Index length, index checksum, trailer.
const FOOTER: usize = 8 + 32 + 32;
/// Compressed length and checksum of one block in the index.
const BLOCK_ENTRY: usize = 4 + 32;
/// Magic, version, header length.
const PREFIX: usize = 16;

/// One named section of a shard body: raw bytes whose layout the job kind
/// documents (usually little-endian arrays).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Section name, unique within the shard.
    pub name: String,
    /// Raw content.
    pub bytes: Vec<u8>,
}

impl Section {
    /// A section from a name and bytes.
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        Section {
            name: name.into(),
            bytes,
        }
    }
}

/// A shard's header as the readers see it: whose shard it is and its
/// sections (on disk the names and lengths are in the index).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// Job kind (the `kind = "…"` of its job file).
    pub kind: String,
    /// Job name within its plan, e.g. `box-14x14`.
    pub job_name: String,
    /// Job id (64 hex digits).
    pub job_id: String,
    /// Section names and uncompressed lengths in bytes, in body order
    /// (ignored by the writers, which take them from the sections).
    pub sections: Vec<(String, u64)>,
}

/// The header as stored (the identity only).
#[derive(Serialize, Deserialize)]
struct Head {
    kind: String,
    job_name: String,
    job_id: String,
}

/// A decoded, verified shard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The header.
    pub header: ShardHeader,
    /// The sections, in header order.
    pub sections: Vec<Section>,
}

impl Shard {
    /// The bytes of section `name`.
    ///
    /// # Errors
    /// [`Error::Job`] naming the job and section if it is absent.
    pub fn section(&self, name: &str) -> Result<&[u8]> {
        self.sections
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.bytes.as_slice())
            .ok_or_else(|| {
                Error::job(
                    &self.header.job_name,
                    format!("shard has no section `{name}`"),
                )
            })
    }
}

// ---------------------------------------------------------------------------
// Layout: header and index, parsed and checked.

/// One block as the index describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockRef {
    /// File offset of the compressed bytes.
    offset: u64,
    /// Compressed length.
    zlen: u32,
    /// Raw length (B, or less for a section's last block).
    raw: u32,
    /// SHA-256 of the compressed bytes.
    hash: [u8; 32],
}

/// Where a section's blocks are.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SectionRef {
    name: String,
    len: u64,
    /// Index of its first block in [`Layout::blocks`].
    first: usize,
    /// Number of blocks.
    count: usize,
}

/// Everything but the body, checked: what [`ShardFile`] keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    header: ShardHeader,
    block_size: u32,
    sections: Vec<SectionRef>,
    blocks: Vec<BlockRef>,
    /// Sum of the section lengths.
    total: u64,
}

/// Reads the fixed prefix: magic, version, header length.
fn parse_prefix(p: &[u8]) -> std::result::Result<u32, String> {
    if p.len() < PREFIX {
        return Err(format!("truncated: {} bytes", p.len()));
    }
    if &p[..8] != MAGIC {
        return Err("not a shard (bad magic bytes)".into());
    }
    let version = u32::from_le_bytes(p[8..12].try_into().expect("4 bytes"));
    if version == 1 {
        return Err(
            "old shard format 1 (written by an older gametables, without a block index); \
             `gametables run` recomputes it"
                .into(),
        );
    }
    if version != FORMAT_VERSION {
        return Err(format!(
            "shard format version {version}, this build reads {FORMAT_VERSION}"
        ));
    }
    let hlen = u32::from_le_bytes(p[12..16].try_into().expect("4 bytes"));
    if hlen > MAX_HEADER {
        return Err(format!("header length {hlen} too large"));
    }
    Ok(hlen)
}

/// The format version a file declares if it starts like a shard (magic
/// bytes, then the version), without checking anything else: `Some(1)` for
/// a shard written by an older gametables. `None` if the file cannot be read
/// or does not start with [`MAGIC`].
pub fn file_format_version(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut p = [0u8; 12];
    std::fs::File::open(path).ok()?.read_exact(&mut p).ok()?;
    (&p[..8] == MAGIC).then(|| u32::from_le_bytes(p[8..12].try_into().expect("4 bytes")))
}

/// A file that fails its trailer (or is too short) but starts like a
/// format-1 shard is named as the old format, not as damaged.
fn old_format(bytes: &[u8]) -> std::result::Result<(), String> {
    if bytes.len() >= PREFIX && &bytes[..8] == MAGIC && bytes[8..12] == 1u32.to_le_bytes() {
        parse_prefix(bytes)?;
    }
    Ok(())
}

/// Reads the footer (`tail`: the last [`FOOTER`] bytes of a file of
/// `file_len` bytes whose body starts at `body_start`): the index length,
/// checked against the room left, and the index checksum.
fn parse_footer(
    tail: &[u8],
    file_len: u64,
    body_start: u64,
) -> std::result::Result<(u64, [u8; 32]), String> {
    let ilen = u64::from_le_bytes(tail[..8].try_into().expect("8 bytes"));
    let room = file_len - body_start - FOOTER as u64;
    if ilen > room {
        return Err(format!(
            "index length {ilen} past the start of the body ({room} bytes available)"
        ));
    }
    Ok((ilen, tail[8..40].try_into().expect("32 bytes")))
}

/// A cursor over index bytes that never reads past the end.
struct Cursor<'a> {
    b: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.b.len() {
            return Err("index truncated".into());
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
}

/// Parses and checks the index (whose own checksum the caller verified)
/// against the header bytes `head` (prefix and header) and the body span
/// `body_start..body_end`.
fn parse_index(
    index: &[u8],
    head: &[u8],
    body_start: u64,
    body_end: u64,
) -> std::result::Result<Layout, String> {
    let h: Head = codec::decode(&head[PREFIX..]).map_err(|e| format!("header: {e}"))?;
    let mut c = Cursor { b: index };
    let block_size = c.u32()?;
    if block_size == 0 || block_size > MAX_BLOCK {
        return Err(format!("block size {block_size} out of range"));
    }
    let count = c.u32()? as usize;
    // Each section takes at least 12 index bytes: no allocation beyond the index.
    if count > index.len() / 12 {
        return Err(format!("{count} sections in a {}-byte index", index.len()));
    }
    let mut sections = Vec::with_capacity(count);
    let mut total = 0u64;
    let mut nblocks = 0usize;
    for _ in 0..count {
        let nlen = c.u32()? as usize;
        let name = std::str::from_utf8(c.take(nlen)?)
            .map_err(|_| "section name is not UTF-8".to_string())?
            .to_string();
        let len = c.u64()?;
        total = total
            .checked_add(len)
            .filter(|&t| t <= MAX_BODY)
            .ok_or("section lengths too large")?;
        let k = len.div_ceil(u64::from(block_size)) as usize;
        sections.push(SectionRef {
            name,
            len,
            first: nblocks,
            count: k,
        });
        nblocks += k;
    }
    if c.b.len() as u64 != nblocks as u64 * BLOCK_ENTRY as u64 + 32 {
        return Err(format!(
            "index holds {} bytes of block entries, {nblocks} blocks need {}",
            c.b.len().saturating_sub(32),
            nblocks * BLOCK_ENTRY
        ));
    }
    let mut blocks = Vec::with_capacity(nblocks);
    let mut offset = body_start;
    for s in &sections {
        for i in 0..s.count {
            let zlen = c.u32()?;
            let hash: [u8; 32] = c.take(32)?.try_into().expect("32");
            let raw = (s.len - i as u64 * u64::from(block_size)).min(u64::from(block_size)) as u32;
            blocks.push(BlockRef {
                offset,
                zlen,
                raw,
                hash,
            });
            offset += u64::from(zlen);
        }
    }
    if offset != body_end {
        return Err(format!(
            "blocks take {} bytes, the body has {}",
            offset - body_start,
            body_end - body_start
        ));
    }
    if c.take(32)? != sha256(head) {
        return Err("header checksum mismatch (damaged)".into());
    }
    let header = ShardHeader {
        kind: h.kind,
        job_name: h.job_name,
        job_id: h.job_id,
        sections: sections.iter().map(|s| (s.name.clone(), s.len)).collect(),
    };
    Ok(Layout {
        header,
        block_size,
        sections,
        blocks,
        total,
    })
}

/// Parses a whole shard file's bytes (trailer already verified).
fn layout_of(content: &[u8]) -> std::result::Result<Layout, String> {
    let hlen = parse_prefix(content)? as usize;
    let body_start = PREFIX + hlen;
    let file_len = content.len() as u64 + 32;
    if (body_start + FOOTER) as u64 > file_len {
        return Err("header length past end of file".into());
    }
    let tail = &content[content.len() - (FOOTER - 32)..];
    let (ilen, ihash) = parse_footer(tail, file_len, body_start as u64)?;
    let index_end = content.len() - (FOOTER - 32);
    let index = &content[index_end - ilen as usize..index_end];
    if sha256(index) != ihash {
        return Err("index checksum mismatch (damaged)".into());
    }
    parse_index(
        index,
        &content[..body_start],
        body_start as u64,
        (index_end - ilen as usize) as u64,
    )
}

/// Splits off the trailer and verifies it: the checksum of every byte before.
fn sealed(bytes: &[u8]) -> std::result::Result<&[u8], String> {
    if bytes.len() < PREFIX + FOOTER {
        old_format(bytes)?;
        return Err(format!("truncated: {} bytes", bytes.len()));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 32);
    if sha256(content) != trailer {
        old_format(content)?;
        return Err("checksum mismatch (damaged or truncated)".into());
    }
    Ok(content)
}

// ---------------------------------------------------------------------------
// Whole-file checks and decoding.

/// Checks shard bytes without decompressing the body: length, SHA-256
/// trailer, magic, version, header, index (its checksum, the header's, the
/// block lengths against the body). Returns the header, so that the caller
/// can check whose shard it is. Costs one SHA-256 pass over the file, no
/// decompression. Never panics.
///
/// Every byte is covered by the trailer, so a damaged or truncated file is
/// refused; what it does not see is a body that was *written* wrong under a
/// valid trailer (a block that does not decompress to its length, or whose
/// checksum in the index is wrong), which only [`decode`] finds.
///
/// # Errors
/// A message saying what is wrong, worded as [`decode`] words it.
pub fn check(bytes: &[u8]) -> std::result::Result<ShardHeader, String> {
    Ok(layout_of(sealed(bytes)?)?.header)
}

/// [`check`], and the SHA-256 of the whole file (trailer included, as
/// `result.toml` lists it) from the same pass over the bytes.
///
/// # Errors
/// As [`check`].
pub fn check_digest(bytes: &[u8]) -> std::result::Result<(ShardHeader, [u8; 32]), String> {
    if bytes.len() < PREFIX + FOOTER {
        sealed(bytes)?;
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 32);
    let mut h = Sha256::new();
    h.update(content);
    if h.clone().finalize().as_slice() != trailer {
        old_format(content)?;
        return Err("checksum mismatch (damaged or truncated)".into());
    }
    h.update(trailer);
    let file: [u8; 32] = h.finalize().into();
    Ok((layout_of(content)?.header, file))
}

/// Decodes and verifies shard bytes: checksum, magic, version, header,
/// index, and every block (its checksum, its decompressed length). Never
/// panics on arbitrary input. The declared raw total may be up to
/// [`MAX_BODY`]; readers that know the job bound it with
/// [`decode_bounded`].
///
/// # Errors
/// A message saying what is wrong (checksum mismatch, truncated, …).
pub fn decode(bytes: &[u8]) -> std::result::Result<Shard, String> {
    decode_bounded(bytes, MAX_BODY)
}

/// [`decode`], refusing before any decompression a shard whose sections
/// declare more than `max_raw` bytes in all (what the job can legitimately
/// produce).
///
/// # Errors
/// As [`decode`], and the declared and allowed sizes if over the bound.
pub fn decode_bounded(bytes: &[u8], max_raw: u64) -> std::result::Result<Shard, String> {
    let content = sealed(bytes)?;
    let layout = layout_of(content)?;
    if layout.total > max_raw {
        return Err(format!(
            "sections declare {} bytes, more than the {max_raw} this job can produce",
            layout.total
        ));
    }
    // One buffer per section, decompressed into in place (no copy).
    let mut bufs = Vec::with_capacity(layout.sections.len());
    for s in &layout.sections {
        bufs.push(zeroed(s.len as usize).ok_or_else(|| {
            format!(
                "cannot allocate the {} bytes the index declares",
                layout.total
            )
        })?);
    }
    let mut slices = Vec::with_capacity(layout.blocks.len());
    for (s, buf) in layout.sections.iter().zip(bufs.iter_mut()) {
        slices.extend(split_blocks(
            &layout.blocks[s.first..s.first + s.count],
            buf,
        ));
    }
    decompress_blocks(slices, |b| {
        Ok(&content[b.offset as usize..(b.offset + u64::from(b.zlen)) as usize])
    })
    .map_err(|(_, e)| e)?;
    let sections = layout
        .sections
        .iter()
        .zip(bufs)
        .map(|(s, bytes)| Section::new(s.name.clone(), bytes))
        .collect();
    Ok(Shard {
        header: layout.header,
        sections,
    })
}

/// Threads used to compress or decompress the blocks of one shard.
fn codec_threads(blocks: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.min(blocks / 4).max(1)
}

/// A zeroed buffer of `len` bytes, `None` if it cannot be allocated. A large
/// one is fresh pages the kernel zeroes when they are first touched (no
/// memset here), that is by the threads that decompress into them.
fn zeroed(len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    // SAFETY: `layout` has a non-zero size. A non-null result is `len`
    // zeroed (so initialised) bytes from the global allocator with the
    // layout of a `Vec<u8>` of capacity `len`, which then owns them.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout);
        (!p.is_null()).then(|| Vec::from_raw_parts(p, len, len))
    }
}

/// Cuts `out` (the sum of the blocks' raw lengths) into the blocks' slices.
fn split_blocks<'b>(
    blocks: &'b [BlockRef],
    out: &'b mut [u8],
) -> Vec<(&'b BlockRef, &'b mut [u8])> {
    let mut slices = Vec::with_capacity(blocks.len());
    let mut rest = out;
    for b in blocks {
        let (a, r) = rest.split_at_mut(b.raw as usize);
        slices.push((b, a));
        rest = r;
    }
    slices
}

/// Checks and decompresses every block into its slice, in parallel;
/// `zbytes` gives a block's compressed bytes. The error is that of the
/// first damaged block in file order, with that block's file offset.
fn decompress_blocks<'a>(
    mut slices: Vec<(&BlockRef, &mut [u8])>,
    zbytes: impl Fn(&BlockRef) -> std::result::Result<&'a [u8], String> + Sync,
) -> std::result::Result<(), (u64, String)> {
    let threads = codec_threads(slices.len());
    let per = slices.len().div_ceil(threads).max(1);
    let first_err = std::sync::Mutex::new(None::<(u64, String)>);
    std::thread::scope(|scope| {
        for chunk in slices.chunks_mut(per) {
            let zbytes = &zbytes;
            let first_err = &first_err;
            scope.spawn(move || {
                let mut d = match zstd::bulk::Decompressor::new() {
                    Ok(d) => d,
                    Err(e) => {
                        *first_err.lock().expect("no panic") = Some((0, format!("zstd: {e}")));
                        return;
                    }
                };
                for (b, dst) in chunk.iter_mut() {
                    if let Err(e) = zbytes(b).and_then(|z| unpack(&mut d, b, z, dst)) {
                        let mut slot = first_err.lock().expect("no panic");
                        if slot.as_ref().is_none_or(|(o, _)| b.offset < *o) {
                            *slot = Some((b.offset, e));
                        }
                        return;
                    }
                }
            });
        }
    });
    match first_err.into_inner().expect("no panic") {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Checks one block's compressed bytes against its checksum and
/// decompresses them into `dst` (exactly its raw length).
fn unpack(
    d: &mut zstd::bulk::Decompressor<'_>,
    b: &BlockRef,
    z: &[u8],
    dst: &mut [u8],
) -> std::result::Result<(), String> {
    if sha256(z) != b.hash {
        return Err(format!(
            "block at byte {}: checksum mismatch (damaged)",
            b.offset
        ));
    }
    let n = d.decompress_to_buffer(z, dst).map_err(|e| {
        if e.to_string().contains("too small") {
            format!(
                "block at byte {} holds more than the {} bytes the index declares",
                b.offset, b.raw
            )
        } else {
            format!("block at byte {}: zstd: {e}", b.offset)
        }
    })?;
    if n != dst.len() {
        return Err(format!(
            "block at byte {} holds {n} bytes, the index declares {}",
            b.offset, b.raw
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Writing.

/// Compresses one block (an independent zstd frame without checksum or
/// content size: the index has both).
fn compress_block(c: &mut zstd::bulk::Compressor<'_>, raw: &[u8]) -> std::io::Result<Vec<u8>> {
    c.compress(raw)
}

fn compressor(level: i32) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    use zstd::zstd_safe::CParameter;
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(CParameter::ChecksumFlag(false))?;
    c.set_parameter(CParameter::ContentSizeFlag(false))?;
    Ok(c)
}

/// The core of both writers: emits blocks to `out` and keeps the running
/// whole-file checksum and the index.
struct BlockWriter<W: Write> {
    out: W,
    hasher: Sha256,
    level: i32,
    block_size: usize,
    /// SHA-256 of prefix and header.
    head_hash: [u8; 32],
    /// Sections finished or open: name, raw length so far.
    sections: Vec<(String, u64)>,
    open: bool,
    /// Per block: compressed length and checksum.
    blocks: Vec<(u32, [u8; 32])>,
    /// Raw bytes of the open section not yet compressed.
    pending: Vec<u8>,
    /// Blocks compressed at once (16 per core, at most 256).
    batch: usize,
    written: u64,
}

impl<W: Write> BlockWriter<W> {
    fn new(mut out: W, header: &ShardHeader, level: i32) -> std::result::Result<Self, String> {
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

    fn begin(&mut self, name: &str) -> std::result::Result<(), String> {
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

    fn write(&mut self, mut data: &[u8]) -> std::result::Result<(), String> {
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

    fn end(&mut self) -> std::result::Result<(), String> {
        if self.open {
            let p = std::mem::take(&mut self.pending);
            self.emit(&p)?;
            self.open = false;
        }
        Ok(())
    }

    /// Compresses `raw` (whole blocks, the last possibly shorter) in
    /// parallel and writes the blocks in order.
    fn emit(&mut self, raw: &[u8]) -> std::result::Result<(), String> {
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
    fn finish(mut self, job: &ShardHeader) -> std::result::Result<(W, ShardHeader, u64), String> {
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
    inner: BlockWriter<std::io::BufWriter<std::fs::File>>,
    tmp: tempfile::TempPath,
    header: ShardHeader,
    path: PathBuf,
    durability: Durability,
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

    fn err(&self, e: String) -> Error {
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
    file: std::fs::File,
    path: PathBuf,
    layout: Layout,
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

    fn section(&self, name: &str) -> std::result::Result<&SectionRef, String> {
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
