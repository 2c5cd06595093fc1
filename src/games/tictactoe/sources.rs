//! The published works tic-tac-toe's claims cite.

use crate::pipeline::sources::Work;

/// OEIS A317573 and A317574: positions with a winning strategy for X, for
/// O, by plays.
pub const OEIS_A317573: &str = "Ibeas, A317573 and A317574";

/// The count of legal positions by exhaustive search.
pub const STATE_SPACE: &str =
    "Mathematics Stack Exchange, “TicTacToe State Space Choose Calculation”";

/// Every work tic-tac-toe cites, in the order `report.md` lists them.
pub const WORKS: &[Work] = &[
    Work::new(
        OEIS_A317573,
        "Á. Ibeas, OEIS A317573 and A317574: n×n tic-tac-toe positions (up to rotation and \
         reflection) after k plays with a winning strategy for X, for O; row 3: none at k = 0, \
         so the empty board is a draw, https://oeis.org/A317573 (and R. Cox, OEIS A008907: \
         legal positions after k plays up to symmetry, 765 in all)",
    ),
    Work::new(
        STATE_SPACE,
        "Mathematics Stack Exchange, question “TicTacToe State Space Choose Calculation” (2013) \
         and its answers: 6,046 boards with legal counts, 5,478 legal positions by exhaustive \
         search, 958 of them ended (math.stackexchange.com; find it by its title)",
    ),
];
