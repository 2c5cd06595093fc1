//! Job kinds: one module per computation, each implementing
//! [`JobKind`](super::JobKind) and registered in [`all_kinds`](super::kind::all_kinds),
//! and beside it the kind's probe (`*_probe`): answers about single
//! positions for `query` and `serve` (see [`super::probe`]).

pub mod chomp_boxes;
pub mod chomp_boxes_probe;
pub mod chomp_census;
pub mod chomp_grundy;
pub mod chomp_grundy_probe;
pub mod chomp_policy;
pub mod dodgem;
pub mod dodgem_probe;
pub mod octal;
pub mod octal_probe;
pub mod three_row;
pub mod three_row_probe;
