//! The rendered book holds together: every chapter SUMMARY.md lists is a file, and every
//! link and image in every file points at a file of the book (or the page, one folder up)
//! and, with an anchor, at an element with that id. A chapter left out, a heading renamed
//! under a link, or a link the renderer forgot to retarget fails here.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every value of `attr="…"` in `html`.
fn values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let key = format!(" {attr}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&key) {
        let after = &rest[at + key.len()..];
        let end = after.find('"').unwrap_or(after.len());
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

#[test]
fn every_link_of_the_rendered_book_lands() {
    let out = std::env::temp_dir().join(format!("ratelab-book-{}", std::process::id()));
    let _ = fs::remove_dir_all(&out);
    let written = ratelab_docs::render(&root(), &out).expect("renders");
    let chapters = ratelab_docs::chapters(&root()).expect("chapters");
    assert!(chapters.len() >= 14, "{} chapters", chapters.len());
    for c in &chapters {
        assert!(out.join(&c.html).is_file(), "{} was not written", c.html);
    }
    assert!(out.join("images/page.png").is_file());
    let mut broken = Vec::new();
    let mut checked = 0;
    // Links in the chapters' text, not the contents beside it: a renderer that dropped the
    // links between chapters to their text would leave few.
    let mut in_text = 0;
    for file in written
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "html"))
    {
        let html = fs::read_to_string(file).expect("readable");
        let name = file
            .file_name()
            .expect("a name")
            .to_string_lossy()
            .to_string();
        let text = html.split_once("<main").map_or("", |(_, t)| t);
        in_text += values(text, "href")
            .iter()
            .filter(|l| l.contains(".html"))
            .count();
        for link in values(&html, "href")
            .into_iter()
            .chain(values(&html, "src"))
        {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
            if path.starts_with("../") {
                // The page, one folder up: the only way out of the book.
                if path != "../" {
                    broken.push(format!("{name}: {link} leaves the book"));
                }
                continue;
            }
            let target = if path.is_empty() {
                file.clone()
            } else {
                out.join(path)
            };
            if !target.is_file() {
                broken.push(format!("{name}: {link}: no such file"));
                continue;
            }
            if !anchor.is_empty() {
                let there = fs::read_to_string(&target).expect("readable");
                let ids: BTreeSet<&str> = values(&there, "id").into_iter().collect();
                if !ids.contains(anchor) {
                    broken.push(format!("{name}: {link}: no element with that id"));
                }
            }
        }
    }
    let _ = fs::remove_dir_all(&out);
    assert!(checked > 200, "only {checked} links checked");
    assert!(
        in_text > 20,
        "only {in_text} links between chapters in their text"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
