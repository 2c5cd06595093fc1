//! The published works that `report.md` compares with: the short name a
//! claim's `source` column cites each by, and the full reference a reader
//! can find ([`WORKS`]).
//!
//! A claim's source is free text that contains one or more of these names
//! (e.g. "Gale 1974, as cited in the sen-ltd Chomp article"); `report.md`
//! ends with the full reference of every work named in its claims or notes
//! ([`cited`]). Keep the names here and in the kinds' claim sources the same
//! text, and never cite an internal name (a file of this repository or of
//! the development machine) in a source.

/// One published work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// The short name claims cite it by (a substring of their `source`).
    pub name: &'static str,
    /// Author, title, where it was published, and a URL where there is one.
    pub reference: &'static str,
}

/// The Chomp article and solver of sen-ltd (rectangles, census, three-row).
pub const SEN_CHOMP: &str = "sen-ltd Chomp article";
/// A. E. Brouwer's Chomp page (three-row Chomp).
pub const BROUWER: &str = "Brouwer, The game of Chomp";
/// G. Nivasch's periodic rows of three-row Chomp, r ≤ 10,000.
pub const NIVASCH: &str = "Nivasch";
/// D. Gale's 1974 paper (the first Chomp results).
pub const GALE: &str = "Gale 1974";
/// Day 72 of the "game from zero" series (the 10×10 Chomp box, policies).
pub const DAY72: &str = "day-72 Chomp article";
/// The 每日算法 article on Chomp in Java (Sprague–Grundy values).
pub const MEIRI: &str = "每日算法 Chomp article";
/// The Dodgem article and solver of sen-ltd.
pub const SEN_DODGEM: &str = "sen-ltd Dodgem article";
/// The 1996 rec.games.abstract Dodgem thread (Erickson, Fleury, desJardins).
pub const DODGEM_THREAD: &str = "rec.games.abstract 1996";
/// Berlekamp, Conway, Guy: Winning Ways.
pub const WINNING_WAYS: &str = "Winning Ways";
/// GamesCrafters' Dodgem figures, as quoted by Wikipedia.
pub const GAMESCRAFTERS: &str = "GamesCrafters";
/// Bouton's 1901 solution of Nim.
pub const BOUTON: &str = "Bouton 1901";
/// Guy and Smith's 1956 paper on octal games.
pub const GUY_SMITH: &str = "Guy and Smith 1956";
/// The On-Line Encyclopedia of Integer Sequences.
pub const OEIS: &str = "OEIS";
/// Kitatai's memoized search of every Chomp rectangle up to 20×20.
pub const KITATAI: &str = "Kitatai, chomp-memoized-search";

/// The start of a claim source that is no published work but an
/// independent computation of ours (e.g. a naive search), named in the rest
/// of the source.
pub const OWN_CHECK: &str = "independent check";

/// Every work a claim may cite, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work {
        name: SEN_CHOMP,
        reference: "sen-ltd, “Chomp（毒入りチョコレート）— 完全プレイヤーを作り、Brouwer の表と OEIS \
                    を全部計算し直したら 1 つだけ数字がずれていた” (Qiita, 2026): the 823 rectangles \
                    of 14 row-count boxes, the census by number of squares to 60, three-row Chomp to \
                    q = 16,000 against Brouwer's tables, Nivasch's rows and OEIS. Playable page \
                    https://sen.ltd/portfolio/chomp/, code https://github.com/sen-ltd/chomp",
    },
    Work {
        name: BROUWER,
        reference: "A. E. Brouwer, “The game of Chomp”, https://www.win.tue.nl/~aeb/games/chomp.html \
                    (three-row Chomp: the recurrence for f(q, r), the table of f, the rows where \
                    p − q ends constant, the pattern table of the periodic rows)",
    },
    Work {
        name: NIVASCH,
        reference: "G. Nivasch, the periodic rows r ≤ 10,000 of three-row Chomp (141 of period 2, 7 of \
                    period 3, 54 of period 4, 2 of period 9), as reported in the sen-ltd Chomp article",
    },
    Work {
        name: GALE,
        reference: "D. Gale, “A curious Nim-type game”, Amer. Math. Monthly 81 (1974), 876–879 \
                    (2×n, n×n, 4×5 and 4×6 have one winning move), as cited in the sen-ltd Chomp \
                    article",
    },
    Work {
        name: DAY72,
        reference: "“Chomp”, day 72 of the “game from zero” series (one game a day in plain JavaScript): \
                    the 10×10 box and four policies on the bars 2×2 … 8×8. Playable page \
                    https://dev48.infy.uk/game/day72-chomp.html, series \
                    https://dev48.infy.uk/gamefromzero.php",
    },
    Work {
        name: MEIRI,
        reference: "每日算法, “使用java实现Chomp：组合博弈论必败态策略分析” (Chomp in Java: the \
                    Sprague–Grundy value of every position by memoized search; P-positions are the \
                    positions of value 0)",
    },
    Work {
        name: SEN_DODGEM,
        reference: "sen-ltd, Dodgem article and solver (2026): 3×3 to 5×5 solved, with the 1996 \
                    rec.games.abstract thread, Winning Ways and the GamesCrafters figures checked \
                    again. Playable page https://sen.ltd/portfolio/dodgem/, code \
                    https://github.com/sen-ltd/dodgem",
    },
    Work {
        name: DODGEM_THREAD,
        reference: "“'Dodgem' . . . any info?”, rec.games.abstract, March 1996: posts by J. Erickson \
                    (position counts), M. Fleury (666 placements) and D. desJardins (4×4 and 5×5 \
                    solved: draws), archived by D. Eppstein at \
                    https://www.ics.uci.edu/~eppstein/cgt/dodgem.html",
    },
    Work {
        name: WINNING_WAYS,
        reference: "E. R. Berlekamp, J. H. Conway, R. K. Guy, Winning Ways for your Mathematical Plays, \
                    2nd ed., A K Peters, 2001–2004 (Kayles and the octal games: vol. 1, ch. 4; \
                    Dodgem 3×3: vol. 3)",
    },
    Work {
        name: GAMESCRAFTERS,
        reference: "GamesCrafters (UC Berkeley), Dodgem figures as quoted in Wikipedia, “Dodgem”, \
                    https://en.wikipedia.org/wiki/Dodgem",
    },
    Work {
        name: BOUTON,
        reference: "C. L. Bouton, “Nim, a game with a complete mathematical theory”, Annals of \
                    Mathematics (2) 3 (1901/02), 35–39 (normal and misère Nim)",
    },
    Work {
        name: GUY_SMITH,
        reference: "R. K. Guy and C. A. B. Smith, “The G-values of various games”, Proc. Cambridge \
                    Philos. Soc. 52 (1956), 514–526 (octal games, Kayles and Dawson's Kayles, the \
                    periodicity theorem)",
    },
    Work {
        name: OEIS,
        reference: "The On-Line Encyclopedia of Integer Sequences, https://oeis.org/ (each sequence at \
                    https://oeis.org/A…, e.g. https://oeis.org/A112470)",
    },
    Work {
        name: KITATAI,
        reference: "Kitatai, “chomp-memoized-search” (C++, GitHub, \
                    https://github.com/Kitatai/chomp-memoized-search): the winning first moves of \
                    every rectangle up to 20×20 by memoized negamax search (about 34 GB); its README \
                    states that none has three or more",
    },
];

/// The works named in `texts` (claim sources, report notes), in [`WORKS`]
/// order, each once.
pub fn cited<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Work> {
    let texts: Vec<&str> = texts.into_iter().collect();
    WORKS
        .iter()
        .filter(|w| texts.iter().any(|t| t.contains(w.name)))
        .copied()
        .collect()
}

/// The `## Sources` section of `report.md` for the works named in `texts`
/// (empty if none).
pub fn sources_section<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let works = cited(texts);
    if works.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Sources\n\n");
    for w in works {
        md.push_str(&format!("- **{}**: {}\n", w.name, w.reference));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_not_inside_each_other() {
        for a in WORKS {
            for b in WORKS {
                if a.name != b.name {
                    assert!(!a.name.contains(b.name), "{} contains {}", a.name, b.name);
                }
            }
        }
    }

    #[test]
    fn a_source_naming_two_works_lists_both_in_order() {
        let s = sources_section(["Gale 1974, as cited in the sen-ltd Chomp article"]);
        let chomp = s.find("**sen-ltd Chomp article**").expect("sen-ltd listed");
        let gale = s.find("**Gale 1974**").expect("Gale listed");
        assert!(chomp < gale, "{s}");
        assert!(s.contains("Amer. Math. Monthly 81 (1974)"), "{s}");
        assert!(!s.contains("Brouwer, The game of Chomp"), "{s}");
    }

    #[test]
    fn nothing_cited_gives_no_section() {
        assert_eq!(sources_section(["our own check"]), "");
    }

    #[test]
    fn no_reference_names_an_internal_file() {
        for w in WORKS {
            for bad in ["seed", "BRIEF", "/work/", "shared/"] {
                assert!(!w.reference.contains(bad), "{}: {bad}", w.name);
                assert!(!w.name.contains(bad), "{}: {bad}", w.name);
            }
        }
    }
}
