//! Shard files: one job's output, compressed and checksummed.
//!
//! Layout (format version 1), all integers little-endian:
//!
//! | bytes | content |
//! |---|---|
//! | 8 | magic `GTSHARD\0` |
//! | 4 | format version (`u32`, = 1) |
//! | 4 | header length H (`u32`) |
//! | H | header: [`ShardHeader`] through [`codec`](super::codec) (bincode) |
//! | 8 | body length B (`u64`) |
//! | B | body: one zstd frame of the sections, concatenated in header order (level [`ZSTD_LEVEL`] unless the kind picks another: [`JobKind::zstd_level`](super::kind::JobKind::zstd_level)) |
//! | 32 | SHA-256 of every byte before it |
//!
//! Same sections → same bytes: nothing in a shard depends on time, host,
//! thread count or hash-map order. The bytes do depend on the zstd library
//! version, which `Cargo.lock` pins.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::codec;
use super::digest::sha256;
use super::error::{Error, Result};

/// The first 8 bytes of every shard.
pub const MAGIC: &[u8; 8] = b"GTSHARD\0";
/// The shard format version written by this build.
pub const FORMAT_VERSION: u32 = 1;
/// zstd compression level of shard bodies, unless the job kind picks another.
pub const ZSTD_LEVEL: i32 = 3;
/// Largest decompressed body accepted (64 GiB); guards against absurd headers.
pub const MAX_BODY: u64 = 64 << 30;

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

/// On-disk shard header (bincode through the codec module).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// Job kind, e.g. `chomp-boxes`.
    pub kind: String,
    /// Job name within its plan, e.g. `box-14x14`.
    pub job_name: String,
    /// Job id (64 hex digits).
    pub job_id: String,
    /// Section names and uncompressed lengths in bytes, in body order.
    pub sections: Vec<(String, u64)>,
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

/// Encodes a shard to bytes, the body at zstd level [`ZSTD_LEVEL`].
///
/// # Errors
/// [`Error::Job`] if the header cannot be encoded or compression fails.
pub fn encode(header_base: &ShardHeader, sections: &[Section]) -> Result<Vec<u8>> {
    encode_with_level(header_base, sections, ZSTD_LEVEL)
}

/// Encodes a shard to bytes, the body at zstd level `level` (the level is
/// not recorded: any level decodes the same way; it changes the bytes, so a
/// kind's level is part of its reference digests).
///
/// # Errors
/// As [`encode`].
pub fn encode_with_level(
    header_base: &ShardHeader,
    sections: &[Section],
    level: i32,
) -> Result<Vec<u8>> {
    let job = || header_base.job_name.clone();
    let header = ShardHeader {
        sections: sections
            .iter()
            .map(|s| (s.name.clone(), s.bytes.len() as u64))
            .collect(),
        ..header_base.clone()
    };
    let head = codec::encode(&header).map_err(|e| Error::job(job(), e))?;
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), level)
        .map_err(|e| Error::job(job(), format!("zstd: {e}")))?;
    enc.include_checksum(false)
        .and_then(|_| enc.include_contentsize(false))
        .map_err(|e| Error::job(job(), format!("zstd: {e}")))?;
    for s in sections {
        enc.write_all(&s.bytes)
            .map_err(|e| Error::job(job(), format!("zstd: {e}")))?;
    }
    let body = enc
        .finish()
        .map_err(|e| Error::job(job(), format!("zstd: {e}")))?;
    let mut out = Vec::with_capacity(head.len() + body.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    let digest = sha256(&out);
    out.extend_from_slice(&digest);
    Ok(out)
}

/// Smallest possible shard file: magic, version, header length, body
/// length and trailer around an empty header and body.
const FIXED: usize = 8 + 4 + 4 + 8 + 32;

/// A shard file's parts, located and checked without decompressing the body.
struct Frame<'a> {
    header: ShardHeader,
    body: &'a [u8],
    /// Sum of the declared section lengths (≤ [`MAX_BODY`]).
    total: u64,
}

/// Checks everything before the trailer except the body's content: magic,
/// version, header, body length, declared section lengths. `content` is the
/// file without its trailer, whose checksum the caller verified.
fn frame(content: &[u8]) -> std::result::Result<Frame<'_>, String> {
    if &content[..8] != MAGIC {
        return Err("not a shard (bad magic bytes)".into());
    }
    let version = u32::from_le_bytes(content[8..12].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION {
        return Err(format!(
            "shard format version {version}, this build reads {FORMAT_VERSION}"
        ));
    }
    let hlen = u32::from_le_bytes(content[12..16].try_into().expect("4 bytes")) as usize;
    let rest = &content[16..];
    if hlen > rest.len().saturating_sub(8) {
        return Err("header length past end of file".into());
    }
    let header: ShardHeader = codec::decode(&rest[..hlen]).map_err(|e| format!("header: {e}"))?;
    let rest = &rest[hlen..];
    let blen = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
    let body = &rest[8..];
    if blen != body.len() as u64 {
        return Err(format!(
            "body length {blen} but {} bytes follow the header",
            body.len()
        ));
    }
    let total = header
        .sections
        .iter()
        .try_fold(0u64, |acc, (_, l)| acc.checked_add(*l))
        .filter(|&t| t <= MAX_BODY)
        .ok_or("section lengths too large")?;
    Ok(Frame {
        header,
        body,
        total,
    })
}

/// Splits off the trailer and verifies it: the checksum of every byte before.
fn sealed(bytes: &[u8]) -> std::result::Result<&[u8], String> {
    if bytes.len() < FIXED {
        return Err(format!("truncated: {} bytes", bytes.len()));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 32);
    if sha256(content) != trailer {
        return Err("checksum mismatch (damaged or truncated)".into());
    }
    Ok(content)
}

/// Checks shard bytes without decompressing the body: length, SHA-256
/// trailer, magic, version, header, body length and declared section
/// lengths. Returns the header, so that the caller can check whose shard it
/// is. Costs one SHA-256 pass over the file, no decompression. Never panics.
///
/// Every byte is covered by the trailer, so a damaged or truncated file is
/// refused; what it does not see is a body that was *written* wrong under a
/// valid trailer (a zstd frame that does not decompress to the declared
/// lengths), which only [`decode`] finds.
///
/// # Errors
/// A message saying what is wrong, worded as [`decode`] words it.
pub fn check(bytes: &[u8]) -> std::result::Result<ShardHeader, String> {
    Ok(frame(sealed(bytes)?)?.header)
}

/// [`check`], and the SHA-256 of the whole file (trailer included, as
/// `result.toml` lists it) from the same pass over the bytes.
///
/// # Errors
/// As [`check`].
pub fn check_digest(bytes: &[u8]) -> std::result::Result<(ShardHeader, [u8; 32]), String> {
    use sha2::{Digest, Sha256};
    if bytes.len() < FIXED {
        return Err(format!("truncated: {} bytes", bytes.len()));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 32);
    let mut h = Sha256::new();
    h.update(content);
    if h.clone().finalize().as_slice() != trailer {
        return Err("checksum mismatch (damaged or truncated)".into());
    }
    h.update(trailer);
    let file: [u8; 32] = h.finalize().into();
    Ok((frame(content)?.header, file))
}

/// Decodes and verifies shard bytes: checksum, magic, version, header,
/// section lengths, body. Never panics on arbitrary input.
///
/// # Errors
/// A message saying what is wrong (checksum mismatch, truncated, …).
pub fn decode(bytes: &[u8]) -> std::result::Result<Shard, String> {
    let Frame {
        header,
        body,
        total,
    } = frame(sealed(bytes)?)?;
    // One-shot decompression straight into a buffer of the declared size:
    // the streaming decoder copied every byte once more out of its window
    // and grew its output by doubling.
    let mut raw: Vec<u8> = Vec::new();
    raw.try_reserve_exact(total as usize)
        .map_err(|_| format!("cannot allocate the {total} bytes the header declares"))?;
    zstd::bulk::Decompressor::new()
        .and_then(|mut d| d.decompress_to_buffer(body, &mut raw))
        .map_err(|e| {
            if e.to_string().contains("too small") {
                format!("body holds more than the {total} bytes the header declares")
            } else {
                format!("zstd: {e}")
            }
        })?;
    if raw.len() as u64 != total {
        return Err(format!(
            "body holds {} bytes, header declares {total}",
            raw.len()
        ));
    }
    // From the last section back; the first section keeps the decompressed
    // buffer itself, so a shard with one big leading section is not copied.
    let mut sections = Vec::with_capacity(header.sections.len());
    let mut end = raw.len();
    for (name, len) in header.sections.iter().rev() {
        let start = end - *len as usize;
        let bytes = if start == 0 {
            raw.truncate(end);
            std::mem::take(&mut raw)
        } else {
            raw[start..end].to_vec()
        };
        sections.push(Section::new(name.clone(), bytes));
        end = start;
    }
    sections.reverse();
    Ok(Shard { header, sections })
}

/// When a written file reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync the file before the rename and the directory after it: once
    /// the call returns, the file survives a power cut.
    Now,
    /// Rename without fsync. A crash of the process loses nothing (the page
    /// cache holds the file); an operating-system crash or power cut before
    /// the next [`RunDir::sync`](super::rundir::RunDir::sync) may leave the
    /// file empty or torn. Only for files that are checked when read again
    /// (shards carry a sha256 trailer and are recomputed when it fails;
    /// manifests are compared with the plan and rewritten) and whose writer
    /// syncs the filesystem once at the end of its run.
    Deferred,
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, fsync, rename over `path`, fsync the directory. A crash leaves
/// either the old file or the new one, never a partial file at `path`.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, bytes, Durability::Now)
}

/// [`write_atomic`] with a choice of [`Durability`]: with
/// [`Durability::Deferred`] the two fsyncs are left out (a run of many small
/// jobs spent most of its time in them: 2 × ~3 ms per shard here).
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic_with(path: &Path, bytes: &[u8], durability: Durability) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    // Every failure names `path`, the file the caller asked for, never the
    // temporary file (which is removed on the way out): a full disk reads
    // `RUN_DIR/tables/x.csv: No space left on device (os error 28)`.
    // 0644 before the umask, like any other output file (tempfile's default is 0600).
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(|e| Error::io(path)(without_temp_path(e)))?;
    // The file itself: tempfile's own `Write` adds the temporary path to errors.
    tmp.as_file_mut()
        .write_all(bytes)
        .map_err(Error::io(path))?;
    if durability == Durability::Now {
        tmp.as_file().sync_all().map_err(Error::io(path))?;
    }
    tmp.persist(path)
        .map_err(|e| Error::io(path)(without_temp_path(e.error)))?;
    if durability == Durability::Now {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(Error::io(path))?;
    }
    Ok(())
}

/// An I/O error from `tempfile` without the temporary file's path it appends
/// (`… at path "/run/tables/.tmp-x"`): the caller names the real file.
fn without_temp_path(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    match e
        .get_ref()
        .map(ToString::to_string)
        .and_then(|s| s.split_once(" at path ").map(|(head, _)| head.to_string()))
    {
        Some(head) => std::io::Error::new(e.kind(), head),
        None => e,
    }
}
