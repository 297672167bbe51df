//! Real limiters on the page: a report that `ratelab probe` recorded, checked, summarised and
//! drawn beside a model's decisions on the same send times. Reading the JSON itself is left to
//! the browser's parser (serde_json would add about 60 KB to the on-demand module); everything
//! after it is here.

use ratelab::probe::ProbeReport;
use ratelab::time::format_duration;
use ratelab_charts::{self as charts, Plot, Series};
use serde::Serialize;

/// The largest probe report the page reads (a report of the most requests a probe sends is
/// about 20 MB).
pub const MAX_PROBE_REPORT_BYTES: usize = 64 << 20;

/// What the JSON of a probe report is, for messages.
const EXPECTED: &str = "expected the JSON that `ratelab probe --format json` writes";

/// Checks a file's text before it is parsed: not too large, not empty.
pub fn check_text(json: &str, name: &str) -> Result<(), String> {
    let what = format!("The file '{name}'");
    if json.len() > MAX_PROBE_REPORT_BYTES {
        return Err(format!(
            "{what} is {} MB: a probe report is at most {} MB",
            json.len() >> 20,
            MAX_PROBE_REPORT_BYTES >> 20
        ));
    }
    if json.trim().is_empty() {
        return Err(format!("{what} is empty: {EXPECTED}"));
    }
    Ok(())
}

/// The message for a file that did not parse as a report (`error` says why).
pub fn not_a_report(name: &str, error: &str) -> String {
    let error = error.strip_prefix("Error: ").unwrap_or(error);
    format!("The file '{name}' is not a probe report ({error}): {EXPECTED}")
}

/// Checks a parsed report's numbers against each other.
pub fn check_report(report: &ProbeReport, name: &str) -> Result<(), String> {
    report
        .check()
        .map_err(|e| format!("The file '{name}': {e}"))
}

/// What the page shows of a probe report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbeSummary {
    pub target: String,
    pub traffic: String,
    pub limit: u64,
    pub window_text: String,
    pub command: Option<String>,
    pub sent: u64,
    pub offered: u64,
    pub admitted: u64,
    pub rejected: u64,
    pub other: u64,
    pub errors: u64,
    pub timeouts: u64,
    pub served: Option<f64>,
    pub busiest: u64,
    pub wrong_admits: u64,
    pub wrong_rejects: u64,
    pub lateness_p99_ms: f64,
    pub model: Option<String>,
    pub model_admitted: Option<u64>,
    pub model_served: Option<f64>,
    pub model_busiest: Option<u64>,
    pub model_wrong_admits: Option<u64>,
    pub model_wrong_rejects: Option<u64>,
    pub agreement: Option<f64>,
    pub agree: Option<u64>,
    pub compared: Option<u64>,
    pub real_only: Option<u64>,
    pub model_only: Option<u64>,
}

impl ProbeSummary {
    /// The numbers of `r` the page shows.
    pub fn of(r: &ProbeReport) -> ProbeSummary {
        let c = r.comparison.as_ref();
        ProbeSummary {
            target: r.target.clone(),
            traffic: r.traffic.clone(),
            limit: r.limit,
            window_text: format_duration(r.window_us),
            command: r.command.clone(),
            sent: r.sent,
            offered: r.offered,
            admitted: r.audit.admitted,
            rejected: r.audit.rejected,
            other: r.other,
            errors: r.errors,
            timeouts: r.timeouts,
            served: r.audit.served_share,
            busiest: r.audit.busiest,
            wrong_admits: r.audit.wrong_admits,
            wrong_rejects: r.audit.wrong_rejects,
            lateness_p99_ms: r.lateness.p99_us as f64 / 1000.0,
            model: c.map(|c| c.model.clone()),
            model_admitted: c.map(|c| c.audit.admitted),
            model_served: c.and_then(|c| c.audit.served_share),
            model_busiest: c.map(|c| c.audit.busiest),
            model_wrong_admits: c.map(|c| c.audit.wrong_admits),
            model_wrong_rejects: c.map(|c| c.audit.wrong_rejects),
            agreement: c.and_then(|c| c.agreement),
            agree: c.map(|c| c.agree),
            compared: c.map(|c| c.compared),
            real_only: c.map(|c| c.real_only),
            model_only: c.map(|c| c.model_only),
        }
    }
}

/// Requests sent, admitted by the real limiter and admitted by the model, counted over time.
pub fn plot(r: &ProbeReport) -> Plot {
    let t = &r.trace;
    let n = t.sent_us.len();
    // At most about 2,000 points a line: every k-th request, and the last.
    let step = n.div_ceil(2000).max(1);
    let model: Vec<char> = t.model.as_deref().unwrap_or("").chars().collect();
    let (mut sent, mut real, mut modelled) = (Vec::new(), Vec::new(), Vec::new());
    let (mut s, mut a, mut m) = (0.0, 0.0, 0.0);
    for (i, (&us, c)) in t.sent_us.iter().zip(t.outcome.chars()).enumerate() {
        s += 1.0;
        a += f64::from(u8::from(c == 'A'));
        m += f64::from(u8::from(model.get(i) == Some(&'A')));
        if i % step == 0 || i + 1 == n {
            let x = us as f64 / 1e6;
            sent.push((x, s));
            real.push((x, a));
            modelled.push((x, m));
        }
    }
    let mut series = vec![
        Series {
            name: "sent".into(),
            points: sent,
            color: charts::SKY,
            markers: false,
        },
        Series {
            name: "admitted by the real limiter".into(),
            points: real,
            color: charts::BLUE,
            markers: false,
        },
    ];
    if let Some(c) = &r.comparison {
        series.push(Series {
            name: format!("admitted by the model, {}", c.model),
            // Marked, so that it shows where it lies on the real line.
            markers: modelled.len() <= 400,
            points: modelled,
            color: charts::PURPLE,
        });
    }
    Plot::Xy {
        title: format!("{}: requests so far", r.target),
        x_label: "seconds from the start of the probe".into(),
        y_label: "requests".into(),
        series,
        references: Vec::new(),
        y_range: None,
        x_range: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded report shipped with the page.
    fn recorded() -> ProbeReport {
        let json = include_str!("../../../www/probes/nginx-nodelay-boundary-burst.json");
        serde_json::from_str(json).expect("a recorded report")
    }

    #[test]
    fn a_recorded_report_is_checked_summarised_and_drawn() {
        let r = recorded();
        check_report(&r, "x.json").expect("consistent");
        let s = ProbeSummary::of(&r);
        assert_eq!(s.sent, r.sent);
        assert_eq!(
            s.admitted + s.rejected + s.other + s.errors + s.timeouts,
            s.sent
        );
        let csv = plot(&r).csv();
        assert!(csv.lines().count() > 2, "{csv}");
        assert!(csv.contains("\nadmitted by the real limiter,"), "{csv}");
    }

    #[test]
    fn empty_and_foreign_files_are_named_with_what_is_expected() {
        let e = check_text("  \n", "a.json").expect_err("empty");
        assert!(
            e.contains("'a.json' is empty") && e.contains("ratelab probe"),
            "{e}"
        );
        let e = not_a_report("b.json", "Error: missing field `target`");
        assert_eq!(
            e,
            "The file 'b.json' is not a probe report (missing field `target`): expected the JSON that `ratelab probe --format json` writes"
        );
        let mut r = recorded();
        r.sent += 1;
        assert!(check_report(&r, "c.json")
            .expect_err("inconsistent")
            .starts_with("The file 'c.json': "));
    }
}
