//! Fuzz target `limiter_laws`: the checks are `ratelab_fuzz_logic::limiter_laws`, shared with
//! the corpus replay. An input that does not decode to a case is kept out of the corpus, as
//! when this target took the typed case directly.
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};

fuzz_target!(|data: &[u8]| -> Corpus {
    if ratelab_fuzz_logic::limiter_laws::check(data) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});
