//! "Check your config": a configuration pasted into the page, read and checked as `ratelab
//! check` does (`ratelab::check`), in the same words, with the lab's controls for each
//! limiter it configures where the lab runs that limiter.

use crate::controls::Controls;
use crate::link::{encode, Sections};
use ratelab::check::{check, read_config, MOST_INSTANCES};
use ratelab::spec::parse_count;
use ratelab::time::{format_duration, parse_duration};
use serde::Serialize;

/// The longest configuration read, in bytes (as `ratelab check`'s).
pub const MOST_BYTES: usize = 1 << 20;

/// What the page shows of one limiter the configuration sets.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckItem {
    /// What was read and the limiter it is, as `ratelab check` heads it.
    pub heading: String,
    /// Its findings, each a label and its sentence, as `ratelab check` prints them.
    pub lines: Vec<[String; 2]>,
    /// The lab's link query for it (without `?`), where the lab runs it.
    pub lab_query: Option<String>,
    /// What the lab's button does, or why there is none.
    pub lab_note: String,
    /// The `ratelab check` command that gives the same, for the configuration in a file.
    pub command: String,
}

/// Checks `text` (a configuration as pasted) over windows of `window` (a duration as the
/// command line takes it; empty: each limiter's own period) for `instances` instances (empty:
/// 2, as the command line's default). A message naming what was wrong and what is accepted
/// otherwise.
pub fn check_config(text: &str, window: &str, instances: &str) -> Result<Vec<CheckItem>, String> {
    if text.len() > MOST_BYTES {
        return Err(format!(
            "The configuration is {} bytes long: paste at most {MOST_BYTES} (1 MiB), the lines that configure the limiter",
            text.len()
        ));
    }
    if text.trim().is_empty() {
        return Err(
            "Nothing to check: paste the lines that configure a limiter, like limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;".into(),
        );
    }
    let window = window.trim();
    let window_us = (!window.is_empty())
        .then(|| parse_duration("window", window))
        .transpose()
        .map_err(|e| e.to_string())?;
    let instances = instances.trim();
    let instances = if instances.is_empty() {
        2
    } else {
        parse_count("instances", instances, 1, u64::from(MOST_INSTANCES))
            .map_err(|e| e.to_string())? as u32
    };
    let configs = read_config(text).map_err(|e| e.to_string())?;
    let mut flags = String::new();
    if let Some(w) = window_us {
        flags.push_str(&format!(" --window {}", format_duration(w)));
    }
    if instances != 2 {
        flags.push_str(&format!(" --instances {instances}"));
    }
    configs
        .iter()
        .map(|config| {
            let c = check(config, window_us, instances).map_err(|e| e.to_string())?;
            let (lab_query, lab_note) =
                match Controls::for_spec(&c.limiter, config.limit, config.period) {
                    Ok(controls) => (
                        Some(encode(&controls, false, &Sections::default())),
                        format!(
                            "Opens the lab on {} audited at {} per {} s.",
                            c.limiter, controls.limit, controls.window_s
                        ),
                    ),
                    Err(why) => (None, why),
                };
            Ok(CheckItem {
                heading: c.heading(),
                lines: c.lines().into_iter().map(|(l, t)| [l, t]).collect(),
                lab_query,
                lab_note,
                command: format!("ratelab check FILE{flags}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::decode;
    use ratelab::spec::LimiterKind;

    fn example(name: &str) -> String {
        let path = format!("{}/../../docs/examples/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_page_says_what_the_command_line_says_and_opens_the_lab_on_it() {
        let text = example("express.js");
        let items = check_config(&text, "", "").expect("checks");
        assert_eq!(items.len(), 1);
        let c = check(&read_config(&text).expect("reads")[0], None, 2).expect("checks");
        assert_eq!(items[0].heading, c.heading());
        let lines: Vec<[String; 2]> = c.lines().into_iter().map(|(l, t)| [l, t]).collect();
        assert_eq!(items[0].lines, lines);
        let d = decode(&format!(
            "?{}",
            items[0].lab_query.as_deref().expect("the lab runs it")
        ));
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        assert_eq!(d.controls.algorithm, LimiterKind::ExpressRateLimit);
        assert_eq!((d.controls.limit, d.controls.window_s), (100, 900));
        assert_eq!(
            d.controls.limiter_spec().expect("parses").text,
            "express-rate-limit:limit=100,window-ms=900000"
        );
        assert_eq!(items[0].command, "ratelab check FILE");
    }

    #[test]
    fn flags_are_read_as_the_command_lines_and_haproxy_says_why_the_lab_cannot() {
        let items = check_config(&example("haproxy.cfg"), "1min", "4").expect("checks");
        assert_eq!(
            items[0].command,
            "ratelab check FILE --window 1min --instances 4"
        );
        assert!(
            items[0].lines[1][1].starts_with("at most 140 in any 1min"),
            "{:?}",
            items[0].lines
        );
        assert_eq!(items[0].lines[4][0], "4 instances");
        assert_eq!(items[0].lab_query, None);
        assert!(
            items[0].lab_note.contains("not haproxy"),
            "{}",
            items[0].lab_note
        );
        // nginx opens the lab in nginx's own units.
        let items = check_config(&example("nginx.conf"), "", "").expect("checks");
        let d = decode(&format!(
            "?{}",
            items[0].lab_query.as_deref().expect("the lab runs nginx")
        ));
        assert_eq!(d.controls.algorithm, LimiterKind::Nginx);
        assert_eq!(
            (
                d.controls.nginx.rate,
                d.controls.nginx.burst,
                d.controls.nginx.nodelay
            ),
            (10, 5, true)
        );
    }

    #[test]
    fn every_example_but_haproxys_opens_the_lab_on_the_same_limiter_and_runs() {
        let examples = [
            "express.js",
            "flexible-block.js",
            "flask_app.py",
            "limiter.go",
            "limits_app.py",
            "nginx.conf",
            "throttle.redis",
            "throttle.vcl",
        ];
        for name in examples {
            let text = example(name);
            for (item, config) in check_config(&text, "", "")
                .expect(name)
                .iter()
                .zip(read_config(&text).expect(name))
            {
                // The lab's windows go up to an hour: a day's limit says so.
                let Some(query) = item.lab_query.as_deref() else {
                    assert!(
                        config.period > 3_600 * ratelab::time::SECOND,
                        "{name}: {}",
                        item.lab_note
                    );
                    assert!(
                        item.lab_note
                            .contains("whole number of seconds from 1 to 3600"),
                        "{}",
                        item.lab_note
                    );
                    continue;
                };
                let d = decode(&format!("?{query}"));
                assert!(d.problems.is_empty(), "{name}: {:?}", d.problems);
                let spec = d.controls.limiter_spec().expect("parses");
                // The lab's limiter is the check's, key for key (nginx's in nginx's order).
                assert_eq!(spec.kind, config.spec.kind, "{name}");
                assert_eq!(
                    (
                        spec.limit,
                        spec.period,
                        spec.burst,
                        spec.rate,
                        spec.block,
                        spec.strategy
                    ),
                    (
                        config.spec.limit,
                        config.spec.period,
                        config.spec.burst,
                        config.spec.rate,
                        config.spec.block,
                        config.spec.strategy
                    ),
                    "{name}"
                );
                // And the lab runs it, audited at the configuration's own rule over whole
                // seconds: its limit per its period, or per as many periods as make them.
                let (r, _) =
                    crate::page::run(&d.controls).unwrap_or_else(|e| panic!("{name}: {e}"));
                let w = d.controls.window_s * ratelab::time::SECOND;
                assert_eq!(w % config.period, 0, "{name}");
                assert_eq!(r.limit, config.limit * (w / config.period), "{name}");
                assert!(
                    item.lab_note.ends_with(&format!(
                        "audited at {} per {} s.",
                        r.limit, d.controls.window_s
                    )),
                    "{}",
                    item.lab_note
                );
            }
        }
    }

    #[test]
    fn bad_input_is_named_with_what_is_accepted() {
        for (text, window, instances, says) in [
            ("", "", "", "Nothing to check"),
            ("limit_req_zone zone=one rate=10r/s;", "", "", "limit_req"),
            ("hello", "", "", "expected an nginx limit_req_zone"),
            (&example("nginx.conf") as &str, "soon", "", "window"),
            (&example("nginx.conf") as &str, "", "0", "instances"),
            (&example("nginx.conf") as &str, "", "10001", "10000"),
            (&example("nginx.conf") as &str, "48h", "", "24h"),
        ] {
            let e = check_config(text, window, instances).expect_err(says);
            assert!(e.contains(says), "{text:?} {window:?} {instances:?}: {e}");
        }
        let e = check_config(&"#".repeat(MOST_BYTES + 1), "", "").expect_err("too long");
        assert!(e.contains("at most 1048576"), "{e}");
    }
}
