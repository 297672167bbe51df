//! The checks of fuzz target `spec`: any text (UTF-8, or any bytes read lossily) into `LimiterSpec::parse`
//! and `TrafficSpec::parse`. Neither may panic, and an accepted spec parses again to an equal
//! spec, both from its own text and from a canonical rewrite of its fields (durations written
//! exactly, in µs), whose own parse writes the same canonical text again.
use ratelab::limiter::LeakyMode;
use ratelab::spec::Replay;
use ratelab::traffic::{FloodStart, Shape};
use ratelab::{LimiterKind, LimiterSpec, Rate, TrafficSpec};

/// Checks one input; panics on a broken law. Every input is used (returns `true`).
pub fn check(data: &[u8]) -> bool {
    let text = String::from_utf8_lossy(data);
    limiter(&text);
    traffic(&text);
    true
}

fn limiter(text: &str) {
    let Ok(spec) = LimiterSpec::parse(text) else {
        return;
    };
    assert_eq!(spec.text, text, "the text is reported back unchanged");
    assert_eq!(LimiterSpec::parse(&spec.text).as_ref(), Ok(&spec));
    let canonical = limiter_text(&spec);
    let again = LimiterSpec::parse(&canonical)
        .unwrap_or_else(|e| panic!("{text:?} rewritten as {canonical:?} is refused: {e}"));
    assert_eq!(again.text, canonical);
    assert_eq!(
        LimiterSpec {
            text: spec.text.clone(),
            ..again.clone()
        },
        spec,
        "{text:?} rewritten as {canonical:?}"
    );
    assert_eq!(limiter_text(&again), canonical);
}

fn traffic(text: &str) {
    let Ok(spec) = TrafficSpec::parse(text) else {
        return;
    };
    assert_eq!(
        TrafficSpec::parse(text).as_ref(),
        Ok(&spec),
        "deterministic"
    );
    let canonical = traffic_text(&spec);
    let again = TrafficSpec::parse(&canonical)
        .unwrap_or_else(|e| panic!("{text:?} rewritten as {canonical:?} is refused: {e}"));
    assert_eq!(again, spec, "{text:?} rewritten as {canonical:?}");
    assert_eq!(traffic_text(&again), canonical);
}

fn us(d: u64) -> String {
    format!("{d}us")
}

fn rate(r: Rate) -> String {
    format!("{}/{}", r.count, us(r.per))
}

/// `name[:key=value,...]` with every field that differs from the default.
fn spec_text(name: &str, keys: &[String]) -> String {
    if keys.is_empty() {
        name.to_owned()
    } else {
        format!("{name}:{}", keys.join(","))
    }
}

fn limiter_text(spec: &LimiterSpec) -> String {
    let mut keys = Vec::new();
    match spec.kind {
        LimiterKind::Nginx => {
            if let Some(r) = spec.rate {
                let unit = if r.per == 60_000_000 { "m" } else { "s" };
                keys.push(format!("rate={}r/{unit}", r.count));
            }
            if let Some(b) = spec.burst {
                keys.push(format!("burst={b}"));
            }
            if spec.mode == LeakyMode::Meter {
                keys.push("nodelay".to_owned());
            } else if spec.delay != 0 {
                keys.push(format!("delay={}", spec.delay));
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::Haproxy => {
            if let Some(p) = spec.period {
                keys.push(format!("period={}", us(p)));
            }
            if let Some(l) = spec.limit {
                keys.push(format!("limit={l}"));
            }
            if !spec.record_rejects {
                keys.push("record-rejects=false".to_owned());
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::ExpressRateLimit | LimiterKind::RateLimiterFlexible => {
            let flexible = spec.kind == LimiterKind::RateLimiterFlexible;
            if let Some(l) = spec.limit {
                keys.push(format!("{}={l}", if flexible { "points" } else { "limit" }));
            }
            if let Some(p) = spec.period {
                let ms = p / 1000;
                keys.push(if flexible {
                    format!("duration={}.{:03}", ms / 1000, ms % 1000)
                } else {
                    format!("window-ms={ms}")
                });
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::Limits => {
            if let (Some(n), Some(p)) = (spec.limit, spec.period) {
                keys.push(format!("rate={}", ratelab::spec::limits_rate_text(n, p)));
            }
            if let Some(s) = spec.strategy {
                keys.push(format!("strategy={}", s.name()));
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::Vsthrottle => {
            if let Some(n) = spec.limit {
                keys.push(format!("limit={n}"));
            }
            if let Some(p) = spec.period {
                keys.push(format!("period={}", us(p)));
            }
            if let Some(b) = spec.block {
                keys.push(format!("block={}", us(b)));
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::RedisCell => {
            if let Some(b) = spec.burst {
                keys.push(format!("max-burst={b}"));
            }
            if let Some(n) = spec.limit {
                keys.push(format!("count={n}"));
            }
            if let Some(p) = spec.period {
                keys.push(format!("period={}", p / 1_000_000));
            }
            return spec_text(spec.kind.name(), &keys);
        }
        LimiterKind::GoRate => {
            if let Some(r) = spec.rate {
                keys.push(if r.count == 1 {
                    format!("every={}", us(r.per))
                } else {
                    let digits = (r.per / 1_000_000).ilog10() as usize;
                    let whole = r.count / 10u64.pow(digits as u32);
                    let frac = r.count % 10u64.pow(digits as u32);
                    if digits == 0 {
                        format!("r={whole}")
                    } else {
                        format!("r={whole}.{frac:0digits$}")
                    }
                });
            }
            if let Some(b) = spec.burst {
                keys.push(format!("b={b}"));
            }
            return spec_text(spec.kind.name(), &keys);
        }
        _ => {}
    }
    if let Some(b) = spec.burst {
        keys.push(format!("burst={b}"));
    }
    if let Some(r) = spec.rate {
        keys.push(format!("rate={}", rate(r)));
    }
    if spec.record_rejects {
        keys.push("record-rejects=true".to_owned());
    }
    if spec.servers != 1 {
        keys.push(format!("servers={}", spec.servers));
    }
    if spec.mode != Default::default() {
        keys.push("mode=queue".to_owned());
    }
    spec_text(spec.kind.name(), &keys)
}

fn traffic_text(spec: &TrafficSpec) -> String {
    let keys = match spec {
        TrafficSpec::OnOff { load, active, busy } => vec![
            format!("load={load}"),
            format!("active={}", us(*active)),
            format!("busy={busy}"),
        ],
        TrafficSpec::Steady { load }
        | TrafficSpec::Groups {
            shape: Shape::SmallBursts | Shape::PageLoads | Shape::BigBursts,
            load,
        } => vec![format!("load={load}")],
        TrafficSpec::Flood {
            start,
            every,
            length,
        } => {
            let mut keys = vec![
                match start {
                    FloodStart::Worst => "start=worst".to_owned(),
                    FloodStart::Offset(d) => format!("start={}", us(*d)),
                },
                format!("every={}", us(*every)),
            ];
            if let Some(l) = length {
                keys.push(format!("for={}", us(*l)));
            }
            keys
        }
        TrafficSpec::BoundaryBurst {
            before,
            after,
            first,
            second,
        } => {
            let mut keys = vec![
                format!("before={}", us(*before)),
                format!("after={}", us(*after)),
            ];
            keys.extend(first.map(|n| format!("first={n}")));
            keys.extend(second.map(|n| format!("second={n}")));
            keys
        }
        TrafficSpec::Retry {
            rate: r,
            spike,
            at,
            tries,
            every,
            policy,
            clients,
            mix,
        } => {
            let mut keys = vec![
                format!("rate={}", rate(*r)),
                format!("spike={spike}"),
                format!("at={}", us(*at)),
                format!("tries={tries}"),
            ];
            // `every=` belongs to the fixed policy; the others' keys as the core writes them.
            if policy.backoff == ratelab::traffic::Backoff::Fixed {
                keys.push(format!("every={}", us(*every)));
            }
            keys.extend(ratelab::spec::policy_keys(policy, *clients));
            // A mix's groups, each after a `+`.
            let mut text = spec_text(spec.name(), &keys);
            for g in mix {
                text += "+";
                text += &ratelab::spec::group_keys(g).join(",");
            }
            return text;
        }
        TrafficSpec::Replay(Replay {
            file,
            times,
            format,
            filter,
        }) => {
            assert!(times.is_empty(), "parsing reads no file");
            let mut keys = vec![format!("file={file}"), format!("format={}", format.name())];
            if let Some(f) = filter {
                keys.push(format!("field={}:{}", f.field.name(), f.value));
            }
            keys
        }
    };
    spec_text(spec.name(), &keys)
}
