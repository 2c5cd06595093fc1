//! Times the generic retrograde engine on Quixo:
//! `cargo run --release --example engine_quixo -- N THREADS`.
use gametables::games::quixo::QuixoLayers;
use gametables::games::retrograde::solve_all;

fn main() {
    let mut a = std::env::args().skip(1);
    let n: usize = a.next().map_or(4, |s| s.parse().unwrap());
    let threads: usize = a.next().map_or(2, |s| s.parse().unwrap());
    let g = QuixoLayers::new(n).unwrap();
    let t = std::time::Instant::now();
    let e = solve_all(&g, threads).unwrap();
    println!("engine {:?} ({} layers)", t.elapsed(), e.len());
}
