//! Full check of `three-row` (in progress).

use crate::pipeline::error::{Error, Result};

use super::{Checker, Coverage, Ctx};

/// The `three-row` checker.
pub struct ThreeRowChecker;

impl Checker for ThreeRowChecker {
    fn kind(&self) -> &'static str {
        "three-row"
    }

    fn check(&self, _cx: &Ctx) -> Result<Vec<Coverage>> {
        Err(Error::job("three-row", "no full check yet"))
    }
}
