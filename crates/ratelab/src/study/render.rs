//! The study's output as text: tables as CSV and Markdown, and REPRODUCTION.md.

use super::claims::{Essay, Verdict};
use super::plan::StudyConfig;
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
    /// REPRODUCTION.md: every numeric claim of both essays beside ratelab's value, section by
    /// section, with a verdict; each note below its table, with the command that checks it.
    pub fn reproduction(&self) -> String {
        let c = &self.config;
        let mut out = format!(
            "# Reproduction of both essays\n\n\
             `ratelab study --runs {} --minutes {} --seed {}`. Every number either essay gives is a row: \
             the essay's figure as written (*derived* where ratelab's comparison value is worked out \
             from prose), ratelab's value (± one standard error over runs), the difference (in \
             standard errors for means over runs, absolute for exact values and counts) and a verdict. \
             Every `ratelab simulate` command in a note prints the number beside it exactly (the same \
             scenario, the same seed): the row's own, or for a row pooled over several experiments \
             each part's, or another reading's.\n\n",
            c.runs, c.minutes, c.seed
        );
        let count = |v: Verdict| self.claims.iter().filter(|c| c.verdict == v).count();
        let verdicts = [
            Verdict::Match,
            Verdict::Rounding,
            Verdict::Explained,
            Verdict::Given,
            Verdict::NotReproducible,
            Verdict::Unexplained,
            Verdict::Missing,
        ];
        let summary: Vec<String> = verdicts
            .iter()
            .filter(|&&v| count(v) > 0)
            .map(|&v| format!("{} {}", count(v), v.text()))
            .collect();
        out += &format!("{} claims: {}.\n\n", self.claims.len(), summary.join(", "));
        out += "**Verdicts.** One rule for every row, applied by the code that writes this report:\n\n";
        for v in Verdict::ALL {
            out += &format!("- *{}*: {}.\n", v.text(), v.meaning());
        }
        out += "\n";
        if self.config.runs != StudyConfig::FULL.runs
            || self.config.minutes != StudyConfig::FULL.minutes
        {
            out += &format!(
                "**A smaller study than the essay's.** These are {} runs of {} minutes; the essay's are 20 of 2,000. Standard errors are wider, and the numbers that grow with a run's length (the busiest minutes) are not the essay's: `ratelab study` at its defaults reruns it at the essay's size.\n\n",
                self.config.runs, self.config.minutes
            );
        }
        out += WINDOW;
        out += "\n";
        for (essay, title) in [
            (Essay::Rule, "\"The Rule Was the Strict Part\""),
            (Essay::Boundary, "\"Rate limiting and the boundary burst\""),
        ] {
            out += &format!("\n## {title}\n");
            let mut sections: Vec<&str> = Vec::new();
            for claim in self.claims.iter().filter(|c| c.essay == essay) {
                if !sections.contains(&claim.section.as_str()) {
                    sections.push(&claim.section);
                }
            }
            for section in sections {
                out += &format!(
                    "\n### {section}\n\n| claim | essay | ratelab | difference | verdict | note |\n| --- | --- | --- | --- | --- | --- |\n"
                );
                let mut notes = Vec::new();
                for claim in self
                    .claims
                    .iter()
                    .filter(|c| c.essay == essay && c.section == section)
                {
                    let mut text = claim.note.clone();
                    let explanation = claim.explanation();
                    if !explanation.is_empty() {
                        if !text.is_empty() {
                            text += ". ";
                        }
                        text += &explanation;
                    }
                    let mark = if text.is_empty() && claim.command.is_empty() {
                        String::new()
                    } else {
                        notes.push((text, claim.command.clone()));
                        format!("[{}]", notes.len())
                    };
                    let quote = if claim.derived {
                        format!("\"{}\" *derived*", claim.quote)
                    } else {
                        format!("\"{}\"", claim.quote)
                    };
                    out += &format!(
                        "| {} | {} | {} | {} | {} | {} |\n",
                        cell(&claim.what),
                        cell(&quote),
                        cell(&claim.ours_text()),
                        claim.difference_text(),
                        claim.verdict.text(),
                        mark
                    );
                }
                if !notes.is_empty() {
                    out += "\n";
                    for (i, (text, command)) in notes.iter().enumerate() {
                        let mut line = format!("{}.", i + 1);
                        if !text.is_empty() {
                            line += &format!(" {}.", text.trim_end_matches('.'));
                        }
                        if !command.is_empty() {
                            line += &format!(" `{command}`");
                        }
                        out += &line;
                        out += "\n";
                    }
                }
            }
        }
        out += &self.guesses();
        out += NOTES;
        out
    }

    /// The guesses the essays force, swept: each table, and which values reproduce the
    /// essay, read off its last column.
    fn guesses(&self) -> String {
        let mut out = "\n## The guesses the essays force\n\nWhere an essay leaves a parameter out, ratelab \
            names its own choice and sweeps it, so that how much a row depends on it is visible. \
            The rule-obeying bucket's burst is swept in table obeying (every rate with B = 100 − rate), \
            the retry storm's tries in table lockout (2 to 12), and the flood's start in table \
            counter-offsets (51 offsets); the two below are swept for this report. The on/off \
            client's rate while active is no guess: busy 20% of the time (the essay's figure) at a \
            given average, it sends five times the average while active (`on-off:busy=` changes \
            both together).\n"
            .to_owned();
        for (id, reproduces) in [("guess-on-off", "both"), ("guess-tick-offset", "yes")] {
            let Some(t) = self.tables.iter().find(|t| t.id == id) else {
                continue;
            };
            out += "\n";
            out += &t.markdown().replacen("### ", "### Swept: ", 1);
            let hits: Vec<&str> = t
                .rows
                .iter()
                .filter(|r| r.last().map(String::as_str) == Some(reproduces))
                .map(|r| r[0].as_str())
                .collect();
            out += &format!(
                "\nThe essay's figures come out at {} of these {} values{}.\n",
                hits.len(),
                t.rows.len(),
                if hits.is_empty() {
                    String::new()
                } else {
                    format!(": {}", hits.join(", "))
                }
            );
        }
        out
    }
}

impl StudyReport {
    /// The claims as tables, one per section of each essay, titled with the essay and the
    /// section: what the page shows under the study. The last column is the note, with the
    /// explanation where the verdict needs one (the commands are in `REPRODUCTION.md`, which
    /// the page saves).
    pub fn claim_tables(&self) -> Vec<Table> {
        let mut out: Vec<Table> = Vec::new();
        for claim in &self.claims {
            let essay = match claim.essay {
                Essay::Rule => "The Rule Was the Strict Part",
                Essay::Boundary => "The boundary burst",
            };
            let title = format!("{essay}: {}", claim.section);
            if out.last().map(|t| &t.title) != Some(&title) {
                out.push(Table {
                    id: format!("claims-{}", out.len() + 1),
                    title,
                    header: ["claim", "essay", "ratelab", "difference", "verdict", "note"]
                        .map(String::from)
                        .to_vec(),
                    rows: Vec::new(),
                });
            }
            let mut note = claim.note.clone();
            let explanation = claim.explanation();
            if !explanation.is_empty() {
                if !note.is_empty() {
                    note += ". ";
                }
                note += &explanation;
            }
            let quote = if claim.derived {
                format!("\"{}\" (derived)", claim.quote)
            } else {
                format!("\"{}\"", claim.quote)
            };
            if let Some(t) = out.last_mut() {
                t.rows.push(vec![
                    claim.what.clone(),
                    quote,
                    claim.ours_text(),
                    claim.difference_text(),
                    claim.verdict.text().to_owned(),
                    note,
                ]);
            }
        }
        out
    }

    /// Every claim as CSV: the reproduction report's rows, one per line, for a spreadsheet.
    pub fn claims_csv(&self) -> String {
        let mut out = crate::text::csv_record(&[
            "essay",
            "section",
            "claim",
            "essay's figure",
            "derived",
            "ratelab",
            "difference",
            "verdict",
            "note",
            "why",
            "command",
            "other readings",
        ]);
        for c in &self.claims {
            let essay = match c.essay {
                Essay::Rule => "The Rule Was the Strict Part",
                Essay::Boundary => "Rate limiting and the boundary burst",
            };
            out += &crate::text::csv_record(&[
                essay.to_owned(),
                c.section.clone(),
                c.what.clone(),
                c.quote.clone(),
                c.derived.to_string(),
                c.ours_text(),
                c.difference_text(),
                c.verdict.text().to_owned(),
                c.note.clone(),
                c.why.clone(),
                c.command.clone(),
                c.tried
                    .iter()
                    .map(|a| {
                        format!(
                            "{}: {}{}",
                            a.assumption,
                            a.value
                                .map_or("not run".to_owned(), super::claims::value_text),
                            if a.lands { " (lands)" } else { "" }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            ]);
        }
        out
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The window convention, stated once.
const WINDOW: &str = "**The window.** ratelab counts a window as (t − W, t]: a request exactly W \
after another is in a new window. The essays' \"burst + limit\" counts a closed window, so every \
bucket bound here is one less: B + L − 1 (B + 99 at a limit of 100, which the first essay writes \
itself).\n";

/// How the traffic is modelled, for REPRODUCTION.md.
const NOTES: &str = "
## How ratelab models what the essays describe in words

- **Traffic shapes.** Steady is Poisson. Small bursts, page loads and big bursts start groups
  as a Poisson process, with geometric sizes of mean 5, 20 and 50 spread uniformly over 1 s,
  1 s and 2 s. The on/off client has Pareto (α = 1.5, mean 30 s) active periods and
  exponential (mean 120 s) quiet ones, busy 20% of the time, sending 5× its average while
  active. Numbers that depend on the exact burst distribution can differ by more than their
  standard error for that reason alone; where they do, the row says so.
- **Splitting.** Each request goes to a server drawn uniformly from its own PCG stream. With
  Poisson arrivals that makes each server's traffic Poisson at a/K, so the exact log's served
  share is 1 − B(L/K, a/K), Erlang's loss formula, and the split rows show it.
- **One generator.** Every random draw comes from one named, seeded PCG, identical natively
  and in the page; the same seed gives the same numbers everywhere.
- **The essays' own tables and figures.** The first essay speaks of a table (every traffic
  shape at every load) and a figure (its left panel) that its text does not include: its
  rows here are the numbers its prose gives, and `tables.md` and the plots are ratelab's own,
  not copies of the essay's. The second essay's one table is here row by row.
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
