//! Three-row Chomp solver (issue 4 benchmark): the whole triangle
//! `r ≤ q ≤ 4000` as one tile (Brouwer's recurrence, ≈ 4.7 M live cells),
//! in 128 × 128 blocks on one thread and on two threads, and the same
//! triangle as a 2 × 2 grid of 2000-tiles chained like the pipeline's jobs
//! (without shards). The Q = 16,000 whole run is measured with the CLI
//! (BENCHMARKS.md, Three-row Chomp).

use criterion::{Criterion, criterion_group, criterion_main};
use gametables::solvers::three_row::{TileGeom, TileInput, TileRecord, solve_tile_blocked};
use std::hint::black_box;
use std::time::Duration;

const Q: u32 = 4000;

/// The triangle as tiles (0,0), (1,0), (1,1) of side `q_max / 2`, each
/// taking its inputs from the tiles before it.
fn chained(q_max: u32, threads: usize) -> u64 {
    let h = q_max / 2;
    let rec = TileRecord::default();
    let g = |q0, q1, r0, r1| TileGeom {
        q0,
        q1,
        r0,
        r1,
        q_max,
    };
    let a = solve_tile_blocked(
        &g(0, h, 0, h),
        TileInput::default(),
        &rec,
        128,
        128,
        threads,
    )
    .expect("tile (0, 0)");
    let b = solve_tile_blocked(
        &g(h, q_max + 1, 0, h),
        TileInput {
            rows: a.rows,
            cols: Vec::new(),
            diag: a.diag,
        },
        &rec,
        128,
        128,
        threads,
    )
    .expect("tile (1, 0)");
    let c = solve_tile_blocked(
        &g(h, q_max + 1, h, q_max + 1),
        TileInput {
            rows: Vec::new(),
            cols: b.cols,
            diag: b.diag,
        },
        &rec,
        128,
        128,
        threads,
    )
    .expect("tile (1, 1)");
    a.live_cells + b.live_cells + c.live_cells
}

fn three_row(c: &mut Criterion) {
    let mut g = c.benchmark_group("three-row");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
    for threads in [1usize, 2] {
        g.bench_function(
            format!("triangle Q={Q}, one tile, {threads} thread(s)"),
            |b| {
                b.iter(|| {
                    let out = solve_tile_blocked(
                        &TileGeom::triangle(black_box(Q)),
                        TileInput::default(),
                        &TileRecord::default(),
                        128,
                        128,
                        threads,
                    )
                    .expect("whole triangle");
                    black_box(out.live_cells)
                })
            },
        );
    }
    g.bench_function(format!("triangle Q={Q}, 3 chained tiles, 2 threads"), |b| {
        b.iter(|| black_box(chained(black_box(Q), 2)))
    });
    g.finish();
}

criterion_group!(benches, three_row);
criterion_main!(benches);
