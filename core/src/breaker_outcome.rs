//! The names of a recorded outcome ([`Counted`]) as hosts accept them from a
//! caller (`breaker.record(permit, "failure")`), read once here so that no
//! host keeps its own copy of the list.

use crate::breaker::Counted;
use crate::{Error, ErrorCode, Result};

impl Counted {
    /// Every outcome, in the order the docs list them.
    pub const ALL: [Counted; 3] = [Counted::Success, Counted::Failure, Counted::Ignored];

    /// Reads an outcome by its code (`success`, `failure`, `ignored`).
    ///
    /// Returns an `invalid_value` error naming `field` when `code` is none of them.
    pub fn parse(code: &str, field: &str) -> Result<Counted> {
        Self::ALL.into_iter().find(|c| c.code() == code).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidValue,
                field.to_owned(),
                format!("must be success, failure or ignored, got {code:?}"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_and_others_are_invalid_value() {
        for c in Counted::ALL {
            assert_eq!(Counted::parse(c.code(), "outcome").unwrap(), c);
        }
        let e = Counted::parse("ignore", "outcome").unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_value", "outcome"));
    }
}
