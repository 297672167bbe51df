//! The `ratelab` command: runs scenarios from the terminal and prints the report as JSON or
//! a table.
//!
//! All the modelling lives in the core; this file only turns flags into a [`Scenario`],
//! reads replay files (the core reads no files), runs the runs on every core, and prints.
//! Every bad flag, spec or file ends with exit status 2 and one line naming the problem.

mod probe;
mod study;

use ratelab::import::{ImportOptions, Imported, Importer};
use ratelab::sim::{simulate_run, Report, RunStats, Scenario};
use ratelab::spec::{parse_count, LimiterSpec, Replay, TrafficSpec};
use ratelab::time::{format_duration, parse_duration, MINUTE};
use ratelab::Error;
use std::io::Read;
use std::process::ExitCode;
use std::sync::Arc;

const USAGE: &str = "\
ratelab: what each rate limiter really lets through

Usage:
  ratelab simulate --limiter SPEC [--limiter SPEC ...] --traffic SPEC
                   [--limit N] [--window DUR] [--minutes M] [--runs R] [--seed S]
                   [--format json|table]
  ratelab study    [--runs 20] [--minutes 2000] [--seed S] [--out DIR] [--format json|markdown]
                   every experiment of the essay's study, with REPRODUCTION.md
  ratelab probe    --target URL | --redis URL --script NAME [--burst B]
                   --traffic SPEC [--limit N] [--window DUR] [--duration DUR] [--seed S]
                   [--model SPEC] [--admit 2xx] [--reject 429,503] [--timeout 2s]
                   [--header NAME:VALUE ...] [--allow-remote] [--dry-run] [--format json|table]
                   sends the traffic in real time to a live limiter and audits its answers;
                   loopback only unless --allow-remote. Scripts: sorted-set,
                   sorted-set-record-rejects, gcra, fixed-window
  ratelab demo     the boundary burst against every limiter, as a table
  ratelab help

A SPEC is name[:key=value,...].
  Limiters: fixed-window, sliding-log, sliding-window-counter, token-bucket, gcra,
            leaky-bucket. Keys: burst=B, rate=N/DUR, record-rejects=true, servers=K,
            mode=meter|queue (leaky-bucket).
  Traffic:  steady, small-bursts, page-loads, big-bursts, on-off (load=X);
            flood (start=DUR|worst, every=DUR, for=DUR); boundary-burst (before=DUR,
            after=DUR); retry (rate=N/DUR, spike=S, at=DUR, tries=M, every=DUR);
            replay (file=PATH, format=auto|seconds|ms|iso|access-log, client=IP,
            field=NAME:VALUE): one timestamp per line (epoch seconds or ms, ISO 8601)
            or an nginx/Apache access log, filtered on the client or another field.
  DUR is like 60s, 1min, 250ms.
Defaults: --limit 100 --window 60s --minutes 60 --runs 1 --seed 1 --format table.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ratelab: {message}");
            ExitCode::from(2)
        }
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Table,
}

impl Format {
    /// `--format json|table`.
    pub(crate) fn parse(value: &str) -> Result<Format, String> {
        match value {
            "json" => Ok(Format::Json),
            "table" => Ok(Format::Table),
            _ => Err(format!(
                "invalid --format '{value}': expected json or table"
            )),
        }
    }
}

fn run(args: &[String]) -> Result<String, String> {
    match args.first().map(String::as_str) {
        None | Some("help" | "--help" | "-h") => Ok(USAGE.to_owned()),
        Some("simulate") => {
            let (scenario, format) = parse_simulate(&args[1..])?;
            let report = run_scenario(&scenario)?;
            Ok(render(&scenario, &report, format))
        }
        Some("study") => study::main(&args[1..]),
        Some("probe") => probe::main(&args[1..]),
        Some("demo") => {
            let flags: Vec<String> = ratelab::LimiterKind::ALL
                .iter()
                .flat_map(|k| ["--limiter".to_owned(), k.name().to_owned()])
                .chain(["--traffic".into(), "boundary-burst".into()])
                .collect();
            let (scenario, _) = parse_simulate(&flags)?;
            let report = run_scenario(&scenario)?;
            Ok(format!(
                "The boundary burst: {} requests just before a window boundary and {} just after.\n\n{}",
                scenario.limit,
                scenario.limit,
                render(&scenario, &report, Format::Table)
            ))
        }
        Some(other) => Err(format!(
            "unknown command '{other}': accepted are simulate, study, probe, demo, help"
        )),
    }
}

/// Turns `simulate` flags into a validated scenario.
fn parse_simulate(args: &[String]) -> Result<(Scenario, Format), String> {
    let mut scenario = Scenario::default();
    let mut traffic: Option<TrafficSpec> = None;
    let mut format = Format::Table;
    let mut minutes = 60;
    let known = [
        "--limiter",
        "--traffic",
        "--limit",
        "--window",
        "--minutes",
        "--runs",
        "--seed",
        "--format",
    ];
    for (flag, value) in flags(args, &known, &["--limiter"])? {
        let e = |err: Error| err.to_string();
        match flag {
            "--limiter" => scenario
                .limiters
                .push(LimiterSpec::parse(&value).map_err(e)?),
            "--traffic" => traffic = Some(TrafficSpec::parse(&value).map_err(e)?),
            "--limit" => {
                scenario.limit = parse_count("--limit", &value, 1, 1_000_000).map_err(e)?
            }
            "--window" => scenario.window = parse_duration("--window", &value).map_err(e)?,
            "--minutes" => minutes = parse_count("--minutes", &value, 1, 100_000).map_err(e)?,
            "--runs" => {
                scenario.runs = parse_count("--runs", &value, 1, 100_000).map_err(e)? as u32
            }
            "--seed" => scenario.seed = parse_count("--seed", &value, 0, u64::MAX).map_err(e)?,
            _ => format = Format::parse(&value)?,
        }
    }
    if scenario.limiters.is_empty() {
        return Err(
            "simulate needs at least one --limiter SPEC, e.g. --limiter sliding-log".into(),
        );
    }
    let mut traffic =
        traffic.ok_or("simulate needs --traffic SPEC, e.g. --traffic steady:load=0.8")?;
    if let TrafficSpec::Replay(replay) = &mut traffic {
        replay.times = read_replay(replay)?;
    }
    scenario.traffic = traffic;
    scenario.duration = minutes * MINUTE;
    scenario.validate().map_err(|e| e.to_string())?;
    Ok((scenario, format))
}

/// Splits `--flag value` and `--flag=value` arguments into pairs, in order. Only `known` flags
/// are accepted, each once unless it is in `repeatable`.
pub(crate) fn flags(
    args: &[String],
    known: &[&'static str],
    repeatable: &[&str],
) -> Result<Vec<(&'static str, String)>, String> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let Some(&flag) = known.iter().find(|&&k| k == name) else {
            return Err(format!(
                "unknown flag '{arg}': accepted are {}",
                known.join(", ")
            ));
        };
        let value = match inline {
            Some(v) => v,
            None => rest
                .next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))?,
        };
        if !repeatable.contains(&flag) && out.iter().any(|(f, _)| *f == flag) {
            return Err(format!("{flag} given twice: give it once"));
        }
        out.push((flag, value));
    }
    Ok(out)
}

/// How much of a replay file is read at a time.
const REPLAY_CHUNK: usize = 1 << 20;

/// Reads a replay file through the core's importer, a chunk at a time, so only the times are
/// ever held. Malformed lines are skipped with a warning; a file that cannot be imported at
/// all is an error.
pub(crate) fn read_replay(replay: &Replay) -> Result<Arc<[u64]>, String> {
    let path = &replay.file;
    let cannot_read = |e: std::io::Error| format!("cannot read replay file '{path}': {e}");
    let refused = |e: Error| format!("replay file '{path}': {e}");
    let mut file = std::fs::File::open(path).map_err(cannot_read)?;
    let mut importer = Importer::new(ImportOptions {
        format: replay.format,
        filter: replay.filter.clone(),
    });
    let mut chunk = vec![0u8; REPLAY_CHUNK];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot_read(e)),
        };
        importer.feed(&chunk[..n]).map_err(refused)?;
    }
    let imported = importer.finish().map_err(refused)?;
    if imported.malformed > 0 {
        eprint!("{}", malformed_warning(path, &imported));
    }
    Ok(Arc::from(imported.times))
}

/// The warning for skipped lines: how many, and the first ones with their numbers.
fn malformed_warning(path: &str, imported: &Imported) -> String {
    let mut out = format!(
        "ratelab: warning: replay file '{path}' ({}): skipped {} malformed line(s) of {}:\n",
        imported.format.name(),
        imported.malformed,
        imported.lines
    );
    for bad in &imported.first_malformed {
        let text: String = bad
            .text
            .chars()
            .flat_map(|c| {
                let escaped: Vec<char> = if c.is_control() {
                    c.escape_default().collect()
                } else {
                    vec![c]
                };
                escaped
            })
            .collect();
        out += &format!("  line {}: '{text}': {}\n", bad.line, bad.reason);
    }
    let more = imported.malformed - imported.first_malformed.len() as u64;
    if more > 0 {
        out += &format!("  and {more} more\n");
    }
    out
}

/// Runs every run, spread over the machine's cores; the result does not depend on how many.
fn run_scenario(scenario: &Scenario) -> Result<Report, String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(scenario.runs as usize);
    let mut runs: Vec<Option<Vec<RunStats>>> = vec![None; scenario.runs as usize];
    let finished = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                s.spawn(move || {
                    (0..scenario.runs)
                        .filter(|r| *r as usize % threads == thread)
                        .map(|r| simulate_run(scenario, r).map(|stats| (r, stats)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect::<Vec<_>>()
    });
    for result in finished {
        let (r, stats) = result.map_err(|e| e.to_string())?;
        runs[r as usize] = Some(stats);
    }
    let runs: Vec<Vec<RunStats>> = runs
        .into_iter()
        .collect::<Option<_>>()
        .ok_or("a simulation thread failed")?;
    Ok(Report::from_runs(scenario, &runs))
}

fn render(scenario: &Scenario, report: &Report, format: Format) -> String {
    match format {
        Format::Json => {
            let value = serde_json::json!({
                "results": report.results,
                "scenario": {
                    "traffic": scenario.traffic.name(),
                    "limit": scenario.limit,
                    "window_us": scenario.window,
                    "minutes": scenario.duration / MINUTE,
                    "runs": scenario.runs,
                    "seed": scenario.seed,
                },
            });
            let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::Table => table(scenario, report),
    }
}

fn table(scenario: &Scenario, report: &Report) -> String {
    let header = [
        "limiter",
        "offered",
        "admitted",
        "served",
        "± SE",
        "busiest",
        "bound",
        "wrong admits",
        "wrong rejects",
    ];
    let pct = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{:.2}%", 100.0 * v));
    let rows: Vec<[String; 9]> = report
        .results
        .iter()
        .map(|r| {
            [
                r.limiter.clone(),
                r.offered.to_string(),
                r.admitted.to_string(),
                pct(r.served_share),
                pct(r.served_share_se),
                if scenario.runs > 1 {
                    format!(
                        "{} (mean {:.1})",
                        r.busiest_window_max, r.busiest_window_mean
                    )
                } else {
                    r.busiest_window_max.to_string()
                },
                r.bound.map_or("-".into(), |b| b.to_string()),
                pct(Some(r.wrong_admits)),
                pct(Some(r.wrong_rejects)),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s: String = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect::<Vec<_>>()
            .join("  ");
        s.push('\n');
        s
    };
    let mut out = format!(
        "{} per {}, traffic {}, {} run(s), seed {}\n",
        scenario.limit,
        format_duration(scenario.window),
        scenario.traffic.name(),
        scenario.runs,
        scenario.seed
    );
    out += &line(header.to_vec());
    for row in &rows {
        out += &line(row.iter().map(String::as_str).collect());
    }
    out
}
