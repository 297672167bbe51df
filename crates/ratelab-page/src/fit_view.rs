//! "Explain my 429s": an access log's statuses fitted to the limiters ratelab models
//! (`ratelab::fit`, as `ratelab fit` does), shown as the import panel shows it: the best fits
//! with what each promises, a timeline of the log's decisions beside the best fit's with
//! every disagreement marked, and the lab's controls for the best fit where the lab runs that
//! limiter. Every sentence comes from the fit's numbers.

use crate::controls::Controls;
use crate::link::{encode, Sections};
use ratelab::decimal::fixed;
use ratelab::fit::{disagreements, fit, read_log, Fit, FitReport, KeyBy, Log, LogOptions};
use ratelab::time::{format_duration, Micros, SECOND};
use serde::Serialize;

/// How many columns the timeline has: each the requests of one slice of the log's span.
pub const COLUMNS: usize = 240;
/// How many fits are listed.
const LISTED: usize = 3;

/// One fit, as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FitRow {
    /// The limiter, as `ratelab simulate --limiter` takes it.
    pub limiter: String,
    /// "decides 407 of 409 requests as the log says (99.51%)".
    pub agreement: String,
    /// "at most 15 in any 1s".
    pub promise: String,
    /// "burst 5 only" or "any burst from 1 to 5".
    pub range: String,
    /// The limiters that decide every request alike, or empty.
    pub same_as: String,
    /// What the log's clock or a queue explains of it, or empty: disagreements a time step
    /// of the log explains, and requests taken as served late.
    pub note: String,
}

/// One column of the timeline: its requests, those the log rejected, those the best fit
/// rejects, and those it decides otherwise than the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Column {
    pub requests: u32,
    pub log_rejected: u32,
    pub fit_rejected: u32,
    pub wrong: u32,
}

/// What the panel shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FitView {
    /// What was read: requests, rejected, clients, the format and its time step.
    pub read: String,
    /// Whether the log tells its best fits apart.
    pub verdict: String,
    /// For a log to the second, which fits stay exact wherever in its second a request fell.
    pub order: String,
    /// The best fits, best first.
    pub fits: Vec<FitRow>,
    /// The timeline's columns, over the log's span.
    pub columns: Vec<Column>,
    /// The timeline as a sentence (its text alternative).
    pub timeline: String,
    /// The first requests the best fit decides otherwise, as sentences.
    pub wrong: Vec<String>,
    /// The lab's link query for the best fit (controls only), when the lab runs it.
    pub lab_query: Option<String>,
    /// What "open the lab" does, or why the lab cannot run the best fit.
    pub lab_note: String,
}

/// The statuses that mean rejected, from the panel's field: 100 to 599, comma-separated.
pub fn statuses(text: &str) -> Result<Vec<u16>, String> {
    let parsed: Option<Vec<u16>> = text
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|c| (100..600).contains(c))
        })
        .collect();
    parsed.filter(|v| !v.is_empty()).ok_or_else(|| {
        format!(
            "The rejected statuses \u{201c}{}\u{201d} are not understood: give HTTP statuses from 100 to 599, separated by commas, such as 429 or 429,503.",
            text.chars().take(40).collect::<String>()
        )
    })
}

/// Fits `text`, an access log (or JSON lines, or CSV) whose `rejected` statuses mean the
/// limiter said no, one limiter per client or one for all; `progress(done, total)` as the
/// grid is searched.
pub fn explain(
    text: &str,
    rejected: Vec<u16>,
    per_client: bool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<FitView, String> {
    let options = LogOptions {
        rejected,
        key: if per_client {
            KeyBy::Client
        } else {
            KeyBy::All
        },
    };
    let log = read_log(text, &options).map_err(|e| e.to_string())?;
    let report = fit(&log, progress);
    Ok(view(&log, &report))
}

/// The view of `report`, the fit of `log`.
pub fn view(log: &Log, report: &FitReport) -> FitView {
    let step = format_duration(report.resolution_us.min(SECOND));
    let read = format!(
        "{} requests, {} of them rejected, from {} {}; read as {} with times to {step}.",
        report.requests,
        report.rejected,
        report.keys,
        if report.keys == 1 {
            "client"
        } else {
            "clients"
        },
        match report.format {
            "access-log" => "an access log",
            "access-log+msec" => "an access log with nginx's $msec",
            "haproxy" => "HAProxy's HTTP log",
            "json" => "JSON lines",
            "csv" => "CSV",
            other => other,
        },
    );
    let fits: Vec<FitRow> = report
        .fits
        .iter()
        .take(LISTED)
        .map(|f| row(f, report.requests, report.resolution_us))
        .collect();
    let best = report.fits.first();
    let wrong_all = best.and_then(|f| disagreements(log, f)).unwrap_or_default();
    let columns = columns(log, &wrong_all);
    let timeline = match best {
        Some(f) => format!(
            "Timeline of the log's {} requests in {COLUMNS} slices: the log rejected {} and {} rejects {}; they disagree on {} ({} slices hold a disagreement).",
            report.requests,
            report.rejected,
            f.limiter,
            columns.iter().map(|c| u64::from(c.fit_rejected)).sum::<u64>(),
            wrong_all.len(),
            columns.iter().filter(|c| c.wrong > 0).count(),
        ),
        None => "No fit to draw.".into(),
    };
    let wrong = best
        .map(|f| {
            f.wrong
                .iter()
                .map(|w| {
                    format!(
                        "Line {}: the log {}, the fit {}.",
                        w.line,
                        if w.log_admitted {
                            "admitted it"
                        } else {
                            "rejected it"
                        },
                        if w.log_admitted {
                            "rejects it"
                        } else {
                            "admits it"
                        },
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let (lab_query, lab_note) = match best.map(lab_controls) {
        Some(Ok(c)) => (
            Some(encode(&c, false, &Sections::default())),
            format!(
                "Opens the lab on {} with your requests as its traffic.",
                best.map_or("", |f| f.limiter.as_str())
            ),
        ),
        Some(Err(why)) => (None, why),
        None => (None, "No fit to open the lab on.".into()),
    };
    FitView {
        read,
        verdict: report.verdict.clone(),
        order: report.order.clone().unwrap_or_default(),
        fits,
        columns,
        timeline,
        wrong,
        lab_query,
        lab_note,
    }
}

/// `f` as listed, for a log of `n` requests whose times step by `resolution` µs.
fn row(f: &Fit, n: u64, resolution: Micros) -> FitRow {
    let notes = f.notes(resolution);
    let agreement = if f.wrong_count == 0 {
        "decides every request as the log says".to_owned()
    } else {
        format!(
            "decides {} of {n} requests as the log says ({}%)",
            n.saturating_sub(f.wrong_count),
            fixed(f.agreement * 100.0, 2)
        )
    };
    let range = match f.range {
        (lo, Some(hi)) if lo == hi => format!("only {} {lo} fits", f.searched),
        (lo, Some(hi)) => format!("any {} from {lo} to {hi} fits", f.searched),
        (lo, None) => format!("any {} from {lo} up fits", f.searched),
    };
    FitRow {
        limiter: f.limiter.clone(),
        agreement,
        promise: f.promise.clone(),
        range,
        same_as: f.same_as.join(", "),
        note: notes.join("; "),
    }
}

/// The log's requests in [`COLUMNS`] slices of its span, with the log's rejections, the
/// best fit's (the log's, but where they disagree) and the disagreements.
fn columns(log: &Log, wrong: &[u32]) -> Vec<Column> {
    let mut out = vec![Column::default(); COLUMNS];
    let (Some(first), Some(last)) = (
        log.requests.iter().map(|r| r.at).min(),
        log.requests.iter().map(|r| r.at).max(),
    ) else {
        return out;
    };
    let span = (last - first).max(1);
    let slot =
        |at: Micros| (((at - first) as u128 * COLUMNS as u128) / (span as u128 + 1)) as usize;
    let mut is_wrong = vec![false; log.requests.len()];
    for &i in wrong {
        if let Some(w) = is_wrong.get_mut(i as usize) {
            *w = true;
        }
    }
    for (r, &w) in log.requests.iter().zip(&is_wrong) {
        let c = &mut out[slot(r.at).min(COLUMNS - 1)];
        c.requests += 1;
        c.log_rejected += u32::from(!r.admitted);
        // The fit rejects what the log rejected, but where they disagree.
        c.fit_rejected += u32::from(r.admitted == w);
        c.wrong += u32::from(w);
    }
    out
}

/// The lab's controls for `f`, or why the lab cannot run it ([`Controls::for_spec`]).
pub fn lab_controls(f: &Fit) -> Result<Controls, String> {
    Controls::for_spec(&f.limiter, f.limit, f.window_us)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controls::{NginxConf, RateUnit};
    use crate::link::decode;
    use ratelab::spec::{LimiterKind, LimiterSpec};

    fn example(name: &str) -> String {
        let path = format!(
            "{}/../../docs/examples/fit/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn a_recorded_nginx_log_is_explained_and_opens_the_lab_on_its_configuration() {
        let text = example("nginx-msec.log");
        let view = explain(&text, vec![429], true, &|_, _| {}).expect("a fit");
        let log = read_log(&text, &LogOptions::default()).expect("a log");
        let report = fit(&log, &|_, _| {});
        let best = &report.fits[0];
        assert_eq!(best.limiter, "nginx:rate=10r/s,burst=5,nodelay");
        assert_eq!(view.fits[0].limiter, best.limiter);
        assert_eq!(view.verdict, report.verdict);
        let n = report.requests;
        assert_eq!(
            view.fits[0].agreement,
            format!(
                "decides {} of {n} requests as the log says ({}%)",
                n - best.wrong_count,
                fixed(best.agreement * 100.0, 2)
            )
        );
        // The timeline holds every request, the log's rejections, and the fit's
        // disagreements, which the fit's own count gives.
        let sum = |f: fn(&Column) -> u32| view.columns.iter().map(|c| u64::from(f(c))).sum::<u64>();
        assert_eq!(view.columns.len(), COLUMNS);
        assert_eq!(sum(|c| c.requests), n);
        assert_eq!(sum(|c| c.log_rejected), report.rejected);
        assert_eq!(sum(|c| c.wrong), best.wrong_count);
        assert!(
            best.wrong_count > 0,
            "the recorded log has its millisecond disagreements"
        );
        // The fit rejects what the log rejected, less the rejections it admits, plus the
        // admissions it rejects.
        let wrong = disagreements(&log, best).expect("builds");
        let flipped_to_reject = wrong
            .iter()
            .filter(|&&i| log.requests[i as usize].admitted)
            .count() as u64;
        assert_eq!(
            sum(|c| c.fit_rejected),
            report.rejected + 2 * flipped_to_reject - best.wrong_count
        );
        assert_eq!(view.wrong.len(), best.wrong.len());
        // Every disagreement a millisecond of the log's clock explains, and the row says so.
        assert!(best.replayed_otherwise > 0 && best.within_a_step == best.replayed_otherwise);
        assert!(view.fits[0].note.contains(&format!(
            "each of the {} requests it decides otherwise it decides as the log says 1ms earlier or later",
            best.replayed_otherwise
        )));
        assert!(view
            .read
            .contains("read as an access log with nginx's $msec with times to 1ms"));
        assert!(view
            .timeline
            .contains(&format!("they disagree on {}", best.wrong_count)));
        // The lab: nginx at 10r/s, burst=5 nodelay, a link the page decodes without a problem.
        let query = view.lab_query.expect("the lab runs nginx");
        let d = decode(&format!("?{query}"));
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(d.controls.algorithm, LimiterKind::Nginx);
        assert_eq!(
            d.controls.nginx,
            NginxConf {
                rate: 10,
                unit: RateUnit::PerSecond,
                burst: 5,
                delay: 0,
                nodelay: true
            }
        );
    }

    #[test]
    fn a_queueing_nginxs_log_says_its_requests_were_taken_as_served_late() {
        let view =
            explain(&example("nginx-queue.log"), vec![429], true, &|_, _| {}).expect("a fit");
        let log = read_log(&example("nginx-queue.log"), &LogOptions::default()).expect("a log");
        let best = &fit(&log, &|_, _| {}).fits[0];
        assert!(best.served_late > 0);
        assert!(
            view.fits[0].note.contains(&format!(
                "{} admitted requests are logged one interval after the one before",
                best.served_late
            )),
            "{}",
            view.fits[0].note
        );
        let c = decode(&format!("?{}", view.lab_query.expect("the lab runs nginx"))).controls;
        assert!(!c.nginx.nodelay, "the lab's nginx queues too");
    }

    #[test]
    fn a_fit_the_lab_cannot_run_says_why() {
        let view = explain(&example("haproxy.log"), vec![429], true, &|_, _| {}).expect("a fit");
        assert_eq!(view.fits[0].limiter, "haproxy:period=10s,limit=10");
        assert_eq!(view.lab_query, None);
        assert!(
            view.lab_note
                .starts_with("The lab does not run haproxy:period=10s,limit=10: the lab's menu has the algorithms, nginx and the libraries, not haproxy"),
            "{}",
            view.lab_note
        );
    }

    #[test]
    fn every_kind_the_lab_runs_opens_as_its_fit_says() {
        // Each a fit as `fit` writes it, with its L and W: the link decodes to the same
        // limiter, with no problem.
        for (limiter, limit, window_s) in [
            ("fixed-window", 30, 60),
            ("sliding-log", 10, 10),
            ("sliding-log:record-rejects=true", 10, 10),
            ("sliding-window-counter", 100, 60),
            ("token-bucket:burst=6,rate=10/1s", 10, 1),
            ("gcra:burst=3,rate=30/1min", 30, 60),
            ("leaky-bucket:burst=4,rate=10/1s", 10, 1),
            ("nginx:rate=7r/m,burst=2,nodelay", 7, 60),
            ("nginx:rate=4r/s,burst=8", 4, 1),
        ] {
            let f = Fit {
                limiter: limiter.into(),
                limit,
                window_us: window_s * SECOND,
                agreement: 1.0,
                wrong_count: 0,
                wrong: Vec::new(),
                searched: "limit",
                range: (limit, Some(limit)),
                promise: String::new(),
                same_as: Vec::new(),
                replayed_otherwise: 0,
                within_a_step: 0,
                served_late: 0,
            };
            let c = lab_controls(&f).unwrap_or_else(|e| panic!("{limiter}: {e}"));
            let d = decode(&format!("?{}", encode(&c, false, &Sections::default())));
            assert!(d.problems.is_empty(), "{limiter}: {:?}", d.problems);
            let spec = LimiterSpec::parse(limiter).expect("a spec");
            assert_eq!(d.controls.algorithm, spec.kind, "{limiter}");
            assert_eq!(
                (d.controls.limit, d.controls.window_s),
                (limit, window_s),
                "{limiter}"
            );
            // The lab's own spec of those controls decides as the fit's.
            let ours = d.controls.limiter_spec().expect("a spec");
            assert_eq!(ours.burst_or(limit), spec.burst_or(limit), "{limiter}");
            let rate = |s: &LimiterSpec| {
                let r = s.rate.unwrap_or(ratelab::Rate {
                    count: limit,
                    per: window_s * SECOND,
                });
                (u128::from(r.count) * 3600 * u128::from(SECOND)) / u128::from(r.per)
            };
            assert_eq!(rate(&ours), rate(&spec), "{limiter}");
            assert_eq!(ours.record_rejects, spec.record_rejects, "{limiter}");
            assert_eq!(ours.mode, spec.mode, "{limiter}");
        }
        // A window the lab has no whole seconds for, and HAProxy, are refused by name.
        for (limiter, window_us) in [("sliding-log", 250_000), ("haproxy:limit=5", SECOND)] {
            let f = Fit {
                limiter: limiter.into(),
                limit: 5,
                window_us,
                agreement: 1.0,
                wrong_count: 0,
                wrong: Vec::new(),
                searched: "limit",
                range: (5, Some(5)),
                promise: String::new(),
                same_as: Vec::new(),
                replayed_otherwise: 0,
                within_a_step: 0,
                served_late: 0,
            };
            let why = lab_controls(&f).expect_err(limiter);
            assert!(
                why.starts_with(&format!("The lab does not run {limiter}: ")),
                "{why}"
            );
        }
    }

    #[test]
    fn statuses_are_read_or_refused_with_what_is_accepted() {
        assert_eq!(statuses("429"), Ok(vec![429]));
        assert_eq!(statuses(" 429, 503 "), Ok(vec![429, 503]));
        for bad in ["", "429,", "abc", "99", "600", "429;503"] {
            let why = statuses(bad).expect_err(bad);
            assert!(
                why.contains("from 100 to 599") && why.contains(bad),
                "{why}"
            );
        }
    }
}
