//! Why a line is malformed: each reason names what is wrong and what is accepted, in the exact
//! words a [`super::BadLine`] carries.

use std::fmt;

/// Why a line is malformed: what is wrong, and what is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    /// The line is not UTF-8.
    NotUtf8,
    /// The line is longer than 64 KiB.
    TooLong,
    /// The line looks like no format (auto-detection).
    NotTimestamp,
    /// Not a number of epoch seconds.
    NotSeconds,
    /// Not a number of epoch milliseconds.
    NotMillis,
    /// A negative number.
    Negative,
    /// A time after the year 9999.
    TooLate,
    /// A time before 1970 (an ISO or access-log time with its zone).
    Before1970,
    /// Not an ISO 8601 time.
    NotIso,
    /// An ISO year outside 1970 to 9999.
    BadYear,
    /// A month or day that does not exist.
    BadDate,
    /// An hour, minute or second that does not exist.
    BadClock,
    /// A malformed time zone.
    BadZone,
    /// Not an access-log line.
    NotAccess,
    /// A malformed access-log time.
    BadClfTime,
    /// A quoted access-log field left open.
    UnclosedQuote,
    /// An access-log status that is not three digits.
    BadStatus,
    /// An access-log response size that is neither a number nor `-`.
    BadBytes,
}

impl Reason {
    /// The message: what is wrong, a colon, and what is expected.
    pub(super) fn message(self) -> &'static str {
        match self {
            Reason::NotUtf8 => "not UTF-8: expected UTF-8 text",
            Reason::TooLong => "longer than 64 KiB: expected lines of at most 65536 bytes",
            Reason::NotTimestamp => "not a timestamp: expected epoch seconds, epoch ms, an ISO 8601 time or an access-log line",
            Reason::NotSeconds => "not a number of seconds: expected epoch seconds like 1700000000.25",
            Reason::NotMillis => "not a number of milliseconds: expected epoch ms like 1700000000250",
            Reason::Negative => "negative: expected a time counted from 1970-01-01 (the Unix epoch)",
            Reason::TooLate => "after the year 9999: expected a time from 1970 to 9999",
            Reason::Before1970 => "before 1970: expected a time from 1970-01-01T00:00:00Z on",
            Reason::NotIso => "not an ISO 8601 time: expected YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]",
            Reason::BadYear => "year out of range: expected 1970 to 9999",
            Reason::BadDate => "no such date: expected a month 01-12 and a day that month has",
            Reason::BadClock => "no such time of day: expected hours 00-23, minutes and seconds 00-59",
            Reason::BadZone => "bad time zone: expected Z, ±HH:MM, ±HHMM or ±HH, hours 00-23",
            Reason::NotAccess => "not an access-log line: expected host ident user [dd/Mon/yyyy:HH:MM:SS ±hhmm] \"request\" status bytes",
            Reason::BadClfTime => "bad access-log time: expected [dd/Mon/yyyy:HH:MM:SS ±hhmm], like [10/Oct/2000:13:55:36 -0700]",
            Reason::UnclosedQuote => "a quoted field is not closed: expected \"...\" with inner quotes as \\\"",
            Reason::BadStatus => "bad status: expected three digits, like 200",
            Reason::BadBytes => "bad response size: expected a number of bytes or -",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::Reason;

    /// The messages as they were when they were constants: reports and tests quote them.
    #[test]
    fn every_reason_says_what_is_wrong_and_what_is_expected_in_its_old_words() {
        let expected = [
            (Reason::NotUtf8, "not UTF-8: expected UTF-8 text"),
            (Reason::TooLong, "longer than 64 KiB: expected lines of at most 65536 bytes"),
            (Reason::NotTimestamp, "not a timestamp: expected epoch seconds, epoch ms, an ISO 8601 time or an access-log line"),
            (Reason::NotSeconds, "not a number of seconds: expected epoch seconds like 1700000000.25"),
            (Reason::NotMillis, "not a number of milliseconds: expected epoch ms like 1700000000250"),
            (Reason::Negative, "negative: expected a time counted from 1970-01-01 (the Unix epoch)"),
            (Reason::TooLate, "after the year 9999: expected a time from 1970 to 9999"),
            (Reason::Before1970, "before 1970: expected a time from 1970-01-01T00:00:00Z on"),
            (Reason::NotIso, "not an ISO 8601 time: expected YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM|±HHMM|±HH]"),
            (Reason::BadYear, "year out of range: expected 1970 to 9999"),
            (Reason::BadDate, "no such date: expected a month 01-12 and a day that month has"),
            (Reason::BadClock, "no such time of day: expected hours 00-23, minutes and seconds 00-59"),
            (Reason::BadZone, "bad time zone: expected Z, ±HH:MM, ±HHMM or ±HH, hours 00-23"),
            (Reason::NotAccess, "not an access-log line: expected host ident user [dd/Mon/yyyy:HH:MM:SS ±hhmm] \"request\" status bytes"),
            (Reason::BadClfTime, "bad access-log time: expected [dd/Mon/yyyy:HH:MM:SS ±hhmm], like [10/Oct/2000:13:55:36 -0700]"),
            (Reason::UnclosedQuote, "a quoted field is not closed: expected \"...\" with inner quotes as \\\""),
            (Reason::BadStatus, "bad status: expected three digits, like 200"),
            (Reason::BadBytes, "bad response size: expected a number of bytes or -"),
        ];
        assert_eq!(expected.len(), 18);
        for (reason, text) in expected {
            assert_eq!(reason.message(), text);
            assert_eq!(reason.to_string(), text);
            assert!(text.contains(": expected"), "{text}");
        }
    }
}
