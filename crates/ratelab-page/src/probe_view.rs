//! Real limiters on the page: a report that `ratelab probe` recorded, checked, summarised and
//! drawn beside a model's decisions on the same send times. Reading the JSON itself is left to
//! the browser's parser (serde_json would add about 60 KB to the page's modules); everything
//! after it is here. The reports the page ships are shown from their [`View`], made here
//! beforehand (`www/probes/NAME.view.json`), so that a reader who only scrolls past them loads
//! none of this; a reader's own report, or another model, is read and run in the browser.

use crate::wire::{self, Packed};
use ratelab::decimal::fixed;
use ratelab::probe::ProbeReport;
use ratelab::text::{shown, SHOWN};
use ratelab::time::format_duration;
use ratelab_charts::{self as charts, Plot, Series};
use serde::Serialize;

/// The largest probe report the page reads (a report of the most requests a probe sends is
/// about 20 MB).
pub const MAX_PROBE_REPORT_BYTES: usize = 64 << 20;

/// What the JSON of a probe report is, for messages.
const EXPECTED: &str = "expected the JSON that `ratelab probe --format json` writes";

/// Checks a file's size before it is read: a probe report is at most
/// [`MAX_PROBE_REPORT_BYTES`].
pub fn check_size(bytes: f64, name: &str) -> Result<(), String> {
    if bytes > MAX_PROBE_REPORT_BYTES as f64 {
        return Err(format!(
            "The file '{}' is {} MB: a probe report is at most {} MB",
            shown(name, SHOWN),
            fixed(bytes / f64::from(1 << 20), 0),
            MAX_PROBE_REPORT_BYTES >> 20
        ));
    }
    Ok(())
}

/// Checks a file's text before it is parsed: not too large, not empty.
pub fn check_text(json: &str, name: &str) -> Result<(), String> {
    check_size(json.len() as f64, name)?;
    if json.trim().is_empty() {
        return Err(format!("The file '{name}' is empty: {EXPECTED}"));
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
    /// How late the admitted answers were, where the model delays some and the report has
    /// each answer's time.
    pub delays: Option<Delays>,
    /// The table's rows: the real limiter, then the model if any (name, admitted, served,
    /// busiest window, wrong admits, wrong rejects).
    pub rows: Vec<[String; 6]>,
    /// What the report shows, in sentences (set by [`ProbeSummary::describe`]).
    pub text: String,
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
            delays: Delays::of(r),
            rows: Vec::new(),
            text: String::new(),
        }
        .with_rows()
    }

    fn with_rows(mut self) -> Self {
        let served = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), pct);
        self.rows = vec![[
            "The real limiter".to_owned(),
            self.admitted.to_string(),
            served(self.served),
            self.busiest.to_string(),
            self.wrong_admits.to_string(),
            self.wrong_rejects.to_string(),
        ]];
        if self.model.is_some() {
            let n = |v: Option<u64>| v.unwrap_or(0).to_string();
            self.rows.push([
                "The model".to_owned(),
                n(self.model_admitted),
                served(self.model_served),
                n(self.model_busiest),
                n(self.model_wrong_admits),
                n(self.model_wrong_rejects),
            ]);
        }
        self
    }

    /// The summary with its sentences, for the file named `label`.
    pub fn describe(mut self, label: &str) -> Self {
        let mut text = format!(
            "{}, probing {}: {} requests ({} first tries) at {} per {}, traffic {}. ",
            shown(label, SHOWN),
            self.target,
            self.sent,
            self.offered,
            self.limit,
            self.window_text,
            self.traffic
        );
        if let (Some(model), Some(agree), Some(compared)) = (&self.model, self.agree, self.compared)
        {
            text.push_str(&format!(
                "The model {model} made the same decision on {agree} of {compared} ({}); the real limiter alone admitted {}, the model alone {}. ",
                pct(self.agreement.unwrap_or(0.0)),
                self.real_only.unwrap_or(0),
                self.model_only.unwrap_or(0)
            ));
        }
        if let Some(d) = &self.delays {
            text.push_str(&d.sentence());
        }
        let others = self.other + self.errors + self.timeouts;
        if others > 0 {
            text.push_str(&format!(
                "{others} requests had no admit or reject answer ({} errors, {} timeouts, {} other statuses) and are left out. ",
                self.errors, self.timeouts, self.other
            ));
        }
        text.push_str(&format!(
            "Sends were at most {} ms late at the 99th percentile.",
            fixed(self.lateness_p99_ms, 2)
        ));
        self.text = text;
        self
    }

    /// What the panel shows of the summary (after [`ProbeSummary::describe`]).
    pub fn shown(self) -> Shown {
        Shown {
            rows: self.rows,
            text: self.text,
            command: self.command,
            model: self.model,
        }
    }
}

/// A limiter that delays rather than rejects (nginx without `nodelay`, or with `delay=`): how
/// many admissions the model lets through at once and how many it delays, and how long the
/// real limiter's admitted answers took, its slowest as many as the model delays apart from
/// the rest, so that no threshold decides which answer was late.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delays {
    /// The model's admissions that leave at once.
    pub model_at_once: u64,
    /// The model's admissions that wait.
    pub model_delayed: u64,
    /// The model's longest wait, ms.
    pub model_longest_ms: f64,
    /// The real limiter's admitted answers, slowest first, in ms: the `model_delayed`
    /// slowest, from the fastest of them to the slowest.
    pub slowest_ms: (f64, f64),
    /// The slowest of the real limiter's other admitted answers, ms.
    pub others_ms: f64,
}

impl Delays {
    /// The delays of `r`, if its model delays any admission and it has each answer's time.
    pub fn of(r: &ProbeReport) -> Option<Delays> {
        let c = r.comparison.as_ref()?;
        let t = &r.trace;
        if c.delayed == 0 || t.latency_us.len() != t.sent_us.len() {
            return None;
        }
        let mut admitted: Vec<u64> = t
            .outcome
            .chars()
            .zip(&t.latency_us)
            .filter(|&(o, _)| o == 'A')
            .map(|(_, &l)| l)
            .collect();
        admitted.sort_unstable_by(|a, b| b.cmp(a));
        let n = usize::try_from(c.delayed).ok()?;
        if admitted.len() <= n {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(Delays {
            model_at_once: c.audit.admitted.saturating_sub(c.delayed),
            model_delayed: c.delayed,
            model_longest_ms: ms(c.longest_wait_us),
            slowest_ms: (ms(admitted[n - 1]), ms(admitted[0])),
            others_ms: ms(admitted[n]),
        })
    }

    /// What the panel says of them.
    fn sentence(&self) -> String {
        format!(
            "The model lets {} of its admissions through at once and delays {}, by up to {} ms; the real limiter's {} slowest admitted answers took {} to {} ms, its others at most {} ms. ",
            self.model_at_once,
            self.model_delayed,
            fixed(self.model_longest_ms, 0),
            self.model_delayed,
            fixed(self.slowest_ms.0, 0),
            fixed(self.slowest_ms.1, 0),
            fixed(self.others_ms, 1)
        )
    }
}

/// What the Real limiters panel shows beside the figure: the table's rows, the sentences, the
/// command that recorded the report and the model it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Shown {
    /// See [`ProbeSummary::rows`].
    pub rows: Vec<[String; 6]>,
    /// See [`ProbeSummary::text`].
    pub text: String,
    /// See [`ProbeSummary::command`].
    pub command: Option<String>,
    /// See [`ProbeSummary::model`].
    pub model: Option<String>,
}

/// A report as the panel shows it: what it says and its figure, packed as the page's on-demand
/// module draws it ([`wire`]). The page ships one beside each recorded report
/// (`www/probes/NAME.view.json`; `RATELAB_BLESS=1 cargo test -p ratelab-page --test
/// probe_views` writes them, and without it checks them).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    /// What it says.
    pub shown: Shown,
    /// Its figure, [`plot`].
    pub plot: Packed,
}

/// The [`View`] of a checked report, named `label` in its sentences.
pub fn view(report: &ProbeReport, label: &str) -> View {
    View {
        shown: ProbeSummary::of(report).describe(label).shown(),
        plot: wire::pack(&plot(report)),
    }
}

/// A share as the page writes it.
fn pct(share: f64) -> String {
    format!("{}%", fixed(100.0 * share, 1))
}

/// The message for a model the page could not use (`error` says why).
pub fn bad_model(spec: &str, error: &str) -> String {
    format!(
        "The model '{}' is not accepted: {error}",
        shown(spec, SHOWN)
    )
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
            line: true,
        },
        Series {
            name: "admitted by the real limiter".into(),
            points: real,
            color: charts::BLUE,
            markers: false,
            line: true,
        },
    ];
    if let Some(c) = &r.comparison {
        series.push(Series {
            name: format!("admitted by the model, {}", c.model),
            // Marked, so that it shows where it lies on the real line.
            markers: modelled.len() <= 400,
            line: true,
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
        assert_eq!(s.rows.len(), 1 + usize::from(s.model.is_some()));
        assert_eq!(s.rows[0][1], s.admitted.to_string());
        let text = s.clone().describe("run.json").text;
        assert!(
            text.starts_with(&format!(
                "run.json, probing {}: {} requests ({} first tries) at {} per {}",
                s.target, s.sent, s.offered, s.limit, s.window_text
            )),
            "{text}"
        );
        assert_eq!(
            text.contains("no admit or reject answer"),
            s.other + s.errors + s.timeouts > 0,
            "{text}"
        );
        if let (Some(agree), Some(compared)) = (s.agree, s.compared) {
            assert!(
                text.contains(&format!("same decision on {agree} of {compared}")),
                "{text}"
            );
        }
        let csv = plot(&r).csv();
        assert!(csv.lines().count() > 2, "{csv}");
        assert!(csv.contains("\nadmitted by the real limiter,"), "{csv}");
    }

    #[test]
    fn empty_and_foreign_files_are_named_with_what_is_expected() {
        let e = check_size(65.0 * f64::from(1 << 20), "big.json").expect_err("too big");
        assert_eq!(
            e,
            "The file 'big.json' is 65 MB: a probe report is at most 64 MB"
        );
        assert!(check_size(64.0 * f64::from(1 << 20), "ok.json").is_ok());
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

    #[test]
    fn a_limiter_that_delays_is_shown_with_its_delays() {
        // nginx at 20r/s, burst=10, delay=4, two bursts of 20: the model lets 5 of each
        // through at once and delays 6, by 50 to 300 ms.
        let json = include_str!("../../../www/probes/nginx-delay4-boundary-burst.json");
        let r: ProbeReport = serde_json::from_str(json).expect("a recorded report");
        let d = Delays::of(&r).expect("delays");
        let c = r.comparison.as_ref().expect("a model");
        assert_eq!(d.model_delayed, c.delayed);
        assert_eq!(d.model_at_once + d.model_delayed, c.audit.admitted);
        assert!(d.slowest_ms.0 <= d.slowest_ms.1 && d.others_ms <= d.slowest_ms.0);
        let text = ProbeSummary::of(&r).describe("d.json").text;
        assert!(
            text.contains(&format!(
                "The model lets {} of its admissions through at once and delays {}, by up to",
                d.model_at_once, d.model_delayed
            )),
            "{text}"
        );
        // A report without answer times, or a model that delays nothing, says nothing of it.
        let mut old = r.clone();
        old.trace.latency_us.clear();
        assert_eq!(Delays::of(&old), None);
        assert!(!ProbeSummary::of(&recorded())
            .describe("x.json")
            .text
            .contains("delays"));
    }
}
