//! The names of [`FailureHandling`] in a configuration, read once here so
//! that no host keeps its own copy of the list.

use super::FailureHandling;
use crate::{Error, ErrorCode, Result};

impl FailureHandling {
    /// Every mode, in the order the docs list them.
    pub const ALL: [FailureHandling; 3] =
        [FailureHandling::ByCategory, FailureHandling::Replay, FailureHandling::Execute];

    /// Returns the stable code (`by_category`, `replay`, `execute`).
    pub const fn code(self) -> &'static str {
        match self {
            FailureHandling::ByCategory => "by_category",
            FailureHandling::Replay => "replay",
            FailureHandling::Execute => "execute",
        }
    }

    /// Reads a mode by its code.
    ///
    /// Returns an `invalid_value` error naming `field` when `code` is none of them.
    pub fn parse(code: &str, field: &str) -> Result<FailureHandling> {
        Self::ALL.into_iter().find(|h| h.code() == code).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!("must be by_category, replay or execute, got {code:?}"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_and_others_are_invalid_value() {
        for h in FailureHandling::ALL {
            assert_eq!(FailureHandling::parse(h.code(), "f").unwrap(), h);
        }
        let e = FailureHandling::parse("retry", "failure_handling").unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_value", "failure_handling"));
    }
}
