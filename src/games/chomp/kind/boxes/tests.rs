use super::*;
use crate::pipeline::shard::{self, Section, ShardFile, ShardHeader, craft};

fn bit(x: u64) -> bool {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 == 0
}

fn header(i: usize) -> ShardHeader {
    ShardHeader {
        kind: "chomp-boxes".into(),
        job_name: format!("part-{i}"),
        job_id: "ab".repeat(32),
        sections: vec![],
    }
}

/// A shard of ranks start..end with `bit`'s P-bits; `damage` lists
/// blocks replaced by bytes that are no zstd frame (checksums right).
fn part(dir: &Path, i: usize, start: u64, end: u64, damage: &[usize]) -> PartFile {
    let words = (end - start).div_ceil(64);
    let mut bytes = vec![0u8; (words * 8) as usize];
    for x in start..end {
        if bit(x) {
            let o = x - start;
            bytes[(o / 8) as usize] |= 1 << (o % 8);
        }
    }
    let mut a = shard::encode(
        &header(i),
        &[
            Section::new("meta", vec![1]),
            Section::new("p-positions", bytes),
        ],
    )
    .unwrap();
    if !damage.is_empty() {
        let mut p = craft::split(&a);
        for &b in damage {
            // block 0 is `meta`
            p.blocks[1 + b] = b"not a zstd frame".to_vec();
        }
        a = craft::assemble(&p);
    }
    let path = dir.join(format!("p{i}.shard"));
    std::fs::write(&path, a).unwrap();
    PartFile {
        start,
        end,
        file: ShardFile::open(&path).unwrap(),
    }
}

fn parts(dir: &Path, bounds: &[u64], damage: &[(usize, usize)]) -> EarlierParts {
    EarlierParts {
        name: "box-test".into(),
        parts: bounds
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let d: Vec<usize> = damage
                    .iter()
                    .filter(|(p, _)| *p == i)
                    .map(|(_, b)| *b)
                    .collect();
                part(dir, i, w[0], w[1], &d)
            })
            .collect(),
        cache: std::cell::RefCell::new(HashMap::new()),
    }
}

const M: u64 = 1 << 20; // ranks per block

/// The answers of `are_p` are those of `is_p` and of the bits written,
/// across parts of very different lengths and at every part and block
/// boundary; a rank in no part is an error.
#[test]
fn are_p_matches_is_p_over_several_parts() {
    let t = tempfile::tempdir().unwrap();
    let bounds = [0, 2_500_032, 2_500_096, 2_500_160, 4_200_000];
    let e = parts(t.path(), &bounds, &[]);
    let last = *bounds.last().unwrap() - 1;
    let mut sets: Vec<Vec<u64>> = vec![vec![], vec![0], vec![last], vec![0, last]];
    // Boundaries of parts and blocks, ±1.
    let mut edges: Vec<u64> = Vec::new();
    for &s in &bounds {
        for k in 0..4u64 {
            edges.push(s + k * M);
        }
    }
    let mut e2: Vec<u64> = edges
        .iter()
        .flat_map(|&x| [x.saturating_sub(1), x, x + 1])
        .filter(|&x| x <= last)
        .collect();
    e2.sort_unstable();
    e2.dedup();
    sets.push(e2);
    sets.push((2_499_900..2_500_300).collect());
    let mut r: Vec<u64> = (0..20_000u64)
        .map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D) % (last + 1))
        .collect();
    r.sort_unstable();
    r.dedup();
    sets.push(r);
    for asked in &sets {
        let want: Vec<bool> = asked.iter().map(|&x| e.is_p(x).unwrap()).collect();
        let got = e.are_p(asked).unwrap();
        assert_eq!(got, want, "{} asked", asked.len());
        for (&x, &g) in asked.iter().zip(&got) {
            assert_eq!(g, bit(x), "rank {x}");
        }
    }
    // Below no part: an error, not a panic.
    assert!(e.are_p(&[last + 1]).is_err());
}

/// Regression: with two damaged blocks the error named the block met by
/// the first thread (block 2 on two cores). It must name the first
/// damaged block the ranks need, as the one-by-one look-ups do.
#[test]
fn are_p_names_the_first_damaged_block_whatever_the_cores() {
    let t = tempfile::tempdir().unwrap();
    let bounds = [0, 3 * M + 64];
    let e = parts(t.path(), &bounds, &[(0, 1), (0, 2)]);
    let asked = [5, M + 5, 2 * M + 5];
    let want = asked
        .iter()
        .map(|&x| e.is_p(x))
        .collect::<Result<Vec<bool>>>()
        .unwrap_err()
        .to_string();
    let got = e.are_p(&asked).unwrap_err().to_string();
    assert_eq!(got, want);
}
