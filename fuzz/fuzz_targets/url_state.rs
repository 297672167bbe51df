//! Fuzz target `url_state`: the checks are `ratelab_fuzz_logic::url_state`, shared with the corpus replay.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ratelab_fuzz_logic::url_state::check(data);
});
