//! The importer's tests: every format, every malformed line and whole-file error, and the
//! same result however a file is split into chunks.

use super::iso::{days_from_civil, days_in_month};
use super::reason::Reason;
use super::scan::{find_either, find_newline};
use super::stream::{BAD_TEXT_CHARS, MAX_LINE};
use super::*;
use proptest::prelude::*;
use serde::de::value::Error as DeError;
use serde::de::IntoDeserializer;

const S: u64 = 1_000_000;

fn opts(format: Format) -> ImportOptions {
    ImportOptions {
        format,
        filter: None,
    }
}

fn filtered(field: Field, value: &str) -> ImportOptions {
    ImportOptions {
        format: Format::Auto,
        filter: Some(Filter {
            field,
            value: value.into(),
        }),
    }
}

fn ok(text: &str, options: ImportOptions) -> Imported {
    parse(text.as_bytes(), options).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn err(bytes: &[u8], options: ImportOptions) -> String {
    match parse(bytes, options) {
        Ok(i) => panic!("{bytes:?} imported: {i:?}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "not one line: {msg}");
            msg
        }
    }
}

/// Local date and time parts of `t` µs shifted by `offset` seconds.
fn civil(t: Micros, offset: i64) -> (i64, u32, u32, u64, u64, u64, u64) {
    let local = (t / S) as i64 + offset;
    let (y, m, d) = civil_from_days(local.div_euclid(86_400));
    let s = local.rem_euclid(86_400) as u64;
    (y, m, d, s / 3600, s / 60 % 60, s % 60, t % S)
}

fn zone(offset: i64, style: u8) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let (h, m) = (offset.abs() / 3600, offset.abs() / 60 % 60);
    match style % 4 {
        0 if offset == 0 => "Z".into(),
        3 if m == 0 => format!("{sign}{h:02}"),
        2 => format!("{sign}{h:02}{m:02}"),
        _ => format!("{sign}{h:02}:{m:02}"),
    }
}

fn iso(t: Micros, offset: i64, style: u8) -> String {
    let (y, mo, d, h, mi, s, us) = civil(t, offset);
    let sep = if style & 4 == 0 { 'T' } else { ' ' };
    format!(
        "{y:04}-{mo:02}-{d:02}{sep}{h:02}:{mi:02}:{s:02}.{us:06}{}",
        zone(offset, style)
    )
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn clf(t: Micros, offset: i64) -> String {
    let (y, mo, d, h, mi, s, _) = civil(t, offset);
    let sign = if offset < 0 { '-' } else { '+' };
    let (zh, zm) = (offset.abs() / 3600, offset.abs() / 60 % 60);
    format!(
        "{d:02}/{}/{y:04}:{h:02}:{mi:02}:{s:02} {sign}{zh:02}{zm:02}",
        MONTHS[mo as usize - 1]
    )
}

fn log_line(host: &str, time: &str, request: &str, status: u16, agent: &str) -> String {
    format!("{host} - - [{time}] \"{request}\" {status} 512 \"-\" \"{agent}\"\n")
}

#[test]
fn format_and_field_names_round_trip() {
    for f in FORMATS {
        assert_eq!(Format::from_name(f.name()), Ok(f));
        assert_eq!(
            Format::deserialize(f.name().into_deserializer()),
            Ok::<_, DeError>(f)
        );
    }
    for f in FIELDS {
        assert_eq!(Field::from_name(f.name()), Ok(f));
        assert_eq!(
            Field::deserialize(f.name().into_deserializer()),
            Ok::<_, DeError>(f)
        );
    }
    let e = Format::from_name("csv").expect_err("csv").to_string();
    assert!(e.contains("csv") && e.contains("access-log"), "{e}");
    let e = Field::from_name("agent").expect_err("agent").to_string();
    assert!(e.contains("agent") && e.contains("user-agent"), "{e}");
}

#[test]
fn seconds_exact_to_the_microsecond() {
    let i = ok(
        "1700000000.25\n1700000000\n0.5\n1700000000.1234567\n.5\n7.\n1700000000.000001\n",
        opts(Format::Auto),
    );
    assert_eq!(i.format, Format::Seconds);
    let mut want = vec![
        1_700_000_000 * S + 250_000,
        1_700_000_000 * S,
        500_000,
        1_700_000_000 * S + 123_456,
        500_000,
        7 * S,
        1_700_000_000 * S + 1,
    ];
    want.sort_unstable();
    assert_eq!(i.times, want);
    assert!(i.counts.reordered);
    assert_eq!(
        (i.counts.lines, i.counts.malformed, i.counts.blank),
        (7, 0, 0)
    );
    // Exactness where a float would round: 0.1 + 0.2 style fractions.
    let i = ok("0.3\n0.7\n9007199254.740993\n", opts(Format::Seconds));
    assert_eq!(i.times, [300_000, 700_000, 9_007_199_254_740_993]);
    assert!(!i.counts.reordered);
}

#[test]
fn millis_detected_from_the_size_and_exact() {
    let i = ok("1700000000123\n1700000000123.4567\n", opts(Format::Auto));
    assert_eq!(i.format, Format::Millis);
    assert_eq!(i.times, [1_700_000_000_123_000, 1_700_000_000_123_456]);
    // Just below 10^11 is still seconds; 10^11 itself is milliseconds.
    assert_eq!(
        ok("99999999999\n", opts(Format::Auto)).format,
        Format::Seconds
    );
    assert_eq!(
        ok("100000000000\n", opts(Format::Auto)).format,
        Format::Millis
    );
    // Explicit formats are not second-guessed.
    assert_eq!(ok("5\n", opts(Format::Millis)).times, [5_000]);
    assert_eq!(
        ok("1\n1700000000123\n", opts(Format::Seconds))
            .counts
            .malformed,
        1
    );
}

#[test]
fn iso_with_zones_fractions_and_either_separator() {
    let base = 1_700_000_000 * S; // 2023-11-14T22:13:20Z
    let cases = [
        ("2023-11-14T22:13:20Z", base),
        ("2023-11-14t22:13:20z", base),
        ("2023-11-14 22:13:20", base),
        ("2023-11-14T22:13:20.5Z", base + 500_000),
        ("2023-11-14T22:13:20.1234569Z", base + 123_456),
        ("2023-11-15T00:13:20+02:00", base),
        ("2023-11-15T00:13:20+0200", base),
        ("2023-11-15T00:13:20+02", base),
        ("2023-11-14T16:43:20-05:30", base),
        ("2023-11-14T16:43:20.000001-0530", base + 1),
    ];
    let text: String = cases.iter().map(|(l, _)| format!("{l}\r\n")).collect();
    let i = ok(&text, opts(Format::Auto));
    assert_eq!(i.format, Format::Iso8601);
    let mut want: Vec<_> = cases.iter().map(|c| c.1).collect();
    want.sort_unstable();
    assert_eq!(i.times, want, "{:?}", i.counts.first_malformed);
    // Leap day, and the first second.
    assert_eq!(
        ok("2024-02-29T00:00:00Z\n", opts(Format::Iso8601)).times,
        [(19_782 * 86_400) * S]
    );
    assert_eq!(
        ok("1970-01-01T00:00:00Z\n", opts(Format::Iso8601)).times,
        [0]
    );
}

#[test]
fn iso_rejects_impossible_dates_and_times_with_a_reason() {
    let cases = [
        ("2023-02-29T00:00:00Z", "no such date"),
        ("2023-02-30T00:00:00Z", "no such date"),
        ("2023-13-01T00:00:00Z", "no such date"),
        ("2023-00-10T00:00:00Z", "no such date"),
        ("2023-04-31T00:00:00Z", "no such date"),
        ("2023-04-00T00:00:00Z", "no such date"),
        ("2023-04-01T24:00:00Z", "no such time"),
        ("2023-04-01T23:60:00Z", "no such time"),
        ("2023-04-01T23:59:60Z", "no such time"),
        ("2023-04-01T23:59:59+24:00", "bad time zone"),
        ("2023-04-01T23:59:59+01:60", "bad time zone"),
        ("2023-04-01T23:59:59+1", "bad time zone"),
        ("2023-04-01T23:59:59+01:0", "bad time zone"),
        ("2023-04-01T23:59:59.Z", "not an ISO 8601"),
        ("2023-04-01T23:59", "not an ISO 8601"),
        ("2023-04-01", "not an ISO 8601"),
        ("2023-04-01X23:59:59", "not an ISO 8601"),
        ("2023-04-01T23:59:59Zjunk", "not an ISO 8601"),
        ("1969-12-31T23:59:59Z", "year out of range"),
        ("1970-01-01T00:30:00+01:00", "before 1970"),
        ("9999-12-31T23:59:59-01:00", "after the year 9999"),
    ];
    let text: String = cases.iter().map(|(l, _)| format!("{l}\n")).collect();
    let mut importer = Importer::new(opts(Format::Iso8601));
    importer.feed(text.as_bytes()).expect("feeds");
    importer.feed(b"2023-04-01T00:00:00Z\n").expect("feeds");
    let i = importer.finish().expect("one valid line");
    assert_eq!(i.counts.malformed, cases.len() as u64);
    assert_eq!(i.times.len(), 1);
    for (n, (line, reason)) in cases.iter().enumerate() {
        let mut one = Importer::new(opts(Format::Iso8601));
        one.feed(format!("{line}\n2023-04-01T00:00:00Z\n").as_bytes())
            .expect("feeds");
        let bad = &one.finish().expect("valid").counts.first_malformed[0];
        assert_eq!(bad.line, 1);
        assert_eq!(&bad.text, line);
        assert!(bad.reason.contains(reason), "{n} {line}: {}", bad.reason);
        assert!(bad.reason.contains("expected"), "{}", bad.reason);
    }
    // Only the first five are kept.
    assert_eq!(i.counts.first_malformed.len(), 5);
    assert_eq!(i.counts.first_malformed[4].line, 5);
}

#[test]
fn a_long_run_of_signs_is_one_malformed_line() {
    let text = format!("{}5\n1\n", "-".repeat(60_000));
    let i = ok(&text, opts(Format::Seconds));
    assert_eq!((i.times.len(), i.counts.malformed), (1, 1));
    assert!(i.counts.first_malformed[0].reason.contains("not a number"));
    assert_eq!(
        ok("-5\n1\n", opts(Format::Millis)).counts.first_malformed[0].reason,
        Reason::Negative.message()
    );
}

#[test]
fn before_1970_and_negative_numbers_are_malformed() {
    let i = ok("-5\n-0.5\n-1700000000123\n12\n", opts(Format::Auto));
    assert_eq!(i.format, Format::Seconds);
    assert_eq!(i.times, [12 * S]);
    assert_eq!(i.counts.malformed, 3);
    for bad in &i.counts.first_malformed {
        assert!(bad.reason.contains("negative"), "{bad:?}");
    }
    let i = ok(
        "10\n99999999999999999999999\n253402300800\n253402300799.999999\n",
        opts(Format::Seconds),
    );
    assert_eq!(i.times, [10 * S, END_US - 1]);
    assert!(i.counts.first_malformed[0]
        .reason
        .contains("after the year 9999"));
    assert_eq!(i.counts.malformed, 2);
}

const APACHE: &str =
    "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif HTTP/1.0\" 200 2326";

#[test]
fn access_logs_common_and_combined() {
    // The example of Apache's documentation: 2000-10-10T20:55:36Z.
    let want = (days_from_civil(2000, 10, 10) * 86_400 + 20 * 3600 + 55 * 60 + 36) as u64 * S;
    assert_eq!(want, 971_211_336 * S);
    let text = format!(
        "{APACHE}\n{APACHE} \"http://www.example.com/start.html\" \"Mozilla/4.08 [en] (Win98; I ;Nav)\"\n\
         10.0.0.2 - - [10/Oct/2000:20:55:37 +0000] \"GET /x HTTP/1.1\" 304 - \"-\" \"curl/8.0\" \"1.2.3.4\" 0.003\n"
    );
    let i = ok(&text, opts(Format::Auto));
    assert_eq!(i.format, Format::AccessLog);
    assert_eq!(
        i.times,
        [want, want, want + S],
        "{:?}",
        i.counts.first_malformed
    );
    let bad = [
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 20 2326",
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 12a",
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0 200 2326",
        "127.0.0.1 - frank [10/Foo/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
        "127.0.0.1 - frank [31/Nov/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0760] \"GET / HTTP/1.0\" 200 2326",
        "127.0.0.1 - frank [10/Oct/2000:13:55:36] \"GET / HTTP/1.0\" 200 2326",
        "127.0.0.1 frank [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2326",
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] GET / 200 2326",
        "1700000000",
    ];
    let reasons = [
        "bad status",
        "bad response size",
        "not closed",
        "bad access-log time",
        "no such date",
        "bad time zone",
        "bad access-log time",
        "not an access-log line",
        "not an access-log line",
        "not an access-log line",
    ];
    for (line, reason) in bad.iter().zip(reasons) {
        let i = ok(&format!("{APACHE}\n{line}\n"), opts(Format::Auto));
        assert_eq!(i.counts.malformed, 1, "{line}");
        let b = &i.counts.first_malformed[0];
        assert_eq!((b.line, b.text.as_str()), (2, *line));
        assert!(b.reason.contains(reason), "{line}: {}", b.reason);
    }
}

#[test]
fn escaped_quotes_inside_quoted_fields() {
    let line = r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\"b HTTP/1.1" 200 1 "-" "Agent \"quoted\" \\ end""#;
    let i = ok(line, filtered(Field::UserAgent, r#"Agent "quoted" \ end"#));
    assert_eq!(i.times.len(), 1, "{:?}", i.counts.first_malformed);
    let i = ok(line, filtered(Field::Path, r#"/a"b"#));
    assert_eq!(i.times.len(), 1);
    let e = err(line.as_bytes(), filtered(Field::UserAgent, "Agent"));
    assert!(e.contains("no line with user-agent 'Agent'"), "{e}");
}

fn sample_log() -> String {
    let t = "14/Nov/2023:22:13:20 +0000";
    [
        log_line("10.0.0.1", t, "GET / HTTP/1.1", 200, "curl/8.0"),
        log_line(
            "10.0.0.2",
            t,
            "POST /login HTTP/1.1",
            401,
            "Mozilla/5.0 (X11)",
        ),
        log_line("10.0.0.1", t, "GET /api HTTP/1.1", 429, "Mozilla/5.0 (X11)"),
        log_line("10.0.0.10", t, "GET /api HTTP/1.1", 200, "curl/8.0"),
        log_line(
            "10.0.0.1",
            t,
            "HEAD /api HTTP/1.1",
            200,
            "Mozilla/5.0 (X11)",
        ),
    ]
    .concat()
}

#[test]
fn filters_by_host_status_user_agent_and_request_parts() {
    let log = sample_log();
    let count = |field, value: &str| {
        let i = ok(&log, filtered(field, value));
        assert_eq!(i.counts.lines, 5);
        assert_eq!(i.times.len() as u64 + i.counts.filtered_out, 5);
        i.times.len()
    };
    assert_eq!(count(Field::Host, "10.0.0.1"), 3);
    assert_eq!(count(Field::Host, "10.0.0.10"), 1);
    assert_eq!(count(Field::Status, "200"), 3);
    assert_eq!(count(Field::Status, "429"), 1);
    assert_eq!(count(Field::UserAgent, "Mozilla/5.0 (X11)"), 3);
    assert_eq!(count(Field::UserAgent, "curl/8.0"), 2);
    assert_eq!(count(Field::Method, "GET"), 3);
    assert_eq!(count(Field::Path, "/api"), 3);
    assert_eq!(count(Field::Request, "POST /login HTTP/1.1"), 1);
    assert_eq!(count(Field::Referer, "-"), 5);
    assert_eq!(count(Field::User, "-"), 5);
    assert_eq!(count(Field::Bytes, "512"), 5);
    let e = err(log.as_bytes(), filtered(Field::Host, "10.0.0.9"));
    assert!(
        e.contains("no line with host '10.0.0.9'") && e.contains("5 valid"),
        "{e}"
    );
    // No referer or agent in the common format: a filter on them keeps nothing.
    let e = err(APACHE.as_bytes(), filtered(Field::Referer, "-"));
    assert!(e.contains("no line with referer"), "{e}");
}

#[test]
fn a_filter_needs_an_access_log() {
    let e = err(b"1700000000\n", filtered(Field::Host, "1.2.3.4"));
    assert!(e.contains("filter") && e.contains("epoch seconds"), "{e}");
    let mut explicit = filtered(Field::Status, "200");
    explicit.format = Format::Iso8601;
    let e = err(b"2023-11-14T22:13:20Z\n", explicit);
    assert!(e.contains("status:200") && e.contains("ISO 8601"), "{e}");
}

#[test]
fn comments_blank_lines_crlf_and_whitespace() {
    let i = ok(
        "\u{feff}# exported\r\n\r\n  1.5  \r\n\t2\r\n   \r\n# 3\r\n4",
        opts(Format::Auto),
    );
    assert_eq!(i.times, [1_500_000, 2 * S, 4 * S]);
    assert_eq!(
        (i.counts.lines, i.counts.blank, i.counts.malformed),
        (7, 4, 0)
    );
}

#[test]
fn auto_decides_on_the_first_line_that_parses() {
    let i = ok(
        "garbage\n-3\n2023-11-14T22:13:20Z\n1700000000\n",
        opts(Format::Auto),
    );
    assert_eq!(i.format, Format::Iso8601);
    assert_eq!(i.times, [1_700_000_000 * S]);
    assert_eq!(i.counts.malformed, 3);
    assert!(i.counts.first_malformed[0]
        .reason
        .contains("not a timestamp"));
    assert!(i.counts.first_malformed[1].reason.contains("negative"));
    assert!(i.counts.first_malformed[2]
        .reason
        .contains("not an ISO 8601"));
}

#[test]
fn empty_files_are_refused() {
    for text in ["", "\n\n", "# only a comment\n  \r\n"] {
        let e = err(text.as_bytes(), opts(Format::Auto));
        assert_eq!(
            e,
            "the file is empty: expected one timestamp per line, or an access log"
        );
    }
}

#[test]
fn compressed_and_binary_files_are_refused() {
    let cases: [(&[u8], &str); 5] = [
        (&[0x1f, 0x8b, 8, 0, 0, 0], "gzip-compressed"),
        (b"PK\x03\x04rest", "zip-compressed"),
        (&[0x28, 0xb5, 0x2f, 0xfd, 1], "zstd-compressed"),
        (b"BZh91AY&SY", "bzip2-compressed"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0], "xz-compressed"),
    ];
    for (bytes, what) in cases {
        let e = err(bytes, opts(Format::Auto));
        assert!(e.contains(what) && e.contains("decompress it first"), "{e}");
        // However the magic number is split.
        let mut importer = Importer::new(opts(Format::Auto));
        let mut result = Ok(());
        for b in bytes {
            result = result.and(importer.feed(&[*b]));
        }
        let result = result.and_then(|()| importer.finish().map(|_| ()));
        assert!(result.is_err_and(|e| e.to_string().contains(what)));
    }
    // Two bytes are enough for gzip.
    assert!(err(&[0x1f, 0x8b], opts(Format::Auto)).contains("gzip"));
    let mut text = b"1\n2\n".to_vec();
    text.push(0);
    text.extend_from_slice(b"3\n");
    let e = err(&text, opts(Format::Auto));
    assert!(
        e.contains("binary, not text") && e.contains("byte 5"),
        "{e}"
    );
    // A NUL past the first 64 KiB is just a malformed line.
    let mut text = "1\n".repeat(40_000).into_bytes();
    text.extend_from_slice(b"\x00\n");
    let i = parse(&text, opts(Format::Auto)).expect("imports");
    assert_eq!((i.times.len(), i.counts.malformed), (40_000, 1));
    // Text with a tail that looks like a magic number is text.
    assert_eq!(ok("1\nBZh9\n", opts(Format::Auto)).counts.malformed, 1);
}

#[test]
fn a_binary_file_is_refused_before_any_line_is_read_however_it_is_split() {
    // A first line that would fail the filter, then a NUL: with the whole file in one
    // chunk or in two, the NUL decides.
    let text = b"# comment\n0.5\n\x01\x00\x00";
    let options = filtered(Field::Host, "10.0.0.1");
    let whole = err(text, options.clone());
    assert!(whole.contains("binary, not text"), "{whole}");
    let mut importer = Importer::new(options);
    let split = importer
        .feed(&text[..14])
        .and_then(|()| importer.feed(&text[14..]))
        .and_then(|()| importer.finish().map(|_| ()));
    assert_eq!(split.map_err(|e| e.to_string()), Err(whole));
}

#[test]
fn no_valid_timestamp_names_the_first_bad_line() {
    let e = err(b"# header\nhello\n12:00\n", opts(Format::Auto));
    assert!(e.contains("no valid timestamp"), "{e}");
    assert!(
        e.contains("line 2") && e.contains("'hello'") && e.contains("2 malformed"),
        "{e}"
    );
    let e = err(b"1\x1b[31m\n", opts(Format::Seconds));
    assert!(e.contains("line 1") && e.contains("\\u{1b}"), "{e}");
}

#[test]
fn invalid_utf8_makes_a_line_malformed_not_the_file() {
    let mut text = b"1700000000\n17\xff00\n".to_vec();
    text.extend_from_slice(APACHE.as_bytes());
    let i = ok("1\n\u{e9}\n", opts(Format::Seconds));
    assert_eq!(
        i.counts.first_malformed[0].reason,
        "not a number of seconds: expected epoch seconds like 1700000000.25"
    );
    let i = parse(&text, opts(Format::Auto)).expect("imports");
    assert_eq!(i.times, [1_700_000_000 * S]);
    assert_eq!(i.counts.malformed, 2);
    assert!(i.counts.first_malformed[0].reason.starts_with("not UTF-8"));
    assert_eq!(i.counts.first_malformed[0].text, "17\u{fffd}00");
    // In an access log, a user agent that is not UTF-8.
    let log = format!("{APACHE} \"-\" \"caf\u{e9}\"\n").into_bytes();
    let mut broken = log.clone();
    let at = broken.len() - 3;
    broken[at] = 0xe9;
    broken.truncate(at + 1);
    broken.extend_from_slice(b"\"\n");
    let both = [log.as_slice(), broken.as_slice()].concat();
    let i = parse(&both, opts(Format::AccessLog)).expect("imports");
    assert_eq!((i.times.len(), i.counts.malformed), (1, 1));
    assert!(i.counts.first_malformed[0].reason.starts_with("not UTF-8"));
}

#[test]
fn an_overlong_line_is_malformed_and_never_held_whole() {
    let long = "9".repeat(10 << 20);
    let text = format!("1\n{long}\n2\n{}\n3", "8".repeat(MAX_LINE + 1));
    let mut importer = Importer::new(opts(Format::Auto));
    let mut most_held = 0;
    for chunk in text.as_bytes().chunks(1 << 20) {
        importer.feed(chunk).expect("feeds");
        most_held = most_held.max(importer.partial.capacity());
    }
    assert!(most_held <= MAX_LINE, "held {most_held}");
    let i = importer.finish().expect("imports");
    assert_eq!(i.times, [S, 2 * S, 3 * S]);
    assert_eq!((i.counts.lines, i.counts.malformed), (5, 2));
    for (bad, line) in i.counts.first_malformed.iter().zip([2, 4]) {
        assert_eq!(bad.line, line);
        assert!(bad.reason.contains("longer than 64 KiB"));
        assert_eq!(bad.text.len(), BAD_TEXT_CHARS);
    }
    // A line of exactly 64 KiB is read.
    let edge = format!("{}1\n", "0".repeat(MAX_LINE - 1));
    assert_eq!(ok(&edge, opts(Format::Seconds)).times, [S]);
    // Whole in one chunk or in pieces, the same result.
    assert_eq!(parse(text.as_bytes(), opts(Format::Auto)), Ok(i));
}

#[test]
fn more_than_the_replay_cap_is_too_large() {
    assert_eq!(
        Importer::new(ImportOptions::default()).max_times,
        MAX_REPLAY
    );
    let mut importer = Importer::new(ImportOptions::default());
    importer.max_times = 3;
    // Past the first 64 KiB, which are held until they can be checked.
    let three = format!("1\n2\n3\n{}", "# pad\n".repeat(12_000));
    importer.feed(three.as_bytes()).expect("three fit");
    assert_eq!(importer.lines(), 12_003);
    let e = importer.feed(b"4\n").expect_err("four do not");
    assert!(matches!(e, Error::TooLarge { .. }));
    assert!(
        e.to_string()
            .contains("more than 3 timestamps (line 12004)"),
        "{e}"
    );
    assert_eq!(importer.feed(b"5\n"), Err(e.clone()));
    assert_eq!(importer.finish(), Err(e));
}

#[test]
fn lines_reports_progress() {
    let mut importer = Importer::new(ImportOptions::default());
    importer.feed(b"1\n2\n3").expect("feeds");
    // Held until the first 64 KiB can be checked whole.
    assert_eq!(importer.lines(), 0);
    importer
        .feed("4\n".repeat(40_000).as_bytes())
        .expect("feeds");
    assert_eq!(importer.lines(), 40_002);
    importer.feed(b"5\n6").expect("feeds");
    assert_eq!(importer.lines(), 40_003);
    assert_eq!(importer.finish().map(|i| i.counts.lines), Ok(40_004));
}

#[test]
fn days_from_civil_round_trips_over_every_day_of_1970_to_9999() {
    let mut expected = 0;
    for year in 1970..=9999u32 {
        for month in 1..=12 {
            for day in 1..=days_in_month(year, month) {
                let days = days_from_civil(i64::from(year), month, day);
                assert_eq!(days, expected, "{year}-{month}-{day}");
                assert_eq!(civil_from_days(days), (i64::from(year), month, day));
                expected += 1;
            }
        }
    }
    assert_eq!(expected * 86_400, END_SECS as i64);
    assert_eq!(days_from_civil(2000, 3, 1), 11_017);
}

/// Lines worth mixing: valid in some format, broken, blank, odd bytes.
fn a_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u64..2_000_000_000, 0u32..1_000_000)
            .prop_map(|(s, f)| format!("{s}.{f:06}").into_bytes()),
        (0u64..END_US / 1000).prop_map(|ms| ms.to_string().into_bytes()),
        (0u64..END_US - 86_400 * S, -86_000i64..86_000, any::<u8>()).prop_map(|(t, o, st)| iso(
            t,
            o / 60 * 60,
            st
        )
        .into_bytes()),
        (0u64..END_US - 86_400 * S, -86_000i64..86_000).prop_map(|(t, o)| log_line(
            "10.0.0.1",
            &clf(t, o / 60 * 60),
            "GET / HTTP/1.1",
            200,
            "x"
        )
        .into_bytes()),
        Just(b"# comment".to_vec()),
        Just(Vec::new()),
        Just(b"\r".to_vec()),
        prop::collection::vec(1u8..=255, 0..40),
        prop::collection::vec(
            prop::sample::select(b"0123456789.-:+TZ[]/\" \\\r#\xff\x80Oct".to_vec()),
            0..40
        ),
    ]
}

fn a_file() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(a_line(), 0..60).prop_map(|lines| lines.join(&b'\n'))
}

fn options() -> impl Strategy<Value = ImportOptions> {
    let format = prop::sample::select(FORMATS.to_vec());
    let filter = prop_oneof![
        Just(None),
        Just(Some(Filter {
            field: Field::Host,
            value: "10.0.0.1".into()
        })),
        Just(Some(Filter {
            field: Field::Path,
            value: "/".into()
        })),
    ];
    (format, filter).prop_map(|(format, filter)| ImportOptions { format, filter })
}

fn fed_in_pieces(bytes: &[u8], cuts: &[usize], options: ImportOptions) -> Result<Imported, Error> {
    let mut importer = Importer::new(options);
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut from = 0;
    for cut in cuts.into_iter().chain([bytes.len()]) {
        importer.feed(&bytes[from..cut])?;
        from = cut;
    }
    importer.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_chunking_gives_the_same_import(
        bytes in a_file(),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
        options in options(),
    ) {
        let whole = parse(&bytes, options.clone());
        prop_assert_eq!(fed_in_pieces(&bytes, &cuts, options), whole);
    }

    #[test]
    fn the_word_at_a_time_search_finds_the_first_match(
        s in prop::collection::vec(prop::sample::select(b"ab\n\"\\ \x80\xff\x00\x01\x7f".to_vec()), 0..70),
        a in prop::sample::select(b"\n\"\\ a\x00\x80\xff".to_vec()),
        b in prop::sample::select(b"\n\"\\ a\x00\x80\xff".to_vec()),
    ) {
        prop_assert_eq!(find_either(&s, a, b), s.iter().position(|&c| c == a || c == b));
        prop_assert_eq!(find_newline(&s), s.iter().position(|&c| c == b'\n'));
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..3000),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
        options in options(),
    ) {
        if let Err(e) = fed_in_pieces(&bytes, &cuts, options) {
            prop_assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn seconds_and_millis_read_back_exactly(
        times in prop::collection::vec(0u64..END_US, 1..50),
    ) {
        let seconds: String = times.iter().map(|t| format!("{}.{:06}\n", t / S, t % S)).collect();
        prop_assert_eq!(parse(seconds.as_bytes(), opts(Format::Seconds)).map(|i| i.times), Ok(sorted(&times)));
        let millis: String = times.iter().map(|t| format!("{}.{:03}\n", t / 1000, t % 1000)).collect();
        prop_assert_eq!(parse(millis.as_bytes(), opts(Format::Millis)).map(|i| i.times), Ok(sorted(&times)));
        // Auto picks the format from the first line's size; truncation below the unit.
        let auto = parse(seconds.as_bytes(), opts(Format::Auto)).map(|i| (i.format, i.times));
        let want_format = if times[0] / S >= 100_000_000_000 { Format::Millis } else { Format::Seconds };
        let want: Vec<u64> = match want_format {
            Format::Millis => times.iter().map(|t| t / S * 1000 + t % S / 1000).collect(),
            _ => times.clone(),
        };
        prop_assert_eq!(auto, Ok((want_format, sorted(&want))));
    }

    #[test]
    fn iso_and_access_log_read_back_at_any_offset(
        times in prop::collection::vec(86_400 * S..END_US - 86_400 * S, 1..50),
        offsets in prop::collection::vec((-1439i64..=1439, any::<u8>()), 1..50),
    ) {
        let at = |i: usize| offsets[i % offsets.len()];
        let isos: String = times.iter().enumerate()
            .map(|(i, &t)| format!("{}\n", iso(t, at(i).0 * 60, at(i).1))).collect();
        let got = parse(isos.as_bytes(), opts(Format::Auto));
        prop_assert_eq!(got.map(|i| (i.format, i.times)), Ok((Format::Iso8601, sorted(&times))), "{}", isos);
        let log: String = times.iter().enumerate()
            .map(|(i, &t)| log_line("10.0.0.1", &clf(t, at(i).0 * 60), "GET / HTTP/1.1", 200, "x")).collect();
        let whole_seconds: Vec<u64> = times.iter().map(|t| t / S * S).collect();
        let got = parse(log.as_bytes(), opts(Format::Auto));
        prop_assert_eq!(got.map(|i| (i.format, i.times)), Ok((Format::AccessLog, sorted(&whole_seconds))), "{}", log);
    }
}

fn sorted(times: &[u64]) -> Vec<u64> {
    let mut t = times.to_vec();
    t.sort_unstable();
    t
}
