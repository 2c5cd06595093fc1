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
//! every `n ≥ n₀`. The check finds, in the values already checked from the
//! rules (`n ≤ 2¹⁶`), the least `p` whose hypothesis holds over
//! `max(n₀, 1) ≤ n ≤ 2·max(n₀, 1) + p + t` (one value more than needed) —
//! so the period holds for the game's true values — and compares every
//! stored `G(n)`, `n > 2¹⁶`, with `G(n − p)`. It does not read the claim of
//! `summary.toml` for this; it then re-checks that claim: the least period
//! (the least divisor of `p` that is a period) and least preperiod, and that
//! the range the summary says the theorem covered is enough.
//!
//! Without a proved period only `n ≤ 2¹⁶` is checked from the rules (each
//! `n` costs about `n/2` splits per split digit; the whole sequence would
//! cost far more than the solve).

use super::layout::{RangeMeta, Summary};
use crate::pipeline::error::{Error, Result};

use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, for_chunks, le_u32s};

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
    crate::pipeline::fullcheck::checks_kind!("octal");

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
                    format!(
                        "range starts at {start}, the ranges before end at {}",
                        g.len()
                    ),
                );
                return Ok(vec![]);
            }
            let vals = cx.load(&job.name).and_then(|shard| {
                let meta: Option<RangeMeta> = shard.meta().ok();
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
                    format!(
                        "stored G({n}) = {}, but the mex of its options' values is {mex}",
                        g[n]
                    ),
                );
            }
        }
        cx.advance(range.end - range.start);
    });
}

/// A period proved by the Guy–Smith theorem from `G(0..=limit)`: the least
/// `p` (and then the least `n₀`) such that `G(n + p) = G(n)` for
/// `max(n₀, 1) ≤ n ≤ 2·max(n₀, 1) + p + t`, every value involved within
/// `0..=limit`, and the sequence `p`-periodic from `n₀` to `limit`.
fn prove_period(g: &[u32], t: usize, limit: usize) -> Option<(usize, usize)> {
    for p in 1..=limit / 2 {
        // Least n₀ with G(n + p) = G(n) for n₀ ≤ n ≤ limit − p.
        let mut n0 = limit - p + 1;
        while n0 > 0 && g[n0 - 1] == g[n0 - 1 + p] {
            n0 -= 1;
        }
        let lo = n0.max(1);
        if 2 * lo + p + t + p <= limit {
            return Some((p, n0));
        }
    }
    None
}

/// Proves a period from the values checked from the rules (`n ≤ limit`),
/// checks every later stored value against it, and compares the claim of
/// `summary.toml` with the least period and preperiod; returns how many
/// values beyond `limit` were proved.
fn check_periodic(
    cx: &Ctx,
    g: &[u32],
    t: usize,
    limit: u64,
    owner: &[(u64, String)],
) -> Result<u64> {
    let limit = limit as usize;
    let Some((p, n0)) = prove_period(g, t, limit) else {
        return Ok(0);
    };
    // The theorem holds for the game's values (those up to `limit` were
    // checked from the rules): G(n) = G(n − p) for every n ≥ n₀.
    let mut proved = 0;
    for n in limit + 1..g.len() {
        if g[n] == g[n - p] {
            proved += 1;
        } else {
            cx.bad(
                job_of(owner, n as u64),
                format!("heap of {n}"),
                format!(
                    "stored G({n}) = {}, but the period {p} from {n0} (Guy–Smith, proved from G(n ≤ {limit})) gives G({}) = {}",
                    g[n],
                    n - p,
                    g[n - p]
                ),
            );
        }
    }
    cx.advance((g.len() - limit - 1) as u64);
    // The least period divides p; the least preperiod follows.
    let least = (1..=p)
        .filter(|d| p % d == 0)
        .find(|&d| (n0..n0 + p).all(|n| g[n + d] == g[n]))
        .expect("p itself");
    let mut pre = n0;
    while pre > 0 && g[pre - 1] == g[pre - 1 + least] {
        pre -= 1;
    }
    let text = cx.run().table("summary.toml")?;
    match toml::from_str::<Summary>(&String::from_utf8_lossy(&text)) {
        Err(e) => cx.bad(
            "merge",
            "summary.toml",
            format!("unreadable: {}", e.message()),
        ),
        Ok(claim) if claim.periodic => {
            if (claim.period as usize, claim.preperiod as usize) != (least, pre) {
                cx.bad(
                    "merge",
                    "summary.toml",
                    format!(
                        "claims period {} from {}, but the values give the least period {least} from {pre}",
                        claim.period, claim.preperiod
                    ),
                );
            }
            let lo = pre.max(1);
            let need = 2 * lo + least + t - 1;
            let through = claim.checked_through as usize;
            if through < need || through + least >= g.len() {
                cx.bad(
                    "merge",
                    "summary.toml",
                    format!(
                        "says the theorem's check covered n ≤ {through}; it needs n ≤ {need} within the values"
                    ),
                );
            }
        }
        Ok(_) => {}
    }
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

    /// Kayles 0.77 starts 0 1 2 3 1 4 3 2 1 4 2 6 (Guy and Smith 1956; OEIS A002186);
    /// the mask path agrees with the plain option list.
    #[test]
    fn kayles_by_the_rules() {
        let d = parse_code("0.77").unwrap();
        let g = grundy(&d, 300);
        assert_eq!(g[..12], [0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6]);
        let b: Vec<u8> = g.iter().map(|&v| v as u8).collect();
        for (n, &v) in g.iter().enumerate() {
            assert_eq!(mex_small(&b, &d, n), v, "n = {n}");
        }
        assert_eq!(parse_code("4.7").unwrap(), vec![4, 7]);
        assert_eq!(parse_code(".070").unwrap(), vec![0, 0, 7]);
        assert!(parse_code("1.7").is_err());
    }
}
