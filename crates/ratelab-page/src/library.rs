//! The libraries' limiters in the lab: which kinds they are, an example of each one's
//! settings, and the settings as the form and a link take them (their keys and values are the
//! core's to check when the library runs, in the tools module, which has their code).

use ratelab::spec::LimiterKind;

/// Whether `kind` is one of the libraries' limiters, which only the tools module runs.
pub fn is_library(kind: LimiterKind) -> bool {
    // (`LIBRARIES.contains` costs the main module more; a test holds the two alike.)
    matches!(
        kind,
        LimiterKind::ExpressRateLimit
            | LimiterKind::RateLimiterFlexible
            | LimiterKind::GoRate
            | LimiterKind::RedisCell
            | LimiterKind::Vsthrottle
            | LimiterKind::Limits
    )
}

#[cfg(test)]
#[test]
fn the_libraries_are_the_cores() {
    let all = LimiterKind::ALL
        .into_iter()
        .chain(LimiterKind::REAL)
        .chain(LimiterKind::LIBRARIES);
    for kind in all {
        assert_eq!(
            is_library(kind),
            LimiterKind::LIBRARIES.contains(&kind),
            "{kind:?}"
        );
    }
}

/// The longest library settings the form and a link take, in bytes.
pub const MOST_LIBRARY_KEYS: usize = 200;

/// A library's settings as the reader typed them, trimmed; their keys and values are the
/// core's to check when the library runs (in the tools module, which has its code, with a
/// message naming a wrong key and the keys taken). Refused here, in the main module's few
/// bytes: settings too long to be any library's, or on more than one line. Kept whatever the
/// algorithm, so that switching back and forth loses nothing.
pub fn library_keys(text: &str) -> Result<String, String> {
    let keys = text.trim();
    if keys.len() > MOST_LIBRARY_KEYS || keys.bytes().any(|b| b.is_ascii_control()) {
        return Err(format!(
            "Library settings of {} bytes or on more than one line are not taken: at most {MOST_LIBRARY_KEYS} bytes on one line, as the command line writes them after the name (like r=10,b=5 for go-rate)",
            keys.len()
        ));
    }
    Ok(keys.to_owned())
}
