//! The Markdown sources hold together, as GitHub shows them and the book renders them: every
//! link and image of the README, ARCHITECTURE.md and the book's chapters points at a file
//! that exists and, with an anchor, at a heading of it; the README stays a front page (250
//! lines at most) and SUMMARY.md lists every chapter. No mdBook needed.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_markdown_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in ratelab_docs::sources(&root()).expect("the sources") {
        let text = fs::read_to_string(&file).expect("readable Markdown");
        let dir = file.parent().expect("a folder");
        let shown = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        for link in ratelab_docs::link_targets(&text) {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').unwrap_or((link.as_str(), ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            if !target.exists() {
                broken.push(format!("{shown}: {link}: no such file"));
            } else if !anchor.is_empty() {
                let heads = ratelab_docs::heading_anchors(
                    &fs::read_to_string(&target).expect("readable target"),
                );
                if !heads.contains(anchor) {
                    broken.push(format!("{shown}: {link}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} links checked");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn headings_and_links_are_read_as_github_reads_them() {
    let heads = ratelab_docs::heading_anchors(
        "# The study\n\n```sh\n# not a heading\n```\n### The study\n## Probing a real limiter\n## `--coord` durations (1 ms)\n",
    );
    let want: BTreeSet<String> = [
        "the-study",
        "the-study-1",
        "probing-a-real-limiter",
        "--coord-durations-1-ms",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(heads, want);
    assert_eq!(
        ratelab_docs::link_targets(
            "see [a](b.md#c), ![pic](d.png)\n```\n[x](not-a-link)\n```\n`[y](nor-this)`"
        ),
        ["b.md#c", "d.png"]
    );
}

#[test]
fn the_readme_is_a_front_page_and_the_book_lists_every_chapter() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the rest belongs in docs/"
    );
    let summary = fs::read_to_string(root().join("docs/src/SUMMARY.md")).expect("SUMMARY.md");
    let listed: BTreeSet<String> = ratelab_docs::link_targets(&summary).into_iter().collect();
    for file in ratelab_docs::sources(&root()).expect("the sources") {
        if !file.starts_with(root().join("docs")) {
            continue;
        }
        let name = file
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        if name != "SUMMARY.md" {
            assert!(
                listed.contains(&name),
                "docs/src/{name} is not in SUMMARY.md"
            );
        }
    }
}
