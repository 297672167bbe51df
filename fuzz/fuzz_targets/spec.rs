//! Fuzz target `spec`: the checks are `ratelab_fuzz_logic::spec`, shared with the corpus replay.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ratelab_fuzz_logic::spec::check(data);
});
