//! Every input the fuzzers kept, replayed through the targets' checks on stable Rust: the
//! committed corpus of each target (`fuzz/corpus/TARGET/`) and the inputs that once crashed it
//! (`fuzz/crashes-found/TARGET/`). A missing or emptied corpus fails too, so a green run means
//! the whole corpus was checked.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted by name; none when it does not exist.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Replays every input of `target` through its check; fails on the first directory that is
/// missing or too small and on every input whose check panics (all are named).
///
/// `at_least` is a floor a little under the committed count, so that losing the corpus (a
/// moved folder, a bad checkout) fails instead of replaying nothing.
fn replay(target: &str, at_least: usize) {
    let check = ratelab_fuzz_logic::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|&(_, check)| check)
        .expect("a known target");
    let corpus = inputs(&fuzz_dir().join("corpus").join(target));
    assert!(
        corpus.len() >= at_least,
        "fuzz/corpus/{target}/ has {} inputs, expected at least {at_least}",
        corpus.len()
    );
    let crashes = inputs(&fuzz_dir().join("crashes-found").join(target));
    let started = Instant::now();
    let (mut used, mut failed) = (0, Vec::new());
    // The panic messages of failing inputs are printed as they happen; the names are
    // collected so that one run lists every failing input.
    for file in corpus.iter().chain(&crashes) {
        let data = fs::read(file).expect("a readable input");
        match catch_unwind(AssertUnwindSafe(|| check(&data))) {
            Ok(true) => used += 1,
            Ok(false) => {}
            Err(_) => failed.push(file.display().to_string()),
        }
    }
    let total = corpus.len() + crashes.len();
    println!(
        "{target}: {total} inputs ({} corpus, {} crashes-found), {used} used, in {:.2} s",
        corpus.len(),
        crashes.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "{} of {total} inputs of {target} broke a law:\n{}",
        failed.len(),
        failed.join("\n")
    );
    // The fuzzer keeps only inputs that reached new code, which a too-short input does not:
    // nearly all must be used, or the replay would be checking nothing.
    assert!(
        used * 100 >= total * 95,
        "{target}: only {used} of {total} inputs were long enough to be used"
    );
}

#[test]
fn spec_corpus() {
    replay("spec", 400);
}

#[test]
fn url_state_corpus() {
    replay("url_state", 550);
}

#[test]
fn import_corpus() {
    replay("import", 1_600);
}

#[test]
fn limiter_laws_corpus() {
    replay("limiter_laws", 280);
}

#[test]
fn scenario_corpus() {
    replay("scenario", 250);
}

#[test]
fn every_target_of_fuzz_has_a_corpus_replay() {
    // The targets fuzz/Cargo.toml builds are exactly those replayed here.
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let mut built: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .filter_map(|l| l.strip_suffix('"'))
        .filter(|&n| n != "ratelab-fuzz")
        .collect();
    built.sort_unstable();
    let mut replayed: Vec<&str> = ratelab_fuzz_logic::TARGETS.iter().map(|t| t.0).collect();
    replayed.sort_unstable();
    assert_eq!(built, replayed);
    let this = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus.rs"))
        .expect("this file");
    let xtask = fs::read_to_string(fuzz_dir().join("../crates/xtask/src/main.rs")).expect("xtask");
    for target in replayed {
        assert!(
            this.contains(&format!("fn {target}_corpus()")),
            "no {target}_corpus test"
        );
        assert!(
            xtask.contains(&format!("(\"{target}\", ")),
            "cargo xtask fuzz does not run {target}"
        );
    }
}
