//! Full check of `chomp-boxes`: every P-bit of every box, every listed
//! winning move of every rectangle.
//!
//! **P-bits.** A position is a P-position iff no bite leads to a
//! P-position. Pulling every bite of every position costs all bites; instead
//! every stored P-position pushes to its predecessors ([`BoxRanks::for_each_unbite`]),
//! marking the positions that *have* a winning bite (each thread its own
//! bitset, OR-ed). Then every rank must be P exactly when it is unmarked —
//! which is the rule "P iff no bite reaches P" at every position, read off
//! the stored bits alone. The work is the number of winning bites (10×10:
//! 312,237 of 9,053,045, the day-72 Chomp article). Rank 0 (the empty board) is not a
//! position and must not be marked P.
//!
//! A box split into parts (`box-RxC-part-K`, rank windows) is checked as
//! one box: the parts' bits laid end to end, when that bitset fits the
//! allocation bound here (`verify --memory`); a larger box is checked at a
//! sample of its ranks, its bits read block by block from the parts
//! ([`super::sampled`]), and its coverage line says so.
//!
//! **Rectangles.** For every rectangle a×b of the box (listed once each, in
//! `(a, b)` order, 1×1 left out), every bite is taken: the listed moves must
//! be exactly the bites whose child is a stored P-position, sorted.

use super::super::layout::{BoxMeta, RunBox, run_boxes};
use crate::pipeline::error::Result;
use crate::pipeline::kind::JobSpec;

use super::rules::BoxRanks;
use super::sampled::{
    EDGE, PartBits, check_ranks, covers_box, open_part, report_wrong_bit, sample_ranks,
};
use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, bit, le_u32s, le_u64s};

/// The `chomp-boxes` checker.
pub struct BoxesChecker;

/// `(rows, cols)` of a box job from its parameters.
pub(crate) fn box_params(job: &JobSpec) -> Option<(u32, u32)> {
    let rows = job.params.get("rows")?.as_integer()?;
    let cols = job.params.get("cols")?.as_integer()?;
    Some((u32::try_from(rows).ok()?, u32::try_from(cols).ok()?))
}

impl Checker for BoxesChecker {
    crate::pipeline::fullcheck::checks_kind!("chomp-boxes");

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let jobs = cx.run().jobs();
        let boxes = run_boxes(jobs)?;
        let total: u64 = boxes
            .iter()
            .filter_map(|b| BoxRanks::new(b.rows as usize, b.cols as usize))
            .map(|b| b.len())
            .sum();
        cx.set_total(total);
        let mut bits = Coverage {
            what: "P-bits of every box rank (P iff no bite reaches P)".into(),
            stored: 0,
            checked: 0,
        };
        let mut rects = Coverage {
            what: "rectangles' winning-move lists (each move reaches P, every other bite N)".into(),
            stored: 0,
            checked: 0,
        };
        // A box split into parts is checked as one box when its bitset fits
        // the allocation bound here (the parts' bits laid end to end);
        // larger boxes are named in the coverage, not reported as bad.
        let mut parts = Coverage {
            what: format!(
                "P-bits of split boxes too large to hold here, checked at a sample (every \
                 rectangle, every position one bite from one, the first and last {} \
                 ranks of every part)",
                crate::pipeline::fullcheck::group(EDGE)
            ),
            stored: 0,
            checked: 0,
        };
        for bx in &boxes {
            let name = bx.name();
            cx.job(&name);
            let Some(b) = BoxRanks::new(bx.rows as usize, bx.cols as usize) else {
                cx.bad(
                    &name,
                    "parameters",
                    format!("{}x{} is not a box", bx.rows, bx.cols),
                );
                continue;
            };
            let words = b.len().div_ceil(64);
            if bx.jobs.len() > 1
                && crate::pipeline::resources::check_allocation(
                    &format!("the full check of the {}x{} box", bx.rows, bx.cols),
                    words * 16,
                )
                .is_err()
            {
                tracing::warn!(
                    "{name}: {} ranks, too large to hold here: checked at a sample",
                    b.len()
                );
                parts.stored += b.len();
                rects.stored += u64::from(bx.rows) * u64::from(bx.cols) - 1;
                let Some(bits) = PartBits::open(cx, bx, &b) else {
                    continue;
                };
                let windows: Vec<(u64, u64)> = bits.windows().map(|(_, s, e)| (s, e)).collect();
                let sample = sample_ranks(&b, &windows);
                let last = &bx.jobs[bx.jobs.len() - 1].name;
                parts.checked += check_ranks(cx, &b, &bits, &sample);
                let list = cx
                    .run()
                    .open(last)
                    .ok()
                    .and_then(|f| f.read_section("rectangles").ok())
                    .and_then(|r| le_u32s(&r));
                match list {
                    Some(list) => {
                        rects.checked += check_rectangles(
                            cx,
                            last,
                            &b,
                            |x| bits.bit(cx, x) == Some(true),
                            &list,
                        );
                    }
                    None => cx.bad(last, "rectangles", "section missing or not u32 values"),
                }
                continue;
            }
            bits.stored += b.len();
            rects.stored += u64::from(bx.rows) * u64::from(bx.cols) - 1;
            let (p, list) = if let [job] = bx.jobs[..] {
                let Some(shard) = cx.load(&job.name) else {
                    continue;
                };
                let Some(p) = read_box(cx, &job.name, &shard, &b) else {
                    continue;
                };
                (p, shard.section("rectangles").ok().and_then(le_u32s))
            } else {
                match read_parts(cx, bx, &b) {
                    Some(found) => found,
                    None => continue,
                }
            };
            let last = &bx.jobs[bx.jobs.len() - 1].name;
            check_p_bits(cx, last, &b, &p);
            bits.checked += b.len();
            cx.advance(b.len());
            match list {
                Some(list) => {
                    rects.checked += check_rectangles(cx, last, &b, |x| bit(&p, x), &list)
                }
                None => cx.bad(last, "rectangles", "section missing or not u32 values"),
            }
        }
        // A run of split boxes too large to hold has no box checked whole:
        // no line for it.
        let mut cov = if bits.stored > 0 || parts.stored == 0 {
            vec![bits, rects]
        } else {
            vec![rects]
        };
        if parts.stored > 0 {
            cov.push(parts);
        }
        Ok(cov)
    }
}

/// The bits of a box split into parts, laid end to end from every part's
/// `p-positions` (each part's meta checked against its window and bits),
/// and the last part's `rectangles`.
fn read_parts(cx: &Ctx, bx: &RunBox<'_>, b: &BoxRanks) -> Option<(Vec<u64>, Option<Vec<u32>>)> {
    let mut p = vec![0u64; b.len().div_ceil(64) as usize];
    let mut list = None;
    let mut next = 0u64;
    for job in &bx.jobs {
        let (f, meta) = open_part(cx, &job.name, b, next)?;
        let Some(r) = f.read_section("p-positions").ok().and_then(|r| le_u64s(&r)) else {
            cx.bad(&job.name, "p-positions", "unreadable");
            return None;
        };
        let count: u64 = r.iter().map(|w| u64::from(w.count_ones())).sum();
        if count != meta.p_positions {
            cx.bad(
                &job.name,
                "meta",
                format!(
                    "says {} P-positions, the bits hold {count}",
                    meta.p_positions
                ),
            );
        }
        let at = (meta.start / 64) as usize;
        for (i, w) in r.into_iter().enumerate() {
            p[at + i] |= w;
        }
        next = meta.end;
        if next == b.len() {
            list = f.read_section("rectangles").ok().and_then(|r| le_u32s(&r));
        }
    }
    covers_box(cx, bx, b, next).then_some((p, list))
}

/// The P-bits of a box shard after checking its meta against the box.
fn read_box(
    cx: &Ctx,
    job: &str,
    shard: &crate::pipeline::shard::Shard,
    b: &BoxRanks,
) -> Option<Vec<u64>> {
    let meta: Option<BoxMeta> = shard.meta().ok();
    let Some(meta) = meta else {
        cx.bad(job, "meta", "section missing or malformed");
        return None;
    };
    let words = b.len().div_ceil(64) as usize;
    let p = match shard.section("p-positions").ok().and_then(le_u64s) {
        Some(p) if p.len() == words => p,
        _ => {
            cx.bad(
                job,
                "p-positions",
                format!("not {words} u64 words ({} ranks)", b.len()),
            );
            return None;
        }
    };
    if !b.len().is_multiple_of(64) && p[words - 1] >> (b.len() % 64) != 0 {
        cx.bad(job, "p-positions", "bits set past the last rank");
    }
    let count: u64 = p.iter().map(|w| u64::from(w.count_ones())).sum();
    let want = (b.rows() as u32, b.cols() as u32, b.len(), count);
    let got = (meta.rows, meta.cols, meta.ranks, meta.p_positions);
    if (meta.start, meta.end) != (0, b.len()) {
        cx.bad(
            job,
            "meta",
            format!("window {}..{}, not the whole box", meta.start, meta.end),
        );
    }
    if want != got {
        cx.bad(
            job,
            "meta",
            format!(
                "says {}x{}, {} ranks, {} P-positions; the box and its bits give {}x{}, {}, {}",
                got.0, got.1, got.2, got.3, want.0, want.1, want.2, want.3
            ),
        );
    }
    Some(p)
}

/// Marks every position with a bite into a stored P-position and compares
/// with the stored bits.
fn check_p_bits(cx: &Ctx, job: &str, b: &BoxRanks, p: &[u64]) {
    let len = b.len();
    let words = p.len();
    let ps: Vec<u64> = (0..len).filter(|&x| bit(p, x)).collect();
    let threads = cx.threads().min(ps.len().max(1));
    let marks: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let ps = &ps;
                s.spawn(move || {
                    let mut hit = vec![0u64; words];
                    let mut rows = vec![0u32; b.rows()];
                    for &x in ps.iter().skip(t).step_by(threads) {
                        b.unrank(x, &mut rows);
                        b.for_each_unbite(&rows, x, |y| hit[(y / 64) as usize] |= 1 << (y % 64));
                    }
                    hit
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("marking thread"))
            .collect()
    });
    let mut hit = vec![0u64; words];
    for m in &marks {
        for (h, w) in hit.iter_mut().zip(m) {
            *h |= w;
        }
    }
    drop(marks);
    let mut rows = vec![0u32; b.rows()];
    for w in 0..words {
        let mut valid = !0u64;
        if w == 0 {
            valid &= !1; // rank 0, the empty board
        }
        if w == words - 1 && !len.is_multiple_of(64) {
            valid &= (1u64 << (len % 64)) - 1;
        }
        let bad = ((p[w] & hit[w]) | (!p[w] & !hit[w] & valid)) & valid;
        let mut rest = bad;
        while rest != 0 {
            let x = w as u64 * 64 + u64::from(rest.trailing_zeros());
            rest &= rest - 1;
            b.unrank(x, &mut rows);
            let mut to = None;
            if bit(p, x) {
                b.for_each_bite(&rows, x, |i, j, c| {
                    if to.is_none() && bit(p, c) {
                        to = Some((i, j, c));
                    }
                });
                assert!(to.is_some(), "marked, so some bite reaches P");
            }
            report_wrong_bit(cx, job, b, &rows, x, to);
        }
    }
    if p[0] & 1 == 1 {
        cx.bad(
            job,
            "empty (rank 0)",
            "the empty board is marked as a P-position",
        );
    }
}

/// Checks the `rectangles` section; returns the rectangles checked.
fn check_rectangles(
    cx: &Ctx,
    job: &str,
    b: &BoxRanks,
    p: impl Fn(u64) -> bool,
    list: &[u32],
) -> u64 {
    let (m, n) = (b.rows() as u32, b.cols() as u32);
    let mut expect = (1..=m)
        .flat_map(|a| (1..=n).map(move |c| (a, c)))
        .filter(|&r| r != (1, 1));
    let mut i = 0;
    let mut checked = 0;
    let mut rows = vec![0u32; b.rows()];
    while i < list.len() {
        let Some(&[a, c, k]) = list.get(i..i + 3) else {
            cx.bad(job, "rectangles", "truncated entry");
            return checked;
        };
        let Some(moves) = list.get(i + 3..i + 3 + 2 * k as usize) else {
            cx.bad(job, format!("rectangle {a}x{c}"), "truncated move list");
            return checked;
        };
        i += 3 + 2 * k as usize;
        let name = format!("rectangle {a}x{c}");
        if expect.next() != Some((a, c)) {
            cx.bad(job, &name, "listed out of order, twice, or outside the box");
            continue;
        }
        for (r, row) in rows.iter_mut().enumerate() {
            *row = if (r as u32) < a { c } else { 0 };
        }
        let x = b.rank(&rows);
        let mut winning = Vec::new();
        b.for_each_bite(&rows, x, |i, j, ch| {
            if p(ch) {
                winning.push((i, j));
            }
        });
        let listed: Vec<(u32, u32)> = moves.chunks_exact(2).map(|w| (w[0], w[1])).collect();
        if listed != winning {
            let show = |v: &[(u32, u32)]| {
                v.iter()
                    .map(|(i, j)| format!("({i}, {j})"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            cx.bad(
                job,
                &name,
                format!(
                    "winning moves listed as [{}], but the bites to P-positions are [{}]",
                    show(&listed),
                    show(&winning)
                ),
            );
        }
        checked += 1;
    }
    for (a, c) in expect {
        cx.bad(job, format!("rectangle {a}x{c}"), "missing from the list");
    }
    checked
}
