//! The published works this game's claims and notes cite: the short name a
//! claim's `source` contains and the full reference (author, title, where
//! published, URL), listed in `report.md`'s `## Sources`.

use crate::pipeline::sources::Work;

/// The Dodgem article and solver of sen-ltd.
pub const SEN_DODGEM: &str = "sen-ltd Dodgem article";

/// The 1996 rec.games.abstract Dodgem thread (Erickson, Fleury, desJardins).
pub const DODGEM_THREAD: &str = "rec.games.abstract 1996";

/// GamesCrafters' Dodgem figures, as quoted by Wikipedia.
pub const GAMESCRAFTERS: &str = "GamesCrafters";

/// Every work this game cites, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work::new(
        SEN_DODGEM,
        "sen-ltd, Dodgem article and solver (2026): 3×3 to 5×5 solved, with the 1996 \
                    rec.games.abstract thread, Winning Ways and the GamesCrafters figures checked \
                    again. Playable page https://sen.ltd/portfolio/dodgem/, code \
                    https://github.com/sen-ltd/dodgem",
    ),
    Work::new(
        DODGEM_THREAD,
        "“'Dodgem' . . . any info?”, rec.games.abstract, March 1996: posts by J. Erickson \
                    (position counts), M. Fleury (666 placements) and D. desJardins (4×4 and 5×5 \
                    solved: draws), archived by D. Eppstein at \
                    https://www.ics.uci.edu/~eppstein/cgt/dodgem.html",
    ),
    Work::new(
        GAMESCRAFTERS,
        "GamesCrafters (UC Berkeley), Dodgem figures as quoted in Wikipedia, “Dodgem”, \
                    https://en.wikipedia.org/wiki/Dodgem",
    ),
];
