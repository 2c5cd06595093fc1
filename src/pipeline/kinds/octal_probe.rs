//! Probe of octal games: the Grundy values `G(0..=n)` of a code, `G(n)` of
//! heap `n`, and the period proved by the Guy–Smith theorem (R. K. Guy and
//! C. A. B. Smith, "The G-values of various games", Proc. Cambridge Philos.
//! Soc. 52 (1956)), computed in memory.

use std::fmt;

use crate::games::impartial::octal::{OctalCode, OctalPeriod, find_period};
use crate::pipeline::probe::{Params, Probe, ProbeError, ProbeResult, param, required};

/// Values computed by a query to find a period (`G(0..2¹⁴)` at least).
pub const QUERY_PERIOD_SEARCH: usize = 1 << 14;

/// Largest `n` computed in memory.
pub const MAX_IN_MEMORY_N: usize = 1 << 22;

/// Default `n` of a query.
pub const DEFAULT_N: usize = 80;

/// An octal-game request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalRequest {
    /// The code, e.g. `0.77` (Kayles).
    pub code: String,
    /// Heap size: `G(0..=n)` are answered.
    pub n: usize,
}

impl OctalRequest {
    /// The request from the parameters `code` and `n` (default 80).
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] naming a missing or malformed parameter.
    pub fn from_params(params: &Params) -> ProbeResult<OctalRequest> {
        Ok(OctalRequest {
            code: param(params, "code")
                .ok_or_else(|| ProbeError::bad("missing parameter `code` (e.g. code=0.77)"))?
                .to_string(),
            n: match param(params, "n") {
                Some(_) => required(params, "n")?,
                None => DEFAULT_N,
            },
        })
    }
}

/// The answer of [`OctalProbe::answer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OctalAnswer {
    /// The code, normalised (e.g. `0.77`).
    pub code: String,
    /// The largest heap answered.
    pub n: usize,
    /// `G(0..=n)`.
    pub values: Vec<u32>,
    /// The least period and preperiod proved from the values computed.
    pub period: Option<OctalPeriod>,
    /// Values computed to look for the period (`G(0..searched)`).
    pub searched: usize,
    /// The largest number of tokens a move removes (the theorem's `t`).
    pub t: usize,
}

impl OctalAnswer {
    /// The JSON form.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "code": self.code,
            "n": self.n,
            "g": self.values[self.n],
            "values": self.values,
            "period": self.period.map(|p| serde_json::json!({
                "period": p.period,
                "preperiod": p.preperiod,
                "checked_through": p.checked_through,
            })),
            "searched": self.searched,
            "t": self.t,
        })
    }
}

impl fmt::Display for OctalAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "octal game {}: G(0..={}) = {}",
            self.code,
            self.n,
            values_text(&self.values)
        )?;
        match self.period {
            Some(p) => writeln!(
                f,
                "periodic with period {} from n = {} (last exceptional value at n = {}); \
                 proved by the Guy–Smith theorem: values agree for {} ≤ n ≤ {} (t = {})",
                p.period,
                p.preperiod,
                p.preperiod as i64 - 1,
                p.preperiod.max(1),
                p.checked_through,
                self.t
            ),
            None => writeln!(f, "no period proved within n ≤ {}", self.searched - 1),
        }
    }
}

/// Values separated by spaces.
pub fn values_text(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

/// Answers octal-game requests in memory (heaps up to [`MAX_IN_MEMORY_N`]).
#[derive(Debug, Default)]
pub struct OctalProbe;

impl OctalProbe {
    /// `G(0..=n)` and the proved period.
    ///
    /// # Errors
    /// [`ProbeError::BadRequest`] for a malformed code;
    /// [`ProbeError::NotSolved`] for `n` above [`MAX_IN_MEMORY_N`].
    pub fn answer(&self, req: &OctalRequest) -> ProbeResult<OctalAnswer> {
        let c = OctalCode::parse(&req.code).map_err(ProbeError::bad)?;
        let n = req.n;
        if n > MAX_IN_MEMORY_N {
            return Err(ProbeError::NotSolved(format!(
                "--n {n}: at most {MAX_IN_MEMORY_N} here; run an `octal` job for more"
            )));
        }
        let mut values = c.grundy_sequence(n.max(QUERY_PERIOD_SEARCH));
        let period = find_period(&values, c.max_removal());
        let searched = values.len();
        values.truncate(n + 1);
        Ok(OctalAnswer {
            code: c.to_string(),
            n,
            values,
            period,
            searched,
            t: c.max_removal(),
        })
    }
}

impl Probe for OctalProbe {
    fn game(&self) -> &'static str {
        "octal"
    }

    fn query(&self, params: &Params) -> ProbeResult<serde_json::Value> {
        Ok(self.answer(&OctalRequest::from_params(params)?)?.json())
    }

    fn describe(&self) -> serde_json::Value {
        serde_json::json!({ "in_memory_max_n": MAX_IN_MEMORY_N })
    }
}
