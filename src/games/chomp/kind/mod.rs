//! Chomp's job kinds: [`boxes`] (`chomp-boxes`: every rectangle of an m×n
//! box, its winning first moves counted by [`counts`] and the policy odds of
//! [`policy`] in its report), [`census`] (`chomp-census`: positions by number
//! of squares) and [`grundy`] (`chomp-grundy`: Sprague–Grundy values).

pub mod boxes;
pub mod census;
pub mod counts;
pub mod grundy;
pub mod policy;
