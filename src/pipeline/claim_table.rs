//! Published claims as data. A game keeps its published numbers in a
//! `claims.toml` beside its code: each `[[claim]]` row gives the source, the
//! claim in words, the published value and the name of the *fact* of a run it
//! is compared with. The game's code only computes facts by name
//! ([`claims_from_table`]'s `fact` argument); which numbers are published, by
//! whom, and which are known to be wrong is read from the table.
//!
//! ```toml
//! [sources]
//! ww = "Winning Ways (Dodgem), as cited in the sen-ltd Dodgem article"
//!
//! [[claim]]
//! source = "ww"
//! on = "3"                      # read by the game's facts (a board, a region)
//! claim = "3×3: the start is a first-player win, in plies"
//! expected = "win in 19"
//! fact = "start"
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::error::{Error, Result};
use super::kind::{Claim, ClaimStatus};

/// One `[[claim]]` row of a game's `claims.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimRow {
    /// A key of the table's `[sources]`.
    pub source: String,
    /// The claim in words, as `report.md` prints it.
    pub claim: String,
    /// The published value, as printed.
    pub expected: String,
    /// The name of the run's fact compared with `expected`.
    pub fact: String,
    /// What the fact is about (a board size, a region, a row, an OEIS id),
    /// read by the game's facts; not printed.
    #[serde(default)]
    pub on: Option<String>,
    /// `"known"`: the published value is known to be wrong; a different value
    /// of ours is a known discrepancy, not a mismatch.
    #[serde(default)]
    pub status: Option<KnownStatus>,
    /// With `status = "known"`: the value we know to be true. Only that value
    /// is a known discrepancy; any other is a mismatch. Without it, any value
    /// other than the published one is.
    #[serde(default)]
    pub truth: Option<String>,
    /// Words appended to our value when it differs from a known-wrong
    /// published one (e.g. who else found the same).
    #[serde(default)]
    pub note: Option<String>,
}

/// The only status a row may give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KnownStatus {
    /// The published value is known to be wrong.
    Known,
}

/// What a run says about one fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// Our value, printed as is and compared with the published one.
    Ours(String),
    /// The run does not cover the claim: why, in words.
    NotCovered(String),
    /// A fact with words appended to the claim in parentheses (how much of
    /// what the claim speaks of this run covers).
    Scoped(String, Box<Fact>),
}

impl Fact {
    /// Our value.
    pub fn ours(v: impl ToString) -> Fact {
        Fact::Ours(v.to_string())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    sources: BTreeMap<String, String>,
    claim: Vec<ClaimRow>,
}

/// Reads a game's claim table (`name` names it in errors, e.g.
/// `src/games/dodgem/claims.toml`).
///
/// # Errors
/// [`Error::Manifest`] if the text is not a claim table or a row names a
/// source missing from `[sources]`.
pub fn read_table(name: &str, text: &str) -> Result<(BTreeMap<String, String>, Vec<ClaimRow>)> {
    let bad = |message: String| Error::Manifest {
        path: name.into(),
        message,
    };
    let t: Table = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
    for (i, row) in t.claim.iter().enumerate() {
        if !t.sources.contains_key(&row.source) {
            return Err(bad(format!(
                "claim {} (`{}`) names source `{}`, not in [sources]",
                i + 1,
                row.claim,
                row.source
            )));
        }
    }
    Ok((t.sources, t.claim))
}

/// The rows of a claim table, after checking that each names a fact (its
/// `fact`'s first word) among `facts`, those the game's code computes: for
/// each game's test of its table.
///
/// # Errors
/// As [`read_table`], or the first row naming another fact.
pub fn rows_naming(name: &str, text: &str, facts: &[&str]) -> Result<Vec<ClaimRow>> {
    let (_, rows) = read_table(name, text)?;
    if let Some(r) = rows
        .iter()
        .find(|r| !facts.contains(&r.fact.split_whitespace().next().unwrap_or("")))
    {
        return Err(Error::Manifest {
            path: name.into(),
            message: format!(
                "claim `{}` names fact `{}`, which the code does not compute",
                r.claim, r.fact
            ),
        });
    }
    Ok(rows)
}

/// Every claim of the table, in its order, each compared with the fact
/// `fact(row)` computes (`None`: the game knows no such fact, reported as a
/// mismatch so it cannot pass unseen).
///
/// # Errors
/// As [`read_table`].
pub fn claims_from_table(
    name: &str,
    text: &str,
    mut fact: impl FnMut(&ClaimRow) -> Option<Fact>,
) -> Result<Vec<Claim>> {
    let (sources, rows) = read_table(name, text)?;
    Ok(rows
        .iter()
        .map(|row| {
            let source = &sources[&row.source];
            // Scopes, innermost last, are appended to the claim's words.
            let mut claim = row.claim.clone();
            let mut fact = fact(row);
            while let Some(Fact::Scoped(scope, inner)) = fact {
                claim = format!("{claim} ({scope})");
                fact = Some(*inner);
            }
            match fact {
                None => Claim {
                    source: source.clone(),
                    claim,
                    expected: row.expected.clone(),
                    ours: format!("no fact `{}` in this game's code", row.fact),
                    status: ClaimStatus::Mismatch,
                },
                Some(Fact::NotCovered(why)) => {
                    Claim::not_covered(source, &claim, &row.expected, &why)
                }
                Some(Fact::Scoped(..)) => unreachable!("unwrapped above"),
                Some(Fact::Ours(ours)) => {
                    let c = Claim::compare(source, &claim, &row.expected, &ours);
                    let true_value = row.truth.as_ref().is_none_or(|t| *t == ours);
                    match (row.status, c.status) {
                        (Some(KnownStatus::Known), ClaimStatus::Mismatch) if true_value => Claim {
                            ours: match &row.note {
                                Some(n) => format!("{ours} ({n})"),
                                None => ours,
                            },
                            status: ClaimStatus::KnownDiscrepancy,
                            ..c
                        },
                        _ => c,
                    }
                }
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = r#"
[sources]
a = "Author, Title (1999)"

[[claim]]
source = "a"
claim = "x is 3"
expected = "3"
fact = "x"

[[claim]]
source = "a"
claim = "y is 5 (known wrong: it is 4)"
expected = "5"
fact = "y"
status = "known"
truth = "4"
note = "the author's table has a typo"

[[claim]]
source = "a"
claim = "z"
expected = "1"
fact = "z"
on = "big"
"#;

    #[test]
    fn rows_are_compared_with_the_facts_and_known_errors_are_marked() {
        let c = claims_from_table("t.toml", T, |r| match r.fact.as_str() {
            "x" => Some(Fact::ours(4)),
            "y" => Some(Fact::ours(4)),
            "z" => Some(Fact::Scoped(
                "of 2".into(),
                Box::new(Fact::NotCovered(format!("needs {}", r.on.clone()?))),
            )),
            _ => None,
        })
        .unwrap();
        assert_eq!(c[0].status, ClaimStatus::Mismatch);
        assert_eq!(c[0].source, "Author, Title (1999)");
        assert_eq!(c[1].status, ClaimStatus::KnownDiscrepancy);
        assert_eq!(c[1].ours, "4 (the author's table has a typo)");
        assert_eq!(c[2].status, ClaimStatus::NotCovered);
        assert_eq!(c[2].ours, "needs big");
        assert_eq!(c[2].claim, "z (of 2)");
        // A known-wrong row that our value matches is a match; a value that
        // is neither the published one nor the known truth is a mismatch.
        let c = claims_from_table("t.toml", T, |_| Some(Fact::ours(5))).unwrap();
        assert_eq!(c[1].status, ClaimStatus::Match);
        let c = claims_from_table("t.toml", T, |_| Some(Fact::ours(6))).unwrap();
        assert_eq!(c[1].status, ClaimStatus::Mismatch);
        // A fact the game does not know is a mismatch, never a pass.
        let c = claims_from_table("t.toml", T, |_| None).unwrap();
        assert!(c.iter().all(|c| c.status == ClaimStatus::Mismatch));
    }

    #[test]
    fn a_row_naming_an_unknown_source_or_field_is_refused_with_the_table_name() {
        let bad = T.replace(
            "source = \"a\"\nclaim = \"z\"",
            "source = \"b\"\nclaim = \"z\"",
        );
        let e = read_table("t.toml", &bad).unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("source `b`"), "{e}");
        let bad = T.replace("fact = \"x\"", "fact = \"x\"\nexpect = \"3\"");
        let e = read_table("t.toml", &bad).unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("expect"), "{e}");
        assert_eq!(rows_naming("t.toml", T, &["x", "y", "z"]).unwrap().len(), 3);
        let e = rows_naming("t.toml", T, &["x", "y"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("fact `z`"), "{e}");
    }
}
