//! The `chomp-boxes` report's section on winning first moves: how many
//! rectangles of the run have exactly 1, 2, 3 and 4 or more winning first
//! moves, the first of each count (by area, then rows), and every rectangle
//! with three or more. Ekhad and Zeilberger ("All the winning bites for a by
//! b Chomp for a and b up to 14, and two computational challenges", 2018)
//! asked for a rectangle with at least three.
//!
//! A comparison of the run with itself, not a claim: the figures are read
//! from `rectangles.csv` (every rectangle of every box, both orientations).

use std::fmt::Write as _;

use std::collections::BTreeMap;

use crate::games::chomp::sources::EKHAD_ZEILBERGER as EZ;
use crate::solvers::chomp::Bite;

/// The winning first moves of each rectangle (rows, columns), as
/// `rectangles.csv` lists them (also `boxes::RectangleMoves`).
pub type RectangleMoves = BTreeMap<(u32, u32), Vec<Bite>>;

/// The classes of the section: exactly 1, 2, 3, and 4 or more winning moves.
pub const CLASSES: [(usize, &str); 4] = [(1, "1"), (2, "2"), (3, "3"), (4, "≥ 4")];

/// Rectangles per class (`CLASSES` order), counted over `rects` (both
/// orientations) and over those with rows ≤ cols, and the first rectangle
/// of each class by area, then rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveCounts {
    /// Rectangles with exactly 1, 2, 3 and ≥ 4 winning moves.
    pub all: [u64; 4],
    /// The same among rectangles with rows ≤ cols.
    pub upper: [u64; 4],
    /// The first rectangle (rows, cols) of each class by area, then rows.
    pub first: [Option<(u32, u32)>; 4],
    /// Rectangles (rows ≤ cols) with 3 or more winning moves, by area then rows.
    pub three_or_more: Vec<(u32, u32, usize)>,
    /// Rectangles without a winning move (strategy stealing says none).
    pub none: u64,
}

/// Counts the winning moves of every rectangle in `rects`.
pub fn move_counts(rects: &RectangleMoves) -> MoveCounts {
    let mut c = MoveCounts::default();
    let mut order: Vec<(u64, u32, u32, usize)> = rects
        .iter()
        .map(|(&(r, k), m)| (u64::from(r) * u64::from(k), r, k, m.len()))
        .collect();
    order.sort_unstable();
    for (_, r, k, len) in order {
        if len == 0 {
            c.none += 1;
            continue;
        }
        let class = len.min(4) - 1;
        c.all[class] += 1;
        if r <= k {
            c.upper[class] += 1;
            if len >= 3 {
                c.three_or_more.push((r, k, len));
            }
        }
        if c.first[class].is_none() {
            c.first[class] = Some((r, k));
        }
    }
    c
}

/// The markdown section for `report.md`.
pub fn report_section(rects: &RectangleMoves) -> String {
    let c = move_counts(rects);
    let mut s = String::new();
    let _ = writeln!(s, "## Winning first moves of every rectangle\n");
    let _ = writeln!(
        s,
        "From `rectangles.csv` ({} rectangles, 1×1 left out; `multi-winning.csv` lists those with \
         two or more). {EZ} asked for a rectangle with at least three winning first moves.\n",
        rects.len()
    );
    let _ = writeln!(
        s,
        "| winning first moves | rectangles | with rows ≤ cols | first (by area, then rows) |"
    );
    let _ = writeln!(s, "|---|---|---|---|");
    for (i, (_, name)) in CLASSES.iter().enumerate() {
        let first = c.first[i].map_or_else(|| "none".to_string(), |(r, k)| format!("{r}×{k}"));
        let _ = writeln!(s, "| {name} | {} | {} | {first} |", c.all[i], c.upper[i]);
    }
    if c.none > 0 {
        let _ = writeln!(s, "\n**{} rectangles have no winning move.**", c.none);
    }
    if c.three_or_more.is_empty() {
        let _ = writeln!(
            s,
            "\nNo rectangle of the run has three or more winning first moves."
        );
    } else {
        let list: Vec<String> = c
            .three_or_more
            .iter()
            .map(|(r, k, n)| format!("{r}×{k} ({n})"))
            .collect();
        let _ = writeln!(
            s,
            "\nRectangles (rows ≤ cols) with three or more winning first moves: {}.",
            list.join(", ")
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solvers::chomp::Bite;

    fn moves(n: usize) -> Vec<Bite> {
        (0..n as u32).map(|c| Bite { row: 1, col: c }).collect()
    }

    #[test]
    fn classes_and_firsts_by_area_then_rows() {
        let mut r = RectangleMoves::new();
        r.insert((1, 2), moves(1));
        r.insert((2, 1), moves(1));
        r.insert((3, 4), moves(2));
        r.insert((4, 3), moves(2));
        r.insert((2, 6), moves(2)); // area 12, fewer rows than 3×4
        r.insert((5, 9), moves(3));
        r.insert((9, 5), moves(3));
        r.insert((6, 8), moves(5));
        let c = move_counts(&r);
        assert_eq!(c.all, [2, 3, 2, 1]);
        assert_eq!(c.upper, [1, 2, 1, 1]);
        assert_eq!(
            c.first,
            [Some((1, 2)), Some((2, 6)), Some((5, 9)), Some((6, 8))]
        );
        assert_eq!(c.three_or_more, vec![(5, 9, 3), (6, 8, 5)]);
        let text = report_section(&r);
        assert!(text.contains("| 2 | 3 | 2 | 2×6 |"), "{text}");
        assert!(text.contains("| ≥ 4 | 1 | 1 | 6×8 |"), "{text}");
        assert!(text.contains("5×9 (3), 6×8 (5)"), "{text}");
    }

    #[test]
    fn no_rectangle_with_three_says_so() {
        let mut r = RectangleMoves::new();
        r.insert((2, 2), moves(1));
        let text = report_section(&r);
        assert!(text.contains("| 3 | 0 | 0 | none |"), "{text}");
        assert!(
            text.contains("No rectangle of the run has three or more"),
            "{text}"
        );
    }
}
