//! Every numeric claim of both essays, in the order they make them, each beside the
//! experiment of the study that measures it.
//!
//! The claims are split by part: [`honest`](mod@honest) and [`counter`](mod@counter) for the
//! first essay's tables, [`retries`] for its lockout, split and takeaways,
//! [`boundary`](mod@boundary) for the second essay; each
//! reads the study through [`study`].

mod boundary;
mod counter;
mod honest;
mod retries;
mod study;

use crate::decimal::{fixed, shortest};
use crate::study::claims::{Claim, Unit, Value};
use crate::study::experiments::JobResult;
use crate::study::experiments::{
    JobKind, FIXED_WINDOW, GCRA, GCRA_TWIN, LOADS, SHAPES, SLIDING_LOG, STEADY, THEORY_FIXED,
    THEORY_LOG,
};
use crate::study::plan::{Job, StudyConfig};
use crate::theory;
use boundary::boundary;
use counter::counter;
use honest::{attacker, honest};
use retries::{lockout, split, takeaways};
use study::{parse_pct, pooled_row, Study, RULE};

/// Every claim of both essays, with ratelab's values from whatever results are in.
pub(super) fn claims(
    config: StudyConfig,
    jobs: &[Job],
    results: &[Option<JobResult>],
) -> Vec<Claim> {
    let study = Study {
        jobs,
        results,
        config,
    };
    let mut out = Vec::new();
    setup(&mut out);
    checks(&study, &mut out);
    attacker(&study, &mut out);
    honest(&study, &mut out);
    counter(&study, &mut out);
    lockout(&study, &mut out);
    split(&study, &mut out);
    takeaways(&study, &mut out);
    boundary(&study, &mut out);
    out
}

fn setup(out: &mut Vec<Claim>) {
    const S: &str = "The setup";
    let given = |what: &str, quote: &str, value: f64, unit| {
        Claim::new(RULE, S, what, quote).given(value, unit)
    };
    out.push(given(
        "the limit, per 60 s",
        "a limit of 100 per 60 seconds",
        100.0,
        Unit::Count,
    ));
    out.push(given("runs per cell", "20 runs", 20.0, Unit::Count));
    out.push(given(
        "minutes per run",
        "2,000 minutes",
        2000.0,
        Unit::Count,
    ));
    out.push(
        given(
            "loads of the honest-client table",
            "30%, 50%, 80% and 100%",
            LOADS.len() as f64,
            Unit::Count,
        )
        .note("ratelab runs the same four"),
    );
    for (what, quote, size) in [
        ("small bursts: mean group size", "groups of about 5", 5.0),
        ("page loads: mean group size", "about 20", 20.0),
        ("big bursts: mean group size", "about 50", 50.0),
    ] {
        out.push(given(what, quote, size, Unit::Count).note(
            "sizes are geometric with this mean, spread over 1 s (small bursts, page loads) or 2 s (big bursts)",
        ));
    }
    out.push(
        given("on/off: share of time busy", "busy 20% of the time", 0.2, Unit::Share).note(
            "active periods Pareto (α = 1.5, mean 30 s), quiet ones exponential (mean 120 s); the essay gives no rate while active: ratelab sends 5× the average",
        ),
    );
}

fn checks(study: &Study, out: &mut Vec<Claim>) {
    const S: &str = "Three checks";
    for (load, quote_log, quote_erlang, quote_fixed, quote_poisson) in [
        (0.8, "99.61%", "99.60%", "99.94%", "99.94%"),
        (1.0, "92.41%", "92.43%", "96.00%", "96.01%"),
        (1.2, "80.35%", "80.37%", "83.21%", "83.23%"),
    ] {
        // The same limiter on the same steady traffic also runs in the honest table (80%,
        // 100%) and, for the log at 80%, in the split experiment on one server.
        let honest_load = LOADS.iter().position(|&l| l == load);
        let pct_load = format!("{}%", fixed(100.0 * load, 0));
        for (at_theory, at_honest, name, quote_sim, quote_theory, exact, formula) in [
            (
                THEORY_LOG,
                SLIDING_LOG,
                "sliding log",
                quote_log,
                quote_erlang,
                theory::sliding_log_served(100, load),
                "1 − Erlang B",
            ),
            (
                THEORY_FIXED,
                FIXED_WINDOW,
                "fixed window",
                quote_fixed,
                quote_poisson,
                theory::fixed_window_served(100, load),
                "E[min(N, 100)] / E[N]",
            ),
        ] {
            let traffic = format!("steady:load={}", shortest(load));
            let pool = if load == 0.8 && at_theory == THEORY_LOG {
                study.steady_log_80()
            } else {
                study.pool(
                    &traffic,
                    &[
                        (
                            "theory check",
                            study.part(JobKind::Theory { load }, at_theory),
                        ),
                        (
                            "honest table",
                            honest_load.and_then(|l| study.honest(STEADY, l, at_honest)),
                        ),
                    ],
                )
            };
            let row = Claim::new(
                RULE,
                S,
                format!("{name} served, steady at {pct_load}: simulated"),
                quote_sim,
            )
            .target(parse_pct(quote_sim), Unit::Share);
            let row = pooled_row(row, pool);
            out.push(row.judged());
            out.push(
                Claim::new(
                    RULE,
                    S,
                    format!("{name} served, steady at {pct_load}: {formula}"),
                    quote_theory,
                )
                .target(parse_pct(quote_theory), Unit::Share)
                .ours(Some(Value::Exact(exact, Unit::Share)))
                .note("computed exactly in ratelab::theory")
                .judged(),
            );
        }
    }
    // Token bucket and GCRA in every honest run.
    let (mut equal, mut runs) = (0u64, 0u64);
    for s in 0..SHAPES.len() {
        for l in 0..LOADS.len() {
            if let Some((_, r)) = study.get(&JobKind::Honest { shape: s, load: l }) {
                for run in &r.runs {
                    runs += 1;
                    equal += u64::from(run[GCRA].admitted == run[GCRA_TWIN].admitted);
                }
            }
        }
    }
    out.push(
        Claim::new(
            RULE,
            S,
            "token bucket and GCRA admitted the same count",
            "in all 400 runs",
        )
        .target(runs as f64, Unit::Count)
        .ours((runs > 0).then_some(Value::Of(equal, runs)))
        .note("B = 100 both, beside every honest cell: 20 cells × 20 runs at the essay's size")
        .judged(),
    );
    out.push(
        Claim::new(RULE, S, "the first version's checks failed by", "4 to 5 standard errors")
            .unreproducible("the essay's own first random number generator, since replaced; ratelab has one PCG generator, and its checks are the rows above"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{plan, run_job, StudyConfig, Verdict};

    /// A page shows the report while results come in: with any subset of the jobs done, every
    /// claim still has a row, and a claim whose experiment has not run says so.
    #[test]
    fn any_subset_of_results_gives_every_row_without_a_panic() {
        let config = StudyConfig {
            runs: 2,
            minutes: 10,
            seed: 3,
        };
        let jobs = plan(config).expect("valid plan");
        let all: Vec<Option<JobResult>> = jobs
            .iter()
            .map(|j| Some(run_job(j).expect("runs")))
            .collect();
        let full = claims(config, &jobs, &all);
        let none = claims(config, &jobs, &vec![None; jobs.len()]);
        assert_eq!(full.len(), none.len());
        // Without results only the formulas (computed, not simulated) have values.
        for c in &none {
            if !matches!(
                c.verdict,
                Verdict::Missing | Verdict::Given | Verdict::NotReproducible
            ) {
                assert!(
                    matches!(c.ours, Some(Value::Exact(_, Unit::Share)))
                        && c.note.contains("exact"),
                    "{c:?}"
                );
            }
        }
        // Each job alone, and all but each job.
        for i in 0..jobs.len() {
            let mut one = vec![None; jobs.len()];
            one[i] = all[i].clone();
            let _ = claims(config, &jobs, &one);
            let mut but = all.clone();
            but[i] = None;
            let _ = claims(config, &jobs, &but);
        }
    }
}
