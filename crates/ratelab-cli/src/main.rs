//! The `ratelab` command: runs scenarios from the terminal and prints the report as JSON or
//! a table.
//!
//! All the modelling lives in the core; this file only turns flags into a [`Scenario`],
//! reads replay files (the core reads no files), runs the runs on every core, and prints.
//! Every bad flag, spec or file ends with exit status 2 and one line naming the problem.

mod args;
mod check;
mod fit;
mod input;
mod pool;
mod probe;
mod study;
mod text;

pub(crate) use args::Format;
use args::{Cli, Cmd, DemoArgs, SimulateArgs};
use clap::{CommandFactory, Parser};
use input::{limit, read_replay};
use ratelab::sim::{fold_delays, simulate_run, ClientReport, Report, RunStats, Scenario};
use ratelab::spec::{parse_count, FleetSpec, LimiterSpec, TrafficSpec, MAX_CLIENTS};
use ratelab::time::{format_duration, parse_duration, Micros, MINUTE};
use ratelab::Error;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use text::{parsed_spec, ClapOutcome, Done};

/// The status of a usage error: a bad flag, spec or file.
const USAGE_ERROR: u8 = 2;
/// The status when the output cannot be written (a closed pipe, a full disk).
const OUTPUT_ERROR: u8 = 1;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let done = match parse(&args) {
        Ok(cli) => run(cli, &args),
        Err(ClapOutcome::Print(help)) => Ok(Done::ok(help)),
        Err(ClapOutcome::Usage(message)) => Err(message),
    };
    match done {
        Ok(done) => {
            if let Err(e) = write_out(&done.text) {
                let why = if e.kind() == std::io::ErrorKind::BrokenPipe {
                    "it was closed before the end (broken pipe)".to_owned()
                } else {
                    e.to_string()
                };
                text::note(&format!("ratelab: cannot write the output: {why}"));
                return ExitCode::from(OUTPUT_ERROR);
            }
            ExitCode::from(done.status)
        }
        Err(message) => {
            text::note(&text::one_line(&format!("ratelab: {message}")));
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// Writes everything to stdout, flushed, reporting any failure instead of panicking.
fn write_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Parses the command line; help, the version and usage errors come back as what to show.
fn parse(args: &[OsString]) -> Result<Cli, ClapOutcome> {
    if args.len() <= 1 {
        // Bare `ratelab`: the overview, as `ratelab --help`.
        return Err(ClapOutcome::Print(
            Cli::command().render_long_help().to_string(),
        ));
    }
    Cli::try_parse_from(args).map_err(|err| {
        // The command the user meant, for the flags a message lists.
        let top = Cli::command();
        let name = args.get(1).and_then(|a| a.to_str()).unwrap_or_default();
        let (command, flags) = match top.find_subcommand(name) {
            Some(sub) => (format!("ratelab {name}"), long_flags(sub)),
            None => ("ratelab".to_owned(), long_flags(&top)),
        };
        text::clap_error(&err, &command, &flags)
    })
}

/// The long flags of a command, in the order its help lists them.
fn long_flags(cmd: &clap::Command) -> Vec<String> {
    let mut flags: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .filter(|f| f != "--help" && f != "--version")
        .collect();
    flags.push("--help".into());
    flags
}

fn run(cli: Cli, args: &[OsString]) -> Result<Done, String> {
    match cli.command {
        Cmd::Simulate(a) => {
            let (scenario, format) = parse_simulate(&a)?;
            let report = run_scenario(&scenario)?;
            Ok(Done::ok(render(&scenario, &report, format)))
        }
        Cmd::Study(a) => study::main(&a).map(Done::ok),
        Cmd::Probe(a) => {
            // The command as given, for the report (after `ratelab probe`).
            let given: Vec<String> = args
                .iter()
                .skip(2)
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            probe::main(&a, &given)
        }
        Cmd::Demo(a) => demo(&a).map(Done::ok),
        Cmd::Check(a) => check::main(&a).map(Done::ok),
        Cmd::Fit(a) => fit::main(&a).map(Done::ok),
        Cmd::Completions(a) => {
            let mut script = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "ratelab", &mut script);
            Ok(Done::ok(String::from_utf8_lossy(&script).into_owned()))
        }
    }
}

/// The boundary burst against every limiter, at the limit and window given.
fn demo(a: &DemoArgs) -> Result<String, String> {
    let limit = limit(&a.limit)?;
    let window = parse_duration("--window", &a.window).map_err(|e| text::core(&e))?;
    // The bursts come half a second either side of the boundary (the traffic's default),
    // or a tenth of a shorter window, so both are always within one window.
    let gap = (window / 10).clamp(1, 500 * ratelab::time::MS);
    let scenario = Scenario {
        limiters: ratelab::LimiterKind::ALL
            .iter()
            .map(|k| LimiterSpec::of(*k))
            .collect(),
        traffic: TrafficSpec::BoundaryBurst {
            before: gap,
            after: gap,
            first: None,
            second: None,
        },
        limit,
        window,
        ..Scenario::default()
    };
    scenario.validate().map_err(|e| text::core(&e))?;
    let report = run_scenario(&scenario)?;
    Ok(match a.format {
        Format::Json => render(&scenario, &report, Format::Json),
        Format::Table => format!(
            "The boundary burst: {} requests just before a window boundary and {} just after.\n\n{}",
            scenario.limit,
            scenario.limit,
            render(&scenario, &report, Format::Table)
        ),
    })
}

/// Turns `simulate` flags into a validated scenario.
fn parse_simulate(a: &SimulateArgs) -> Result<(Scenario, Format), String> {
    let e = |err: Error| text::core(&err);
    let mut scenario = Scenario::default();
    for spec in &a.limiter {
        scenario.limiters.push(LimiterSpec::parse(spec).map_err(e)?);
    }
    let traffic = a
        .traffic
        .as_deref()
        .map(TrafficSpec::parse)
        .transpose()
        .map_err(e)?;
    scenario.limit = limit(&a.limit)?;
    scenario.window = parse_duration("--window", &a.window).map_err(e)?;
    let minutes = parse_count("--minutes", &a.minutes, 1, 100_000).map_err(e)?;
    scenario.runs = parse_count("--runs", &a.runs, 1, 100_000).map_err(e)? as u32;
    scenario.seed = parse_count("--seed", &a.seed, 0, u64::MAX).map_err(e)?;
    if scenario.limiters.is_empty() {
        return Err(
            "simulate needs at least one --limiter SPEC, e.g. --limiter sliding-log".into(),
        );
    }
    match (&a.gateways, &a.route, &a.coord) {
        (Some(n), route, coord) => {
            let fleet = FleetSpec::parse(n, route.as_deref(), coord.as_deref()).map_err(e)?;
            for spec in &mut scenario.limiters {
                spec.fleet = Some(fleet);
            }
        }
        (None, Some(_), _) => {
            return Err("--route needs --gateways N, e.g. --gateways 4 --route random".into())
        }
        (None, None, Some(_)) => {
            return Err(
                "--coord needs --gateways N, e.g. --gateways 4 --coord sync:every=1s".into(),
            )
        }
        (None, None, None) => {}
    }
    let mut traffic =
        traffic.ok_or("simulate needs --traffic SPEC, e.g. --traffic steady:load=0.8")?;
    if let TrafficSpec::Replay(replay) = &mut traffic {
        replay.times = read_replay(replay)?;
    }
    if let Some(m) = &a.clients {
        let m = parse_count("--clients", m, 1, MAX_CLIENTS).map_err(e)? as u32;
        let TrafficSpec::Retry { clients, mix, .. } = &mut traffic else {
            return Err(format!(
                "--clients needs retrying traffic, e.g. --traffic retry:rate=1/1min --clients {m} (--traffic is {})",
                traffic.name()
            ));
        };
        if !mix.is_empty() {
            return Err(format!(
                "--clients {m} with a mix of clients in --traffic: give each group its clients=M there instead"
            ));
        }
        if *clients != 1 && *clients != m {
            return Err(format!(
                "--clients {m} and clients={clients} in --traffic disagree: give one of them"
            ));
        }
        *clients = m;
    }
    scenario.traffic = traffic;
    scenario.duration = minutes * MINUTE;
    scenario.validate().map_err(e)?;
    Ok((scenario, a.format))
}

/// Runs every run, spread over the machine's cores, as many at once as fit in the memory
/// budget; the result does not depend on how many.
fn run_scenario(scenario: &Scenario) -> Result<Report, String> {
    let threads = pool::cores().min(scenario.memory().concurrent_runs().max(1) as usize);
    let mut runs: Vec<Option<Vec<RunStats>>> = vec![None; scenario.runs as usize];
    let mut failed = None;
    pool::for_each(
        scenario.runs as usize,
        threads,
        |r| simulate_run(scenario, r as u32),
        |r, stats| match stats {
            Ok(mut stats) => {
                // One delay histogram per limiter, kept with the first run to arrive.
                if let Some(first) = runs.iter_mut().flatten().next() {
                    fold_delays(first, &mut stats);
                }
                runs[r] = Some(stats);
            }
            Err(e) => failed = Some(e),
        },
    )?;
    if let Some(e) = failed {
        return Err(text::core(&e));
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
            let mut results = report.results.clone();
            for r in &mut results {
                r.limiter = parsed_spec(&r.limiter);
            }
            let mut about = serde_json::json!({
                "traffic": scenario.traffic.name(),
                "limit": scenario.limit,
                "window_us": scenario.window,
                "minutes": scenario.duration / MINUTE,
                "runs": scenario.runs,
                "seed": scenario.seed,
            });
            // With --gateways only: other scenarios' JSON is what it always was.
            if let Some(f) = scenario.limiters.first().and_then(|l| l.fleet) {
                about["fleet"] = serde_json::json!({
                    "gateways": f.gateways,
                    "route": f.route_text(),
                    "coord": f.coord_text(),
                });
            }
            let value = serde_json::json!({ "results": results, "scenario": about });
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
                text::escaped(&parsed_spec(&r.limiter)),
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
    out + &fleet_lines(scenario, report) + &client_lines(scenario, report)
}

/// With retrying traffic: what the clients went through against each limiter.
fn client_lines(scenario: &Scenario, report: &Report) -> String {
    let TrafficSpec::Retry { every, .. } = &scenario.traffic else {
        return String::new();
    };
    let Some(first) = report.results.iter().find_map(|r| r.client.as_ref()) else {
        return String::new();
    };
    let policy = if first.policy.is_empty() {
        format!(
            "the essays' client, retrying every {}",
            format_duration(*every)
        )
    } else {
        first.policy.clone()
    };
    let mut out = if first.groups.is_empty() {
        format!(
            "\n{} client(s) per run ({policy}): requests, tries (per request), requests given up, time from first try to success (p50, p99), the most tries in one second, clients locked out (served under half).\n",
            first.clients
        )
    } else {
        format!(
            "\n{} clients per run in a mix of {} groups ({policy}): requests, tries (per request), requests given up, time from first try to success (p50, p99), the most tries in one second, clients locked out (served under half); each limiter's fleet, then each group's.\n",
            first.clients,
            first.groups.len(),
        )
    };
    // Three significant figures: the histogram's precision is 0.8%.
    let time = |v: Option<Micros>| match v {
        None => "-".to_owned(),
        Some(us) if us < 1_000 => format!("{us}us"),
        Some(us) if us < 1_000_000 => format!("{:.3}ms", us as f64 / 1e3),
        Some(us) => format!("{:.3}s", us as f64 / 1e6),
    };
    let line = |who: &str, c: &ClientReport| {
        format!(
            "{who}: {} requests, {} tries ({}), {} gave up, success p50 {} p99 {}, peak {} tries/s, {:.1}% locked out\n",
            c.requests,
            c.attempts,
            c.amplification.map_or("-".to_owned(), |a| format!("{a:.2}×")),
            c.gave_up,
            time(c.success_p50_us),
            time(c.success_p99_us),
            c.peak_attempts_per_second,
            100.0 * c.lockout_share
        )
    };
    for r in &report.results {
        let Some(c) = &r.client else { continue };
        out += &line(&text::escaped(&parsed_spec(&r.limiter)), c);
        for g in &c.groups {
            out += &line(&format!("  {}", g.policy), g);
        }
    }
    out
}

/// With `--gateways`: the fleet, each limiter's room instants and each gateway's counts.
fn fleet_lines(scenario: &Scenario, report: &Report) -> String {
    let Some(fleet) = scenario.limiters.first().and_then(|l| l.fleet) else {
        return String::new();
    };
    let mut out = format!(
        "\n{} gateways, --route {}, --coord {}: the rows above are the whole fleet against the global rule.\n",
        fleet.gateways,
        fleet.route_text(),
        fleet.coord_text()
    );
    for r in &report.results {
        out += &format!(
            "{}: {} room instants (admissions one limiter holding every gateway's admissions would have refused); per gateway decisions/admitted/busiest: {}\n",
            text::escaped(&parsed_spec(&r.limiter)),
            r.room_instants.unwrap_or(0),
            r.gateways
                .iter()
                .flatten()
                .map(|g| format!("{}/{}/{}", g.offered, g.admitted, g.busiest_window_max))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    out
}
