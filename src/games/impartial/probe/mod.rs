//! Probes of the impartial games without a job kind, computed in memory:
//! Nim (C. L. Bouton, "Nim, a game with a complete mathematical theory",
//! Annals of Mathematics (2) 3 (1901–02), 35–39), normal and misère play, and subtraction
//! games Sub(S).

pub mod octal;

use std::fmt;

use crate::games::impartial::probe::octal::{pn_words, values_text};
use crate::solvers::impartial::nim::{self, NimMove, Play};
use crate::solvers::impartial::subtraction::{Period, Subtraction};

use crate::pipeline::probe::{
    Params, Probe, ProbeError, ProbeResult, Work, flag, param, parse_list, required,
};
use crate::pipeline::resources::check_allocation;

/// Values computed by `query subtraction` to find a period.
pub const QUERY_PERIOD_SEARCH: usize = 1 << 14;

/// The answer of [`nim_answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NimAnswer {
    /// The heaps as the user wrote them.
    pub label: String,
    /// Heap sizes.
    pub heaps: Vec<u64>,
    /// Misère play (taking the last token loses).
    pub misere: bool,
    /// Whether the player to move loses ([`nim::is_p_position`]).
    pub p_position: bool,
    /// Every winning move; empty for a P-position and for a misère position
    /// with no token left (won already by the player to move).
    pub winning_moves: Vec<NimMove>,
}

/// Every winning move of Nim heaps written `3,4,5`.
///
/// # Errors
/// [`ProbeError::BadRequest`] for a malformed list.
pub fn nim_answer(heaps: &str, misere: bool) -> ProbeResult<NimAnswer> {
    let h: Vec<u64> = parse_list(heaps, "heaps")?;
    let play = if misere { Play::Misere } else { Play::Normal };
    Ok(NimAnswer {
        label: heaps.to_string(),
        p_position: nim::is_p_position(&h, play),
        winning_moves: nim::winning_moves(&h, play),
        heaps: h,
        misere,
    })
}

impl NimAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "heaps": self.heaps,
            "misere": self.misere,
            "nim_sum": nim::nim_sum(&self.heaps),
            "p_position": self.p_position,
            "winning_moves": self.winning_moves.iter().map(|m| serde_json::json!({
                "heap": m.heap + 1, "from": m.from, "to": m.to,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for NimAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let play = if self.misere { "misère" } else { "normal" };
        writeln!(
            f,
            "heaps {} ({play} play), nim-sum {}",
            self.label,
            nim::nim_sum(&self.heaps)
        )?;
        if self.p_position {
            writeln!(f, "P-position (the player to move loses; no winning move)")
        } else if self.winning_moves.is_empty() {
            writeln!(
                f,
                "N-position: no token is left, so in misère play the player to move has \
                 already won (the other player took the last token)"
            )
        } else {
            writeln!(
                f,
                "N-position, {} winning move(s):",
                self.winning_moves.len()
            )?;
            for m in &self.winning_moves {
                writeln!(f, "  {m}")?;
            }
            Ok(())
        }
    }
}

/// The answer of [`subtraction_answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtractionAnswer {
    /// The set as the user wrote it.
    pub set_label: String,
    /// The subtraction set.
    pub set: Vec<u32>,
    /// `G(0..=n)`.
    pub values: Vec<u32>,
    /// The proved period, if any.
    pub period: Option<Period>,
    /// Values computed to look for the period.
    pub searched: usize,
    /// Heaps of a sum, as written, and their sizes.
    pub heaps: Option<(String, Vec<u64>)>,
    /// Winning moves of the sum: `(heap index, tokens taken)`.
    pub winning_moves: Vec<(usize, u32)>,
}

/// Grundy values `G(0..=n)` of Sub(S), its proved period and, with `heaps`,
/// the winning moves of that sum.
///
/// # Errors
/// [`ProbeError::BadRequest`] for a malformed set or heap list.
pub fn subtraction_answer(
    set: &str,
    n: usize,
    heaps: Option<&str>,
) -> ProbeResult<SubtractionAnswer> {
    let s: Vec<u32> = parse_list(set, "set")?;
    let game = Subtraction::new(&s).map_err(|e| ProbeError::bad(format!("set `{set}`: {e}")))?;
    let h: Option<Vec<u64>> = heaps.map(|hs| parse_list(hs, "heaps")).transpose()?;
    // Known before allocating: 4 bytes per value computed, and about 12 per
    // value printed (text or JSON).
    let need = (n.max(QUERY_PERIOD_SEARCH) as u64 + 1)
        .saturating_mul(4)
        .saturating_add((n as u64).saturating_add(1).saturating_mul(12));
    check_allocation(&format!("--n {n}: printing G(0..={n})"), need)
        .map_err(ProbeError::NotSolved)?;
    let mut values = game.grundy_sequence(n.max(QUERY_PERIOD_SEARCH));
    // The period is looked for in the first values only (its search is
    // quadratic in the values searched): G(0..16384) and twice the largest
    // move more, which proves every period found.
    let m = *s.iter().max().unwrap_or(&0) as usize;
    let searched = values
        .len()
        .min(QUERY_PERIOD_SEARCH.saturating_add(m.saturating_mul(2)));
    let period = game.period(&values[..searched]);
    // Heaps of any size: G past the values computed comes from the period
    // they prove (a subtraction game with a finite set is periodic).
    let winning_moves = match &h {
        Some(h) => game.winning_moves_from(&values, period, h).ok_or_else(|| {
            ProbeError::NotSolved(format!(
                "heaps `{}`: no period proved within n ≤ {}, and a heap is larger",
                heaps.unwrap_or_default(),
                searched - 1
            ))
        })?,
        None => Vec::new(),
    };
    values.truncate(n + 1);
    let heaps = heaps.zip(h).map(|(hs, h)| (hs.to_string(), h));
    Ok(SubtractionAnswer {
        set_label: set.to_string(),
        set: s,
        values,
        period,
        searched,
        heaps,
        winning_moves,
    })
}

impl SubtractionAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "set": self.set,
            "n": self.values.len() - 1,
            "values": self.values,
            "period": self.period.map(|p| serde_json::json!({
                "period": p.period, "preperiod": p.preperiod,
            })),
            "searched": self.searched,
            "heaps": self.heaps.as_ref().map(|(_, h)| h),
            "p_position": self.heaps.as_ref().map(|_| self.winning_moves.is_empty()),
            "winning_moves": self.heaps.as_ref().map(|(_, h)| {
                self.winning_moves.iter().map(|&(i, take)| serde_json::json!({
                    "heap": i + 1, "from": h[i], "to": h[i] - u64::from(take),
                })).collect::<Vec<_>>()
            }),
        })
    }
}

impl fmt::Display for SubtractionAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Sub({{{}}}): G(0..={}) = {}",
            self.set_label,
            self.values.len() - 1,
            values_text(&self.values)
        )?;
        match self.period {
            Some(p) => writeln!(
                f,
                "periodic with period {} from n = {} (proved: the last max S values repeat)",
                p.period, p.preperiod
            )?,
            None => writeln!(f, "no period proved within n ≤ {}", self.searched - 1)?,
        }
        if let Some((hs, h)) = &self.heaps {
            if self.winning_moves.is_empty() {
                writeln!(f, "heaps {hs}: P-position (no winning move)")?;
            } else {
                for &(i, take) in &self.winning_moves {
                    writeln!(
                        f,
                        "heaps {hs}: take {take} from heap {} ({} → {})",
                        i + 1,
                        h[i],
                        h[i] - u64::from(take)
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// The `nim` probe (`/api/v1/nim?heaps=3,4,5&misere=1`): [`nim_answer`]
/// in memory, the JSON `gametables query nim … --json` prints.
#[derive(Debug, Default, Clone, Copy)]
pub struct NimProbe;

impl Probe for NimProbe {
    fn game(&self) -> &'static str {
        "nim"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        let heaps: String = required(params, "heaps")?;
        Ok(nim_answer(&heaps, flag(params, "misere")?)?.json())
    }

    /// The page's heap view: a move takes any number of tokens from one heap.
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "heaps", "title": "Nim", "take": "any", "misere": true,
            "example": "3,4,5",
            "rules": "A move takes any number of tokens from one heap. In normal play whoever takes the last token wins; in misère play, loses (C. L. Bouton, Nim, a game with a complete mathematical theory, Annals of Mathematics (2) 3, 1901–02, 35–39).",
        })
    }

    fn keys(&self) -> &'static [&'static str] {
        &["heaps", "misere"]
    }

    fn work_of(&self, _params: &Params) -> Work {
        Work::Lookup
    }
}

/// Most values `G(0..=n)` the `subtraction` probe prints (`n`).
pub const MAX_API_N: usize = 1_000_000;

/// Most steps (values × moves of the set) one `subtraction` request of the
/// API computes.
pub const MAX_API_WORK: usize = 50_000_000;

/// The `subtraction` probe (`/api/v1/subtraction?set=1,3,4&n=20&heaps=…`):
/// [`subtraction_answer`] in memory, the JSON `gametables query
/// subtraction … --json` prints (`n` defaults to 20 as there).
#[derive(Debug, Default, Clone, Copy)]
pub struct SubtractionProbe;

impl Probe for SubtractionProbe {
    fn game(&self) -> &'static str {
        "subtraction"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        let set: String = required(params, "set")?;
        let n = match param(params, "n") {
            Some(_) => required(params, "n")?,
            None => 20,
        };
        if n > MAX_API_N {
            return Err(ProbeError::bad(format!(
                "n = {n}: at most {MAX_API_N} values are printed here (ask `gametables query subtraction` for more)"
            )));
        }
        // Each value looks at every move: bounded before it is spent.
        let moves = parse_list::<u32>(&set, "set")?.len();
        let work = (n.max(QUERY_PERIOD_SEARCH) + 1).saturating_mul(moves);
        if work > MAX_API_WORK {
            return Err(ProbeError::bad(format!(
                "set of {moves} numbers and n = {n}: {work} steps, more than the {MAX_API_WORK} answered here (ask `gametables query subtraction`)"
            )));
        }
        Ok(subtraction_answer(&set, n, param(params, "heaps"))?.json())
    }

    /// The page's heap view: a move takes a number in the set from one heap.
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "heaps", "title": "Subtraction games", "take": "set",
            "example": "10,15,20", "set": "1,3,4",
            "rules": "Sub(S): a move takes s tokens from one heap, for s in the set S; whoever cannot move loses. Grundy values are periodic (Berlekamp, Conway and Guy, Winning Ways for your Mathematical Plays).",
        })
    }

    fn keys(&self) -> &'static [&'static str] {
        &["set", "n", "heaps"]
    }

    fn work_of(&self, _params: &Params) -> Work {
        Work::Lookup
    }
}

/// Most edges of a tree `query hackenbush` takes (every cut is answered:
/// quadratic in the edges).
pub const MAX_HACKENBUSH_EDGES: usize = 500;

/// The answer of [`hackenbush_answer`]: a Green Hackenbush tree, its
/// Grundy value by the colon principle and every cut with the value it
/// leaves (Berlekamp, Conway and Guy, *Winning Ways*, ch. 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HackenbushAnswer {
    /// The tree: `parents[i]` is the parent of vertex i + 1 (0 the ground).
    pub parents: Vec<usize>,
    /// Its Grundy value.
    pub grundy: u64,
    /// Every cut: the vertex whose edge to its parent is cut, the tree
    /// left and its Grundy value.
    pub cuts: Vec<(usize, Vec<usize>, u64)>,
}

/// Writes a tree as [`hackenbush_answer`] reads it (`-` for no edge).
pub fn tree_text(parents: &[usize]) -> String {
    if parents.is_empty() {
        "-".into()
    } else {
        parents
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Green Hackenbush on the rooted tree written `0,1,1` (the parent of
/// vertex 1, 2, 3, …; vertex 0 is the ground; `-` for no edge).
///
/// # Errors
/// [`ProbeError::BadRequest`] for a malformed list, a parent out of range,
/// a cycle, or more than [`MAX_HACKENBUSH_EDGES`] edges.
pub fn hackenbush_answer(tree: &str) -> ProbeResult<HackenbushAnswer> {
    use crate::solvers::impartial::hackenbush::RootedTree;
    let parents: Vec<usize> = if tree.trim() == "-" {
        Vec::new()
    } else {
        parse_list(tree, "tree")?
    };
    if parents.len() > MAX_HACKENBUSH_EDGES {
        return Err(ProbeError::bad(format!(
            "tree of {} edges: at most {MAX_HACKENBUSH_EDGES} here",
            parents.len()
        )));
    }
    let t = RootedTree::from_parents(&parents)
        .map_err(|e| ProbeError::bad(format!("tree `{tree}`: {e}")))?;
    let cuts = (1..=t.edges())
        .map(|v| {
            let left = t.cut(v);
            (v, left.parents().to_vec(), left.grundy())
        })
        .collect();
    Ok(HackenbushAnswer {
        grundy: t.grundy(),
        parents,
        cuts,
    })
}

impl HackenbushAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "tree": tree_text(&self.parents),
            "edges": self.parents.len(),
            "grundy": self.grundy,
            "p_position": self.grundy == 0,
            "moves": self.cuts.iter().map(|(v, left, g)| serde_json::json!({
                "cut": v, "parent": self.parents[v - 1], "after": tree_text(left),
                "grundy": g, "winning": *g == 0,
            })).collect::<Vec<_>>(),
        })
    }
}

impl fmt::Display for HackenbushAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Green Hackenbush tree {} ({} edges): Grundy value {} ({})",
            tree_text(&self.parents),
            self.parents.len(),
            self.grundy,
            pn_words(self.grundy)
        )?;
        for (v, left, g) in &self.cuts {
            writeln!(
                f,
                "  cut {v}-{} leaves {} of value {g}{}",
                self.parents[v - 1],
                tree_text(left),
                if *g == 0 { " (winning)" } else { "" }
            )?;
        }
        Ok(())
    }
}

/// The `hackenbush` probe (`/api/v1/hackenbush?tree=0,1,1`):
/// [`hackenbush_answer`], the JSON `gametables query hackenbush … --json`
/// prints.
#[derive(Debug, Default, Clone, Copy)]
pub struct HackenbushProbe;

impl Probe for HackenbushProbe {
    fn game(&self) -> &'static str {
        "hackenbush"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        let tree: String = required(params, "tree")?;
        Ok(hackenbush_answer(&tree)?.json())
    }

    /// The page's tree view.
    fn describe(&self) -> serde_json::Value {
        serde_json::json!({
            "view": "hackenbush", "title": "Green Hackenbush", "example": "0,1,1,0,4",
            "rules": "Green Hackenbush on a tree standing on the ground: a move cuts one edge, and everything no longer joined to the ground falls. Whoever cannot move loses. The value of a tree is found by the colon principle (Berlekamp, Conway and Guy, Winning Ways for your Mathematical Plays). A tree is written as the parent of vertex 1, 2, 3, … (0 is the ground).",
        })
    }

    fn keys(&self) -> &'static [&'static str] {
        &["tree"]
    }

    fn work_of(&self, _params: &Params) -> Work {
        Work::Lookup
    }
}
