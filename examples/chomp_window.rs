//! Times `ChompBox::solve_window` on an m×n box cut into W windows (chained)
//! and prints wall time, staircases per second per core and the P-position
//! count; with `check`, compares every rank with `ChompBox::solve` (needs two
//! bitsets of the whole box); `ranks` or `prefixes` forces that scan
//! (`gametables::solvers::chomp::Scan`; default: the one the box's shape picks).
//! Arguments: m, n, threads, W [, check] [, ranks | prefixes]; W = 0
//! runs `ChompBox::solve` alone
//! (e.g. `cargo run --release --example chomp_window -- 16 16 2 1`).
//! Memory: the window being solved plus the P-positions of the earlier
//! windows as a list of ranks.
use gametables::solvers::chomp::{ChompBox, Scan};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize| -> u64 { args[i].parse().expect("a number") };
    let (m, n, threads, parts) = (num(0) as usize, num(1) as usize, num(2) as usize, num(3));
    let check = args.iter().skip(4).any(|a| a == "check");
    let scan = if args.iter().skip(4).any(|a| a == "ranks") {
        Scan::Ranks
    } else if args.iter().skip(4).any(|a| a == "prefixes") {
        Scan::Prefixes
    } else {
        Scan::Auto
    };
    let b = ChompBox::new(m, n).expect("box");
    if parts == 0 {
        // The whole-box solver alone, for comparison.
        let t1 = Instant::now();
        let whole = b.solve();
        println!(
            "{m}x{n} solve(): {:.3} s, {} P-positions",
            t1.elapsed().as_secs_f64(),
            whole.count()
        );
        return;
    }
    let mut earlier: Vec<u64> = Vec::new();
    let mut p_count = 0u64;
    let t0 = Instant::now();
    for k in 0..parts {
        let (start, end) = (b.len() * k / parts, b.len() * (k + 1) / parts);
        let tw = Instant::now();
        let w = b.solve_window_scan(start, end, &mut earlier.iter().copied(), threads, scan);
        let p: u64 = w.p_by_size.iter().sum();
        p_count += p;
        eprintln!(
            "window {k}: ranks {start}..{end}, {p} P-positions, {:.3} s",
            tw.elapsed().as_secs_f64()
        );
        if k + 1 < parts {
            earlier.extend(w.p_ranks());
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{m}x{n}: {} staircases, {p_count} P-positions, {threads} threads, {parts} windows: \
         {secs:.3} s wall, {:.2} ns per staircase per core",
        b.len(),
        secs * 1e9 * threads as f64 / b.len() as f64
    );
    if check {
        let t1 = Instant::now();
        let whole = b.solve();
        println!(
            "solve(): {:.3} s, {} P-positions",
            t1.elapsed().as_secs_f64(),
            whole.count()
        );
        assert_eq!(whole.count(), p_count, "P counts differ");
    }
}
