//! The one place that knows bincode (2.0.1, through serde), used for small
//! structured headers inside shards. Bulk table bodies never go through here:
//! they are raw little-endian arrays.
//!
//! bincode is unmaintained (RUSTSEC-2025-0141); keeping it behind these two
//! functions makes it a one-file change to replace.

use serde::{Serialize, de::DeserializeOwned};

/// Largest encoded value accepted by [`decode`], in bytes.
pub const DECODE_LIMIT: usize = 1 << 20;

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
        .with_little_endian()
        .with_fixed_int_encoding()
        .with_limit::<DECODE_LIMIT>()
}

/// Encodes `value` (deterministic: same value, same bytes).
///
/// # Errors
/// A message if serde cannot encode the value or it exceeds [`DECODE_LIMIT`].
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    bincode::serde::encode_to_vec(value, config()).map_err(|e| e.to_string())
}

/// Decodes a value that must use every byte of `bytes`.
///
/// # Errors
/// A message if the bytes are not a valid encoding or have trailing bytes.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let (value, used) =
        bincode::serde::decode_from_slice(bytes, config()).map_err(|e| e.to_string())?;
    if used != bytes.len() {
        return Err(format!("{} trailing bytes", bytes.len() - used));
    }
    Ok(value)
}
