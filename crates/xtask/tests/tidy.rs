//! Tidy tests: the architecture invariants of ARCHITECTURE.md, checked mechanically over the
//! source tree so that they stay true.

use std::collections::{BTreeMap, BTreeSet};
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

/// The part of a source file before its `#[cfg(test)]` module: up to the first
/// `#[cfg(test)]` whose item, past further attributes and comments, is a module (an import or
/// a constant kept for the tests is not where the tests start).
fn non_test_code(text: &str) -> &str {
    let mut from = 0;
    while let Some(at) = text[from..].find("#[cfg(test)]") {
        let start = from + at;
        let after = &text[start + "#[cfg(test)]".len()..];
        let item = after
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("#[") && !l.starts_with("//"));
        if item.is_some_and(|l| l.starts_with("mod ") || l.starts_with("pub mod ")) {
            return &text[..start];
        }
        from = start + 1;
    }
    text
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

/// Fails unless crate `name`'s `[dependencies]` are among `allowed`; returns its manifest.
fn depends_only_on(name: &str, allowed: &[&str]) -> String {
    let path = root().join("crates").join(name).join("Cargo.toml");
    let manifest = fs::read_to_string(path).expect("manifest");
    let deps = manifest_keys(&manifest, "[dependencies]");
    assert!(!deps.is_empty(), "no dependencies section parsed");
    for dep in &deps {
        assert!(
            allowed.contains(&dep.as_str()),
            "{name} must not depend on {dep}; allowed: {allowed:?}"
        );
    }
    manifest
}

#[test]
fn the_core_depends_on_nothing_that_touches_a_browser_a_terminal_or_files() {
    let manifest = depends_only_on("ratelab", &["libm", "serde"]);
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
fn the_pages_logic_is_plain_rust_with_no_browser_in_it() {
    // ratelab-page decides what the page shows; only the wasm crates bind it to a browser.
    depends_only_on("ratelab-page", &["ratelab", "ratelab-charts", "serde"]);
    for file in rust_files(&root().join("crates/ratelab-page/src")) {
        let text = fs::read_to_string(&file).expect("source");
        for word in ["wasm_bindgen", "web_sys", "js_sys", "JsValue"] {
            assert!(!text.contains(word), "{} uses {word}", file.display());
        }
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

/// A Rust identifier at the start of `s`.
fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The first name of every path a `crate::` reference in `code` starts: `x` of
/// `crate::x::y`, and `x`, `y` of `crate::{x::a, y}`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `ratelab_crate::` or the like, not this crate's root.
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.push(ident(group[start..i].trim()).to_owned());
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(ident(group[start..i].trim()).to_owned());
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest).to_owned());
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// `text` with every `//` comment (doc comments included) removed: an intra-doc link is not
/// a dependency.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The core's top-level modules and, for each, the other top-level modules its code refers to
/// through `crate::` (items the crate root re-exports count for the module that defines them),
/// with the first file and line of each reference. Tests inside the modules count too.
fn core_module_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = root().join("crates/ratelab/src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let lib = without_comments(&lib);
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for line in lib.lines().map(str::trim) {
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
        {
            graph.insert(ident(name).to_owned(), BTreeMap::new());
        } else if let Some(path) = line.strip_prefix("pub use ") {
            let module = ident(path);
            let items = path[module.len()..].trim_start_matches("::");
            for item in items.trim_matches(['{', '}', ';']).split(',') {
                reexported.insert(ident(item.trim()).to_owned(), module.to_owned());
            }
        }
    }
    assert!(graph.len() > 5, "no modules parsed from lib.rs");
    for file in rust_files(&src) {
        let relative = file.strip_prefix(&src).expect("under src");
        let first = relative
            .components()
            .next()
            .expect("a path")
            .as_os_str()
            .to_string_lossy();
        let from = first.trim_end_matches(".rs").to_owned();
        if from == "lib" {
            continue;
        }
        assert!(
            graph.contains_key(&from),
            "{} is not under a module lib.rs declares",
            relative.display()
        );
        let text = fs::read_to_string(&file).expect("source");
        for (n, line) in without_comments(&text).lines().enumerate() {
            for name in crate_paths(line) {
                let to = if graph.contains_key(&name) {
                    name
                } else if let Some(module) = reexported.get(&name) {
                    module.clone()
                } else {
                    panic!(
                        "{}:{}: crate::{name} is neither a module nor re-exported by lib.rs",
                        relative.display(),
                        n + 1
                    );
                };
                if to != from {
                    let place = format!("{}:{}", relative.display(), n + 1);
                    graph
                        .get_mut(&from)
                        .expect("a module")
                        .entry(to)
                        .or_insert(place);
                }
            }
        }
    }
    graph
}

/// A cycle in `graph`, as the modules along it (the first repeated at the end), if any.
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_core_modules_depend_on_each_other_without_a_cycle() {
    let graph = core_module_graph();
    assert!(
        graph.values().map(BTreeMap::len).sum::<usize>() > 10,
        "too few references parsed: {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        let edges: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} uses {} at {}", w[0], w[1], graph[&w[0]][&w[1]]))
            .collect();
        panic!(
            "the core's modules form a cycle: {}\n{}",
            cycle.join(" -> "),
            edges.join("\n")
        );
    }
}

#[test]
fn the_module_graph_reads_grouped_paths_and_finds_a_cycle() {
    assert_eq!(
        crate_paths("use crate::{a::B, c, d::{e, f}};"),
        ["a", "c", "d"]
    );
    assert_eq!(
        crate_paths("x = crate::time::SECOND; my_crate::z"),
        ["time"]
    );
    let graph: BTreeMap<String, BTreeMap<String, String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| {
        (
            k.to_owned(),
            v.into_iter()
                .map(|t| (t.to_owned(), String::new()))
                .collect(),
        )
    })
    .collect();
    assert_eq!(find_cycle(&graph).expect("a cycle"), ["a", "b", "c", "a"]);
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").expect("c").clear();
    assert_eq!(find_cycle(&acyclic), None);
}

/// The module path of a source file of a crate, from its `src`: `lib.rs` and `main.rs` are the
/// root, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "main.rs" | "mod.rs" => {}
        file => parts.push(file.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// The paths a use tree at the start of `s` names, braces expanded, as segments: `a::{b, c::d}`
/// gives `a::b` and `a::c::d`.
fn use_tree(s: &str) -> Vec<Vec<String>> {
    let mut prefix = Vec::new();
    let mut rest = s.trim_start();
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut out = Vec::new();
            let (mut depth, mut start) = (0usize, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' | ',' if depth == 0 => {
                        for tail in use_tree(&group[start..i]) {
                            out.push([prefix.clone(), tail].concat());
                        }
                        if c == '}' {
                            break;
                        }
                        start = i + 1;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            return out;
        }
        let name = ident(rest);
        if name.is_empty() {
            return vec![prefix];
        }
        prefix.push(name.to_owned());
        rest = &rest[name.len()..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r.trim_start(),
            None => return vec![prefix],
        }
    }
}

/// `code` without its re-exports (`pub use ...;`, `pub(crate) use ...;`): a module that hands
/// a name on does not use it.
fn without_reexports(code: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in code.lines() {
        let t = line.trim_start();
        if !skipping && t.starts_with("pub") && t.contains(" use ") {
            skipping = true;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        } else if line.contains(';') {
            skipping = false;
        }
    }
    out
}

/// For each crate of the workspace, its source files and, for each, the other files of the
/// crate its code (tests and re-exports aside) names a path into: through `crate::`,
/// `super::`, `self::` or a child module's name; a path goes to the file of the longest module
/// it starts with.
fn file_graphs() -> BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>> {
    let mut all = BTreeMap::new();
    for entry in fs::read_dir(root().join("crates"))
        .expect("crates")
        .flatten()
    {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        let files: Vec<(Vec<String>, PathBuf)> = rust_files(&src)
            .into_iter()
            .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
            .map(|f| (module_of(f.strip_prefix(&src).expect("under src")), f))
            .collect();
        let file_of = |module: &[String]| {
            (0..=module.len()).rev().find_map(|n| {
                files
                    .iter()
                    .find(|(m, _)| m.as_slice() == &module[..n])
                    .map(|(_, f)| {
                        f.strip_prefix(&src)
                            .expect("under src")
                            .display()
                            .to_string()
                    })
            })
        };
        let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (module, file) in &files {
            let me = file_of(module).expect("its own file");
            let children: Vec<&String> = files
                .iter()
                .filter(|(m, _)| m.len() == module.len() + 1 && m.starts_with(module))
                .filter_map(|(m, _)| m.last())
                .collect();
            let text = fs::read_to_string(file).expect("source");
            let code = without_reexports(&without_comments(non_test_code(&text)));
            let edges = graph.entry(me.clone()).or_default();
            for (n, line) in code.lines().enumerate() {
                for (at, _) in line.match_indices(|c: char| c.is_ascii_alphabetic()) {
                    let before = line[..at].chars().next_back();
                    if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                        continue;
                    }
                    let head = ident(&line[at..]);
                    if !line[at + head.len()..].starts_with("::") {
                        continue;
                    }
                    let base: Vec<String> = match head {
                        "crate" => Vec::new(),
                        "self" => module.clone(),
                        "super" => module[..module.len().saturating_sub(1)].to_vec(),
                        h if children.iter().any(|c| c.as_str() == h) => module.clone(),
                        _ => continue,
                    };
                    let skip = usize::from(matches!(head, "crate" | "self" | "super"));
                    for path in use_tree(&line[at..]) {
                        let mut base = base.clone();
                        let mut segments = path.into_iter().skip(skip).peekable();
                        // `super::super::x`: each further `super` goes one up.
                        while segments.peek().is_some_and(|s| s == "super") {
                            segments.next();
                            base.pop();
                        }
                        let full: Vec<String> = base.into_iter().chain(segments).collect();
                        if let Some(to) = file_of(&full).filter(|to| *to != me) {
                            edges.entry(to).or_insert_with(|| format!("{me}:{}", n + 1));
                        }
                    }
                }
            }
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        all.insert(name, graph);
    }
    all
}

#[test]
fn no_two_files_of_a_crate_use_each_other() {
    let graphs = file_graphs();
    let core = &graphs["ratelab"];
    assert!(
        core["sim/run.rs"].contains_key("sim/stats.rs")
            && core["study/tables.rs"].contains_key("study/measure.rs"),
        "too few references parsed: {:?}",
        core.get("sim/run.rs")
    );
    for (name, graph) in &graphs {
        if let Some(cycle) = find_cycle(graph) {
            let edges: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} uses {} at {}", w[0], w[1], graph[&w[0]][&w[1]]))
                .collect();
            panic!(
                "{name}'s files use each other in a loop: {}\n{}\nmove the shared part down into a file both use, or merge what is one concern",
                cycle.join(" -> "),
                edges.join("\n")
            );
        }
    }
}

#[test]
fn the_file_graph_follows_super_children_and_braces() {
    assert_eq!(
        use_tree("super::{a::B, c::{d, e}};"),
        [
            vec!["super", "a", "B"],
            vec!["super", "c", "d"],
            vec!["super", "c", "e"]
        ]
    );
    assert_eq!(module_of(Path::new("a/mod.rs")), ["a"]);
    assert_eq!(module_of(Path::new("a/b.rs")), ["a", "b"]);
    assert_eq!(
        without_reexports("pub use a::{\n    b,\n};\nuse c::d;\n"),
        "use c::d;\n"
    );
}

/// Source files hold at most this many lines before their tests: a file a reader can hold in
/// their head.
const MOST_LINES: usize = 800;

#[test]
fn no_source_file_runs_past_800_lines_before_its_tests() {
    let mut long = Vec::new();
    for entry in fs::read_dir(root().join("crates"))
        .expect("crates")
        .flatten()
    {
        let src = entry.path().join("src");
        if !src.is_dir() {
            continue;
        }
        for file in rust_files(&src) {
            let text = fs::read_to_string(&file).expect("source");
            let lines = non_test_code(&text).lines().count();
            if lines > MOST_LINES && file.file_name().is_some_and(|n| n != "tests.rs") {
                long.push(format!(
                    "{} ({lines})",
                    file.strip_prefix(root()).expect("under root").display()
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MOST_LINES} lines before the tests: {long:?}; split by concern"
    );
}
