//! Times the generic retrograde engine against Dodgem's own solver on one
//! board: `cargo run --release --example engine_dodgem -- N THREADS [engine|solver|both]`
//! (with `GT_LAYER_TIMES=1`, each layer's time on stderr).
//! The engine solves the layers as a `dodgem` run does: each layer with
//! more blue than red cars copied as the image of its partner
//! (`image_values`), the others solved (`solve_layer`).
use gametables::solvers::dodgem::{Board, DodgemLayers, Tables};
use gametables::solvers::engine::{LayeredGame, image_values, solve_layer, solve_order};

fn main() {
    let mut a = std::env::args().skip(1);
    let n: usize = a.next().map_or(5, |s| s.parse().unwrap());
    let threads: usize = a.next().map_or(2, |s| s.parse().unwrap());
    let which = a.next().unwrap_or_else(|| "both".into());
    let board = Board::new(n).unwrap();
    if which != "solver" {
        let g = DodgemLayers::new(board);
        let t = std::time::Instant::now();
        let mut done: Vec<Option<Vec<u8>>> = vec![None; g.layer_count()];
        for l in solve_order(&g) {
            let tl = std::time::Instant::now();
            let v = match g.image_layer(l) {
                Some(src) => image_values(&g, l, done[src].as_ref().unwrap(), threads),
                None => {
                    let below: Vec<(usize, &[u8])> = g
                        .child_layers(l)
                        .into_iter()
                        .map(|c| (c, done[c].as_deref().unwrap()))
                        .collect();
                    solve_layer(&g, l, &below, threads).unwrap()
                }
            };
            if std::env::var_os("GT_LAYER_TIMES").is_some() {
                eprintln!("layer {} {:?}", g.layer_name(l), tl.elapsed());
            }
            done[l] = Some(v);
        }
        println!("engine {:?} ({} layers)", t.elapsed(), done.len());
    }
    if which != "engine" {
        let t = std::time::Instant::now();
        let own = Tables::solve(board, threads);
        println!("solver {:?} {}", t.elapsed(), own.bytes(0, 0).is_some());
    }
}
