//! The fleet's part of the scenario language: `--gateways N`, `--route` and `--coord`, parsed
//! into one [`FleetSpec`] that every limiter of the scenario is enforced by.

use super::parse::{parse_count, parse_load, split_spec, MAX_BURST};
use crate::error::Error;
use crate::limiter::{Coord, Outage, Route};
use crate::time::{format_duration, parse_duration, Micros, MAX_TIME};
use serde::{Deserialize, Serialize};

/// The most two gateways' clocks may disagree by.
pub const MAX_SKEW: Micros = crate::time::HOUR;
/// The most gateways a fleet may have.
pub const MAX_GATEWAYS: u64 = 64;

/// Gateways enforcing a limiter together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FleetSpec {
    /// How many (1 to 64).
    pub gateways: u32,
    /// How requests reach them.
    pub route: Route,
    /// How they coordinate.
    pub coord: Coord,
    /// How far apart the gateways' clocks are (`skew=DUR` in `--coord`, for `local`, `split`
    /// and `sync`, at most an hour): gateway `g` of `N` reads `g·skew/(N − 1)` ahead of the backend's clock,
    /// gateway 0 none; 0 when the clocks agree.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skew: Micros,
}

fn is_zero(v: &Micros) -> bool {
    *v == 0
}

const ROUTES: &str = "round-robin, random, skewed:hot=X";
const COORDS: &str = "local[:skew=DUR], split[:skew=DUR], sync:every=DUR[,delay=DUR][,skew=DUR], central[:rtt=DUR[,outage=AT+DUR,fail=open|closed]], lease:size=B[,ttl=DUR]";

impl FleetSpec {
    /// `--gateways`, `--route` (default round-robin) and `--coord` (default local).
    pub fn parse(gateways: &str, route: Option<&str>, coord: Option<&str>) -> Result<Self, Error> {
        let (coord, skew) = coord.map_or(Ok((Coord::Local, 0)), parse_coord)?;
        Ok(FleetSpec {
            gateways: parse_count("gateways", gateways, 1, MAX_GATEWAYS)? as u32,
            route: route.map_or(Ok(Route::RoundRobin), parse_route)?,
            coord,
            skew,
        })
    }

    /// How far ahead of the backend's clock each gateway's reads, gateway 0 first: spread
    /// evenly from 0 to the skew.
    pub fn offsets(&self) -> Vec<Micros> {
        let n = u64::from(self.gateways.max(1));
        (0..n)
            .map(|g| match n {
                1 => 0,
                _ => (u128::from(self.skew) * u128::from(g) / u128::from(n - 1)) as Micros,
            })
            .collect()
    }

    /// `--route`'s text, as `parse_route` reads it.
    pub fn route_text(&self) -> String {
        match self.route {
            Route::RoundRobin => "round-robin".into(),
            Route::Random => "random".into(),
            Route::Skewed { hot } => format!(
                "skewed:hot={}",
                crate::decimal::shortest(f64::from(hot) / 1e6)
            ),
        }
    }

    /// `--coord`'s text, as `parse_coord` reads it.
    pub fn coord_text(&self) -> String {
        let d = format_duration;
        let text = match self.coord {
            Coord::Local => "local".into(),
            Coord::Split => "split".into(),
            Coord::Sync { every, delay } => format!("sync:every={},delay={}", d(every), d(delay)),
            // What was left out is left out: no round trip, a lease that lasts.
            Coord::Central { rtt, outage } => {
                let mut keys = Vec::new();
                if rtt > 0 {
                    keys.push(format!("rtt={}", d(rtt)));
                }
                if let Some(o) = outage {
                    let fail = if o.open { "open" } else { "closed" };
                    keys.push(format!("outage={}+{},fail={fail}", d(o.at), d(o.length)));
                }
                match keys.is_empty() {
                    true => "central".into(),
                    false => format!("central:{}", keys.join(",")),
                }
            }
            Coord::Lease {
                size,
                ttl: Micros::MAX,
            } => format!("lease:size={size}"),
            Coord::Lease { size, ttl } => format!("lease:size={size},ttl={}", d(ttl)),
        };
        match (self.skew, self.coord) {
            (0, _) => text,
            (skew, Coord::Local | Coord::Split) => format!("{text}:skew={}", d(skew)),
            (skew, _) => format!("{text},skew={}", d(skew)),
        }
    }
}

/// `round-robin`, `random` or `skewed:hot=X` (gateway 0's share: `0.7` or `70%`).
pub fn parse_route(text: &str) -> Result<Route, Error> {
    let (name, pairs) = split_spec(text)?;
    let route = match (name, pairs.as_slice()) {
        ("round-robin", []) => Route::RoundRobin,
        ("random", []) => Route::Random,
        ("skewed", [("hot", v)]) => {
            let accepted = "a share above 0 and at most 1, like 0.7 or 70%";
            let share = parse_load("route skewed: hot", v)
                .ok()
                .filter(|&x| x <= 1.0)
                .ok_or_else(|| Error::invalid("route skewed: hot", v, accepted))?;
            // Kept in millionths: finer is refused, not rounded, with the nearest.
            let millionths = share * 1e6;
            let hot = (millionths.round() as u32).max(1);
            // (A decimal's float is within 10^-10 of its millionths when it has no more digits.)
            if (millionths - millionths.round()).abs() > 1e-6 {
                return Err(Error::invalid(
                    "route skewed: hot",
                    v,
                    &format!(
                        "a share in whole millionths, like 0.7 or 70%; the nearest is {}",
                        crate::decimal::shortest(f64::from(hot) / 1e6)
                    ),
                ));
            }
            Route::Skewed { hot }
        }
        ("skewed", _) => {
            return Err(Error::Missing {
                what: "route skewed".into(),
                key: "hot=X, and no other key".into(),
                example: "skewed:hot=0.7".into(),
            })
        }
        ("round-robin" | "random", _) => {
            return Err(Error::invalid(&format!("route {name}"), text, "no keys"))
        }
        _ => return Err(Error::unknown("route", name, ROUTES)),
    };
    Ok(route)
}

/// A duration key of `--coord`: from `min` to [`MAX_TIME`], the latest time any scenario
/// reaches, named by its key when out of that range.
fn duration(name: &str, key: &str, v: &str, min: Micros) -> Result<Micros, Error> {
    let what = format!("coord {name}: {key}");
    bounded(&what, v, min)
}

/// A duration from `min` to [`MAX_TIME`], refused as `what` otherwise.
fn bounded(what: &str, v: &str, min: Micros) -> Result<Micros, Error> {
    let accepted = || {
        format!(
            "a duration from {} to 285 years (2^53 − 1 µs), like 100ms",
            if min == 0 {
                "0".into()
            } else {
                format_duration(min)
            }
        )
    };
    match parse_duration(what, v) {
        Ok(d) if d >= min && d <= MAX_TIME => Ok(d),
        // Below the least or past 2^53 µs: named with the range.
        Ok(_) => Err(Error::invalid(what, v, &accepted())),
        // A plain number in a known unit that only overflows 64 bits is out of range too.
        Err(e) => {
            let t = v.trim();
            let unit = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let number = &t[..t.len() - unit.len()];
            match !number.is_empty() && parse_duration(what, &format!("1{unit}")).is_ok() {
                true => Err(Error::invalid(what, v, &accepted())),
                false => Err(e),
            }
        }
    }
}

/// `local`, `split`, `sync:every=DUR[,delay=DUR]`,
/// `central[:rtt=DUR[,outage=AT+DUR,fail=open|closed]]` or `lease:size=B[,ttl=DUR]`, and the
/// clock skew of `local`, `split` and `sync` (`skew=DUR`, 0 when not given). `central` and
/// `lease` take none: the store decides or grants on its own clock, and a gateway's clock only
/// times a lease's end, which an offset does not move.
pub fn parse_coord(text: &str) -> Result<(Coord, Micros), Error> {
    let (name, pairs) = split_spec(text)?;
    let get = |key: &str| {
        pairs
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| pairs[i].1)
    };
    let keys: &[&str] = match name {
        "local" | "split" => &["skew"],
        "sync" => &["every", "delay", "skew"],
        "central" => &["rtt", "outage", "fail"],
        "lease" => &["size", "ttl"],
        _ => return Err(Error::unknown("coordination", name, COORDS)),
    };
    if let (Some(v), "central" | "lease") = (get("skew"), name) {
        return Err(Error::invalid(
            &format!("coord {name}: skew"),
            v,
            "local, split or sync for a skew, where each gateway decides by its own clock (under central the store decides by its own, and a lease lasts as long on any clock)",
        ));
    }
    if let Some((k, _)) = pairs.iter().find(|(k, _)| !keys.contains(k)) {
        let accepted = if keys.is_empty() {
            "no keys".to_owned()
        } else {
            keys.join(", ")
        };
        return Err(Error::unknown(
            &format!("key for coord {name}"),
            k,
            &accepted,
        ));
    }
    let coord = match name {
        "local" => Coord::Local,
        "split" => Coord::Split,
        "sync" => Coord::Sync {
            every: match get("every") {
                Some(v) => duration(name, "every", v, 1_000)?,
                None => {
                    return Err(Error::Missing {
                        what: "coord sync".into(),
                        key: "every=DUR (how often the gateways sync)".into(),
                        example: "sync:every=1s,delay=100ms".into(),
                    })
                }
            },
            delay: get("delay").map_or(Ok(0), |v| duration(name, "delay", v, 0))?,
        },
        "central" => {
            let rtt = get("rtt").map_or(Ok(0), |v| duration(name, "rtt", v, 0))?;
            let outage = match (get("outage"), get("fail")) {
                (None, None) => None,
                (None, Some(_)) => {
                    return Err(Error::Missing {
                        what: "coord central: fail".into(),
                        key: "outage=AT+DUR (fail says what happens during an outage)".into(),
                        example: "central:rtt=2ms,outage=5min+30s,fail=open".into(),
                    })
                }
                (Some(v), fail) => {
                    let accepted = "AT+DUR, when the store becomes unreachable and for how long, like 5min+30s";
                    let (at, length) = v
                        .split_once('+')
                        .ok_or_else(|| Error::invalid("coord central: outage", v, accepted))?;
                    let at = parse_duration("coord central: outage", at)
                        .map_err(|_| Error::invalid("coord central: outage", v, accepted))?;
                    let length = parse_duration("coord central: outage", length)
                        .ok()
                        .filter(|&l| l > 0)
                        .ok_or_else(|| Error::invalid("coord central: outage", v, accepted))?;
                    if at > MAX_TIME || length > MAX_TIME {
                        return Err(Error::invalid(
                            "coord central: outage",
                            v,
                            "a start and a length each within 285 years (2^53 − 1 µs), like 5min+30s",
                        ));
                    }
                    let open = match fail.unwrap_or("open") {
                        "open" => true,
                        "closed" => false,
                        f => {
                            return Err(Error::invalid("coord central: fail", f, "open or closed"))
                        }
                    };
                    Some(Outage { at, length, open })
                }
            };
            Coord::Central { rtt, outage }
        }
        _ => Coord::Lease {
            size: match get("size") {
                Some(v) => parse_count("coord lease: size", v, 1, MAX_BURST)?,
                None => {
                    return Err(Error::Missing {
                        what: "coord lease".into(),
                        key: "size=B (permits per lease)".into(),
                        example: "lease:size=10,ttl=1s".into(),
                    })
                }
            },
            ttl: get("ttl").map_or(Ok(Micros::MAX), |v| duration(name, "ttl", v, 1))?,
        },
    };
    let skew = match get("skew") {
        Some(v) => {
            let what = format!("coord {name}: skew");
            let d = bounded(&what, v, 0)?;
            if d > MAX_SKEW {
                return Err(Error::invalid(&what, v, "a duration from 0 to 1h"));
            }
            d
        }
        None => 0,
    };
    Ok((coord, skew))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SECOND};

    #[test]
    fn parses_and_writes_back_every_coordination() {
        for (route, coord) in [
            ("round-robin", "local"),
            ("random", "split"),
            ("skewed:hot=0.7", "sync:every=1s,delay=100ms"),
            ("random", "central:rtt=2ms"),
            ("random", "central:rtt=2ms,outage=5min+30s,fail=closed"),
            ("random", "central"),
            ("random", "central:outage=1s+1s,fail=open"),
            ("random", "lease:size=3"),
            ("round-robin", "lease:size=10,ttl=1s"),
            ("random", "local:skew=2s"),
            ("round-robin", "split:skew=500ms"),
            ("random", "sync:every=1s,delay=100ms,skew=30s"),
        ] {
            let f = FleetSpec::parse("4", Some(route), Some(coord)).expect(coord);
            assert_eq!(
                FleetSpec::parse("4", Some(&f.route_text()), Some(&f.coord_text())),
                Ok(f)
            );
        }
        let f = FleetSpec::parse("3", None, Some("sync:every=250ms")).expect("valid");
        assert_eq!(
            (f.gateways, f.route, f.coord),
            (
                3,
                Route::RoundRobin,
                Coord::Sync {
                    every: 250 * MS,
                    delay: 0
                }
            )
        );
        assert_eq!(
            parse_route("skewed:hot=70%"),
            Ok(Route::Skewed { hot: 700_000 })
        );
        assert_eq!(
            parse_coord("central:outage=1s+2s"),
            Ok((
                Coord::Central {
                    rtt: 0,
                    outage: Some(Outage {
                        at: SECOND,
                        length: 2 * SECOND,
                        open: true
                    })
                },
                0
            ))
        );
    }

    #[test]
    fn bad_fleet_values_name_the_part_and_what_is_accepted() {
        let check = |g: &str, r: Option<&str>, c: Option<&str>, needles: &[&str]| {
            let msg = FleetSpec::parse(g, r, c).expect_err(g).to_string();
            for n in needles {
                assert!(msg.contains(n), "{g} {r:?} {c:?}: {msg} lacks {n}");
            }
        };
        check("0", None, None, &["gateways", "from 1 to 64"]);
        check("65", None, None, &["gateways", "from 1 to 64"]);
        check(
            "2",
            Some("hash"),
            None,
            &["route", "round-robin, random, skewed:hot=X"],
        );
        check("2", Some("skewed:hot=1.5"), None, &["hot", "at most 1"]);
        check("2", Some("skewed"), None, &["hot=X"]);
        check(
            "2",
            None,
            Some("gossip"),
            &["coordination", "sync:every=DUR"],
        );
        check("2", None, Some("sync"), &["every=DUR"]);
        check(
            "2",
            None,
            Some("sync:every=0s"),
            &["every", "from 1ms to 285 years"],
        );
        // Every coordination duration within 2^53 µs, refused by its own name, never as
        // memory or a panic.
        for (coord, part) in [
            ("central:rtt=9223372036854775808us", "coord central: rtt"),
            ("central:rtt=300000000h", "coord central: rtt"),
            ("sync:every=1s,delay=9007199254740s", "coord sync: delay"),
            ("sync:every=9007199254741s", "coord sync: every"),
            ("lease:size=3,ttl=99999999999999999999s", "coord lease: ttl"),
            ("local:skew=99999999999999999999999h", "coord local: skew"),
        ] {
            check("2", None, Some(coord), &[part, "285 years"]);
        }
        check(
            "2",
            None,
            Some("central:outage=300000000h+1s,fail=open"),
            &["coord central: outage", "285 years"],
        );
        check(
            "2",
            Some("skewed:hot=0.12345678"),
            None,
            &["hot", "millionths", "0.123457"],
        );
        check(
            "2",
            None,
            Some("sync:every=1s,lag=2s"),
            &["lag", "every, delay"],
        );
        check(
            "2",
            None,
            Some("central:outage=5min"),
            &["outage", "AT+DUR"],
        );
        check("2", None, Some("central:fail=open"), &["outage=AT+DUR"]);
        check(
            "2",
            None,
            Some("central:outage=1s+1s,fail=maybe"),
            &["fail", "open or closed"],
        );
        check("2", None, Some("lease:ttl=1s"), &["size=B"]);
        check("2", None, Some("local:every=1s"), &["every", "skew"]);
        check(
            "2",
            None,
            Some("local:skew=-1s"),
            &["skew", "a number with a unit"],
        );
        for coord in ["central:skew=1s", "lease:size=4,skew=1s"] {
            check(
                "2",
                None,
                Some(coord),
                &["skew", "local, split or sync", "any clock"],
            );
        }
        check(
            "2",
            None,
            Some("split:skew=61min"),
            &["skew", "from 0 to 1h"],
        );
    }

    #[test]
    fn skew_spreads_the_gateways_clocks_from_0_to_it() {
        let f = FleetSpec::parse("5", None, Some("split:skew=2s")).expect("valid");
        assert_eq!(f.skew, 2 * SECOND);
        assert_eq!(
            f.offsets(),
            [0, 500 * MS, 1000 * MS, 1500 * MS, 2000 * MS].to_vec()
        );
        let one = FleetSpec::parse("1", None, Some("local:skew=2s")).expect("valid");
        assert_eq!(one.offsets(), [0].to_vec());
        let none = FleetSpec::parse("3", None, Some("local")).expect("valid");
        assert_eq!((none.skew, none.offsets()), (0, vec![0; 3]));
        assert_eq!(none.coord_text(), "local");
        // Nothing said is nothing written: no round trip, no end to a lease.
        for text in [
            "central",
            "lease:size=3",
            "central:outage=1s+2s,fail=closed",
        ] {
            let f = FleetSpec::parse("2", None, Some(text)).expect("valid");
            assert_eq!(f.coord_text(), text);
        }
        // Written back only when there is one, so reports without it read as before.
        assert!(!serde_json::to_string(&none).expect("json").contains("skew"));
    }
}
