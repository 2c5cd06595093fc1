//! Sprague–Grundy values of every staircase of an m×n box (seed 004;
//! `BRIEF.md`, Chomp: Grundy values).
//!
//! The value of a position is the mex (least non-negative integer not
//! present) of its children's values; the poison alone has no move and value
//! 0. Positions are ranked as in [`ChompBox`], where every bite lowers the
//! rank, so one ascending pass over the ranks computes every value. Rank 0,
//! the empty board, is not a position of play; its slot holds 0 and no bite
//! leads to it. A position is a P-position exactly when its value is 0.
//!
//! Cost: every legal bite of every position (10×10: 9,053,045 bites; 3×200:
//! about 4·10⁸), each an O(m) rank computation and one table read.

use super::ChompBox;

/// Grundy values by rank (`len()` entries; entry 0, the empty board, is 0).
///
/// Values never exceed the number of legal bites of a position, `m·n − 1`.
pub fn grundy_values(b: &ChompBox) -> Vec<u32> {
    let m = b.rows();
    let len = b.len();
    let mut g = vec![0u32; len as usize];
    let mut rows = vec![0u32; m];
    let mut child = vec![0u32; m];
    // seen[v] == x: some child of rank x has value v.
    let mut seen = vec![u64::MAX; m * b.cols() + 1];
    for x in 1..len {
        b.unrank(x, &mut rows);
        for i in 0..m {
            let ri = rows[i];
            if ri == 0 {
                break;
            }
            child[..i].copy_from_slice(&rows[..i]);
            for j in u32::from(i == 0)..ri {
                for k in i..m {
                    child[k] = rows[k].min(j);
                }
                let v = g[b.rank_rows(&child) as usize] as usize;
                seen[v] = x;
            }
        }
        let mut v = 0;
        while seen[v] == x {
            v += 1;
        }
        g[x as usize] = v as u32;
    }
    g
}

/// Bytes per value of the smallest unsigned integer type holding every
/// value of `values` (1, 2 or 4).
pub fn value_width(values: &[u32]) -> u8 {
    match values.iter().copied().max().unwrap_or(0) {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        _ => 4,
    }
}

/// `values` as little-endian integers of `width` bytes each.
///
/// # Panics
/// If `width` is not 1, 2 or 4 or a value does not fit.
pub fn encode_values(values: &[u32], width: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * width as usize);
    for &v in values {
        match width {
            1 => out.push(u8::try_from(v).expect("fits in u8")),
            2 => out.extend_from_slice(&u16::try_from(v).expect("fits in u16").to_le_bytes()),
            4 => out.extend_from_slice(&v.to_le_bytes()),
            _ => panic!("width {width} is not 1, 2 or 4"),
        }
    }
    out
}

/// Inverse of [`encode_values`]; `None` if the length is not a multiple of
/// `width` or `width` is not 1, 2 or 4.
pub fn decode_values(bytes: &[u8], width: u8) -> Option<Vec<u32>> {
    let w = width as usize;
    if !matches!(w, 1 | 2 | 4) || !bytes.len().is_multiple_of(w) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(w)
            .map(|c| match w {
                1 => u32::from(c[0]),
                2 => u32::from(u16::from_le_bytes([c[0], c[1]])),
                _ => u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_exactly_on_p_positions_small_boxes() {
        for (m, n) in [(1, 6), (2, 7), (3, 5), (5, 4)] {
            let b = ChompBox::new(m, n).unwrap();
            let g = grundy_values(&b);
            let p = b.solve();
            for x in 1..b.len() {
                assert_eq!(g[x as usize] == 0, p.is_p(x), "{m}x{n} rank {x}");
            }
        }
    }

    #[test]
    fn one_row_values_are_length_minus_one() {
        // 1×n: a single row of r squares is a Nim heap of r − 1.
        let b = ChompBox::new(1, 9).unwrap();
        let g = grundy_values(&b);
        for r in 1..=9u32 {
            assert_eq!(g[b.rank_rows(&[r]) as usize], r - 1);
        }
    }

    #[test]
    fn width_and_round_trip() {
        for v in [vec![0, 255], vec![3, 256], vec![70_000]] {
            let w = value_width(&v);
            assert_eq!(decode_values(&encode_values(&v, w), w), Some(v.clone()));
        }
        assert_eq!(value_width(&[255]), 1);
        assert_eq!(value_width(&[256]), 2);
        assert_eq!(decode_values(&[1, 2, 3], 2), None);
    }
}
