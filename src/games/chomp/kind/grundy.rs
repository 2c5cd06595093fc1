//! Job kind `chomp-grundy`: the Sprague–Grundy value of every staircase of
//! m×n boxes, one job per box (as in the 每日算法 Chomp article, by mex over
//! the options, here in one ascending pass over the box's ranks).
//!
//! Job file:
//! ```toml
//! kind = "chomp-grundy"
//! boxes = [[10, 10], [3, 200]]   # [rows, cols] each
//! ```
//!
//! Shard sections (little-endian):
//! - `meta`: [`GrundyMeta`] through the codec (rows, cols, ranks, value
//!   width, largest value, P-positions).
//! - `values`: one unsigned integer of `width` bytes (1 = `u8`, 2 = `u16`,
//!   4 = `u32`: the smallest type holding the box's largest value) per rank,
//!   ranks as in [`ChompBox`] (rank 0, the empty board, holds 0).
//!
//! Tables: `grundy-rectangles.csv` (`rows,cols,grundy` for every rectangle
//! inside some box, sorted by rows then cols; boxes that share a rectangle
//! must agree), `grundy-3xn.txt` (b-file `n a(n)`: the value of the 3×n
//! rectangle for n = 1 … the largest n covered), `grundy-boxes.csv`
//! (`box,rows,cols,positions,p_positions,max_grundy`; positions exclude the
//! empty board).

pub use crate::games::chomp::layout::GrundyMeta;
use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::games::chomp::kind::boxes::plan_box_list;
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::parse_params;
use crate::pipeline::kind::{Claim, JobKind, JobSpec, RunAccess, ShardSource, TableFile};
use crate::pipeline::shard::{Section, Shard};
use crate::solvers::chomp::grundy::{decode_values, encode_values, grundy_values, value_width};
use crate::solvers::chomp::{ChompBox, Staircase};

/// The `chomp-grundy` job kind.
pub struct ChompGrundy;

/// Largest box accepted, in ranks (values are computed as `u32` in memory).
pub const MAX_GRUNDY_BOX: u64 = 1 << 30;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    boxes: Vec<Vec<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxParams {
    rows: u32,
    cols: u32,
}

fn job_box(job: &JobSpec) -> Result<(u32, u32)> {
    let p: BoxParams =
        toml::Value::Table(job.params.clone())
            .try_into()
            .map_err(|e: toml::de::Error| {
                Error::job(&job.name, format!("parameters: {}", e.message()))
            })?;
    Ok((p.rows, p.cols))
}

/// Decodes a Grundy shard: its meta and the values by rank.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed.
pub fn decode_grundy(shard: &Shard) -> Result<(GrundyMeta, Vec<u32>)> {
    let job = &shard.header.job_name;
    let bad = |m: &str| Error::job(job, format!("malformed shard: {m}"));
    let meta: GrundyMeta = shard.meta()?;
    let values =
        decode_values(shard.section("values")?, meta.width).ok_or_else(|| bad("values width"))?;
    if values.len() as u64 != meta.ranks {
        return Err(bad("values length"));
    }
    Ok((meta, values))
}

/// The Grundy value of `s` from a run's shards: the first box (in plan
/// order) that holds it. `None` if no box covers it.
///
/// # Errors
/// If that box's shard is missing or damaged.
pub fn grundy_from_run(run: &dyn RunAccess, s: &Staircase) -> Result<Option<(String, u32)>> {
    let need_rows = s.rows().len() as u32;
    let need_cols = s.rows().first().copied().unwrap_or(0);
    for job in run.jobs() {
        let (rows, cols) = job_box(job)?;
        if rows >= need_rows && cols >= need_cols {
            let (_, values) = decode_grundy(&run.load(&job.name)?)?;
            let b = ChompBox::new(rows as usize, cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            let x = b
                .rank_of(s)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            return Ok(Some((job.name.clone(), values[x as usize])));
        }
    }
    Ok(None)
}

/// Grundy values of every rectangle a×c of an m×n box (1 ≤ a ≤ m, 1 ≤ c ≤ n).
fn rectangles(b: &ChompBox, values: &[u32]) -> BTreeMap<(u32, u32), u32> {
    let mut out = BTreeMap::new();
    for a in 1..=b.rows() as u32 {
        for c in 1..=b.cols() as u32 {
            let s = Staircase::rectangle(a, c).expect("non-empty");
            let x = b.rank_of(&s).expect("inside the box");
            out.insert((a, c), values[x as usize]);
        }
    }
    out
}

fn parse_rectangles(text: &str) -> std::result::Result<BTreeMap<(u32, u32), u32>, String> {
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("grundy-rectangles.csv line {}: `{line}`", n + 1);
        let f: Vec<u32> = line
            .split(',')
            .map(|x| x.parse::<u32>().map_err(|_| bad()))
            .collect::<std::result::Result<_, _>>()?;
        let [r, c, g] = f[..] else { return Err(bad()) };
        out.insert((r, c), g);
    }
    Ok(out)
}

impl JobKind for ChompGrundy {
    crate::pipeline::kind::kind_names!(
        "chomp-grundy",
        "Chomp: the Sprague–Grundy value of every staircase of m×n boxes"
    );

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        /// CPU seconds per unit of the job's cost (positions × rows × cols):
        /// `chomp-grundy.toml` (10×10 and 3×200, 8.5·10⁸ units) ran in 2.7 s
        /// of CPU (BENCHMARKS.md, "Plan estimates against measured runs").
        const CPU_SECONDS_PER_BITE: f64 = 3.2e-9;
        let p: JobFileParams = parse_params(path, text)?;
        let (table, boxes) = plan_box_list(path, text, &p.boxes, |_, _, len| {
            (len > MAX_GRUNDY_BOX)
                .then(|| format!("{len} staircases exceed the limit of {MAX_GRUNDY_BOX}"))
        })?;
        let jobs = boxes
            .into_iter()
            .map(|(rows, cols, len)| {
                let mut params = toml::Table::new();
                params.insert("rows".into(), i64::from(rows).into());
                params.insert("cols".into(), i64::from(cols).into());
                // Work ≈ positions × bites per position.
                let cost = len * u64::from(rows * cols);
                // Values as u32 while solving, their bytes and compressed
                // form while encoding, the process.
                JobSpec::new(format!("grundy-{rows}x{cols}"), params, vec![], cost)
                    .with_memory(len * 12 + (24 << 20))
                    .with_shard_bytes(len + 4096)
                    .with_cpu_seconds((cost as f64 * CPU_SECONDS_PER_BITE).round() as u64)
            })
            .collect();
        Ok((table, jobs))
    }

    fn run(&self, job: &JobSpec, _inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (rows, cols) = job_box(job)?;
        let b = ChompBox::new(rows as usize, cols as usize)
            .map_err(|e| Error::job(&job.name, e.to_string()))?;
        if b.len() > MAX_GRUNDY_BOX {
            return Err(Error::job(
                &job.name,
                format!("{} staircases exceed {MAX_GRUNDY_BOX}", b.len()),
            ));
        }
        let values = grundy_values(&b);
        let width = value_width(&values);
        let meta = GrundyMeta {
            rows,
            cols,
            ranks: b.len(),
            width,
            max_value: values.iter().copied().max().unwrap_or(0),
            p_positions: values[1..].iter().filter(|&&v| v == 0).count() as u64,
        };
        Ok(vec![
            Section::new(
                "meta",
                codec::encode(&meta).map_err(|e| Error::job(&job.name, e))?,
            ),
            Section::new("values", encode_values(&values, width)),
        ])
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let mut all: BTreeMap<(u32, u32), (u32, String)> = BTreeMap::new();
        let mut boxes = String::from("box,rows,cols,positions,p_positions,max_grundy\n");
        for job in run.jobs() {
            let (meta, values) = decode_grundy(&run.load(&job.name)?)?;
            let b = ChompBox::new(meta.rows as usize, meta.cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            boxes.push_str(&format!(
                "{},{},{},{},{},{}\n",
                job.name,
                meta.rows,
                meta.cols,
                meta.ranks - 1,
                meta.p_positions,
                meta.max_value
            ));
            for (rc, g) in rectangles(&b, &values) {
                match all.get(&rc) {
                    Some((other, by)) if *other != g => {
                        return Err(Error::job(
                            self.name(),
                            format!(
                                "rectangle {}x{}: {by} gives {other} but {} gives {g}",
                                rc.0, rc.1, job.name
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        all.insert(rc, (g, job.name.clone()));
                    }
                }
            }
        }
        let mut csv = String::from("rows,cols,grundy\n");
        for ((r, c), (g, _)) in &all {
            csv.push_str(&format!("{r},{c},{g}\n"));
        }
        let mut three = String::new();
        let mut n = 1;
        while let Some((g, _)) = all.get(&(3, n)) {
            three.push_str(&format!("{n} {g}\n"));
            n += 1;
        }
        Ok(vec![
            TableFile {
                name: "grundy-rectangles.csv".into(),
                bytes: csv.into_bytes(),
            },
            TableFile {
                name: "grundy-3xn.txt".into(),
                bytes: three.into_bytes(),
            },
            TableFile {
                name: "grundy-boxes.csv".into(),
                bytes: boxes.into_bytes(),
            },
        ])
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        for job in run.jobs() {
            let (meta, values) = decode_grundy(&run.load(&job.name)?)?;
            let b = ChompBox::new(meta.rows as usize, meta.cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            // Value 0 exactly on the box solver's P-positions.
            let p = b.solve();
            if let Some(x) = (1..b.len()).find(|&x| (values[x as usize] == 0) != p.is_p(x)) {
                problems.push(format!(
                    "{}: rank {x} has Grundy value {} but the box solver says {}",
                    job.name,
                    values[x as usize],
                    if p.is_p(x) { "P" } else { "N" }
                ));
            }
            if values.iter().copied().max().unwrap_or(0) != meta.max_value {
                problems.push(format!("{}: largest value differs from meta", job.name));
            }
        }
        let text = String::from_utf8(run.table("grundy-rectangles.csv")?).unwrap_or_default();
        if let Err(e) = parse_rectangles(&text) {
            problems.push(e);
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        const MEIRI: &str = crate::games::chomp::sources::MEIRI;
        const DAY72: &str = "day-72 Chomp article (10×10 box)";
        let mut c = Vec::new();
        let mut positions = 0u64;
        let mut agree = 0u64;
        let mut ten: Option<u64> = None;
        for job in run.jobs() {
            let (meta, values) = decode_grundy(&run.load(&job.name)?)?;
            let b = ChompBox::new(meta.rows as usize, meta.cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            let p = b.solve();
            positions += b.len() - 1;
            agree += (1..b.len())
                .filter(|&x| (values[x as usize] == 0) == p.is_p(x))
                .count() as u64;
            if meta.rows == 10 && meta.cols >= 10 && ten.is_none() {
                // The 10×10 box is the first C(20, 10) ranks of any 10-row box.
                let n10 = ChompBox::new(10, 10).expect("10x10").len();
                ten = Some(values[1..n10 as usize].iter().filter(|&&v| v == 0).count() as u64);
            }
        }
        c.push(Claim::compare(
            MEIRI,
            "a position is a P-position (box solver) exactly when its Grundy value is 0",
            "all positions",
            if agree == positions {
                "all positions".to_string()
            } else {
                format!("{agree} of {positions}")
            },
        ));
        c.push(match ten {
            Some(n) => Claim::compare(DAY72, "10×10 box: positions of Grundy value 0", 2612, n),
            None => Claim::not_covered(
                DAY72,
                "10×10 box: positions of Grundy value 0",
                2612,
                "needs a box of exactly 10 rows (its first ranks are the 10×10 box)",
            ),
        });
        let text = String::from_utf8(run.table("grundy-rectangles.csv")?).unwrap_or_default();
        let rects = parse_rectangles(&text).map_err(|e| Error::job(self.name(), e))?;
        let zero: Vec<String> = rects
            .iter()
            .filter(|&(&rc, &g)| g == 0 && rc != (1, 1))
            .map(|((r, k), _)| format!("{r}×{k}"))
            .collect();
        c.push(Claim::compare(
            "strategy stealing: Gale 1974, as cited in the sen-ltd Chomp article; 每日算法 Chomp article",
            "rectangles other than 1×1 with Grundy value 0 (first player loses)",
            "none",
            if zero.is_empty() {
                "none".into()
            } else {
                zero.join(", ")
            },
        ));
        Ok(c)
    }
}
