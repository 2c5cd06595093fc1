//! Job kind `chomp-boxes`: solve Chomp row-count boxes, one job per box.
//!
//! Job file:
//! ```toml
//! kind = "chomp-boxes"
//! boxes = [[1, 200], [2, 200], [14, 14]]   # [rows, cols] each
//! ```
//!
//! Shard sections (all integers little-endian):
//! - `meta`: [`BoxMeta`] through the codec (rows, cols, ranks, P-positions).
//! - `p-positions`: the box's P-positions, one bit per rank, `u64` words
//!   (bit `x % 64` of word `x / 64`), ranks as in [`ChompBox`].
//! - `rectangles`: `u32` values; for every rectangle a×b in the box
//!   (1 ≤ a ≤ rows, 1 ≤ b ≤ cols, a×b ≠ 1×1, in (a, b) order):
//!   `a, b, k, row₁, col₁, …, row_k, col_k` — its k winning moves, sorted.
//!
//! Tables: `rectangles.csv` (`rows,cols,n_winning,moves`, moves as `i:j`
//! separated by spaces, one line per rectangle in any box, sorted by rows
//! then cols), `multi-winning.csv` (the same for n_winning ≥ 2),
//! `boxes.csv` (`box,rows,cols,positions,p_positions`; positions exclude the
//! empty board).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::games::chomp::{Bite, ChompBox, PPositions, Staircase};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::jobfile::{error_at_key, parse_params};
use crate::pipeline::kind::{
    Claim, ClaimStatus, JobKind, JobSpec, RunAccess, ShardSource, TableFile,
};
use crate::pipeline::shard::{Section, Shard};

/// The `chomp-boxes` job kind.
pub struct ChompBoxes;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobFileParams {
    #[allow(dead_code)]
    kind: String,
    boxes: Vec<Vec<u32>>,
}

/// Largest `rows × cols` of a box in a job file: every rectangle's winning
/// moves are listed, which costs about (rows·cols)² bite look-ups.
pub const MAX_BOX_AREA: u64 = 20_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxParams {
    rows: u32,
    cols: u32,
}

/// The `meta` section of a box shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxMeta {
    /// Rows of the box.
    pub rows: u32,
    /// Columns of the box.
    pub cols: u32,
    /// Ranks, `C(rows+cols, rows)`, including the empty board.
    pub ranks: u64,
    /// P-positions in the box.
    pub p_positions: u64,
}

/// Winning moves per rectangle `(rows, cols)`.
pub type RectangleMoves = BTreeMap<(u32, u32), Vec<Bite>>;

fn box_name(rows: u32, cols: u32) -> String {
    format!("box-{rows}x{cols}")
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

/// Solves one box into its shard sections.
///
/// # Errors
/// If the box is empty or too large.
pub fn solve_box(rows: u32, cols: u32) -> std::result::Result<Vec<Section>, String> {
    let b = ChompBox::new(rows as usize, cols as usize).map_err(|e| e.to_string())?;
    let p = b.solve();
    let meta = BoxMeta {
        rows,
        cols,
        ranks: b.len(),
        p_positions: p.count(),
    };
    let mut rect: Vec<u32> = Vec::new();
    for a in 1..=rows {
        for c in 1..=cols {
            if (a, c) == (1, 1) {
                continue;
            }
            let s = Staircase::rectangle(a, c).expect("non-empty");
            let moves = b.winning_moves(&p, &s).expect("fits in its box");
            rect.extend([a, c, moves.len() as u32]);
            for m in moves {
                rect.extend([m.row, m.col]);
            }
        }
    }
    Ok(vec![
        Section::new("meta", codec::encode(&meta)?),
        Section::new("p-positions", p.to_le_bytes()),
        Section::new(
            "rectangles",
            rect.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    ])
}

/// Decodes the shard of box job `job`: its meta, P-positions and rectangles.
/// The meta must describe the job's own box.
///
/// # Errors
/// [`Error::Job`] if a section is missing or malformed or the meta does not
/// match the job's parameters.
pub fn decode_box(job: &JobSpec, shard: &Shard) -> Result<(BoxMeta, PPositions, RectangleMoves)> {
    let (rows, cols) = job_box(job)?;
    let bad = |m: &str| Error::job(&job.name, format!("malformed shard: {m}"));
    let meta: BoxMeta = codec::decode(shard.section("meta")?).map_err(|e| bad(&e))?;
    let b = ChompBox::new(rows as usize, cols as usize).map_err(|e| bad(&e.to_string()))?;
    if (meta.rows, meta.cols, meta.ranks) != (rows, cols, b.len()) {
        return Err(bad(&format!(
            "meta says {}x{} with {} ranks, the job is {rows}x{cols} with {}",
            meta.rows,
            meta.cols,
            meta.ranks,
            b.len()
        )));
    }
    let p = PPositions::from_le_bytes(meta.ranks, shard.section("p-positions")?)
        .ok_or_else(|| bad("p-positions length"))?;
    let raw = shard.section("rectangles")?;
    if raw.len() % 4 != 0 {
        return Err(bad("rectangles length"));
    }
    let vals: Vec<u32> = raw
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let mut rects = RectangleMoves::new();
    let mut i = 0;
    while i < vals.len() {
        let (a, c, k) = match vals.get(i..i + 3) {
            Some(&[a, c, k]) => (a, c, k as usize),
            _ => return Err(bad("rectangles truncated")),
        };
        let pairs = vals
            .get(i + 3..i + 3 + 2 * k)
            .ok_or_else(|| bad("rectangles truncated"))?;
        let moves = pairs
            .chunks_exact(2)
            .map(|p| Bite {
                row: p[0],
                col: p[1],
            })
            .collect();
        rects.insert((a, c), moves);
        i += 3 + 2 * k;
    }
    Ok((meta, p, rects))
}

fn moves_text(moves: &[Bite]) -> String {
    moves
        .iter()
        .map(|m| format!("{}:{}", m.row, m.col))
        .collect::<Vec<_>>()
        .join(" ")
}

fn pairs_text(moves: &[Bite]) -> String {
    moves
        .iter()
        .map(Bite::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses `rectangles.csv` back into winning moves per rectangle.
///
/// # Errors
/// A message naming the line if it is malformed.
pub fn parse_rectangles_csv(text: &str) -> std::result::Result<RectangleMoves, String> {
    let mut out = RectangleMoves::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let bad = || format!("rectangles.csv line {}: `{line}`", n + 1);
        let f: Vec<&str> = line.split(',').collect();
        let [r, c, k, mv] = f[..] else {
            return Err(bad());
        };
        let num = |s: &str| s.parse::<u32>().map_err(|_| bad());
        let moves: Vec<Bite> = mv
            .split_whitespace()
            .map(|p| {
                let (i, j) = p.split_once(':').ok_or_else(bad)?;
                Ok(Bite {
                    row: num(i)?,
                    col: num(j)?,
                })
            })
            .collect::<std::result::Result<_, String>>()?;
        if moves.len() != num(k)? as usize {
            return Err(bad());
        }
        out.insert((num(r)?, num(c)?), moves);
    }
    Ok(out)
}

/// Winning moves of `s` from a run's box shards: the first box (in plan
/// order) with at least as many rows and columns as `s`, or else as its
/// transpose (moves mirrored back). `None` if no box covers either.
///
/// # Errors
/// If that box's shard is missing or damaged.
pub fn winning_moves_from_run(
    run: &dyn RunAccess,
    s: &Staircase,
) -> Result<Option<(String, Vec<Bite>)>> {
    if let Some(found) = lookup_in_boxes(run, s)? {
        return Ok(Some(found));
    }
    let Some((name, moves)) = lookup_in_boxes(run, &s.transpose())? else {
        return Ok(None);
    };
    let mut mirrored: Vec<Bite> = moves.iter().map(|b| bite(b.col, b.row)).collect();
    mirrored.sort();
    Ok(Some((format!("{name}, transposed"), mirrored)))
}

fn lookup_in_boxes(run: &dyn RunAccess, s: &Staircase) -> Result<Option<(String, Vec<Bite>)>> {
    let need_rows = s.rows().len() as u32;
    let need_cols = s.rows().first().copied().unwrap_or(0);
    for job in run.jobs() {
        let (rows, cols) = job_box(job)?;
        if rows >= need_rows && cols >= need_cols {
            let (_, p, _) = decode_box(job, &run.load(&job.name)?)?;
            let b = ChompBox::new(rows as usize, cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            let moves = b
                .winning_moves(&p, s)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            return Ok(Some((job.name.clone(), moves)));
        }
    }
    Ok(None)
}

/// A box of a job file: rows, cols and its ranking tables.
pub type PlannedBox = (u32, u32, ChompBox);

/// Checks a job file's `boxes = [[rows, cols], …]` list, shared by the
/// box-based kinds: non-empty, two numbers per entry, a valid box, no
/// repeats, and `extra(rows, cols, box)` (a kind's own limit; `Some(why)`
/// refuses). Returns the normalised `boxes` table and the boxes in order.
///
/// # Errors
/// [`Error::JobFile`] at the `boxes` line, naming the entry.
pub fn plan_box_list(
    path: &Path,
    text: &str,
    boxes: &[Vec<u32>],
    extra: impl Fn(u32, u32, &ChompBox) -> Option<String>,
) -> Result<(toml::Table, Vec<PlannedBox>)> {
    if boxes.is_empty() {
        return Err(error_at_key(
            path,
            text,
            "boxes",
            "`boxes` is empty: give at least one [rows, cols]",
        ));
    }
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, entry) in boxes.iter().enumerate() {
        let at =
            |m: String| error_at_key(path, text, "boxes", format!("`boxes` entry {}: {m}", i + 1));
        let &[rows, cols] = entry.as_slice() else {
            return Err(at(format!(
                "expected [rows, cols], found {} numbers",
                entry.len()
            )));
        };
        // A set, not a scan of the earlier entries: a job file listing
        // 10⁵ boxes must not take 10¹⁰ comparisons.
        if !seen.insert((rows, cols)) {
            return Err(at(format!("{rows}x{cols} repeats")));
        }
        let b = ChompBox::new(rows as usize, cols as usize).map_err(|e| at(e.to_string()))?;
        if let Some(why) = extra(rows, cols, &b) {
            return Err(at(why));
        }
        out.push((rows, cols, b));
    }
    let mut table = toml::Table::new();
    table.insert(
        "boxes".into(),
        toml::Value::Array(
            boxes
                .iter()
                .map(|e| toml::Value::Array(e.iter().map(|&v| i64::from(v).into()).collect()))
                .collect(),
        ),
    );
    Ok((table, out))
}

/// Estimated peak memory of a box job of `len` ranks, in bytes: two bitsets
/// while solving, a byte copy of the P-bitset and its compressed form while
/// encoding (17×17: 4 × 292 MB estimated, 900 MB measured), plus the process.
pub fn box_job_memory(len: u64) -> u64 {
    len / 2 + (24 << 20)
}

impl JobKind for ChompBoxes {
    fn name(&self) -> &'static str {
        "chomp-boxes"
    }

    fn about(&self) -> &'static str {
        "Chomp: P-positions of m×n boxes and the winning moves of every rectangle in them"
    }

    fn plan(&self, path: &Path, text: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
        let p: JobFileParams = parse_params(path, text)?;
        let (table, boxes) = plan_box_list(path, text, &p.boxes, |rows, cols, _| {
            (u64::from(rows) * u64::from(cols) > MAX_BOX_AREA).then(|| {
                format!(
                    "{rows}x{cols} has more than {MAX_BOX_AREA} squares; \
                     listing every rectangle's winning moves would take too long"
                )
            })
        })?;
        let jobs = boxes
            .into_iter()
            .map(|(rows, cols, b)| {
                let mut params = toml::Table::new();
                params.insert("rows".into(), i64::from(rows).into());
                params.insert("cols".into(), i64::from(cols).into());
                JobSpec::new(box_name(rows, cols), params, vec![], b.len())
                    .with_memory(box_job_memory(b.len()))
                    .with_shard_bytes(b.len() / 100 + 4096)
                    // ≈ 23 ns per staircase on one core (17×17: 54 s).
                    .with_cpu_seconds(b.len() * 23 / 1_000_000_000)
            })
            .collect();
        Ok((table, jobs))
    }

    fn check_shard(&self, job: &JobSpec, shard: &Shard) -> Result<()> {
        decode_box(job, shard).map(|_| ())
    }

    fn run(&self, job: &JobSpec, _inputs: &dyn ShardSource) -> Result<Vec<Section>> {
        let (rows, cols) = job_box(job)?;
        solve_box(rows, cols).map_err(|e| Error::job(&job.name, e))
    }

    fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
        let mut all: BTreeMap<(u32, u32), (Vec<Bite>, String)> = BTreeMap::new();
        let mut boxes_csv = String::from("box,rows,cols,positions,p_positions\n");
        for job in run.jobs() {
            let (meta, _, rects) = decode_box(job, &run.load(&job.name)?)?;
            boxes_csv.push_str(&format!(
                "{},{},{},{},{}\n",
                job.name,
                meta.rows,
                meta.cols,
                meta.ranks - 1,
                meta.p_positions
            ));
            for (rc, moves) in rects {
                match all.get(&rc) {
                    Some((other, by)) if *other != moves => {
                        return Err(Error::job(
                            self.name(),
                            format!(
                                "rectangle {}x{}: {by} gives {} but {} gives {}",
                                rc.0,
                                rc.1,
                                pairs_text(other),
                                job.name,
                                pairs_text(&moves)
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        all.insert(rc, (moves, job.name.clone()));
                    }
                }
            }
        }
        let header = "rows,cols,n_winning,moves\n";
        let (mut rect_csv, mut multi_csv) = (String::from(header), String::from(header));
        for ((r, c), (moves, _)) in &all {
            let line = format!("{r},{c},{},{}\n", moves.len(), moves_text(moves));
            if moves.len() >= 2 {
                multi_csv.push_str(&line);
            }
            rect_csv.push_str(&line);
        }
        Ok(vec![
            TableFile {
                name: "rectangles.csv".into(),
                bytes: rect_csv.into_bytes(),
            },
            TableFile {
                name: "multi-winning.csv".into(),
                bytes: multi_csv.into_bytes(),
            },
            TableFile {
                name: "boxes.csv".into(),
                bytes: boxes_csv.into_bytes(),
            },
        ])
    }

    fn check(&self, run: &dyn RunAccess) -> Result<Vec<String>> {
        let mut problems = Vec::new();
        let text = String::from_utf8(run.table("rectangles.csv")?).unwrap_or_default();
        let rects = match parse_rectangles_csv(&text) {
            Ok(r) => r,
            Err(e) => return Ok(vec![e]),
        };
        for (&(r, c), moves) in &rects {
            if moves.is_empty() {
                problems.push(format!(
                    "rectangle {r}x{c} has no winning move (strategy stealing says it must)"
                ));
            }
            if let Some(mirror) = rects.get(&(c, r)) {
                let t: Vec<Bite> = {
                    let mut v: Vec<Bite> = moves
                        .iter()
                        .map(|m| Bite {
                            row: m.col,
                            col: m.row,
                        })
                        .collect();
                    v.sort();
                    v
                };
                if *mirror != t {
                    problems.push(format!("rectangle {r}x{c} and {c}x{r} do not mirror"));
                }
            }
        }
        // Every box: the P-bits must be self-consistent on a sample of ranks
        // (a P-position has no bite into a P-position; an N-position has one).
        for job in run.jobs() {
            let (meta, p, _) = decode_box(job, &run.load(&job.name)?)?;
            if p.count() != meta.p_positions {
                problems.push(format!(
                    "{}: P count {} but meta says {}",
                    job.name,
                    p.count(),
                    meta.p_positions
                ));
            }
            let b = ChompBox::new(meta.rows as usize, meta.cols as usize)
                .map_err(|e| Error::job(&job.name, e.to_string()))?;
            let mut rows = vec![0u32; meta.rows as usize];
            let step = (meta.ranks / 4096).max(1);
            let mut x = 1;
            while x < meta.ranks {
                b.unrank(x, &mut rows);
                let s = Staircase::new(&rows).expect("ranks ≥ 1 have the poison");
                let wins = b.winning_moves(&p, &s).expect("in box");
                if p.is_p(x) != wins.is_empty() {
                    problems.push(format!(
                        "{}: rank {x} ({s}) is marked {} but has {} winning moves",
                        job.name,
                        if p.is_p(x) { "P" } else { "N" },
                        wins.len()
                    ));
                    break;
                }
                x += step;
            }
        }
        Ok(problems)
    }

    fn claims(&self, run: &dyn RunAccess) -> Result<Vec<Claim>> {
        let text = String::from_utf8(run.table("rectangles.csv")?).unwrap_or_default();
        let rects = parse_rectangles_csv(&text).map_err(|e| Error::job(self.name(), e))?;
        Ok(chomp_claims(run, &rects))
    }

    /// Seed 003's policy table, exactly ([`super::chomp_policy`]).
    fn report_notes(&self, _run: &dyn RunAccess) -> Result<String> {
        super::chomp_policy::report_section()
    }
}

/// The 14 row-count boxes of seed 000 (rows, cols).
pub const STANDARD_BOXES: [(u32, u32); 14] = [
    (1, 200),
    (2, 200),
    (3, 200),
    (4, 80),
    (5, 50),
    (6, 36),
    (7, 28),
    (8, 24),
    (9, 20),
    (10, 18),
    (11, 16),
    (12, 15),
    (13, 14),
    (14, 14),
];

const SEED0: &str = crate::pipeline::sources::SEN_CHOMP;
const SEED3: &str = "day-72 Chomp article (10×10 box)";
const GALE: &str = "Gale 1974, as cited in the sen-ltd Chomp article";

fn bite(row: u32, col: u32) -> Bite {
    Bite { row, col }
}

fn count_of<F: Fn(u32, u32) -> bool>(rects: &RectangleMoves, f: F) -> (usize, usize) {
    let mut ok = 0;
    let mut all = 0;
    for (&(r, c), m) in rects {
        if f(r, c) {
            all += 1;
            ok += usize::from(m.len() == 1);
        }
    }
    (ok, all)
}

/// The published Chomp claims of seeds 000 and 003 with our values.
fn chomp_claims(run: &dyn RunAccess, rects: &RectangleMoves) -> Vec<Claim> {
    let mut c = Vec::new();
    // A claim counts only if the run solved every rectangle it speaks of.
    let gate = |claim: Claim, need: &dyn Fn(u32, u32) -> bool| {
        let missing = (1..=200u32)
            .flat_map(|r| (1..=200u32).map(move |k| (r, k)))
            .filter(|&(r, k)| (r, k) != (1, 1) && need(r, k) && !rects.contains_key(&(r, k)))
            .count();
        if missing == 0 {
            claim
        } else {
            Claim::not_covered(
                &claim.source,
                &claim.claim,
                claim.expected,
                &format!("not covered: the job file misses {missing} of the rectangles needed"),
            )
        }
    };
    let standard =
        |r: u32, k: u32| r <= k && STANDARD_BOXES.iter().any(|&(br, bc)| r <= br && k <= bc);
    // The seed's counts are about the rectangles of its 14 boxes: larger
    // boxes in the job file add rectangles those claims do not speak of.
    let upright: Vec<(&(u32, u32), &Vec<Bite>)> = rects
        .iter()
        .filter(|&(&(r, k), _)| standard(r, k))
        .collect();
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles with rows ≤ cols solved by the 14 boxes (1×1 has no move and is left out)",
            823,
            upright.len(),
        ),
        &standard,
    ));
    let mut multi: Vec<(u32, u32, &Vec<Bite>)> = upright
        .iter()
        .filter(|(_, m)| m.len() >= 2)
        .map(|&(&(r, k), m)| (r, k, m))
        .collect();
    multi.sort_by_key(|&(r, k, _)| (r * k, r));
    let fmt_multi = |list: &[(u32, u32, &Vec<Bite>)]| {
        list.iter()
            .map(|(r, k, m)| format!("{r}×{k} {}", pairs_text(m)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles (rows ≤ cols) with two winning moves, by area",
            "6×13 (3, 11),(4, 8); 8×10 (3, 8),(4, 5); 9×10 (6, 7),(8, 4); 10×14 (4, 12),(6, 8); \
         12×13 (9, 10),(10, 8); 8×22 (1, 8),(2, 6); 8×23 (6, 17),(7, 15)",
            fmt_multi(&multi),
        ),
        &standard,
    ));
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles (rows ≤ cols) of the 14 boxes with three or more winning moves",
            0,
            upright.iter().filter(|(_, m)| m.len() >= 3).count(),
        ),
        &standard,
    ));
    let names = |f: &dyn Fn(u32, u32) -> bool| {
        multi
            .iter()
            .filter(|(r, k, _)| f(*r, *k))
            .map(|(r, k, _)| format!("{r}×{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    c.push(gate(
        Claim::compare(
            SEED0,
            "within 10×10, the rectangles with two winning moves",
            "8×10, 9×10",
            names(&|r, k| r <= 10 && k <= 10),
        ),
        &|r, k| r <= 10 && k <= 10,
    ));
    c.push(gate(
        Claim::compare(
            SEED0,
            "within 80 squares, the rectangles with two winning moves",
            "6×13, 8×10",
            names(&|r, k| r * k <= 80),
        ),
        &|r, k| r <= k && r * k <= 80,
    ));
    let mut pairs = 0;
    let mut mirrored = 0;
    for (&(r, k), m) in rects {
        if r < k
            && let Some(t) = rects.get(&(k, r))
        {
            pairs += 1;
            let mut mm: Vec<Bite> = m.iter().map(|b| bite(b.col, b.row)).collect();
            mm.sort();
            mirrored += usize::from(mm == *t);
        }
    }
    c.push(gate(
        Claim::compare(
            SEED0,
            "m×n and n×m both solved: pairs, and pairs whose winning moves mirror",
            "91 pairs, 91 mirror",
            format!("{pairs} pairs, {mirrored} mirror"),
        ),
        &|r, k| r <= 14 && k <= 14 && r != k,
    ));
    let sq: Vec<u32> = (2..=14).filter(|n| rects.contains_key(&(*n, *n))).collect();
    let sq_ok = sq
        .iter()
        .filter(|&&n| rects[&(n, n)] == vec![bite(1, 1)])
        .count();
    c.push(gate(
        Claim::compare(
            SEED0,
            "n×n (2 ≤ n ≤ 14): the only winning move is (1, 1)",
            "13 of 13",
            format!("{sq_ok} of {}", sq.len()),
        ),
        &|r, k| r == k && r <= 14,
    ));
    let two: Vec<u32> = (1..=200).filter(|n| rects.contains_key(&(2, *n))).collect();
    let two_ok = two
        .iter()
        .filter(|&&n| rects[&(2, n)] == vec![bite(1, n - 1)])
        .count();
    c.push(gate(
        Claim::compare(
            SEED0,
            "2×n (n ≤ 200): the only winning move is the top-right corner (1, n−1)",
            "200 of 200",
            format!("{two_ok} of {}", two.len()),
        ),
        &|r, k| r == 2 && k <= 200,
    ));
    let (three_ok, three_all) = count_of(rects, |r, k| r == 3 && k <= 200);
    c.push(gate(
        Claim::compare(
            "Brouwer, The game of Chomp (3×p has one winning move, p ≤ 130,000)",
            "3×n (n ≤ 200): exactly one winning move",
            "200 of 200",
            format!("{three_ok} of {three_all}"),
        ),
        &|r, k| r == 3 && k <= 200,
    ));
    for (r, k, m) in [(4u32, 5u32, bite(2, 2)), (4, 6, bite(1, 2))] {
        c.push(gate(
            Claim::compare(
                GALE,
                &format!("{r}×{k}: the winning moves"),
                m,
                rects
                    .get(&(r, k))
                    .map_or("not computed".into(), |v| pairs_text(v)),
            ),
            &|r, k| r == 4 && (k == 5 || k == 6),
        ));
    }
    let bars: Vec<(u32, u32)> = (1..=10)
        .flat_map(|r| (1..=10).map(move |k| (r, k)))
        .filter(|rc| rects.contains_key(rc))
        .collect();
    let corner: Vec<(u32, u32)> = bars
        .iter()
        .copied()
        .filter(|&(r, k)| rects[&(r, k)].contains(&bite(r - 1, k - 1)))
        .collect();
    c.push(gate(
        Claim::compare(
            SEED3,
            "bars up to 10×10 on which the far-corner bite wins; how many have a side of exactly 2",
            "19 of 99; 19 with a side of 2",
            format!(
                "{} of {}; {} with a side of 2",
                corner.len(),
                bars.len(),
                corner.iter().filter(|(r, k)| *r == 2 || *k == 2).count()
            ),
        ),
        &|r, k| r <= 10 && k <= 10,
    ));
    c.extend(ten_by_ten_claims(run));
    c
}

/// Claims about the whole 10×10 box, from any box with 10 rows and ≥ 10
/// columns (its first C(20,10) ranks are the 10×10 box).
fn ten_by_ten_claims(run: &dyn RunAccess) -> Vec<Claim> {
    let expected = [
        ("shapes besides the empty one", "184755"),
        ("P-positions", "2612"),
        ("legal bites", "9053045"),
        ("winning bites", "312237"),
        ("winning bites per won position", "1.71"),
        ("L-shaped P-positions (all with equal arms)", "10 (10)"),
    ];
    let source = run
        .jobs()
        .iter()
        .find(|j| matches!(job_box(j), Ok((10, cols)) if cols >= 10));
    let Some(job) = source else {
        return expected
            .iter()
            .map(|(what, v)| {
                Claim::not_covered(
                    SEED3,
                    &format!("10×10 box: {what}"),
                    v,
                    "no box with 10 rows",
                )
            })
            .collect();
    };
    let ours: Vec<String> = match run.load(&job.name).and_then(|s| decode_box(job, &s)) {
        Err(e) => vec![e.to_string(); expected.len()],
        Ok((_, p, _)) => {
            let b = ChompBox::new(10, 10).expect("10×10 box");
            let p10 = p.prefix(b.len());
            let st = b.stats(&p10);
            let mut l_shapes = 0;
            let mut l_equal = 0;
            for a in 1..=10u32 {
                for h in 1..=10u32 {
                    let mut rows = vec![1u32; h as usize];
                    rows[0] = a;
                    let s = Staircase::new(&rows).expect("L-shape");
                    if p10.is_p(b.rank_of(&s).expect("in box")) {
                        l_shapes += 1;
                        l_equal += usize::from(a == h);
                    }
                }
            }
            vec![
                st.positions.to_string(),
                st.p_positions.to_string(),
                st.legal_bites.to_string(),
                st.winning_bites.to_string(),
                format!(
                    "{:.2}",
                    st.winning_bites as f64 / (st.positions - st.p_positions) as f64
                ),
                format!("{l_shapes} ({l_equal})"),
            ]
        }
    };
    expected
        .iter()
        .zip(ours)
        .map(|((what, v), o)| Claim::compare(SEED3, &format!("10×10 box: {what}"), v, o))
        .collect()
}

/// Whether all claims match or are not covered (used by tests).
pub fn claims_ok(claims: &[Claim]) -> bool {
    claims
        .iter()
        .all(|c| matches!(c.status, ClaimStatus::Match | ClaimStatus::NotCovered))
}
