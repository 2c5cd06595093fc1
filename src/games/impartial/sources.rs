//! The published works this game's claims and notes cite: the short name a
//! claim's `source` contains and the full reference (author, title, where
//! published, URL), listed in `report.md`'s `## Sources`.

use crate::pipeline::sources::Work;

/// Bouton's 1901 solution of Nim.
pub const BOUTON: &str = "Bouton 1901";

/// Guy and Smith's 1956 paper on octal games.
pub const GUY_SMITH: &str = "Guy and Smith 1956";

/// Berlekamp, Conway, Guy: Winning Ways.
pub const WINNING_WAYS: &str = "Winning Ways";

/// Every work this game cites, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work::new(
        BOUTON,
        "C. L. Bouton, “Nim, a game with a complete mathematical theory”, Annals of \
                    Mathematics (2) 3 (1901/02), 35–39 (normal and misère Nim)",
    ),
    Work::new(
        GUY_SMITH,
        "R. K. Guy and C. A. B. Smith, “The G-values of various games”, Proc. Cambridge \
                    Philos. Soc. 52 (1956), 514–526 (octal games, Kayles and Dawson's Kayles, the \
                    periodicity theorem)",
    ),
    Work::new(
        WINNING_WAYS,
        "E. R. Berlekamp, J. H. Conway, R. K. Guy, Winning Ways for your Mathematical Plays, \
                    2nd ed., A K Peters, 2001–2004 (Kayles and the octal games: vol. 1, ch. 4; \
                    Dodgem 3×3: vol. 3)",
    ),
];
