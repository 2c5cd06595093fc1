//! Shard format: round trip, determinism, and a decoder that returns an
//! error (never panics) on arbitrary bytes.

use gametables::pipeline::digest::sha256;
use gametables::pipeline::shard::{self, Section, ShardHeader};
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

/// `a` with its zstd body replaced by `body` (body length fixed, trailer
/// resealed): intact to the cheap check, undecodable.
fn with_body(a: &[u8], body: &[u8]) -> Vec<u8> {
    let hlen = u32::from_le_bytes(a[12..16].try_into().unwrap()) as usize;
    let mut content = a[..16 + hlen].to_vec();
    content.extend_from_slice(&(body.len() as u64).to_le_bytes());
    content.extend_from_slice(body);
    reseal(content)
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
    let bad = with_body(&a, b"not a zstd frame");
    assert!(shard::check(&bad).is_ok());
    assert!(shard::decode(&bad).unwrap_err().contains("zstd"));
    // A valid frame of the wrong length.
    let short = zstd::encode_all(&[1u8, 2, 3][..], 3).unwrap();
    let bad = with_body(&a, &short);
    assert!(shard::check(&bad).is_ok());
    assert!(shard::decode(&bad).unwrap_err().contains("header declares"));
    // A valid frame longer than the sections the header declares.
    let long = zstd::encode_all(&vec![7u8; 20_000][..], 3).unwrap();
    let bad = with_body(&a, &long);
    assert!(shard::check(&bad).is_ok());
    assert!(
        shard::decode(&bad)
            .unwrap_err()
            .contains("more than the 16003 bytes the header declares")
    );
    // A declared body length that disagrees is seen by both.
    let hlen = u32::from_le_bytes(a[12..16].try_into().unwrap()) as usize;
    let mut content = a[..a.len() - 32].to_vec();
    content[16 + hlen] ^= 1;
    let bad = reseal(content);
    assert!(shard::check(&bad).unwrap_err().contains("body length"));
    assert!(shard::decode(&bad).unwrap_err().contains("body length"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

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
