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
                "gcra",
                "--traffic",
                "steady",
                "--gateways",
                "65",
            ],
            &["gateways", "65", "from 1 to 64"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--route",
                "random",
            ],
            &["--route needs --gateways"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--gateways",
                "3",
                "--coord",
                "sync",
            ],
            &["every=DUR"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--gateways",
                "3",
                "--coord",
                "gossip",
            ],
            &["gossip", "sync:every=DUR"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "fixed-window",
                "--traffic",
                "steady",
                "--gateways",
                "3",
                "--coord",
                "central:rtt=2ms,skew=1s",
            ],
            &["central: skew", "local, split or sync"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "fixed-window",
                "--traffic",
                "steady",
                "--gateways",
                "3",
                "--coord",
                "split:skew=soon",
            ],
            &["skew", "soon", "a number with a unit"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "sliding-log:record-rejects=true",
                "--traffic",
                "steady",
                "--gateways",
                "3",
            ],
            &["record-rejects=false"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "sliding-log",
                "--traffic",
                "steady",
                "--gateways",
                "7",
                "--coord",
                "split",
            ],
            &["gateways", "divides the limit 100"],
        ),
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
fn a_mix_of_clients_is_checked_in_one_line_and_reported_by_group() {
    let base = "retry:rate=1/1min,spike=0,tries=3,clients=5";
    let bad: &[(String, &[&str], &[&str])] = &[
        (
            format!("{base}+clients=3,rate=2/1min"),
            &[],
            &[
                "rate",
                "group of a retry mix",
                "clients=M",
                "rate, spike and at are the spec's",
            ],
        ),
        (
            format!("{base}+clients=3,jitter=sideways"),
            &[],
            &[
                "retry: jitter",
                "sideways",
                "none, full, equal or decorrelated",
            ],
        ),
        (
            format!("{base}+clients=3,every=2s,policy=exponential"),
            &[],
            &["retry: every", "policy=exponential"],
        ),
        (
            format!("{base}+clients=0"),
            &[],
            &["retry: clients", "0", "from 1 to 10000"],
        ),
        (
            format!("{base}+clients=6000+clients=4000"),
            &[],
            &["retry: clients", "10005 in all", "at most 10000"],
        ),
        (
            format!("{base}{}", "+clients=1".repeat(8)),
            &[],
            &["retry: mix", "9 groups", "at most 8"],
        ),
        (
            "replay:file=no+such+file.txt".to_owned(),
            &[],
            &["no+such+file.txt"],
        ),
        (
            format!("{base}+clients=3"),
            &["--clients", "8"],
            &["--clients 8 with a mix", "clients=M"],
        ),
        (
            format!("{base}+clients=3,tries=2,every=1h"),
            &["--minutes", "10"],
            &[],
        ),
    ];
    for (traffic, extra, needles) in bad {
        let mut args = vec![
            "simulate",
            "--limiter",
            "fixed-window",
            "--traffic",
            traffic.as_str(),
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = ratelab(&args);
        if needles.is_empty() {
            assert_eq!(code, 0, "{args:?}: {err}");
            continue;
        }
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        for n in *needles {
            assert!(err.contains(n), "{args:?}: '{err}' lacks '{n}'");
        }
    }
    // The table: the fleet's line per limiter, then each group's, named by its keys.
    let mix = "retry:rate=6/5min,spike=0,at=0s,tries=1,clients=60+clients=40,tries=4,every=5s";
    let run = |format: &str| {
        let args = ["simulate", "--limiter", "fixed-window", "--traffic", mix];
        ratelab(&[&args[..], &["--minutes", "10", "--format", format]].concat())
    };
    let (code, out, err) = run("table");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("100 clients per run in a mix of 2 groups"),
        "{out}"
    );
    let lines: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("fixed-window:"))
        .collect();
    assert!(
        lines[1].starts_with("  clients=60,tries=1,every=1s: "),
        "{out}"
    );
    assert!(
        lines[2].starts_with("  clients=40,tries=4,every=5s: "),
        "{out}"
    );
    // The JSON: the mix in `client.policy`, every group's keys joined by `+`, and each
    // group's numbers in `client.groups`.
    let (code, out, err) = run("json");
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["results"][0]["client"]["policy"],
        "clients=60,tries=1,every=1s+clients=40,tries=4,every=5s"
    );
    let groups = &v["results"][0]["client"]["groups"];
    assert_eq!(groups[0]["policy"], "clients=60,tries=1,every=1s");
    assert_eq!(groups[0]["attempts"], groups[0]["requests"]);
    let n = |g: &Value, k: &str| g[k].as_u64().expect(k);
    assert_eq!(
        n(&groups[0], "requests") + n(&groups[1], "requests"),
        n(&v["results"][0]["client"], "requests")
    );
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

/// `study/` in the repository is exactly what `ratelab study --out` writes at the essay's
/// size (20 runs × 2,000 minutes, seed 1): every file, byte for byte, and no file more or
/// less. Regenerate with `cargo run --release -p ratelab-cli -- study --out study`.
#[test]
fn the_committed_study_is_what_the_code_writes() {
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../study");
    let dir = std::env::temp_dir().join(format!("ratelab-committed-{}", std::process::id()));
    let (code, _, err) = ratelab(&["study", "--out", dir.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{err}");
    let names = |d: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&dir), names(&committed), "the files of study/");
    for name in names(&dir) {
        let fresh = std::fs::read(dir.join(&name)).expect("written");
        let old = std::fs::read(committed.join(&name)).expect("committed");
        assert!(
            fresh == old,
            "study/{name} differs from what `ratelab study --out study` writes now; regenerate it"
        );
    }
    // The committed report's verdicts are computed: an explained row has another reading
    // whose own run lands within the row's tolerance, shown beside it; the one difference no
    // reading tried explains is named here, so that an explanation whose run misses (or a
    // new unexplained row) fails this test.
    let report = std::fs::read_to_string(committed.join("REPRODUCTION.md")).expect("report");
    assert!(!report.contains("| not run |"), "{report}");
    let unexplained: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("| UNEXPLAINED |"))
        .map(|l| l.split(" | ").next().unwrap_or("").trim_start_matches("| "))
        .collect();
    assert_eq!(unexplained, ["the same, exactly: 1 − B(5, 4)"], "{report}");
    let explained = report
        .lines()
        .filter(|l| l.contains("| explained difference |"))
        .count();
    let landing = report
        .lines()
        .filter(|l| l.contains("another reading") && l.contains("within the row's tolerance"))
        .count();
    assert!(
        explained >= 9 && landing >= explained,
        "{explained} explained rows, {landing} notes with a reading that lands"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every command of the reproduction report prints the number the row shows or is computed
/// from (its own, each pooled part's, each other reading's): the same scenario, the same
/// seed. The study runs small, and each of its rows' commands is run and read back.
#[test]
fn the_reproduction_reports_commands_print_its_numbers() {
    let (code, out, err) = ratelab(&[
        "study",
        "--runs",
        "2",
        "--minutes",
        "20",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).expect("json");
    let claims = report["claims"].as_array().expect("claims");
    let mut checked = 0;
    let mut seen = std::collections::BTreeMap::new();
    for claim in claims {
        let what = claim["what"].as_str().expect("what");
        let checks = claim["checks"].as_array().expect("checks");
        // A row's own command is one that prints its number.
        let own = claim["command"].as_str().expect("command");
        assert!(
            own.is_empty() || checks.iter().any(|c| c["command"] == own),
            "{what}: its command `{own}` is not checked"
        );
        for check in checks {
            let command = check["command"].as_str().expect("a command");
            let sim: &Value = seen.entry(command.to_owned()).or_insert_with(|| {
                let args: Vec<&str> = command
                    .strip_prefix("ratelab ")
                    .expect("a ratelab command")
                    .split(' ')
                    .chain(["--format", "json"])
                    .collect();
                let (code, out, err) = ratelab(&args);
                assert_eq!(code, 0, "{command}: {err}");
                serde_json::from_str(&out).expect("json")
            });
            let r = &sim["results"][0];
            let n = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
            let got = match check["metric"].as_str().expect("metric") {
                "Served" => n("served_share"),
                "BusiestMean" => n("busiest_window_mean"),
                "BusiestMax" => n("busiest_window_max"),
                "Rejected" => n("offered") - n("admitted"),
                "WrongAdmits" => n("wrong_admits"),
                "WrongRejects" => n("wrong_rejects"),
                other => panic!("{other}"),
            };
            let want = check["value"].as_f64().expect("value");
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{what}: `{command}` prints {got}, the report has {want}"
            );
            checked += 1;
        }
    }
    // Every kind: shares, pooled parts, busiest windows, rejections, wrong decisions, the
    // readings' own runs.
    assert!(checked >= 55, "{checked} commands checked");
}

/// `--timings` says where the study's time went: every experiment once, with its jobs, and
/// the shares adding up to the whole.
#[test]
fn the_study_timings_name_every_experiment_and_add_up() {
    let (code, _, err) = ratelab(&["study", "--runs", "2", "--minutes", "10", "--timings"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err
        .lines()
        .skip_while(|l| !l.starts_with("experiment"))
        .skip(1)
        .take_while(|l| !l.starts_with("ratelab:"))
        .collect();
    let mut jobs = 0;
    let mut share = 0.0;
    for name in [
        "honest",
        "lockout",
        "counter-offsets",
        "guess-on-off",
        "boundary",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {err}"
        );
    }
    for l in &lines {
        let cols: Vec<&str> = l.split_whitespace().collect();
        let n = cols.len();
        jobs += cols[n - 5].parse::<usize>().expect("jobs");
        share += cols[n - 3]
            .trim_end_matches('%')
            .parse::<f64>()
            .expect("share");
    }
    let total: usize = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("ratelab: ")?
                .split(" jobs")
                .next()?
                .parse()
                .ok()
        })
        .expect("the job count");
    assert_eq!(jobs, total, "{err}");
    // Each share is rounded to a tenth of a point.
    assert!(
        (share - 100.0).abs() <= 0.05 * lines.len() as f64 + 1e-9,
        "{share}: {err}"
    );
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
    // Off a terminal: the summary lines, and no progress bar redrawn in place.
    assert!(
        err.contains("jobs") && err.contains("study done"),
        "summary on stderr: {err}"
    );
    assert!(
        !err.contains('\r') && !err.contains("[#"),
        "a bar off a terminal: {err:?}"
    );
    for file in [
        "honest.csv",
        "attacker.csv",
        "lockout.csv",
        "split.csv",
        "theory.csv",
        "tables.md",
        "REPRODUCTION.md",
        "claims.csv",
        "boundary.csv",
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
    let mut n = 0;
    for path in shipped_reports() {
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
    assert_eq!(n, 9);
}

/// Runs ratelab with `args` given as raw bytes (for arguments that are not UTF-8).
fn ratelab_os(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
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

/// Asserts the usage-error contract: status 2, nothing on stdout, one `ratelab: ` line on
/// stderr that is terminal-safe (no raw control character) and bounded.
fn assert_one_safe_line(what: &str, (code, out, err): &(i32, String, String)) {
    assert_eq!(*code, 2, "{what}: {err}");
    assert!(out.is_empty(), "{what} printed {out}");
    assert!(err.starts_with("ratelab: "), "{what}: {err:?}");
    assert!(err.ends_with('\n'), "{what}: {err:?}");
    assert_eq!(err.lines().count(), 1, "{what}: {err:?}");
    let line = err.trim_end_matches('\n');
    assert!(
        !line.chars().any(char::is_control),
        "{what}: a raw control character reaches the terminal: {err:?}"
    );
    assert!(line.len() < 1_200, "{what}: {} bytes", line.len());
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn version_help_and_completions() {
    let (code, out, _) = ratelab(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("ratelab {}", env!("CARGO_PKG_VERSION")));
    // Help for a command, both ways, lists every flag with its default and an example.
    let simulate = [
        ("--limiter", ""),
        ("--traffic", ""),
        ("--limit", "[default: 100]"),
        ("--window", "[default: 60s]"),
        ("--minutes", "[default: 60]"),
        ("--runs", "[default: 1]"),
        ("--seed", "[default: 1]"),
        ("--format", "[default: table]"),
    ];
    for args in [&["help", "simulate"][..], &["simulate", "--help"]] {
        let (code, out, err) = ratelab(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        for (flag, default) in simulate {
            assert!(out.contains(flag), "{args:?} lacks {flag}: {out}");
            assert!(out.contains(default), "{args:?} lacks {default}: {out}");
        }
        assert!(out.contains("E.g.") && out.contains("Examples:"), "{out}");
        assert!(
            out.contains("ratelab simulate --limiter fixed-window"),
            "{out}"
        );
    }
    let (code, out, _) = ratelab(&["help", "probe"]);
    assert_eq!(code, 0);
    for flag in [
        "--target",
        "--redis",
        "--script",
        "--burst",
        "--traffic",
        "--duration",
        "--model",
        "--admit",
        "--reject",
        "--timeout",
        "--header",
        "--allow-remote",
        "--dry-run",
        "[default: 2s]",
        "a peak, not an average",
        "Ctrl-C",
        "130",
    ] {
        assert!(out.contains(flag), "help probe lacks {flag}: {out}");
    }
    for (command, flags) in [
        (
            "study",
            &["--out", "--threads", "--only", "[default: 2000]"][..],
        ),
        ("demo", &["--limit", "--window", "[default: 100]"]),
    ] {
        let (code, out, _) = ratelab(&["help", command]);
        assert_eq!(code, 0);
        for flag in flags {
            assert!(out.contains(flag), "help {command} lacks {flag}: {out}");
        }
    }
    // The bare command and `help` give the overview with the spec language.
    for args in [&[][..], &["help"], &["--help"]] {
        let (code, out, _) = ratelab(args);
        assert_eq!(code, 0, "{args:?}");
        for needle in [
            "simulate",
            "completions",
            "sliding-window-counter",
            "DUR is like",
        ] {
            assert!(out.contains(needle), "{args:?} lacks {needle}: {out}");
        }
    }
    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef ratelab"),
        ("fish", "complete -c ratelab"),
    ] {
        let (code, out, err) = ratelab(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        for n in [needle, "simulate", "limiter", "sorted-set-record-rejects"] {
            assert!(out.contains(n), "{shell} completions lack {n}");
        }
    }
    let r = ratelab(&["completions", "tcsh"]);
    assert_one_safe_line("completions tcsh", &r);
    assert!(r.2.contains("'tcsh'") && r.2.contains("bash"), "{}", r.2);
    let r = ratelab(&["completions"]);
    assert_one_safe_line("completions", &r);
    assert!(r.2.contains("bash, zsh, fish"), "{}", r.2);
}

#[test]
fn did_you_mean_for_commands_flags_limiters_and_values() {
    let cases: [(&[&str], &str); 8] = [
        (&["simulat"], "did you mean 'simulate'?"),
        (
            &["simulate", "--limiter", "gcra", "--trafic", "steady"],
            "did you mean '--traffic'?",
        ),
        (
            &["simulate", "--limiter", "token-buket", "--traffic", "steady"],
            "unknown limiter 'token-buket': accepted are fixed-window, sliding-log, sliding-window-counter, token-bucket, gcra, leaky-bucket, nginx, haproxy, express-rate-limit, rate-limiter-flexible, go-rate, redis-cell, vsthrottle, limits; did you mean 'token-bucket'?",
        ),
        (
            &["simulate", "--limiter", "gcra:brust=5", "--traffic", "steady"],
            "did you mean 'burst'?",
        ),
        (
            &["simulate", "--limiter", "gcra", "--traffic", "stedy"],
            "did you mean 'steady'?",
        ),
        (
            &["simulate", "--limiter", "gcra", "--traffic", "steady", "--format", "jsn"],
            "did you mean 'json'?",
        ),
        (
            &["probe", "--redis", "redis://127.0.0.1:6379", "--script", "gcar"],
            "did you mean 'gcra'?",
        ),
        (
            &["simulate", "--limiter", "gcra", "--traffic", "steady", "--limiter", "fixed-windw"],
            "did you mean 'fixed-window'?",
        ),
    ];
    for (args, wanted) in cases {
        let r = ratelab(args);
        assert_one_safe_line(&format!("{args:?}"), &r);
        assert!(r.2.contains(wanted), "{args:?}: '{}' lacks '{wanted}'", r.2);
    }
    // Nothing close: no guess.
    let r = ratelab(&["simulate", "--limiter", "zebra", "--traffic", "steady"]);
    assert_one_safe_line("zebra", &r);
    assert!(!r.2.contains("did you mean"), "{}", r.2);
}

#[test]
fn user_text_in_messages_is_escaped_and_cut() {
    let huge = "x".repeat(100_000);
    let huge_flag = format!("--{huge}");
    let huge_url = format!("ftp://{huge}");
    let cases: [(&[&str], &[&str]); 10] = [
        // A newline inside a spec name: one line, the newline shown as \n.
        (
            &[
                "simulate",
                "--limiter",
                "gcra\nfixed-window",
                "--traffic",
                "steady",
            ],
            &[r"'gcra\nfixed-window'"],
        ),
        // An escape sequence in a flag name.
        (
            &["simulate", "--\u{1b}[2Jcolour"],
            &[r"'--\u{1b}[2Jcolour'"],
        ),
        // A 100 KB flag is cut and its length given.
        (&["simulate", &huge_flag], &["…' (100002 characters)"]),
        // A 100 KB spec, quoted by the core, is cut too.
        (
            &["simulate", "--limiter", &huge, "--traffic", "steady"],
            &["unknown limiter 'xxxxx", "…'"],
        ),
        (
            &["probe", "--target", &huge_url, "--traffic", "steady"],
            &["invalid --target 'ftp://xxx", "…' (100006 characters)"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "steady",
                "--window",
                "1m\r\n\u{9b}31m",
            ],
            &[r"'1m\r\n\u{9b}31m'"],
        ),
        (
            &[
                "simulate",
                "--limiter",
                "gcra",
                "--traffic",
                "replay:file=/nonexistent/a\u{1b}]0;pwned\u{7}b",
            ],
            &[
                r"'/nonexistent/a\u{1b}]0;pwned\u{7}b'",
                "cannot read replay file",
            ],
        ),
        (
            &[
                "probe",
                "--target",
                "http://127.0.0.1:9/",
                "--traffic",
                "steady",
                "--admit",
                "2xx,\u{1b}[5m",
            ],
            &[r"'\u{1b}[5m'"],
        ),
        (
            &[
                "probe",
                "--target",
                "http://127.0.0.1:9/",
                "--traffic",
                "steady",
                "--timeout",
                "1s\t\u{202e}",
            ],
            &[r"'1s\t\u{202e}'"],
        ),
        (&["simulate", "--format", "json\n"], &[r"'json\n'"]),
    ];
    for (args, needles) in cases {
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(40).collect()).collect();
        let r = ratelab(args);
        assert_one_safe_line(&format!("{shown:?}"), &r);
        for n in needles {
            assert!(r.2.contains(n), "{shown:?}: {:?} lacks {n:?}", r.2);
        }
    }
    // An argument that is not UTF-8 is refused in one line, not with a panic.
    use std::os::unix::ffi::OsStrExt;
    let bad = std::ffi::OsStr::from_bytes(b"gcra\xff\xfe");
    let r = ratelab_os(&["simulate".as_ref(), "--limiter".as_ref(), bad]);
    assert_one_safe_line("not UTF-8", &r);
    assert!(r.2.contains("not valid UTF-8"), "{}", r.2);
}

#[test]
fn specs_print_as_they_were_parsed() {
    let args = [
        "simulate",
        "--limiter",
        "gcra\n",
        "--limiter",
        "\ttoken-bucket:burst = 10\t",
        "--limiter",
        "sliding-log ",
        "--traffic",
        "boundary-burst\n",
        "--limit",
        "60",
    ];
    let (code, out, err) = ratelab(&args);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    // A title, a header and one row a limiter, each with its nine columns.
    assert_eq!(lines.len(), 5, "{out}");
    assert!(!out.contains('\t'), "{out:?}");
    for (row, name) in lines[2..]
        .iter()
        .zip(["gcra", "token-bucket:burst=10", "sliding-log"])
    {
        assert!(row.starts_with(&format!("{name} ")), "{row:?}");
        assert_eq!(row.split_whitespace().count(), 9, "{row:?}");
    }
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let (code, out, err) = ratelab(&json_args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let names: Vec<&str> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["limiter"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["gcra", "token-bucket:burst=10", "sliding-log"]);
}

#[test]
fn demo_honours_limit_and_window_and_refuses_other_flags() {
    let (code, out, err) = ratelab(&["demo", "--limit", "20", "--window", "1s"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("The boundary burst: 20 requests"), "{out}");
    assert!(out.contains("20 per 1s"), "{out}");
    let fixed = out
        .lines()
        .find(|l| l.starts_with("fixed-window "))
        .expect("a fixed-window row");
    // offered, admitted, served, ± SE, busiest: twice the limit through a fixed window.
    assert_eq!(fixed.split_whitespace().nth(5), Some("40"), "{fixed}");
    let (code, out, err) = ratelab(&["demo", "--limit", "20", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["scenario"]["limit"], 20);
    assert_eq!(v["results"].as_array().map(Vec::len), Some(6));
    for args in [
        &["demo", "--runs", "3"][..],
        &["demo", "--traffic", "steady"],
        &["demo", "--limit", "0"],
        &["demo", "extra"],
    ] {
        let r = ratelab(args);
        assert_one_safe_line(&format!("{args:?}"), &r);
    }
    let r = ratelab(&["demo", "--runs", "3"]);
    assert!(
        r.2.contains("'--runs'") && r.2.contains("--limit, --window"),
        "{}",
        r.2
    );
}

/// What ratelab does when its stdout cannot be written: status 1, one line, no panic.
fn assert_output_error(what: &str, status: std::process::ExitStatus, err: &str) {
    assert_eq!(status.code(), Some(1), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(
        err.starts_with("ratelab: cannot write the output"),
        "{what}: {err}"
    );
}

#[test]
fn a_closed_or_full_stdout_ends_with_one_line_and_status_1() {
    use std::os::fd::OwnedFd;
    use std::process::Stdio;
    // `ratelab demo | head -1` where head has gone: a socket whose other end is closed
    // refuses every write (EPIPE) from the first byte, whatever the timing.
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
    drop(ours);
    let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .arg("demo")
        .stdout(Stdio::from(OwnedFd::from(theirs)))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_output_error("demo, closed", out.status, &err);
    assert!(err.contains("broken pipe"), "{err}");
    // A real pipe whose reader is dropped unread: the output is larger than a pipe holds
    // (64 KiB), so the writer blocks until the reader is gone and then gets EPIPE.
    let mut args = vec![
        "simulate",
        "--traffic",
        "boundary-burst",
        "--format",
        "json",
    ];
    for _ in 0..300 {
        args.extend(["--limiter", "fixed-window"]);
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waits");
    assert_output_error(
        "simulate, pipe closed",
        out.status,
        &String::from_utf8_lossy(&out.stderr),
    );
    // A full disk.
    for args in [
        &["demo"][..],
        &["help", "simulate"],
        &["completions", "bash"],
    ] {
        let full = std::fs::File::create("/dev/full").expect("/dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_ratelab"))
            .args(args)
            .stdout(Stdio::from(full))
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_output_error(&format!("{args:?} > /dev/full"), out.status, &err);
        assert!(err.contains("No space left on device"), "{err}");
    }
}

/// The probe's caps hold for every traffic, and what it would put on the wire is checked
/// before anything is sent, `--dry-run` included.
#[test]
fn probe_caps_timeouts_and_headers_are_checked_before_sending() {
    let probe = |extra: &[&str]| {
        let mut args = vec!["probe", "--target", "http://127.0.0.1:9/", "--dry-run"];
        if !extra.contains(&"--limit") {
            args.extend(["--limit", "20", "--window", "1s"]);
        }
        args.extend_from_slice(extra);
        ratelab(&args)
    };
    let refused: [(&[&str], &[&str]); 10] = [
        // Ten requests at 59 minutes with two retries an hour apart: the last at 179min.
        (
            &[
                "--traffic",
                "retry:rate=1/1min,spike=10,at=59min,tries=3,every=1h",
                "--duration",
                "1h",
            ],
            &[
                "last retry could be due at 179min",
                "at most 1h, retries included",
            ],
        ),
        // 8,000 requests within 200 ms, half an hour into an hour of silence.
        (
            &[
                "--traffic",
                "boundary-burst:before=100ms,after=100ms",
                "--limit",
                "4000",
                "--window",
                "30min",
                "--duration",
                "1h",
            ],
            &["8000 requests in one second", "not an average"],
        ),
        // 4,000 at once and their retries a millisecond later.
        (
            &[
                "--traffic",
                "retry:rate=1/1min,spike=4000,at=30min,tries=2,every=1ms",
                "--duration",
                "1h",
            ],
            &["in one second", "retries included"],
        ),
        (
            &["--traffic", "steady", "--timeout", "0s"],
            &["--timeout '0s'", "1ms to 60s"],
        ),
        (
            &["--traffic", "steady", "--timeout", "500us"],
            &["--timeout '500us'", "1ms to 60s"],
        ),
        (
            &["--traffic", "steady", "--timeout", "61s"],
            &["1ms to 60s"],
        ),
        (
            &["--traffic", "steady", "--header", "X-A:b\r\nX-Evil:1"],
            &[r"'X-A:b\r\nX-Evil:1'", "CR or LF"],
        ),
        // A trailing newline was trimmed away before, and the header sent.
        (
            &["--traffic", "steady", "--header", "X-A:b\n"],
            &["CR or LF"],
        ),
        (
            &["--traffic", "steady", "--header", "X-A:\r"],
            &["CR or LF"],
        ),
        (
            &["--traffic", "steady", "--header", "X-A:\u{1b}[2J"],
            &[r"'X-A:\u{1b}[2J'", "control characters"],
        ),
    ];
    for (extra, needles) in refused {
        let r = probe(extra);
        assert_one_safe_line(&format!("{extra:?}"), &r);
        for n in needles {
            assert!(r.2.contains(n), "{extra:?}: {:?} lacks {n:?}", r.2);
        }
    }
    // Within the caps: the limits themselves, and retries that stay within the hour.
    for extra in [
        &["--traffic", "steady", "--timeout", "1ms"][..],
        &["--traffic", "steady", "--timeout", "60s"],
        &["--traffic", "steady", "--header", "X-A: b\tc "],
        &[
            "--traffic",
            "boundary-burst:before=600ms,after=600ms",
            "--limit",
            "4000",
            "--window",
            "30min",
            "--duration",
            "1h",
        ],
        &[
            "--traffic",
            "retry:rate=1/1min,spike=4000,at=30min,tries=2,every=2s",
            "--duration",
            "1h",
        ],
    ] {
        let (code, out, err) = probe(extra);
        assert_eq!(code, 0, "{extra:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("would send"), "{extra:?}: {err}");
    }
    let (_, _, err) = probe(&[
        "--traffic",
        "retry:rate=1/1min,spike=4000,at=30min,tries=2,every=2s",
        "--duration",
        "1h",
    ]);
    assert!(err.contains("up to 8"), "the most with retries: {err}");
    assert!(err.contains("the last due by"), "{err}");
}

/// A loopback HTTP server that accepts connections and never answers: every request
/// stays in flight until the probe's timeout.
fn silent_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    port
}

/// Starts `ratelab ARGS`, waits until its stderr has a line containing `ready`, then for
/// each of `pauses` waits that long and sends it SIGINT; returns the exit code, stdout,
/// stderr and how long it took to end after the last signal.
fn interrupt(
    args: &[&str],
    ready: &'static str,
    pauses: &[std::time::Duration],
) -> (i32, String, String, std::time::Duration) {
    use std::io::{BufRead, Read};
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let stderr = child.stderr.take().expect("stderr");
    let (seen_tx, seen_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            if line.contains(ready) {
                let _ = seen_tx.send(());
            }
            all += &line;
            all.push('\n');
        }
        all
    });
    seen_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the probe started sending");
    let mut signalled = Instant::now();
    for &pause in pauses {
        std::thread::sleep(pause);
        signalled = Instant::now();
        let status = Command::new("sh")
            .args(["-c", &format!("kill -INT {}", child.id())])
            .status()
            .expect("kill");
        assert!(status.success());
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("stdout");
    let code = child.wait().expect("waits").code().unwrap_or(-1);
    let took = signalled.elapsed();
    let err = reader.join().expect("stderr");
    (code, out, err, took)
}

/// Ctrl-C stops a probe: sending stops, the answers in flight are awaited up to the
/// timeout, and the report of what was sent comes out marked partial, with status 130.
///
/// Timing: the flood sends every 50 ms from 100 ms (one window) for 30 s, and nothing
/// answers, so each request times out after 500 ms. SIGINT comes 1.5 s after the probe says
/// it is sending: about 28 requests are sent, about 10 of them still in flight. The
/// margins: at least 20 in the report (without awaiting the ones in flight there would be
/// about 18; 400 ms of slack for a slow start or a late signal), and the probe ends within
/// 3.5 s of the signal (the 500 ms timeout and 3 s of slack), far from the 30 s it would
/// run. Run 20 times in a row with the other core busy (`yes > /dev/null`): all passed.
#[test]
fn ctrl_c_stops_a_probe_with_a_partial_report_and_status_130() {
    use std::time::Duration;
    let port = silent_server();
    let target = format!("http://127.0.0.1:{port}/");
    for format in ["json", "table"] {
        let (code, out, err, took) = interrupt(
            &[
                "probe",
                "--target",
                &target,
                "--traffic",
                "flood:every=50ms,for=30s",
                "--limit",
                "2",
                "--window",
                "100ms",
                "--duration",
                "30s",
                "--timeout",
                "500ms",
                "--format",
                format,
            ],
            "ratelab probe: sending",
            &[Duration::from_millis(1_500)],
        );
        assert_eq!(code, 130, "{format}: {err}");
        assert!(took < Duration::from_millis(3_500), "{format}: {took:?}");
        assert!(err.contains("Ctrl-C"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // Off a terminal, no progress bar.
        assert!(!err.contains('\r') && !err.contains("answered"), "{err:?}");
        if format == "json" {
            let v: Value = serde_json::from_str(&out).expect("a JSON report");
            assert_eq!(v["partial"], Value::Bool(true), "{v}");
            let sent = v["sent"].as_u64().expect("sent");
            assert!((20..600).contains(&sent), "{sent} sent: {err}");
            assert_eq!(v["timeouts"], sent, "every request timed out: {v}");
            let report: ratelab::probe::ProbeReport = serde_json::from_value(v).expect("a report");
            assert_eq!(report.check(), Ok(()));
        } else {
            assert!(
                out.starts_with("PARTIAL: stopped by Ctrl-C after "),
                "{out}"
            );
            assert!(out.contains("probe of http://127.0.0.1:"), "{out}");
        }
    }
}

/// A second Ctrl-C quits at once, without waiting for the answers in flight and without a
/// report. Timing: with a 10 s timeout the first Ctrl-C would wait up to 10 s; the second,
/// 300 ms later, must end the probe within 3 s (the margin) with status 130 and nothing on
/// stdout. Run 20 times in a row with the other core busy: all passed.
#[test]
fn a_second_ctrl_c_quits_at_once_without_a_report() {
    use std::time::Duration;
    let port = silent_server();
    let target = format!("http://127.0.0.1:{port}/");
    let (code, out, err, took) = interrupt(
        &[
            "probe",
            "--target",
            &target,
            "--traffic",
            "flood:every=50ms,for=30s",
            "--limit",
            "2",
            "--window",
            "100ms",
            "--duration",
            "30s",
            "--timeout",
            "10s",
            "--format",
            "json",
        ],
        "ratelab probe: sending",
        &[Duration::from_millis(700), Duration::from_millis(300)],
    );
    assert_eq!(code, 130, "{err}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("stopped without a report"), "{err}");
}

/// A whole probe's report says it is whole; the recorded reports written before the field
/// existed read as whole, and those written since say so.
#[test]
fn a_whole_probe_is_not_partial_and_old_reports_read_as_whole() {
    let (code, out, err) = ratelab(&[
        "probe",
        "--target",
        "http://127.0.0.1:9/",
        "--traffic",
        "flood:every=20ms,for=60ms",
        "--limit",
        "20",
        "--window",
        "1s",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["partial"], Value::Bool(false));
    let mut older = 0;
    for path in shipped_reports() {
        let text = std::fs::read_to_string(&path).expect("readable");
        older += usize::from(!text.contains("\"partial\""));
        let report: ratelab::probe::ProbeReport = serde_json::from_str(&text).expect("reads");
        assert!(!report.partial, "{}", path.display());
    }
    assert!(older > 0, "no shipped report from before the field");
}

#[test]
fn study_out_is_created_and_checked_before_any_work() {
    let dir = Scratch::new("study-out");
    let file = dir.0.join("a-file");
    std::fs::write(&file, b"not a directory").expect("write");
    let below_file = file.join("sub");
    let cases = [
        (
            "/proc/nope/x".to_owned(),
            "cannot create --out directory '/proc/nope/x'",
        ),
        (file.display().to_string(), "--out directory"),
        (
            below_file.display().to_string(),
            "cannot create --out directory",
        ),
        (
            "/proc/self".to_owned(),
            "cannot write in --out directory '/proc/self'",
        ),
    ];
    for (out, needle) in cases {
        let started = std::time::Instant::now();
        let r = ratelab(&["study", "--runs", "2", "--minutes", "10", "--out", &out]);
        assert_one_safe_line(&out, &r);
        assert!(r.2.contains(needle), "{out}: {}", r.2);
        // Refused before the first job: no summary of jobs run, and at once.
        assert!(!r.2.contains("jobs"), "{out}: {}", r.2);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
    // A fresh directory is made, and holds only the study's files afterwards.
    let fresh = dir.0.join("new/deeper");
    let (code, _, err) = ratelab(&[
        "study",
        "--runs",
        "2",
        "--minutes",
        "10",
        "--only",
        "honest",
        "--out",
        fresh.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = std::fs::read_dir(&fresh)
        .expect("made")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with(".ratelab")),
        "{names:?}"
    );
    assert!(names.contains(&"REPRODUCTION.md".to_owned()), "{names:?}");
}

/// Runs `command` on a pseudo-terminal (util-linux `script`) and returns what it showed.
fn on_a_terminal(command: &str) -> String {
    let out = Command::new("script")
        .args(["-qefc", command, "/dev/null"])
        .output()
        .expect("script (util-linux) runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Progress bars draw on a terminal (and only there: the tests above check pipes get none).
#[test]
fn progress_bars_show_on_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_ratelab");
    let shown = on_a_terminal(&format!(
        "{bin} study --runs 2 --minutes 10 --format json > /dev/null"
    ));
    assert!(shown.contains(" jobs, "), "{shown:?}");
    assert!(shown.contains("elapsed"), "{shown:?}");
    assert!(shown.contains("study done"), "{shown:?}");
    // A probe of 1.5 s against a closed port: the bar shows what was sent and answered.
    let shown = on_a_terminal(&format!(
        "{bin} probe --target http://127.0.0.1:9/ --traffic flood:every=50ms,for=1500ms --limit 20 --window 1s --format json > /dev/null"
    ));
    for needle in ["sent ", "answered ", "admitted 0", "elapsed", "left"] {
        assert!(shown.contains(needle), "{needle}: {shown:?}");
    }
}

#[test]
fn a_scenario_over_the_memory_budget_is_refused_up_front_in_one_line() {
    let mut args = vec![
        "simulate",
        "--limit",
        "1000000",
        "--traffic",
        "steady:load=1",
        "--minutes",
        "1",
    ];
    for _ in 0..40 {
        args.extend(["--limiter", "fixed-window"]);
    }
    let r = ratelab(&args);
    assert_one_safe_line("40 limiters at a limit of a million", &r);
    for needle in [
        "635 MB",
        "40 limiters",
        "512 MB",
        "at most 31 such limiters",
    ] {
        assert!(r.2.contains(needle), "{needle}: {}", r.2);
    }
}

#[test]
fn queueing_delays_over_threads_are_those_of_one_thread() {
    // The runs are spread over threads, each folding its runs' delay histograms into one: the
    // quantiles are those of the core's sequential run.
    let spec = "leaky-bucket:burst=20,mode=queue";
    let v = json(&[
        "--limiter",
        spec,
        "--traffic",
        "page-loads:load=1.3",
        "--minutes",
        "60",
        "--runs",
        "7",
    ]);
    let scenario = ratelab::Scenario {
        limiters: vec![ratelab::LimiterSpec::parse(spec).expect("valid")],
        traffic: ratelab::TrafficSpec::parse("page-loads:load=1.3").expect("valid"),
        duration: 60 * ratelab::time::MINUTE,
        runs: 7,
        ..ratelab::Scenario::default()
    };
    let report = ratelab::simulate(&scenario).expect("runs");
    let r = &report.results[0];
    assert!(r.delay_p99_us.is_some_and(|d| d > 0));
    assert_eq!(v["results"][0]["delay_p50_us"].as_u64(), r.delay_p50_us);
    assert_eq!(v["results"][0]["delay_p99_us"].as_u64(), r.delay_p99_us);
}

/// The probe reports the page ships, `www/probes/*.json`: not the `*.view.json` beside each,
/// which are the page's precomputed views of them (checked by ratelab-page's probe_views test).
fn shipped_reports() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/probes");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("www/probes")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".json") && !name.ends_with(".view.json")
        })
        .collect();
    paths.sort();
    assert!(paths.len() >= 6, "{paths:?}");
    paths
}

/// A probe of several gateways: what is refused, each in one line saying what was wrong and
/// what is accepted, and what is accepted (a dry run names the gateways and the route).
#[test]
fn probe_fleet_flags_are_checked_with_one_line_each() {
    let base = [
        "probe",
        "--traffic",
        "boundary-burst",
        "--limit",
        "20",
        "--window",
        "1s",
        "--dry-run",
    ];
    let urls: Vec<String> = (0..65)
        .map(|k| format!("http://127.0.0.1:{}/", 9000 + k))
        .collect();
    let mut too_many: Vec<&str> = Vec::new();
    for url in &urls {
        too_many.extend(["--target", url.as_str()]);
    }
    let (a, b) = ("http://127.0.0.1:9001/", "http://127.0.0.1:9002/");
    let redis = "redis://127.0.0.1:6379";
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (
            too_many.clone(),
            &["65 --target URLs", "at most 64 gateways"],
        ),
        (
            vec!["--target", a, "--route", "random"],
            &[
                "--route 'random' needs several gateways",
                "--target repeated",
                "--gateways N",
            ],
        ),
        (
            vec!["--target", a, "--coord", "local"],
            &["--coord 'local' needs several gateways"],
        ),
        (
            vec!["--redis", redis, "--script", "gcra", "--route", "random"],
            &["--route 'random' needs several gateways"],
        ),
        (
            vec!["--target", a, "--target", b, "--gateways", "3"],
            &[
                "--gateways 3 with 2 --target URL(s)",
                "leave --gateways out or give as many URLs",
            ],
        ),
        (
            vec!["--target", a, "--gateways", "2"],
            &["--gateways 2 with 1 --target URL(s)"],
        ),
        (
            vec!["--target", a, "--redis", redis, "--script", "gcra"],
            &["--target URL", "--redis URL", "not both"],
        ),
        (
            vec!["--target", a, "--target", b, "--redis", redis],
            &["not both"],
        ),
        (
            vec![
                "--redis",
                redis,
                "--script",
                "sorted-set",
                "--gateways",
                "65",
            ],
            &["--gateways", "65", "1 to 64"],
        ),
        (
            vec![
                "--redis",
                redis,
                "--script",
                "sorted-set",
                "--gateways",
                "0",
            ],
            &["--gateways", "1 to 64"],
        ),
        (
            vec!["--target", a, "--target", b, "--route", "hot"],
            &["route", "'hot'", "round-robin, random, skewed:hot=X"],
        ),
        (
            vec!["--target", a, "--target", b, "--coord", "local"],
            &[
                "--coord 'local' is the model fleet's coordination",
                "--model SPEC",
            ],
        ),
        (
            vec![
                "--target",
                a,
                "--target",
                b,
                "--model",
                "nginx:rate=20r/s,burst=5,nodelay",
                "--coord",
                "everywhere",
            ],
            &["coordination", "'everywhere'", "central"],
        ),
        // A fleet model is refused where the core refuses it (a queueing nginx).
        (
            vec![
                "--target",
                a,
                "--target",
                b,
                "--model",
                "nginx:rate=20r/s,burst=5",
            ],
            &["with --gateways", "nodelay"],
        ),
        (
            vec!["--target", a, "--target", "https://127.0.0.1/"],
            &["https://127.0.0.1/", "http://"],
        ),
        (
            vec!["--target", a, "--target", "http://10.1.2.3/"],
            &["10.1.2.3", "not a loopback address"],
        ),
    ];
    for (extra, wanted) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let r = ratelab(&args);
        let what = format!("{:?}", &extra[..extra.len().min(8)]);
        assert_one_safe_line(&what, &r);
        for w in wanted {
            assert!(r.2.contains(w), "{what}: '{w}' not in {}", r.2);
        }
    }
    // Accepted: 64 targets, three with a route and a model fleet, Redis over three
    // connections (central by default), and `--gateways` equal to the targets given.
    let mut most = base.to_vec();
    most.extend_from_slice(&too_many[..128]);
    let accepted: Vec<(Vec<&str>, &str)> = vec![
        (most, "64 gateways, --route round-robin"),
        (
            vec![
                "--target",
                a,
                "--target",
                b,
                "--target",
                "http://127.0.0.1:9003/",
                "--route",
                "skewed:hot=0.5",
                "--model",
                "nginx:rate=20r/s,burst=5,nodelay",
                "--coord",
                "local",
            ],
            "3 gateways, --route skewed:hot=0.5: http://127.0.0.1:9001/, http://127.0.0.1:9002/, http://127.0.0.1:9003/",
        ),
        (
            vec!["--redis", redis, "--script", "sorted-set", "--gateways", "3"],
            "3 gateways, --route round-robin: redis://127.0.0.1:6379 (script sorted-set) over 3 connections",
        ),
        (vec!["--target", a, "--target", b, "--gateways", "2"], "2 gateways"),
        (vec!["--target", a, "--gateways", "1"], "to http://127.0.0.1:9001/,"),
    ];
    for (extra, wanted) in accepted {
        let mut args = if extra.len() > 100 {
            extra.clone()
        } else {
            base.to_vec()
        };
        if extra.len() <= 100 {
            args.extend_from_slice(&extra);
        }
        let (code, out, err) = ratelab(&args);
        let what = format!("{:?}", &extra[..extra.len().min(8)]);
        assert_eq!(code, 0, "{what}: {err}");
        assert!(out.is_empty(), "{what}: {out}");
        assert!(err.contains("would send"), "{what}: {err}");
        assert!(err.contains(wanted), "{what}: '{wanted}' not in {err}");
    }
}

#[test]
fn only_a_fleet_adds_its_keys_to_the_json() {
    let base = [
        "--limiter",
        "gcra",
        "--traffic",
        "boundary-burst",
        "--minutes",
        "1",
    ];
    let plain = json(&base);
    assert!(plain["scenario"].get("fleet").is_none(), "{plain}");
    assert!(
        plain["results"][0].get("room_instants").is_none(),
        "{plain}"
    );
    assert!(plain["results"][0].get("gateways").is_none(), "{plain}");
    let mut args = base.to_vec();
    args.extend(["--gateways", "3", "--coord", "local"]);
    let fleet = json(&args);
    assert_eq!(
        fleet["scenario"]["fleet"],
        serde_json::json!({"gateways": 3, "route": "round-robin", "coord": "local"})
    );
    let r = &fleet["results"][0];
    let gateways = r["gateways"].as_array().expect("a gateways array");
    assert_eq!(gateways.len(), 3);
    let sum = |key: &str| {
        gateways
            .iter()
            .map(|g| g[key].as_u64().expect(key))
            .sum::<u64>()
    };
    assert_eq!(sum("offered"), r["offered"].as_u64().expect("offered"));
    assert_eq!(sum("admitted"), r["admitted"].as_u64().expect("admitted"));
    assert!(r["room_instants"].as_u64().is_some(), "{r}");
}

/// What a new user tries outside the beaten path of fleets and clients gets one line naming
/// the part, with what is accepted or the nearest value: never a panic, a memory size for a
/// duration, a silent rounding, or the study written into the current folder.
#[test]
fn fleets_and_clients_out_of_range_are_refused_by_name() {
    let sim = |extra: &[&str]| {
        let mut args = vec!["simulate", "--limiter", "sliding-log", "--minutes", "1"];
        args.extend_from_slice(extra);
        ratelab(&args)
    };
    for (extra, needles) in [
        (
            &[
                "--gateways",
                "2",
                "--coord",
                "central:rtt=9223372036854775808us",
            ][..],
            &["coord central: rtt", "285 years"][..],
        ),
        (
            &[
                "--gateways",
                "2",
                "--coord",
                "sync:every=1s,delay=9007199254740s",
            ],
            &["coord sync: delay", "285 years"],
        ),
        (
            &[
                "--gateways",
                "2",
                "--coord",
                "central:outage=300000000h+1s,fail=open",
            ],
            &["coord central: outage", "285 years"],
        ),
        (
            &["--gateways", "2", "--route", "skewed:hot=0.12345678"],
            &["route skewed: hot", "millionths", "nearest is 0.123457"],
        ),
        (
            &["--traffic", "retry:retry-after=honour,at=30s"],
            &["retry-after", "did you mean 'honor'?"],
        ),
        (
            &["--traffic", "retry:policy=exponentail,at=30s"],
            &["policy", "did you mean 'exponential'?"],
        ),
        (
            &["--traffic", "retry:jitter=ful,at=30s"],
            &["jitter", "did you mean 'full'?"],
        ),
    ] {
        let r = sim(extra);
        assert_one_safe_line(&extra.join(" "), &r);
        for n in needles {
            assert!(r.2.contains(n), "{extra:?}: {n} in {}", r.2);
        }
        assert!(
            !r.2.contains(" TB") && !r.2.contains(" GB"),
            "{extra:?}: {}",
            r.2
        );
    }
    // What a retrying client keeps is named, with parts that are its own.
    for (extra, needles) in [
        (
            &[
                "--traffic",
                "retry:spike=200000,tries=1000,every=1ms,at=30s",
            ][..],
            &[
                "the tries of the busiest second",
                "one client",
                "a longer gap",
            ][..],
        ),
        (
            &["--traffic", "retry:clients=100,spike=100000,at=30s"],
            &[
                "in pending retries: 100 clients, each up to 100027",
                "fewer clients",
            ],
        ),
        (
            &["--traffic", "retry"],
            &[
                "retry: at",
                "when at= is not given it is 5min",
                "like at=30s",
            ],
        ),
        (
            &["--traffic", "retry:rate=1000000/1ms,at=30s"],
            &["tries", "fewer runs, minutes, clients or tries"],
        ),
        (
            &["--gateways", "3", "--coord", "split", "--traffic", "steady"],
            &["divides the limit 100 (each gateway gets L/N)"],
        ),
    ] {
        let r = sim(extra);
        assert_one_safe_line(&extra.join(" "), &r);
        for n in needles {
            assert!(r.2.contains(n), "{extra:?}: {n} in {}", r.2);
        }
    }
    let r = ratelab(&["study", "--out", ""]);
    assert_one_safe_line("study --out ''", &r);
    assert!(r.2.contains("--out"), "{}", r.2);
    // Runs that once were refused for memory they never use now run.
    for extra in [
        &[
            "--limit",
            "1000000",
            "--traffic",
            "steady:load=0.5",
            "--gateways",
            "32",
            "--coord",
            "split",
        ][..],
        &[
            "--traffic",
            "steady",
            "--gateways",
            "4",
            "--coord",
            "sync:every=1000h",
        ],
        &[
            "--limit",
            "100",
            "--traffic",
            "steady",
            "--gateways",
            "4",
            "--coord",
            "lease:size=10000000",
        ],
        &[
            "--traffic",
            "steady",
            "--gateways",
            "4",
            "--coord",
            "sync:every=1s,delay=100000h",
        ],
    ] {
        let r = sim(extra);
        assert_eq!(r.0, 0, "{extra:?}: {}", r.2);
    }
    // One limiter is one limiter.
    let mut args = vec![
        "simulate",
        "--limit",
        "1000000",
        "--window",
        "24h",
        "--minutes",
        "30000",
        "--traffic",
        "steady:load=3",
    ];
    args.extend(["--limiter", "sliding-log", "--gateways", "64"]);
    let r = ratelab(&args);
    assert_one_safe_line("a fleet too large", &r);
    assert!(
        r.2.contains("one limiter") && r.2.contains("fewer gateways"),
        "{}",
        r.2
    );
    assert!(!r.2.contains("1 limiters"), "{}", r.2);
}

/// Every file of `dir`, by name, with its bytes.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.expect("entry");
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).expect("readable"))
        })
        .collect();
    v.sort();
    v
}

/// A study split into N shards (each computed by its own command into its own folder, as an
/// array job's tasks would) and merged writes every file byte for byte as one run does, for
/// N = 1, 2, 3 and 7; a merge missing a shard, holding one twice or mixing two studies is
/// refused by name, before anything is written.
#[test]
fn a_study_sharded_and_merged_is_the_unsharded_study_byte_for_byte() {
    let base = std::env::temp_dir().join(format!("ratelab-shards-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let path = |p: &std::path::Path| p.to_str().expect("utf-8 path").to_owned();
    let size = ["--runs", "2", "--minutes", "10"];
    let whole = base.join("whole");
    let mut args = vec!["study", "--out"];
    let w = path(&whole);
    args.push(&w);
    args.extend_from_slice(&size);
    let (code, _, err) = ratelab(&args);
    assert_eq!(code, 0, "{err}");
    let expected = files(&whole);
    assert!(expected.len() > 10, "{} files", expected.len());
    for n in [1u32, 2, 3, 7] {
        let mut dirs = Vec::new();
        for k in 1..=n {
            let dir = path(&base.join(format!("n{n}-k{k}")));
            let part = format!("{k}/{n}");
            let mut args = vec!["study", "--shard", &part, "--out", &dir];
            args.extend_from_slice(&size);
            let (code, out, err) = ratelab(&args);
            assert_eq!(code, 0, "{part}: {err}");
            assert!(out.is_empty(), "a shard prints nothing on stdout: {out}");
            assert!(err.contains(&format!("shard {k} of {n}")), "{err}");
            dirs.push(dir);
        }
        let merged = path(&base.join(format!("merged-{n}")));
        let mut args = vec!["study", "--merge"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend_from_slice(&["--out", &merged]);
        let (code, _, err) = ratelab(&args);
        assert_eq!(code, 0, "N = {n}: {err}");
        let got = files(std::path::Path::new(&merged));
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&got), names(&expected), "N = {n}: the files");
        for ((name, a), (_, b)) in got.iter().zip(&expected) {
            assert!(a == b, "N = {n}: {name} differs from the unsharded study's");
        }
    }
    // Refusals, each naming the problem; the folder to write is not created.
    let refused = path(&base.join("refused"));
    let d = |s: &str| path(&base.join(s));
    let (n3k1, n3k2, n2k1) = (d("n3-k1"), d("n3-k2"), d("n2-k1"));
    for (dirs, says) in [
        (vec![n3k1.clone(), n3k2.clone()], "shard 3 of 3 is missing"),
        (vec![n3k1.clone(), n3k1.clone()], "appears twice"),
        (vec![n3k1.clone(), n2k1.clone()], "number of shards"),
    ] {
        let mut args = vec!["study", "--merge"];
        args.extend(dirs.iter().map(String::as_str));
        args.extend_from_slice(&["--out", &refused]);
        let (code, _, err) = ratelab(&args);
        assert_eq!(code, 2, "{dirs:?}: {err}");
        assert!(err.contains(says), "{dirs:?}: {err}");
        assert!(
            !std::path::Path::new(&refused).exists(),
            "{dirs:?}: wrote {refused}"
        );
    }
    // Shards of another seed are another study.
    let other = d("other");
    let (code, _, err) = ratelab(&[
        "study",
        "--shard",
        "2/2",
        "--out",
        &other,
        "--runs",
        "2",
        "--minutes",
        "10",
        "--seed",
        "9",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = ratelab(&["study", "--merge", &n2k1, &other, "--out", &refused]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not of the same study") && err.contains("--seed 9"),
        "{err}"
    );
    // The size is the shards': a flag that says otherwise is refused, not ignored.
    let (code, _, err) = ratelab(&["study", "--merge", &n2k1, "--runs", "5", "--out", &refused]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--runs belongs on the --shard commands"),
        "{err}"
    );
    let (code, _, err) = ratelab(&["study", "--shard", "0/3", "--out", &refused]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nearest valid: 1/3"), "{err}");
    let _ = std::fs::remove_dir_all(&base);
}
