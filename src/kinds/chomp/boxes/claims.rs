//! The published claims about Chomp rectangles and boxes, checked against a
//! `chomp-boxes` run.

use super::*;

/// The 14 row-count boxes of seed 000 (rows, cols).
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

pub(super) const SEED0: &str = crate::kinds::chomp::sources::SEN_CHOMP;
pub(super) const SEED3: &str = "day-72 Chomp article (10×10 box)";
pub(super) const GALE: &str = "Gale 1974, as cited in the sen-ltd Chomp article";
pub(super) const KITATAI: &str = crate::kinds::chomp::sources::KITATAI;

pub(super) fn bite(row: u32, col: u32) -> Bite {
    Bite { row, col }
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

/// The published Chomp claims of seeds 000 and 003 with our values.
pub(super) fn chomp_claims(run: &dyn RunAccess, rects: &RectangleMoves) -> Vec<Claim> {
    let mut c = Vec::new();
    // A claim counts only if the run solved every rectangle it speaks of.
    let gate = |claim: Claim, need: &dyn Fn(u32, u32) -> bool| {
        let missing = (1..=200u32)
            .flat_map(|r| (1..=200u32).map(move |k| (r, k)))
            .filter(|&(r, k)| (r, k) != (1, 1) && need(r, k) && !rects.contains_key(&(r, k)))
            .count();
        if missing == 0 {
            claim
        } else {
            Claim::not_covered(
                &claim.source,
                &claim.claim,
                claim.expected,
                &format!("not covered: the job file misses {missing} of the rectangles needed"),
            )
        }
    };
    let standard =
        |r: u32, k: u32| r <= k && STANDARD_BOXES.iter().any(|&(br, bc)| r <= br && k <= bc);
    // The seed's counts are about the rectangles of its 14 boxes: larger
    // boxes in the job file add rectangles those claims do not speak of.
    let upright: Vec<(&(u32, u32), &Vec<Bite>)> = rects
        .iter()
        .filter(|&(&(r, k), _)| standard(r, k))
        .collect();
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles with rows ≤ cols solved by the 14 boxes (1×1 has no move and is left out)",
            823,
            upright.len(),
        ),
        &standard,
    ));
    let mut multi: Vec<(u32, u32, &Vec<Bite>)> = upright
        .iter()
        .filter(|(_, m)| m.len() >= 2)
        .map(|&(&(r, k), m)| (r, k, m))
        .collect();
    multi.sort_by_key(|&(r, k, _)| (r * k, r));
    let fmt_multi = |list: &[(u32, u32, &Vec<Bite>)]| {
        list.iter()
            .map(|(r, k, m)| format!("{r}×{k} {}", pairs_text(m)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles (rows ≤ cols) with two winning moves, by area",
            "6×13 (3, 11),(4, 8); 8×10 (3, 8),(4, 5); 9×10 (6, 7),(8, 4); 10×14 (4, 12),(6, 8); \
         12×13 (9, 10),(10, 8); 8×22 (1, 8),(2, 6); 8×23 (6, 17),(7, 15)",
            fmt_multi(&multi),
        ),
        &standard,
    ));
    c.push(gate(
        Claim::compare(
            SEED0,
            "rectangles (rows ≤ cols) of the 14 boxes with three or more winning moves",
            0,
            upright.iter().filter(|(_, m)| m.len() >= 3).count(),
        ),
        &standard,
    ));
    let names = |f: &dyn Fn(u32, u32) -> bool| {
        multi
            .iter()
            .filter(|(r, k, _)| f(*r, *k))
            .map(|(r, k, _)| format!("{r}×{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    c.push(gate(
        Claim::compare(
            SEED0,
            "within 10×10, the rectangles with two winning moves",
            "8×10, 9×10",
            names(&|r, k| r <= 10 && k <= 10),
        ),
        &|r, k| r <= 10 && k <= 10,
    ));
    c.push(gate(
        Claim::compare(
            SEED0,
            "within 80 squares, the rectangles with two winning moves",
            "6×13, 8×10",
            names(&|r, k| r * k <= 80),
        ),
        &|r, k| r <= k && r * k <= 80,
    ));
    let mut pairs = 0;
    let mut mirrored = 0;
    // The published count is of the pairs inside 14×14 (C(14, 2) = 91): a
    // larger box solves more pairs, which the claim does not speak of.
    for (&(r, k), m) in rects {
        if r < k
            && k <= 14
            && let Some(t) = rects.get(&(k, r))
        {
            pairs += 1;
            let mut mm: Vec<Bite> = m.iter().map(|b| bite(b.col, b.row)).collect();
            mm.sort();
            mirrored += usize::from(mm == *t);
        }
    }
    c.push(gate(
        Claim::compare(
            SEED0,
            "m×n and n×m (m < n ≤ 14) both solved: pairs, and pairs whose winning moves mirror",
            "91 pairs, 91 mirror",
            format!("{pairs} pairs, {mirrored} mirror"),
        ),
        &|r, k| r <= 14 && k <= 14 && r != k,
    ));
    let sq: Vec<u32> = (2..=14).filter(|n| rects.contains_key(&(*n, *n))).collect();
    let sq_ok = sq
        .iter()
        .filter(|&&n| rects[&(n, n)] == vec![bite(1, 1)])
        .count();
    c.push(gate(
        Claim::compare(
            SEED0,
            "n×n (2 ≤ n ≤ 14): the only winning move is (1, 1)",
            "13 of 13",
            format!("{sq_ok} of {}", sq.len()),
        ),
        &|r, k| r == k && r <= 14,
    ));
    let two: Vec<u32> = (1..=200).filter(|n| rects.contains_key(&(2, *n))).collect();
    let two_ok = two
        .iter()
        .filter(|&&n| rects[&(2, n)] == vec![bite(1, n - 1)])
        .count();
    c.push(gate(
        Claim::compare(
            SEED0,
            "2×n (n ≤ 200): the only winning move is the top-right corner (1, n−1)",
            "200 of 200",
            format!("{two_ok} of {}", two.len()),
        ),
        &|r, k| r == 2 && k <= 200,
    ));
    let (three_ok, three_all) = count_of(rects, |r, k| r == 3 && k <= 200);
    c.push(gate(
        Claim::compare(
            "Brouwer, The game of Chomp (3×p has one winning move, p ≤ 130,000)",
            "3×n (n ≤ 200): exactly one winning move",
            "200 of 200",
            format!("{three_ok} of {three_all}"),
        ),
        &|r, k| r == 3 && k <= 200,
    ));
    for (r, k, m) in [(4u32, 5u32, bite(2, 2)), (4, 6, bite(1, 2))] {
        c.push(gate(
            Claim::compare(
                GALE,
                &format!("{r}×{k}: the winning moves"),
                m,
                rects
                    .get(&(r, k))
                    .map_or("not computed".into(), |v| pairs_text(v)),
            ),
            &|r, k| r == 4 && (k == 5 || k == 6),
        ));
    }
    let bars: Vec<(u32, u32)> = (1..=10)
        .flat_map(|r| (1..=10).map(move |k| (r, k)))
        .filter(|rc| rects.contains_key(rc))
        .collect();
    let corner: Vec<(u32, u32)> = bars
        .iter()
        .copied()
        .filter(|&(r, k)| rects[&(r, k)].contains(&bite(r - 1, k - 1)))
        .collect();
    c.push(gate(
        Claim::compare(
            SEED3,
            "bars up to 10×10 on which the far-corner bite wins; how many have a side of exactly 2",
            "19 of 99; 19 with a side of 2",
            format!(
                "{} of {}; {} with a side of 2",
                corner.len(),
                bars.len(),
                corner.iter().filter(|(r, k)| *r == 2 || *k == 2).count()
            ),
        ),
        &|r, k| r <= 10 && k <= 10,
    ));
    c.push(kitatai_claim(rects));
    c.extend(ten_by_ten_claims(run));
    c
}

/// The memoized search of every rectangle up to 20×20 (Kitatai,
/// chomp-memoized-search on GitHub, README): no rectangle up to 20×20 has
/// three or more winning first moves. Compared on the rectangles up to
/// 20×20 this run solved; not covered if it solved none.
pub(super) fn kitatai_claim(rects: &RectangleMoves) -> Claim {
    let within: Vec<usize> = rects
        .iter()
        .filter(|&(&(r, k), _)| r <= 20 && k <= 20)
        .map(|(_, m)| m.len())
        .collect();
    let claim = format!(
        "rectangles up to 20×20 with three or more winning first moves \
         (of the 399 rectangles up to 20×20, this run solved {})",
        within.len()
    );
    if within.is_empty() {
        return Claim::not_covered(
            KITATAI,
            &claim,
            0,
            "not covered: the job file solves no rectangle up to 20×20",
        );
    }
    Claim::compare(
        KITATAI,
        &claim,
        0,
        within.iter().filter(|&&k| k >= 3).count(),
    )
}

/// Claims about the whole 10×10 box, from any box with 10 rows and ≥ 10
/// columns (its first C(20,10) ranks are the 10×10 box).
pub(super) fn ten_by_ten_claims(run: &dyn RunAccess) -> Vec<Claim> {
    let expected = [
        ("shapes besides the empty one", "184755"),
        ("P-positions", "2612"),
        ("legal bites", "9053045"),
        ("winning bites", "312237"),
        ("winning bites per won position", "1.71"),
        ("L-shaped P-positions (all with equal arms)", "10 (10)"),
    ];
    let boxes = match run_boxes(run.jobs()) {
        Ok(b) => b,
        Err(e) => return vec![Claim::compare(SEED3, "10×10 box", "", e.to_string())],
    };
    let Some(source) = boxes.iter().find(|b| b.rows == 10 && b.cols >= 10) else {
        return expected
            .iter()
            .map(|(what, v)| {
                Claim::not_covered(
                    SEED3,
                    &format!("10×10 box: {what}"),
                    v,
                    "needs a box of exactly 10 rows (its first ranks are the 10×10 box)",
                )
            })
            .collect();
    };
    let b = ChompBox::new(10, 10).expect("10×10 box");
    let read = BoxBits::open(run, source).and_then(|(bits, _)| bits.prefix(b.len()));
    let ours: Vec<String> = match read {
        Err(e) => vec![e.to_string(); expected.len()],
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
    };
    expected
        .iter()
        .zip(ours)
        .map(|((what, v), o)| Claim::compare(SEED3, &format!("10×10 box: {what}"), v, o))
        .collect()
}

/// Whether all claims match or are not covered (used by tests).
pub fn claims_ok(claims: &[Claim]) -> bool {
    claims
        .iter()
        .all(|c| matches!(c.status, ClaimStatus::Match | ClaimStatus::NotCovered))
}
