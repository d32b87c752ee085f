//! Errors on their way to JavaScript: the four arguments of the JS layer's
//! error factory, `setErrorFactory(kind, code, field, message)`.
//!
//! The factory builds the very classes the JS layer throws (`TypeError`,
//! `RangeError`, `IdempotencyError`, `RetrycoreError`), each with `.code`
//! equal to the core's code and `.field`. Which class is decided here, from
//! the core's error family ([`ErrorCode::family`](retrycore::ErrorCode::family),
//! plus [`is_type_error`](retrycore::ErrorCode::is_type_error)); how it
//! is raised (a napi error, a wasm-bindgen `Result`, a stashed error behind
//! `NaN`) is the FFI crate's business.

#[cfg(test)]
use retrycore::ErrorCode;
use retrycore::ErrorFamily;

/// Which JavaScript class an error becomes: the factory's `kind`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// `TypeError`.
    Type,
    /// `RangeError`.
    Range,
    /// `IdempotencyError`.
    Idempotency,
    /// `RetrycoreError`.
    State,
}

impl Class {
    /// Returns the factory's name of the class (`type`, `range`, `idempotency`, `state`).
    pub const fn name(self) -> &'static str {
        match self {
            Class::Type => "type",
            Class::Range => "range",
            Class::Idempotency => "idempotency",
            Class::State => "state",
        }
    }
}

/// Where an error comes from, which decides its class for the codes that
/// mean different things in different places (`invalid_state`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Options, documents and arguments.
    Config,
    /// Keys, headers, records, dead letters.
    Idempotency,
    /// Sessions, breakers, budgets.
    State,
}

/// An error on its way to JavaScript: the factory's four arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The class to throw.
    pub class: Class,
    /// The stable code (`.code`).
    pub code: &'static str,
    /// The field at fault (`.field`; empty when none).
    pub field: String,
    /// The message.
    pub message: String,
}

/// A result whose error becomes a JavaScript error object.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an error of `class` with `code`, naming `field`.
    #[cold]
    pub fn new(class: Class, code: &'static str, field: &str, message: impl Into<String>) -> Error {
        Error { class, code, field: field.to_owned(), message: message.into() }
    }

    /// Builds a `TypeError`.
    #[cold]
    pub fn type_error(code: &'static str, field: &str, message: impl Into<String>) -> Error {
        Error::new(Class::Type, code, field, message)
    }

    /// Builds a `RangeError`.
    #[cold]
    pub fn range(code: &'static str, field: &str, message: impl Into<String>) -> Error {
        Error::new(Class::Range, code, field, message)
    }

    /// Builds a `RetrycoreError` (a state error).
    #[cold]
    pub fn state(code: &'static str, field: &str, message: impl Into<String>) -> Error {
        Error::new(Class::State, code, field, message)
    }

    /// Maps a core error to its JavaScript class.
    #[cold]
    pub fn core(e: &retrycore::Error, domain: Domain) -> Error {
        let k = e.kind();
        let class = match (k.family(), domain) {
            _ if k.is_type_error() => Class::Type,
            (ErrorFamily::Config | ErrorFamily::Fingerprint, _) => Class::Range,
            (ErrorFamily::Key | ErrorFamily::Fence | ErrorFamily::DeadLetter, _) | (_, Domain::Idempotency) => {
                Class::Idempotency
            }
            // State, Snapshot, and a family added later until it is mapped here.
            _ => Class::State,
        };
        Error { class, code: e.code(), field: e.field().to_owned(), message: e.to_string() }
    }

    /// Maps a core error about options, documents or arguments (for `map_err`).
    #[cold]
    pub fn of_config(e: retrycore::Error) -> Error {
        Error::core(&e, Domain::Config)
    }

    /// Maps a core error about keys, headers, records or dead letters (for `map_err`).
    #[cold]
    pub fn of_idempotency(e: retrycore::Error) -> Error {
        Error::core(&e, Domain::Idempotency)
    }

    /// Maps a core error about sessions, breakers or budgets (for `map_err`).
    #[cold]
    pub fn of_state(e: retrycore::Error) -> Error {
        Error::core(&e, Domain::State)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_core() {
        let e = |code, domain| Error::core(&retrycore::Error::new(code, "f", "r"), domain).class;
        assert_eq!(e(ErrorCode::InvalidType, Domain::Config), Class::Type);
        assert_eq!(e(ErrorCode::OutOfRange, Domain::Config), Class::Range);
        assert_eq!(e(ErrorCode::TooDeep, Domain::State), Class::Range);
        assert_eq!(e(ErrorCode::StaleFence, Domain::State), Class::Idempotency);
        assert_eq!(e(ErrorCode::InvalidState, Domain::Idempotency), Class::Idempotency);
        assert_eq!(e(ErrorCode::InvalidState, Domain::State), Class::State);
        let full = Error::core(&retrycore::Error::new(ErrorCode::OutOfRange, "a.b", "bad"), Domain::Config);
        assert_eq!((full.code, full.field.as_str()), ("out_of_range", "a.b"));
        assert_eq!(Class::Idempotency.name(), "idempotency");
    }
}
