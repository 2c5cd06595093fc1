//! Squares of an n×n board in chess-like algebraic notation, shared by the
//! board games (Dodgem's squares, Quixo's cells): file letter `a` … from the
//! left, rank number `1` … from the bottom; square index `x + n·(rank − 1)`.

/// The index of the square named `text` (`a1`, `E5`: case-insensitive,
/// surrounding spaces ignored) on an n×n board, or `None` if it names no
/// square of that board.
pub fn parse_square(text: &str, n: usize) -> Option<usize> {
    let t = text.trim().to_ascii_lowercase();
    let mut chars = t.chars();
    let file = chars.next()?;
    let rank: usize = chars.as_str().parse().ok()?;
    if !file.is_ascii_lowercase() {
        return None;
    }
    let x = (file as u8 - b'a') as usize;
    (x < n && (1..=n).contains(&rank)).then(|| x + n * (rank - 1))
}

/// The name of square `sq` of an n×n board (`a1` for 0), the inverse of
/// [`parse_square`].
pub fn square_name(sq: usize, n: usize) -> String {
    format!("{}{}", (b'a' + (sq % n) as u8) as char, sq / n + 1)
}

#[cfg(test)]
mod tests {
    use super::{parse_square, square_name};

    #[test]
    fn square_names_are_parsed_back_to_their_square() {
        for n in 2..=6 {
            for sq in 0..n * n {
                assert_eq!(parse_square(&square_name(sq, n), n), Some(sq));
            }
        }
        assert_eq!(square_name(0, 3), "a1");
        assert_eq!(square_name(5, 3), "c2");
    }

    #[test]
    fn squares_parse_to_their_index_and_nothing_else_does() {
        assert_eq!(parse_square("a1", 5), Some(0));
        assert_eq!(parse_square(" E5 ", 5), Some(24));
        assert_eq!(parse_square("b1", 3), Some(1));
        assert_eq!(parse_square("a2", 3), Some(3));
        for bad in ["", "a", "a0", "a4", "d1", "1a", "a-1", "aa1", "é1"] {
            assert_eq!(parse_square(bad, 3), None, "{bad}");
        }
    }
}
