//! The book under `docs/` (mdBook's layout: `src/SUMMARY.md` and a chapter a subject)
//! rendered to static HTML for the page's site: one file a chapter in SUMMARY.md's order
//! (the introduction is `index.html`), each with the book's contents beside it, and
//! `ARCHITECTURE.md` as `architecture.html`. Headings get the anchors GitHub gives them, so
//! a link that works on the repository works here; links between chapters point at their
//! HTML, images are copied, and a link to a repository file the site does not hold keeps
//! its text only. Nothing but files in, files out: `cargo xtask docs` (and `cargo xtask
//! build`) write `dist/docs/`.

use pulldown_cmark::{html, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// One chapter: its title, its Markdown file, and the HTML file it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chapter {
    /// As SUMMARY.md names it.
    pub title: String,
    /// Where its Markdown is.
    pub source: PathBuf,
    /// Its file in the rendered book.
    pub html: String,
}

/// The chapters SUMMARY.md lists (`[Title](file.md)`, in order), then the map of the code.
pub fn chapters(root: &Path) -> Result<Vec<Chapter>, String> {
    let src = root.join("docs/src");
    let summary = fs::read_to_string(src.join("SUMMARY.md"))
        .map_err(|e| format!("cannot read docs/src/SUMMARY.md: {e}"))?;
    let mut out = Vec::new();
    for line in summary.lines() {
        let Some(open) = line.find('[') else { continue };
        let Some(mid) = line[open..].find("](").map(|i| i + open) else {
            continue;
        };
        let Some(close) = line[mid..].find(')').map(|i| i + mid) else {
            continue;
        };
        let file = &line[mid + 2..close];
        let stem = file.trim_end_matches(".md");
        out.push(Chapter {
            title: line[open + 1..mid].to_owned(),
            source: src.join(file),
            html: if stem == "introduction" {
                "index.html".to_owned()
            } else {
                format!("{stem}.html")
            },
        });
    }
    if out.is_empty() {
        return Err("docs/src/SUMMARY.md lists no chapter".into());
    }
    out.push(Chapter {
        title: "Architecture".into(),
        source: root.join("ARCHITECTURE.md"),
        html: "architecture.html".into(),
    });
    Ok(out)
}

/// The anchor GitHub gives a heading: lower case, letters, digits, `-` and `_` kept,
/// spaces made `-` (a repeated one is numbered by [`Anchors`]).
pub fn slug(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The Markdown a reader follows: the README, the map of the code, and the book's sources
/// (every file under `docs/src/`, in name order).
pub fn sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut book: Vec<PathBuf> = fs::read_dir(root.join("docs/src"))
        .map_err(|e| format!("cannot read docs/src: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    book.sort();
    files.extend(book);
    Ok(files)
}

/// Every heading anchor of `markdown`, as [`slug`] and its numbering of repeats give them
/// (the ids the rendered book's headings carry).
pub fn heading_anchors(markdown: &str) -> std::collections::BTreeSet<String> {
    let mut anchors = Anchors::default();
    let mut out = std::collections::BTreeSet::new();
    let mut title: Option<String> = None;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { .. }) => title = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(title) = title.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(title) = title.take() {
                    out.insert(anchors.next(&title));
                }
            }
            _ => {}
        }
    }
    out
}

/// Every link and image target of `markdown` (code blocks and inline code hold none).
pub fn link_targets(markdown: &str) -> Vec<String> {
    Parser::new_ext(markdown, Options::ENABLE_TABLES)
        .filter_map(|event| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// A file's heading anchors as they are handed out: the second `the-study` is `the-study-1`.
#[derive(Debug, Default)]
struct Anchors(BTreeMap<String, usize>);

impl Anchors {
    fn next(&mut self, title: &str) -> String {
        let slug = slug(title);
        let n = self.0.entry(slug.clone()).or_insert(0);
        let id = if *n == 0 { slug } else { format!("{slug}-{n}") };
        *n += 1;
        id
    }
}

/// Where a link of the Markdown file at `from` (relative to the repository `root`) points in
/// the rendered book, or `None` where the book holds nothing for it (its text is kept).
fn target(
    root: &Path,
    from: &Path,
    link: &str,
    book: &BTreeMap<PathBuf, String>,
) -> Option<String> {
    if link.starts_with("http://")
        || link.starts_with("https://")
        || link.starts_with("mailto:")
        || link.starts_with('#')
    {
        return Some(link.to_owned());
    }
    let (path, anchor) = match link.split_once('#') {
        Some((p, a)) => (p, format!("#{a}")),
        None => (link, String::new()),
    };
    let dir = from.parent()?;
    let resolved = normalise(&dir.join(path));
    if let Some(html) = book.get(&resolved) {
        return Some(format!("{html}{anchor}"));
    }
    if resolved == normalise(&root.join("README.md")) {
        // The page itself, one folder up.
        return Some(format!("../{anchor}"));
    }
    let images = normalise(&root.join("docs/images"));
    if let Ok(rest) = resolved.strip_prefix(&images) {
        return Some(format!("images/{}", rest.display()));
    }
    None
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// One chapter's Markdown as HTML: headings with their anchors, links retargeted.
fn chapter_html(
    root: &Path,
    from: &Path,
    markdown: &str,
    book: &BTreeMap<PathBuf, String>,
) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut events: Vec<Event> = Vec::new();
    let mut anchors = Anchors::default();
    // Heading being read: its level and its events so far.
    let mut heading: Option<(HeadingLevel, Vec<Event>)> = None;
    // Whether each open link was kept (its end too) or dropped to its text.
    let mut links: Vec<bool> = Vec::new();
    for event in Parser::new_ext(markdown, options) {
        let event = match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => match target(root, from, &dest_url, book) {
                Some(dest) => {
                    links.push(true);
                    Event::Start(Tag::Link {
                        link_type,
                        dest_url: CowStr::from(dest),
                        title,
                        id,
                    })
                }
                None => {
                    links.push(false);
                    continue;
                }
            },
            Event::End(TagEnd::Link) => {
                if links.pop() == Some(true) {
                    Event::End(TagEnd::Link)
                } else {
                    continue;
                }
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let dest =
                    target(root, from, &dest_url, book).unwrap_or_else(|| dest_url.to_string());
                Event::Start(Tag::Image {
                    link_type,
                    dest_url: CowStr::from(dest),
                    title,
                    id,
                })
            }
            other => other,
        };
        match (&mut heading, event) {
            (None, Event::Start(Tag::Heading { level, .. })) => heading = Some((level, Vec::new())),
            (Some(_), Event::End(TagEnd::Heading(_))) => {
                let Some((level, inner)) = heading.take() else {
                    continue;
                };
                let text: String = inner
                    .iter()
                    .filter_map(|e| match e {
                        Event::Text(t) | Event::Code(t) => Some(t.as_ref()),
                        _ => None,
                    })
                    .collect();
                let mut body = String::new();
                html::push_html(&mut body, inner.into_iter());
                let n = level as usize;
                let id = anchors.next(&text);
                events.push(Event::Html(CowStr::from(format!(
                    "<h{n} id=\"{id}\"><a class=\"anchor\" href=\"#{id}\">{body}</a></h{n}>\n"
                ))));
            }
            (Some((_, inner)), event) => inner.push(event),
            (None, event) => events.push(event),
        }
    }
    let mut out = String::new();
    html::push_html(&mut out, events.into_iter());
    out
}

/// Text safe inside HTML.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The book's style sheet (no script; the page's own origin only).
const CSS: &str = "\
:root { color-scheme: light dark; --fg: #1d2430; --bg: #fff; --muted: #56606f; --link: #0b5cad; --rule: #d8dde5; --code: #f3f5f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e9ee; --bg: #14181e; --muted: #a9b1bd; --link: #7fb6ff; --rule: #333b46; --code: #1e242c; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, sans-serif; color: var(--fg); background: var(--bg); display: grid; grid-template-columns: 16rem minmax(0, 1fr); }
nav { border-right: 1px solid var(--rule); padding: 1rem; position: sticky; top: 0; height: 100vh; overflow: auto; font-size: 0.95rem; }
nav ol { list-style: none; padding: 0; margin: 0; }
nav li { margin: 0.2rem 0; }
nav a[aria-current] { font-weight: 700; }
main { padding: 1rem 2rem 4rem; max-width: 60rem; }
a { color: var(--link); }
a:focus-visible { outline: 3px solid var(--link); outline-offset: 2px; }
h1 a.anchor, h2 a.anchor, h3 a.anchor, h4 a.anchor { color: inherit; text-decoration: none; }
code { background: var(--code); padding: 0.1em 0.3em; border-radius: 3px; font-size: 0.92em; }
pre { background: var(--code); padding: 0.8rem; overflow: auto; border-radius: 4px; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid var(--rule); padding: 0.3rem 0.5rem; vertical-align: top; max-width: 30rem; }
td code { overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: 0.5rem; z-index: 1; }
@media (max-width: 50rem) { body { display: block; } nav { position: static; height: auto; border-right: none; border-bottom: 1px solid var(--rule); } main { padding: 1rem; } }
";

/// Renders the book of the repository at `root` into `out` (made if missing): every
/// chapter, the style sheet and the images. Returns the files written.
pub fn render(root: &Path, out: &Path) -> Result<Vec<PathBuf>, String> {
    let chapters = chapters(root)?;
    let book: BTreeMap<PathBuf, String> = chapters
        .iter()
        .map(|c| (normalise(&c.source), c.html.clone()))
        .collect();
    fs::create_dir_all(out.join("images"))
        .map_err(|e| format!("cannot make {}: {e}", out.display()))?;
    let mut written = Vec::new();
    let mut nav =
        String::from("<nav aria-label=\"The book\"><p><a href=\"../\">← The page</a></p><ol>\n");
    for c in &chapters {
        let _ = writeln!(
            nav,
            "<li><a href=\"{}\">{}</a></li>",
            c.html,
            escape(&c.title)
        );
    }
    nav.push_str("</ol></nav>\n");
    for c in &chapters {
        let markdown = fs::read_to_string(&c.source)
            .map_err(|e| format!("cannot read {}: {e}", c.source.display()))?;
        let body = chapter_html(root, &c.source, &markdown, &book);
        let here = format!("<a href=\"{}\">", c.html);
        let nav = nav.replacen(
            &here,
            &format!("<a href=\"{}\" aria-current=\"page\">", c.html),
            1,
        );
        let page = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src 'self'; style-src 'self'\">\n<title>{} · ratelab</title>\n<link rel=\"stylesheet\" href=\"book.css\">\n</head>\n<body>\n<a class=\"skip\" href=\"#text\">Skip to the text</a>\n{nav}<main id=\"text\">\n{body}</main>\n</body>\n</html>\n",
            escape(&c.title)
        );
        let path = out.join(&c.html);
        fs::write(&path, page).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    let css = out.join("book.css");
    fs::write(&css, CSS).map_err(|e| format!("cannot write {}: {e}", css.display()))?;
    written.push(css);
    let images = root.join("docs/images");
    for entry in fs::read_dir(&images).map_err(|e| format!("cannot read docs/images: {e}"))? {
        let from = entry.map_err(|e| e.to_string())?.path();
        if let Some(name) = from.file_name() {
            let to = out.join("images").join(name);
            fs::copy(&from, &to).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
            written.push(to);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_gets_githubs_anchor_and_a_repeat_is_numbered() {
        let mut a = Anchors::default();
        assert_eq!(a.next("The study"), "the-study");
        assert_eq!(a.next("The study"), "the-study-1");
        assert_eq!(
            a.next("`--coord` durations (1 ms)"),
            "--coord-durations-1-ms"
        );
    }

    #[test]
    fn links_point_at_chapters_images_and_the_page_or_keep_their_text() {
        let root = Path::new("/repo");
        let from = Path::new("/repo/docs/src/cli.md");
        let book: BTreeMap<PathBuf, String> = [
            (
                PathBuf::from("/repo/docs/src/memory.md"),
                "memory.html".to_owned(),
            ),
            (
                PathBuf::from("/repo/ARCHITECTURE.md"),
                "architecture.html".to_owned(),
            ),
        ]
        .into_iter()
        .collect();
        let t = |link: &str| target(root, from, link, &book);
        assert_eq!(t("memory.md#laws").as_deref(), Some("memory.html#laws"));
        assert_eq!(
            t("../../ARCHITECTURE.md").as_deref(),
            Some("architecture.html")
        );
        assert_eq!(t("../../README.md").as_deref(), Some("../"));
        assert_eq!(t("../images/page.png").as_deref(), Some("images/page.png"));
        assert_eq!(t("#here").as_deref(), Some("#here"));
        assert_eq!(t("../../crates/ratelab/src/lib.rs"), None);
        let html = chapter_html(
            root,
            from,
            "## Memory\n\nSee [it](memory.md) and [code](../../Cargo.toml).\n",
            &book,
        );
        assert!(html.contains("<h2 id=\"memory\">"), "{html}");
        assert!(html.contains("<a href=\"memory.html\">it</a>"), "{html}");
        assert!(html.contains("and code."), "{html}");
    }
}
