//! The gateways section's dials in the page's link: `gateways` (how many), `gateways-route`,
//! `gateways-coord`, `gateways-sync` and `gateways-at` (the playhead's instant, in ms). The
//! main figure's decoder ([`crate::link::decode`]) passes every `gateways…` key over, so the
//! first screen carries none of this; the tools module, loaded when the section runs (a link
//! that sets it runs it when it comes near), reads them here. As with the main link, a bad
//! parameter gets a sentence naming it and what is accepted, the section uses its default
//! for it, and every other parameter is kept.

use crate::gateways::{
    Setting, COORDINATIONS, GATEWAYS, GATEWAY_ROUTES, GATEWAY_SYNCS, SYNC_INTERVALS_MS,
};
use crate::link::percent_decode;
use serde::Serialize;

/// The link's keys, in the order [`encode`] writes them.
pub const KEYS: [&str; 5] = [
    "gateways",
    "gateways-route",
    "gateways-coord",
    "gateways-sync",
    "gateways-at",
];
/// The playhead's last instant, in milliseconds (the timeline's five minutes).
pub const LAST_INSTANT_MS: u64 = 5 * 60_000;
/// How much of a bad value a sentence quotes.
const QUOTE: usize = 40;

/// The section's dials as a link set them, as the page's menus name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Dials {
    /// How many gateways, in [`GATEWAYS`].
    pub gateways: u32,
    /// One of [`GATEWAY_ROUTES`].
    pub route: String,
    /// One of [`COORDINATIONS`].
    pub coord: String,
    /// One of [`GATEWAY_SYNCS`].
    pub sync: String,
    /// The playhead's instant, if the link set it.
    pub at_ms: Option<u64>,
}

impl Default for Dials {
    /// The section's opening dials ([`Setting::opening`]).
    fn default() -> Self {
        let o = Setting::opening();
        Dials {
            gateways: o.gateways,
            route: o.route.into(),
            coord: o.coord.into(),
            sync: SYNC_INTERVALS_MS
                .iter()
                .position(|&ms| ms == o.every_ms)
                .map_or("", |i| GATEWAY_SYNCS[i])
                .into(),
            at_ms: None,
        }
    }
}

/// What a link said of the section.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Linked {
    /// The dials, the defaults where the link said nothing or something wrong.
    pub dials: Dials,
    /// Whether the link named any of the section's keys (the section then runs by itself).
    pub any: bool,
    /// One sentence per bad parameter.
    pub problems: Vec<String>,
}

/// Reads the section's parameters from a query string (with or without its `?`); every other
/// key is the main figure's and is left to it.
pub fn decode(query: &str) -> Linked {
    decode_for(query, "gateways", "the gateways section")
}

/// The lab's gateways control's parameters: `lab-gateways` (how many), `lab-gateways-route`,
/// `-coord` and `-sync`, read as the section's are.
pub fn decode_lab(query: &str) -> Linked {
    decode_for(query, LAB, "the lab's gateways control")
}

/// The lab's keys' prefix.
pub const LAB: &str = "lab-gateways";

/// The keys of `prefix`'s dials: the section's ([`KEYS`]), or the lab's (no playhead).
fn keys_of(prefix: &str) -> Vec<String> {
    let n = if prefix == LAB { 4 } else { KEYS.len() };
    KEYS[..n]
        .iter()
        .map(|k| k.replacen("gateways", prefix, 1))
        .collect()
}

/// [`decode`] for the keys that start with `prefix`, named `whose` in sentences.
fn decode_for(query: &str, prefix: &str, whose: &str) -> Linked {
    let keys = keys_of(prefix);
    let mut out = Linked::default();
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut seen: Vec<String> = Vec::new();
    for pair in query.split('&') {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(raw_key);
        if !key.starts_with(prefix) {
            continue;
        }
        out.any = true;
        let value = percent_decode(raw_value);
        let shown = ratelab::text::shown(&key, QUOTE);
        if !keys.contains(&key) {
            out.problems.push(format!(
                "The link's parameter '{shown}' is not one {whose} knows, so it was ignored. Accepted: {}.",
                keys.join(", ")
            ));
            continue;
        }
        if seen.contains(&key) {
            out.problems.push(format!(
                "The link gives '{shown}' more than once; the first one is used."
            ));
            continue;
        }
        seen.push(key.clone());
        // The section's key of the same dial.
        let dial = key.replacen(prefix, "gateways", 1);
        if let Err((accepted, default)) = set(&mut out.dials, &dial, &value) {
            let mut whose = whose.to_owned();
            whose[..1].make_ascii_uppercase();
            out.problems.push(format!(
                "The link's {shown}='{}' is not accepted: {accepted}. {whose} uses {default} instead; everything else in the link is kept.",
                ratelab::text::shown(&value, QUOTE)
            ));
        }
    }
    out
}

/// Sets the dial `key` names from `value`, or says what is accepted and what is used instead.
fn set(dials: &mut Dials, key: &str, value: &str) -> Result<(), (String, String)> {
    let default = Dials::default();
    let among = |names: &[&str], now: &str| {
        names
            .iter()
            .find(|&&n| n == value)
            .map(|&n| n.to_owned())
            .ok_or_else(|| (format!("one of {}", names.join(", ")), now.to_owned()))
    };
    match key {
        "gateways" => {
            let accepted = || {
                (
                    format!(
                        "a whole number from {} to {}",
                        GATEWAYS.start(),
                        GATEWAYS.end()
                    ),
                    default.gateways.to_string(),
                )
            };
            let digits =
                !value.is_empty() && value.len() <= 3 && value.bytes().all(|b| b.is_ascii_digit());
            dials.gateways = digits
                .then(|| value.parse::<u32>().ok())
                .flatten()
                .filter(|n| GATEWAYS.contains(n))
                .ok_or_else(accepted)?;
        }
        "gateways-route" => dials.route = among(&GATEWAY_ROUTES, &default.route)?,
        "gateways-coord" => dials.coord = among(&COORDINATIONS, &default.coord)?,
        "gateways-sync" => dials.sync = among(&GATEWAY_SYNCS, &default.sync)?,
        _ => {
            let accepted = || {
                (
                    format!("a whole number of milliseconds from 0 to {LAST_INSTANT_MS}"),
                    "the busiest instant".to_owned(),
                )
            };
            let digits =
                !value.is_empty() && value.len() <= 7 && value.bytes().all(|b| b.is_ascii_digit());
            dials.at_ms = Some(
                digits
                    .then(|| value.parse::<u64>().ok())
                    .flatten()
                    .filter(|&ms| ms <= LAST_INSTANT_MS)
                    .ok_or_else(accepted)?,
            );
        }
    }
    Ok(())
}

/// The dials as the link's parameters, without `?` or a leading `&`: each that differs from
/// the opening, and `gateways` always (so a link to the section runs it), whatever was
/// entered (a split that the count does not allow is kept: the section says why it does not
/// run). Values are written as given and percent-encoded.
pub fn encode(dials: &Dials) -> String {
    encode_for(dials, "gateways")
}

/// The lab's gateways control's dials as link parameters (`lab-gateways=8&…`), as [`encode`]
/// writes the section's (the lab has no playhead).
pub fn encode_lab(dials: &Dials) -> String {
    encode_for(
        &Dials {
            at_ms: None,
            ..dials.clone()
        },
        LAB,
    )
}

fn encode_for(dials: &Dials, prefix: &str) -> String {
    let default = Dials::default();
    let mut parts = vec![format!("{prefix}={}", dials.gateways)];
    for (key, value, was) in [
        ("-route", &dials.route, &default.route),
        ("-coord", &dials.coord, &default.coord),
        ("-sync", &dials.sync, &default.sync),
    ] {
        if value != was {
            parts.push(format!(
                "{prefix}{key}={}",
                crate::link::percent_encode(value)
            ));
        }
    }
    if let Some(ms) = dials.at_ms {
        parts.push(format!("gateways-at={ms}"));
    }
    parts.join("&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_labs_keys_are_its_own_and_read_as_the_sections() {
        let q = "?gateways=4&lab-gateways=16&lab-gateways-route=hot&lab-gateways-coord=central&lab-gateways-sync=1min";
        let l = decode_lab(q);
        assert_eq!(
            (
                l.dials.gateways,
                l.dials.route.as_str(),
                l.dials.coord.as_str(),
                l.dials.sync.as_str()
            ),
            (16, "hot", "central", "1min")
        );
        assert!(l.any && l.problems.is_empty(), "{l:?}");
        assert_eq!(decode(q).dials.gateways, 4, "the section reads its own");
        assert!(decode(q).problems.is_empty());
        assert_eq!(
            encode_lab(&l.dials),
            "lab-gateways=16&lab-gateways-route=hot&lab-gateways-coord=central&lab-gateways-sync=1min"
        );
        assert_eq!(decode_lab(&encode_lab(&l.dials)).dials, l.dials);
        let bad = decode_lab("lab-gateways=99&lab-gateways-at=5");
        assert_eq!(bad.dials.gateways, 8);
        assert_eq!(bad.problems.len(), 2, "{bad:?}");
        assert!(
            bad.problems[0].contains("The lab's gateways control uses 8"),
            "{bad:?}"
        );
        assert!(
            bad.problems[1].contains("not one the lab's gateways control knows"),
            "{bad:?}"
        );
        // The main figure passes them over.
        assert!(crate::link::decode(q).problems.is_empty());
    }

    #[test]
    fn a_link_sets_every_dial_and_the_main_figure_passes_them_over() {
        let q = "?algorithm=sliding-log&gateways=4&gateways-route=round-robin&gateways-coord=split&gateways-sync=30s&gateways-at=61500";
        let l = decode(q);
        assert_eq!(
            l.dials,
            Dials {
                gateways: 4,
                route: "round-robin".into(),
                coord: "split".into(),
                sync: "30s".into(),
                at_ms: Some(61_500)
            }
        );
        assert!(l.any && l.problems.is_empty(), "{l:?}");
        let main = crate::link::decode(q);
        assert!(main.problems.is_empty(), "{:?}", main.problems);
        assert_eq!(main.controls.algorithm.name(), "sliding-log");
        // No key of the section: nothing to run.
        let none = decode("?algorithm=gcra&limit=10");
        assert_eq!(none, Linked::default());
    }

    #[test]
    fn a_bad_parameter_is_named_with_what_is_accepted_and_the_rest_is_kept() {
        let l = decode("gateways=17&gateways-route=hash&gateways-coord=central&gateways-sync=2s&gateways-at=-5&gateways-color=red&gateways-coord=local");
        assert!(l.any);
        assert_eq!(
            l.dials,
            Dials {
                coord: "central".into(),
                ..Dials::default()
            }
        );
        let all = l.problems.join("\n");
        for needle in [
            "gateways='17' is not accepted: a whole number from 1 to 16. The gateways section uses 8 instead",
            "gateways-route='hash' is not accepted: one of random, round-robin, hot. The gateways section uses random instead",
            "gateways-sync='2s' is not accepted: one of 100ms, 500ms, 1s, 5s, 15s, 30s, 1min",
            "gateways-at='-5' is not accepted: a whole number of milliseconds from 0 to 300000. The gateways section uses the busiest instant instead",
            "'gateways-color' is not one the gateways section knows",
            "gives 'gateways-coord' more than once; the first one is used",
        ] {
            assert!(all.contains(needle), "{all}\nlacks: {needle}");
        }
        assert_eq!(l.problems.len(), 6);
        // Numbers are strict: no sign, space, point or exponent, no leading run past 3 digits.
        for v in ["+4", " 4", "4.0", "4e0", "0004", "", "0"] {
            let l = decode(&format!("gateways={v}"));
            assert_eq!((l.dials.gateways, l.problems.len()), (8, 1), "{v}");
        }
        assert_eq!(decode("gateways-at=300001").dials.at_ms, None);
        assert_eq!(decode("gateways-at=300000").dials.at_ms, Some(300_000));
    }

    fn dials() -> impl Strategy<Value = Dials> {
        (
            GATEWAYS,
            prop::sample::select(GATEWAY_ROUTES.to_vec()),
            prop::sample::select(COORDINATIONS.to_vec()),
            prop::sample::select(GATEWAY_SYNCS.to_vec()),
            prop::option::of(0..=LAST_INSTANT_MS),
        )
            .prop_map(|(gateways, route, coord, sync, at_ms)| Dials {
                gateways,
                route: route.into(),
                coord: coord.into(),
                sync: sync.into(),
                at_ms,
            })
    }

    proptest! {
        #[test]
        fn encode_then_decode_is_the_identity_beside_the_main_figures_link(d in dials()) {
            let main = crate::link::encode(
                &crate::controls::Controls::default(),
                false,
                &crate::link::Sections::default(),
            );
            let q = format!("{main}&{}", encode(&d));
            let l = decode(&q);
            prop_assert_eq!(&l.dials, &d);
            prop_assert!(l.any && l.problems.is_empty());
            prop_assert!(crate::link::decode(&q).problems.is_empty());
        }

        #[test]
        fn any_query_decodes_without_panicking(q in ".{0,200}") {
            let l = decode(&q);
            prop_assert!(GATEWAYS.contains(&l.dials.gateways));
            prop_assert!(l.dials.at_ms.is_none_or(|ms| ms <= LAST_INSTANT_MS));
        }
    }
}
