//! The published claims about Chomp rectangles and boxes, checked against a
//! `chomp-boxes` run.

use super::*;

/// The 14 row-count boxes of the sen-ltd Chomp article (rows, cols).
pub const STANDARD_BOXES: [(u32, u32); 14] = [
    (1, 200),
    (2, 200),
    (3, 200),
    (4, 80),
    (5, 50),
    (6, 36),
    (7, 28),
    (8, 24),
    (9, 20),
    (10, 18),
    (11, 16),
    (12, 15),
    (13, 14),
    (14, 14),
];

/// The published Chomp rectangle and box numbers (the sen-ltd and day-72
/// Chomp articles, Gale 1974, Brouwer, Kitatai's 20×20 search), as data.
pub const TABLE: &str = include_str!("claims.toml");

/// The facts [`chomp_claims`] computes (a row's `fact` starts with one).
pub const FACTS: &[&str] = &[
    "rectangles",
    "two-winning-moves",
    "three-or-more",
    "two-winning-names",
    "mirror-pairs",
    "square-first-bite",
    "two-row-corner",
    "one-winning-move",
    "winning-moves",
    "far-corner-bars",
    "box-10",
];

pub(super) fn bite(row: u32, col: u32) -> Bite {
    Bite { row, col }
}

/// The rectangles (rows, columns) a claim's `on` speaks of (see the
/// header of `claims.toml`); `None` for a name the table may not use.
fn region(on: &str) -> Option<Box<dyn Fn(u32, u32) -> bool>> {
    let standard =
        |r: u32, k: u32| r <= k && STANDARD_BOXES.iter().any(|&(br, bc)| r <= br && k <= bc);
    let num = |t: &str| t.parse::<u32>().ok();
    let rc = |t: &str| -> Option<(u32, u32)> {
        let (r, c) = t.split_once('x')?;
        Some((num(r)?, num(c)?))
    };
    Some(if on == "standard" {
        Box::new(standard)
    } else if let Some(t) = on.strip_prefix("within-") {
        let (br, bc) = rc(t)?;
        Box::new(move |r, k| r <= br && k <= bc)
    } else if let Some(t) = on.strip_prefix("area-") {
        let n = num(t)?;
        Box::new(move |r, k| r <= k && r * k <= n)
    } else if let Some(t) = on.strip_prefix("pairs-") {
        let n = num(t)?;
        Box::new(move |r, k| r <= n && k <= n && r != k)
    } else if let Some(t) = on.strip_prefix("squares-") {
        let n = num(t)?;
        Box::new(move |r, k| r == k && r <= n)
    } else if let Some((r0, t)) = on.split_once("x1..") {
        let (r0, c) = (num(r0)?, num(t)?);
        Box::new(move |r, k| r == r0 && k <= c)
    } else {
        let (r0, c0) = rc(on)?;
        Box::new(move |r, k| (r, k) == (r0, c0))
    })
}

pub(super) fn count_of<F: Fn(u32, u32) -> bool>(rects: &RectangleMoves, f: F) -> (usize, usize) {
    let mut ok = 0;
    let mut all = 0;
    for (&(r, c), m) in rects {
        if f(r, c) {
            all += 1;
            ok += usize::from(m.len() == 1);
        }
    }
    (ok, all)
}

/// Every claim of [`TABLE`] with our value where this run solved every
/// rectangle it speaks of.
///
/// # Errors
/// If the table cannot be read (a test reads it on every build).
pub(super) fn chomp_claims(run: &dyn RunAccess, rects: &RectangleMoves) -> Result<Vec<Claim>> {
    // The rectangles (rows ≤ cols) of the 14 standard boxes: larger boxes
    // in the job file add rectangles those claims do not speak of.
    let upright: Vec<(&(u32, u32), &Vec<Bite>)> = rects
        .iter()
        .filter(|&(&(r, k), _)| r <= k && STANDARD_BOXES.iter().any(|&(br, bc)| r <= br && k <= bc))
        .collect();
    let mut multi: Vec<(u32, u32, &Vec<Bite>)> = upright
        .iter()
        .filter(|(_, m)| m.len() >= 2)
        .map(|&(&(r, k), m)| (r, k, m))
        .collect();
    multi.sort_by_key(|&(r, k, _)| (r * k, r));
    let mut ten: Option<Result<Vec<String>, String>> = None;
    claims_from_table("src/games/chomp/kind/boxes/claims.toml", TABLE, |row| {
        let on = row.on.as_deref()?;
        let mut words = row.fact.split_whitespace();
        let name = words.next().filter(|w| FACTS.contains(w))?;
        if on == "up-to-20" {
            return (name == "three-or-more").then(|| kitatai_fact(rects));
        }
        if on == "box-10" {
            let what = words.next()?;
            let i = [
                "positions",
                "p-positions",
                "legal-bites",
                "winning-bites",
                "winning-bites-per-win",
                "l-shapes",
            ]
            .iter()
            .position(|w| *w == what)?;
            return Some(match ten.get_or_insert_with(|| ten_by_ten_facts(run)) {
                Ok(v) => Fact::Ours(v[i].clone()),
                Err(why) => Fact::NotCovered(why.clone()),
            });
        }
        let need = region(on)?;
        // A claim counts only if the run solved every rectangle it speaks of.
        let missing = (1..=200u32)
            .flat_map(|r| (1..=200u32).map(move |k| (r, k)))
            .filter(|&(r, k)| (r, k) != (1, 1) && need(r, k) && !rects.contains_key(&(r, k)))
            .count();
        if missing > 0 {
            return Some(Fact::NotCovered(format!(
                "not covered: the job file misses {missing} of the rectangles needed"
            )));
        }
        Some(Fact::Ours(match name {
            "rectangles" => upright.len().to_string(),
            "two-winning-moves" => multi
                .iter()
                .map(|(r, k, m)| format!("{r}×{k} {}", pairs_text(m)))
                .collect::<Vec<_>>()
                .join("; "),
            "three-or-more" => upright
                .iter()
                .filter(|(_, m)| m.len() >= 3)
                .count()
                .to_string(),
            "two-winning-names" => multi
                .iter()
                .filter(|(r, k, _)| need(*r, *k))
                .map(|(r, k, _)| format!("{r}×{k}"))
                .collect::<Vec<_>>()
                .join(", "),
            "mirror-pairs" => {
                let (mut pairs, mut mirrored) = (0, 0);
                for (&(r, k), m) in rects {
                    if r < k
                        && need(r, k)
                        && let Some(t) = rects.get(&(k, r))
                    {
                        pairs += 1;
                        let mut mm: Vec<Bite> = m.iter().map(|b| bite(b.col, b.row)).collect();
                        mm.sort();
                        mirrored += usize::from(mm == *t);
                    }
                }
                format!("{pairs} pairs, {mirrored} mirror")
            }
            "square-first-bite" => {
                let sq: Vec<u32> = (2..=200)
                    .filter(|&n| need(n, n) && rects.contains_key(&(n, n)))
                    .collect();
                let ok = sq
                    .iter()
                    .filter(|&&n| rects[&(n, n)] == vec![bite(1, 1)])
                    .count();
                format!("{ok} of {}", sq.len())
            }
            "two-row-corner" => {
                let two: Vec<u32> = (1..=200)
                    .filter(|&n| need(2, n) && rects.contains_key(&(2, n)))
                    .collect();
                let ok = two
                    .iter()
                    .filter(|&&n| rects[&(2, n)] == vec![bite(1, n - 1)])
                    .count();
                format!("{ok} of {}", two.len())
            }
            "one-winning-move" => {
                let (ok, all) = count_of(rects, &need);
                format!("{ok} of {all}")
            }
            "winning-moves" => {
                let (r, k) = on.split_once('x')?;
                let (r, k) = (r.parse().ok()?, k.parse().ok()?);
                rects
                    .get(&(r, k))
                    .map_or("not computed".into(), |v| pairs_text(v))
            }
            "far-corner-bars" => {
                let bars: Vec<(u32, u32)> = (1..=200)
                    .flat_map(|r| (1..=200).map(move |k| (r, k)))
                    .filter(|&(r, k)| need(r, k) && rects.contains_key(&(r, k)))
                    .collect();
                let corner: Vec<(u32, u32)> = bars
                    .iter()
                    .copied()
                    .filter(|&(r, k)| rects[&(r, k)].contains(&bite(r - 1, k - 1)))
                    .collect();
                format!(
                    "{} of {}; {} with a side of 2",
                    corner.len(),
                    bars.len(),
                    corner.iter().filter(|(r, k)| *r == 2 || *k == 2).count()
                )
            }
            _ => return None,
        }))
    })
}

/// The memoized search of every rectangle up to 20×20 (Kitatai,
/// chomp-memoized-search on GitHub, README): no rectangle up to 20×20 has
/// three or more winning first moves. Compared on the rectangles up to
/// 20×20 this run solved; not covered if it solved none.
fn kitatai_fact(rects: &RectangleMoves) -> Fact {
    let within: Vec<usize> = rects
        .iter()
        .filter(|&(&(r, k), _)| r <= 20 && k <= 20)
        .map(|(_, m)| m.len())
        .collect();
    let scope = format!(
        "of the 399 rectangles up to 20×20, this run solved {}",
        within.len()
    );
    let fact = if within.is_empty() {
        Fact::NotCovered("not covered: the job file solves no rectangle up to 20×20".into())
    } else {
        Fact::ours(within.iter().filter(|&&k| k >= 3).count())
    };
    Fact::Scoped(scope, Box::new(fact))
}

/// The whole 10×10 box's counts, in the order of the table's `box-10`
/// facts, from any box with 10 rows and ≥ 10 columns (its first C(20, 10)
/// ranks are the 10×10 box); `Err(why)` when the run has none.
fn ten_by_ten_facts(run: &dyn RunAccess) -> Result<Vec<String>, String> {
    let boxes = match run_boxes(run.jobs()) {
        Ok(b) => b,
        Err(e) => return Ok(vec![e.to_string(); 6]),
    };
    let Some(source) = boxes.iter().find(|b| b.rows == 10 && b.cols >= 10) else {
        return Err("needs a box of exactly 10 rows (its first ranks are the 10×10 box)".into());
    };
    let b = ChompBox::new(10, 10).expect("10×10 box");
    let read = BoxBits::open(run, source).and_then(|(bits, _)| bits.prefix(b.len()));
    Ok(match read {
        Err(e) => vec![e.to_string(); 6],
        Ok(p10) => {
            let st = b.stats(&p10);
            let mut l_shapes = 0;
            let mut l_equal = 0;
            for a in 1..=10u32 {
                for h in 1..=10u32 {
                    let mut rows = vec![1u32; h as usize];
                    rows[0] = a;
                    let s = Staircase::new(&rows).expect("L-shape");
                    if p10.is_p(b.rank_of(&s).expect("in box")) {
                        l_shapes += 1;
                        l_equal += usize::from(a == h);
                    }
                }
            }
            vec![
                st.positions.to_string(),
                st.p_positions.to_string(),
                st.legal_bites.to_string(),
                st.winning_bites.to_string(),
                format!(
                    "{:.2}",
                    st.winning_bites as f64 / (st.positions - st.p_positions) as f64
                ),
                format!("{l_shapes} ({l_equal})"),
            ]
        }
    })
}

/// Whether all claims match or are not covered (used by tests).
pub fn claims_ok(claims: &[Claim]) -> bool {
    claims
        .iter()
        .all(|c| matches!(c.status, ClaimStatus::Match | ClaimStatus::NotCovered))
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::pipeline::claim_table::rows_naming;

    #[test]
    fn every_row_of_the_table_names_a_fact_and_a_region_the_code_knows() {
        let rows = rows_naming("chomp/kind/boxes/claims.toml", TABLE, FACTS).unwrap();
        assert_eq!(rows.len(), 20);
        for r in &rows {
            let on = r.on.as_deref().unwrap();
            assert!(
                ["box-10", "up-to-20"].contains(&on) || region(on).is_some(),
                "{}: region `{on}`",
                r.claim
            );
        }
        // The regions are what their names say.
        let has = |on: &str, r, k| region(on).unwrap()(r, k);
        assert!(has("within-10x10", 10, 10) && !has("within-10x10", 10, 11));
        assert!(has("2x1..200", 2, 200) && !has("2x1..200", 1, 5) && !has("2x1..200", 2, 201));
        assert!(has("4x5", 4, 5) && !has("4x5", 5, 4));
        assert!(has("area-80", 8, 10) && !has("area-80", 10, 8) && !has("area-80", 9, 9));
        assert!(has("pairs-14", 3, 14) && !has("pairs-14", 7, 7));
        assert!(has("squares-14", 14, 14) && !has("squares-14", 15, 15));
        assert!(has("standard", 1, 200) && has("standard", 14, 14) && !has("standard", 15, 15));
        assert!(region("8x").is_none() && region("bogus").is_none());
    }
}
