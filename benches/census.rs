//! Chomp census by number of squares and Grundy values: in-process solver
//! times (the pipeline runs are measured with `gametables run`, see
//! BENCHMARKS.md).

use criterion::{Criterion, criterion_group, criterion_main};
use gametables::solvers::chomp::ChompBox;
use gametables::solvers::chomp::census::census;
use gametables::solvers::chomp::grundy::grundy_values;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("chomp-census");
    g.sample_size(10);
    for n in [40u32, 50, 60] {
        g.bench_function(format!("census n<={n}"), |b| b.iter(|| census(n)));
    }
    g.finish();
    let mut g = c.benchmark_group("chomp-grundy");
    g.sample_size(10);
    let ten = ChompBox::new(10, 10).expect("10x10");
    g.bench_function("grundy 10x10", |b| b.iter(|| grundy_values(&ten)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
