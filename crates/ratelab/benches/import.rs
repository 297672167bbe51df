//! Criterion benchmarks of the traffic-file importer: a million generated lines per format,
//! parsed in one go. `cargo bench -p ratelab --bench import`; the time per iteration divided
//! by 1,000,000 is the time per line, recorded in docs/src/performance.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ratelab::import::{parse, Field, Filter, Format, ImportOptions};
use std::hint::black_box;

const LINES: usize = 1_000_000;

/// Arrival times from 2023-11-14T22:13:20Z on, about 3 ms apart, slightly out of order as
/// logs from several workers are.
fn times() -> Vec<u64> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut t: u64 = 1_700_000_000_000_000;
    (0..LINES)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            t += (state >> 33) % 6_000;
            t.saturating_sub((state >> 20) % 50)
        })
        .collect()
}

fn parts(t: u64, offset: i64) -> (i64, i64, i64, i64, i64, i64) {
    let local = (t / 1_000_000) as i64 + offset;
    let (y, m, d) = ratelab::import::civil_from_days(local.div_euclid(86_400));
    let s = local.rem_euclid(86_400);
    (y, i64::from(m), i64::from(d), s / 3600, s / 60 % 60, s % 60)
}

fn file(format: Format) -> Vec<u8> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    const AGENTS: [&str; 3] = [
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        "curl/8.5.0",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15",
    ];
    let mut out = String::new();
    for (i, t) in times().into_iter().enumerate() {
        let line = match format {
            Format::Seconds => format!("{}.{:06}\n", t / 1_000_000, t % 1_000_000),
            Format::Millis => format!("{}\n", t / 1_000),
            Format::Iso8601 => {
                // Half UTC, half at +01:00.
                let offset = if i % 2 == 0 { 0 } else { 3600 };
                let (y, mo, d, h, mi, s) = parts(t, offset);
                let zone = if offset == 0 { "Z" } else { "+01:00" };
                format!(
                    "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:06}{zone}\n",
                    t % 1_000_000
                )
            }
            _ => {
                let (y, mo, d, h, mi, s) = parts(t, -7 * 3600);
                format!(
                    "203.0.113.{} - - [{d:02}/{}/{y:04}:{h:02}:{mi:02}:{s:02} -0700] \"GET /api/v1/items/{} HTTP/1.1\" {} {} \"https://example.com/\" \"{}\"\n",
                    i % 200,
                    MONTHS[mo as usize - 1],
                    i % 10_000,
                    if i % 10 == 0 { 429 } else { 200 },
                    512 + i % 4096,
                    AGENTS[i % 3],
                )
            }
        };
        out.push_str(&line);
    }
    out.into_bytes()
}

fn import(c: &mut Criterion) {
    let mut group = c.benchmark_group("import");
    group.throughput(Throughput::Elements(LINES as u64));
    group.sample_size(10);
    let client = Filter {
        field: Field::Host,
        value: "203.0.113.7".into(),
    };
    for (name, format, filter) in [
        ("seconds", Format::Seconds, None),
        ("ms", Format::Millis, None),
        ("iso", Format::Iso8601, None),
        ("access-log", Format::AccessLog, None),
        ("access-log client=", Format::AccessLog, Some(client)),
    ] {
        let bytes = file(format);
        let options = ImportOptions {
            format: Format::Auto,
            filter,
        };
        let check = parse(&bytes, options.clone()).expect("the generated file imports");
        assert_eq!(
            (check.format, check.counts.malformed),
            (format, 0),
            "{name}"
        );
        assert_eq!(check.counts.lines as usize, LINES);
        group.bench_function(name, |b| {
            b.iter(|| parse(black_box(&bytes), options.clone()).map(|i| i.times.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, import);
criterion_main!(benches);
