//! Chomp box solver benchmarks: predecessor marking vs the plain ascending
//! pass (10×10, 12×12), and the 14×14 box (target ≤ 5 s; the sen-ltd Chomp
//! article's solver in Node: ~2 min).

use criterion::{Criterion, criterion_group, criterion_main};
use gametables::solvers::chomp::ChompBox;
use std::hint::black_box;

fn solvers(c: &mut Criterion) {
    let mut g = c.benchmark_group("chomp-box");
    g.sample_size(10);
    for (m, n) in [(10usize, 10usize), (12, 12)] {
        let b = ChompBox::new(m, n).unwrap();
        g.bench_function(format!("{m}x{n}/marking"), |bch| {
            bch.iter(|| black_box(b.solve()))
        });
        g.bench_function(format!("{m}x{n}/ascending"), |bch| {
            bch.iter(|| black_box(b.solve_ascending()))
        });
    }
    let b = ChompBox::new(14, 14).unwrap();
    g.bench_function("14x14/marking", |bch| bch.iter(|| black_box(b.solve())));
    g.finish();
}

criterion_group!(benches, solvers);
criterion_main!(benches);
