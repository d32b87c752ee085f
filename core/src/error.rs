//! The one error type of the crate, with a stable snake_case code per kind.

use std::borrow::Cow;
use std::fmt;

/// The kind of an [`Error`], each with a stable snake_case [`code`](ErrorCode::code).
///
/// Bindings surface the code unchanged (`err.code` in JavaScript, `exc.code`
/// in Python); tests compare codes, never message text.
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The text is not valid JSON.
    InvalidJson,
    /// A value has the wrong JSON type (a string where a number belongs, …).
    InvalidType,
    /// A key the format does not define.
    UnknownKey,
    /// A `version` this build does not know.
    UnknownVersion,
    /// A required field is absent.
    MissingField,
    /// A duration that is not `<decimal><unit>`, or is negative or too large.
    InvalidDuration,
    /// A number outside its allowed range (NaN and infinities included).
    OutOfRange,
    /// A value that is well-typed but not allowed (an unknown kind, a bad pattern, …).
    InvalidValue,
    /// Two settings that cannot hold together (`initial` > `max_delay`, …).
    InvalidCombination,
    /// A call that the object's current state does not allow.
    InvalidState,
    /// A manual breaker transition that makes no sense.
    InvalidTransition,
    /// An idempotency key that breaks the key rules.
    InvalidKey,
    /// A header value that cannot be parsed.
    InvalidHeader,
    /// A JSON number that cannot be canonicalised (non-finite, or an integer a double cannot hold).
    InvalidNumber,
    /// A JSON string that cannot be canonicalised (a lone surrogate).
    InvalidString,
    /// Nesting deeper than the documented limit.
    TooDeep,
    /// A malformed JSON pointer, or one that selects nothing.
    InvalidPointer,
    /// A completion with a fencing token older than the record's.
    StaleFence,
    /// A record whose fencing token is ahead of the one presented.
    FenceFromFuture,
    /// A snapshot that is corrupt or of an unknown version.
    InvalidSnapshot,
    /// A snapshot taken from an object with another configuration.
    SnapshotMismatch,
    /// A dead letter that misses a required field or has an invalid one.
    InvalidDeadLetter,
    /// An input too large to accept (a string over the size limit, …).
    TooLarge,
    /// An instant past the largest one an entry point accepts (2^64 ns).
    InvalidTime,
}

impl ErrorCode {
    /// Returns the stable snake_case code of this kind.
    pub const fn code(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "invalid_json",
            ErrorCode::InvalidType => "invalid_type",
            ErrorCode::UnknownKey => "unknown_key",
            ErrorCode::UnknownVersion => "unknown_version",
            ErrorCode::MissingField => "missing_field",
            ErrorCode::InvalidDuration => "invalid_duration",
            ErrorCode::OutOfRange => "out_of_range",
            ErrorCode::InvalidValue => "invalid_value",
            ErrorCode::InvalidCombination => "invalid_combination",
            ErrorCode::InvalidState => "invalid_state",
            ErrorCode::InvalidTransition => "invalid_transition",
            ErrorCode::InvalidKey => "invalid_key",
            ErrorCode::InvalidHeader => "invalid_header",
            ErrorCode::InvalidNumber => "invalid_number",
            ErrorCode::InvalidString => "invalid_string",
            ErrorCode::TooDeep => "too_deep",
            ErrorCode::InvalidPointer => "invalid_pointer",
            ErrorCode::StaleFence => "stale_fence",
            ErrorCode::FenceFromFuture => "fence_from_future",
            ErrorCode::InvalidSnapshot => "invalid_snapshot",
            ErrorCode::SnapshotMismatch => "snapshot_mismatch",
            ErrorCode::InvalidDeadLetter => "invalid_dead_letter",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::InvalidTime => "invalid_time",
        }
    }

    /// Returns true for the codes that mean "this configuration is wrong".
    ///
    /// Bindings raise these as their configuration error (`ConfigError`, a
    /// `ValueError` in Python; `RangeError`/`TypeError` in JavaScript).
    pub const fn is_config(self) -> bool {
        // The configuration family, less `too_large` (an input over a limit,
        // which a host raises as its range error).
        matches!(self.family(), ErrorFamily::Config) && !matches!(self, ErrorCode::TooLarge)
    }

    /// Returns true when a JavaScript host should throw a `TypeError` (a wrong
    /// type or shape) rather than a `RangeError` (a value out of its range).
    pub const fn is_type_error(self) -> bool {
        matches!(
            self,
            ErrorCode::InvalidJson | ErrorCode::InvalidType | ErrorCode::UnknownKey | ErrorCode::MissingField
        )
    }

    /// Every code, in declaration order (for docs and drift tests).
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidJson,
        ErrorCode::InvalidType,
        ErrorCode::UnknownKey,
        ErrorCode::UnknownVersion,
        ErrorCode::MissingField,
        ErrorCode::InvalidDuration,
        ErrorCode::OutOfRange,
        ErrorCode::InvalidValue,
        ErrorCode::InvalidCombination,
        ErrorCode::InvalidState,
        ErrorCode::InvalidTransition,
        ErrorCode::InvalidKey,
        ErrorCode::InvalidHeader,
        ErrorCode::InvalidNumber,
        ErrorCode::InvalidString,
        ErrorCode::TooDeep,
        ErrorCode::InvalidPointer,
        ErrorCode::StaleFence,
        ErrorCode::FenceFromFuture,
        ErrorCode::InvalidSnapshot,
        ErrorCode::SnapshotMismatch,
        ErrorCode::InvalidDeadLetter,
        ErrorCode::TooLarge,
        ErrorCode::InvalidTime,
    ];
}

/// The family of an [`ErrorCode`]: with the [`ErrorDomain`] the error is
/// raised in, it decides the [`ErrorClass`] a host raises
/// ([`ErrorCode::class`]), so no host keeps its own code → class table.
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorFamily {
    /// A configuration, document or argument is invalid.
    Config,
    /// The object's state does not allow the call.
    State,
    /// A snapshot is corrupt, of an unknown version or from other settings.
    Snapshot,
    /// An idempotency key or `Idempotency-Key` header breaks the key rules.
    Key,
    /// A value has no canonical JSON (numbers, strings, depth, pointers).
    Fingerprint,
    /// A completion or renewal with a stale or future fencing token.
    Fence,
    /// A dead letter misses a field or has an invalid one.
    DeadLetter,
}

impl ErrorFamily {
    /// Returns the stable snake_case name (`"config"`, `"state"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorFamily::Config => "config",
            ErrorFamily::State => "state",
            ErrorFamily::Snapshot => "snapshot",
            ErrorFamily::Key => "key",
            ErrorFamily::Fingerprint => "fingerprint",
            ErrorFamily::Fence => "fence",
            ErrorFamily::DeadLetter => "dead_letter",
        }
    }
}

impl ErrorCode {
    /// Returns the family of this code (with the domain, the class it becomes).
    ///
    /// `too_large` is a configuration error wherever it comes from: an
    /// input over a documented limit.
    pub const fn family(self) -> ErrorFamily {
        match self {
            ErrorCode::InvalidState | ErrorCode::InvalidTransition => ErrorFamily::State,
            ErrorCode::InvalidSnapshot | ErrorCode::SnapshotMismatch => ErrorFamily::Snapshot,
            ErrorCode::InvalidKey | ErrorCode::InvalidHeader => ErrorFamily::Key,
            ErrorCode::InvalidNumber | ErrorCode::InvalidString | ErrorCode::TooDeep | ErrorCode::InvalidPointer => {
                ErrorFamily::Fingerprint
            }
            ErrorCode::StaleFence | ErrorCode::FenceFromFuture => ErrorFamily::Fence,
            ErrorCode::InvalidDeadLetter => ErrorFamily::DeadLetter,
            ErrorCode::InvalidJson
            | ErrorCode::InvalidType
            | ErrorCode::UnknownKey
            | ErrorCode::UnknownVersion
            | ErrorCode::MissingField
            | ErrorCode::InvalidDuration
            | ErrorCode::OutOfRange
            | ErrorCode::InvalidValue
            | ErrorCode::InvalidCombination
            | ErrorCode::TooLarge
            | ErrorCode::InvalidTime => ErrorFamily::Config,
        }
    }
}

/// Where an error is raised: with the code's [`ErrorFamily`], it decides the
/// [`ErrorClass`] a host raises.
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorDomain {
    /// Options, documents and arguments, and the objects they build
    /// (policies, sessions, breakers, budgets).
    Config,
    /// The idempotency functions: keys, headers, canonical JSON and
    /// fingerprints, records, dead letters.
    Idempotency,
}

impl ErrorDomain {
    /// Every domain, in declaration order.
    pub const ALL: [ErrorDomain; 2] = [ErrorDomain::Config, ErrorDomain::Idempotency];

    /// Returns the stable snake_case name (`"config"`, `"idempotency"`).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorDomain::Config => "config",
            ErrorDomain::Idempotency => "idempotency",
        }
    }
}

/// The class of error a host raises for a code in a domain, from a closed
/// list each host maps to its idiom ([`ErrorCode::class`]).
///
/// Python raises the class of the same name (`ConfigError`,
/// `ConfigTypeError`, `IdempotencyError`, `IdempotencyTypeError`,
/// `StateError`, `SnapshotError`, `InvalidKeyError`, `FingerprintError`,
/// `FenceError`, `DeadLetterError`); JavaScript throws `TypeError` for the
/// two type classes, `RangeError` for the other argument classes
/// ([`Config`], [`Idempotency`], [`Fingerprint`]), `IdempotencyError` for
/// the key, fence and dead-letter classes and `RetrycoreError` for the state
/// and snapshot classes (docs/hosts.md, "Error classes").
///
/// [`Config`]: ErrorClass::Config
/// [`Idempotency`]: ErrorClass::Idempotency
/// [`Fingerprint`]: ErrorClass::Fingerprint
#[non_exhaustive]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// A bad value in options, a document or an argument.
    Config,
    /// A value of the wrong type or shape in options, a document or an argument.
    ConfigType,
    /// A bad value given to an idempotency function.
    Idempotency,
    /// A value of the wrong type or shape given to an idempotency function.
    IdempotencyType,
    /// A call the object's state does not allow.
    State,
    /// A snapshot that is corrupt, of an unknown version or from other settings.
    Snapshot,
    /// An idempotency key or header that breaks the key rules.
    Key,
    /// A value given to an idempotency function that has no canonical JSON.
    Fingerprint,
    /// A stale or future fencing token.
    Fence,
    /// A dead letter that misses a field or has an invalid one.
    DeadLetter,
}

impl ErrorClass {
    /// Every class, in declaration order.
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::Config,
        ErrorClass::ConfigType,
        ErrorClass::Idempotency,
        ErrorClass::IdempotencyType,
        ErrorClass::State,
        ErrorClass::Snapshot,
        ErrorClass::Key,
        ErrorClass::Fingerprint,
        ErrorClass::Fence,
        ErrorClass::DeadLetter,
    ];

    /// Returns the stable snake_case name (`"config"`, `"config_type"`, …).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorClass::Config => "config",
            ErrorClass::ConfigType => "config_type",
            ErrorClass::Idempotency => "idempotency",
            ErrorClass::IdempotencyType => "idempotency_type",
            ErrorClass::State => "state",
            ErrorClass::Snapshot => "snapshot",
            ErrorClass::Key => "key",
            ErrorClass::Fingerprint => "fingerprint",
            ErrorClass::Fence => "fence",
            ErrorClass::DeadLetter => "dead_letter",
        }
    }
}

impl ErrorCode {
    /// Returns the class a host raises for this code when it is raised in
    /// `domain`.
    ///
    /// The family decides, and the domain only refines the two families
    /// whose meaning depends on where they are met: a configuration code from
    /// an idempotency function is an idempotency argument error, and a
    /// fingerprint code met outside them (`too_deep` in a policy document)
    /// makes the document invalid. A state code is a state error wherever it
    /// is raised (a record that is not processing, a sent dead letter).
    pub const fn class(self, domain: ErrorDomain) -> ErrorClass {
        let typed = self.is_type_error();
        match (self.family(), domain) {
            (ErrorFamily::Config, ErrorDomain::Idempotency) if typed => ErrorClass::IdempotencyType,
            (ErrorFamily::Config, ErrorDomain::Idempotency) => ErrorClass::Idempotency,
            (ErrorFamily::Config | ErrorFamily::Fingerprint, ErrorDomain::Config) if typed => ErrorClass::ConfigType,
            (ErrorFamily::Config | ErrorFamily::Fingerprint, ErrorDomain::Config) => ErrorClass::Config,
            (ErrorFamily::Fingerprint, ErrorDomain::Idempotency) => ErrorClass::Fingerprint,
            (ErrorFamily::State, _) => ErrorClass::State,
            (ErrorFamily::Snapshot, _) => ErrorClass::Snapshot,
            (ErrorFamily::Key, _) => ErrorClass::Key,
            (ErrorFamily::Fence, _) => ErrorClass::Fence,
            (ErrorFamily::DeadLetter, _) => ErrorClass::DeadLetter,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An error with a stable [`ErrorCode`], the field it concerns and a
/// lowercase reason without a trailing period.
///
/// Displayed as `field: reason` (or just the reason when no field applies).
///
/// One pointer wide (its parts are boxed): every `Result` the core returns
/// stays small, which keeps the code that passes errors up small too
/// (docs/js.md, "Size").
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Parts>);

#[derive(Clone, PartialEq, Eq)]
struct Parts {
    code: ErrorCode,
    field: Cow<'static, str>,
    reason: String,
}

impl Error {
    /// Creates an error of the given kind about `field`.
    pub fn new(code: ErrorCode, field: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        Error(Box::new(Parts { code, field: field.into(), reason: reason.into() }))
    }

    /// Returns the kind of the error.
    pub fn kind(&self) -> ErrorCode {
        self.0.code
    }

    /// Returns the stable snake_case code (`"invalid_duration"`, …).
    pub fn code(&self) -> &'static str {
        self.0.code.code()
    }

    /// Returns the dotted path of the field concerned (`"backoff.initial"`), or `""`.
    pub fn field(&self) -> &str {
        &self.0.field
    }

    /// Returns the reason alone, without the field.
    pub fn reason(&self) -> &str {
        &self.0.reason
    }

    /// Returns the same error about `prefix.field` (used when a nested
    /// document is read as part of a larger one).
    pub fn within(mut self, prefix: &str) -> Self {
        if prefix.is_empty() {
            return self;
        }
        let field = &self.0.field;
        self.0.field = if field.is_empty() {
            Cow::Owned(prefix.to_owned())
        } else if field.starts_with('[') {
            Cow::Owned(format!("{prefix}{field}"))
        } else {
            Cow::Owned(format!("{prefix}.{field}"))
        };
        self
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.0.code)
            .field("field", &self.0.field)
            .field("reason", &self.0.reason)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.field.is_empty() {
            f.write_str(&self.0.reason)
        } else {
            write!(f, "{}: {}", self.0.field, self.0.reason)
        }
    }
}

impl std::error::Error for Error {}

/// The result type of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_follows_the_family_and_the_domain_refines_it() {
        use ErrorDomain::{Config as C, Idempotency as I};
        let cases = [
            (ErrorCode::OutOfRange, C, ErrorClass::Config),
            (ErrorCode::InvalidType, C, ErrorClass::ConfigType),
            (ErrorCode::OutOfRange, I, ErrorClass::Idempotency),
            (ErrorCode::MissingField, I, ErrorClass::IdempotencyType),
            (ErrorCode::TooDeep, C, ErrorClass::Config),
            (ErrorCode::TooDeep, I, ErrorClass::Fingerprint),
            (ErrorCode::InvalidState, C, ErrorClass::State),
            (ErrorCode::InvalidState, I, ErrorClass::State),
            (ErrorCode::InvalidSnapshot, C, ErrorClass::Snapshot),
            (ErrorCode::InvalidKey, C, ErrorClass::Key),
            (ErrorCode::StaleFence, C, ErrorClass::Fence),
            (ErrorCode::InvalidDeadLetter, I, ErrorClass::DeadLetter),
        ];
        for (code, domain, class) in cases {
            assert_eq!(code.class(domain), class, "{code} in {}", domain.code());
        }
        // Every class is reached, and only type-error codes reach a type class.
        for class in ErrorClass::ALL {
            let reached = ErrorCode::ALL.iter().any(|c| ErrorDomain::ALL.iter().any(|d| c.class(*d) == class));
            assert!(reached, "{}", class.code());
        }
        for c in ErrorCode::ALL {
            for d in ErrorDomain::ALL {
                let typed = matches!(c.class(d), ErrorClass::ConfigType | ErrorClass::IdempotencyType);
                assert_eq!(typed, c.is_type_error(), "{c} in {}", d.code());
            }
        }
    }
}
