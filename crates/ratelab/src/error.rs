//! The one error type of the core: what a person got wrong in a scenario, and what is accepted.
//!
//! Every message is a single line that names the bad part and says what would be accepted,
//! so the CLI can print it as it is and the page can show it beside the control.

use std::fmt;

/// A configuration error. Nothing in the core panics on user input; it returns one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A value that does not parse or is out of range.
    Invalid {
        /// The parameter, e.g. `window` or `token-bucket: burst`.
        what: String,
        /// What was given, as given.
        got: String,
        /// What would be accepted.
        accepted: String,
    },
    /// A name that is not one of a fixed set (a limiter, a traffic shape, a key).
    Unknown {
        /// The kind of name, e.g. `limiter` or `key for token-bucket`.
        what: String,
        /// The name given.
        got: String,
        /// The names accepted.
        accepted: String,
    },
    /// A required key is missing.
    Missing {
        /// Where it is missing, e.g. `traffic replay`.
        what: String,
        /// The key.
        key: String,
        /// An example of a complete spec.
        example: String,
    },
    /// A file that cannot be imported as a whole: empty, compressed, binary, or without one
    /// usable line.
    BadFile {
        /// What is wrong with it, after "the file", e.g. `is gzip-compressed`.
        problem: String,
        /// What would be accepted.
        accepted: String,
    },
    /// A scenario that would take too much work or memory to run.
    TooLarge {
        /// What is too large.
        what: String,
        /// The estimate and the cap.
        detail: String,
    },
}

impl Error {
    pub(crate) fn invalid(what: &str, got: &str, accepted: &str) -> Self {
        Error::Invalid {
            what: what.to_owned(),
            got: got.to_owned(),
            accepted: accepted.to_owned(),
        }
    }

    pub(crate) fn unknown(what: &str, got: &str, accepted: &str) -> Self {
        Error::Unknown {
            what: what.to_owned(),
            got: got.to_owned(),
            accepted: accepted.to_owned(),
        }
    }

    /// The parameter the error is about, for a page that marks the control.
    pub fn subject(&self) -> &str {
        match self {
            Error::Invalid { what, .. }
            | Error::Unknown { what, .. }
            | Error::Missing { what, .. }
            | Error::TooLarge { what, .. } => what,
            Error::BadFile { .. } => "file",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid {
                what,
                got,
                accepted,
            } => {
                write!(
                    f,
                    "invalid {what} '{}': expected {accepted}",
                    crate::text::shown(got, crate::text::SHOWN)
                )
            }
            Error::Unknown {
                what,
                got,
                accepted,
            } => {
                write!(
                    f,
                    "unknown {what} '{}': accepted are {accepted}",
                    crate::text::shown(got, crate::text::SHOWN)
                )
            }
            Error::Missing { what, key, example } => {
                write!(f, "{what} needs {key}, e.g. {example}")
            }
            Error::BadFile { problem, accepted } => {
                write!(f, "the file {problem}: expected {accepted}")
            }
            Error::TooLarge { what, detail } => write!(f, "{what} is too large: {detail}"),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_name_the_part() {
        let e = Error::invalid("window", "1m\nx", "a duration");
        let msg = e.to_string();
        assert_eq!(msg, "invalid window '1m\\nx': expected a duration");
        let long = "x".repeat(10_000);
        let msg = Error::unknown("limiter", &long, "a, b").to_string();
        assert!(msg.len() < 200, "{msg}");
        assert_eq!(Error::unknown("limiter", "z", "a").subject(), "limiter");
    }
}
