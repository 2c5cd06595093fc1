//! Full check of `octal`: every `G(n)` for `n ≤ 2¹⁶` is the mex of its
//! options' values, the Guy–Smith periodicity proof is re-checked from the
//! stored values, and it carries the check to every later `G(n)`.
//!
//! **Rules** (Guy & Smith, "The G-values of various games", Proc. Cambridge
//! Philos. Soc. 52 (1956); *Winning Ways* ch. 4): the code `d₀.d₁d₂…d_t` has
//! one octal digit per number `k` of tokens removed from one heap; bit 1 of
//! `d_k`: the heap may vanish (it had exactly k tokens), bit 2: one
//! non-empty heap may remain, bit 4: the rest may be split into two
//! non-empty heaps (`d₀ = 4`: split without removing). A split into `a` and
//! `b` has value `G(a) ⊕ G(b)`; `G(n)` is the mex of the options' values.
//!
//! **Periodicity theorem** (same sources): if `G(n + p) = G(n)` for
//! `n₀ ≤ n < 2n₀ + p + t` (`t` the most tokens a move removes), then for
//! every `n ≥ n₀`. The check takes the period and preperiod that
//! `summary.toml` claims, verifies the hypothesis over
//! `max(n₀, 1) ≤ n ≤ 2·max(n₀, 1) + p + t` (one value more than needed)
//! inside the range already checked from the rules — so it holds for the
//! game's true values — and then compares every stored `G(n)`, `n > 2¹⁶`,
//! with `G(n − p)`. It also checks that the period and preperiod are the
//! least (no proper divisor of `p` is a period from `n₀`;
//! `G(n₀ − 1) ≠ G(n₀ − 1 + p)`).
//!
//! Without a proved period only `n ≤ 2¹⁶` is checked from the rules (each
//! `n` costs about `n/2` splits per split digit; the whole sequence would
//! cost far more than the solve).

use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::kinds::octal::{RangeMeta, Summary};

use super::{Checker, Coverage, Ctx, for_chunks, le_u32s};

/// The `octal` checker.
pub struct OctalChecker;

/// Largest `n` checked by the mex of its options.
pub const MEX_LIMIT: u64 = 1 << 16;

/// Parses an octal code `d₀.d₁d₂…` into its digits (`digits[k]` for
/// removing `k`), trailing zeros dropped.
///
/// # Errors
/// A message if the text is not a code (`d₀` must be 0 or 4).
pub fn parse_code(code: &str) -> std::result::Result<Vec<u8>, String> {
    let (head, tail) = code
        .trim()
        .split_once('.')
        .ok_or_else(|| format!("`{code}`: no point"))?;
    let mut digits = vec![match head {
        "" | "0" => 0,
        "4" => 4,
        _ => return Err(format!("`{code}`: d0 must be 0 or 4")),
    }];
    for c in tail.chars() {
        digits.push(
            c.to_digit(8)
                .ok_or_else(|| format!("`{code}`: `{c}` is not an octal digit"))? as u8,
        );
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    Ok(digits)
}

/// The values of the options of a heap of `n` by the rules: calls `f(v)`
/// for each option value (with repeats).
#[inline]
fn options(g: &[u32], digits: &[u8], n: usize, mut f: impl FnMut(u32)) {
    for (k, &d) in digits.iter().enumerate() {
        if d == 0 || k > n {
            continue;
        }
        let rest = n - k;
        if d & 1 != 0 && rest == 0 {
            f(0);
        }
        if d & 2 != 0 && rest >= 1 {
            f(g[rest]);
        }
        if d & 4 != 0 && rest >= 2 {
            for a in 1..=rest / 2 {
                f(g[a] ^ g[rest - a]);
            }
        }
    }
}

/// The mex of the options of a heap of `n`, values below 64 (a mask).
#[inline]
fn mex_small(g: &[u8], digits: &[u8], n: usize) -> u32 {
    let mut m = 0u64;
    for (k, &d) in digits.iter().enumerate() {
        if d == 0 || k > n {
            continue;
        }
        let rest = n - k;
        if d & 1 != 0 && rest == 0 {
            m |= 1;
        }
        if d & 2 != 0 && rest >= 1 {
            m |= 1 << g[rest];
        }
        if d & 4 != 0 && rest >= 2 {
            let (lo, hi) = (&g[1..=rest / 2], &g[rest - rest / 2..rest]);
            m |= lo
                .iter()
                .zip(hi.iter().rev())
                .fold(0u64, |acc, (&x, &y)| acc | 1u64 << ((x ^ y) & 63));
        }
    }
    m.trailing_ones()
}

impl Checker for OctalChecker {
    fn kind(&self) -> &'static str {
        "octal"
    }

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let run = cx.run();
        let code = run
            .params()
            .get("code")
            .and_then(|v| v.as_str())
            .ok_or_else(|| Error::job("octal", "no `code` parameter"))?
            .to_string();
        let digits = parse_code(&code).map_err(|e| Error::job("octal", e))?;
        let t = digits.len() - 1;
        // Read every range into one sequence, in plan order.
        let mut g: Vec<u32> = Vec::new();
        let mut owner: Vec<(u64, String)> = Vec::new();
        for job in run.jobs() {
            cx.job(&job.name);
            let start = job.params.get("start").and_then(|v| v.as_integer());
            let end = job.params.get("end").and_then(|v| v.as_integer());
            let (Some(start), Some(end)) = (start, end) else {
                cx.bad(&job.name, "parameters", "no start/end");
                return Ok(vec![]);
            };
            let (start, end) = (start as u64, end as u64);
            if start != g.len() as u64 {
                cx.bad(
                    &job.name,
                    "parameters",
                    format!("range starts at {start}, the ranges before end at {}", g.len()),
                );
                return Ok(vec![]);
            }
            let vals = cx.load(&job.name).and_then(|shard| {
                let meta: Option<RangeMeta> = shard
                    .section("meta")
                    .ok()
                    .and_then(|s| codec::decode(s).ok());
                let vals = shard.section("values").ok().and_then(le_u32s);
                match (meta, vals) {
                    (Some(meta), Some(vals)) if vals.len() as u64 == end - start => {
                        let max = vals.iter().copied().max().unwrap_or(0);
                        if (meta.start, meta.end, meta.max_value) != (start, end, max)
                            || parse_code(&meta.code).ok().as_ref() != Some(&digits)
                        {
                            cx.bad(&job.name, "meta", format!(
                                "says code {} range {}..{} largest {}; the job is {code} {start}..{end}, its values' largest {max}",
                                meta.code, meta.start, meta.end, meta.max_value
                            ));
                        }
                        Some(vals)
                    }
                    _ => {
                        cx.bad(&job.name, "values", format!("meta or values missing, or not {} u32 values", end - start));
                        None
                    }
                }
            });
            let Some(vals) = vals else {
                return Ok(vec![]);
            };
            owner.push((end, job.name.clone()));
            g.extend(vals);
        }
        let n_max = g.len() as u64 - 1;
        cx.set_total(n_max + 1);
        let limit = n_max.min(MEX_LIMIT);
        cx.job("mex of the options");
        check_mex(cx, &g, &digits, limit, &owner);
        let mut cov = vec![Coverage {
            what: format!("G(n), n ≤ {limit}: the mex of the options' values"),
            stored: n_max + 1,
            checked: limit + 1,
        }];
        if limit < n_max {
            cx.job("periodicity");
            let extra = check_periodic(cx, &g, t, limit, &owner)?;
            cov.push(Coverage {
                what: format!(
                    "G(n), {limit} < n ≤ {n_max}: equal to G(n − p) by the Guy–Smith theorem, its hypothesis checked on rule-checked values"
                ),
                stored: n_max - limit,
                checked: extra,
            });
        }
        Ok(cov)
    }
}

/// The job holding `G(n)`: `owner` lists each range's end and job, in order.
fn job_of(owner: &[(u64, String)], n: u64) -> &str {
    let i = owner.partition_point(|(end, _)| *end <= n);
    &owner[i.min(owner.len() - 1)].1
}

/// Checks `G(n)` for `n ≤ limit` against the mex of its options.
fn check_mex(cx: &Ctx, g: &[u32], digits: &[u8], limit: u64, owner: &[(u64, String)]) {
    let end = limit as usize + 1;
    let small = g[..end].iter().all(|&v| v < 63);
    let bytes: Vec<u8> = if small {
        g[..end].iter().map(|&v| v as u8).collect()
    } else {
        Vec::new()
    };
    let max = g[..end].iter().copied().max().unwrap_or(0) as usize;
    for_chunks(end as u64, cx.threads(), |range| {
        let mut seen = vec![0u64; max / 64 + 2];
        for n in range.clone() {
            let n = n as usize;
            let mex = if small {
                mex_small(&bytes, digits, n)
            } else {
                seen.fill(0);
                options(g, digits, n, |v| {
                    if (v as usize) <= max {
                        seen[v as usize / 64] |= 1 << (v % 64);
                    }
                });
                seen.iter()
                    .enumerate()
                    .find(|(_, w)| **w != !0)
                    .map(|(i, w)| i as u32 * 64 + w.trailing_ones())
                    .expect("a free value")
            };
            if mex != g[n] {
                cx.bad(
                    job_of(owner, n as u64),
                    format!("heap of {n}"),
                    format!("stored G({n}) = {}, but the mex of its options' values is {mex}", g[n]),
                );
            }
        }
        cx.advance(range.end - range.start);
    });
}

/// Re-checks the periodicity that `summary.toml` claims and extends the
/// check to `n > limit`; returns how many of those values it proved.
fn check_periodic(
    cx: &Ctx,
    g: &[u32],
    t: usize,
    limit: u64,
    owner: &[(u64, String)],
) -> Result<u64> {
    let text = cx.run().table("summary.toml")?;
    let claim: Summary = match toml::from_str(&String::from_utf8_lossy(&text)) {
        Ok(s) => s,
        Err(e) => {
            cx.bad("merge", "summary.toml", format!("unreadable: {}", e.message()));
            return Ok(0);
        }
    };
    if !claim.periodic {
        return Ok(0);
    }
    let (p, n0) = (claim.period as usize, claim.preperiod as usize);
    let lo = n0.max(1);
    let need = 2 * lo + p + t; // one more than the theorem needs
    if p == 0 || need + p > limit as usize {
        cx.bad(
            "merge",
            "summary.toml",
            format!(
                "claims period {p} from {n0}: the theorem needs G(n + p) = G(n) through n = {need}, beyond the {limit} values checked from the rules"
            ),
        );
        return Ok(0);
    }
    if let Some(n) = (lo..=need).find(|&n| g[n + p] != g[n]) {
        cx.bad(
            "merge",
            "summary.toml",
            format!(
                "claims period {p} from {n0}, but G({}) = {} ≠ G({n}) = {}",
                n + p,
                g[n + p],
                g[n]
            ),
        );
        return Ok(0);
    }
    if claim.checked_through as usize + 1 < need {
        cx.bad(
            "merge",
            "summary.toml",
            format!(
                "says the theorem's check covered n ≤ {}, but it needs n ≤ {}",
                claim.checked_through,
                need - 1
            ),
        );
    }
    // Least preperiod and least period.
    if n0 > 0 && g[n0 - 1] == g[n0 - 1 + p] {
        cx.bad(
            "merge",
            "summary.toml",
            format!("preperiod {n0} is not the least: G({}) = G({})", n0 - 1, n0 - 1 + p),
        );
    }
    for d in (1..p).filter(|d| p % d == 0) {
        if (n0..g.len() - d).all(|n| g[n + d] == g[n]) {
            cx.bad(
                "merge",
                "summary.toml",
                format!("period {p} is not the least: {d} is a period from {n0} too"),
            );
        }
    }
    // Every stored value beyond the rule-checked range follows the period.
    let mut proved = 0;
    for n in limit as usize + 1..g.len() {
        if g[n] == g[n - p] {
            proved += 1;
        } else {
            cx.bad(
                job_of(owner, n as u64),
                format!("heap of {n}"),
                format!(
                    "stored G({n}) = {}, but the proved period {p} gives G({}) = {}",
                    g[n],
                    n - p,
                    g[n - p]
                ),
            );
        }
    }
    cx.advance(g.len() as u64 - limit - 1);
    Ok(proved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grundy(digits: &[u8], n_max: usize) -> Vec<u32> {
        let mut g = Vec::new();
        for n in 0..=n_max {
            let mut seen = [false; 64];
            g.push(0);
            options(&g, digits, n, |v| seen[v as usize] = true);
            g[n] = seen.iter().position(|s| !s).unwrap() as u32;
        }
        g
    }

    /// Kayles 0.77 starts 0 1 2 3 1 4 3 2 1 4 2 6 (seed 001; OEIS A002186);
    /// the mask path agrees with the plain option list.
    #[test]
    fn kayles_by_the_rules() {
        let d = parse_code("0.77").unwrap();
        let g = grundy(&d, 300);
        assert_eq!(g[..12], [0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6]);
        let b: Vec<u8> = g.iter().map(|&v| v as u8).collect();
        for n in 0..=300 {
            assert_eq!(mex_small(&b, &d, n), g[n], "n = {n}");
        }
        assert_eq!(parse_code("4.7").unwrap(), vec![4, 7]);
        assert_eq!(parse_code(".070").unwrap(), vec![0, 0, 7]);
        assert!(parse_code("1.7").is_err());
    }
}
