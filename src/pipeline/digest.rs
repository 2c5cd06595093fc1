//! SHA-256 helpers; digests are printed as lowercase hex.

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// SHA-256 of the file at `path` as 64 lowercase hex digits, read in
/// 1 MiB pieces (a table may be larger than is worth holding in memory).
///
/// # Errors
/// The file cannot be opened or read.
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            return Ok(hex::encode(h.finalize()));
        }
        h.update(&buf[..k]);
    }
}

/// SHA-256 of `bytes` as 32 raw bytes.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Whether `s` looks like a job id: 64 lowercase hex digits.
pub fn is_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
