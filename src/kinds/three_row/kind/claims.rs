//! The published claims about three-row Chomp (Brouwer's table, OEIS
//! A029899–A029905), checked against a `three-row` run.

use super::*;

pub(super) const NIVASCH: &str =
    "Nivasch, periodic rows r ≤ 10,000 (as reported in the sen-ltd Chomp article)";
pub(super) const BROUWER_PATTERNS: &str =
    "Brouwer, The game of Chomp (pattern table); sen-ltd Chomp article";

/// The published terms of `A0NNNNN` in the literature file: `(offset, terms)`.
pub fn oeis_terms(text: &str, id: &str) -> Option<(usize, Vec<u64>)> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        if it.next()? != id {
            return None;
        }
        let offset = it.next()?.parse().ok()?;
        let terms = it
            .next()?
            .split(',')
            .map(|t| t.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        Some((offset, terms))
    })
}

/// The OEIS terms used by the claims (from `shared/data/literature/oeis-terms.txt`).
pub const OEIS_TERMS: &str = include_str!("../three_row_oeis.txt");

/// Every published three-row claim with our value.
pub fn three_row_claims(m: &Merged) -> Vec<Claim> {
    let mut c = Vec::new();
    let q = m.q_max;
    let not_one: Vec<usize> = (1..m.wins.len())
        .filter(|&p| m.wins[p].len() != 1)
        .collect();
    c.push(Claim::compare(
        "Brouwer, The game of Chomp (p ≤ 130,000); sen-ltd Chomp article (p ≤ 16,000)",
        &format!("3×p has exactly one winning move, every p ≤ {q}"),
        "all",
        if not_one.is_empty() {
            "all".to_string()
        } else {
            format!("not for p = {:?}", &not_one[..not_one.len().min(10)])
        },
    ));
    // Rows r ≤ 10,000 (Nivasch; the sen-ltd Chomp article at Q = 16,000).
    let decided = m.rows.len() > 10_000
        && m.rows[..=10_000]
            .iter()
            .all(|c| *c != RowClass::Undetermined);
    let expected = "dead 5858, linear 3939, periodic 141 / 7 / 54 / 2 with periods 2 / 3 / 4 / 9, no other period";
    if decided {
        let counts = class_counts(&m.rows[..=10_000]);
        let get = |n: &str, p: u32| counts.get(&(n.to_string(), p)).map_or(0, |e| e.0);
        let periods: Vec<u32> = counts
            .keys()
            .filter(|k| k.0 == "periodic")
            .map(|k| k.1)
            .collect();
        let others: Vec<u32> = periods
            .iter()
            .copied()
            .filter(|p| ![2, 3, 4, 9].contains(p))
            .collect();
        c.push(Claim::compare(
            NIVASCH,
            "rows r ≤ 10,000 by class",
            expected,
            format!(
                "dead {}, linear {}, periodic {} / {} / {} / {} with periods 2 / 3 / 4 / 9, {}",
                get("dead", 0),
                get("linear", 1),
                get("periodic", 2),
                get("periodic", 3),
                get("periodic", 4),
                get("periodic", 9),
                if others.is_empty() {
                    "no other period".to_string()
                } else {
                    format!("other periods {others:?}")
                }
            ),
        ));
    } else {
        c.push(Claim::not_covered(
            NIVASCH,
            "rows r ≤ 10,000 by class",
            expected,
            "q_max too small to decide every row ≤ 10,000",
        ));
    }
    let row = |r: usize| m.rows.get(r);
    let p6541 = "period 9, start 9250, pattern 1 1 1 -3 0 1 1 1 -3";
    match row(6541) {
        Some(cl @ RowClass::Periodic { .. }) if decided => {
            let line = row_line(6541, cl);
            let f: Vec<&str> = line.split(',').collect();
            c.push(Claim::compare(
                BROUWER_PATTERNS,
                "row r = 6541",
                p6541,
                format!("period {}, start {}, pattern {}", f[4], f[5], f[6]),
            ));
        }
        Some(cl) if decided => c.push(Claim::compare(
            BROUWER_PATTERNS,
            "row r = 6541",
            p6541,
            cl.name(),
        )),
        _ => c.push(Claim::not_covered(
            BROUWER_PATTERNS,
            "row r = 6541",
            p6541,
            "q_max too small",
        )),
    }
    // Row 120: period 2, d = const ± 1 (the sen-ltd Chomp article: "p = q + const + (−1)^q").
    match row(120) {
        Some(cl @ RowClass::Periodic { .. }) => c.push(Claim::compare(
            BROUWER,
            "row r = 120: period and pattern (up to phase)",
            "period 2, pattern ±1",
            format!(
                "period {}, pattern {}",
                cl.period().unwrap_or(0),
                if cl.pattern().is_some_and(|(_, p)| {
                    let mut s = p.clone();
                    s.sort();
                    s == vec![-1, 1]
                }) {
                    "±1"
                } else {
                    "other"
                }
            ),
        )),
        Some(RowClass::Undetermined) => c.push(Claim::not_covered(
            BROUWER,
            "row r = 120",
            "period 2, pattern ±1",
            "q_max too small to decide row 120",
        )),
        Some(cl) => c.push(Claim::compare(
            BROUWER,
            "row r = 120",
            "period 2, pattern ±1",
            cl.name(),
        )),
        None => c.push(Claim::not_covered(
            BROUWER,
            "row r = 120",
            "period 2, pattern ±1",
            "q_max < 120",
        )),
    }
    // Brouwer's linear rows r ≤ 130: 54 of them; his 40th says 95, the truth is 94.
    let linear: Vec<(usize, u32, u32)> = m
        .rows
        .iter()
        .enumerate()
        .take(131)
        .filter_map(|(r, cl)| match cl {
            RowClass::Linear { c, q0 } => Some((r, *c, *q0)),
            _ => None,
        })
        .collect();
    if m.rows.len() > 130 && m.rows[..=130].iter().all(|c| *c != RowClass::Undetermined) {
        c.push(Claim::compare(
            BROUWER,
            "linear rows (f = q + c from q₀) with r ≤ 130",
            54,
            linear.len(),
        ));
        let e40 = linear.get(39).map_or("none".to_string(), |&(r, cc, q0)| {
            format!("r = {r}, c = {cc}, q₀ = {q0}")
        });
        c.push(Claim {
            source: BROUWER.into(),
            claim: "40th linear row (r, c, q₀)".into(),
            expected: "r = 95, c = 56, q₀ = 133".into(),
            ours: e40.clone(),
            status: if e40 == "r = 94, c = 56, q₀ = 133" {
                ClaimStatus::KnownDiscrepancy
            } else {
                ClaimStatus::Mismatch
            },
        });
    } else {
        c.push(Claim::not_covered(
            BROUWER,
            "linear rows with r ≤ 130",
            54,
            "q_max too small",
        ));
    }
    // Rows 95 and 94 once this run decides them (row 94's linear run needs
    // 200 columns past q₀ = 133 before the classification may call it).
    let decided_row = |claim: &str,
                       expected: &str,
                       r: usize,
                       ours: &dyn Fn(&RowClass) -> String| match m.rows.get(r)
    {
        Some(cl) if *cl != RowClass::Undetermined => {
            Claim::compare(SEN_CHOMP, claim, expected, ours(cl))
        }
        _ => Claim::not_covered(
            SEN_CHOMP,
            claim,
            expected,
            &format!("q_max too small to decide row {r}"),
        ),
    };
    c.push(decided_row(
        "(135, 135, 95) is a P-position, so row 95 dies there (it is not a linear row)",
        "row 95 dies at 135",
        95,
        &|cl| match cl {
            RowClass::Dead { c } => format!("row 95 dies at {c}"),
            other => other.name().to_string(),
        },
    ));
    c.push(decided_row(
        "row 94: f(q, 94) = q + 56 exactly from q = 133 (not at 132)",
        "linear, c = 56, q₀ = 133",
        94,
        &|cl| match cl {
            RowClass::Linear { c, q0 } => format!("linear, c = {c}, q₀ = {q0}"),
            other => other.name().to_string(),
        },
    ));
    if q == 16_000 {
        let first = m.rows.iter().position(|c| *c == RowClass::Undetermined);
        c.push(Claim::compare(
            SEN_CHOMP,
            "at Q = 16,000 the rows from 11,172 up are not decided yet (first undetermined row)",
            11_172,
            first.map_or("none".to_string(), |r| r.to_string()),
        ));
    }
    // OEIS.
    let names = [
        (29899, "P-positions in the 3×n rectangle"),
        (29900, "3×f(n) wins by the bite (1, n): f(n) = f(n, n)"),
        (29901, "g(n): 3×g(n) wins by a bite in row 2"),
        (29902, "h(n): that bite's column"),
        (29903, "p(n): linear rows, f = q + p(n)"),
        (29904, "q(n): linear rows, from q(n)"),
        (29905, "r(n): the linear rows"),
    ];
    for (id, terms) in b_files(m) {
        let label = format!("A{id:06}");
        let what = names.iter().find(|n| n.0 == id).map_or("", |n| n.1);
        let Some((offset, published)) = oeis_terms(OEIS_TERMS, &label) else {
            continue;
        };
        let ours: Vec<u64> = terms.iter().skip(offset).copied().collect();
        let n = published.len().min(ours.len());
        let src = format!("OEIS {label} (https://oeis.org/{label})");
        if n < published.len() {
            c.push(Claim::not_covered(
                &src,
                &format!("{what}: the {} published terms", published.len()),
                published.len(),
                &format!("q_max decides only {n} terms"),
            ));
        } else {
            let mismatch = (0..n).find(|&i| published[i] != ours[i]);
            c.push(Claim::compare(
                &src,
                &format!("{what}: the {n} published terms"),
                "all equal",
                mismatch.map_or("all equal".to_string(), |i| {
                    format!(
                        "differs at n = {}: {} vs {}",
                        i + offset,
                        ours[i],
                        published[i]
                    )
                }),
            ));
        }
    }
    c
}
