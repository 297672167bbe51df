//! The lab's form: what the reader typed, checked and turned into [`Controls`], which fields
//! apply to the chosen limiter, and the sentences that explain a run. The page's JavaScript
//! only reads the fields' text and shows what comes back.

use crate::controls::{
    by_name, Attack, Backoff, Client, Controls, Jitter, Named, NginxConf, RateUnit, Traffic,
};
use crate::library::{is_library, library_keys};
use crate::link::{MAX_CAPACITY, MAX_SEED};
use crate::readout::Readout;
use ratelab::decimal::fixed;
use ratelab::limiter::{thousandths_per_second, LeakyMode};
use ratelab::spec::{LimiterKind, MAX_BURST, MAX_RATE_COUNT};
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
    /// nginx's fields' text, space-separated in nginx's order: rate, unit, burst, delay, and
    /// `nodelay` when ticked (`7 r/m 5 2`; a number field's text never has a space). One
    /// string rather than five fields: each field costs the main module serde code.
    pub nginx: String,
    /// The retry storm's client, its menus' values space-separated: backoff, jitter and
    /// `honor` or `ignore` (`exponential full honor`), as [`Client::fields`] writes them.
    pub client: String,
    /// A library's settings, as the command line writes them after its name (`r=10,b=5`).
    pub library: String,
}

/// nginx's fields as the reader left them, in nginx's units: what [`paste_nginx`] reads
/// and fills.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NginxForm {
    /// `rate=`'s number.
    pub rate: String,
    /// Its unit, `r/s` or `r/m`.
    pub unit: String,
    /// `burst=`.
    pub burst: String,
    /// `delay=`.
    pub delay: String,
    /// `nodelay`.
    pub nodelay: bool,
}

/// nginx's settings from its fields' text, or the first wrong field's sentence. With `strict`
/// false (another limiter is chosen, and nginx's fields are hidden) a wrong value is not the
/// reader's concern until nginx is chosen again (its field keeps it): the run and the link
/// use nginx's default in its place. Under `nodelay`, `delay=` is set aside, as nginx does.
fn nginx_conf(f: &NginxForm, strict: bool) -> Result<NginxConf, String> {
    let d = NginxConf::default();
    let number = |text: &str, name: &str, min: u64, max: u64, default: u64| match whole(
        text, name, min, max,
    ) {
        Err(e) if strict => Err(e),
        r => Ok(r.unwrap_or(default)),
    };
    Ok(NginxConf {
        rate: number(&f.rate, "nginx's rate", 1, MAX_RATE_COUNT, d.rate)?,
        unit: match by_name::<RateUnit>(&f.unit, "nginx's rate unit") {
            Err(e) if strict => return Err(e),
            r => r.unwrap_or(d.unit),
        },
        burst: number(&f.burst, "nginx's burst", 0, MAX_BURST, d.burst)?,
        delay: if f.nodelay {
            0
        } else {
            number(&f.delay, "nginx's delay", 0, MAX_BURST, d.delay)?
        },
        nodelay: f.nodelay,
    })
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

/// The order of the form's fields in its text ([`Form::from_text`]).
pub const FORM_FIELDS: [&str; 13] = [
    "algorithm",
    "leakyMode",
    "capacity",
    "limit",
    "windowS",
    "traffic",
    "load",
    "seed",
    "recordRejects",
    "attack",
    "nginx",
    "client",
    "library",
];

impl Form {
    /// The form from its fields' text, one a line in [`FORM_FIELDS`]' order (`recordRejects`
    /// is `true` when ticked): how the page passes it, as one string rather than an object
    /// (reading an object of twelve fields cost the main module 1.8 KB gzipped). A line that
    /// is missing is empty; no field's text holds a line break (they are numbers, menus'
    /// values and nginx's and the client's space-separated words).
    pub fn from_text(text: &str) -> Form {
        let mut lines = text.split('\n');
        let mut next = || lines.next().unwrap_or_default().to_owned();
        Form {
            algorithm: next(),
            leaky_mode: next(),
            capacity: next(),
            limit: next(),
            window_s: next(),
            traffic: next(),
            load: next(),
            seed: next(),
            record_rejects: next() == "true",
            attack: next(),
            nginx: next(),
            client: next(),
            library: next(),
        }
    }

    /// The controls the form describes, or the first wrong field's sentence.
    pub fn controls(&self) -> Result<Controls, String> {
        let limit = whole(&self.limit, "Limit", 1, 100_000)?;
        let window_s = whole(&self.window_s, "Window", 1, 3_600)?;
        let load_text = self.load.trim();
        // Digits with at most one point and a digit after it: no signs or exponents.
        let (int, frac) = load_text.split_once('.').unwrap_or(("", load_text));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let load = (!frac.is_empty() && digits(int) && digits(frac))
            .then(|| ratelab::decimal::parse(load_text))
            .flatten()
            .filter(|l| (0.01..=3.0).contains(l))
            .ok_or_else(|| {
                format!(
                    "Load '{}' is not accepted: enter a share of the limit from 0.01 to 3, like 0.8",
                    shown(&self.load, SHOWN)
                )
            })?;
        let seed = whole(&self.seed, "Seed", 0, MAX_SEED)?;
        let algorithm: LimiterKind = by_name(&self.algorithm, "Limiter")?;
        let min_capacity = u64::from(algorithm != LimiterKind::LeakyBucket);
        let capacity = whole(&self.capacity, "Capacity", min_capacity, MAX_CAPACITY)?;
        let nginx = nginx_conf(&self.nginx(), algorithm == LimiterKind::Nginx)?;
        let attack = by_name::<Attack>(&self.attack, "Attack")?;
        // As nginx's fields: a wrong value is the reader's concern when the retry storm runs.
        let client = match Client::from_fields(&self.client) {
            Err(e) if attack == Attack::RetryStorm => return Err(e),
            r => r.unwrap_or_default(),
        };
        Ok(Controls {
            algorithm,
            capacity,
            limit,
            window_s,
            traffic: by_name::<Traffic>(&self.traffic, "Traffic")?,
            load,
            seed,
            minutes: Controls::default().minutes,
            attack,
            record_rejects: self.record_rejects,
            leaky_mode: by_name::<LeakyMode>(&self.leaky_mode, "Leaky-bucket form")?,
            nginx,
            client,
            library: library_keys(&self.library)?,
            replay: None,
        })
    }

    /// The form with nginx's fields set to `n`.
    pub fn with_nginx(self, n: NginxForm) -> Form {
        let nodelay = if n.nodelay { " nodelay" } else { "" };
        Form {
            nginx: format!("{} {} {} {}{nodelay}", n.rate, n.unit, n.burst, n.delay),
            ..self
        }
    }

    /// nginx's fields, split from [`Form::nginx`] (a part that is missing is empty).
    pub fn nginx(&self) -> NginxForm {
        let mut parts = self.nginx.split(' ');
        let mut next = || parts.next().unwrap_or_default().to_owned();
        NginxForm {
            rate: next(),
            unit: next(),
            burst: next(),
            delay: next(),
            nodelay: next() == "nodelay",
        }
    }

    /// Which fields apply to the chosen limiter, and the capacity dial's range.
    pub fn applies(&self) -> Applies {
        let kind = <LimiterKind as Named>::from_name(&self.algorithm);
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
            nginx: kind == Some(LimiterKind::Nginx),
            nginx_delay: kind == Some(LimiterKind::Nginx) && !self.nginx().nodelay,
            client: self.attack == Attack::RetryStorm.name(),
            library: kind.is_some_and(is_library),
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
    /// nginx's own fields (rate, burst, delay, nodelay), in place of the capacity dial.
    pub nginx: bool,
    /// nginx's `delay=`, which applies only without `nodelay`.
    pub nginx_delay: bool,
    /// The retry storm's client (backoff, jitter, `Retry-After`): under the retry storm.
    pub client: bool,
    /// A library's settings (for a library alone; the menu's option has an example of them).
    pub library: bool,
}
/// nginx's fields from a piece of nginx.conf the reader pasted: the `limit_req_zone` line
/// (`rate=7r/m`), the `limit_req` line (`burst=5 delay=2`, or `nodelay`), or both, or their
/// words alone. Each word found sets its field, as text the form then checks (a wrong value
/// is kept in its field and named there); a `limit_req` line sets all three of its own, with
/// nginx's defaults (burst 0, delay 0, no nodelay) for those it leaves out. Fields the text
/// does not name keep their values from `current`.
pub fn paste_nginx(text: &str, current: &NginxForm) -> Result<NginxForm, String> {
    let mut out = current.clone();
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = words.contains(&"limit_req");
    if found {
        out.burst = "0".into();
        out.delay = "0".into();
        out.nodelay = false;
    }
    let (mut delay, mut nodelay) = (false, false);
    for w in &words {
        match w.split_once('=').unwrap_or((w, "")) {
            ("rate", value) => {
                let unit = RateUnit::ALL
                    .iter()
                    .find(|u| value.ends_with(u.name()))
                    .ok_or_else(|| {
                        format!(
                            "nginx's rate '{}' is not one nginx takes: paste it as Nr/s or Nr/m, like rate=7r/m",
                            shown(value, SHOWN)
                        )
                    })?;
                out.rate = value[..value.len() - unit.name().len()].to_owned();
                out.unit = unit.name().to_owned();
            }
            ("burst", value) => out.burst = value.to_owned(),
            ("delay", value) => {
                out.delay = value.to_owned();
                delay = true;
            }
            ("nodelay", "") => nodelay = true,
            _ => continue,
        }
        found = true;
    }
    if delay && nodelay {
        return Err(
            "The pasted lines give both delay= and nodelay: nginx takes one or the other".into(),
        );
    }
    if nodelay || delay {
        out.nodelay = nodelay;
    }
    if !found {
        return Err(format!(
            "Found no rate=, burst=, delay= or nodelay in '{}': paste the limit_req_zone and limit_req lines of your nginx.conf, like limit_req zone=one burst=5 delay=2;",
            shown(text, SHOWN)
        ));
    }
    Ok(out)
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
        LimiterKind::ExpressRateLimit => "express-rate-limit",
        LimiterKind::RateLimiterFlexible => "rate-limiter-flexible",
        LimiterKind::GoRate => "Go x/time/rate",
        LimiterKind::RedisCell => "redis-cell",
        LimiterKind::Vsthrottle => "Varnish vsthrottle",
        LimiterKind::Limits => "Python limits",
    }
}

/// A share of requests as the page writes it.
fn pct(share: f64) -> String {
    format!("{}%", fixed(100.0 * share, 1))
}

/// The retry storm's client in numbers: its tries per request, the requests it gave up, how
/// long those served waited from their first try, and its busiest second.
fn client_sentence(requests: u64, tries: u64, client: &ratelab::sim::ClientStats) -> String {
    let per = if requests == 0 {
        0.0
    } else {
        tries as f64 / requests as f64
    };
    let wait = |q: f64| {
        let t = client.success.quantile(q).unwrap_or(0);
        let s = t as f64 / 1e6;
        if t == 0 {
            "at once".to_owned()
        } else if s < 10.0 {
            format!("within {} s", fixed(s, 1))
        } else {
            format!("within {} s", fixed(s, 0))
        }
    };
    let served = if client.success.is_empty() {
        "none was served".to_owned()
    } else {
        format!(
            "half of those served got in {}, 99% {}",
            wait(0.5),
            wait(0.99)
        )
    };
    let gave_up = match client.gave_up {
        0 => "none".to_owned(),
        n => n.to_string(),
    };
    format!(
        "It sent {tries} tries for {requests} requests ({} a request) and gave up on {gave_up}; {served}. Its busiest second held {} tries.",
        fixed(per, 2),
        client.peak_second
    )
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
            "{name} broke the rule: one trailing window held {worst} admitted requests, {} more than the limit of {l}, ending at {} s.",
            worst - l,
            fixed(r.worst_at_s, 1)
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
            let cl = c.client;
            let gaps = match cl.backoff {
                Backoff::Fixed => "every second",
                Backoff::Exponential => {
                    "after a second, then twice as long each time up to a minute"
                }
            };
            let jitter = match cl.jitter {
                Jitter::None => "",
                Jitter::Full => ", each wait drawn at random between none and that",
                Jitter::Equal => ", each wait half that plus a random part of the other half",
                Jitter::Decorrelated => {
                    ", each wait drawn at random between a second and three times the last wait"
                }
            };
            let honor = if cl.honor {
                ", never sooner than the limiter's Retry-After"
            } else {
                ""
            };
            parts.push(format!(
                "A client sending a quarter of its allowance took a spike of {} at {} s and retried each rejected request {gaps}{jitter}{honor}, twenty tries in all. It was served {} of its requests.",
                2 * l,
                c.window_s,
                pct(r.served_share)
            ));
            if let Some(client) = &r.client {
                parts.push(client_sentence(r.offered, r.tries, client));
            }
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
                        "Recording rejected requests costs the client {} points ({} recorded, {} not): each rejected retry counts against it, so its retries keep the count up and are rejected in turn.{}",
                        fixed(points, 1),
                        pct(with),
                        pct(without),
                        if cl.honor && c.record_rejects {
                            " Honouring Retry-After does not undo that: each answer is exact for one request alone, but the spike's other requests are turned away and logged meanwhile, and every one logged moves the next answer later."
                        } else {
                            ""
                        }
                    )
                } else {
                    format!(
                        "Recording rejected requests serves it {} points more here ({} recorded, {} not).",
                        fixed(-points, 1),
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
                        "Honest traffic averaging {} requests a window was enough: random arrivals bunch, and this limiter let a bunch through.",
                fixed(c.load * l as f64, 0)
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

/// What the page shows beside a run of nginx, after [`explain`]'s sentences: what nginx
/// makes of its settings ([`nginx_sentences`]) and the nginx.conf lines that configure it.
/// The page asks the tools module for these once a run of nginx is drawn, so that the main
/// module (the first screen) does not carry them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NginxNotes {
    /// The sentences, space-separated.
    pub sentences: String,
    /// The two nginx.conf lines.
    pub config: String,
}

/// The [`NginxNotes`] of a run of `c`, or why its controls do not run.
pub fn nginx_notes(c: &Controls) -> Result<NginxNotes, ratelab::Error> {
    let spec = c.limiter_spec()?;
    let bound = ratelab::theory::worst_case(&spec, c.limit, c.window_s * ratelab::time::SECOND);
    Ok(NginxNotes {
        sentences: nginx_sentences(&c.nginx, bound).join(" "),
        config: c.nginx.config(),
    })
}

/// Seconds with four significant digits down to a thousandth (8.621, 62.50), and to a
/// millionth below a second (0.01667).
fn secs(s: f64) -> String {
    let decimals = [(100.0, 1), (10.0, 2), (1.0, 3), (0.1, 4), (0.01, 5)]
        .iter()
        .find(|&&(at_least, _)| s >= at_least)
        .map_or(6, |&(_, d)| d);
    format!("{} s", fixed(s, decimals))
}

/// What is nginx's own in a run of `n`: how nginx stores its rate, when it rounds it; what
/// happens to a request above the rate (passed, delayed or rejected); and what its bound
/// (`bound`, from [`ratelab::theory::worst_case`]) is made of. Every number is computed from
/// the settings, in nginx's arithmetic.
pub fn nginx_sentences(n: &NginxConf, bound: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    // nginx keeps the rate as `r × 1000 / scale` thousandths a second, rounded down.
    let tps = thousandths_per_second(n.rate());
    let interval = secs(1000.0 / tps as f64);
    let rate = n.rate_text();
    if tps * n.unit.micros() / ratelab::time::SECOND != 1000 * n.rate {
        let exact = secs(n.unit.micros() as f64 / 1e6 / n.rate as f64);
        out.push(format!(
            "nginx stores rate={rate} as {tps} thousandths of a request a second ({} × 1000 / 60, rounded down): one request per {interval}{}.",
            n.rate,
            if exact == interval {
                String::new()
            } else {
                format!(", not {exact}")
            }
        ));
    }
    let (burst, delay) = (n.burst, n.delay);
    let waits = !n.nodelay && delay < burst;
    out.push(if burst == 0 {
        format!(
            "With burst=0, nginx admits a request only once a whole request has leaked since the last one it admitted, at most one every {interval}, and rejects the rest."
        )
    } else if n.nodelay {
        format!(
            "With nodelay, up to burst={burst} requests above the rate pass at once and the rest are rejected."
        )
    } else if !waits {
        format!(
            "delay={delay} is at least burst={burst}, so no request waits: up to {burst} above the rate pass at once and the rest are rejected, as with nodelay."
        )
    } else {
        // nginx's timer: `(excess − delay) × 1000 / rate` ms, longest with the excess at the burst.
        let longest = secs(((burst - delay).saturating_mul(1_000_000) / tps.max(1)) as f64 / 1000.0);
        let held = burst - delay;
        if delay == 0 {
            format!(
                "Without nodelay (and delay=0, nginx's default), every request above the rate waits, up to burst={burst} of them, for up to {longest}, until its excess has leaked; the window counts each when it leaves, and the rest are rejected."
            )
        } else {
            format!(
                "With delay={delay}, the first {delay} requests above the rate pass at once and the next {held} wait, for up to {longest}, until their excess has leaked; the window counts each when it leaves, and the rest are rejected."
            )
        }
    });
    if let Some(b) = bound {
        let at_once = if waits { delay } else { burst };
        let leaked = b.saturating_sub(1 + at_once);
        let first = if at_once == 0 {
            "the first request".to_owned()
        } else {
            format!("the first request and {at_once} more at once")
        };
        out.push(if leaked == 0 {
            format!(
                "No window can hold more than {b} here: {first}, and no more, since less than one request leaks over a window."
            )
        } else if waits {
            format!(
                "No window can hold more than {b} here: {first}, then {leaked} as waiting requests leave at the rate over a window and a millisecond, on nginx's millisecond clock."
            )
        } else {
            format!(
                "No window can hold more than {b} here: {first}, then {leaked} as the excess leaks over a window, on nginx's millisecond clock."
            )
        });
    }
    out
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
            nginx: "60 r/m 0 0".into(),
            client: "fixed none ignore".into(),
            library: String::new(),
        }
    }

    fn nginx_form(rate: &str, unit: &str, burst: &str, delay: &str, nodelay: bool) -> Form {
        Form {
            algorithm: "nginx".into(),
            ..form()
        }
        .with_nginx(NginxForm {
            rate: rate.into(),
            unit: unit.into(),
            burst: burst.into(),
            delay: delay.into(),
            nodelay,
        })
    }

    #[test]
    fn nginx_is_typed_in_its_own_units_and_each_wrong_field_is_named() {
        let c = nginx_form("7", "r/m", "5", "2", false)
            .controls()
            .expect("a limit_req line");
        assert_eq!(
            c.limiter_spec().expect("parses").text,
            "nginx:rate=7r/m,burst=5,delay=2"
        );
        assert_eq!(
            c.nginx.config(),
            "limit_req_zone $binary_remote_addr zone=lab:10m rate=7r/m;\nlimit_req zone=lab burst=5 delay=2;"
        );
        // nodelay sets delay= aside (its field keeps it); nginx's defaults are left out.
        let c = nginx_form("10", "r/s", "20", "3", true)
            .controls()
            .expect("valid");
        assert_eq!((c.nginx.delay, c.nginx.nodelay), (0, true));
        assert_eq!(
            c.limiter_spec().expect("parses").text,
            "nginx:rate=10r/s,burst=20,nodelay"
        );
        let c = nginx_form("1", "r/m", "0", "0", false)
            .controls()
            .expect("valid");
        assert_eq!(c.limiter_spec().expect("parses").text, "nginx:rate=1r/m");
        assert!(c.nginx.config().ends_with("limit_req zone=lab;"));
        let cases = [
            (
                nginx_form("7.5", "r/m", "5", "2", false),
                "nginx's rate '7.5' is not a whole number: enter one from 1 to 1000000",
            ),
            (
                nginx_form("0", "r/m", "5", "2", false),
                "nginx's rate 0 is out of range: enter a whole number from 1 to 1000000",
            ),
            (
                nginx_form("7", "r/h", "5", "2", false),
                "nginx's rate unit 'r/h' is not one ratelab offers: choose one of r/s, r/m",
            ),
            (
                nginx_form("7", "r/m", "-5", "2", false),
                "nginx's burst '-5' is not a whole number: enter one from 0 to 10000000",
            ),
            (
                nginx_form("7", "r/m", "5", "", false),
                "nginx's delay '' is not a whole number: enter one from 0 to 10000000",
            ),
        ];
        for (f, want) in cases {
            assert_eq!(f.controls().expect_err(want), want);
        }
        // With nodelay, a wrong delay is not in the way (the field is disabled, and kept).
        assert!(nginx_form("7", "r/m", "5", "x", true).controls().is_ok());
        // With another limiter chosen, nginx's hidden fields are not in the way either.
        let other = Form {
            algorithm: "token-bucket".into(),
            ..nginx_form("x", "r/h", "-1", "y", false)
        };
        assert_eq!(other.controls().expect("runs").nginx, NginxConf::default());
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
    fn pasted_nginx_lines_fill_nginx_fields() {
        let current = form().nginx();
        let both = "limit_req_zone $binary_remote_addr zone=one:10m rate=7r/m;\n  limit_req zone=one burst=5 delay=2;";
        let f = paste_nginx(both, &current).expect("nginx.conf");
        assert_eq!(
            f,
            NginxForm {
                rate: "7".into(),
                unit: "r/m".into(),
                burst: "5".into(),
                delay: "2".into(),
                nodelay: false,
            }
        );
        // A limit_req line alone: nginx's defaults for what it leaves out, the rate kept.
        let was = NginxForm {
            delay: "4".into(),
            nodelay: true,
            ..f.clone()
        };
        let g = paste_nginx("limit_req zone=one burst=20;", &was).expect("a line");
        assert_eq!(
            (
                g.rate.as_str(),
                g.burst.as_str(),
                g.delay.as_str(),
                g.nodelay
            ),
            ("7", "20", "0", false)
        );
        // The words alone, and nodelay.
        let h = paste_nginx("rate=10r/s burst=3 nodelay", &current).expect("words");
        assert_eq!(
            (
                h.rate.as_str(),
                h.unit.as_str(),
                h.burst.as_str(),
                h.nodelay
            ),
            ("10", "r/s", "3", true)
        );
        // A wrong number is kept for the form to name in its field.
        let bad = paste_nginx("limit_req zone=one burst=five;", &current).expect("pasted");
        let c = Form {
            algorithm: "nginx".into(),
            ..form()
        }
        .with_nginx(bad);
        assert!(c
            .controls()
            .expect_err("five")
            .starts_with("nginx's burst 'five'"));
        for (text, want) in [
            (
                "rate=7r/h",
                "nginx's rate '7r/h' is not one nginx takes: paste it as Nr/s or Nr/m",
            ),
            (
                "limit_req zone=one burst=5 delay=2 nodelay;",
                "both delay= and nodelay",
            ),
            (
                "limit_conn addr 10;",
                "Found no rate=, burst=, delay= or nodelay in 'limit_conn addr 10;'",
            ),
        ] {
            let e = paste_nginx(text, &current).expect_err(want);
            assert!(e.contains(want), "{e}");
        }
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
        assert!(!log.nginx && !lb.nginx && !tb.nginx_delay);
        // nginx has its own fields in place of the dial; delay= applies only without nodelay.
        let ngx = nginx_form("7", "r/m", "5", "2", false).applies();
        assert!(ngx.nginx && ngx.nginx_delay && !ngx.capacity && !ngx.leaky_mode);
        assert!(!ngx.record_rejects);
        let nodelay = nginx_form("7", "r/m", "5", "2", true).applies();
        assert!(nodelay.nginx && !nodelay.nginx_delay);
        // A limiter the lab does not offer applies nothing.
        let haproxy = a("haproxy", "60", "60");
        assert!(!haproxy.nginx && !haproxy.record_rejects && !haproxy.capacity);
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

    /// nginx's settings the explanation is checked with: its defaults (no burst: every
    /// request above the rate rejected), a `limit_req` line that waits and one that rounds
    /// its rate, `nodelay`, and a delay at or above the burst (so nothing waits).
    fn nginx_confs() -> Vec<NginxConf> {
        let conf = |rate, unit, burst, delay, nodelay| NginxConf {
            rate,
            unit,
            burst,
            delay,
            nodelay,
        };
        vec![
            NginxConf::default(),
            conf(7, RateUnit::PerMinute, 5, 2, false),
            conf(7, RateUnit::PerMinute, 5, 0, false),
            conf(10, RateUnit::PerSecond, 20, 0, true),
            conf(1, RateUnit::PerMinute, 3, 5, false),
            conf(90, RateUnit::PerMinute, 30, 10, false),
        ]
    }

    /// The nginx sentences agree with nginx's arithmetic, worked out here again.
    fn check_nginx_sentences(n: &NginxConf, r: &Readout, text: &str, case: &str) {
        let tps = thousandths_per_second(n.rate());
        let rounds = n.unit == RateUnit::PerMinute && (n.rate * 1000) % 60 != 0;
        assert_eq!(text.contains("nginx stores rate="), rounds, "{case}");
        if rounds {
            assert!(
                text.contains(&format!(
                    "nginx stores rate={}r/m as {tps} thousandths",
                    n.rate
                )),
                "{case}"
            );
        }
        let waits = !n.nodelay && n.delay < n.burst;
        assert_eq!(text.contains("for up to"), waits, "{case}");
        assert_eq!(
            text.contains("With nodelay"),
            n.nodelay && n.burst > 0,
            "{case}"
        );
        assert_eq!(text.contains("With burst=0"), n.burst == 0, "{case}");
        let b = r.bound.expect("nginx has a bound");
        assert!(
            r.worst_window <= b,
            "the run stays within nginx's bound: {case}"
        );
        assert!(
            text.contains(&format!("No window can hold more than {b} here")),
            "{case}"
        );
        // What leaks in a window of 60 s: 60,000 ms on nginx's clock, or 60,001 while
        // requests wait (a departure can come a millisecond after its window's start).
        let ms = if waits { 60_001 } else { 60_000 };
        let leaked = tps * ms / 1_000_000;
        let at_once = if waits { n.delay } else { n.burst };
        assert_eq!(b, 1 + at_once + leaked, "{case}");
        if leaked == 0 {
            assert!(text.contains("and no more, since less than one"), "{case}");
        } else {
            assert!(text.contains(&format!("then {leaked} as")), "{case}");
        }
    }

    /// Every limiter the lab offers (nginx in several settings), attack and recording
    /// setting: each sentence agrees with the numbers.
    #[test]
    fn the_explanation_is_true_in_every_state_of_the_form() {
        let states = <LimiterKind as Named>::ALL.iter().flat_map(|&algorithm| {
            let confs = if algorithm == LimiterKind::Nginx {
                nginx_confs()
            } else {
                vec![NginxConf::default()]
            };
            confs.into_iter().map(move |nginx| (algorithm, nginx))
        });
        for (algorithm, nginx) in states {
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
                    }
                    .with_nginx(nginx.clone());
                    let (r, _) = run(&c).expect("runs");
                    // What the page shows: the run's sentences, and for nginx its notes.
                    let mut text = explain(&c, &r);
                    assert_eq!(text, r.explanation);
                    if algorithm == LimiterKind::Nginx {
                        let notes = nginx_notes(&c).expect("notes");
                        text = format!("{text} {}", notes.sentences);
                    }
                    let case = format!(
                        "{algorithm:?} {nginx:?} {attack:?} record={record_rejects}: {text}"
                    );
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
                    if algorithm == LimiterKind::Nginx {
                        check_nginx_sentences(&c.nginx, &r, &text, &case);
                    } else {
                        assert!(!text.contains("No window can hold"), "{case}");
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

    #[test]
    fn the_retry_storms_client_is_the_readers_and_its_numbers_are_the_runs() {
        let storm = |client: &str| Form {
            attack: "retry-storm".into(),
            client: client.into(),
            ..form()
        };
        // The essays' client writes the spec it always did.
        let c = storm("fixed none ignore").controls().expect("valid");
        assert_eq!(c.client, Client::default());
        assert!(c
            .traffic_text()
            .expect("text")
            .ends_with(",tries=20,every=1s"));
        let c = storm("exponential full honor").controls().expect("valid");
        let text = c.traffic_text().expect("text");
        assert!(
            text.ends_with(
                ",tries=20,policy=exponential,base=1s,factor=2,cap=1min,jitter=full,retry-after=honor"
            ),
            "{text}"
        );
        let (r, _) = run(&c).expect("runs");
        assert!(r.command.contains("retry-after=honor"), "{}", r.command);
        let client = r.client.clone().expect("a retrying client's numbers");
        let e = &r.explanation;
        assert!(e.contains("after a second, then twice as long each time up to a minute, each wait drawn at random between none and that, never sooner than the limiter's Retry-After"), "{e}");
        assert!(
            e.contains(&format!(
                "It sent {} tries for {} requests",
                r.tries, r.offered
            )),
            "{e}"
        );
        let gave_up = match client.gave_up {
            0 => "none".to_owned(),
            n => n.to_string(),
        };
        assert!(e.contains(&format!("gave up on {gave_up};")), "{e}");
        assert!(
            e.contains(&format!("held {} tries", client.peak_second)),
            "{e}"
        );
        assert!(r.tries > r.offered, "the spike makes it retry");
        // A wrong client is named under the retry storm, and kept aside under anything else.
        for (bad, part) in [
            ("linear none ignore", "Backoff 'linear'"),
            ("fixed some ignore", "Jitter 'some'"),
            ("fixed none maybe", "Retry-After 'maybe'"),
            ("", "Backoff ''"),
        ] {
            let e = storm(bad).controls().expect_err(bad);
            assert!(e.starts_with(part) && e.contains("choose one of"), "{e}");
            let calm = Form {
                client: bad.into(),
                ..form()
            };
            assert_eq!(calm.controls().expect("not used").client, Client::default());
        }
        // Decorrelated jitter grows from the last wait: the spec says it needs backoff.
        let e = storm("fixed decorrelated ignore")
            .controls()
            .expect("the form's fields are each valid")
            .scenario()
            .expect_err("fixed gaps have no last wait to grow from");
        assert!(e.to_string().contains("policy=exponential"), "{e}");
        assert!(storm("fixed none ignore").applies().client);
        assert!(!form().applies().client);
    }

    #[test]
    fn a_log_that_records_rejects_says_why_honouring_retry_after_does_not_save_the_client() {
        let storm = |client: &str, record: bool| Form {
            algorithm: "sliding-log".into(),
            capacity: "100".into(),
            limit: "100".into(),
            record_rejects: record,
            attack: "retry-storm".into(),
            client: client.into(),
            ..form()
        };
        let why = "Honouring Retry-After does not undo that";
        let (r, _) =
            run(&storm("fixed none honor", true).controls().expect("valid")).expect("runs");
        let e = &r.explanation;
        assert!(
            e.contains("Recording rejected requests costs the client"),
            "{e}"
        );
        assert!(e.contains(why), "{e}");
        // Not said where the client ignores Retry-After, nor where nothing is recorded.
        for (client, record) in [("fixed none ignore", true), ("fixed none honor", false)] {
            let (r, _) = run(&storm(client, record).controls().expect("valid")).expect("runs");
            assert!(!r.explanation.contains(why), "{}", r.explanation);
        }
    }

    #[test]
    fn a_library_runs_with_its_own_settings_or_the_labs_limit_and_window() {
        // Each library's option in the page's menu, with the example of its settings it shows.
        let html = include_str!("../../../index.html");
        let examples: Vec<(LimiterKind, &str)> = LimiterKind::LIBRARIES
            .iter()
            .map(|&kind| {
                let at = format!("<option value=\"{}\" data-example=\"", kind.name());
                let start = html.find(&at).unwrap_or_else(|| panic!("{at}")) + at.len();
                let len = html[start..].find('"').expect("a closing quote");
                (kind, &html[start..start + len])
            })
            .collect();
        for (kind, example) in examples {
            let f = Form {
                algorithm: kind.name().into(),
                ..form()
            };
            assert!(f.applies().library);
            assert!(!f.applies().capacity && !f.applies().nginx);
            // Empty: the library at the lab's L and W.
            let c = f.controls().expect("valid");
            assert_eq!(c.limiter_spec().expect("parses").text, kind.name());
            let (r, _) = run(&c).expect("runs");
            assert!(
                r.command.contains(&format!("--limiter {} ", kind.name())),
                "{}",
                r.command
            );
            // Its example, as typed with spaces around it.
            let c = Form {
                library: format!("  {example} "),
                ..f.clone()
            }
            .controls()
            .expect("valid");
            assert_eq!(c.library, example);
            let (r, _) = run(&c).expect("runs");
            assert!(
                r.command
                    .contains(&format!("--limiter {}:{example} ", kind.name())),
                "{}",
                r.command
            );
        }
        for kind in [LimiterKind::TokenBucket, LimiterKind::Nginx] {
            assert!(!is_library(kind));
            let f = Form {
                algorithm: kind.name().into(),
                ..form()
            };
            assert!(!f.applies().library);
        }
        // A key the library does not take is named when it runs, with what it takes.
        let c = Form {
            algorithm: "go-rate".into(),
            library: "r=10,burst=5".into(),
            ..form()
        }
        .controls()
        .expect("the form keeps it");
        let e = run(&c).expect_err("burst is b").to_string();
        assert!(e.contains("burst") && e.contains("b="), "{e}");
        // Characters no setting has are the core's to name, when it runs; settings too long
        // to be any library's are refused in the form, the main module's few bytes.
        let odd = Form {
            algorithm: "limits".into(),
            library: "rate=1/second;drop".into(),
            ..form()
        };
        let e = run(&odd.controls().expect("the form keeps it"))
            .expect_err("a semicolon")
            .to_string();
        assert!(e.contains("1/second;drop"), "{e}");
        let long = Form {
            library: "r=1,".repeat(60),
            ..odd
        };
        let e = long.controls().expect_err("too long");
        assert!(
            e.contains("of 240 bytes") && e.contains("at most 200"),
            "{e}"
        );
    }

    #[test]
    fn the_forms_text_is_its_fields_one_a_line_in_order() {
        let f = Form {
            record_rejects: true,
            attack: "retry-storm".into(),
            client: "exponential full honor".into(),
            library: "r=10,b=5".into(),
            ..form()
        };
        let text = [
            &f.algorithm,
            &f.leaky_mode,
            &f.capacity,
            &f.limit,
            &f.window_s,
            &f.traffic,
            &f.load,
            &f.seed,
            "true",
            &f.attack,
            &f.nginx,
            &f.client,
            &f.library,
        ]
        .join("\n");
        assert_eq!(Form::from_text(&text), f);
        assert_eq!(FORM_FIELDS.len(), text.lines().count());
        // Missing lines are empty fields, named by the checks as any empty field is.
        let short = Form::from_text("token-bucket\nmeter");
        assert_eq!((short.capacity.as_str(), short.record_rejects), ("", false));
        assert!(short
            .controls()
            .expect_err("no limit")
            .starts_with("Limit ''"));
    }
}
