//! Probes read single blocks: a byte flipped inside one block of a shard
//! fails exactly the lookups that need that block, with an error naming the
//! job, the shard file and the block; lookups elsewhere still answer, and
//! `verify` names the shard.

use std::path::PathBuf;
use std::process::Command;

use gametables::pipeline::plan::PlanFile;
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::shard::craft;

fn gt(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gametables"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_damaged_block_fails_only_the_probes_that_read_it() {
    let t = tempfile::tempdir().unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = t.path().join("d3");
    let d = dir.to_str().unwrap();
    let (code, _, err) = gt(&[
        "run",
        repo.join("jobs/dodgem-3.toml").to_str().unwrap(),
        "--run-dir",
        d,
        "--no-progress",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let start = ["query", "dodgem", "--n", "3", "--run-dir", d, "--json"];
    let small = [
        "query",
        "dodgem",
        "--n",
        "3",
        "--run-dir",
        d,
        "--position",
        "blue:a2 red:b1 to-move:blue",
        "--json",
    ];
    let (code, before, _) = gt(&small);
    assert_eq!(code, Some(0));
    assert_eq!(gt(&start).0, Some(0));

    // Flip one byte inside the `values` block of layer-2-2 (the start's layer).
    let plan = PlanFile::load(&RunDir::new(&dir)).unwrap();
    let j = plan.job("layer-2-2").unwrap();
    let p = RunDir::new(&dir).shard_path(&j.id);
    let bytes = std::fs::read(&p).unwrap();
    let parts = craft::split(&bytes);
    let vi = parts
        .header
        .sections
        .iter()
        .position(|s| s.0 == "values")
        .unwrap();
    let hlen = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let before_blocks: usize = parts.header.sections[..vi]
        .iter()
        .map(|s| s.1.div_ceil(u64::from(parts.block_size)) as usize)
        .sum();
    let off = 16
        + hlen
        + parts.blocks[..before_blocks]
            .iter()
            .map(Vec::len)
            .sum::<usize>()
        + 3;
    let mut bad = bytes.clone();
    bad[off] ^= 0x20;
    std::fs::write(&p, &bad).unwrap();

    let (code, _, err) = gt(&start);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("layer-2-2") && err.contains(&j.id[..12]),
        "{err}"
    );
    assert!(err.contains("block 0") && err.contains("checksum"), "{err}");
    // Layer (1, 1) and the layers below it are intact: same answer as before.
    let (code, after, err) = gt(&small);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(after, before);
    // verify names the shard.
    let (code, out, err) = gt(&["verify", d]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(format!("{out}{err}").contains("layer-2-2"), "{out}{err}");
}
