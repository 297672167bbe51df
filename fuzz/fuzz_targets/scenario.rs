//! Fuzz target `scenario`: the checks are `ratelab_fuzz_logic::scenario`, shared with the
//! corpus replay. An input with no line the reader knows is kept out of the corpus.
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};

fuzz_target!(|data: &[u8]| -> Corpus {
    if ratelab_fuzz_logic::scenario::check(data) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});
