use gametables::pipeline::shard;
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let s = shard::decode(&bytes).unwrap();
    let v = s.section("values").unwrap().to_vec();
    let try_it = |name: &str, data: &[u8]| {
        let t = Instant::now();
        let c = zstd::bulk::compress(data, 3).unwrap();
        let tc = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..3 {
            let d = zstd::bulk::decompress(&c, data.len()).unwrap();
            assert_eq!(d.len(), data.len());
        }
        println!(
            "{name}: {} -> {} bytes, compress {:.2} s, decompress {:.3} s",
            data.len(),
            c.len(),
            tc,
            t.elapsed().as_secs_f64() / 3.0
        );
    };
    try_it("interleaved", &v);
    let mut split: Vec<u8> = v.iter().step_by(2).copied().collect();
    split.extend(v.iter().skip(1).step_by(2));
    try_it("sides split", &split);
    // depth-less classes
    let cls: Vec<u8> = v
        .iter()
        .map(|&b| {
            if b == 0 {
                0
            } else if b >= 136 {
                2
            } else {
                1
            }
        })
        .collect();
    try_it("classes only", &cls);
    // delta of split
    let mut prev = 0u8;
    let delta: Vec<u8> = split
        .iter()
        .map(|&b| {
            let d = b.wrapping_sub(prev);
            prev = b;
            d
        })
        .collect();
    try_it("split delta", &delta);
}
