//! The full check of a Chomp box split into parts that is too large to
//! hold whole here (the 21×21 box's bits are 67 GB): the rule "P iff no
//! bite reaches a P-position" checked at a sample of its ranks, every bit
//! read from the parts' shards block by block ([`PartBits`]).
//!
//! The sample ([`sample_ranks`]) is every position the published questions
//! rest on — every rectangle of the box and every position one bite from a
//! rectangle (the children whose P-bits make a rectangle's winning moves) —
//! and the first and the last [`EDGE`] ranks of every part, where a part
//! meets the P-positions filed by the parts below it. At each sampled rank
//! every bite is taken and the child's stored bit read. The rectangles'
//! winning-move lists are then checked against the stored bits as for a
//! box held whole.
//!
//! What this proves is local: the sampled bits agree with the bits one bite
//! below them. It does not prove those bits; a box held whole is checked at
//! every rank instead (see [`super::boxes`]).

use std::sync::{Arc, Mutex};

use crate::pipeline::codec;
use crate::pipeline::fullcheck::Ctx;
use crate::pipeline::shard::ShardFile;

use super::super::layout::{BoxMeta, RunBox};
use super::rules::{BoxRanks, staircase_text};

/// Ranks checked at the start and at the end of every part.
pub const EDGE: u64 = 1 << 14;

/// Decoded blocks of `p-positions` kept at once, in bytes (all threads share them).
const CACHE_BYTES: u64 = 256 << 20;

/// One part of a split box, opened for block reads.
struct Part {
    name: String,
    start: u64,
    end: u64,
    file: ShardFile,
}

/// The P-bits of a box split into parts, read on demand from the parts'
/// `p-positions` sections (bit `x − start` of a part's little-endian
/// words), through a cache of decoded blocks.
pub struct PartBits {
    parts: Vec<Part>,
    cache: quick_cache::sync::Cache<(usize, usize), Arc<Vec<u8>>>,
    /// Blocks that could not be read, each reported once.
    failed: Mutex<Vec<(usize, usize)>>,
}

impl PartBits {
    /// Opens every part of `bx`, checking that their windows (from each
    /// part's `meta`) tile the box `b` in order and that each `p-positions`
    /// section holds its window's words. Problems are findings; `None` if
    /// the box cannot be read this way.
    pub fn open(cx: &Ctx, bx: &RunBox<'_>, b: &BoxRanks) -> Option<PartBits> {
        let mut parts = Vec::with_capacity(bx.jobs.len());
        let mut next = 0u64;
        let mut block = 1u64 << 17;
        for job in &bx.jobs {
            let (file, meta) = open_part(cx, &job.name, b, next)?;
            next = meta.end;
            block = file.block_size().max(1);
            parts.push(Part {
                name: job.name.clone(),
                start: meta.start,
                end: meta.end,
                file,
            });
        }
        if !covers_box(cx, bx, b, next) {
            return None;
        }
        let blocks = (CACHE_BYTES / block).max(16) as usize;
        Some(PartBits {
            parts,
            cache: quick_cache::sync::Cache::new(blocks),
            failed: Mutex::new(Vec::new()),
        })
    }

    /// The parts' windows `(job, start, end)`, in rank order.
    pub fn windows(&self) -> impl Iterator<Item = (&str, u64, u64)> {
        self.parts.iter().map(|p| (p.name.as_str(), p.start, p.end))
    }

    /// The job whose window holds rank `x` (the last part's past the end).
    pub fn job_of(&self, x: u64) -> &str {
        let k = self.parts.partition_point(|p| p.end <= x);
        &self.parts[k.min(self.parts.len() - 1)].name
    }

    /// The stored P-bit of rank `x` (`x` below the box's size); `None` if
    /// its block cannot be read (reported once per block as a finding).
    pub fn bit(&self, cx: &Ctx, x: u64) -> Option<bool> {
        let k = self.parts.partition_point(|p| p.end <= x);
        let part = self.parts.get(k)?;
        let byte = (x - part.start) / 8;
        let bs = part.file.block_size().max(1);
        let i = (byte / bs) as usize;
        let data = match self.cache.get(&(k, i)) {
            Some(d) => d,
            None => match part.file.read_block("p-positions", i) {
                Ok(d) => {
                    let d = Arc::new(d);
                    self.cache.insert((k, i), Arc::clone(&d));
                    d
                }
                Err(e) => {
                    let mut failed = self
                        .failed
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if !failed.contains(&(k, i)) {
                        failed.push((k, i));
                        cx.bad(&part.name, "p-positions", e);
                    }
                    return None;
                }
            },
        };
        let at = (byte - i as u64 * bs) as usize;
        data.get(at).map(|v| v >> ((x - part.start) % 8) & 1 == 1)
    }
}

/// Opens the shard of part `job` of the box `b` for block reads and checks
/// its `meta`: the window starting at `next` (a multiple of 64), inside
/// the box, of this box, with a `p-positions` section of the window's
/// words. Problems are findings; `None` then.
pub fn open_part(cx: &Ctx, job: &str, b: &BoxRanks, next: u64) -> Option<(ShardFile, BoxMeta)> {
    let file = match cx.run().open(job) {
        Ok(f) => f,
        Err(e) => {
            cx.bad(job, "shard", format!("cannot be read: {e}"));
            return None;
        }
    };
    let meta: Option<BoxMeta> = file
        .read_section("meta")
        .ok()
        .and_then(|m| codec::decode(&m).ok());
    let Some(meta) = meta else {
        cx.bad(job, "meta", "section missing or malformed");
        return None;
    };
    let words = meta.end.saturating_sub(meta.start).div_ceil(64);
    let ok = meta.start == next
        && meta.end > meta.start
        && meta.end <= b.len()
        && meta.start.is_multiple_of(64)
        && (meta.rows, meta.cols, meta.ranks) == (b.rows() as u32, b.cols() as u32, b.len())
        && file.section_len("p-positions") == Some(words * 8);
    if !ok {
        cx.bad(
            job,
            "meta",
            format!(
                "window {}..{} ({}x{}, {} ranks) is not the next window of the box, \
                 or p-positions is not {words} words",
                meta.start, meta.end, meta.rows, meta.cols, meta.ranks
            ),
        );
        return None;
    }
    Some((file, meta))
}

/// Whether the parts, read up to rank `next`, cover the box `b`; a
/// finding if not.
pub fn covers_box(cx: &Ctx, bx: &RunBox<'_>, b: &BoxRanks, next: u64) -> bool {
    if next != b.len() {
        cx.bad(
            &bx.name(),
            "parts",
            format!("cover ranks 0..{next} of {}", b.len()),
        );
    }
    next == b.len()
}

/// The sorted, distinct ranks of the sample: every rectangle a×b of the
/// box (1×1 included: it has no bite, a P-position), every
/// position one bite from a rectangle, and the first and last [`EDGE`]
/// ranks of every window (rank 0, the empty board, included).
pub fn sample_ranks(b: &BoxRanks, windows: &[(u64, u64)]) -> Vec<u64> {
    let (m, n) = (b.rows(), b.cols() as u32);
    let mut out = Vec::new();
    let mut rows = vec![0u32; m];
    for a in 1..=m {
        for c in 1..=n {
            for (r, row) in rows.iter_mut().enumerate() {
                *row = if r < a { c } else { 0 };
            }
            let x = b.rank(&rows);
            out.push(x);
            b.for_each_bite(&rows, x, |_, _, child| out.push(child));
        }
    }
    for &(start, end) in windows {
        out.extend(start..end.min(start.saturating_add(EDGE)));
        out.extend(end.saturating_sub(EDGE).max(start)..end);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Checks the rule at every rank of `ranks` from the stored bits, on the
/// context's threads, each finding named by the part holding the rank;
/// returns the ranks checked (those whose bits, and
/// whose children's bits, could all be read).
pub fn check_ranks(cx: &Ctx, b: &BoxRanks, bits: &PartBits, ranks: &[u64]) -> u64 {
    let threads = cx.threads().min(ranks.len().max(1));
    let chunk = ranks.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut rows = vec![0u32; b.rows()];
                    let mut checked = 0u64;
                    for (k, &x) in part.iter().enumerate() {
                        if check_one(cx, b, bits, x, &mut rows) {
                            checked += 1;
                        }
                        if k % 4096 == 4095 {
                            cx.advance(4096);
                        }
                    }
                    cx.advance(part.len() as u64 % 4096);
                    checked
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("sample thread"))
            .sum()
    })
}

/// The rule at rank `x`; `false` if a bit could not be read.
fn check_one(cx: &Ctx, b: &BoxRanks, bits: &PartBits, x: u64, rows: &mut [u32]) -> bool {
    let Some(stored) = bits.bit(cx, x) else {
        return false;
    };
    let job = bits.job_of(x);
    if x == 0 {
        if stored {
            cx.bad(
                job,
                "empty (rank 0)",
                "the empty board is marked as a P-position",
            );
        }
        return true;
    }
    b.unrank(x, rows);
    let mut to = None;
    let mut readable = true;
    b.for_each_bite(rows, x, |i, j, c| {
        if to.is_none() {
            match bits.bit(cx, c) {
                Some(true) => to = Some((i, j, c)),
                Some(false) => {}
                None => readable = false,
            }
        }
    });
    if to.is_none() && !readable {
        return false;
    }
    if stored == to.is_some() {
        report_wrong_bit(cx, job, b, rows, x, to);
    }
    true
}

/// Records the wrong P-bit of rank `x` (the staircase `rows`): stored as a
/// P-position though the bite `to = (i, j, child)` leads to a P-position, or,
/// with `to` `None`, stored as an N-position though no bite does.
pub fn report_wrong_bit(
    cx: &Ctx,
    job: &str,
    b: &BoxRanks,
    rows: &[u32],
    x: u64,
    to: Option<(u32, u32, u64)>,
) {
    let name = format!("{} (rank {x})", staircase_text(rows));
    match to {
        Some((i, j, c)) => {
            let mut crows = vec![0u32; b.rows()];
            b.unrank(c, &mut crows);
            cx.bad(
                job,
                name,
                format!(
                    "stored as a P-position, but bite ({i}, {j}) leads to the P-position {}",
                    staircase_text(&crows)
                ),
            );
        }
        None => cx.bad(
            job,
            name,
            "stored as an N-position, but no bite leads to a P-position",
        ),
    }
}
