//! Criterion benchmarks of gametables: `cargo bench -p gametables-benches --bench NAME`.
