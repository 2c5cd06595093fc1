//! Grundy sequences of octal games (issue 6 benchmark): Kayles (0.77) and
//! Dawson's Kayles (0.07) to n = 2^16 and 2^20, plus the periodicity proof.

use criterion::{Criterion, criterion_group, criterion_main};
use gametables::solvers::impartial::octal::{OctalCode, find_period};
use std::hint::black_box;
use std::time::Duration;

fn octal(c: &mut Criterion) {
    let mut g = c.benchmark_group("octal");
    g.sample_size(10).warm_up_time(Duration::from_secs(1));
    for code in ["0.77", "0.07"] {
        let oc = OctalCode::parse(code).unwrap();
        for log in [16u32, 20] {
            let n = 1usize << log;
            g.bench_function(format!("grundy {code} to 2^{log}"), |b| {
                b.iter(|| black_box(oc.grundy_sequence(black_box(n))))
            });
        }
        let v = oc.grundy_sequence(1 << 20);
        g.bench_function(format!("find_period {code} on 2^20 values"), |b| {
            b.iter(|| black_box(find_period(black_box(&v), oc.max_removal())))
        });
    }
    g.finish();
}

criterion_group!(benches, octal);
criterion_main!(benches);
