//! Windowed box solver (`ChompBox::solve_window`) against the whole-box
//! solver (`ChompBox::solve`): any split, any thread count, same P-positions.

use gametables::solvers::chomp::{BoxWindow, ChompBox};

/// Solves `b` in the windows between consecutive `bounds` (which start at 0
/// and end at `b.len()`), each given the P-positions of the windows before.
fn chained(b: &ChompBox, bounds: &[u64], threads: usize) -> Vec<BoxWindow> {
    let mut out: Vec<BoxWindow> = Vec::new();
    for w in bounds.windows(2) {
        let win = {
            let mut earlier = out.iter().flat_map(|w| w.p_ranks());
            b.solve_window(w[0], w[1], &mut earlier, threads)
        };
        out.push(win);
    }
    out
}

/// `parts` windows of about equal length.
fn even_bounds(len: u64, parts: u64) -> Vec<u64> {
    (0..=parts).map(|k| len * k / parts).collect()
}

fn assert_equals_solve(b: &ChompBox, wins: &[BoxWindow], what: &str) {
    let p = b.solve();
    let mut next = 0;
    for w in wins {
        assert_eq!(w.start, next, "{what}: windows chained");
        next = w.end;
        for x in w.start..w.end {
            if w.is_p(x) != p.is_p(x) {
                panic!("{what}: rank {x} differs (window says {})", w.is_p(x));
            }
        }
    }
    assert_eq!(next, b.len());
    let counted: u64 = wins.iter().flat_map(|w| w.p_by_size.iter()).sum();
    assert_eq!(counted, p.count(), "{what}: P count by size");
    let positions: u64 = wins.iter().flat_map(|w| w.positions_by_size.iter()).sum();
    assert_eq!(positions, b.len() - 1, "{what}: C(m+n, m) − 1 staircases");
}

#[test]
fn box_10x10_one_window_any_threads() {
    let b = ChompBox::new(10, 10).unwrap();
    for threads in 1..=3 {
        let w = chained(&b, &[0, b.len()], threads);
        assert_equals_solve(&b, &w, &format!("10x10 threads {threads}"));
        // The 10×10 box has 2,612 P-positions (the day-72 Chomp article of the
        // “game from zero” series; also the Grundy zeros of that box).
        assert_eq!(w[0].p_by_size.iter().sum::<u64>(), 2_612);
    }
}

#[test]
fn box_12x12_split_into_1_2_3_7_windows() {
    let b = ChompBox::new(12, 12).unwrap();
    assert_eq!(b.len(), 2_704_156);
    let mut first: Option<Vec<u64>> = None;
    for (parts, threads) in [(1, 2), (2, 1), (3, 3), (7, 2)] {
        let wins = chained(&b, &even_bounds(b.len(), parts), threads);
        assert_equals_solve(&b, &wins, &format!("12x12 in {parts} windows"));
        let mut by_size = vec![0u64; 145];
        for w in &wins {
            for (s, c) in w.p_by_size.iter().enumerate() {
                by_size[s] += c;
            }
        }
        match &first {
            None => first = Some(by_size),
            Some(f) => assert_eq!(f, &by_size),
        }
    }
}

#[test]
fn windows_not_on_word_boundaries() {
    let b = ChompBox::new(8, 9).unwrap();
    let bounds = [0, 1, 2, 63, 65, 1000, 1001, 5000, 24_309, b.len()];
    let wins = chained(&b, &bounds, 3);
    assert_equals_solve(&b, &wins, "8x9 odd cuts");
}
