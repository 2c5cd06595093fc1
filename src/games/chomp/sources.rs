//! The published works this game's claims and notes cite: the short name a
//! claim's `source` contains and the full reference (author, title, where
//! published, URL), listed in `report.md`'s `## Sources`.

use crate::pipeline::sources::Work;

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

/// The On-Line Encyclopedia of Integer Sequences.
pub const OEIS: &str = "OEIS";

/// Kitatai's memoized search of every Chomp rectangle up to 20×20.
pub const KITATAI: &str = "Kitatai, chomp-memoized-search";

/// Ekhad and Zeilberger's winning bites of every a×b up to 14 and their
/// challenge to find a rectangle with three winning bites.
pub const EKHAD_ZEILBERGER: &str = "Ekhad and Zeilberger 2018";

/// Every work this game cites, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work::new(
        SEN_CHOMP,
        "sen-ltd, “Chomp（毒入りチョコレート）— 完全プレイヤーを作り、Brouwer の表と OEIS \
                    を全部計算し直したら 1 つだけ数字がずれていた” (Qiita, 2026): the 823 rectangles \
                    of 14 row-count boxes, the census by number of squares to 60, three-row Chomp to \
                    q = 16,000 against Brouwer's tables, Nivasch's rows and OEIS. Playable page \
                    https://sen.ltd/portfolio/chomp/, code https://github.com/sen-ltd/chomp",
    ),
    Work::new(
        BROUWER,
        "A. E. Brouwer, “The game of Chomp”, https://www.win.tue.nl/~aeb/games/chomp.html \
                    (three-row Chomp: the recurrence for f(q, r), the table of f, the rows where \
                    p − q ends constant, the pattern table of the periodic rows)",
    ),
    Work::new(
        NIVASCH,
        "G. Nivasch, the periodic rows r ≤ 10,000 of three-row Chomp (141 of period 2, 7 of \
                    period 3, 54 of period 4, 2 of period 9), as reported in the sen-ltd Chomp article",
    ),
    Work::new(
        GALE,
        "D. Gale, “A curious Nim-type game”, Amer. Math. Monthly 81 (1974), 876–879 \
                    (2×n, n×n, 4×5 and 4×6 have one winning move), as cited in the sen-ltd Chomp \
                    article",
    ),
    Work::new(
        DAY72,
        "“Chomp”, day 72 of the “game from zero” series (one game a day in plain JavaScript): \
                    the 10×10 box and four policies on the bars 2×2 … 8×8. Playable page \
                    https://dev48.infy.uk/game/day72-chomp.html, series \
                    https://dev48.infy.uk/gamefromzero.php",
    ),
    Work::new(
        MEIRI,
        "每日算法, “使用java实现Chomp：组合博弈论必败态策略分析” (Chomp in Java: the \
                    Sprague–Grundy value of every position by memoized search; P-positions are the \
                    positions of value 0)",
    ),
    Work::new(
        OEIS,
        "The On-Line Encyclopedia of Integer Sequences, https://oeis.org/ (each sequence at \
                    https://oeis.org/A…, e.g. https://oeis.org/A112470)",
    ),
    Work::new(
        KITATAI,
        "Kitatai, “chomp-memoized-search” (C++, GitHub, \
                    https://github.com/Kitatai/chomp-memoized-search): the winning first moves of \
                    every rectangle up to 20×20 by memoized negamax search (about 34 GB); its README \
                    states that none has three or more",
    ),
    Work::new(
        EKHAD_ZEILBERGER,
        "S. B. Ekhad and D. Zeilberger, “All the winning bites for a by b Chomp for a and b up \
                    to 14, and two computational challenges” (2018): every winning first move of \
                    every rectangle up to 14×14, and the challenge to find a rectangle with three",
    ),
];
