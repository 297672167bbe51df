//! `ratelab probe`: sends a scenario's arrivals in real time to a live limiter (an HTTP
//! gateway, or a Redis script), records how each request was answered and audits the record
//! with the simulator's auditor (`ratelab::probe`).
//!
//! Timing: the schedule runs on this thread, which sleeps until about 200 µs before each send
//! and spins the rest, then hands the request to a tokio runtime. A request's send time is
//! taken when its task starts, just before the request is written, so the reported lateness
//! includes any wait for the runtime. Requests never wait for each other: every one is its own
//! task, so a slow answer delays nothing but itself.

mod client;
mod setup;
mod show;

use crate::args::{Format, ProbeArgs};
use crate::text::{self, Done};
use client::send;
use ratelab::probe::{Plan, ProbeMeta, ProbeReport};
use ratelab::time::format_duration;
use setup::{parse, show_statuses, Target, INTERRUPTED};
use show::table;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn main(args: &ProbeArgs, given: &[String]) -> Result<Done, String> {
    let probe = parse(args)?;
    let plan = Plan::new(&probe.scenario).map_err(|e| text::core(&e))?;
    let command = format!(
        "ratelab probe {}",
        given
            .iter()
            .map(|a| ratelab::text::shell_word(a))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let what = match &probe.target {
        Target::Http { statuses, .. } => format!(
            "admitted: {}; rejected: {}",
            show_statuses(&statuses.admit),
            show_statuses(&statuses.reject)
        ),
        Target::Redis { .. } => "admitted: the script returns 1; rejected: 0".into(),
    };
    let to = match &probe.fleet {
        Some(f) => format!(
            "{} gateways, --route {}: {}",
            f.gateways,
            f.route_text(),
            probe.target.describe()
        ),
        None => probe.target.describe(),
    };
    let line = format!(
        "ratelab probe: {} {} to {}, {} per {}; {what}; timeout {}",
        if probe.dry_run {
            "would send"
        } else {
            "sending"
        },
        plan.summary.describe(),
        to,
        probe.scenario.limit,
        format_duration(probe.scenario.window),
        format_duration(probe.timeout.as_micros() as u64),
    );
    if probe.dry_run {
        text::note(&line);
        return Ok(Done::ok(String::new()));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    // Ctrl-C is caught from here on (before the line that says sending starts).
    let stop = catch_ctrl_c(&rt)?;
    text::note(&line);
    let (records, epoch_us) = send(&probe, plan, &rt, &stop)?;
    rt.shutdown_timeout(Duration::from_millis(100));
    let partial = stop.load(Ordering::SeqCst);
    let model = match &probe.model {
        Some(spec) => Some((
            spec.text.as_str(),
            probe
                .scenario
                .build_limiter(spec, 0)
                .map_err(|e| text::core(&e))?,
        )),
        None => None,
    };
    let mut report = ProbeReport::new(
        ProbeMeta {
            target: probe.target.describe(),
            scenario: &probe.scenario,
            command: Some(command),
            gateways: if probe.fleet.is_some() {
                probe.target.gateways()
            } else {
                Vec::new()
            },
            route: probe.fleet.map(|f| f.route_text()),
            epoch_us,
        },
        &records,
        model,
    );
    report.partial = partial;
    if let Some(c) = &mut report.comparison {
        c.model = text::parsed_spec(&c.model);
        c.coord = probe.fleet.map(|f| f.coord_text());
    }
    let out = match probe.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            s.push('\n');
            s
        }
        Format::Table => table(&report),
    };
    Ok(Done {
        text: out,
        status: if partial { INTERRUPTED } else { 0 },
    })
}

/// Sets the returned flag on Ctrl-C (SIGINT); a second Ctrl-C ends the program at once.
/// The handler is in place when this returns.
fn catch_ctrl_c(rt: &tokio::runtime::Runtime) -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let _entered = rt.enter();
        let mut sigint =
            signal(SignalKind::interrupt()).map_err(|e| format!("cannot catch Ctrl-C: {e}"))?;
        rt.spawn(async move {
            if sigint.recv().await.is_some() {
                flag.store(true, Ordering::SeqCst);
                text::note("ratelab probe: Ctrl-C: sending stopped; waiting for the answers in flight (Ctrl-C again to quit without a report)");
            }
            if sigint.recv().await.is_some() {
                text::note("ratelab probe: stopped without a report");
                std::process::exit(i32::from(INTERRUPTED));
            }
        });
    }
    #[cfg(not(unix))]
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::SeqCst);
            text::note("ratelab probe: Ctrl-C: sending stopped; waiting for the answers in flight (Ctrl-C again to quit without a report)");
        }
        if tokio::signal::ctrl_c().await.is_ok() {
            text::note("ratelab probe: stopped without a report");
            std::process::exit(i32::from(INTERRUPTED));
        }
    });
    Ok(stop)
}
