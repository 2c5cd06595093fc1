//! The published works Quixo's claims cite.

use crate::pipeline::sources::Work;

/// Tanaka, Bonnet, Tixeuil and Tamura, "Quixo Is Solved".
pub const QUIXO_IS_SOLVED: &str = "Tanaka, Bonnet, Tixeuil, Tamura, “Quixo Is Solved”";

/// The code and result files of that paper (quixo-cpp).
pub const QUIXO_CPP: &str = "quixo-cpp result tables";

/// Every work Quixo cites, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work::new(
        QUIXO_IS_SOLVED,
        "S. Tanaka, F. Bonnet, S. Tixeuil, Y. Tamura, “Quixo Is Solved”, Advances in Computer \
         Games (ACG 2021), LNCS 13262, Springer 2022; arXiv 2007.15895, \
         https://arxiv.org/abs/2007.15895 (5×5 Quixo is a draw)",
    ),
    Work::new(
        QUIXO_CPP,
        "S. Tanaka (st34-satoshi), quixo-cpp, the code of “Quixo Is Solved”, file \
         python/result-5by5-activeIsO.txt (commit 9d71c50): win, loss and draw counts of every \
         5×5 board without a blank cube, by numbers of X and O cubes, O to move, \
         https://github.com/st34-satoshi/quixo-cpp",
    ),
];
