//! What the Chomp probes share: a `chomp-boxes` or `chomp-grundy` run opened
//! once ([`BoxRun`]: its boxes, their parts and block reads), the staircase
//! of a request ([`ChompRequest`]) and the box list of a set of runs.

use std::sync::{Arc, OnceLock};

use crate::games::chomp::kind::boxes::BoxMeta;
use crate::pipeline::Error;
use crate::pipeline::RunView;
use crate::pipeline::codec;
use crate::pipeline::probe::blocks::{BlockCache, RunShards};
use crate::pipeline::probe::{Params, ProbeError, ProbeResult, param};
use crate::solvers::chomp::{Bite, ChompBox, Staircase};

/// One box of a box-based run: its job, its size, and (on first use) its
/// ranking tables and what its `meta` section says.
struct BoxJob {
    name: String,
    rows: u32,
    cols: u32,
    /// The job's rank window (a part of a split box); `end` `None`: to the
    /// end of the box.
    start: u64,
    end: Option<u64>,
    /// The box's ranking tables and the meta's value width (bytes per rank
    /// in a Grundy shard; 0 for `chomp-boxes`), made once the meta checked.
    ready: OnceLock<(ChompBox, u8)>,
}

/// A box-based run (`chomp-boxes` or `chomp-grundy`) read block by block:
/// the boxes of its plan, each box's ranking tables made and its `meta`
/// section checked on first use.
pub struct BoxRun {
    shards: RunShards,
    boxes: Vec<BoxJob>,
}

impl BoxRun {
    /// The boxes of `view` (jobs with `rows` and `cols` parameters), read
    /// through `cache`.
    ///
    /// # Errors
    /// [`ProbeError::Run`] if a job lacks its box size.
    pub(crate) fn new(view: RunView, cache: Arc<BlockCache>) -> ProbeResult<BoxRun> {
        let mut boxes = Vec::new();
        for j in &view.plan.jobs {
            let get = |k: &str| {
                j.params
                    .get(k)
                    .and_then(toml::Value::as_integer)
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| Error::job(&j.name, format!("the plan gives no `{k}`")))
            };
            let rank = |k: &str| {
                j.params
                    .get(k)
                    .and_then(toml::Value::as_integer)
                    .and_then(|v| u64::try_from(v).ok())
            };
            boxes.push(BoxJob {
                name: j.name.clone(),
                rows: get("rows")?,
                cols: get("cols")?,
                start: rank("start").unwrap_or(0),
                end: rank("end"),
                ready: OnceLock::new(),
            });
        }
        Ok(BoxRun {
            shards: RunShards::new(view, cache),
            boxes,
        })
    }

    /// The run.
    pub(crate) fn view(&self) -> &RunView {
        self.shards.view()
    }

    /// The first box (plan order) holding `s`: the index of its (first) job
    /// and the box's name (the job name without `-part-K`).
    pub(crate) fn covering(&self, s: &Staircase) -> Option<(usize, &str)> {
        let need_rows = s.rows().len() as u32;
        let need_cols = s.rows().first().copied().unwrap_or(0);
        self.covering_size(need_rows, need_cols)
    }

    /// [`BoxRun::covering`] of a staircase of `need_rows` rows and
    /// `need_cols` columns, known by its size only (so that the transpose
    /// of a staircase is looked for without building it).
    pub(crate) fn covering_size(&self, need_rows: u32, need_cols: u32) -> Option<(usize, &str)> {
        self.boxes
            .iter()
            .position(|b| b.rows >= need_rows && b.cols >= need_cols)
            // A part of a split box answers for its box (`box-RxC`).
            .map(|i| {
                let name = self.boxes[i].name.as_str();
                (i, name.split("-part-").next().unwrap_or(name))
            })
    }

    /// [`BoxRun::covering`] of the transpose of `s` (its columns as rows),
    /// from `s`'s size alone.
    pub(crate) fn covering_transposed(&self, s: &Staircase) -> Option<(usize, &str)> {
        let cols = s.rows().first().copied().unwrap_or(0);
        self.covering_size(cols, s.rows().len() as u32)
    }

    /// The job of the box of job `i` (a job [`BoxRun::covering`] gave)
    /// whose window holds rank `x`: `i` itself for a box in one job, else
    /// the part of the same box (parts are consecutive in plan order).
    pub(crate) fn part_for(&self, i: usize, x: u64) -> usize {
        let (rows, cols) = (self.boxes[i].rows, self.boxes[i].cols);
        self.boxes[i..]
            .iter()
            .take_while(|b| (b.rows, b.cols) == (rows, cols))
            .position(|b| b.start <= x && b.end.is_none_or(|e| x < e))
            .map_or(i, |k| i + k)
    }

    /// First rank of job `i`'s window.
    pub(crate) fn start(&self, i: usize) -> u64 {
        self.boxes[i].start
    }

    /// Job `i`'s ranking tables and value width, its `meta` section read
    /// (whole: a few bytes) and checked by `check` once (given the meta, the
    /// box and the job's window `start` and `end`; it returns the width, or
    /// why the meta does not fit).
    ///
    /// # Errors
    /// [`ProbeError::Run`] naming the job: a missing or damaged shard, a
    /// meta that does not fit the job.
    pub(crate) fn ready(
        &self,
        i: usize,
        check: impl Fn(&[u8], &ChompBox, u64, u64) -> Result<u8, String>,
    ) -> ProbeResult<&(ChompBox, u8)> {
        let b = &self.boxes[i];
        if let Some(r) = b.ready.get() {
            return Ok(r);
        }
        let bad = |m: String| ProbeError::Run(Error::job(&b.name, format!("malformed shard: {m}")));
        let cb = ChompBox::new(b.rows as usize, b.cols as usize).map_err(|e| bad(e.to_string()))?;
        let len = self.shards.section_len(&b.name, "meta")?;
        let meta = self.shards.range(&b.name, "meta", 0, len)?;
        let end = b.end.unwrap_or(cb.len());
        let width = check(&meta, &cb, b.start, end).map_err(|m| bad(format!("meta: {m}")))?;
        Ok(b.ready.get_or_init(|| (cb, width)))
    }

    /// `len` bytes at `offset` of section `section` of box `i`'s shard.
    ///
    /// # Errors
    /// As [`RunShards::range`].
    pub(crate) fn bytes(
        &self,
        i: usize,
        section: &str,
        offset: u64,
        len: u64,
    ) -> ProbeResult<Vec<u8>> {
        Ok(self
            .shards
            .range(&self.boxes[i].name, section, offset, len)?)
    }
}

/// Checks a `chomp-boxes` meta against its box and the job's window.
fn check_box_meta(bytes: &[u8], b: &ChompBox, start: u64, end: u64) -> Result<u8, String> {
    let m: BoxMeta = codec::decode(bytes)?;
    if (m.rows as usize, m.cols as usize, m.ranks, m.start, m.end)
        != (b.rows(), b.cols(), b.len(), start, end)
    {
        return Err(format!(
            "{}x{} ranks {}..{} of {}, the job is {}x{} ranks {start}..{end} of {}",
            m.rows,
            m.cols,
            m.start,
            m.end,
            m.ranks,
            b.rows(),
            b.cols(),
            b.len()
        ));
    }
    Ok(0)
}

/// The winning bites of `s` from box `i` of `run`: the bites whose result is
/// a P-position, read bit by bit from the `p-positions` section of the job
/// whose window holds the result (bit `(x − start) % 8` of byte
/// `(x − start) / 8` for rank x), in (row, col) order.
///
/// # Errors
/// [`ProbeError::Run`]: a missing or damaged shard or block.
pub(crate) fn winning_in_box(run: &BoxRun, i: usize, s: &Staircase) -> ProbeResult<Vec<Bite>> {
    let (b, _) = run.ready(i, check_box_meta)?;
    let mut out = Vec::new();
    for bite in s.bites() {
        let t = s.after(bite).expect("a legal bite");
        let x = b.rank_of(&t).map_err(ProbeError::bad)?;
        let j = run.part_for(i, x);
        run.ready(j, check_box_meta)?;
        let off = x - run.start(j);
        let byte = run.bytes(j, "p-positions", off / 8, 1)?[0];
        if byte >> (off % 8) & 1 == 1 {
            out.push(bite);
        }
    }
    Ok(out)
}

/// The winning bites of `s` from `run`: the first box holding `s`, else the
/// first holding its transpose (bites mirrored, sorted); with the box's job
/// name. `None` if no box holds either.
///
/// # Errors
/// As [`winning_in_box`].
pub fn winning_from_run(run: &BoxRun, s: &Staircase) -> ProbeResult<Option<(String, Vec<Bite>)>> {
    if let Some((i, name)) = run.covering(s) {
        return Ok(Some((name.to_string(), winning_in_box(run, i, s)?)));
    }
    // The transpose is built only once a box holds it: its rows are `s`'s
    // columns, which may be a billion (`1x1000000000`).
    let Some((i, name)) = run.covering_transposed(s) else {
        return Ok(None);
    };
    let t = s.transpose();
    let mut mirrored: Vec<Bite> = winning_in_box(run, i, &t)?
        .iter()
        .map(|b| Bite {
            row: b.col,
            col: b.row,
        })
        .collect();
    mirrored.sort();
    Ok(Some((format!("{name}, transposed"), mirrored)))
}

/// Most rows a queried staircase may have.
pub const MAX_QUERY_ROWS: u32 = 10_000;

/// Largest box (in staircases) `query chomp` solves in memory when no run
/// directory covers the position.
pub const QUERY_IN_MEMORY_LIMIT: u64 = 50_000_000;

/// A staircase as a request names it: a rectangle `ROWSxCOLS` or row lengths
/// from the poison row up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChompRequest {
    /// The staircase.
    pub position: Staircase,
    /// How the user wrote it (the rectangle, e.g. `8x10`, or the staircase).
    pub label: String,
    /// Whether the user gave a rectangle.
    pub is_rectangle: bool,
}

impl ChompRequest {
    /// A request from a rectangle (`8x10`) or a staircase (`10,10,9,4`);
    /// exactly one is expected, the rectangle wins if both are given.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if neither is given or the text is malformed.
    pub fn parse(rectangle: Option<&str>, position: Option<&str>) -> ProbeResult<ChompRequest> {
        match (rectangle, position) {
            (Some(r), _) => Ok(ChompRequest {
                position: parse_rectangle(r)?,
                label: r.to_string(),
                is_rectangle: true,
            }),
            (None, Some(p)) => {
                let s = parse_staircase(p)?;
                Ok(ChompRequest {
                    label: s.to_string(),
                    position: s,
                    is_rectangle: false,
                })
            }
            (None, None) => Err(ProbeError::bad(
                "give a rectangle (e.g. 8x10) or --position 10,10,9,4",
            )),
        }
    }

    /// A request from the parameters `rect` (or `rectangle`) or `position`.
    ///
    /// # Errors
    /// As [`ChompRequest::parse`].
    pub fn from_params(params: &Params) -> ProbeResult<ChompRequest> {
        let rect = param(params, "rect").or_else(|| param(params, "rectangle"));
        ChompRequest::parse(rect, param(params, "position")).map_err(|e| {
            match (rect, param(params, "position")) {
                (None, None) => {
                    ProbeError::bad("give rect=ROWSxCOLS (e.g. 8x10) or position=10,10,9,4")
                }
                _ => e,
            }
        })
    }
}

/// Parses `ROWSxCOLS`.
///
/// # Errors
/// [`ProbeError::BadRequest`] naming the text.
pub fn parse_rectangle(s: &str) -> ProbeResult<Staircase> {
    let (r, c) = s
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| ProbeError::bad(format!("rectangle `{s}`: write ROWSxCOLS, e.g. 8x10")))?;
    let num = |t: &str, what: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|e| ProbeError::bad(format!("rectangle `{s}`: {what}: {e}")))
    };
    let (r, c) = (num(r, "rows")?, num(c, "cols")?);
    if r == 0 || c == 0 {
        return Err(ProbeError::bad(format!(
            "rectangle `{s}`: rows and cols must be at least 1"
        )));
    }
    if r > MAX_QUERY_ROWS {
        return Err(ProbeError::bad(format!(
            "rectangle `{s}`: at most {MAX_QUERY_ROWS} rows"
        )));
    }
    Staircase::rectangle(r, c).map_err(ProbeError::bad)
}

/// Parses row lengths from the poison row up, e.g. `10,10,9,4`.
///
/// # Errors
/// [`ProbeError::BadRequest`] naming the text.
pub fn parse_staircase(s: &str) -> ProbeResult<Staircase> {
    let rows: Vec<u32> = crate::pipeline::probe::parse_list(s, "position")?;
    Staircase::new(&rows).map_err(|e| ProbeError::bad(format!("position `{s}`: {e}")))
}

/// The boxes of box-based runs (`chomp-boxes`, `chomp-grundy`): `(rows,
/// cols, run directory)` in the order given, then plan order.
/// The answer `read` gives from the first of `runs` whose boxes cover `s`
/// (or its transpose), with the source "JOB (RUN_DIR)".
///
/// # Errors
/// `read`'s; [`ProbeError::NotSolved`] naming the run directories when no
/// run covers `s`.
pub fn from_first_run<T>(
    runs: &[BoxRun],
    req: &ChompRequest,
    s: &Staircase,
    read: impl Fn(&BoxRun, &Staircase) -> ProbeResult<Option<(String, T)>>,
) -> ProbeResult<(String, T)> {
    for v in runs {
        if let Some((name, answer)) = read(v, s)? {
            return Ok((
                format!("{} ({})", name, v.view().dir.root().display()),
                answer,
            ));
        }
    }
    let what = if req.is_rectangle {
        req.label.clone()
    } else {
        format!("the position {s}")
    };
    Err(ProbeError::NotSolved(format!(
        "no box in {} covers {what} (nor its transpose)",
        crate::pipeline::probe::run_dirs(runs.iter().map(BoxRun::view))
    )))
}

pub fn box_list<'a>(runs: impl IntoIterator<Item = &'a RunView>) -> Vec<(u32, u32, String)> {
    use crate::pipeline::RunAccess;
    let mut out = Vec::new();
    for v in runs {
        for j in v.jobs() {
            let get = |k: &str| j.params.get(k).and_then(toml::Value::as_integer);
            if let (Some(r), Some(c)) = (get("rows"), get("cols")) {
                let entry = (r as u32, c as u32, v.dir.root().display().to_string());
                // The parts of a split box are one box.
                if out.last() != Some(&entry) {
                    out.push(entry);
                }
            }
        }
    }
    out
}
