//! Tidy tests: the architecture invariants of ARCHITECTURE.md, checked mechanically over the
//! source tree so that they stay true.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("readable dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                if p.file_name()
                    .is_some_and(|n| n != "target" && n != "node_modules")
                {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The part of a source file outside its `#[cfg(test)]` module.
fn non_test_code(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

/// The names under `[section]` of a manifest, one per `name = ...` or `name.workspace` line.
fn manifest_keys(manifest: &str, section: &str) -> Vec<String> {
    let mut inside = false;
    let mut keys = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == section;
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let key = line.split(['=', '.']).next().unwrap_or("").trim();
            keys.push(key.to_owned());
        }
    }
    keys
}

#[test]
fn the_core_depends_on_nothing_that_touches_a_browser_a_terminal_or_files() {
    let manifest = fs::read_to_string(root().join("crates/ratelab/Cargo.toml")).expect("manifest");
    let allowed = ["rand_core", "rand_pcg", "libm", "serde"];
    let deps = manifest_keys(&manifest, "[dependencies]");
    assert!(!deps.is_empty(), "no dependencies section parsed");
    for dep in &deps {
        assert!(
            allowed.contains(&dep.as_str()),
            "the core must not depend on {dep}; allowed: {allowed:?}"
        );
    }
    for section in [
        "[target.'cfg(target_arch = \"wasm32\")'.dependencies]",
        "[build-dependencies]",
    ] {
        assert!(
            manifest_keys(&manifest, section).is_empty(),
            "the core has {section}"
        );
    }
}

#[test]
fn the_core_never_reads_a_clock_does_io_or_iterates_a_hash_map() {
    let forbidden = [
        "Instant",
        "SystemTime",
        "std::fs",
        "std::io",
        "std::net",
        "std::env",
        "std::process",
        "println!",
        "eprintln!",
        "print!",
        "HashMap",
        "HashSet",
        "thread_rng",
        "SmallRng",
        "unsafe",
    ];
    for file in rust_files(&root().join("crates/ratelab/src")) {
        let text = fs::read_to_string(&file).expect("source");
        for word in forbidden {
            assert!(
                !non_test_code(&text).contains(word),
                "{} uses {word}",
                file.display()
            );
        }
    }
}

#[test]
fn transcendental_functions_in_the_core_come_from_libm() {
    // std's ln/exp/powf call the platform's maths library natively and a Rust port in wasm;
    // libm is the same code on both, which keeps reports bit-identical.
    let forbidden = [
        ".ln(", ".exp(", ".powf(", ".log(", ".log10(", ".log2(", ".sin(", ".cos(", ".tan(",
        ".ln_1p(", ".exp_m1(", ".cbrt(",
    ];
    for file in rust_files(&root().join("crates/ratelab/src")) {
        let text = fs::read_to_string(&file).expect("source");
        for call in forbidden {
            assert!(
                !non_test_code(&text).contains(call),
                "{} calls {call}: use libm",
                file.display()
            );
        }
    }
}

#[test]
fn every_rust_file_says_what_it_is_for() {
    for file in rust_files(&root().join("crates")) {
        let text = fs::read_to_string(&file).expect("source");
        assert!(
            text.starts_with("//!"),
            "{} does not start with a //! doc",
            file.display()
        );
    }
}

#[test]
fn every_crate_folder_is_named_like_its_crate_and_described_in_the_architecture() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    for entry in fs::read_dir(root().join("crates"))
        .expect("crates")
        .flatten()
    {
        let folder = entry.file_name().to_string_lossy().into_owned();
        let manifest = fs::read_to_string(entry.path().join("Cargo.toml")).expect("crate manifest");
        assert!(
            manifest.contains(&format!("name = \"{folder}\"")),
            "crates/{folder} is not the crate {folder}"
        );
        assert!(
            architecture.contains(&format!("`{folder}`")),
            "ARCHITECTURE.md does not describe `{folder}`"
        );
    }
}

#[test]
fn wasm_bindgen_is_pinned_to_the_cli_version() {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).expect("workspace manifest");
    let xtask = fs::read_to_string(root().join("crates/xtask/src/main.rs")).expect("xtask");
    let pinned = manifest
        .lines()
        .find(|l| l.starts_with("wasm-bindgen ="))
        .expect("wasm-bindgen in [workspace.dependencies]");
    let version = pinned.split('"').nth(1).expect("a version");
    assert!(
        version.starts_with('='),
        "wasm-bindgen must be pinned with '=': {pinned}"
    );
    assert!(
        xtask.contains(&format!(
            "const WASM_BINDGEN: &str = \"{}\";",
            &version[1..]
        )),
        "xtask installs a different wasm-bindgen-cli than the crate version {version}"
    );
}

#[test]
fn the_readme_opens_with_the_two_commands_and_ci_runs_the_test_one() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let opening: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    assert!(
        opening.contains("cargo xtask serve") && opening.contains("cargo xtask test"),
        "{opening}"
    );
    let ci = fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo xtask test"),
        ".ci/run must call cargo xtask test"
    );
}
