//! The views of the recorded probe reports the page ships (`www/probes/NAME.view.json`, what
//! the Real limiters panel shows of `www/probes/NAME.json` without reading it) are exactly what
//! the page's own code makes of the reports: `RATELAB_BLESS=1 cargo test -p ratelab-page --test
//! probe_views` writes them after a change (and `cargo xtask probe-record` after recording).

use ratelab::probe::ProbeReport;
use ratelab_page::probe_view;
use std::path::PathBuf;

fn probes() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../www/probes"))
}

#[test]
fn every_shipped_report_has_its_view_as_the_page_makes_it() {
    let bless = std::env::var_os("RATELAB_BLESS").is_some();
    let mut reports = 0;
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(probes()).expect("www/probes") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a name")
            .to_owned();
        let Some(stem) = name.strip_suffix(".json").filter(|s| !s.ends_with(".view")) else {
            continue;
        };
        reports += 1;
        let json = std::fs::read_to_string(&path).expect("report");
        let report: ProbeReport = serde_json::from_str(&json).expect("a probe report");
        // Checked as the page checks a reader's report.
        probe_view::check_report(&report, &name).expect("a consistent report");
        let view = serde_json::to_string(&probe_view::view(&report, &name)).expect("JSON") + "\n";
        let view_path = path.with_file_name(format!("{stem}.view.json"));
        if bless {
            std::fs::write(&view_path, &view).expect("write the view");
        } else if std::fs::read_to_string(&view_path).ok().as_deref() != Some(view.as_str()) {
            stale.push(view_path.display().to_string());
        }
    }
    assert!(reports >= 6, "only {reports} reports in www/probes");
    assert!(
        stale.is_empty(),
        "out of date or missing (RATELAB_BLESS=1 cargo test -p ratelab-page --test probe_views writes them): {stale:?}"
    );
}

#[test]
fn no_view_is_left_without_its_report() {
    for entry in std::fs::read_dir(probes()).expect("www/probes") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).expect("a name");
        if let Some(stem) = name.strip_suffix(".view.json") {
            assert!(
                path.with_file_name(format!("{stem}.json")).exists(),
                "{name} has no report"
            );
        }
    }
}
