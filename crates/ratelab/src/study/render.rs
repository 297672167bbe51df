//! The study's output as text: tables as CSV and Markdown, and REPRODUCTION.md.

use super::tables::{StudyReport, Table};

impl Table {
    /// The table as CSV (fields quoted where needed).
    pub fn csv(&self) -> String {
        let mut out = crate::text::csv_record(&self.header);
        for row in &self.rows {
            out += &crate::text::csv_record(row);
        }
        out
    }

    /// The table as Markdown, with its title as a heading.
    pub fn markdown(&self) -> String {
        let cell = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "### {}\n\n| {} |\n|{}|\n",
            self.title,
            self.header
                .iter()
                .map(|h| cell(h))
                .collect::<Vec<_>>()
                .join(" | "),
            vec![" --- "; self.header.len()].join("|")
        );
        for row in &self.rows {
            out += &format!(
                "| {} |\n",
                row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }
}

impl StudyReport {
    /// REPRODUCTION.md: every essay number the study covers beside ratelab's.
    pub fn reproduction(&self) -> String {
        let mut out = format!(
            "# Reproduction of \"The Rule Was the Strict Part\"\n\nratelab study at {} runs × {} minutes, seed {}. Shares are fractions (0.710 is 71.0%).\nDifferences beyond 3 standard errors are explained in the note column.\n\n| what | essay | ratelab ± SE | difference (SE) | note |\n| --- | --- | --- | --- | --- |\n",
            self.config.runs, self.config.minutes, self.config.seed
        );
        for c in &self.comparisons {
            let z = c.z();
            let within_rounding = (c.ours.mean - c.essay).abs() <= c.rounding();
            let note = match z {
                Some(z) if z.abs() > 3.0 && within_rounding => {
                    "within the essay's rounding of its last digit".to_owned()
                }
                Some(z) if z.abs() > 3.0 && c.note.is_empty() => {
                    "beyond 3 SE: see the notes below".to_owned()
                }
                _ => c.note.clone(),
            };
            out += &format!(
                "| {} | {} | {:.4} ± {:.4} | {} | {} |\n",
                c.what,
                c.essay,
                c.ours.mean,
                c.ours.se,
                z.map_or("-".into(), |z| format!("{z:+.1}")),
                note
            );
        }
        out += NOTES;
        out
    }
}

/// Why some numbers differ, for REPRODUCTION.md.
const NOTES: &str = "
## Notes

- **Traffic shapes.** The essay describes its shapes in words only. ratelab uses Poisson group
  starts, geometric group sizes (means 5, 20, 50) spread uniformly over 1 s, 1 s and 2 s, and an
  on/off client with Pareto (α = 1.5, mean 30 s) active periods, busy 20% of the time. Numbers
  that depend on the exact burst distribution (the honest-client table, the B = 50 count) can
  differ by more than their standard error for that reason alone.
- **Splitting.** The essay routes \"at random\" without saying how; ratelab draws each request's
  server from its own PCG stream, uniformly. A difference at K = 20 of about a tenth of a point
  is within what a different routing draw (per request or per burst) would change.
- **The weakened greedy** here is the sliding log that records its rejects; the essay does not
  say which weakening it used, so the count of cases it loses is not comparable.
- **The window** is half-open, (t − W, t]; the essay's token-bucket worst case B + 99 is exactly
  this convention's B + L − 1.
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_markdown_escape_their_fields() {
        let t = Table {
            id: "x".into(),
            title: "T".into(),
            header: vec!["a".into(), "b".into()],
            rows: vec![vec!["1,5".into(), "x|y".into()]],
        };
        assert_eq!(t.csv(), "a,b\n\"1,5\",x|y\n");
        assert!(t.markdown().contains("| 1,5 | x\\|y |"));
    }
}
