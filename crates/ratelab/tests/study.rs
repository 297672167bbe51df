//! The study at a reduced size: its laws hold exactly, and its tables agree with theory
//! within the stated standard errors.

use ratelab::study::{
    assemble, plan, run_job, JobKind, StudyConfig, Verdict, LIMITERS, LOADS, SHAPES,
};

#[test]
fn a_reduced_study_keeps_its_laws_and_agrees_with_theory() {
    let config = StudyConfig {
        runs: 6,
        minutes: 300,
        seed: 7,
    };
    let jobs = plan(config).expect("valid plan");
    let results: Vec<_> = jobs
        .iter()
        .map(|j| Some(run_job(j).expect("runs")))
        .collect();
    let report = assemble(config, &jobs, &results);
    let table = |id: &str| {
        report
            .tables
            .iter()
            .find(|t| t.id == id)
            .unwrap_or_else(|| panic!("table {id}"))
    };

    // Exact laws.
    let checks = table("checks");
    assert_eq!(
        checks.rows[0][1], "in 120 of 120 runs",
        "token bucket equals GCRA in every run"
    );
    assert_eq!(
        checks.rows[1][1], "in 0 of 3000 cases",
        "greedy is never beaten"
    );
    assert!(
        report
            .swc_offsets
            .iter()
            .all(|(_, sim, formula)| Some(*sim) == *formula),
        "the counter matches its formula at every offset"
    );
    assert_eq!(report.swc_offsets.len(), 51);
    for row in &table("attacker").rows {
        assert_eq!(
            row[1], row[2],
            "{} reaches its bound under the flood",
            row[0]
        );
    }

    // Theory, within 12 standard errors (the SE column is the difference in SE, printed to
    // one decimal). Six checks, each SE from 6 runs: z follows Student's t with 5 degrees of
    // freedom, and at 4 SE the six would fail by chance 6% of the time (seed changes alone);
    // at 12, at most 0.04%. This only catches gross errors: tests/theory.rs is the precise
    // check, at 20 runs. Every cell must be a number: "-" (no spread) or a new format fails.
    let theory = table("theory");
    assert_eq!(theory.rows.len(), 3, "one row per load");
    for row in &theory.rows {
        for col in [3, 6] {
            let z: f64 = row[col]
                .parse()
                .unwrap_or_else(|e| panic!("column {col} of {row:?} is not a number: {e}"));
            assert!(z.abs() < 12.0, "{row:?}");
        }
    }
    // Every honest cell is filled, and the sliding log never breaks the rule.
    let honest = table("honest");
    assert_eq!(honest.rows.len(), 20);
    for row in &honest.rows {
        // Column 3 is the sliding log: "served ± SE [busiest]".
        let busiest: f64 = row[3]
            .rsplit('[')
            .next()
            .and_then(|b| b.trim_end_matches(']').parse().ok())
            .expect("a busiest minute");
        assert!(busiest <= 100.0, "{row:?}");
    }

    // The reproduction report gives ratelab's own number beside the essay's, recomputed here
    // from the raw runs of that cell: admitted / offered per run, their mean and the standard
    // error of the mean (sample SD / sqrt(runs)).
    let index = |name: &str| SHAPES.iter().position(|&s| s == name).expect("a shape");
    let load = LOADS.iter().position(|&l| l == 0.8).expect("80%");
    let runs_of = |kind: JobKind| {
        jobs.iter()
            .position(|j| j.kind == kind)
            .and_then(|i| results[i].as_ref())
            .expect("a result")
    };
    let log = LIMITERS
        .iter()
        .position(|&l| l == "sliding-log")
        .expect("the sliding log");
    let shares = |cell: &ratelab::study::JobResult, at: usize| -> Vec<f64> {
        cell.runs
            .iter()
            .map(|run| run[at].admitted as f64 / run[at].offered as f64)
            .collect()
    };
    let mean_se = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        (mean, sd / n.sqrt())
    };
    let big = shares(
        runs_of(JobKind::Honest {
            shape: index("big-bursts"),
            load,
        }),
        log,
    );
    assert_eq!(big.len(), 6);
    let (mean, se) = mean_se(&big);
    let z = (mean - 0.562) / se;
    let row = format!(
        "| sliding log served, big bursts at 80% | \"56.2%\" | {:.2} ± {:.2}% | {z:+.1} SE |",
        100.0 * mean,
        100.0 * se
    );
    let reproduction = report.reproduction();
    assert!(
        reproduction.contains(&row),
        "{row} not in the reproduction report:\n{reproduction}"
    );
    // One quantity, one estimate: the sliding log at page loads, 80%, is run by the honest
    // table, the rule-obeying search (first limiter) and the split experiment (K = 1, first
    // limiter), and the report pools all their runs.
    let page = index("page-loads");
    let mut pooled = shares(runs_of(JobKind::Honest { shape: page, load }), log);
    pooled.extend(shares(runs_of(JobKind::Obeying { shape: page }), 0));
    pooled.extend(shares(runs_of(JobKind::Split { shape: page }), 0));
    assert_eq!(pooled.len(), 18);
    let (mean, se) = mean_se(&pooled);
    let row = format!(
        "| sliding log served, page loads at 80% | \"the log's 71.0%\" | {:.2} ± {:.2}% |",
        100.0 * mean,
        100.0 * se
    );
    assert!(
        reproduction.contains(&row),
        "{row} not in the reproduction report:\n{reproduction}"
    );
    // Every claim of both essays has a row, and none is left without a value at this size.
    assert!(report.claims.len() >= 80, "{} claims", report.claims.len());
    for claim in &report.claims {
        assert_ne!(claim.verdict, Verdict::Missing, "{claim:?}");
        if claim.verdict == Verdict::Explained || claim.verdict == Verdict::NotReproducible {
            assert!(!claim.why.is_empty(), "{claim:?}");
        }
    }
}
