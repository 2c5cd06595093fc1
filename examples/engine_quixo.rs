//! Times the generic retrograde engine on Quixo:
//! `cargo run --release --example engine_quixo -- N THREADS [plain]`
//! (`plain`: without symmetry reduction).
use gametables::solvers::engine::solve_all;
use gametables::solvers::quixo::QuixoLayers;

fn main() {
    let mut a = std::env::args().skip(1);
    let n: usize = a.next().map_or(4, |s| s.parse().unwrap());
    let threads: usize = a.next().map_or(2, |s| s.parse().unwrap());
    let plain = a.next().as_deref() == Some("plain");
    let mut g = QuixoLayers::new(n).unwrap();
    if plain {
        g = g.without_symmetry_reduction();
    }
    let t = std::time::Instant::now();
    let e = solve_all(&g, threads).unwrap();
    println!(
        "engine{} {:?} ({} layers)",
        if plain { " (plain)" } else { "" },
        t.elapsed(),
        e.len()
    );
}
