//! The first essay's retry lockout, the limit split across servers, and its takeaways.

use super::study::{command, given_retry, measured, parse_pct, pooled_row, share, Study, RULE};
use crate::decimal::{fixed, shortest};
use crate::study::claims::{value_text, Claim, Unit, Value};
use crate::study::experiments::{
    lockout_traffic, split_bucket, split_log, JobKind, BUCKET_50, BUCKET_75, GCRA, PAGE_LOADS,
    RETRY_COUNTER_RECORDING, RETRY_FIXED, RETRY_FIXED_RECORDING, RETRY_FORGETTING, RETRY_RATES,
    RETRY_RECORDING, RETRY_TRIES, SERVERS, SERVERS_10, STEADY,
};
use crate::study::measure::{locked, served, Estimate};
use crate::study::plan::StudyConfig;
use crate::theory;

/// The lowest client rate of the grid at which every run of `at` was locked out, with `tries`.
pub(super) fn lockout_rate(study: &Study, tries: u32, at: usize) -> Option<Option<u64>> {
    let mut any = false;
    for &rate in &RETRY_RATES {
        let (_, r) = study.get(&JobKind::Retry { rate, tries })?;
        any = true;
        if r.runs.iter().all(|run| locked(&run[at])) {
            return Some(Some(rate));
        }
    }
    any.then_some(None)
}

pub(super) fn lockout(study: &Study, out: &mut Vec<Claim>) {
    const S: &str = "Counting the rejects";
    let retry = |rate, tries| study.get(&JobKind::Retry { rate, tries });
    // The fixed window: recording changes nothing.
    let (mut same, mut runs) = (0u64, 0u64);
    let mut all_locked = Vec::new();
    let mut forgetting = Vec::new();
    let mut below_limit = Vec::new();
    let mut outside = Vec::new();
    // The same tolerance the row's verdict uses: half a point either side of "95% to 99%".
    let slack = crate::study::claims::rounding_of("95% to 99%", Unit::Share);
    for &rate in &RETRY_RATES {
        for &tries in &RETRY_TRIES {
            let Some((_, r)) = retry(rate, tries) else {
                continue;
            };
            for run in &r.runs {
                runs += 1;
                same += u64::from(run[RETRY_FIXED] == run[RETRY_FIXED_RECORDING]);
            }
            if r.runs.iter().all(|run| locked(&run[RETRY_RECORDING])) {
                all_locked.push(served(r, RETRY_RECORDING).mean);
            }
            forgetting.push(served(r, RETRY_FORGETTING).mean);
            let f = served(r, RETRY_FORGETTING).mean;
            if rate < 100 {
                below_limit.push(f);
            }
            if !(0.95 - slack..=0.99 + slack).contains(&f) {
                outside.push(format!(
                    "{rate}/min, {tries} tries: {}%",
                    fixed(100.0 * f, 1)
                ));
            }
        }
    }
    out.push(
        Claim::new(
            RULE,
            S,
            "fixed window: runs identical with and without recording rejects",
            "the results were identical",
        )
        .target(runs as f64, Unit::Count)
        .derived()
        .ours((runs > 0).then_some(Value::Of(same, runs)))
        .note("every run of the lockout grid: admitted, busiest minute and every audit count equal")
        .judged(),
    );
    out.push(given_retry("the spike", "200 requests at minute 5", 200.0));
    out.push(given_retry("the retry gap, seconds", "once a second", 1.0));
    out.push(given_retry("minutes per run", "the 200 minutes", 200.0));
    let range = |v: &[f64]| {
        (!v.is_empty()).then(|| {
            Value::Range(
                v.iter().copied().fold(f64::INFINITY, f64::min),
                v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Unit::Share,
            )
        })
    };
    let any_run = RETRY_RATES
        .iter()
        .any(|&rate| RETRY_TRIES.iter().any(|&t| retry(rate, t).is_some()));
    out.push(
        Claim::new(
            RULE,
            S,
            "served where every run locked out (log recording rejects)",
            "1% to 6%",
        )
        .range(0.01, 0.06, Unit::Share)
        .ours(if any_run { range(&all_locked) } else { None })
        .note(format!(
            "{} cells of the grid locked in every run; table lockout",
            all_locked.len()
        ))
        .why(if study.config.runs == StudyConfig::FULL.runs {
            String::new()
        } else {
            format!(
                "\"every run locked\" is a weaker test with {} runs than with the essay's 20, so cells that lock only sometimes count too",
                study.config.runs
            )
        })
        .judged(),
    );
    // The lockout point against "tries × rate = limit".
    let mut ratios = Vec::new();
    let mut intervals = Vec::new();
    let mut points = Vec::new();
    let mut earlier = (0u64, 0u64);
    for &tries in &RETRY_TRIES {
        let Some(log_rate) = lockout_rate(study, tries, RETRY_RECORDING) else {
            continue;
        };
        let counter_rate = lockout_rate(study, tries, RETRY_COUNTER_RECORDING).flatten();
        match log_rate {
            Some(rate) => {
                let ratio = f64::from(tries) * rate as f64 / 100.0;
                let below = RETRY_RATES
                    .iter()
                    .rev()
                    .find(|&&r| r < rate)
                    .map_or(0.0, |&r| f64::from(tries) * r as f64 / 100.0);
                ratios.push(ratio);
                intervals.push((below, ratio));
                points.push(format!(
                    "{tries} tries: {rate}/min, so between {}× and {}×",
                    fixed(below, 1),
                    fixed(ratio, 1)
                ));
                earlier.1 += 1;
                earlier.0 += u64::from(counter_rate.is_some_and(|c| c <= rate));
            }
            None => points.push(format!(
                "{tries} tries: none up to {}/min (over {}×)",
                RETRY_RATES[RETRY_RATES.len() - 1],
                fixed(
                    f64::from(tries) * RETRY_RATES[RETRY_RATES.len() - 1] as f64 / 100.0,
                    1
                )
            )),
        }
    }
    out.push(
        Claim::new(
            RULE,
            S,
            "lockout point, as a multiple of tries × rate = limit",
            "roughly 1.6 to 3 times it",
        )
        .range(1.6, 3.0, Unit::Times)
        .ours((!ratios.is_empty()).then(|| {
            Value::Range(
                ratios.iter().copied().fold(f64::INFINITY, f64::min),
                ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Unit::Times,
            )
        }))
        .note(format!(
            "lowest rate of the grid at which every run locks: {}",
            points.join("; ")
        ))
        .judged(),
    );
    let rising = ratios.windows(2).filter(|w| w[1] >= w[0]).count() as u64;
    // Each lockout point is only known to lie in its grid interval (above the rate below,
    // at most the rate where every run locks): the steps that can rise with every point
    // anywhere in its interval, taking each as low as the one before allows.
    let can_rise = {
        let (mut count, mut last) = (0u64, None::<f64>);
        for &(lo, hi) in &intervals {
            let x = last.map_or(lo, |l: f64| l.max(lo));
            if last.is_some() && x <= hi {
                count += 1;
            }
            last = Some(if x <= hi { x } else { lo });
        }
        count
    };
    out.push(
        Claim::new(RULE, S, "the lockout multiple does not fall as tries grow (steps)", "higher with more retries")
            .target(ratios.len().saturating_sub(1) as f64, Unit::Count)
            .derived()
            .ours((ratios.len() > 1).then(|| Value::Of(rising, ratios.len() as u64 - 1)))
            .note(format!(
                "from {} at the fewest tries to {} at the most",
                ratios.first().map_or("-".into(), |r| format!("{}×", fixed(*r, 1))),
                ratios.last().map_or("-".into(), |r| format!("{}×", fixed(*r, 1)))
            ))
            .why("the rise holds from the fewest tries to the most but not at every step of the grid's points")
            .tried(
                "each lockout point anywhere in its grid interval (the row above lists them)",
                (intervals.len() > 1).then(|| Value::Of(can_rise, intervals.len() as u64 - 1)),
                "the lockout table",
            )
            .judged(),
    );
    out.push(
        Claim::new(RULE, S, "served with rejects not recorded, every rate and tries", "95% to 99%")
            .range(0.95, 0.99, Unit::Share)
            .ours(if any_run { range(&forgetting) } else { None })
            .note(if outside.is_empty() {
                String::new()
            } else {
                format!("outside 95% to 99% and its rounding: {}", outside.join(", "))
            })
            .why(format!(
                "at 100 a minute the client is at the limit, where an exact log serves 1 − B(100, 100) = {}% with no spike at all", fixed(100.0 * theory::sliding_log_served(100, 1.0), 1)
            ))
            .tried(
                "the essay's clients all below the limit (the grid's rates under 100 a minute)",
                if any_run { range(&below_limit) } else { None },
                "table lockout, its rows under 100 a minute",
            )
            .judged(),
    );
    out.push(
        Claim::new(RULE, S, "tries where the counter recording rejects locks at the same or a lower rate than the log", "locking slightly earlier")
            .target(earlier.1 as f64, Unit::Count)
            .derived()
            .ours((earlier.1 > 0).then_some(Value::Of(earlier.0, earlier.1)))
            .judged(),
    );
    let quarter = RETRY_TRIES
        .iter()
        .filter_map(|&t| retry(25, t))
        .map(|(_, r)| {
            r.runs
                .iter()
                .filter(|run| locked(&run[RETRY_RECORDING]))
                .count() as u64
        })
        .max();
    let runs25 = retry(25, RETRY_TRIES[0]).map_or(0, |(_, r)| r.runs.len() as u64);
    let mut row = Claim::new(
        RULE,
        S,
        "runs locked out at 25 a minute, most of any tries",
        "a client using a quarter of its quota",
    )
    .target(runs25 as f64, Unit::Count)
    .derived()
    .ours(quarter.map(|k| Value::Of(k, runs25)));
    // Whether a run locked out is the study's reading of its decisions, which `simulate`
    // does not print: the scenario is named, not a command for the count.
    if let Some((j, _)) = retry(25, 12) {
        row = row.note(format!(
            "the scenario, at the most tries: `{}`",
            command(j, RETRY_RECORDING, &lockout_traffic(100, 25, 12))
        ));
    }
    out.push(row.judged());
}

pub(super) fn split(study: &Study, out: &mut Vec<Claim>) {
    const S: &str = "Splitting the limit";
    for (j, (k, quote)) in SERVERS
        .iter()
        .zip(["99.6%", "95.0%", "87.9%", "80.2%"])
        .enumerate()
    {
        let exact = 1.0 - theory::erlang_b(100 / u64::from(*k), 80.0 / f64::from(*k));
        let target = parse_pct(quote);
        let side = if target > exact { "above" } else { "below" };
        let off = format!(
            "the essay's figure is {} points {side} the exact value, 1 − B({}, {}) = {}",
            fixed(100.0 * (target - exact).abs(), 2),
            100 / k,
            shortest(80.0 / f64::from(*k)),
            value_text(Value::Exact(exact, Unit::Share))
        );
        let mut row = Claim::new(
            RULE,
            S,
            format!("sliding log on K = {k} servers, steady at 80%"),
            quote,
        )
        .target(target, Unit::Share)
        .why(format!(
            "{off}, and ratelab's simulation agrees with the exact value (next row)"
        ));
        let part = study.part(JobKind::Split { shape: STEADY }, split_log(j));
        let simulated = part.map(|(_, r, at)| served(r, at));
        let simulation = part
            .map(|(job, _, at)| command(job, at, "steady:load=0.8"))
            .unwrap_or_default();
        row = if j == 0 {
            pooled_row(row, study.steady_log_80())
        } else {
            // The essay's figure is a simulation of the same size: two such estimates differ
            // by their combined standard error, √2 times one.
            measured(row, part, "steady:load=0.8").tried(
                "the essay's figure as a simulation of this size, with a standard error like ratelab's (two such estimates differ by √2 of it)",
                simulated.map(|e| share(Estimate { mean: e.mean, se: e.se * std::f64::consts::SQRT_2 })),
                simulation.clone(),
            )
        };
        out.push(row.judged());
        let mut exactly = Claim::new(RULE, S, format!("the same, exactly: 1 − B({}, {})", 100 / k, shortest(80.0 / f64::from(*k))), quote)
            .target(target, Unit::Share)
            .ours(Some(Value::Exact(exact, Unit::Share)))
            .note("uniform random routing gives each server Poisson traffic at 80/K a minute, and an exact log on it is an Erlang loss system with 100/K slots held one window each")
            .why(off);
        if j > 0 {
            exactly = exactly.tried(
                "the essay's figure as a simulation of this size around the exact value, with ratelab's standard error",
                simulated.map(|e| share(Estimate { mean: exact, se: e.se })),
                simulation,
            );
        }
        out.push(exactly.judged());
    }
    for (j, quote) in [(0, "71.0%"), (SERVERS_10, "67.7%")] {
        let mut row = Claim::new(
            RULE,
            S,
            format!(
                "sliding log on K = {} servers, page loads at 80%",
                SERVERS[j]
            ),
            quote,
        )
        .target(parse_pct(quote), Unit::Share);
        row = if j == 0 {
            pooled_row(row, study.page_log_80())
        } else {
            measured(
                row,
                study.part(JobKind::Split { shape: PAGE_LOADS }, split_log(j)),
                "page-loads:load=0.8",
            )
        };
        out.push(row.judged());
    }
    for (j, quote) in [(0, "100%"), (SERVERS_10, "99.6%")] {
        let mut row = Claim::new(
            RULE,
            S,
            format!(
                "token buckets (B = 100/K) on K = {} servers, steady at 80%",
                SERVERS[j]
            ),
            quote,
        )
        .target(parse_pct(quote), Unit::Share);
        row = measured(
            row,
            study.part(JobKind::Split { shape: STEADY }, split_bucket(j)),
            "steady:load=0.8",
        );
        out.push(row.judged());
    }
}

pub(super) fn takeaways(study: &Study, out: &mut Vec<Claim>) {
    const S: &str = "What I'd take from it";
    let attack = study.get(&JobKind::Attacker);
    let reach = attack.map(|(_, r)| {
        let buckets = [(BUCKET_50, 50), (BUCKET_75, 75), (GCRA, 100)];
        let k = buckets
            .iter()
            .filter(|&&(at, b)| r.runs[0][at].busiest == b + 99)
            .count();
        Value::Of(k as u64, buckets.len() as u64)
    });
    out.push(
        Claim::new(
            RULE,
            S,
            "buckets (B = 50, 75, 100) whose worst minute is exactly B + 99",
            "exactly B + 99",
        )
        .target(3.0, Unit::Count)
        .derived()
        .ours(reach)
        .note("ratelab's window is (t − W, t]: the bound is B + L − 1, the essay's B + 99")
        .judged(),
    );
}
