//! The main figure's state in a URL: [`encode`] writes the controls that differ from the
//! defaults as a query string, [`decode`] reads one back. Decoding never fails: a parameter
//! that is unknown, repeated, malformed or out of range gets a [`Problem`] naming it and what
//! is accepted, and the figure keeps every other parameter (the bad one falls back to its
//! default, which the problem says). Plain Rust, tested natively, and fuzzed (issue 6).

use crate::controls::{Attack, Backoff, Controls, Jitter, Named, RateUnit, Traffic};
use ratelab::limiter::LeakyMode;
use ratelab::spec::{LimiterKind, LimiterSpec};
use serde::{Deserialize, Serialize};

/// The largest seed (so it survives JavaScript's numbers exactly).
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// The largest capacity.
pub const MAX_CAPACITY: u64 = 1_000_000;
/// How much of a bad value a message quotes.
const QUOTE: usize = 40;
/// The loads the honest-client section offers.
pub const HONEST_LOADS: [&str; 4] = ["0.3", "0.5", "0.8", "1"];
/// The largest capacity of the bucket-ceiling section's dial.
pub const MAX_CEILING_CAPACITY: u64 = 120;

/// The section figures' own controls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Sections {
    /// The bucket-ceiling section's capacity dial.
    pub ceiling_capacity: u64,
    /// The honest-client section's traffic shape (one of [`Traffic::SHAPES`]).
    #[serde(with = "crate::controls::named")]
    pub honest_traffic: Traffic,
    /// The honest-client section's load, one of [`HONEST_LOADS`].
    pub honest_load: String,
    /// The herding section's jitter (against none).
    #[serde(with = "crate::controls::named")]
    pub herding_jitter: Jitter,
}

impl Default for Sections {
    fn default() -> Self {
        Sections {
            ceiling_capacity: 10,
            honest_traffic: Traffic::PageLoads,
            honest_load: "0.8".into(),
            herding_jitter: Jitter::Full,
        }
    }
}

/// What a link said.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decoded {
    /// The figure's controls.
    pub controls: Controls,
    /// Whether compare mode is on.
    pub compare: bool,
    /// Whether the page is shown as an embedded figure.
    pub embed: bool,
    /// The section figures' controls.
    pub sections: Sections,
    /// What was wrong, one entry per bad parameter.
    pub problems: Vec<Problem>,
}

/// One bad parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The parameter's name, as given (quoted, shortened).
    pub param: String,
    /// The sentence to show.
    pub message: String,
}

/// One parameter a link may carry: how it is read, how it is written, and how its default is
/// named in a message. [`PARAMS`] is the one list of them; decoding, encoding and the messages
/// are all made from it.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Its name in the query string.
    pub key: &'static str,
    /// Whether it changes how the page is shown rather than the figure (never written).
    pub view: bool,
    /// Reads a value into the state; `Err` says what is accepted.
    set: fn(&mut Decoded, &str) -> Result<(), String>,
    /// The value as a link writes it; `None` when a link leaves it out (the reader's file).
    get: fn(&Decoded) -> Option<String>,
    /// The default as a message names it, when not the written value itself.
    shown_default: Option<&'static str>,
}

impl Param {
    const fn new(
        key: &'static str,
        set: fn(&mut Decoded, &str) -> Result<(), String>,
        get: fn(&Decoded) -> Option<String>,
    ) -> Self {
        Param {
            key,
            view: false,
            set,
            get,
            shown_default: None,
        }
    }

    const fn shown(mut self, default: &'static str) -> Self {
        self.shown_default = Some(default);
        self
    }

    const fn view(mut self) -> Self {
        self.view = true;
        self
    }

    /// The default, as a message names it.
    fn default_text(&self) -> String {
        match self.shown_default {
            Some(text) => text.to_owned(),
            None => (self.get)(&Decoded::default()).unwrap_or_default(),
        }
    }
}

fn on_off(v: bool) -> Option<String> {
    Some(u8::from(v).to_string())
}

/// Every parameter a link may carry, in the order [`encode`] writes them: the main figure's,
/// then the section figures' own controls, then how the page is shown.
pub const PARAMS: [Param; 21] = [
    Param::new(
        "algorithm",
        |d, v| {
            d.controls.algorithm = one_of(v, <LimiterKind as Named>::ALL)?;
            Ok(())
        },
        |d| Some(d.controls.algorithm.name().into()),
    ),
    Param::new(
        "capacity",
        |d, v| {
            d.controls.capacity = whole(v, 0, MAX_CAPACITY)?;
            Ok(())
        },
        |d| Some(d.controls.capacity.to_string()),
    ),
    Param::new(
        "limit",
        |d, v| {
            d.controls.limit = whole(v, 1, 100_000)?;
            Ok(())
        },
        |d| Some(d.controls.limit.to_string()),
    ),
    Param::new(
        "window",
        |d, v| {
            d.controls.window_s = whole(v, 1, 3_600)?;
            Ok(())
        },
        |d| Some(d.controls.window_s.to_string()),
    )
    .shown("60 s"),
    Param::new(
        "traffic",
        |d, v| {
            d.controls.traffic = one_of(v, Traffic::SHAPES)?;
            Ok(())
        },
        // A reader's own file is never part of a link: it stays in their browser.
        |d| (d.controls.traffic != Traffic::File).then(|| d.controls.traffic.name().into()),
    ),
    Param::new(
        "load",
        |d, v| {
            d.controls.load = load(v)?;
            Ok(())
        },
        |d| Some(ratelab::decimal::shortest(d.controls.load)),
    ),
    Param::new(
        "seed",
        |d, v| {
            d.controls.seed = whole(v, 0, MAX_SEED)?;
            Ok(())
        },
        |d| Some(d.controls.seed.to_string()),
    ),
    Param::new(
        "attack",
        |d, v| {
            d.controls.attack = one_of(v, Attack::ALL)?;
            Ok(())
        },
        |d| Some(d.controls.attack.name().into()),
    ),
    Param::new(
        "record-rejects",
        |d, v| {
            d.controls.record_rejects = flag(v)?;
            Ok(())
        },
        |d| on_off(d.controls.record_rejects),
    )
    .shown("off"),
    Param::new(
        "leaky-mode",
        |d, v| {
            d.controls.leaky_mode = one_of(v, LeakyMode::ALL)?;
            Ok(())
        },
        |d| Some(d.controls.leaky_mode.name().into()),
    ),
    Param::new(
        "nginx",
        |d, v| {
            // nginx's own words, as the limiter spec has them: rate=7r/m,burst=5,delay=2.
            let spec = LimiterSpec::parse(&format!("nginx:{v}")).map_err(|e| {
                format!("nginx's words, like rate=7r/m,burst=5,delay=2 or rate=10r/s,burst=20,nodelay ({e})")
            })?;
            let n = &mut d.controls.nginx;
            if let Some(r) = spec.rate {
                n.rate = r.count;
                n.unit = if r.per == RateUnit::PerSecond.micros() {
                    RateUnit::PerSecond
                } else {
                    RateUnit::PerMinute
                };
            }
            n.burst = spec.burst.unwrap_or(0);
            n.delay = spec.delay;
            n.nodelay = spec.mode == LeakyMode::Meter;
            Ok(())
        },
        |d| Some(d.controls.nginx.spec_keys()),
    ),
    Param::new(
        "library",
        |d, v| {
            // Its keys and values are the core's to check when the library runs.
            d.controls.library = crate::library::library_keys(v)?;
            Ok(())
        },
        |d| Some(d.controls.library.clone()),
    )
    .shown("the library at the lab's limit and window"),
    Param::new(
        "backoff",
        |d, v| {
            d.controls.client.backoff = one_of(v, Backoff::ALL)?;
            Ok(())
        },
        |d| Some(d.controls.client.backoff.name().into()),
    ),
    Param::new(
        "jitter",
        |d, v| {
            d.controls.client.jitter = one_of(v, Jitter::ALL)?;
            Ok(())
        },
        |d| Some(d.controls.client.jitter.name().into()),
    ),
    Param::new(
        "retry-after",
        |d, v| {
            d.controls.client.honor = match v {
                "honor" => true,
                "ignore" => false,
                _ => return Err("honor or ignore".into()),
            };
            Ok(())
        },
        |d| {
            Some(
                if d.controls.client.honor {
                    "honor"
                } else {
                    "ignore"
                }
                .into(),
            )
        },
    ),
    Param::new(
        "compare",
        |d, v| {
            d.compare = flag(v)?;
            Ok(())
        },
        |d| on_off(d.compare),
    )
    .shown("off"),
    Param::new(
        "ceiling-capacity",
        |d, v| {
            d.sections.ceiling_capacity = whole(v, 1, MAX_CEILING_CAPACITY)?;
            Ok(())
        },
        |d| Some(d.sections.ceiling_capacity.to_string()),
    ),
    Param::new(
        "honest-traffic",
        |d, v| {
            d.sections.honest_traffic = one_of(v, Traffic::SHAPES)?;
            Ok(())
        },
        |d| Some(d.sections.honest_traffic.name().into()),
    ),
    Param::new(
        "honest-load",
        |d, v| {
            let i = HONEST_LOADS.iter().position(|l| *l == v);
            let i = i.ok_or_else(|| format!("one of {}", HONEST_LOADS.join(", ")))?;
            d.sections.honest_load = HONEST_LOADS[i].into();
            Ok(())
        },
        |d| Some(d.sections.honest_load.clone()),
    ),
    Param::new(
        "herding-jitter",
        |d, v| {
            // Against none: the section shows none beside the one chosen.
            d.sections.herding_jitter = one_of(v, &Jitter::ALL[1..])?;
            Ok(())
        },
        |d| Some(d.sections.herding_jitter.name().into()),
    ),
    Param::new(
        "embed",
        |d, v| {
            d.embed = flag(v)?;
            Ok(())
        },
        |d| on_off(d.embed),
    )
    .shown("off")
    .view(),
];

/// Decodes a query string (with or without its leading `?`).
///
/// The page's bare address opens on the essay's first figure, [`Controls::opening`] (a fixed
/// window under steady traffic). A link that names no `algorithm` is one written before that:
/// it meant the token bucket, and still does; [`encode`] always names the algorithm.
pub fn decode(query: &str) -> Decoded {
    let mut out = Decoded::default();
    let query = query.strip_prefix('?').unwrap_or(query);
    if query.is_empty() {
        out.controls = Controls::opening();
    }
    let mut seen: Vec<String> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(raw_key);
        let value = percent_decode(raw_value);
        // The gateways section's and the lab's gateways control's own, read by the tools
        // module (`gateways_link`).
        if key.starts_with("gateways") || key.starts_with("lab-gateways") {
            continue;
        }
        let shown = quote(&key);
        let Some(param) = PARAMS.iter().find(|p| p.key == key) else {
            out.problems.push(Problem {
                param: shown.clone(),
                message: format!(
                    "The link's parameter '{shown}' is not one ratelab knows, so it was ignored. Accepted: {}.",
                    PARAMS.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
                ),
            });
            continue;
        };
        if seen.contains(&key) {
            out.problems.push(Problem {
                param: shown.clone(),
                message: format!(
                    "The link gives '{shown}' more than once; the first one ({}) is used.",
                    first_value(query, &key).map_or_else(String::new, |v| quote(&v))
                ),
            });
            continue;
        }
        seen.push(key.clone());
        if let Err(accepted) = (param.set)(&mut out, &value) {
            let default = param.default_text();
            out.problems.push(Problem {
                param: shown.clone(),
                message: format!(
                    "The link's {shown}='{}' is not accepted: {accepted}. The figure uses {default} instead; everything else in the link is kept.",
                    quote(&value)
                ),
            });
        }
    }
    // A capacity of 0 means something only for the leaky bucket (no queue at all).
    if out.controls.capacity == 0 && out.controls.algorithm != LimiterKind::LeakyBucket {
        out.controls.capacity = Controls::default().capacity;
        out.problems.push(Problem {
            param: "capacity".into(),
            message: format!(
                "The link's capacity=0 is accepted only for the leaky bucket; {} needs a whole number from 1 to {MAX_CAPACITY}. The figure uses {} instead.",
                out.controls.algorithm.name(),
                out.controls.capacity
            ),
        });
    }
    out
}

fn first_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(k) == key).then(|| percent_decode(v))
    })
}

/// One of `among` (all of an enum's values, or the traffic shapes a link may name: never the
/// reader's file), by name.
fn one_of<T: Named>(value: &str, among: &[T]) -> Result<T, String> {
    among
        .iter()
        .copied()
        .find(|t| t.name() == value)
        .ok_or_else(|| {
            let names: Vec<_> = among.iter().map(|t| t.name()).collect();
            format!("one of {}", names.join(", "))
        })
}

fn whole(value: &str, min: u64, max: u64) -> Result<u64, String> {
    let accepted = || format!("a whole number from {min} to {max}");
    if value.is_empty() || value.len() > 20 || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(accepted());
    }
    match value.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(accepted()),
    }
}

fn load(value: &str) -> Result<f64, String> {
    let accepted = "a share of the limit from 0.01 to 3, like 0.8";
    // Digits with at most one point: no signs, exponents, NaN or infinity.
    let digits = value.bytes().filter(u8::is_ascii_digit).count();
    let points = value.bytes().filter(|&b| b == b'.').count();
    // Up to 32 characters, and at least 0.01: every load encode writes (Rust's shortest
    // round-trip form without exponent, at most 20 characters for a share in [0.01, 3]) reads
    // back. Below 0.01 that form grows past 32 characters (1e-31 is written with 33).
    if value.len() > 32 || digits == 0 || points > 1 || digits + points != value.len() {
        return Err(accepted.into());
    }
    match ratelab::decimal::parse(value) {
        Some(v) if (0.01..=3.0).contains(&v) => Ok(v),
        _ => Err(accepted.into()),
    }
}

fn flag(value: &str) -> Result<bool, String> {
    match value {
        "1" | "true" | "on" | "yes" | "" => Ok(true),
        "0" | "false" | "off" | "no" => Ok(false),
        _ => Err("1 or 0 (true or false)".into()),
    }
}

/// The controls as a query string, without the `?`: the algorithm, and whatever else differs
/// from the defaults.
pub fn encode(controls: &Controls, compare: bool, sections: &Sections) -> String {
    let state = Decoded {
        controls: controls.clone(),
        compare,
        embed: false,
        sections: sections.clone(),
        problems: Vec::new(),
    };
    let default = Decoded::default();
    PARAMS
        .iter()
        .filter(|p| !p.view)
        .filter_map(|p| {
            let value = (p.get)(&state)?;
            (p.key == "algorithm" || (p.get)(&default).as_ref() != Some(&value))
                .then(|| format!("{}={}", p.key, percent_encode(&value)))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// At most [`QUOTE`] characters of a value, for a message, made safe to show.
fn quote(text: &str) -> String {
    ratelab::text::shown(text, QUOTE)
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; the bytes are
/// read as UTF-8, with any invalid sequence replaced.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len()
                && hex(bytes[i + 1]).is_some()
                && hex(bytes[i + 2]).is_some() =>
            {
                out.push(hex(bytes[i + 1]).unwrap_or(0) << 4 | hex(bytes[i + 2]).unwrap_or(0));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Percent-encodes what a query value cannot carry as it is.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        // `/`, `=` and `,` may stand in a query's value as they are (RFC 3986), and nginx's
        // words have them: nginx=rate=7r/m,burst=5,delay=2.
        if b.is_ascii_alphanumeric() || b"-._~/=,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controls::{NginxConf, OFFERED};
    use proptest::prelude::*;

    #[test]
    fn a_link_sets_nginx_in_its_own_words() {
        let d = decode("algorithm=nginx&nginx=rate=7r/m,burst=5,delay=2&limit=7");
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        let n = &d.controls.nginx;
        assert_eq!(d.controls.algorithm, LimiterKind::Nginx);
        assert_eq!(
            (n.rate, n.unit, n.burst, n.delay, n.nodelay),
            (7, RateUnit::PerMinute, 5, 2, false)
        );
        // Written as nginx writes it, and read back the same.
        let q = encode(&d.controls, false, &Sections::default());
        assert_eq!(q, "algorithm=nginx&limit=7&nginx=rate=7r/m,burst=5,delay=2");
        assert_eq!(decode(&q).controls, d.controls);
        // A browser's own encoding reads the same; nginx's defaults fill what is left out.
        assert_eq!(
            decode("algorithm=nginx&nginx=rate%3D10r%2Fs%2Cnodelay")
                .controls
                .nginx,
            NginxConf {
                rate: 10,
                unit: RateUnit::PerSecond,
                nodelay: true,
                ..NginxConf::default()
            }
        );
        assert_eq!(
            decode("nginx=burst=3").controls.nginx,
            NginxConf {
                burst: 3,
                ..NginxConf::default()
            }
        );
        // A bad one is named with what nginx accepts; the rest is kept.
        for bad in [
            "rate=7r/h",
            "rate=0r/s",
            "burst=-1",
            "delay=x",
            "burst=5,delay=2,nodelay",
            "servers=2",
            "",
        ] {
            let d = decode(&format!("algorithm=nginx&nginx={bad}&seed=4"));
            assert_eq!(d.problems.len(), 1, "{bad}");
            let m = &d.problems[0].message;
            assert!(
                m.contains("nginx's words, like rate=7r/m,burst=5,delay=2")
                    && m.contains("uses rate=60r/m instead"),
                "{m}"
            );
            assert_eq!(
                (d.controls.algorithm, d.controls.seed),
                (LimiterKind::Nginx, 4)
            );
            assert_eq!(d.controls.nginx, NginxConf::default());
        }
        // HAProxy is not offered in the lab.
        assert_eq!(decode("algorithm=haproxy").problems.len(), 1);
    }

    #[test]
    fn the_bare_address_opens_on_the_essays_first_figure_and_old_links_keep_their_limiter() {
        let d = decode("");
        assert_eq!(d.controls, Controls::opening());
        assert_eq!(d.controls.algorithm, LimiterKind::FixedWindow);
        assert_eq!(d.controls.attack, Attack::None);
        assert!(d.problems.is_empty() && !d.compare && !d.embed);
        assert_eq!(decode("?").controls, Controls::opening());
        // Links written before the opening named no algorithm for the token bucket.
        for old in ["embed=1", "limit=100", "compare=1"] {
            assert_eq!(
                decode(old).controls.algorithm,
                LimiterKind::TokenBucket,
                "{old}"
            );
        }
        // Every link names its algorithm, so none reads as the opening by accident.
        for c in [Controls::default(), Controls::opening()] {
            let q = encode(&c, false, &Sections::default());
            assert_eq!(q, format!("algorithm={}", c.algorithm.name()));
            assert_eq!(decode(&q).controls, c);
            assert_eq!(decode(&format!("{q}&embed=1")).controls, c);
        }
    }

    #[test]
    fn a_link_sets_every_control() {
        let d = decode("?algorithm=sliding-log&capacity=5&limit=100&window=10&traffic=page-loads&load=1.2&seed=42&attack=retry-storm&record-rejects=1&leaky-mode=queue&backoff=exponential&jitter=decorrelated&retry-after=honor&compare=1&embed=1&ceiling-capacity=70&honest-traffic=on-off&honest-load=1&herding-jitter=equal");
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        let c = &d.controls;
        assert_eq!(
            (c.algorithm, c.capacity, c.limit, c.window_s),
            (LimiterKind::SlidingLog, 5, 100, 10)
        );
        assert_eq!((c.traffic, c.load, c.seed), (Traffic::PageLoads, 1.2, 42));
        assert_eq!(
            (c.attack, c.record_rejects, c.leaky_mode),
            (Attack::RetryStorm, true, LeakyMode::Queue)
        );
        assert_eq!(
            c.client,
            crate::controls::Client {
                backoff: Backoff::Exponential,
                jitter: Jitter::Decorrelated,
                honor: true
            }
        );
        assert!(d.compare && d.embed);
        assert_eq!(
            d.sections,
            Sections {
                ceiling_capacity: 70,
                honest_traffic: Traffic::OnOff,
                honest_load: "1".into(),
                herding_jitter: Jitter::Equal,
            }
        );
        for bad in [
            "herding-jitter=none",
            "jitter=some",
            "backoff=linear",
            "retry-after=yes",
            "ceiling-capacity=0",
            "ceiling-capacity=121",
            "honest-load=0.7",
            "honest-traffic=file",
        ] {
            assert_eq!(decode(bad).problems.len(), 1, "{bad}");
        }
    }

    #[test]
    fn a_librarys_settings_ride_in_the_link_and_a_bad_one_is_named() {
        let d = decode("algorithm=go-rate&library=r%3D10%2Cb%3D5");
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(
            (d.controls.algorithm, d.controls.library.as_str()),
            (LimiterKind::GoRate, "r=10,b=5")
        );
        assert_eq!(
            d.controls.limiter_spec().expect("parses").text,
            "go-rate:r=10,b=5"
        );
        assert!(encode(&d.controls, false, &Sections::default()).contains("&library=r=10,b=5"));
        let bad = decode(&format!("algorithm=limits&library={}", "x".repeat(201)));
        assert_eq!(bad.problems.len(), 1);
        assert!(
            bad.problems[0]
                .message
                .contains("Library settings of 201 bytes")
                && bad.problems[0]
                    .message
                    .contains("the library at the lab's limit and window"),
            "{}",
            bad.problems[0].message
        );
        assert_eq!(
            bad.controls.algorithm,
            LimiterKind::Limits,
            "the rest is kept"
        );
        assert_eq!(bad.controls.library, "");
    }

    #[test]
    fn a_bad_parameter_is_named_and_the_rest_is_kept() {
        let d = decode(
            "limit=abc&algorithm=gcra&window=0&load=NaN&seed=-1&foo=1&limit=5&traffic=%3Cscript%3E",
        );
        let params: Vec<&str> = d.problems.iter().map(|p| p.param.as_str()).collect();
        assert_eq!(
            params,
            ["limit", "window", "load", "seed", "foo", "limit", "traffic"]
        );
        assert_eq!(
            d.controls.algorithm,
            LimiterKind::Gcra,
            "the good parameter is kept"
        );
        assert_eq!(d.controls.limit, Controls::default().limit);
        assert!(
            d.problems[0]
                .message
                .contains("a whole number from 1 to 100000"),
            "{}",
            d.problems[0].message
        );
        assert!(d.problems[0].message.contains("'abc'"));
        assert!(d.problems[2].message.contains("from 0.01 to 3"));
        assert!(d.problems[4].message.contains("Accepted: algorithm"));
        assert!(
            d.problems[5].message.contains("first one (abc)"),
            "{}",
            d.problems[5].message
        );
        assert!(
            d.problems[6].message.contains("'<script>'"),
            "decoded, quoted as text"
        );
    }

    #[test]
    fn numbers_are_strict() {
        for bad in [
            "1e3",
            "+5",
            " 5",
            "5.0",
            "0x10",
            "99999999999999999999999",
            "",
            "١٢",
        ] {
            assert!(
                decode(&format!("limit={}", percent_encode(bad)))
                    .problems
                    .len()
                    == 1,
                "{bad}"
            );
        }
        for bad in [
            "inf",
            "-0.5",
            "0",
            "3.01",
            "1e-3",
            ".",
            "1..2",
            "0.8.1",
            "0.0099",
            // Found by the url_state fuzzer: 1e-31 in 32 characters, which encode wrote in 33.
            ".0000000000000000000000000000001",
        ] {
            assert!(decode(&format!("load={bad}")).problems.len() == 1, "{bad}");
        }
        assert_eq!(decode("load=.5").controls.load, 0.5);
        assert_eq!(decode("load=.01").controls.load, 0.01);
        // Found by the url_state fuzzer: a load that decodes must survive encode and decode.
        let d = decode("load=.12345678901");
        assert!(d.problems.is_empty());
        let again = decode(&encode(&d.controls, false, &d.sections));
        assert!(again.problems.is_empty(), "{:?}", again.problems);
        assert_eq!(again.controls.load, d.controls.load);
        assert_eq!(decode(&format!("seed={MAX_SEED}")).controls.seed, MAX_SEED);
        assert_eq!(decode(&format!("seed={}", MAX_SEED + 1)).problems.len(), 1);
    }

    #[test]
    fn long_and_odd_values_are_quoted_short() {
        let long = "x".repeat(100_000);
        let d = decode(&format!("traffic={long}&{long}=1&algorithm=%FF%FE"));
        assert_eq!(d.problems.len(), 3);
        assert!(
            d.problems.iter().all(|p| p.message.chars().count() < 400),
            "{:?}",
            d.problems[1].message.len()
        );
        assert!(d.problems[2].message.contains('\u{FFFD}'));
    }

    fn nginx() -> impl Strategy<Value = NginxConf> {
        (
            1..=ratelab::spec::MAX_RATE_COUNT,
            0..2usize,
            0..=ratelab::spec::MAX_BURST,
            0..=ratelab::spec::MAX_BURST,
            any::<bool>(),
        )
            .prop_map(|(rate, u, burst, delay, nodelay)| NginxConf {
                rate,
                unit: RateUnit::ALL[u],
                burst,
                // The form sets delay= aside under nodelay, as nginx does.
                delay: if nodelay { 0 } else { delay },
                nodelay,
            })
    }

    fn controls() -> impl Strategy<Value = Controls> {
        (
            (
                0..OFFERED.len(),
                1..=MAX_CAPACITY,
                1..=100_000u64,
                1..=3_600u64,
            ),
            (0..5usize, 1..=300u32, 0..=MAX_SEED),
            (0..4usize, any::<bool>(), 0..2usize),
            nginx(),
            (0..2usize, 0..4usize, any::<bool>()),
            // A library's settings, as the form keeps them (trimmed): any of the characters
            // a link may carry, some of them escaped in it.
            "[a-z0-9=,./_-][a-z0-9=,./_ -]{0,60}[a-z0-9=,./_-]|",
        )
            .prop_map(
                |(
                    (a, capacity, limit, window_s),
                    (t, load, seed),
                    (k, record_rejects, m),
                    nginx,
                    (b, j, honor),
                    library,
                )| {
                    Controls {
                        algorithm: <LimiterKind as Named>::ALL[a],
                        capacity,
                        limit,
                        window_s,
                        traffic: Traffic::SHAPES[t],
                        load: f64::from(load) / 100.0,
                        seed,
                        minutes: Controls::default().minutes,
                        attack: Attack::ALL[k],
                        record_rejects,
                        leaky_mode: LeakyMode::ALL[m],
                        client: crate::controls::Client {
                            backoff: Backoff::ALL[b],
                            jitter: Jitter::ALL[j],
                            honor,
                        },
                        library,
                        ..Controls::default()
                    }
                    .with_nginx(nginx)
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn encode_then_decode_is_the_identity(
            c in controls(),
            compare in any::<bool>(),
            (cap, t, l, h) in (1..=MAX_CEILING_CAPACITY, 0..5usize, 0..4usize, 1..4usize),
        ) {
            let sections = Sections {
                ceiling_capacity: cap,
                honest_traffic: Traffic::SHAPES[t],
                honest_load: HONEST_LOADS[l].into(),
                herding_jitter: Jitter::ALL[h],
            };
            let d = decode(&encode(&c, compare, &sections));
            prop_assert!(d.problems.is_empty(), "{:?}", d.problems);
            prop_assert_eq!(d.controls, c);
            prop_assert_eq!(d.compare, compare);
            prop_assert_eq!(d.sections, sections);
        }

        #[test]
        fn any_query_decodes_without_panicking(q in ".{0,200}") {
            let d = decode(&q);
            prop_assert!(d.problems.len() <= q.split('&').count());
        }
    }
}
