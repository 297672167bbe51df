//! The main figure's state in a URL: [`encode`] writes the controls that differ from the
//! defaults as a query string, [`decode`] reads one back. Decoding never fails: a parameter
//! that is unknown, repeated, malformed or out of range gets a [`Problem`] naming it and what
//! is accepted, and the figure keeps every other parameter (the bad one falls back to its
//! default, which the problem says). Plain Rust, tested natively, and fuzzed (issue 6).

use crate::page::Controls;
use serde::{Deserialize, Serialize};

/// The limiters the figure offers, by URL name.
pub const ALGORITHMS: [&str; 6] = [
    "fixed-window",
    "sliding-log",
    "sliding-window-counter",
    "token-bucket",
    "gcra",
    "leaky-bucket",
];
/// The honest traffic shapes the figure offers.
pub const SHAPES: [&str; 5] = [
    "steady",
    "small-bursts",
    "page-loads",
    "big-bursts",
    "on-off",
];
/// The attacks (`none` is honest traffic).
pub const ATTACKS: [&str; 4] = ["none", "boundary-burst", "flood", "retry-storm"];
/// Forms of the leaky bucket.
pub const LEAKY_MODES: [&str; 2] = ["meter", "queue"];
/// The largest seed (so it survives JavaScript's numbers exactly).
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// The largest capacity.
pub const MAX_CAPACITY: u64 = 1_000_000;
/// How much of a bad value a message quotes.
const QUOTE: usize = 40;

/// Every parameter a link may carry, in the order [`encode`] writes them: the main figure's,
/// then the section figures' own controls.
pub const PARAMS: [&str; 14] = [
    "algorithm",
    "capacity",
    "limit",
    "window",
    "traffic",
    "load",
    "seed",
    "attack",
    "record-rejects",
    "leaky-mode",
    "compare",
    "ceiling-capacity",
    "honest-traffic",
    "honest-load",
];
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
    /// The honest-client section's traffic shape.
    pub honest_traffic: String,
    /// The honest-client section's load, one of [`HONEST_LOADS`].
    pub honest_load: String,
}

impl Default for Sections {
    fn default() -> Self {
        Sections {
            ceiling_capacity: 10,
            honest_traffic: "page-loads".into(),
            honest_load: "0.8".into(),
        }
    }
}
/// Parameters that change how the page is shown, not the figure.
pub const VIEW_PARAMS: [&str; 1] = ["embed"];

/// What a link said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Decodes a query string (with or without its leading `?`).
pub fn decode(query: &str) -> Decoded {
    let mut out = Decoded {
        controls: Controls::default(),
        compare: false,
        embed: false,
        sections: Sections::default(),
        problems: Vec::new(),
    };
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut seen: Vec<String> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(raw_key);
        let value = percent_decode(raw_value);
        let shown = quote(&key);
        if !PARAMS.contains(&key.as_str()) && !VIEW_PARAMS.contains(&key.as_str()) {
            out.problems.push(Problem {
                param: shown.clone(),
                message: format!(
                    "The link's parameter '{shown}' is not one ratelab knows, so it was ignored. Accepted: {}.",
                    PARAMS.iter().chain(&VIEW_PARAMS).copied().collect::<Vec<_>>().join(", ")
                ),
            });
            continue;
        }
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
        if let Err(accepted) = apply(&mut out, &key, &value) {
            let default = default_text(&key);
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
    if out.controls.capacity == 0 && out.controls.algorithm != "leaky-bucket" {
        out.controls.capacity = Controls::default().capacity;
        out.problems.push(Problem {
            param: "capacity".into(),
            message: format!(
                "The link's capacity=0 is accepted only for the leaky bucket; {} needs a whole number from 1 to {MAX_CAPACITY}. The figure uses {} instead.",
                out.controls.algorithm,
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

/// Sets one parameter; `Err` says what is accepted.
fn apply(out: &mut Decoded, key: &str, value: &str) -> Result<(), String> {
    let c = &mut out.controls;
    match key {
        "algorithm" => c.algorithm = one_of(value, &ALGORITHMS)?,
        "traffic" => c.traffic = one_of(value, &SHAPES)?,
        "attack" => c.attack = one_of(value, &ATTACKS)?,
        "leaky-mode" => c.leaky_mode = one_of(value, &LEAKY_MODES)?,
        "capacity" => c.capacity = whole(value, 0, MAX_CAPACITY)?,
        "limit" => c.limit = whole(value, 1, 100_000)?,
        "window" => c.window_s = whole(value, 1, 3_600)?,
        "seed" => c.seed = whole(value, 0, MAX_SEED)?,
        "load" => c.load = load(value)?,
        "record-rejects" => c.record_rejects = flag(value)?,
        "compare" => out.compare = flag(value)?,
        "embed" => out.embed = flag(value)?,
        "ceiling-capacity" => {
            out.sections.ceiling_capacity = whole(value, 1, MAX_CEILING_CAPACITY)?;
        }
        "honest-traffic" => out.sections.honest_traffic = one_of(value, &SHAPES)?,
        "honest-load" => out.sections.honest_load = one_of(value, &HONEST_LOADS)?,
        _ => {}
    }
    Ok(())
}

fn one_of(value: &str, names: &[&str]) -> Result<String, String> {
    names
        .iter()
        .find(|n| **n == value)
        .map(|n| (*n).to_owned())
        .ok_or_else(|| format!("one of {}", names.join(", ")))
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
    match value.parse::<f64>() {
        Ok(v) if (0.01..=3.0).contains(&v) => Ok(v),
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

fn default_text(key: &str) -> String {
    let d = Controls::default();
    match key {
        "algorithm" => d.algorithm,
        "traffic" => d.traffic,
        "attack" => d.attack,
        "leaky-mode" => d.leaky_mode,
        "capacity" => d.capacity.to_string(),
        "limit" => d.limit.to_string(),
        "window" => format!("{} s", d.window_s),
        "seed" => d.seed.to_string(),
        "load" => d.load.to_string(),
        "record-rejects" => "off".into(),
        "compare" | "embed" => "off".into(),
        "ceiling-capacity" => Sections::default().ceiling_capacity.to_string(),
        "honest-traffic" => Sections::default().honest_traffic,
        "honest-load" => Sections::default().honest_load,
        _ => String::new(),
    }
}

/// The controls as a query string, without the `?`: only what differs from the defaults, so
/// the default figure's link is the page's own address.
pub fn encode(controls: &Controls, compare: bool, sections: &Sections) -> String {
    let d = Controls::default();
    let mut parts: Vec<(&str, String)> = Vec::new();
    if controls.algorithm != d.algorithm {
        parts.push(("algorithm", controls.algorithm.clone()));
    }
    if controls.capacity != d.capacity {
        parts.push(("capacity", controls.capacity.to_string()));
    }
    if controls.limit != d.limit {
        parts.push(("limit", controls.limit.to_string()));
    }
    if controls.window_s != d.window_s {
        parts.push(("window", controls.window_s.to_string()));
    }
    // A reader's own file is never part of a link: it stays in their browser.
    if controls.traffic != d.traffic && controls.traffic != "file" {
        parts.push(("traffic", controls.traffic.clone()));
    }
    if controls.load != d.load {
        parts.push(("load", controls.load.to_string()));
    }
    if controls.seed != d.seed {
        parts.push(("seed", controls.seed.to_string()));
    }
    if controls.attack != d.attack {
        parts.push(("attack", controls.attack.clone()));
    }
    if controls.record_rejects != d.record_rejects {
        parts.push((
            "record-rejects",
            u8::from(controls.record_rejects).to_string(),
        ));
    }
    if controls.leaky_mode != d.leaky_mode {
        parts.push(("leaky-mode", controls.leaky_mode.clone()));
    }
    if compare {
        parts.push(("compare", "1".into()));
    }
    let ds = Sections::default();
    if sections.ceiling_capacity != ds.ceiling_capacity {
        parts.push(("ceiling-capacity", sections.ceiling_capacity.to_string()));
    }
    if sections.honest_traffic != ds.honest_traffic {
        parts.push(("honest-traffic", sections.honest_traffic.clone()));
    }
    if sections.honest_load != ds.honest_load {
        parts.push(("honest-load", sections.honest_load.clone()));
    }
    parts
        .iter()
        .map(|(k, v)| format!("{k}={}", percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// At most [`QUOTE`] characters of a value, for a message.
fn quote(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(QUOTE)
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect();
    if text.chars().nth(QUOTE).is_some() {
        out.push('…');
    }
    out
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

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_default_figure_has_an_empty_query() {
        assert_eq!(
            encode(&Controls::default(), false, &Sections::default()),
            ""
        );
        let d = decode("");
        assert_eq!(d.controls, Controls::default());
        assert!(d.problems.is_empty() && !d.compare && !d.embed);
    }

    #[test]
    fn a_link_sets_every_control() {
        let d = decode("?algorithm=sliding-log&capacity=5&limit=100&window=10&traffic=page-loads&load=1.2&seed=42&attack=retry-storm&record-rejects=1&leaky-mode=queue&compare=1&embed=1&ceiling-capacity=70&honest-traffic=on-off&honest-load=1");
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        let c = &d.controls;
        assert_eq!(
            (c.algorithm.as_str(), c.capacity, c.limit, c.window_s),
            ("sliding-log", 5, 100, 10)
        );
        assert_eq!(
            (c.traffic.as_str(), c.load, c.seed),
            ("page-loads", 1.2, 42)
        );
        assert_eq!(
            (c.attack.as_str(), c.record_rejects, c.leaky_mode.as_str()),
            ("retry-storm", true, "queue")
        );
        assert!(d.compare && d.embed);
        assert_eq!(
            d.sections,
            Sections {
                ceiling_capacity: 70,
                honest_traffic: "on-off".into(),
                honest_load: "1".into()
            }
        );
        for bad in [
            "ceiling-capacity=0",
            "ceiling-capacity=121",
            "honest-load=0.7",
            "honest-traffic=file",
        ] {
            assert_eq!(decode(bad).problems.len(), 1, "{bad}");
        }
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
        assert_eq!(d.controls.algorithm, "gcra", "the good parameter is kept");
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

    fn controls() -> impl Strategy<Value = Controls> {
        (
            (0..6usize, 1..=MAX_CAPACITY, 1..=100_000u64, 1..=3_600u64),
            (0..5usize, 1..=300u32, 0..=MAX_SEED),
            (0..4usize, any::<bool>(), 0..2usize),
        )
            .prop_map(
                |((a, capacity, limit, window_s), (t, load, seed), (k, record_rejects, m))| {
                    Controls {
                        algorithm: ALGORITHMS[a].into(),
                        capacity,
                        limit,
                        window_s,
                        traffic: SHAPES[t].into(),
                        load: f64::from(load) / 100.0,
                        seed,
                        minutes: Controls::default().minutes,
                        attack: ATTACKS[k].into(),
                        record_rejects,
                        leaky_mode: LEAKY_MODES[m].into(),
                        replay: None,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn encode_then_decode_is_the_identity(
            c in controls(),
            compare in any::<bool>(),
            (cap, t, l) in (1..=MAX_CEILING_CAPACITY, 0..5usize, 0..4usize),
        ) {
            let sections = Sections {
                ceiling_capacity: cap,
                honest_traffic: SHAPES[t].into(),
                honest_load: HONEST_LOADS[l].into(),
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
