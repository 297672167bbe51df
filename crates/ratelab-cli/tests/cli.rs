//! The CLI contract, checked from outside: the real binary, its exit codes, its JSON.

use serde_json::Value;
use std::process::Command;

fn ratelab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let (code, out, err) = ratelab(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).expect("valid JSON")
}

#[test]
fn json_has_one_result_per_limiter_in_order_with_every_key() {
    let v = json(&[
        "--limiter",
        "fixed-window",
        "--limiter",
        "token-bucket:burst=10",
        "--limiter",
        "sliding-log",
        "--traffic",
        "steady:load=0.8",
        "--minutes",
        "30",
        "--runs",
        "4",
        "--seed",
        "7",
    ]);
    let results = v["results"].as_array().expect("results array");
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["limiter"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        ["fixed-window", "token-bucket:burst=10", "sliding-log"]
    );
    for r in results {
        for key in [
            "offered",
            "admitted",
            "served_share",
            "served_share_se",
            "busiest_window_max",
            "busiest_window_mean",
            "wrong_admits",
            "wrong_rejects",
        ] {
            assert!(r.get(key).is_some_and(|x| x.is_number()), "{key} in {r}");
        }
        assert!(r["busiest_window_max"].is_u64());
        let share = r["served_share"].as_f64().expect("share");
        assert!((0.0..=1.0).contains(&share));
        assert!(r["admitted"].as_u64() <= r["offered"].as_u64());
    }
    // The sliding log never breaks the rule; its wrong admits are zero by construction.
    assert_eq!(results[2]["wrong_admits"].as_f64(), Some(0.0));
    assert!(results[2]["busiest_window_max"].as_u64() <= Some(100));
}

#[test]
fn the_boundary_burst_gets_twice_the_limit_through_a_fixed_window() {
    let v = json(&[
        "--limiter",
        "fixed-window",
        "--limiter",
        "sliding-log",
        "--limiter",
        "token-bucket:burst=10",
        "--limiter",
        "token-bucket",
        "--traffic",
        "boundary-burst",
        "--limit",
        "60",
    ]);
    let busiest: Vec<u64> = v["results"]
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["busiest_window_max"].as_u64().expect("int"))
        .collect();
    // Fixed window: 2L. Sliding log: L. The buckets refill at L per W, one token a second,
    // and start full: the first tick (L at 59.5 s) takes all B tokens, and the second (L at
    // 60.5 s, one second later) finds exactly one new token. Both ticks lie in one window, so
    // the busiest window is B + 1: 11 for a bucket of 10 (clean), 61 for one of L = 60.
    assert_eq!(busiest, [120, 60, 11, 61]);
    // One attack, not sustained traffic: the fixed window lets all of it through.
    let shares: Vec<f64> = v["results"]
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["served_share"].as_f64().expect("f"))
        .collect();
    assert_eq!(shares[0], 1.0);
    assert_eq!(shares[1], 0.5);
}

#[test]
fn a_flood_from_the_worst_moment_reaches_each_bound() {
    let v = json(&[
        "--limiter",
        "fixed-window",
        "--limiter",
        "sliding-window-counter",
        "--limiter",
        "gcra:burst=50",
        "--traffic",
        "flood:start=worst",
    ]);
    let got: Vec<(u64, u64)> = v["results"]
        .as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                r["busiest_window_max"].as_u64().expect("int"),
                r["bound"].as_u64().expect("bound"),
            )
        })
        .collect();
    assert_eq!(got, [(200, 200), (200, 200), (149, 149)]);
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_does_not() {
    let args = |seed: &'static str| {
        vec![
            "--limiter",
            "sliding-window-counter",
            "--traffic",
            "page-loads:load=0.8",
            "--runs",
            "3",
            "--seed",
            seed,
        ]
    };
    assert_eq!(json(&args("11")), json(&args("11")));
    assert_ne!(json(&args("11")), json(&args("12")));
}

/// A scratch directory for one test's files, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ratelab-cli-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    /// Writes `bytes` to `name` and returns the spec `replay:file=PATH` plus `extra`.
    fn replay(&self, name: &str, bytes: &[u8], extra: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write");
        format!("replay:file={}{extra}", path.display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `simulate` with a sliding log of limit 3 against a replay: exit code, offered, admitted,
/// stderr.
fn replay_sliding_log(spec: &str) -> (i32, Option<u64>, Option<u64>, String) {
    let (code, out, err) = ratelab(&[
        "simulate",
        "--limiter",
        "sliding-log",
        "--limit",
        "3",
        "--traffic",
        spec,
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    let result = &v["results"][0];
    (
        code,
        result["offered"].as_u64(),
        result["admitted"].as_u64(),
        err,
    )
}

#[test]
fn a_timestamp_file_is_replayed() {
    let dir = Scratch::new("seconds");
    // 5 requests within one second, then 3 more a minute later, not quite in order.
    let spec = dir.replay(
        "good.txt",
        b"# exported\n1700000000.0\n1700000000.2\n1700000000.1\n1700000000.3\r\n1700000000.4\n1700000060\n1700000060.5\n1700000061",
        "",
    );
    let (code, offered, admitted, err) = replay_sliding_log(&spec);
    assert_eq!(code, 0, "{err}");
    assert_eq!((offered, admitted), (Some(8), Some(6)));
    assert!(err.is_empty(), "{err}");
    // The same times in milliseconds, detected as such.
    let ms = dir.replay(
        "ms.txt",
        b"1700000000000\n1700000000100\n1700000000200\n1700000000300\n1700000000400\n1700000060000\n1700000060500\n1700000061000\n",
        "",
    );
    assert_eq!(
        replay_sliding_log(&ms),
        (0, Some(8), Some(6), String::new())
    );
}

#[test]
fn a_replay_larger_than_one_read_is_streamed_whole() {
    let dir = Scratch::new("large");
    // 200,000 lines, about 3.6 MB: several 1 MiB reads, lines straddling them.
    let text: String = (0..200_000u64)
        .map(|i| format!("{}.{:06}\n", 1_700_000_000 + i / 1000, i % 1000 * 1000))
        .collect();
    assert!(text.len() > 3 << 20);
    let spec = dir.replay("large.txt", text.as_bytes(), "");
    let (code, offered, admitted, err) = replay_sliding_log(&spec);
    assert_eq!(code, 0, "{err}");
    // 1,000 a second for 200 s: 3 a minute get through, in 4 windows.
    assert_eq!(offered, Some(200_000));
    assert_eq!(admitted, Some(12));
}

#[test]
fn an_iso_file_is_replayed_with_its_zones() {
    let dir = Scratch::new("iso");
    // The same instant, 2023-11-14T22:13:20Z, written four ways, and one a minute later.
    let spec = dir.replay(
        "iso.txt",
        b"2023-11-14T22:13:20Z\n2023-11-15T00:13:20+02:00\n2023-11-14 16:43:20.5-0530\n2023-11-14t22:13:20.9z\n2023-11-14T22:14:20Z\n",
        ",format=iso",
    );
    let (code, offered, admitted, err) = replay_sliding_log(&spec);
    assert_eq!(code, 0, "{err}");
    assert_eq!((offered, admitted), (Some(5), Some(4)));
}

#[test]
fn an_access_log_is_filtered_to_one_client() {
    let dir = Scratch::new("access");
    let mut log = String::new();
    for i in 0..12 {
        let host = if i % 3 == 0 {
            "203.0.113.7"
        } else {
            "198.51.100.2"
        };
        log += &format!(
            "{host} - - [14/Nov/2023:22:13:{:02} +0000] \"GET /api/{i} HTTP/1.1\" 200 512 \"-\" \"curl/8.0\"\n",
            20 + i
        );
    }
    // 4 requests of 203.0.113.7 in a minute: 3 get through.
    let spec = dir.replay("access.log", log.as_bytes(), ",client=203.0.113.7");
    let (code, offered, admitted, err) = replay_sliding_log(&spec);
    assert_eq!(code, 0, "{err}");
    assert_eq!((offered, admitted), (Some(4), Some(3)));
    let all = dir.replay("all.log", log.as_bytes(), ",format=access-log");
    assert_eq!(replay_sliding_log(&all).1, Some(12));
    let by_path = dir.replay("path.log", log.as_bytes(), ",field=path:/api/5");
    assert_eq!(replay_sliding_log(&by_path).1, Some(1));
    let nobody = dir.replay("nobody.log", log.as_bytes(), ",client=192.0.2.1");
    let (code, _, _, err) = replay_sliding_log(&nobody);
    assert_eq!(code, 2);
    assert!(err.contains("no line with host '192.0.2.1'"), "{err}");
}

#[test]
fn malformed_lines_are_skipped_with_a_warning() {
    let dir = Scratch::new("malformed");
    let spec = dir.replay(
        "bad.txt",
        b"1700000000\nnot a time\n1700000001\n\n1700000002\x1b[2J\n-5\n1700000003\n",
        "",
    );
    let (code, offered, _, err) = replay_sliding_log(&spec);
    assert_eq!(code, 0, "{err}");
    assert_eq!(offered, Some(3));
    assert!(
        err.contains("warning") && err.contains("3 malformed line(s) of 7"),
        "{err}"
    );
    assert!(
        err.contains("line 2: 'not a time': not a number of seconds"),
        "{err}"
    );
    assert!(err.contains("line 5: '1700000002\\u{1b}[2J'"), "{err}");
    assert!(err.contains("line 6: '-5': negative"), "{err}");
    assert!(
        !err.contains('\x1b'),
        "control characters are escaped: {err}"
    );
}

#[test]
fn unreadable_replay_files_are_refused_with_what_is_accepted() {
    let dir = Scratch::new("refused");
    let gzip = [0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03];
    let cases: [(&str, &[u8], &[&str]); 5] = [
        (
            "arrivals.txt.gz",
            &gzip,
            &["gzip-compressed", "decompress it first", "arrivals.txt.gz"],
        ),
        (
            "empty.txt",
            b"",
            &["the file is empty: expected one timestamp per line, or an access log"],
        ),
        ("comments.txt", b"# nothing\n\n", &["the file is empty"]),
        (
            "binary.bin",
            &[0xff, 0xfe, 0x00, 0x81],
            &["binary, not text"],
        ),
        (
            "words.txt",
            b"hello\nworld\n",
            &["no valid timestamp", "line 1", "'hello'", "expected"],
        ),
    ];
    for (name, bytes, needles) in cases {
        let spec = dir.replay(name, bytes, "");
        let (code, out, err) = ratelab(&["simulate", "--limiter", "gcra", "--traffic", &spec]);
        assert_eq!(code, 2, "{name}");
        assert!(out.is_empty(), "{name}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{name}: {err} lacks {needle}");
        }
    }
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_part_and_what_is_accepted() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &[
                "simulate",
                "--limiter",
                "token-buckt",
                "--traffic",
                "steady",
            ],
            &["token-buckt", "token-bucket"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra:burst=0",
                "--traffic",
                "steady",
            ],
            &["burst", "from 1"],
        ),
        (
            &["simulate", "--limiter", "gcra", "--traffic", "stead"],
            &["stead", "steady"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady:load=NaN",
            ],
            &["load", "NaN"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--window",
                "1m",
            ],
            &["--window", "1m", "ms, s, min"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--window",
                "0s",
            ],
            &["window", "1ms to 24h"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--limit",
                "-5",
            ],
            &["--limit", "-5", "whole number"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--limit",
                "0",
            ],
            &["--limit", "from 1"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--runs",
                "x",
            ],
            &["--runs", "x"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--minutes",
                "9999999",
            ],
            &["--minutes"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--format",
                "xml",
            ],
            &["--format", "json or table"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--colour",
            ],
            &["--colour", "--limiter"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--seed",
            ],
            &["--seed needs a value"],
        ),
        (&["simulate", "--traffic", "steady"], &["--limiter"]),
        (&["simulate", "--limiter", "gcra"], &["--traffic"]),
        (
            &[
                "simulate",
                "--limiter",
                "sliding-log:servers=3",
                "--traffic",
                "steady",
            ],
            &["servers", "divides the limit"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "replay:file=/nonexistent/x",
            ],
            &["cannot read", "/nonexistent/x"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "flood:start=90s",
            ],
            &["flood: start", "below 1min"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady:load=100",
                "--minutes",
                "100000",
                "--runs",
                "1000",
            ],
            &["too large", "decisions"],
        ),
        (&["frobnicate"], &["unknown command", "simulate"]),
    ];
    for (args, needles) in cases {
        let (code, out, err) = ratelab(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: '{err}' lacks '{n}'");
        }
    }
}

#[test]
fn the_table_format_and_the_demo_print() {
    let (code, out, _) = ratelab(&[
        "simulate",
        "--limiter",
        "fixed-window",
        "--traffic",
        "boundary-burst",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("fixed-window") && out.contains("200"), "{out}");
    let (code, out, _) = ratelab(&["demo"]);
    assert_eq!(code, 0);
    for kind in [
        "fixed-window",
        "sliding-log",
        "sliding-window-counter",
        "token-bucket",
        "gcra",
        "leaky-bucket",
    ] {
        assert!(out.contains(kind), "{out}");
    }
}

#[test]
fn the_study_writes_its_tables_plots_and_reproduction_report() {
    let dir = std::env::temp_dir().join(format!("ratelab-study-{}", std::process::id()));
    let (code, out, err) = ratelab(&[
        "study",
        "--runs",
        "2",
        "--minutes",
        "10",
        "--out",
        dir.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("# Reproduction of"), "{out}");
    assert!(
        err.contains("jobs") && err.contains("study done"),
        "progress on stderr: {err}"
    );
    for file in [
        "honest.csv",
        "attacker.csv",
        "lockout.csv",
        "split.csv",
        "theory.csv",
        "tables.md",
        "REPRODUCTION.md",
        "swc-offsets.svg",
    ] {
        let text =
            std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(text.len() > 50, "{file} is too short");
    }
    let honest = std::fs::read_to_string(dir.join("honest.csv")).expect("csv");
    assert_eq!(
        honest.lines().count(),
        21,
        "a header and 20 shape-load rows"
    );
    assert!(std::fs::read_to_string(dir.join("swc-offsets.svg"))
        .expect("svg")
        .starts_with("<svg"));
    let _ = std::fs::remove_dir_all(&dir);
    for (args, needle) in [
        (&["study", "--runs", "1"][..], "--runs"),
        (&["study", "--format", "pdf"][..], "json or markdown"),
        (&["study", "--fast"][..], "--fast"),
    ] {
        let (code, _, err) = ratelab(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn the_study_does_not_depend_on_the_thread_count() {
    let run = |threads: &str| {
        let (code, out, err) = ratelab(&[
            "study",
            "--runs",
            "2",
            "--minutes",
            "10",
            "--seed",
            "9",
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).expect("json");
        v["tables"].clone()
    };
    assert_eq!(run("1"), run("3"));
}

/// `ratelab probe` refuses, before sending anything, what it must not or cannot send.
#[test]
fn probe_refuses_remote_hosts_overlapping_statuses_and_oversized_traffic() {
    let base = [
        "probe",
        "--traffic",
        "boundary-burst",
        "--limit",
        "20",
        "--window",
        "1s",
    ];
    let cases: [(&[&str], &[&str]); 13] = [
        (
            &["--target", "http://127.0.0.1/", "--bogus", "1"],
            &["'--bogus'", "--allow-remote, --dry-run"],
        ),
        (
            &["--target", "http://10.1.2.3/api"],
            &["10.1.2.3", "not a loopback address", "--allow-remote"],
        ),
        (
            &["--target", "http://[2001:db8::1]/"],
            &["2001:db8::1", "not a loopback address"],
        ),
        (
            &["--redis", "redis://192.0.2.7:6379", "--script", "gcra"],
            &["192.0.2.7", "--allow-remote"],
        ),
        (
            &["--target", "https://127.0.0.1/"],
            &["https://127.0.0.1/", "http://"],
        ),
        (
            &["--target", "not a url"],
            &["--target 'not a url'", "http://127.0.0.1:8080/api"],
        ),
        (
            &[
                "--target",
                "http://127.0.0.1/",
                "--admit",
                "2xx",
                "--reject",
                "200,429",
            ],
            &["overlap"],
        ),
        (
            &["--target", "http://127.0.0.1/", "--reject", "42"],
            &["--reject '42'", "from 100 to 599"],
        ),
        (
            &["--redis", "redis://127.0.0.1:6379", "--script", "leaky"],
            &["--script 'leaky'", "sorted-set-record-rejects"],
        ),
        (
            &["--redis", "redis://127.0.0.1:6379"],
            &["--script NAME", "fixed-window"],
        ),
        (
            &[
                "--redis",
                "redis://127.0.0.1:6379",
                "--script",
                "sorted-set",
                "--burst",
                "5",
            ],
            &["--burst", "gcra"],
        ),
        (
            &["--target", "http://127.0.0.1/", "--timeout", "5min"],
            &["--timeout", "60s"],
        ),
        (
            &["--target", "http://127.0.0.1/", "--header", "no colon"],
            &["--header 'no colon'", "NAME:VALUE"],
        ),
    ];
    for (extra, wanted) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (code, out, err) = ratelab(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty(), "{extra:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{extra:?}: {err}");
        for w in wanted {
            assert!(err.contains(w), "{extra:?}: '{w}' not in {err}");
        }
    }
    // Over the caps: a million a second, and more requests than a probe may send.
    for traffic in ["flood:every=1us,for=2s", "steady:load=100"] {
        let (code, _, err) = ratelab(&[
            "probe",
            "--target",
            "http://127.0.0.1:9/",
            "--traffic",
            traffic,
            "--limit",
            "1000000",
            "--window",
            "1s",
            "--duration",
            "1h",
        ]);
        assert_eq!(code, 2, "{traffic}: {err}");
        assert!(
            err.contains("probe traffic") && err.contains("at most"),
            "{traffic}: {err}"
        );
    }
    let (code, _, err) = ratelab(&["probe", "--target", "http://127.0.0.1:9/"]);
    assert_eq!(code, 2);
    assert!(err.contains("--traffic SPEC"), "{err}");
}

/// A dry run prints what would be sent and sends nothing; a target that refuses connections
/// gives errors, counted apart from admits and rejects.
#[test]
fn probe_dry_run_sends_nothing_and_refused_connections_are_errors() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("address").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let target = format!("http://127.0.0.1:{port}/");
    let (code, out, err) = ratelab(&[
        "probe",
        "--target",
        &target,
        "--traffic",
        "boundary-burst",
        "--limit",
        "20",
        "--window",
        "1s",
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("would send 40 request(s)"), "{err}");
    assert!(listener.accept().is_err(), "a dry run connected");
    drop(listener);
    let (code, out, err) = ratelab(&[
        "probe",
        "--target",
        &target,
        "--traffic",
        "flood:every=10ms,for=100ms",
        "--limit",
        "20",
        "--window",
        "1s",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["sent"], 10, "{v}");
    assert_eq!(v["errors"], 10, "{v}");
    assert_eq!(v["audit"]["admitted"], 0, "{v}");
    assert_eq!(v["audit"]["rejected"], 0, "{v}");
}

/// The recorded reports the page ships (www/probes/, from `cargo xtask probe-record`) are
/// whole, carry the command that recorded them, and their verdicts recompute from the trace.
#[test]
fn the_shipped_probe_reports_are_whole_and_their_verdicts_recompute() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/probes");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("www/probes") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let report: ratelab::probe::ProbeReport =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(report.check(), Ok(()), "{}", path.display());
        let command = report.command.clone().expect("a command");
        assert!(command.starts_with("ratelab probe "), "{command}");
        let c = report.comparison.clone().expect("a model");
        let spec = ratelab::LimiterSpec::parse(&c.model).expect("the model parses");
        let again = report.with_model(&spec).expect("recomputes");
        assert_eq!(again.comparison.as_ref(), Some(&c), "{}", path.display());
        assert_eq!(again.trace.model, report.trace.model, "{}", path.display());
        n += 1;
    }
    assert_eq!(n, 6);
}
