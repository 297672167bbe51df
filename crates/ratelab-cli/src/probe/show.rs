//! What the probe shows: its progress bar while it runs, and its report as a table.

use crate::text::{self};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ratelab::probe::{Answer, Outcome, Plan, ProbeReport, Record};
use ratelab::time::{format_duration, Micros, SECOND};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// The progress bar on stderr, drawn only when stderr is a terminal: sent, answered and
/// admitted so far, elapsed and remaining time, redrawn at most ten times a second.
pub(super) struct Progress {
    pub(super) bar: Option<ProgressBar>,
    pub(super) planned: Micros,
    /// "of 400", or "of up to 640" when retries may come.
    pub(super) of: String,
    pub(super) last: std::cell::Cell<Option<Instant>>,
}

impl Progress {
    pub(super) fn new(plan: &Plan) -> Self {
        let planned = plan.summary.last_at.max(1);
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(planned / 1_000 + 1),
                ProgressDrawTarget::stderr_with_hz(10),
            );
            if let Ok(style) = ProgressStyle::with_template("[{bar:30}] {msg}") {
                bar.set_style(style.progress_chars("#>-"));
            }
            bar
        });
        Progress {
            bar,
            planned,
            of: if plan.summary.most > plan.summary.first_tries {
                format!("of up to {}", plan.summary.most)
            } else {
                format!("of {}", plan.summary.most)
            },
            last: std::cell::Cell::new(None),
        }
    }

    pub(super) fn show(&self, start: Instant, sent: u64, heard: &Heard) {
        let Some(bar) = &self.bar else { return };
        let now = Instant::now();
        if self
            .last
            .get()
            .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last.set(Some(now));
        let elapsed = now.saturating_duration_since(start).as_micros() as Micros;
        let left = self.planned.saturating_sub(elapsed);
        bar.set_position(elapsed.min(self.planned) / 1_000);
        bar.set_message(format!(
            "sent {sent} {}, answered {}, admitted {}; {} elapsed, {} left",
            self.of,
            heard.records.len(),
            heard.admitted,
            clock(elapsed),
            clock(left)
        ));
    }

    pub(super) fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// µs as `m:ss`.
pub(super) fn clock(us: Micros) -> String {
    let s = us / SECOND;
    format!("{}:{:02}", s / 60, s % 60)
}

pub(super) fn table(r: &ProbeReport) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.2}%", 100.0 * v));
    let ms = |us: Micros| format!("{:.3} ms", us as f64 / 1_000.0);
    let mut out = String::new();
    if r.partial {
        out += &format!(
            "PARTIAL: stopped by Ctrl-C after {} request(s); this report is of what was sent\n",
            r.sent
        );
    }
    out += &format!(
        "probe of {}: {} per {}, traffic {}, seed {}\n",
        r.target,
        r.limit,
        format_duration(r.window_us),
        r.traffic,
        r.seed
    );
    out += &format!(
        "sent {} ({} first tries): admitted {}, rejected {}, other {}, errors {}, timeouts {}\n",
        r.sent, r.offered, r.audit.admitted, r.audit.rejected, r.other, r.errors, r.timeouts
    );
    out += &format!(
        "served {}, busiest window {} (the rule allows {}), wrong admits {}, wrong rejects {}\n",
        pct(r.audit.served_share),
        r.audit.busiest,
        r.limit,
        r.audit.wrong_admits,
        r.audit.wrong_rejects
    );
    out += &format!(
        "send lateness p50 {}, p99 {}, max {}; answers p50 {}, p99 {}, max {}\n",
        ms(r.lateness.p50_us),
        ms(r.lateness.p99_us),
        ms(r.lateness.max_us),
        ms(r.latency.p50_us),
        ms(r.latency.p99_us),
        ms(r.latency.max_us)
    );
    if let Some(c) = &r.comparison {
        out += &format!(
            "model {}: agrees on {} of {} decisions ({}); admitted only by the real limiter {}, only by the model {}; the model serves {}, busiest window {}\n",
            text::escaped(&c.model),
            c.agree,
            c.compared,
            pct(c.agreement),
            c.real_only,
            c.model_only,
            pct(c.audit.served_share),
            c.audit.busiest
        );
        if c.delayed > 0 {
            out += &format!(
                "the model delays {} of its admissions, the longest by {}\n",
                c.delayed,
                ms(c.longest_wait_us)
            );
        }
    }
    out + &gateway_lines(r)
}

/// With several gateways: what the lines above describe, and each gateway's part.
pub(super) fn gateway_lines(r: &ProbeReport) -> String {
    if r.gateways.is_empty() {
        return String::new();
    }
    let model = match r.comparison.as_ref().and_then(|c| c.coord.as_deref()) {
        Some(coord) => format!(
            "; the model is {} such gateways, --coord {coord}, each request decided at the gateway it was sent to",
            r.gateways.len()
        ),
        None => String::new(),
    };
    let mut out = format!(
        "\n{} gateways, --route {}: the lines above are the whole fleet against the global rule{model}\n",
        r.gateways.len(),
        r.route.as_deref().unwrap_or("round-robin"),
    );
    for (i, g) in r.gateways.iter().enumerate() {
        out += &format!(
            "gateway {i} {}: sent {}, admitted {}, rejected {}, busiest window {}",
            g.target, g.sent, g.admitted, g.rejected, g.busiest
        );
        if let Some(m) = &g.model {
            out += &format!(
                "; model admits {}, busiest window {}, agrees on {} of {}",
                m.admitted, m.busiest, m.agree, m.compared
            );
        }
        out.push('\n');
    }
    out
}

/// The answers heard so far.
pub(super) struct Heard {
    pub(super) records: Vec<Record>,
    pub(super) outstanding: u64,
    pub(super) admitted: u64,
}

impl Heard {
    /// The answer to the try with `ticket`, heard at `now` (µs from the start), told to the
    /// plan: a `Retry-After` counts from the moment the answer came.
    pub(super) fn take(&mut self, (ticket, r): (u64, Record), plan: &mut Plan, now: Micros) {
        self.outstanding -= 1;
        let answer = match r.outcome {
            Outcome::Admitted => {
                self.admitted += 1;
                Answer::Admitted
            }
            Outcome::Rejected => Answer::Rejected {
                retry_after: r
                    .retry_after
                    .map(|d| r.sent.saturating_add(r.latency).saturating_add(d)),
            },
            _ => Answer::Undecided,
        };
        plan.answered(ticket, answer, now);
        self.records.push(r);
    }
}
