//! The checks of fuzz target `url_state`: any query string (UTF-8, or any bytes read lossily) into
//! `ratelab_page::link::decode`. Decoding never panics, every problem message is under 1,000
//! characters, and what it decoded survives a link: `decode(encode(...))` of the decoded
//! controls, compare mode and section controls has no problems and gives them back unchanged.
use ratelab_page::link::{decode, encode};

/// Checks one input; panics on a broken law. Every input is used (returns `true`).
pub fn check(data: &[u8]) -> bool {
    let query = String::from_utf8_lossy(data);
    let decoded = decode(&query);
    for p in &decoded.problems {
        let chars = p.message.chars().count();
        assert!(
            chars < 1_000,
            "a problem message of {chars} characters for {query:?}: {:?}",
            p.message
        );
    }
    let link = encode(&decoded.controls, decoded.compare, &decoded.sections);
    let again = decode(&link);
    assert!(
        again.problems.is_empty(),
        "{query:?} re-encoded as {link:?} has problems: {:?}",
        again.problems
    );
    assert_eq!(again.controls, decoded.controls, "{query:?} -> {link:?}");
    assert_eq!(again.compare, decoded.compare, "{query:?} -> {link:?}");
    assert_eq!(again.sections, decoded.sections, "{query:?} -> {link:?}");
    assert_eq!(
        encode(&again.controls, again.compare, &again.sections),
        link
    );
    true
}
