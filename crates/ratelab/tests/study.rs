//! The study at a reduced size: its laws hold exactly, and its tables agree with theory
//! within the stated standard errors.

use ratelab::study::{assemble, plan, run_job, StudyConfig};

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

    // Theory, within 4 standard errors (the SE column is the difference in SE).
    for row in &table("theory").rows {
        for col in [3, 6] {
            let z: f64 = row[col].parse().unwrap_or(0.0);
            assert!(z.abs() < 4.0, "{row:?}");
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
    assert!(report
        .reproduction()
        .contains("| sliding log served, page loads at 80% | 0.71 |"));
}
