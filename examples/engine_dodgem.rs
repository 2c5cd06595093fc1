//! Times the generic retrograde engine against Dodgem's own solver on one
//! board: `cargo run --release --example engine_dodgem -- N THREADS`.
use gametables::games::dodgem::{Board, DodgemLayers, Tables};
use gametables::games::engine::solve_all;

fn main() {
    let mut a = std::env::args().skip(1);
    let n: usize = a.next().map_or(5, |s| s.parse().unwrap());
    let threads: usize = a.next().map_or(2, |s| s.parse().unwrap());
    let which = a.next().unwrap_or_else(|| "both".into());
    let board = Board::new(n).unwrap();
    if which != "solver" {
        let g = DodgemLayers::new(board);
        let t = std::time::Instant::now();
        let e = solve_all(&g, threads).unwrap();
        println!("engine {:?} ({} layers)", t.elapsed(), e.len());
    }
    if which != "engine" {
        let t = std::time::Instant::now();
        let own = Tables::solve(board, threads);
        println!("solver {:?} {}", t.elapsed(), own.bytes(0, 0).is_some());
    }
}
