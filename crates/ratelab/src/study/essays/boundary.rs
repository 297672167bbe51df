//! The second essay's claims: the boundary burst, its attack and its table.

use super::study::{command, share, Study, BOUNDARY};
use crate::decimal::fixed;
use crate::study::claims::{value_text, Claim, Metric, Unit, Value};
use crate::study::experiments::JobResult;
use crate::study::experiments::{
    JobKind, BOUNDARY_BUCKET_10, BOUNDARY_BUCKET_60, BOUNDARY_FIXED, BOUNDARY_LIMIT, BOUNDARY_LOG,
    BOUNDARY_ROWS_TRAFFIC, EVENLY_TRAFFIC,
};
use crate::study::measure::served;
use crate::study::plan::Job;
use crate::theory;
use crate::time::MINUTE;

pub(super) fn boundary(study: &Study, out: &mut Vec<Claim>) {
    const S: &str = "The boundary burst";
    // Three scenarios, each named where its rows are: the essay's two-tick attack (60 either
    // side of a reset), the attack of 180 its table's busiest and rejected rows both come
    // from, and the client offering twice the allowance that its admitted row describes.
    let attack = study.get(&JobKind::Boundary);
    let rows = study.get(&JobKind::BoundaryRows);
    let over = study.get(&JobKind::Overdriven);
    let evenly = study.get(&JobKind::Evenly);
    let busiest_in =
        |job: Option<(&Job, &JobResult)>, at: usize| job.map(|(_, r)| r.runs[0][at].busiest);
    let rejected_in = |job: Option<(&Job, &JobResult)>, at: usize| {
        job.map(|(_, r)| {
            let s = &r.runs[0][at];
            s.offered - s.admitted
        })
    };
    let cmd = |job: Option<(&Job, &JobResult)>, traffic: &str, at: usize| {
        job.map(|(j, _)| command(j, at, traffic))
            .unwrap_or_default()
    };
    let count = |x: Option<u64>| x.map(|x| Value::Exact(x as f64, Unit::Count));
    out.push(
        Claim::new(
            BOUNDARY,
            S,
            "fixed window at 60 a minute: most admitted in one window, two-tick attack",
            "120 through in an instant",
        )
        .target(120.0, Unit::Count)
        .ours(count(busiest_in(attack, BOUNDARY_FIXED)))
        .note("the two-tick attack: 60 requests 0.5 s before a reset and 60 0.5 s after")
        .command(cmd(attack, "boundary-burst", BOUNDARY_FIXED))
        .prints(Metric::BusiestMax)
        .judged(),
    );
    let from_rows = "the attack of 180 the table's busiest and rejected rows both come from: 60 requests 0.5 s before a reset and 120 0.5 s after";
    for (at, name, quote, target) in [
        (BOUNDARY_FIXED, "fixed window", "120.0", 120.0),
        (BOUNDARY_LOG, "sliding window", "60.0", 60.0),
    ] {
        out.push(
            Claim::new(
                BOUNDARY,
                S,
                format!("table: {name}, most admitted in one window"),
                quote,
            )
            .target(target, Unit::Count)
            .ours(count(busiest_in(rows, at)))
            .note(format!(
                "{from_rows}; the two-tick attack gives {}",
                busiest_in(attack, at).map_or("-".into(), |b| b.to_string())
            ))
            .command(cmd(rows, BOUNDARY_ROWS_TRAFFIC, at))
            .prints(Metric::BusiestMax)
            .judged(),
        );
    }
    out.push(
        Claim::new(
            BOUNDARY,
            S,
            "table: gap in most admitted in one window",
            "2.0×",
        )
        .target(2.0, Unit::Times)
        .ours(
            busiest_in(rows, BOUNDARY_FIXED)
                .zip(busiest_in(rows, BOUNDARY_LOG))
                .map(|(f, l)| Value::Exact(f as f64 / l.max(1) as f64, Unit::Times)),
        )
        .note("the attack of 180, both rows above")
        .judged(),
    );
    for (at, name) in [
        (BOUNDARY_FIXED, "fixed window"),
        (BOUNDARY_LOG, "sliding window"),
    ] {
        let mut row = Claim::new(
            BOUNDARY,
            S,
            format!("table: {name}, share of requests admitted"),
            "0.50",
        )
        .target(0.5, Unit::Share)
        .ours(over.map(|(_, r)| share(served(r, at))))
        .note(format!(
            "a Poisson client offering twice the limit (an exact log there is an Erlang loss system, 1 − B(60, 120) = {}; a fixed window's E[min(N, 60)]/E[N] is {}); under the two-tick attack alone: {}",
            value_text(Value::Exact(theory::sliding_log_served(BOUNDARY_LIMIT, 2.0), Unit::Share)),
            value_text(Value::Exact(theory::fixed_window_served(BOUNDARY_LIMIT, 2.0), Unit::Share)),
            attack.map_or("-".into(), |(_, r)| fixed(r.runs[0][at].served_share().unwrap_or(0.0), 2)),
        ))
        .command(cmd(over, "steady:load=2", at))
        .prints(Metric::Served)
        .why("a Poisson client's windows are sometimes under the limit and sometimes over it, and an exact log turns away more of what comes over than a fixed window does");
        let evenly_share = evenly.map(|(_, r)| r.runs[0][at].served_share().unwrap_or(0.0));
        row = row
            .tried(
                "an evenly spaced client offering twice the limit, one request every 500 ms",
                evenly_share.map(|s| Value::Exact(s, Unit::Share)),
                cmd(evenly, EVENLY_TRAFFIC, at),
            )
            .also(
                cmd(evenly, EVENLY_TRAFFIC, at),
                Metric::Served,
                evenly_share.unwrap_or(0.0),
            );
        out.push(row.judged());
    }
    for (at, name, quote, target) in [
        (BOUNDARY_FIXED, "fixed window", "60.0", 60.0),
        (BOUNDARY_LOG, "sliding window", "120.0", 120.0),
    ] {
        out.push(
            Claim::new(
                BOUNDARY,
                S,
                format!("table: {name}, rejected under the attack"),
                quote,
            )
            .target(target, Unit::Count)
            .ours(count(rejected_in(rows, at)))
            .note(format!(
                "{from_rows}; the two-tick attack offers 120 and gives {} (equal admitted shares of one arrival stream would mean equal rejections, so the table's rows cannot all come from one client)",
                rejected_in(attack, at).map_or("-".into(), |b| b.to_string())
            ))
            .command(cmd(rows, BOUNDARY_ROWS_TRAFFIC, at))
            .prints(Metric::Rejected)
            .judged(),
        );
    }
    let bound = |at: usize| {
        attack
            .and_then(|(j, _)| theory::worst_case(&j.scenario.limiters[at], BOUNDARY_LIMIT, MINUTE))
    };
    for (at, b) in [(BOUNDARY_BUCKET_60, 60u64), (BOUNDARY_BUCKET_10, 10)] {
        let got = count(busiest_in(attack, at));
        let row = if b == 60 {
            Claim::new(
                BOUNDARY,
                S,
                "token bucket, capacity 60: the attack's busiest window exceeds 60",
                "the invariant still goes red",
            )
            .range(61.0, 120.0, Unit::Count)
        } else {
            Claim::new(
                BOUNDARY,
                S,
                "token bucket, capacity 10: the attack's busiest window stays within 60",
                "Clean",
            )
            .range(0.0, 60.0, Unit::Count)
        };
        out.push(
            row.derived()
                .ours(got)
                .note("the attack extracts the burst plus about one token of refill")
                .command(cmd(attack, "boundary-burst", at))
                .prints(Metric::BusiestMax)
                .judged(),
        );
        let mut row = Claim::new(
            BOUNDARY,
            S,
            format!("token bucket, capacity {b}: worst case over any arrivals"),
            if b == 60 {
                "the worst case is still 120"
            } else {
                "burst + limit"
            },
        )
        .target((b + BOUNDARY_LIMIT) as f64, Unit::Count);
        if b != 60 {
            row = row.derived();
        }
        let spec = attack.map(|(j, _)| &j.scenario.limiters[at]);
        out.push(
            row
                .ours(bound(at).map(|x| Value::Exact(x as f64, Unit::Count)))
                .note("B + L − 1, from ratelab::theory::worst_case; a flood reaches it")
                .why("ratelab counts a window as (t − W, t]: the L-th token refilled after the burst arrives exactly one window after it, just outside")
                .tried(
                    "a closed window [t − W, t], as burst + limit counts",
                    spec.and_then(|spec| closed_window_busiest(spec, BOUNDARY_LIMIT, MINUTE))
                        .map(|x| Value::Exact(x as f64, Unit::Count)),
                    "ratelab's study: a flood of one request a millisecond after a quiet window, its admissions counted in every closed window",
                )
                .judged(),
        );
    }
}

/// The most admissions of `spec` (a limit of `limit` per `window`) in any closed window
/// `[t − W, t]`, under a flood of one request a millisecond for two windows after a quiet
/// one: the count a closed-window convention gives where ratelab's half-open one gives its
/// worst case.
pub(super) fn closed_window_busiest(
    spec: &crate::spec::LimiterSpec,
    limit: u64,
    window: u64,
) -> Option<u64> {
    use crate::limiter::Decide;
    let scenario = crate::Scenario {
        limit,
        window,
        ..crate::Scenario::default()
    };
    let mut limiter = scenario.build_limiter(spec, 0).ok()?;
    let every = crate::time::MS;
    let admitted: Vec<u64> = (0..2 * window / every)
        .map(|i| window + i * every)
        .filter(|&t| limiter.decide(t).admitted())
        .collect();
    // In whole µs the closed window [t − W, t] is the half-open (t − W − 1, t].
    let busiest = crate::analysis::busiest_windows(&admitted, window + 1, 1);
    Some(busiest.first().map_or(0, |w| w.count))
}
