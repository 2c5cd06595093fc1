//! Decoding a whole shard: digests checked, blocks decompressed.

use super::*;

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
pub(super) fn codec_threads(blocks: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.min(blocks / 4).max(1)
}

/// A zeroed buffer of `len` bytes, `None` if it cannot be allocated. A large
/// one is fresh pages the kernel zeroes when they are first touched (no
/// memset here), that is by the threads that decompress into them.
pub(super) fn zeroed(len: usize) -> Option<Vec<u8>> {
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
pub(super) fn split_blocks<'b>(
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
pub(super) fn decompress_blocks<'a>(
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
pub(super) fn unpack(
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
