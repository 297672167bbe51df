//! The page's Content-Security-Policy allows plotters' text measuring only at the charts' two
//! font sizes (the inline style of the span it measures with is allowed by its hash; see
//! index.html and tests/csp.test.mjs). A chart at another size would have its text measured
//! wrong in the browser, with a CSP error in the console, and nothing native would notice.

use std::fs;
use std::path::Path;

#[test]
fn every_chart_font_is_12_or_14_px() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut seen = 0;
    for entry in fs::read_dir(&src).expect("src/") {
        let path = entry.expect("an entry").path();
        let text = fs::read_to_string(&path).expect("a source file");
        for (i, line) in text.lines().enumerate() {
            let pieces: Vec<&str> = line.split("font(").collect();
            for (k, call) in pieces.iter().enumerate().skip(1) {
                let size = call.split(')').next().unwrap_or("");
                if size.starts_with("size") {
                    continue; // the definition: `fn font(size: f64)`
                }
                if pieces[k - 1].ends_with(".set_") {
                    // The canvas backend's `context.set_font(css)`: the CSS of whatever font a
                    // chart drew with, at the size of the chart's own `font(..)` call.
                    continue;
                }
                seen += 1;
                assert!(
                    size == "12.0" || size == "14.0",
                    "{}:{}: font({size}): the page's CSP allows 12 and 14 px only",
                    path.display(),
                    i + 1
                );
            }
        }
    }
    assert!(
        seen >= 5,
        "found only {seen} font calls: is the scan still reading the charts?"
    );
}
