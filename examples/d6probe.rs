//! Solves the Dodgem layers (a, b) with a ≤ MAXA, b ≤ MAXB of an n×n board
//! in memory, bottom up, and prints each layer's wins, losses, draws,
//! deepest win and loss and solve time: a quick look at how deep a layer
//! goes before planning a run (e.g. `cargo run --release --example d6probe
//! -- 6 2 5 2` for the 6×6 layers up to (2, 5)). Arguments: n, MAXA, MAXB,
//! threads. Memory: every layer solved is kept (1 byte per position).
use gametables::solvers::dodgem::*;
use std::time::Instant;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    let (n, maxa, maxb, threads) = (args[0], args[1], args[2], args[3]);
    let board = Board::new(n).unwrap();
    let mut t = Tables::empty(board);
    for sum in 0..=maxa + maxb {
        for a in 0..=maxa.min(sum) {
            let b = sum - a;
            if b > maxb {
                continue;
            }
            let layer = Layer::new(board, a, b);
            let t0 = Instant::now();
            let v = if a <= b || t.bytes(b, a).is_none() {
                let bb = if a > 0 { t.bytes(a - 1, b) } else { None };
                let br = if b > 0 { t.bytes(a, b - 1) } else { None };
                solve_layer_both_classes(&layer, bb, br, threads)
            } else {
                let (src, v) = t.layer(b, a).unwrap();
                reflect_layer(src, v)
            };
            let el = t0.elapsed().as_secs_f64();
            let s = LayerStats::of(&layer, &v);
            println!(
                "({a},{b}) len {} win {} loss {} draw {} maxw {} maxl {} {:.2}s",
                layer.len(),
                s.wins,
                s.losses,
                s.draws,
                s.max_win_depth,
                s.max_loss_depth,
                el
            );
            t.insert(a, b, v);
        }
    }
}
