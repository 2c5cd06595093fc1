//! Job kinds: one module per computation, each implementing
//! [`JobKind`](super::JobKind) and registered in [`all_kinds`](super::kind::all_kinds).

pub mod chomp_boxes;
pub mod chomp_census;
pub mod chomp_grundy;
pub mod chomp_policy;
pub mod dodgem;
pub mod octal;
pub mod three_row;
