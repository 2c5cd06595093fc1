//! Probe of Chomp staircases: P-position or N-position and every winning
//! bite, read from the box shards of `chomp-boxes` runs (or solved in memory
//! for small boxes); with `grundy`, the Sprague–Grundy value from a
//! `chomp-grundy` run ([`GrundyProbe`]).

use std::fmt;

use crate::games::chomp::{Bite, ChompBox, Staircase};
use crate::pipeline::kinds::chomp_boxes::winning_moves_from_run;
use crate::pipeline::kinds::chomp_grundy_probe::GrundyProbe;
use crate::pipeline::merge::RunView;
use crate::pipeline::probe::{
    Params, Probe, ProbeError, ProbeResult, box_list, flag, param, run_dirs,
};

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
    let rows: Vec<u32> = s
        .split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|e| {
            ProbeError::bad(format!(
                "position `{s}`: write row lengths like 10,10,9,4: {e}"
            ))
        })?;
    Staircase::new(&rows).map_err(|e| ProbeError::bad(format!("position `{s}`: {e}")))
}

/// The answer of [`ChompProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChompAnswer {
    /// The request's label (the rectangle as written, or the staircase).
    pub label: String,
    /// The staircase.
    pub position: Staircase,
    /// Every winning bite `(row, col)`, sorted; empty for a P-position.
    pub winning_moves: Vec<Bite>,
    /// Where the answer comes from (a box of a run, or solved in memory).
    pub source: String,
}

impl ChompAnswer {
    /// The JSON form (what `query chomp --json` prints and `serve` answers).
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "position": self.position.rows(),
            "p_position": self.winning_moves.is_empty(),
            "winning_moves": self.winning_moves.iter().map(|m| [m.row, m.col]).collect::<Vec<_>>(),
            "source": self.source,
        })
    }
}

impl fmt::Display for ChompAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = &self.label;
        let moves = &self.winning_moves;
        if moves.is_empty() {
            writeln!(
                f,
                "{label}: P-position (the player to move loses; no winning move)"
            )?;
        } else {
            let list: Vec<String> = moves.iter().map(ToString::to_string).collect();
            writeln!(
                f,
                "{label}: N-position, {} winning move{}: {}",
                moves.len(),
                if moves.len() == 1 { "" } else { "s" },
                list.join(", ")
            )?;
        }
        writeln!(f, "  ({})", self.source)
    }
}

/// Answers Chomp requests from `chomp-boxes` runs (the first box, in the
/// order the runs were given and then plan order, that covers the staircase
/// or its transpose), else by solving the enclosing box in memory when it
/// has at most `in_memory_limit` staircases. Grundy values go to
/// [`ChompProbe::grundy`].
pub struct ChompProbe {
    runs: Vec<RunView>,
    in_memory_limit: u64,
    /// The Sprague–Grundy probe (`grundy=1`).
    pub grundy: GrundyProbe,
}

impl ChompProbe {
    /// A probe with no run directory, solving boxes of up to
    /// `in_memory_limit` staircases in memory (Grundy values: a tenth of it).
    pub fn new(in_memory_limit: u64) -> ChompProbe {
        ChompProbe {
            runs: Vec::new(),
            in_memory_limit,
            grundy: GrundyProbe::new(in_memory_limit / 10),
        }
    }

    /// Adds a `chomp-boxes` run. When a run is given, a staircase no box
    /// covers is not solved in memory.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] if `view` holds another kind.
    pub fn add_run(&mut self, view: RunView) -> ProbeResult<()> {
        if view.plan.kind != "chomp-boxes" {
            return Err(ProbeError::bad(format!(
                "{} is a `{}` run, not chomp-boxes",
                view.dir.root().display(),
                view.plan.kind
            )));
        }
        self.runs.push(view);
        Ok(())
    }

    /// The boxes answered from runs: `(rows, cols, run directory)`.
    pub fn boxes(&self) -> Vec<(u32, u32, String)> {
        box_list(&self.runs)
    }

    /// P-position or every winning bite of the request's staircase.
    ///
    /// # Errors
    /// [`ProbeError::NotSolved`] if no box covers it (with runs) or its box
    /// is too large to solve here (without); [`ProbeError::Run`] if the
    /// covering box's shard is missing or damaged.
    pub fn answer(&self, req: &ChompRequest) -> ProbeResult<ChompAnswer> {
        let s = &req.position;
        let (source, winning_moves) = if self.runs.is_empty() {
            let rows = s.rows().len();
            let cols = s.rows()[0] as usize;
            let b = ChompBox::new(rows, cols).map_err(ProbeError::bad)?;
            if b.len() > self.in_memory_limit {
                return Err(ProbeError::NotSolved(format!(
                    "the {rows}x{cols} box has {} staircases, too many to solve here; \
                     run a chomp-boxes job covering it and pass --run-dir",
                    b.len()
                )));
            }
            let p = b.solve();
            (
                format!("solved in memory ({rows}x{cols} box)"),
                b.winning_moves(&p, s).map_err(ProbeError::bad)?,
            )
        } else {
            let mut found = None;
            for v in &self.runs {
                if let Some((name, moves)) = winning_moves_from_run(v, s)? {
                    found = Some((format!("{} ({})", name, v.dir.root().display()), moves));
                    break;
                }
            }
            found.ok_or_else(|| {
                let what = if req.is_rectangle {
                    req.label.clone()
                } else {
                    format!("the position {s}")
                };
                ProbeError::NotSolved(format!(
                    "no box in {} covers {what} (nor its transpose)",
                    run_dirs(&self.runs)
                ))
            })?
        };
        Ok(ChompAnswer {
            label: req.label.clone(),
            position: s.clone(),
            winning_moves,
            source,
        })
    }
}

impl Probe for ChompProbe {
    fn game(&self) -> &'static str {
        "chomp"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        let req = ChompRequest::from_params(params)?;
        if flag(params, "grundy")? {
            Ok(self.grundy.answer(&req)?.json())
        } else {
            Ok(self.answer(&req)?.json())
        }
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "boxes": self.boxes().into_iter().map(|(r, c, d)| serde_json::json!({
                "rows": r, "cols": c, "run_dir": d,
            })).collect::<Vec<_>>(),
            "grundy_boxes": self.grundy.boxes().into_iter().map(|(r, c, d)| serde_json::json!({
                "rows": r, "cols": c, "run_dir": d,
            })).collect::<Vec<_>>(),
            "in_memory_limit": self.in_memory_limit,
        })
    }
}
