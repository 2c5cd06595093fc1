//! Solves one Quixo layer from the child layers' shards of a run, with or
//! without symmetry reduction (a cross-check of the reduction on layers too
//! large for the tests): `cargo run --release --example engine_quixo_layer
//! -- N LAYER RUN_DIR THREADS [plain]`, e.g. `5 12-11 runs/quixo-5-24 2 plain`.
use gametables::pipeline::shard::ShardFile;
use gametables::solvers::engine::{LayerStats, LayeredGame, solve_layer};
use gametables::solvers::quixo::QuixoLayers;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = a[0].parse().unwrap();
    let run = std::path::Path::new(&a[2]);
    let threads: usize = a[3].parse().unwrap();
    let plain = a.get(4).map(String::as_str) == Some("plain");
    let mut g = QuixoLayers::new(n).unwrap();
    if plain {
        g = g.without_symmetry_reduction();
    }
    let layer = (0..g.layer_count())
        .find(|&l| g.layer_name(l) == a[1])
        .expect("a layer name such as 12-11");
    // The shards of the child layers, found by the job names in the logs.
    let mut below = Vec::new();
    for c in g.child_layers(layer) {
        let job = format!("job=layer-{} ", g.layer_name(c));
        let log = std::fs::read_dir(run.join("logs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| std::fs::read_to_string(p).unwrap().contains(&job))
            .expect("the child layer's job log");
        let shard = log.with_extension("shard");
        let shard = run.join("shards").join(shard.file_name().unwrap());
        let values = ShardFile::open(&shard)
            .unwrap()
            .read_section("values")
            .unwrap();
        below.push((c, values));
    }
    let refs: Vec<(usize, &[u8])> = below.iter().map(|(c, v)| (*c, v.as_slice())).collect();
    let t = std::time::Instant::now();
    match solve_layer(&g, layer, &refs, threads) {
        Ok(v) => println!(
            "{:?} {:?}",
            t.elapsed(),
            LayerStats::of_layer(&v, g.layer_size(layer))
        ),
        Err(e) => println!("{:?} error: {e}", t.elapsed()),
    }
}
