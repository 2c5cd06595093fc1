//! Full check of `dodgem` (in progress).

use crate::pipeline::error::{Error, Result};

use super::{Checker, Coverage, Ctx};

/// The `dodgem` checker.
pub struct DodgemChecker;

impl Checker for DodgemChecker {
    fn kind(&self) -> &'static str {
        "dodgem"
    }

    fn check(&self, _cx: &Ctx) -> Result<Vec<Coverage>> {
        Err(Error::job("dodgem", "no full check yet"))
    }
}
