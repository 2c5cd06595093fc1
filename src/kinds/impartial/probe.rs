//! Probes of the impartial games without a job kind, computed in memory:
//! Nim (C. L. Bouton, "Nim, a game with a complete mathematical theory",
//! Annals of Mathematics 3 (1901)), normal and misère play, and subtraction
//! games Sub(S).

use std::fmt;

use crate::games::impartial::nim::{self, NimMove, Play};
use crate::games::impartial::subtraction::{Period, Subtraction};
use crate::kinds::impartial::octal_probe::values_text;

use crate::pipeline::probe::{ProbeError, ProbeResult, parse_list};
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
    let period = game.period(&values);
    let searched = values.len();
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
