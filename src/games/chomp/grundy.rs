//! Sprague–Grundy values of Chomp positions (placeholder, filled in below).
