//! Reading an access log's requests with what the server decided: nginx's or Apache's common
//! or combined format (to the second, or to the millisecond with nginx's `$msec` as the last
//! field), JSON lines with a time and a status, or CSV `time,status[,key]`.

use crate::error::Error;
use crate::import::{access_line, log_time};
use crate::time::{Micros, MS, SECOND};
use std::collections::BTreeMap;

/// Whether requests are told apart by client or taken as one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyBy {
    /// One limiter for every request (`--key all`).
    All,
    /// One limiter per client (`--key client`): the access log's host, a JSON line's
    /// `client`, `ip`, `remote_addr` or `key`, a CSV's third column.
    Client,
}

/// How `fit` reads a log.
#[derive(Debug, Clone)]
pub struct LogOptions {
    /// Statuses that mean the limiter rejected the request (default 429).
    pub rejected: Vec<u16>,
    /// One limiter per client or one for all.
    pub key: KeyBy,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            rejected: vec![429],
            key: KeyBy::Client,
        }
    }
}

/// One request of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// When, µs since the epoch as the log writes it.
    pub at: Micros,
    /// Whether the server let it through.
    pub admitted: bool,
    /// Its client's number (0 with `--key all`).
    pub key: u32,
    /// Its line in the log (1-based).
    pub line: u32,
}

/// The requests of a log, in the log's order.
#[derive(Debug, Clone)]
pub struct Log {
    /// Every request read.
    pub requests: Vec<Request>,
    /// How many clients (keys).
    pub keys: usize,
    /// The finest step of the log's times: a second for a common log without `$msec`.
    pub resolution: Micros,
    /// The format read: `access-log`, `access-log+msec`, `json`, `csv`.
    pub format: &'static str,
}

/// The most lines `fit` reads (a request is 24 bytes kept; ten million is 240 MB).
pub const MOST_LINES: usize = 10_000_000;

/// Reads a log.
pub fn read_log(text: &str, options: &LogOptions) -> Result<Log, Error> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| Error::Missing {
            what: "log".into(),
            key: "at least one request".into(),
            example: "127.0.0.1 - - [05/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 429 0".into(),
        })?;
    let format = if first.starts_with('{') {
        "json"
    } else if access_line(first.as_bytes()).is_some() {
        "access-log"
    } else if haproxy_line(first).is_some() {
        "haproxy"
    } else {
        "csv"
    };
    let mut keys: BTreeMap<String, u32> = BTreeMap::new();
    let mut requests = Vec::new();
    let mut msec = false;
    let mut csv_columns: Option<(usize, usize, Option<usize>)> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if requests.len() >= MOST_LINES {
            return Err(Error::invalid(
                "log",
                &format!("more than {MOST_LINES} requests"),
                &format!("at most {MOST_LINES} requests (split the log by time or by client)"),
            ));
        }
        let at_line = || format!("log line {}", n + 1);
        let (at, client, status) = match format {
            "access-log" => {
                let (t, host, status) = access_line(line.as_bytes()).ok_or_else(|| {
                    Error::invalid(
                        &at_line(),
                        line,
                        "a common or combined log line: HOST - USER [dd/Mon/yyyy:HH:MM:SS +ZZZZ] \"REQUEST\" STATUS BYTES ...",
                    )
                })?;
                // nginx's `$msec` appended as the last field: the time to the millisecond.
                let last = line.rsplit(' ').next().unwrap_or("");
                let precise = (last.len() > 11 && last.contains('.'))
                    .then(|| log_time(last.as_bytes()))
                    .flatten()
                    .filter(|&m| m.abs_diff(t) < 2 * SECOND);
                if precise.is_some() {
                    msec = true;
                }
                (precise.unwrap_or(t), String::from_utf8_lossy(host).into_owned(), status)
            }
            "haproxy" => haproxy_line(line).ok_or_else(|| {
                Error::invalid(
                    &at_line(),
                    line,
                    "an HAProxy HTTP log line (option httplog): ... CLIENT:PORT [dd/Mon/yyyy:HH:MM:SS.mmm] FRONTEND BACKEND/SERVER TR/Tw/Tc/Tr/Ta STATUS BYTES ...",
                )
            })?,
            "json" => read_json(line).map_err(|what| {
                Error::invalid(
                    &at_line(),
                    line,
                    &format!(
                        "a JSON object with a time (time, timestamp, ts, msec, @timestamp: epoch seconds, milliseconds or ISO 8601) and a status (status, code, status_code){what}"
                    ),
                )
            })?,
            _ => {
                let fields: Vec<&str> = line.split(',').map(|f| f.trim().trim_matches('"')).collect();
                if csv_columns.is_none() {
                    if log_time(fields[0].as_bytes()).is_none() {
                        // A header names the columns.
                        let find = |names: &[&str]| {
                            fields.iter().position(|f| names.contains(&f.to_ascii_lowercase().as_str()))
                        };
                        let time = find(&["time", "timestamp", "ts", "t", "msec", "@timestamp"]);
                        let status = find(&["status", "code", "status_code"]);
                        let key = find(&["key", "client", "ip", "remote_addr", "host"]);
                        match (time, status) {
                            (Some(t), Some(s)) => {
                                csv_columns = Some((t, s, key));
                                continue;
                            }
                            _ => {
                                return Err(Error::invalid(
                                    &at_line(),
                                    line,
                                    "CSV time,status[,key] (epoch seconds, milliseconds or ISO 8601, then the HTTP status), or a header naming a time and a status column",
                                ))
                            }
                        }
                    }
                    csv_columns = Some((0, 1, (fields.len() > 2).then_some(2)));
                }
                let (tc, sc, kc) = csv_columns.unwrap_or((0, 1, None));
                let bad = |what: &str| {
                    Error::invalid(
                        &at_line(),
                        line,
                        &format!("CSV time,status[,key]: {what}"),
                    )
                };
                let t = fields
                    .get(tc)
                    .and_then(|f| log_time(f.as_bytes()))
                    .ok_or_else(|| bad("a time in epoch seconds, milliseconds or ISO 8601"))?;
                let status = fields
                    .get(sc)
                    .and_then(|f| f.parse::<u16>().ok())
                    .filter(|s| (100..600).contains(s))
                    .ok_or_else(|| bad("an HTTP status from 100 to 599"))?;
                let key = kc.and_then(|k| fields.get(k)).copied().unwrap_or("").to_owned();
                (t, key, status)
            }
        };
        let key = match options.key {
            KeyBy::All => 0,
            KeyBy::Client => {
                let next = keys.len() as u32;
                *keys.entry(client).or_insert(next)
            }
        };
        requests.push(Request {
            at,
            admitted: !options.rejected.contains(&status),
            key,
            line: (n + 1) as u32,
        });
    }
    let resolution = if requests.iter().all(|r| r.at % SECOND == 0) {
        SECOND
    } else if requests.iter().all(|r| r.at % MS == 0) {
        MS
    } else {
        1
    };
    Ok(Log {
        keys: keys.len().max(1),
        requests,
        resolution,
        format: match format {
            "access-log" if msec => "access-log+msec",
            other => other,
        },
    })
}

/// An HAProxy HTTP log line (`option httplog`): the client, the accept date to the
/// millisecond, and the status (after the frontend, the backend/server and the timers).
fn haproxy_line(line: &str) -> Option<(Micros, String, u16)> {
    let open = line.find(" [")?;
    let close = open + line[open..].find(']')?;
    let date = &line[open + 2..close];
    // `06/Feb/2009:12:14:14.655`: the common log's date with milliseconds, in local time
    // without a zone (HAProxy writes its own clock's).
    let (whole, ms) = date.split_once('.')?;
    if ms.len() != 3 || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let clf = format!("x - - [{whole} +0000] \"-\" 200 0");
    let (t, ..) = access_line(clf.as_bytes())?;
    let at = t + ms.parse::<u64>().ok()? * MS;
    let client = line[..open].rsplit(' ').next()?;
    let client = client
        .rsplit_once(':')
        .map_or(client, |(ip, _)| ip)
        .to_owned();
    let mut rest = line[close + 1..].split_whitespace();
    let (_frontend, _backend, _timers) = (rest.next()?, rest.next()?, rest.next()?);
    let status = rest
        .next()?
        .parse::<u16>()
        .ok()
        .filter(|s| (100..600).contains(s))?;
    Some((at, client, status))
}

/// A JSON line's time, client and status.
fn read_json(line: &str) -> Result<(Micros, String, u16), String> {
    let fields = json_object(line).ok_or(" (not a JSON object of plain values)")?;
    let field = |names: &[&str]| {
        names.iter().find_map(|k| {
            fields
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        })
    };
    let time = field(&[
        "time",
        "timestamp",
        "ts",
        "msec",
        "@timestamp",
        "time_local",
    ])
    .ok_or(" (no time field)")?;
    let at = log_time(time.as_bytes()).ok_or(" (a time it could not read)")?;
    let status = field(&["status", "code", "status_code"])
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..600).contains(s))
        .ok_or(" (no status from 100 to 599)")?;
    let client = field(&["client", "ip", "remote_addr", "key", "host"]).unwrap_or_default();
    Ok((at, client, status))
}

/// The top-level fields of a JSON object whose values are strings, numbers, `true`, `false`
/// or `null` (nested objects and arrays are skipped), each value as its text: a string
/// unescaped, a number as written (so that no digit of a time is lost to a float).
fn json_object(line: &str) -> Option<Vec<(String, String)>> {
    let b = line.trim().as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while b.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> Option<String> {
        if b.get(*i) != Some(&b'"') {
            return None;
        }
        *i += 1;
        let mut out = Vec::new();
        loop {
            match *b.get(*i)? {
                b'"' => {
                    *i += 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    let c = *b.get(*i + 1)?;
                    out.push(match c {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'u' => {
                            // Kept as written: keys and values read here are ASCII.
                            out.extend_from_slice(b"\\u");
                            *i += 2;
                            continue;
                        }
                        other => other,
                    });
                    *i += 2;
                }
                c => {
                    out.push(c);
                    *i += 1;
                }
            }
        }
    };
    ws(&mut i);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        ws(&mut i);
        match b.get(i)? {
            b'}' => return Some(out),
            b',' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let key = string(&mut i)?;
        ws(&mut i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        ws(&mut i);
        match b.get(i)? {
            b'"' => out.push((key, string(&mut i)?)),
            b'{' | b'[' => {
                // Skipped whole, strings inside included.
                let mut depth = 0usize;
                loop {
                    match *b.get(i)? {
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        b'"' => {
                            string(&mut i)?;
                            continue;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => {
                let start = i;
                while b
                    .get(i)
                    .is_some_and(|&c| c != b',' && c != b'}' && !c.is_ascii_whitespace())
                {
                    i += 1;
                }
                out.push((key, std::str::from_utf8(&b[start..i]).ok()?.to_owned()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_reads_its_times_statuses_and_clients() {
        let common = "10.0.0.1 - - [05/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n\
                      10.0.0.2 - - [05/Dec/2026:10:00:01 +0000] \"GET / HTTP/1.1\" 429 0 \"-\" \"curl\"\n";
        let log = read_log(common, &LogOptions::default()).expect("reads");
        assert_eq!(log.format, "access-log");
        assert_eq!(log.resolution, SECOND);
        assert_eq!(log.keys, 2);
        assert!(log.requests[0].admitted && !log.requests[1].admitted);
        assert_eq!(log.requests[1].at - log.requests[0].at, SECOND);
        let msec = "10.0.0.1 - - [05/Dec/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl\" 1796464800.123\n";
        let log = read_log(msec, &LogOptions::default()).expect("reads");
        assert_eq!(log.format, "access-log+msec");
        assert_eq!(log.requests[0].at % SECOND, 123 * MS);
        let json = "{\"time\": 1796464800.5, \"status\": 429, \"ip\": \"a\"}\n{\"ts\": \"2026-12-05T10:00:01Z\", \"code\": \"200\"}\n";
        let log = read_log(
            json,
            &LogOptions {
                key: KeyBy::All,
                ..Default::default()
            },
        )
        .expect("reads");
        assert_eq!(log.format, "json");
        assert!(!log.requests[0].admitted && log.requests[1].admitted);
        let csv = "time,status,key\n1796464800000,200,a\n1796464800250,429,a\n";
        let log = read_log(csv, &LogOptions::default()).expect("reads");
        assert_eq!((log.format, log.resolution), ("csv", MS));
        assert_eq!(log.requests[1].at - log.requests[0].at, 250 * MS);
        let bare = "1796464800.000001,503\n";
        let log = read_log(
            bare,
            &LogOptions {
                rejected: vec![503],
                key: KeyBy::All,
            },
        )
        .expect("reads");
        assert!(!log.requests[0].admitted);
        assert_eq!(log.resolution, 1);
    }

    #[test]
    fn haproxys_http_log_reads_to_the_millisecond() {
        let text = "Dec  5 10:00:00 localhost haproxy[14389]: 10.0.1.2:33317 [05/Dec/2026:10:00:00.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 \"GET / HTTP/1.1\"\n\
                    Dec  5 10:00:00 localhost haproxy[14389]: 10.0.1.2:33318 [05/Dec/2026:10:00:00.702] http-in http-in/<NOSRV> 0/-1/-1/-1/0 429 217 - - PR-- 1/1/0/0/0 0/0 \"GET / HTTP/1.1\"\n";
        let log = read_log(text, &LogOptions::default()).expect("reads");
        assert_eq!(log.format, "haproxy");
        assert_eq!(log.keys, 1);
        assert_eq!(log.resolution, MS);
        assert!(log.requests[0].admitted && !log.requests[1].admitted);
        assert_eq!(log.requests[1].at - log.requests[0].at, 47 * MS);
    }

    #[test]
    fn json_objects_read_their_plain_fields() {
        let fields = json_object(
            r#"{"a": "x\"y", "n": 1700000000.123456, "o": {"t": [1, "}"]}, "b": true}"#,
        )
        .expect("an object");
        assert_eq!(
            fields,
            vec![
                ("a".into(), "x\"y".into()),
                ("n".into(), "1700000000.123456".into()),
                ("b".into(), "true".into())
            ]
        );
        assert!(json_object("[1]").is_none());
        assert!(json_object("{\"a\": ").is_none());
    }

    #[test]
    fn a_line_it_cannot_read_is_named() {
        let e = read_log("1796464800,200\nyesterday,429\n", &LogOptions::default())
            .expect_err("not a time")
            .to_string();
        assert!(
            e.contains("log line 2") && e.contains("epoch seconds"),
            "{e}"
        );
        let e = read_log("{\"time\": 1}\n", &LogOptions::default())
            .expect_err("no status")
            .to_string();
        assert!(e.contains("log line 1") && e.contains("status"), "{e}");
    }
}
