//! Job kinds: one module per computation, each implementing
//! [`JobKind`](super::JobKind) and registered in [`all_kinds`](super::kind::all_kinds).

pub mod chomp_boxes;
pub mod dodgem;
pub mod octal;
