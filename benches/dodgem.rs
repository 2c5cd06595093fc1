//! Dodgem: solving 4×4 completely (all 16 layers, 555,986 positions) and
//! the 3×3 board, one thread and two. Target (issue #3): 4×4 ≤ 0.1 s.

use criterion::{Criterion, criterion_group, criterion_main};
use gametables::solvers::dodgem::{Board, Tables};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("dodgem");
    g.sample_size(20);
    for n in [3, 4] {
        let board = Board::new(n).unwrap();
        for threads in [1, 2] {
            g.bench_function(format!("solve {n}x{n}, {threads} thread(s)"), |b| {
                b.iter(|| Tables::solve(board, threads))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
