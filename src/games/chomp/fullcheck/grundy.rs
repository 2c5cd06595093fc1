//! Full check of `chomp-grundy`: every stored Grundy value is the mex of
//! the values of its options (Sprague–Grundy).
//!
//! Every position of every box takes all its bites ([`BoxRanks::for_each_bite`]),
//! collects the children's stored values and compares their mex with its own
//! value; the poison alone has no bite and value 0, and rank 0 (the empty
//! board, not a position) must hold 0. The work is every bite of every
//! position (3×200: ≈ 4·10⁸), as for the solver; ranks are split among the
//! threads in contiguous chunks. The meta (width, largest value, count of
//! zeros) is checked against the values.

use super::super::layout::GrundyMeta;
use crate::pipeline::error::Result;

use super::boxes::box_params;
use super::rules::{BoxRanks, staircase_text};
use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, for_chunks};

/// The `chomp-grundy` checker.
pub struct GrundyChecker;

impl Checker for GrundyChecker {
    crate::pipeline::fullcheck::checks_kind!("chomp-grundy");

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let jobs = cx.run().jobs();
        let total: u64 = jobs
            .iter()
            .filter_map(box_params)
            .filter_map(|(m, n)| BoxRanks::new(m as usize, n as usize))
            .map(|b| b.len())
            .sum();
        cx.set_total(total);
        let mut cov = Coverage {
            what: "Grundy values of every box rank (mex of the options' values)".into(),
            stored: 0,
            checked: 0,
        };
        for job in jobs {
            cx.job(&job.name);
            let Some((m, n)) = box_params(job) else {
                cx.bad(&job.name, "parameters", "no rows/cols");
                continue;
            };
            let Some(b) = BoxRanks::new(m as usize, n as usize) else {
                cx.bad(&job.name, "parameters", format!("{m}x{n} is not a box"));
                continue;
            };
            cov.stored += b.len();
            let Some(shard) = cx.load(&job.name) else {
                continue;
            };
            let Some(values) = read_values(cx, &job.name, &shard, &b) else {
                continue;
            };
            check_values(cx, &job.name, &b, &values);
            cov.checked += b.len();
        }
        Ok(vec![cov])
    }
}

/// The values of a Grundy shard, after checking its meta.
fn read_values(
    cx: &Ctx,
    job: &str,
    shard: &crate::pipeline::shard::Shard,
    b: &BoxRanks,
) -> Option<Vec<u32>> {
    let meta: Option<GrundyMeta> = shard.meta().ok();
    let Some(meta) = meta else {
        cx.bad(job, "meta", "section missing or malformed");
        return None;
    };
    let raw = shard.section("values").unwrap_or(&[]);
    let w = usize::from(meta.width);
    if ![1, 2, 4].contains(&w) || raw.len() as u64 != b.len() * w as u64 {
        cx.bad(
            job,
            "values",
            format!(
                "{} bytes at width {w}; the box has {} ranks",
                raw.len(),
                b.len()
            ),
        );
        return None;
    }
    let values: Vec<u32> = raw
        .chunks_exact(w)
        .map(|c| {
            let mut v = [0u8; 4];
            v[..w].copy_from_slice(c);
            u32::from_le_bytes(v)
        })
        .collect();
    let max = values.iter().copied().max().unwrap_or(0);
    let zeros = values[1..].iter().filter(|&&v| v == 0).count() as u64;
    let width = if max <= 0xff {
        1
    } else if max <= 0xffff {
        2
    } else {
        4
    };
    let want = (b.rows() as u32, b.cols() as u32, b.len(), width, max, zeros);
    let got = (
        meta.rows,
        meta.cols,
        meta.ranks,
        meta.width,
        meta.max_value,
        meta.p_positions,
    );
    if want != got {
        cx.bad(
            job,
            "meta",
            format!("says (rows, cols, ranks, width, largest, zeros) = {got:?}; the box and its values give {want:?}"),
        );
    }
    if values[0] != 0 {
        cx.bad(job, "empty (rank 0)", format!("holds {}, not 0", values[0]));
    }
    Some(values)
}

/// Checks every rank ≥ 1: its value is the mex of its children's values.
fn check_values(cx: &Ctx, job: &str, b: &BoxRanks, values: &[u32]) {
    let max = values.iter().copied().max().unwrap_or(0) as usize;
    let words = max / 64 + 2;
    for_chunks(b.len(), cx.threads(), |range| {
        let mut rows = vec![0u32; b.rows()];
        b.unrank(range.start, &mut rows);
        let mut seen = vec![0u64; words];
        let mut done = 0u64;
        for x in range.clone() {
            if x > 0 {
                seen.fill(0);
                b.for_each_bite(&rows, x, |_, _, c| {
                    let v = values[c as usize] as usize;
                    seen[v / 64] |= 1 << (v % 64);
                });
                let mex = seen
                    .iter()
                    .enumerate()
                    .find(|(_, w)| **w != !0)
                    .map(|(i, w)| i * 64 + w.trailing_ones() as usize)
                    .expect("a free value below max + 2");
                let v = values[x as usize] as usize;
                if mex != v {
                    cx.bad(
                        job,
                        format!("{} (rank {x})", staircase_text(&rows)),
                        format!(
                            "stored Grundy value {v}, but the mex of its options' values is {mex}"
                        ),
                    );
                }
            }
            done += 1;
            if done == 1 << 16 {
                cx.advance(done);
                done = 0;
            }
            if x + 1 < range.end {
                b.next(&mut rows);
            }
        }
        cx.advance(done);
    });
}
