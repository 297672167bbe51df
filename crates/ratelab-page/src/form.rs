//! The lab's form: what the reader typed, checked and turned into [`Controls`], which fields
//! apply to the chosen limiter, and the sentences that explain a run. The page's JavaScript
//! only reads the fields' text and shows what comes back.

use crate::controls::{Attack, Controls, Named, Traffic};
use crate::link::{MAX_CAPACITY, MAX_SEED};
use crate::page::Readout;
use ratelab::limiter::LeakyMode;
use ratelab::spec::LimiterKind;
use ratelab::text::{shown, SHOWN};
use serde::{Deserialize, Serialize};

/// The form as the reader left it: each field's text (or state), unchecked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Form {
    /// The limiter's name.
    pub algorithm: String,
    /// The leaky bucket's form.
    pub leaky_mode: String,
    /// The capacity (burst) dial.
    pub capacity: String,
    /// `L`.
    pub limit: String,
    /// `W`, in seconds.
    pub window_s: String,
    /// The honest traffic's name.
    pub traffic: String,
    /// Its load, as a share of the limit.
    pub load: String,
    /// The seed.
    pub seed: String,
    /// Whether rejected requests are recorded.
    pub record_rejects: bool,
    /// The attack pressed.
    pub attack: String,
}

/// A whole number in `min..=max`, or the sentence that says what to enter.
fn whole(text: &str, name: &str, min: u64, max: u64) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{name} '{}' is not a whole number: enter one from {min} to {max}",
            shown(text, SHOWN)
        ));
    }
    let out_of_range = |shown: &str| {
        format!("{name} {shown} is out of range: enter a whole number from {min} to {max}")
    };
    match t.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Ok(v) => Err(out_of_range(&v.to_string())),
        Err(_) => Err(out_of_range(&shown(t.trim_start_matches('0'), SHOWN))),
    }
}

/// One of an enum's names (the form's menus offer only those).
fn named<T: Named>(text: &str, what: &str) -> Result<T, String> {
    T::from_name(text).ok_or_else(|| {
        format!(
            "{what} '{}' is not one ratelab offers: choose one of {}",
            shown(text, SHOWN),
            T::names()
        )
    })
}

impl Form {
    /// The controls the form describes, or the first wrong field's sentence.
    pub fn controls(&self) -> Result<Controls, String> {
        let limit = whole(&self.limit, "Limit", 1, 100_000)?;
        let window_s = whole(&self.window_s, "Window", 1, 3_600)?;
        let load_text = self.load.trim();
        // Digits with at most one point and a digit after it: no signs or exponents.
        let (int, frac) = load_text.split_once('.').unwrap_or(("", load_text));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let load = (!frac.is_empty() && digits(int) && digits(frac))
            .then(|| load_text.parse::<f64>().ok())
            .flatten()
            .filter(|l| (0.01..=3.0).contains(l))
            .ok_or_else(|| {
                format!(
                    "Load '{}' is not accepted: enter a share of the limit from 0.01 to 3, like 0.8",
                    shown(&self.load, SHOWN)
                )
            })?;
        let seed = whole(&self.seed, "Seed", 0, MAX_SEED)?;
        let algorithm: LimiterKind = named(&self.algorithm, "Limiter")?;
        let min_capacity = u64::from(algorithm != LimiterKind::LeakyBucket);
        let capacity = whole(&self.capacity, "Capacity", min_capacity, MAX_CAPACITY)?;
        Ok(Controls {
            algorithm,
            capacity,
            limit,
            window_s,
            traffic: named::<Traffic>(&self.traffic, "Traffic")?,
            load,
            seed,
            minutes: Controls::default().minutes,
            attack: named::<Attack>(&self.attack, "Attack")?,
            record_rejects: self.record_rejects,
            leaky_mode: named::<LeakyMode>(&self.leaky_mode, "Leaky-bucket form")?,
            replay: None,
        })
    }

    /// Which fields apply to the chosen limiter, and the capacity dial's range.
    pub fn applies(&self) -> Applies {
        let kind = LimiterKind::from_name(&self.algorithm).ok();
        let capacity_min = u64::from(kind != Some(LimiterKind::LeakyBucket));
        let limit = self.limit.trim().parse::<u64>().ok().filter(|&l| l > 0);
        let capacity = self.capacity.trim().parse::<u64>().unwrap_or(0);
        Applies {
            capacity: kind.is_some_and(LimiterKind::has_bucket),
            capacity_min,
            // The dial reaches twice the limit, and never hides a value the reader chose.
            capacity_max: limit.map(|l| (crate::controls::CAPACITY_FACTOR * l).max(capacity)),
            leaky_mode: kind == Some(LimiterKind::LeakyBucket),
            record_rejects: kind.is_some_and(LimiterKind::can_record_rejects),
        }
    }
}

/// Which of the form's fields apply to the chosen limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applies {
    /// The capacity dial (the buckets).
    pub capacity: bool,
    /// Its smallest value (0 only for the leaky bucket: no queue at all).
    pub capacity_min: u64,
    /// Its largest value, when the limit is a number.
    pub capacity_max: Option<u64>,
    /// The leaky bucket's form.
    pub leaky_mode: bool,
    /// Recording rejected requests (the counters and the log).
    pub record_rejects: bool,
}

/// A limiter's name in a sentence, as the form's menu shows it.
pub fn display_name(kind: LimiterKind) -> &'static str {
    match kind {
        LimiterKind::FixedWindow => "Fixed window",
        LimiterKind::SlidingLog => "Sliding log",
        LimiterKind::SlidingWindowCounter => "Sliding-window counter",
        LimiterKind::TokenBucket => "Token bucket",
        LimiterKind::Gcra => "GCRA",
        LimiterKind::LeakyBucket => "Leaky bucket (nginx)",
        LimiterKind::Nginx => "nginx (as configured)",
        LimiterKind::Haproxy => "HAProxy (stick table)",
    }
}

/// A share of requests as the page writes it.
fn pct(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// What a run of `c` showed, in a few sentences, each made from the run's own numbers so it
/// is true in every state of the form.
pub fn explain(c: &Controls, r: &Readout) -> String {
    let l = r.limit;
    let name = display_name(c.algorithm);
    let worst = r.worst_window;
    let mut parts = vec![if r.invariant_ok {
        format!("{name} kept the rule: no trailing window held more than {l}.")
    } else {
        format!(
            "{name} broke the rule: one trailing window held {worst} admitted requests, {} more than the limit of {l}, ending at {:.1} s.",
            worst - l,
            r.worst_at_s
        )
    }];
    let theory = |measured: &str| match r.bound {
        Some(b) if b == worst => format!("{measured} the worst case in theory, {b}, exactly."),
        Some(b) => format!(
            "{measured} {worst}; the worst case in theory is {b}, over every arrival pattern."
        ),
        None => format!("{measured} {worst}."),
    };
    match c.attack {
        Attack::BoundaryBurst => {
            parts.push(if c.algorithm == LimiterKind::SlidingWindowCounter {
                format!(
                    "This attack sends {l} requests at one instant just before the window boundary at {} s, and {l} more at the counter's weakest moment: just before the first {l} leave the trailing window, when the counter has all but forgotten them.",
                    c.window_s
                )
            } else {
                format!(
                    "This attack sends {l} requests at one instant just before the window boundary at {} s and {l} more just after it, far less than a window apart.",
                    c.window_s
                )
            });
            parts.push(theory("The busiest window reached"));
            if matches!(c.algorithm, LimiterKind::TokenBucket | LimiterKind::Gcra) {
                parts.push(format!(
                    "A bucket lets the two ticks through only up to its capacity ({}) plus what refills between them; here that came to {worst}.",
                    c.capacity
                ));
            }
        }
        Attack::Flood => {
            parts.push(
                "A flood sends a request every millisecond from the limiter's weakest moment on."
                    .to_owned(),
            );
            parts.push(theory("Its busiest window reached"));
        }
        Attack::RetryStorm => {
            parts.push(format!(
                "A client sending a quarter of its allowance took a spike of {} at {} s and retried each rejected request every second, twenty tries in all. It was served {} of its requests.",
                2 * l,
                c.window_s,
                pct(r.served_share)
            ));
            if let Some(other) = r.served_other_recording {
                let (with, without) = if c.record_rejects {
                    (r.served_share, other)
                } else {
                    (other, r.served_share)
                };
                let points = 100.0 * (without - with);
                parts.push(if points.abs() < 0.05 {
                    format!(
                        "Recording rejected requests makes no difference here: {} either way{}.",
                        pct(with),
                        if c.algorithm == LimiterKind::FixedWindow {
                            ", because a fixed window only rejects once its count is at the limit, and the count starts again at the next boundary"
                        } else {
                            ""
                        }
                    )
                } else if points > 0.0 {
                    format!(
                        "Recording rejected requests costs the client {points:.1} points ({} recorded, {} not): each rejected retry counts against it, so its retries keep the count up and are rejected in turn.",
                        pct(with),
                        pct(without)
                    )
                } else {
                    format!(
                        "Recording rejected requests serves it {:.1} points more here ({} recorded, {} not).",
                        -points,
                        pct(with),
                        pct(without)
                    )
                });
            }
        }
        Attack::None => {
            if !r.invariant_ok {
                parts.push(if c.traffic == Traffic::File {
                    "Your own traffic was enough to do that.".to_owned()
                } else {
                    format!(
                        "Honest traffic averaging {:.0} requests a window was enough: random arrivals bunch, and this limiter let a bunch through.",
                        c.load * l as f64
                    )
                });
            }
            parts.push(format!(
                "The share served ({}) says nothing about whether the rule held; only the busiest window does.",
                pct(r.served_share)
            ));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::run;

    fn form() -> Form {
        Form {
            algorithm: "token-bucket".into(),
            leaky_mode: "meter".into(),
            capacity: "60".into(),
            limit: "60".into(),
            window_s: "60".into(),
            traffic: "steady".into(),
            load: "0.8".into(),
            seed: "1".into(),
            record_rejects: false,
            attack: "none".into(),
        }
    }

    #[test]
    fn the_default_form_is_the_default_figure() {
        assert_eq!(form().controls(), Ok(Controls::default()));
    }

    #[test]
    fn each_wrong_field_is_named_with_what_to_enter() {
        type Change = fn(&mut Form);
        let cases: [(Change, &str); 9] = [
            (|f| f.limit = "0".into(), "Limit 0 is out of range: enter a whole number from 1 to 100000"),
            (|f| f.limit = "6o".into(), "Limit '6o' is not a whole number: enter one from 1 to 100000"),
            (|f| f.window_s = "99999999999999999999999".into(), "Window 99999999999999999999999 is out of range: enter a whole number from 1 to 3600"),
            (|f| f.load = "1e-1".into(), "Load '1e-1' is not accepted: enter a share of the limit from 0.01 to 3, like 0.8"),
            (|f| f.load = "5.".into(), "Load '5.' is not accepted"),
            (|f| f.load = "3.5".into(), "Load '3.5' is not accepted"),
            (|f| f.seed = "-1".into(), "Seed '-1' is not a whole number: enter one from 0 to 9007199254740991"),
            (|f| f.capacity = "0".into(), "Capacity 0 is out of range: enter a whole number from 1 to 1000000"),
            (|f| f.algorithm = "token-buckt".into(), "Limiter 'token-buckt' is not one ratelab offers: choose one of fixed-window, sliding-log"),
        ];
        for (change, want) in cases {
            let mut f = form();
            change(&mut f);
            let e = f.controls().expect_err(want);
            assert!(e.starts_with(want), "{e}");
        }
        let leaky = Form {
            algorithm: "leaky-bucket".into(),
            capacity: " 0 ".into(),
            load: ".5".into(),
            ..form()
        };
        let c = leaky.controls().expect("a leaky bucket may have no queue");
        assert_eq!((c.capacity, c.load), (0, 0.5));
        let nl = Form {
            limit: "1\n2".into(),
            ..form()
        };
        assert!(nl.controls().expect_err("two lines").contains("'1\\n2'"));
    }

    #[test]
    fn the_fields_that_apply_follow_the_limiter() {
        let a = |alg: &str, limit: &str, cap: &str| {
            Form {
                algorithm: alg.into(),
                limit: limit.into(),
                capacity: cap.into(),
                ..form()
            }
            .applies()
        };
        let tb = a("token-bucket", "60", "60");
        assert_eq!(
            (tb.capacity, tb.capacity_min, tb.capacity_max),
            (true, 1, Some(120))
        );
        assert!(!tb.leaky_mode && !tb.record_rejects);
        let lb = a("leaky-bucket", "60", "500");
        assert_eq!(
            (lb.capacity_min, lb.capacity_max, lb.leaky_mode),
            (0, Some(500), true)
        );
        let log = a("sliding-log", "x", "5");
        assert_eq!(
            (log.capacity, log.capacity_max, log.record_rejects),
            (false, None, true)
        );
    }

    #[test]
    fn the_explanation_says_what_the_numbers_beside_it_say() {
        let burst = Controls {
            algorithm: LimiterKind::FixedWindow,
            attack: Attack::BoundaryBurst,
            ..Controls::default()
        };
        let (r, _) = run(&burst).expect("runs");
        let text = explain(&burst, &r);
        assert!(
            text.starts_with(&format!(
                "Fixed window broke the rule: one trailing window held {} admitted requests, {} more than the limit of 60, ending at {:.1} s.",
                r.worst_window,
                r.worst_window - 60,
                r.worst_at_s
            )),
            "{text}"
        );
        assert!(
            text.contains("The busiest window reached the worst case in theory, 120, exactly."),
            "{text}"
        );
        let log = Controls {
            algorithm: LimiterKind::SlidingLog,
            ..Controls::default()
        };
        let (r, _) = run(&log).expect("runs");
        assert!(r.invariant_ok);
        assert_eq!(
            explain(&log, &r),
            format!("Sliding log kept the rule: no trailing window held more than 60. The share served ({:.1}%) says nothing about whether the rule held; only the busiest window does.", 100.0 * r.served_share)
        );
    }

    /// Every limiter, attack and recording setting: each sentence agrees with the numbers.
    #[test]
    fn the_explanation_is_true_in_every_state_of_the_form() {
        for algorithm in LimiterKind::ALL {
            for attack in <Attack as Named>::ALL.iter().copied() {
                for record_rejects in [false, true] {
                    if record_rejects && !algorithm.can_record_rejects() {
                        continue;
                    }
                    let c = Controls {
                        algorithm,
                        attack,
                        record_rejects,
                        ..Controls::default()
                    };
                    let (r, _) = run(&c).expect("runs");
                    let text = explain(&c, &r);
                    let case = format!("{algorithm:?} {attack:?} record={record_rejects}: {text}");
                    let kept = text.contains("kept the rule");
                    assert_eq!(kept, r.invariant_ok, "{case}");
                    assert_eq!(text.contains("broke the rule"), !r.invariant_ok, "{case}");
                    if !r.invariant_ok {
                        assert!(
                            text.contains(&format!("held {} admitted", r.worst_window)),
                            "{case}"
                        );
                    }
                    assert_eq!(
                        text.contains("was enough"),
                        attack == Attack::None && !r.invariant_ok,
                        "{case}"
                    );
                    // The bound is called reached exactly only when it was.
                    assert_eq!(
                        text.contains("exactly"),
                        r.bound == Some(r.worst_window)
                            && matches!(attack, Attack::Flood | Attack::BoundaryBurst),
                        "{case}"
                    );
                    if attack == Attack::RetryStorm {
                        assert!(
                            text.contains(&format!("It was served {}", pct(r.served_share))),
                            "{case}"
                        );
                        let other = r.served_other_recording;
                        assert_eq!(other.is_some(), algorithm.can_record_rejects(), "{case}");
                        if let Some(other) = other {
                            assert!(text.contains(&pct(other)), "{case}");
                            let same = (100.0 * (other - r.served_share)).abs() < 0.05;
                            assert_eq!(text.contains("makes no difference"), same, "{case}");
                        }
                        // Nothing is blamed on recording that recording did not do.
                        assert!(!text.contains("kept its window full"), "{case}");
                    }
                    if attack == Attack::BoundaryBurst
                        && matches!(algorithm, LimiterKind::TokenBucket | LimiterKind::Gcra)
                    {
                        assert!(text.contains(&format!("capacity ({}) plus what refills between them; here that came to {}.", c.capacity, r.worst_window)), "{case}");
                    }
                }
            }
        }
        // The essay's two cases: recording changes nothing for a fixed window, and locks a
        // client out of a sliding log.
        let storm = |algorithm| {
            let c = Controls {
                algorithm,
                attack: Attack::RetryStorm,
                record_rejects: true,
                ..Controls::default()
            };
            let (r, _) = run(&c).expect("runs");
            (explain(&c, &r), r)
        };
        let (fixed, _) = storm(LimiterKind::FixedWindow);
        assert!(fixed.contains("makes no difference here"), "{fixed}");
        let (log, r) = storm(LimiterKind::SlidingLog);
        assert!(
            log.contains("Recording rejected requests costs the client"),
            "{log}"
        );
        assert!(
            r.served_other_recording.expect("a log can record") > r.served_share + 0.1,
            "{log}"
        );
    }
}
