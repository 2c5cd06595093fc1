//! The published claims about three-row Chomp (Brouwer's table, OEIS
//! A029899–A029905), checked against a `three-row` run.

use super::*;
use crate::pipeline::claim_table::{Fact, claims_from_table};

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

/// The published three-row numbers (Brouwer's table, Nivasch's periodic
/// rows, the sen-ltd Chomp article, OEIS A029899–A029905), as data.
pub const TABLE: &str = include_str!("claims.toml");

/// The facts [`three_row_claims`] computes (a row's `fact` starts with one).
pub const FACTS: &[&str] = &[
    "one-winning-move",
    "row-classes",
    "row-pattern",
    "row-period",
    "linear-rows",
    "linear-row",
    "row-death",
    "row-linear",
    "first-undetermined",
    "oeis",
];

/// Every claim of [`TABLE`] with our value where this run decides it.
///
/// # Errors
/// If the table cannot be read (a test reads it on every build).
pub fn three_row_claims(m: &Merged) -> Result<Vec<Claim>> {
    let q = m.q_max;
    let decided_to =
        |r: usize| m.rows.len() > r && m.rows[..=r].iter().all(|c| *c != RowClass::Undetermined);
    let oeis = b_files(m);
    claims_from_table("src/games/three_row/kind/claims.toml", TABLE, |row| {
        let on = row.on.as_deref().unwrap_or("");
        let r: Option<usize> = on.parse().ok();
        let mut words = row.fact.split_whitespace();
        let name = words.next().filter(|w| FACTS.contains(w))?;
        Some(match name {
            "one-winning-move" => {
                let not_one: Vec<usize> = (1..m.wins.len())
                    .filter(|&p| m.wins[p].len() != 1)
                    .collect();
                Fact::Scoped(
                    format!("q_max = {q}"),
                    Box::new(Fact::Ours(if not_one.is_empty() {
                        "all".to_string()
                    } else {
                        format!("not for p = {:?}", &not_one[..not_one.len().min(10)])
                    })),
                )
            }
            "row-classes" | "row-pattern" | "linear-rows" | "linear-row" if !decided_to(r?) => {
                Fact::NotCovered(format!("q_max too small to decide every row ≤ {}", r?))
            }
            "row-classes" => Fact::Ours(row_classes(&m.rows[..=r?])),
            "row-pattern" => Fact::Ours(match &m.rows[r?] {
                cl @ RowClass::Periodic { .. } => {
                    let line = row_line(r? as u32, cl);
                    let f: Vec<&str> = line.split(',').collect();
                    format!("period {}, start {}, pattern {}", f[4], f[5], f[6])
                }
                cl => cl.name().to_string(),
            }),
            "row-period" => match m.rows.get(r?) {
                Some(cl @ RowClass::Periodic { .. }) => Fact::Ours(format!(
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
                )),
                Some(RowClass::Undetermined) | None => {
                    Fact::NotCovered(format!("q_max too small to decide row {}", r?))
                }
                Some(cl) => Fact::ours(cl.name()),
            },
            "linear-rows" | "linear-row" => {
                let linear: Vec<(usize, u32, u32)> = m
                    .rows
                    .iter()
                    .enumerate()
                    .take(r? + 1)
                    .filter_map(|(r, cl)| match cl {
                        RowClass::Linear { c, q0 } => Some((r, *c, *q0)),
                        _ => None,
                    })
                    .collect();
                if name == "linear-rows" {
                    Fact::ours(linear.len())
                } else {
                    let k: usize = words.next()?.parse().ok()?;
                    Fact::Ours(
                        linear
                            .get(k - 1)
                            .map_or("none".to_string(), |&(r, cc, q0)| {
                                format!("r = {r}, c = {cc}, q₀ = {q0}")
                            }),
                    )
                }
            }
            "row-death" | "row-linear" => match m.rows.get(r?) {
                Some(cl) if *cl != RowClass::Undetermined => Fact::Ours(match cl {
                    RowClass::Dead { c } if name == "row-death" => {
                        format!("row {} dies at {c}", r?)
                    }
                    RowClass::Linear { c, q0 } if name == "row-linear" => {
                        format!("linear, c = {c}, q₀ = {q0}")
                    }
                    other => other.name().to_string(),
                }),
                _ => Fact::NotCovered(format!("q_max too small to decide row {}", r?)),
            },
            "first-undetermined" if q as usize == r? => Fact::Ours(
                m.rows
                    .iter()
                    .position(|c| *c == RowClass::Undetermined)
                    .map_or("none".to_string(), |r| r.to_string()),
            ),
            "first-undetermined" => {
                Fact::NotCovered(format!("the claim is about a run with q_max = {}", r?))
            }
            "oeis" => {
                let id: u32 = on.strip_prefix('A')?.parse().ok()?;
                let (offset, published) = oeis_terms(OEIS_TERMS, on)?;
                let terms = &oeis.iter().find(|(i, _)| *i == id)?.1;
                let ours: Vec<u64> = terms.iter().skip(offset).copied().collect();
                let n = published.len().min(ours.len());
                if n < published.len() {
                    Fact::NotCovered(format!(
                        "q_max decides only {n} of the {} published terms",
                        published.len()
                    ))
                } else {
                    Fact::Scoped(
                        format!("{n} terms"),
                        Box::new(Fact::Ours(
                            (0..n).find(|&i| published[i] != ours[i]).map_or(
                                "all equal".to_string(),
                                |i| {
                                    format!(
                                        "differs at n = {}: {} vs {}",
                                        i + offset,
                                        ours[i],
                                        published[i]
                                    )
                                },
                            ),
                        )),
                    )
                }
            }
            _ => return None,
        })
    })
}

/// Rows by class, in the words of Nivasch's claim: the dead, linear and
/// periodic (periods 2, 3, 4, 9) rows, and any other period.
fn row_classes(rows: &[RowClass]) -> String {
    let counts = class_counts(rows);
    let get = |n: &str, p: u32| counts.get(&(n.to_string(), p)).map_or(0, |e| e.0);
    let others: Vec<u32> = counts
        .keys()
        .filter(|k| k.0 == "periodic" && ![2, 3, 4, 9].contains(&k.1))
        .map(|k| k.1)
        .collect();
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
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::claim_table::rows_naming;

    #[test]
    fn every_row_of_the_table_names_a_fact_the_code_knows_and_published_terms() {
        let rows = rows_naming("three_row/kind/claims.toml", TABLE, FACTS).unwrap();
        assert_eq!(rows.len(), 16);
        for r in rows.iter().filter(|r| r.fact == "oeis") {
            let id = r.on.as_deref().unwrap();
            assert!(oeis_terms(OEIS_TERMS, id).is_some(), "{id}");
        }
    }
}
