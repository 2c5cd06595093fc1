//! A shard's layout: its prefix, footer and block index, parsed and checked.

use super::*;

// ---------------------------------------------------------------------------
// Layout: header and index, parsed and checked.

/// One block as the index describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BlockRef {
    /// File offset of the compressed bytes.
    pub(super) offset: u64,
    /// Compressed length.
    pub(super) zlen: u32,
    /// Raw length (B, or less for a section's last block).
    pub(super) raw: u32,
    /// SHA-256 of the compressed bytes.
    pub(super) hash: [u8; 32],
}

/// Where a section's blocks are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SectionRef {
    pub(super) name: String,
    pub(super) len: u64,
    /// Index of its first block in [`Layout::blocks`].
    pub(super) first: usize,
    /// Number of blocks.
    pub(super) count: usize,
}

/// Everything but the body, checked: what [`ShardFile`] keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) header: ShardHeader,
    pub(super) block_size: u32,
    pub(super) sections: Vec<SectionRef>,
    pub(super) blocks: Vec<BlockRef>,
    /// Sum of the section lengths.
    pub(super) total: u64,
}

/// Reads the fixed prefix: magic, version, header length.
pub(super) fn parse_prefix(p: &[u8]) -> std::result::Result<u32, String> {
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
pub(super) fn old_format(bytes: &[u8]) -> std::result::Result<(), String> {
    if bytes.len() >= PREFIX && &bytes[..8] == MAGIC && bytes[8..12] == 1u32.to_le_bytes() {
        parse_prefix(bytes)?;
    }
    Ok(())
}

/// Reads the footer (`tail`: the last [`FOOTER`] bytes of a file of
/// `file_len` bytes whose body starts at `body_start`): the index length,
/// checked against the room left, and the index checksum.
pub(super) fn parse_footer(
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
pub(super) struct Cursor<'a> {
    pub(super) b: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub(super) fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.b.len() {
            return Err("index truncated".into());
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    pub(super) fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    pub(super) fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }
}

/// Parses and checks the index (whose own checksum the caller verified)
/// against the header bytes `head` (prefix and header) and the body span
/// `body_start..body_end`.
pub(super) fn parse_index(
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
pub(super) fn layout_of(content: &[u8]) -> std::result::Result<Layout, String> {
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
pub(super) fn sealed(bytes: &[u8]) -> std::result::Result<&[u8], String> {
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
