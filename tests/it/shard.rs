//! Shard format: round trip, determinism, and a decoder that returns an
//! error (never panics) on arbitrary bytes.

use gametables::pipeline::digest::sha256;
use gametables::pipeline::shard::{self, Section, ShardHeader, craft};
use proptest::prelude::*;

fn header() -> ShardHeader {
    ShardHeader {
        kind: "chomp-boxes".into(),
        job_name: "box-2x3".into(),
        job_id: "ab".repeat(32),
        sections: vec![],
    }
}

fn sample() -> Vec<u8> {
    shard::encode(
        &header(),
        &[
            Section::new("meta", vec![1, 2, 3]),
            Section::new(
                "p-positions",
                (0..4000u32).flat_map(|x| (x % 7).to_le_bytes()).collect(),
            ),
        ],
    )
    .unwrap()
}

#[test]
fn round_trip_and_same_bytes_every_time() {
    let a = sample();
    assert_eq!(a, sample(), "encoding is deterministic");
    let s = shard::decode(&a).unwrap();
    assert_eq!(s.header.job_name, "box-2x3");
    assert_eq!(s.section("meta").unwrap(), &[1, 2, 3]);
    assert_eq!(s.sections[1].bytes.len(), 16_000);
    assert!(s.section("nope").is_err());
}

#[test]
fn flipped_byte_truncation_and_bad_magic_are_errors() {
    let a = sample();
    for i in [0, 9, 20, a.len() / 2, a.len() - 1] {
        let mut b = a.clone();
        b[i] ^= 0x40;
        assert!(
            shard::decode(&b).unwrap_err().contains("checksum"),
            "flip at {i}"
        );
    }
    assert!(shard::decode(&a[..a.len() - 10]).is_err());
    assert!(shard::decode(&a[..20]).unwrap_err().contains("truncated"));
    // A valid checksum over bad content is still refused.
    let mut b = a[..a.len() - 32].to_vec();
    b[0] = b'X';
    let d = sha256(&b);
    b.extend_from_slice(&d);
    assert!(shard::decode(&b).unwrap_err().contains("magic"));
}

fn reseal(mut content: Vec<u8>) -> Vec<u8> {
    let d = sha256(&content);
    content.extend_from_slice(&d);
    content
}

/// `a` with the blocks of its `p-positions` section replaced by `blocks`
/// (every checksum right): intact to the cheap check, undecodable.
fn with_blocks(a: &[u8], blocks: Vec<Vec<u8>>) -> Vec<u8> {
    let mut p = craft::split(a);
    p.blocks.truncate(1); // meta
    p.blocks.extend(blocks);
    craft::assemble(&p)
}

/// The cheap check (no decompression) refuses a flipped bit at every byte
/// and a truncation at every length, accepts what `decode` accepts, returns
/// the header, and gives the file's SHA-256 as `result.toml` lists it.
#[test]
fn cheap_check_refuses_every_flipped_byte_and_every_truncation() {
    let a = sample();
    let h = shard::check(&a).unwrap();
    assert_eq!(h, shard::decode(&a).unwrap().header);
    let (h2, digest) = shard::check_digest(&a).unwrap();
    assert_eq!(h2, h);
    assert_eq!(digest, sha256(&a));
    for i in 0..a.len() {
        for bit in [0x01, 0x80] {
            let mut b = a.clone();
            b[i] ^= bit;
            assert!(shard::check(&b).is_err(), "flip {bit:#x} at {i}");
            assert!(shard::check_digest(&b).is_err(), "flip {bit:#x} at {i}");
        }
    }
    for n in 0..a.len() {
        assert!(shard::check(&a[..n]).is_err(), "truncated to {n}");
        assert!(shard::check_digest(&a[..n]).is_err(), "truncated to {n}");
    }
    let mut longer = a.clone();
    longer.push(0);
    assert!(shard::check(&longer).is_err());
}

/// A body written wrong under a valid trailer passes the cheap check (it
/// cannot see it) but not `decode`: why merge still decodes every shard.
#[test]
fn cheap_check_misses_a_bad_body_under_a_valid_trailer_decode_does_not() {
    let a = sample();
    assert_eq!(
        craft::assemble(&craft::split(&a)),
        a,
        "split and assemble round trip"
    );
    let bad = with_blocks(&a, vec![b"not a zstd frame".to_vec()]);
    assert!(shard::check(&bad).is_ok());
    assert!(shard::decode(&bad).unwrap_err().contains("zstd"));
    // A valid frame of the wrong length.
    let bad = with_blocks(&a, vec![craft::block(&[1u8, 2, 3], 3)]);
    assert!(shard::check(&bad).is_ok());
    assert!(
        shard::decode(&bad)
            .unwrap_err()
            .contains("index declares 16000")
    );
    // A valid frame longer than its block.
    let bad = with_blocks(&a, vec![craft::block(&vec![7u8; 20_000], 3)]);
    assert!(shard::check(&bad).is_ok());
    assert!(
        shard::decode(&bad)
            .unwrap_err()
            .contains("more than the 16000 bytes the index declares")
    );
    // Block count or lengths that disagree with the body are seen by both.
    let mut p = craft::split(&a);
    p.blocks.push(b"extra".to_vec());
    let bad = craft::assemble(&p);
    assert!(shard::check(&bad).unwrap_err().contains("blocks need"));
    assert!(shard::decode(&bad).unwrap_err().contains("blocks need"));
}

/// Every section of a shard of several multi-block sections decodes to its
/// own bytes, the big one after a small one included (each is decoded in
/// place, not cut out of one buffer), and a damaged block is named by the
/// first damaged one in file order whichever thread meets it.
#[test]
fn decode_gives_every_section_and_names_the_first_damaged_block() {
    let big = |seed: u32, len: u32| -> Vec<u8> {
        (0..len)
            .map(|x| ((x.wrapping_mul(seed) >> 7) % 251) as u8)
            .collect()
    };
    let sections = [
        Section::new("meta", vec![9, 8, 7]),
        Section::new("p-positions", big(2_654_435_761, 1_500_000)),
        Section::new("empty", vec![]),
        Section::new("sizes", big(40_503, 700_001)),
    ];
    let a = shard::encode(&header(), &sections).unwrap();
    let s = shard::decode(&a).unwrap();
    assert_eq!(s.sections.len(), 4);
    for (got, want) in s.sections.iter().zip(&sections) {
        assert_eq!(got.name, want.name);
        assert!(got.bytes == want.bytes, "section {}", want.name);
    }
    // Blocks 3 and 12 replaced by bytes that are no zstd frame (checksums
    // made right): the error names block 3, as when it alone is bad.
    let damaged = |which: &[usize]| -> String {
        let mut p = craft::split(&a);
        assert!(p.blocks.len() > 12, "{} blocks", p.blocks.len());
        for &i in which {
            p.blocks[i] = b"not a zstd frame".to_vec();
        }
        shard::decode(&craft::assemble(&p)).unwrap_err()
    };
    let both = damaged(&[3, 12]);
    assert!(both.contains("zstd"), "{both}");
    assert_eq!(both, damaged(&[3]));
    assert_ne!(both, damaged(&[12]));
}

/// A format-1 shard (one zstd frame, no index) is named as the old format,
/// whether or not its trailer verifies.
#[test]
fn old_format_is_named_as_old() {
    let mut v1 = b"GTSHARD\0".to_vec();
    v1.extend_from_slice(&1u32.to_le_bytes());
    v1.extend_from_slice(&[0u8; 60]);
    let sealed = reseal(v1.clone());
    for b in [&v1, &sealed] {
        assert!(shard::decode(b).unwrap_err().contains("old shard format 1"));
        assert!(shard::check(b).unwrap_err().contains("old shard format 1"));
    }
}

/// Declared sizes beyond what the caller allows are refused before any
/// decompression; a block that would expand past its declared size too.
#[test]
fn declared_sizes_are_bounded_before_decompression() {
    let a = sample();
    assert!(shard::decode_bounded(&a, 16_003).is_ok());
    let e = shard::decode_bounded(&a, 16_002).unwrap_err();
    assert!(
        e.contains("declare 16003 bytes") && e.contains("16002"),
        "{e}"
    );
}

/// The block reader: header and index from the file, one block at a time,
/// ranges across blocks, a damaged block failing alone.
#[test]
fn shard_file_reads_blocks_and_refuses_only_the_damaged_one() {
    let t = tempfile::tempdir().unwrap();
    let big: Vec<u8> = (0..1_000_000u32)
        .map(|x| (x.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let h = header();
    let bytes = shard::encode(
        &h,
        &[
            Section::new("meta", vec![9; 10]),
            Section::new("values", big.clone()),
        ],
    )
    .unwrap();
    let p = t.path().join("x.shard");
    std::fs::write(&p, &bytes).unwrap();
    let f = shard::ShardFile::open(&p).unwrap();
    assert_eq!(f.header(), &shard::check(&bytes).unwrap());
    assert_eq!(f.section_len("values"), Some(1_000_000));
    let bs = f.block_size() as usize;
    assert_eq!(f.block_count("values"), Some(1_000_000usize.div_ceil(bs)));
    assert_eq!(f.read_block("values", 1).unwrap(), big[bs..2 * bs]);
    assert_eq!(
        f.read_range("values", bs as u64 - 5, 10).unwrap(),
        big[bs - 5..bs + 5]
    );
    assert_eq!(f.read_section("values").unwrap(), big);
    assert_eq!(f.read_section("meta").unwrap(), vec![9; 10]);
    let streamed: Vec<u8> = f.blocks("values").flat_map(Result::unwrap).collect();
    assert_eq!(streamed, big);
    assert!(f.read_range("values", 999_999, 2).is_err());
    assert!(f.read_block("nope", 0).is_err());
    // Many blocks at once: as one by one.
    let which = [0usize, 1, 3, 4, 5, 7];
    let many = f.read_blocks("values", &which).unwrap();
    for (&i, b) in which.iter().zip(&many) {
        assert_eq!(*b, f.read_block("values", i).unwrap());
    }
    assert!(f.read_blocks("values", &[]).unwrap().is_empty());
    assert!(f.read_blocks("values", &[3, 1]).is_err());
    assert!(
        f.read_blocks("values", &[1, 8])
            .unwrap_err()
            .contains("not block 8")
    );
    // Flip a byte inside block 3 of `values`: that block fails, others answer.
    let parts = craft::split(&bytes);
    let hlen = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    // Block 0 is `meta`; blocks 1… are `values`: byte 5 of values block 3.
    let off = 16 + hlen + parts.blocks[..4].iter().map(Vec::len).sum::<usize>() + 5;
    let mut bad = bytes.clone();
    bad[off] ^= 0x10;
    std::fs::write(&p, &bad).unwrap();
    let f = shard::ShardFile::open(&p).unwrap();
    let e = f.read_block("values", 3).unwrap_err();
    assert!(e.contains("block 3") && e.contains("checksum"), "{e}");
    // Read with others, it is named as read alone.
    assert_eq!(f.read_blocks("values", &[0, 2, 3, 4, 5, 6]).unwrap_err(), e);
    assert_eq!(f.read_block("values", 2).unwrap(), big[2 * bs..3 * bs]);
    assert_eq!(f.read_block("values", 4).unwrap(), big[4 * bs..5 * bs]);
    assert!(shard::decode(&bad).unwrap_err().contains("checksum"));
    // A damaged index or header is refused at open.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 80] ^= 1;
    std::fs::write(&p, &bad).unwrap();
    assert!(
        shard::ShardFile::open(&p)
            .unwrap_err()
            .contains("index checksum")
    );
    let mut bad = bytes.clone();
    bad[20] ^= 1;
    std::fs::write(&p, &bad).unwrap();
    assert!(shard::ShardFile::open(&p).unwrap_err().contains("header"));
}

/// The streaming writer gives the bytes of `encode` however the writes are cut.
#[test]
fn streaming_writer_gives_the_same_bytes() {
    let t = tempfile::tempdir().unwrap();
    // Over 2 batches of compressed blocks on a 2-core machine (16 blocks
    // of 128 KiB per core each).
    let big: Vec<u8> = (0..9_000_000u32)
        .map(|x| (x % 251) as u8 ^ (x >> 13) as u8)
        .collect();
    let sections = [
        Section::new("values", big.clone()),
        Section::new("meta", vec![1, 2, 3]),
        Section::new("empty", vec![]),
    ];
    let want = shard::encode_with_level(&header(), &sections, 1).unwrap();
    for cut in [1usize, 4096, 131_072, 1_000_003] {
        let p = t.path().join(format!("s{cut}.shard"));
        let mut w =
            shard::ShardWriter::create(&p, &header(), 1, shard::Durability::Deferred).unwrap();
        for s in &sections {
            w.begin_section(&s.name).unwrap();
            for c in s.bytes.chunks(cut) {
                w.write(c).unwrap();
            }
        }
        let (h, len) = w.finish().unwrap();
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got, want, "cut {cut}");
        assert_eq!(len as usize, got.len());
        assert_eq!(h, shard::check(&got).unwrap());
    }
    // Dropped without finish: no file.
    let p = t.path().join("dropped.shard");
    let mut w = shard::ShardWriter::create(&p, &header(), 1, shard::Durability::Deferred).unwrap();
    w.begin_section("values").unwrap();
    w.write(&big).unwrap();
    drop(w);
    assert!(!p.exists());
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 4);
}

proptest! {
    #![proptest_config(crate::support::proptest_config(2000))]

    #[test]
    fn decoder_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        prop_assert!(shard::decode(&bytes).is_err());
        prop_assert!(shard::check(&bytes).is_err());
        // With a valid checksum the deeper checks run too.
        let sealed = reseal(bytes);
        let _ = shard::decode(&sealed);
        let _ = shard::check_digest(&sealed);
    }

    #[test]
    fn decoder_never_panics_on_mutated_shards(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let a = sample();
        let mut content = a[..a.len() - 32].to_vec();
        for (i, v) in edits {
            let i = i.index(content.len());
            content[i] = v;
        }
        if do_cut {
            content.truncate(cut.index(content.len()));
        }
        let sealed = reseal(content);
        // Whatever decodes passes the cheap check, with the same header.
        if let Ok(s) = shard::decode(&sealed) {
            prop_assert_eq!(shard::check(&sealed).unwrap(), s.header);
        }
    }
}
