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
    }
}

fn pct(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// What a run of `c` showed, in a few sentences.
pub fn explain(c: &Controls, r: &Readout) -> String {
    let l = r.limit;
    let name = display_name(c.algorithm);
    let bound = r.bound.map_or_else(|| "?".to_owned(), |b| b.to_string());
    let mut parts = vec![if r.invariant_ok {
        format!("{name} kept the rule: no trailing window held more than {l}.")
    } else {
        format!(
            "{name} broke the rule: one trailing window held {} admitted requests, {} more than the limit of {l}, ending at {:.1} s.",
            r.worst_window,
            r.worst_window.saturating_sub(l),
            r.worst_at_s
        )
    }];
    match c.attack {
        Attack::BoundaryBurst => {
            parts.push(format!("This attack is two ticks of {l} requests. It gets what the limiter has ready at each tick, which can be less than the worst case in theory ({bound}): that bound holds over every arrival pattern, and only a sustained flood is sure to reach it."));
            if matches!(c.algorithm, LimiterKind::TokenBucket | LimiterKind::Gcra) {
                parts.push(format!("A bucket gives the ticks its burst of {} plus what refills between them; with a capacity well under {l} it stays clean.", c.capacity));
            }
        }
        Attack::Flood => parts.push(format!(
            "A sustained flood, timed to the limiter's worst moment, reaches the bound: the worst case in theory is {bound}, and this run measured {}.",
            r.worst_window
        )),
        Attack::RetryStorm => parts.push(format!(
            "A client sending a quarter of its quota took a spike of {} at {} s and retried every rejected request each second. It was served {} of its requests{}.",
            2 * l,
            c.window_s,
            pct(r.served_share),
            if c.record_rejects {
                ", because every rejected retry was logged and kept its window full"
            } else {
                ""
            }
        )),
        Attack::None => parts.push(format!(
            "The share served ({}) says nothing about whether the rule held; only the busiest window does.",
            pct(r.served_share)
        )),
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
        assert!(text.contains("worst case in theory (120)"), "{text}");
        let storm = Controls {
            algorithm: LimiterKind::SlidingLog,
            attack: Attack::RetryStorm,
            record_rejects: true,
            ..Controls::default()
        };
        let (r, _) = run(&storm).expect("runs");
        let text = explain(&storm, &r);
        assert!(
            text.contains(&format!(
                "It was served {:.1}% of its requests, because every rejected retry was logged",
                100.0 * r.served_share
            )),
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
}
