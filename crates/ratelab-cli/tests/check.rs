//! `ratelab check`: configurations as users paste them, read from a file or standard input,
//! and what the command says of them, as text and as JSON.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `ratelab ARGS` with `input` on standard input: (status, stdout, stderr).
fn ratelab(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ratelab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ratelab runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("written");
    let out = child.wait_with_output().expect("ratelab ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).expect("UTF-8"),
        String::from_utf8(out.stderr).expect("UTF-8"),
    )
}

const NGINX: &str = "http {\n    # ten a second per address, bursts of five\n    limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s;\n    server {\n        listen 8080;\n        location /api/ {\n            limit_req zone=api burst=5 nodelay;\n            limit_req_status 429;\n            proxy_pass http://app;\n        }\n    }\n}\n";

const HAPROXY: &str = "frontend web\n    bind :8080\n    stick-table type ip size 100k expire 30s store http_req_rate(10s)\n    http-request track-sc0 src\n    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 }\n    default_backend app\n";

#[test]
fn an_nginx_config_from_standard_input_gives_its_limiter_and_worst_window_as_json() {
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], NGINX);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["limiter"], "nginx:rate=10r/s,burst=5,nodelay");
    assert_eq!(v["window_us"], 1_000_000);
    // The burst and the request over it at once, then ten leaked in the second.
    assert_eq!(v["worst_window"], 16);
    assert_eq!(v["worst_found"], 16);
    let sent: u64 = v["worst_arrivals"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i["count"].as_u64().expect("a count"))
        .sum();
    assert_eq!(sent, 16);
    // The spec it gives is one simulate takes.
    let (code, _, err) = ratelab(
        &[
            "simulate",
            "--limiter",
            v["limiter"].as_str().expect("text"),
            "--traffic",
            "boundary-burst",
            "--limit",
            "10",
            "--window",
            "1s",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_file_and_a_longer_window_and_instances_add_up() {
    let dir = std::env::temp_dir().join(format!("ratelab-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("haproxy.cfg");
    std::fs::write(&file, HAPROXY).expect("written");
    let path = file.to_str().expect("UTF-8 path");
    let (code, out, err) = ratelab(
        &[
            "check",
            path,
            "--window",
            "1min",
            "--instances",
            "4",
            "--format",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["limiter"],
        "haproxy:period=10s,limit=20,record-rejects=true"
    );
    assert_eq!(v["window_us"], 60_000_000);
    let worst = v["worst_window"].as_u64().expect("a count");
    assert!(
        worst >= 20 * 6,
        "a minute holds at least six periods' limits: {worst}"
    );
    assert_eq!(v["instances_worst"].as_u64(), Some(4 * worst));
    assert!(v["worst_found"].as_u64().expect("a count") <= worst);
    let (code, text, _) = ratelab(&["check", path], "");
    assert_eq!(code, 0);
    assert!(
        text.contains("haproxy (line 5)")
            && text.contains("at most")
            && text.contains("Retry-After"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn what_is_not_understood_exits_2_naming_the_line_and_what_is_accepted() {
    let bad = NGINX.replace("rate=10r/s", "rate=10r/h");
    let (code, out, err) = ratelab(&["check", "-"], &bad);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("line 3") && err.contains("10r/h") && err.contains("r/s"),
        "{err}"
    );
    let (code, _, err) = ratelab(&["check", "-"], "server { listen 80; }\n");
    assert_eq!(code, 2);
    assert!(
        err.contains("limit_req_zone") && err.contains("stick-table"),
        "{err}"
    );
    let (code, _, err) = ratelab(&["check", "-", "--window", "48h"], NGINX);
    assert_eq!(code, 2);
    assert!(err.contains("--window") && err.contains("24h"), "{err}");
    let (code, _, err) = ratelab(&["check", "/nonexistent/nginx.conf"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read") && err.contains("nginx.conf"),
        "{err}"
    );
}

const EXPRESS: &str = "import { rateLimit } from 'express-rate-limit'\n\nconst limiter = rateLimit({\n\twindowMs: 15 * 60 * 1000, // 15 minutes\n\tlimit: 100, // Limit each IP to 100 requests per `window` (here, per 15 minutes).\n\tstandardHeaders: 'draft-8',\n\tlegacyHeaders: false, // Disable the `X-RateLimit-*` headers.\n})\n\napp.use(limiter)\n";

#[test]
fn express_rate_limit_and_rate_limiter_flexible_as_their_readmes_write_them() {
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], EXPRESS);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["limiter"],
        "express-rate-limit:limit=100,window-ms=900000"
    );
    assert_eq!(v["window_us"], 900_000_000_u64);
    // The window opens at a key's first request: the last 99 of one window and the 100 that
    // open the next, and the opener too when it came late in its millisecond.
    assert_eq!(v["worst_window"], 200);
    assert_eq!(v["worst_found"], 200);
    assert!(
        v["retry_after"]
            .as_str()
            .expect("text")
            .contains("admitted after every one"),
        "{v}"
    );
    let quiet = EXPRESS.replace("'draft-8'", "false");
    let (_, out, _) = ratelab(&["check", "-", "--format", "json"], &quiet);
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert!(
        v["retry_after"].as_str().expect("text").starts_with("none"),
        "{v}"
    );
    let flexible = "const { RateLimiterMemory } = require('rate-limiter-flexible');\nconst rateLimiter = new RateLimiterMemory({\n  points: 6, // 6 points\n  duration: 1, // Per second\n});\n";
    let (code, out, err) = ratelab(
        &["check", "-", "--format", "json", "--window", "10s"],
        flexible,
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["limiter"],
        "rate-limiter-flexible:points=6,duration=1.000"
    );
    assert_eq!(v["worst_window"], 66);
    // The spec is one simulate takes, and its bound is the check's.
    let (code, out, err) = ratelab(
        &[
            "simulate",
            "--limiter",
            "rate-limiter-flexible:points=6,duration=1.000",
            "--traffic",
            "boundary-burst",
            "--limit",
            "6",
            "--window",
            "10s",
            "--format",
            "json",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(s["results"][0]["bound"], 66);
}

#[test]
fn a_go_limiter_as_go_code_writes_it() {
    let go = "package main\n\nimport (\n\t\"time\"\n\t\"golang.org/x/time/rate\"\n)\n\n// ten a second, bursts of five\nvar limiter = rate.NewLimiter(rate.Every(100*time.Millisecond), 5)\n";
    let (code, out, err) = ratelab(&["check", "-", "--window", "1s", "--format", "json"], go);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["limiter"], "go-rate:every=100ms,b=5");
    // The burst, then one each 100 ms: nine more within a second of the burst.
    assert_eq!(v["worst_window"], 14);
    assert_eq!(v["worst_found"], 14);
    let (code, _, err) = ratelab(&["check", "-"], "l := rate.NewLimiter(rate.Every(d), 5)\n");
    assert_eq!(code, 2);
    assert!(
        err.contains("line 1") && err.contains("rate.Every"),
        "{err}"
    );
}

#[test]
fn redis_cells_throttle_and_its_retry_after_that_comes_too_early() {
    let (code, out, err) = ratelab(
        &["check", "-", "--format", "json"],
        "127.0.0.1:6379> CL.THROTTLE user123 3 30 60\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["limiter"], "redis-cell:max-burst=3,count=30,period=60");
    // Four at once, then one every two seconds: 29 more within the minute.
    assert_eq!(v["worst_window"], 33);
    assert_eq!(v["worst_found"], 33);
    // Its retry_after is truncated to whole seconds: waiting that long is often refused.
    let ra = v["retry_after"].as_str().expect("text");
    assert!(ra.contains("too early") && ra.contains("truncated"), "{ra}");
    // The counts behind the sentence: over a flood meeting every phase of a second, a wait
    // truncated to whole seconds is short every time.
    let counts = &v["retry_after_counts"];
    assert!(
        counts["rejections"].as_u64().expect("a count") > 100,
        "{counts}"
    );
    assert_eq!(counts["early"], counts["rejections"], "{counts}");
    assert!(
        counts["longest_early_us"].as_u64().expect("µs") < 1_000_000,
        "{counts}"
    );
}

#[test]
fn a_vcl_with_vsthrottle_promises_nearly_twice_its_limit() {
    let vcl = "vcl 4.1;\nimport vsthrottle;\n\nsub vcl_recv {\n    # 15 requests per 10 seconds per client\n    if (vsthrottle.is_denied(client.identity, 15, 10s)) {\n        return (synth(429, \"Too Many Requests\"));\n    }\n}\n";
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], vcl);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["limiter"], "vsthrottle:limit=15,period=10s");
    // A full bucket of 15, then one a token's time apart: 2L - 1 in ten seconds.
    assert_eq!(v["worst_window"], 29);
    assert_eq!(v["worst_found"], 29);
    assert!(
        v["retry_after"]
            .as_str()
            .expect("text")
            .contains("no Retry-After"),
        "{v}"
    );
    assert!(v["retry_after_counts"].is_null(), "{v}");
}

#[test]
fn python_limits_under_flask_limiter_each_rate_string_a_limiter_of_its_own() {
    let app = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/examples/flask_app.py"
    ))
    .expect("the example");
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], &app);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    let all = v.as_array().expect("one report per rate string");
    let specs: Vec<&str> = all
        .iter()
        .map(|c| c["limiter"].as_str().expect("spec"))
        .collect();
    assert_eq!(
        specs,
        [
            "limits:rate=200/day,strategy=moving-window",
            "limits:rate=50/hour,strategy=moving-window",
            "limits:rate=1/day,strategy=moving-window",
            "limits:rate=5/minute,strategy=moving-window",
        ]
    );
    for c in all {
        // The moving window's log holds the literal rule: L, reached at one instant.
        let limit = c["configured_in_window"].as_f64().expect("a number");
        assert_eq!(c["worst_window"].as_f64(), Some(limit), "{c}");
        assert_eq!(c["reached"], true, "{c}");
        // Headers on: Flask-Limiter's truncated Retry-After sends some clients back early.
        let ra = c["retry_after"].as_str().expect("text");
        assert!(
            ra.contains("Flask-Limiter") && ra.contains("too early"),
            "{ra}"
        );
        let early = c["retry_after_counts"]["early"].as_u64().expect("a count");
        let all = c["retry_after_counts"]["rejections"]
            .as_u64()
            .expect("a count");
        assert!(early > 0 && early < all, "{c}");
    }
}

#[test]
fn python_limits_fixed_window_and_counter_pass_nearly_twice_their_limit() {
    let fixed = "from limits import storage, strategies, parse\n\
                 limiter = strategies.FixedWindowRateLimiter(storage.MemoryStorage())\n\
                 ten = parse(\"10 per minute\")\n";
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], fixed);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["limiter"], "limits:rate=10/minute,strategy=fixed-window");
    assert_eq!(v["line"], 3);
    // One hit opens the window, nine come just before its end, ten as the next opens.
    assert_eq!(v["worst_window"], 19);
    assert_eq!(v["worst_found"], 19);
    let ra = v["retry_after"].as_str().expect("text");
    assert!(
        ra.starts_with("none") && ra.contains("RATELIMIT_HEADERS_ENABLED"),
        "{ra}"
    );
    let counter = "app.config['RATELIMIT_STRATEGY'] = 'sliding-window-counter'\n\
                   limiter = Limiter(get_remote_address, app=app, default_limits=['10/minute'])\n";
    let (code, out, err) = ratelab(&["check", "-", "--format", "json"], counter);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["limiter"],
        "limits:rate=10/minute,strategy=sliding-window-counter"
    );
    assert_eq!(v["worst_window"], 20);
    assert_eq!(v["worst_found"], 20);
}

#[test]
fn a_rate_string_limits_would_refuse_exits_2_naming_its_line() {
    let (code, _, err) = ratelab(
        &["check", "-"],
        "from slowapi import Limiter\n\n@limiter.limit(\"5/min\")\nasync def home(request): ...\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 3") && err.contains("5/min"), "{err}");
    assert!(err.contains("second, minute, hour"), "{err}");
}
