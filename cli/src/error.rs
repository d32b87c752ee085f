//! The CLI's one error type: a one-line message and an exit code.

use std::fmt;

/// An error the CLI reports on one line of stderr before exiting.
#[derive(Debug)]
pub struct CliError {
    message: String,
    code: u8,
}

impl CliError {
    /// Creates an input or usage error (exit code 2).
    pub fn input(message: impl Into<String>) -> Self {
        CliError { message: one_line(message.into()), code: 2 }
    }

    /// Creates an error while writing output (exit code 2 as well: the
    /// command could not do what was asked).
    pub fn output(message: impl Into<String>) -> Self {
        CliError { message: one_line(message.into()), code: 2 }
    }

    /// Returns the process exit code.
    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Joins a message's lines so the error stays on one line.
fn one_line(s: String) -> String {
    if s.contains('\n') {
        s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
    } else {
        s
    }
}
