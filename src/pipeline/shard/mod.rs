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

mod decode;
mod encode;
mod file;
mod layout;

pub use self::decode::*;
pub use self::encode::*;
pub use self::file::*;
pub use self::layout::*;

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

    /// The shard's `meta` section, decoded as the kind's meta type `T`
    /// (written with [`crate::pipeline::codec`]).
    ///
    /// # Errors
    /// [`Error::Job`] naming the job if the section is absent or is not a
    /// `T`.
    pub fn meta<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        crate::pipeline::codec::decode(self.section("meta")?).map_err(|e| {
            Error::job(
                &self.header.job_name,
                format!("section `meta` malformed: {e}"),
            )
        })
    }
}
