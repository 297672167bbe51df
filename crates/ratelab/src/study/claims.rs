//! The reproduction report's rows: every numeric claim of both essays, as written, beside
//! ratelab's value, the difference (in standard errors, or absolute for exact values) and a
//! verdict. A row whose difference is beyond 3 SE and beyond the essay's rounding is
//! *explained* only when another reading the essay leaves open, computed as its own run
//! ([`Alternative`]), lands within the row's tolerance; otherwise it is *unexplained*, and
//! the report lists what was tried. A note is never a verdict.

use super::measure::Estimate;
use crate::decimal::{fixed, fixed_signed, shortest_signed};
use serde::{Deserialize, Serialize};

/// Which essay a claim is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Essay {
    /// "The Rule Was the Strict Part".
    Rule,
    /// "Rate limiting and the boundary burst".
    Boundary,
}

/// What a number counts, for its formatting and the essay's rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// A fraction, printed as a percentage.
    Share,
    /// Requests.
    Count,
    /// A multiple ("1.6 to 3 times").
    Times,
}

/// ratelab's side of a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Value {
    /// A mean over runs with its standard error.
    Estimate(Estimate, Unit),
    /// An exact value: a count, a formula, a parameter.
    Exact(f64, Unit),
    /// `k` of `n`.
    Of(u64, u64),
    /// The lowest and highest over several cells.
    Range(f64, f64, Unit),
}

impl Value {
    fn unit(&self) -> Unit {
        match *self {
            Value::Estimate(_, u) | Value::Exact(_, u) | Value::Range(_, _, u) => u,
            Value::Of(..) => Unit::Count,
        }
    }

    /// The value compared with a single figure.
    fn center(&self) -> f64 {
        match *self {
            Value::Estimate(e, _) => e.mean,
            Value::Exact(x, _) => x,
            Value::Of(k, _) => k as f64,
            Value::Range(lo, hi, _) => 0.5 * (lo + hi),
        }
    }
}

/// The essay's side of a row, in the row's unit (shares as fractions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Target {
    /// One figure.
    Number(f64),
    /// "1% to 6%", "nearly 200": ratelab's value (or every value of its range) should lie in it.
    Range(f64, f64),
    /// Nothing to compare: a set-up parameter ratelab takes as given, or a figure it cannot
    /// measure.
    None,
}

/// A number `ratelab simulate --format json` prints for its first limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// `served_share`: the mean over runs of admitted / offered.
    Served,
    /// `busiest_window_mean`: the mean over runs of each run's busiest window.
    BusiestMean,
    /// `busiest_window_max`: the busiest window of any run.
    BusiestMax,
    /// `offered − admitted`, over all runs.
    Rejected,
    /// `wrong_admits`: the mean over runs of wrong admissions per decision.
    WrongAdmits,
    /// `wrong_rejects`: the mean over runs of wrong rejections per decision.
    WrongRejects,
}

/// A command and the number it prints that the row shows or is computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The `ratelab simulate` command.
    pub command: String,
    /// What of its output is the number.
    pub metric: Metric,
    /// The number, as the study has it.
    pub value: f64,
}

/// Another reading of what the essay leaves open (an unstated parameter, a window convention,
/// which client a row measures), computed as its own run: ratelab's value under it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    /// The assumption, in words.
    pub assumption: String,
    /// ratelab's value under it (`None`: its experiment has not run).
    pub value: Option<Value>,
    /// A command that prints it, or where ratelab computes it.
    pub command: String,
    /// Whether it lands within the row's tolerance of the essay's figure.
    pub lands: bool,
}

/// How a row came out: the one vocabulary of the report, each decided by `Claim::judged`
/// the same way for every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Within 3 standard errors, or equal where the value is exact.
    Match,
    /// Beyond 3 SE, but within half a unit of the essay's last printed digit.
    Rounding,
    /// Beyond both, and an alternative reading, computed, lands within them.
    Explained,
    /// A set-up parameter: ratelab uses the essay's value.
    Given,
    /// Not something ratelab can measure, for the reason in the note.
    NotReproducible,
    /// Beyond both, and no alternative tried lands within them: a finding to chase.
    Unexplained,
    /// The experiment has not run (a partial study).
    Missing,
}

impl Verdict {
    /// What the verdict means, for the report's key.
    pub fn meaning(self) -> &'static str {
        match self {
            Verdict::Match => "ratelab's value is within 3 standard errors of the essay's figure (a mean over runs), or equal to it (an exact value, a count)",
            Verdict::Rounding => "beyond that, but within half a unit of the last digit the essay prints",
            Verdict::Explained => "beyond both, and another reading the essay leaves open (named in the note, with its own command) gives a value within them; both values are shown",
            Verdict::Given => "a set-up parameter of the essay, which ratelab uses as given",
            Verdict::NotReproducible => "a figure ratelab has nothing to measure against (the note says why)",
            Verdict::Unexplained => "beyond both, and no reading tried (listed in the note) gives a value within them",
            Verdict::Missing => "the experiment behind the row has not run (a partial study)",
        }
    }

    /// Every verdict, in the order the report's key lists them.
    pub const ALL: [Verdict; 7] = [
        Verdict::Match,
        Verdict::Rounding,
        Verdict::Explained,
        Verdict::Unexplained,
        Verdict::Given,
        Verdict::NotReproducible,
        Verdict::Missing,
    ];

    /// The verdict as the report prints it.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Match => "match",
            Verdict::Rounding => "within the essay's rounding",
            Verdict::Explained => "explained difference",
            Verdict::Given => "set-up, used as given",
            Verdict::NotReproducible => "not reproducible",
            Verdict::Unexplained => "UNEXPLAINED",
            Verdict::Missing => "not run",
        }
    }
}

/// One numeric claim of an essay beside ratelab's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The essay.
    pub essay: Essay,
    /// The essay's section it is in.
    pub section: String,
    /// What is measured.
    pub what: String,
    /// The essay's figure, as written.
    pub quote: String,
    /// Whether the comparison value was worked out from prose (0.91 from "rejects 9%").
    pub derived: bool,
    /// The essay's figure, comparable with ours.
    pub target: Target,
    /// Half a unit of the essay's last printed digit, in the row's unit.
    pub rounding: f64,
    /// ratelab's value (`None`: not run, or not reproducible).
    pub ours: Option<Value>,
    /// What the reader should know about the row: where the value comes from, which cells.
    pub note: String,
    /// Why ratelab differs, used when it does (or why it cannot be measured).
    pub why: String,
    /// A command that reproduces ratelab's value (empty when a table of the study does).
    pub command: String,
    /// The other readings tried where the essay leaves something open, each with its value.
    pub tried: Vec<Alternative>,
    /// Each command of the row (its own, a pooled part's, a reading's) with the number it
    /// prints: a test runs them all and compares.
    pub checks: Vec<Check>,
    /// How it came out.
    pub verdict: Verdict,
}

/// Half a unit of the last digit of the first number in `quote`, in `unit` (a percentage
/// quoted as "71.0%" has a rounding of 0.05 points, 0.0005 as a fraction).
pub fn rounding_of(quote: &str, unit: Unit) -> f64 {
    let digits: String = quote
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .collect();
    let digits = digits.trim_end_matches(['.', ',']);
    let decimals = digits.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let half = 0.5 * 10f64.powi(-decimals);
    // A share quoted in per cent or percentage points rounds in hundredths.
    if unit == Unit::Share && (quote.contains('%') || quote.contains("point")) {
        half / 100.0
    } else {
        half
    }
}

impl Claim {
    /// A row of `essay`'s `section`: `what`, quoted as `quote`.
    pub(super) fn new(essay: Essay, section: &str, what: impl Into<String>, quote: &str) -> Claim {
        Claim {
            essay,
            section: section.into(),
            what: what.into(),
            quote: quote.into(),
            derived: false,
            target: Target::None,
            rounding: 0.0,
            ours: None,
            note: String::new(),
            why: String::new(),
            command: String::new(),
            tried: Vec::new(),
            checks: Vec::new(),
            verdict: Verdict::Missing,
        }
    }

    /// The row's command prints its value as `metric` (call after `ours` and `command`).
    pub(super) fn prints(mut self, metric: Metric) -> Claim {
        if let (Some(v), false) = (self.ours, self.command.is_empty()) {
            let value = match v {
                Value::Estimate(e, _) => e.mean,
                other => other.center(),
            };
            self.checks.push(Check {
                command: self.command.clone(),
                metric,
                value,
            });
        }
        self
    }

    /// Another command the row's number comes from, printing `value` as `metric`.
    pub(super) fn also(mut self, command: String, metric: Metric, value: f64) -> Claim {
        if !command.is_empty() {
            self.checks.push(Check {
                command,
                metric,
                value,
            });
        }
        self
    }

    /// Another reading the essay leaves open, `assumption`, under which ratelab's value is
    /// `value` (printed by `command`).
    pub(super) fn tried(
        mut self,
        assumption: impl Into<String>,
        value: Option<Value>,
        command: impl Into<String>,
    ) -> Claim {
        self.tried.push(Alternative {
            assumption: assumption.into(),
            value,
            command: command.into(),
            lands: false,
        });
        self
    }

    /// The essay's figure is `target`, in `unit`, with the rounding its quote shows.
    pub(super) fn target(mut self, target: f64, unit: Unit) -> Claim {
        self.target = Target::Number(target);
        self.rounding = rounding_of(&self.quote, unit);
        self
    }

    /// The essay's figure is a range.
    pub(super) fn range(mut self, lo: f64, hi: f64, unit: Unit) -> Claim {
        self.target = Target::Range(lo, hi);
        self.rounding = rounding_of(&self.quote, unit);
        self
    }

    /// The comparison value was worked out from prose.
    pub(super) fn derived(mut self) -> Claim {
        self.derived = true;
        self
    }

    /// ratelab's value, if the experiment ran.
    pub(super) fn ours(mut self, value: Option<Value>) -> Claim {
        self.ours = value;
        self
    }

    pub(super) fn note(mut self, note: impl Into<String>) -> Claim {
        self.note = note.into();
        self
    }

    pub(super) fn why(mut self, why: impl Into<String>) -> Claim {
        self.why = why.into();
        self
    }

    pub(super) fn command(mut self, command: impl Into<String>) -> Claim {
        self.command = command.into();
        self
    }

    /// Decides the verdict: call last.
    pub(super) fn judged(mut self) -> Claim {
        for i in 0..self.tried.len() {
            let lands = self.tried[i]
                .value
                .is_some_and(|v| matches!(self.judge_value(v), Verdict::Match | Verdict::Rounding));
            self.tried[i].lands = lands;
        }
        self.verdict = self.judge();
        self
    }

    /// A set-up parameter, used as given.
    pub(super) fn given(mut self, value: f64, unit: Unit) -> Claim {
        self.ours = Some(Value::Exact(value, unit));
        self.verdict = Verdict::Given;
        self
    }

    /// Nothing here to set beside the figure, though the experiment ran, and why: a
    /// difference no reading tried explains.
    pub(super) fn absent(mut self, why: &str) -> Claim {
        self.why = why.into();
        self.verdict = Verdict::Unexplained;
        self
    }

    /// A figure ratelab cannot measure, and why.
    pub(super) fn unreproducible(mut self, why: &str) -> Claim {
        self.why = why.into();
        self.verdict = Verdict::NotReproducible;
        self
    }

    /// The difference in standard errors, where ours has a spread and the essay one figure.
    pub fn z(&self) -> Option<f64> {
        match (self.target, self.ours) {
            (Target::Number(t), Some(Value::Estimate(e, _))) if e.se > 0.0 => {
                Some((e.mean - t) / e.se)
            }
            _ => None,
        }
    }

    fn judge(&self) -> Verdict {
        let Some(ours) = self.ours else {
            return Verdict::Missing;
        };
        match self.judge_value(ours) {
            Verdict::Unexplained if self.tried.iter().any(|a| a.lands) => Verdict::Explained,
            v => v,
        }
    }

    /// `value` against the essay's figure: a match, within its rounding, or neither
    /// (`Unexplained`); `Given` where there is no figure.
    fn judge_value(&self, ours: Value) -> Verdict {
        let slack = self.rounding + 1e-12;
        let (close, rounding) = match self.target {
            Target::None => return Verdict::Given,
            Target::Number(t) => {
                let diff = (ours.center() - t).abs();
                let z = match ours {
                    Value::Estimate(e, _) if e.se > 0.0 => Some((e.mean - t) / e.se),
                    _ => None,
                };
                match z {
                    Some(z) => (z.abs() <= 3.0, diff <= slack),
                    None => (diff <= slack, false),
                }
            }
            Target::Range(lo, hi) => {
                let (a, b) = match ours {
                    Value::Range(a, b, _) => (a, b),
                    v => (v.center(), v.center()),
                };
                (a >= lo - slack && b <= hi + slack, false)
            }
        };
        if close {
            Verdict::Match
        } else if rounding {
            Verdict::Rounding
        } else {
            Verdict::Unexplained
        }
    }

    /// What the row's note adds to say why its verdict is what it is: the reason, where the
    /// verdict needs one, and every other reading tried with its value, whether it lands
    /// within the row's tolerance, and its command.
    pub fn explanation(&self) -> String {
        let mut parts = Vec::new();
        if matches!(
            self.verdict,
            Verdict::Explained | Verdict::NotReproducible | Verdict::Unexplained
        ) && !self.why.is_empty()
        {
            parts.push(self.why.trim_end_matches('.').to_owned());
        }
        // Other readings matter where the row is outside its tolerance.
        let outside = matches!(self.verdict, Verdict::Explained | Verdict::Unexplained);
        for a in self.tried.iter().filter(|_| outside) {
            let value = a.value.map_or("not run".to_owned(), value_text);
            let verdict = match (a.value, a.lands) {
                (None, _) => "",
                (Some(_), true) => ", within the row's tolerance",
                (Some(_), false) => ", also outside it",
            };
            let command = if a.command.is_empty() || a.command == self.command {
                String::new()
            } else if a.command.starts_with("ratelab ") {
                format!(" (`{}`)", a.command)
            } else {
                format!(" ({})", a.command)
            };
            parts.push(format!(
                "another reading, {}: {value}{verdict}{command}",
                a.assumption
            ));
        }
        if self.verdict == Verdict::Unexplained && self.tried.is_empty() {
            parts.push("no other reading of the essay has been tried".to_owned());
        }
        parts.join("; ")
    }

    /// ratelab's value as printed.
    pub fn ours_text(&self) -> String {
        match self.ours {
            None => "-".into(),
            Some(v) => value_text(v),
        }
    }

    /// The difference as printed: in SE, or absolute for exact values.
    pub fn difference_text(&self) -> String {
        if let Some(z) = self.z() {
            return format!("{} SE", fixed_signed(z, 1));
        }
        match (self.target, self.ours) {
            (Target::Number(t), Some(v)) if !matches!(v, Value::Range(..)) => {
                let d = v.center() - t;
                match v.unit() {
                    Unit::Share => format!("{} pt", fixed_signed(100.0 * d, 2)),
                    Unit::Count if d == d.round() => shortest_signed(d),
                    _ => fixed_signed(d, 2),
                }
            }
            _ => "-".into(),
        }
    }
}

fn share_text(mean: f64, se: Option<f64>) -> String {
    // Enough decimals that the SE shows (0.003 points is "0.003", not "0.0").
    let decimals = match se {
        Some(se) if 100.0 * se < 0.01 => 3,
        _ => 2,
    };
    match se {
        Some(se) => format!(
            "{} ± {}%",
            fixed(100.0 * mean, decimals),
            fixed(100.0 * se, decimals)
        ),
        None => format!("{}%", fixed(100.0 * mean, decimals)),
    }
}

fn number_text(x: f64) -> String {
    if x == x.round() {
        fixed(x, 0)
    } else {
        fixed(x, 2)
    }
}

/// A value as the report prints it.
pub fn value_text(v: Value) -> String {
    match v {
        Value::Estimate(e, Unit::Share) => share_text(e.mean, Some(e.se)),
        Value::Estimate(e, _) => format!("{} ± {}", fixed(e.mean, 1), fixed(e.se, 1)),
        Value::Exact(x, Unit::Share) => share_text(x, None),
        Value::Exact(x, Unit::Times) => format!("{}×", number_text(x)),
        Value::Exact(x, Unit::Count) => number_text(x),
        Value::Of(k, n) => format!("{k} of {n}"),
        Value::Range(lo, hi, Unit::Share) => {
            format!("{}% to {}%", fixed(100.0 * lo, 1), fixed(100.0 * hi, 1))
        }
        Value::Range(lo, hi, Unit::Times) => format!("{} to {}×", fixed(lo, 1), fixed(hi, 1)),
        Value::Range(lo, hi, Unit::Count) => format!("{} to {}", number_text(lo), number_text(hi)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ours: f64) -> Claim {
        Claim::new(Essay::Rule, "s", "a share", "50%")
            .target(0.5, Unit::Share)
            .ours(Some(Value::Exact(ours, Unit::Share)))
    }

    #[test]
    fn a_note_is_never_a_verdict_and_an_explanation_is_a_run_that_lands() {
        assert_eq!(row(0.5).judged().verdict, Verdict::Match);
        // A reason alone explains nothing.
        let reasoned = row(0.4).why("a reason").judged();
        assert_eq!(reasoned.verdict, Verdict::Unexplained);
        assert!(
            reasoned.explanation().contains("no other reading"),
            "{}",
            reasoned.explanation()
        );
        // Another reading whose value misses leaves it unexplained, and says so.
        let missed = row(0.4)
            .tried(
                "another client",
                Some(Value::Exact(0.45, Unit::Share)),
                "ratelab simulate x",
            )
            .judged();
        assert_eq!(missed.verdict, Verdict::Unexplained);
        assert!(
            missed.explanation().contains("45.00%, also outside it"),
            "{}",
            missed.explanation()
        );
        // One that lands explains it, both values shown.
        let landed = row(0.4)
            .tried(
                "another client",
                Some(Value::Exact(0.45, Unit::Share)),
                "ratelab simulate x",
            )
            .tried(
                "a third",
                Some(Value::Exact(0.5, Unit::Share)),
                "ratelab simulate y",
            )
            .judged();
        assert_eq!(landed.verdict, Verdict::Explained);
        assert_eq!(landed.ours_text(), "40.00%");
        assert!(
            landed
                .explanation()
                .contains("a third: 50.00%, within the row's tolerance (`ratelab simulate y`)"),
            "{}",
            landed.explanation()
        );
        // A reading not run yet explains nothing.
        let pending = row(0.4).tried("another client", None, "").judged();
        assert_eq!(pending.verdict, Verdict::Unexplained);
        // Readings of a row that matches are not shown.
        let matching = row(0.5)
            .tried("another client", Some(Value::Exact(0.1, Unit::Share)), "")
            .judged();
        assert_eq!(matching.explanation(), "");
    }

    #[test]
    fn an_estimates_reading_is_judged_by_its_own_standard_error() {
        let e = |mean, se| Some(Value::Estimate(Estimate { mean, se }, Unit::Share));
        let c = Claim::new(Essay::Rule, "s", "a share", "80.2%")
            .target(0.802, Unit::Share)
            .ours(e(0.8008, 0.0003))
            .tried("wider", e(0.8008, 0.0005), "");
        // -4 SE with its own error, -2.4 with the reading's.
        assert_eq!(c.judged().verdict, Verdict::Explained);
    }

    fn est(mean: f64, se: f64) -> Option<Value> {
        Some(Value::Estimate(Estimate { mean, se }, Unit::Share))
    }

    #[test]
    fn the_rounding_is_half_the_last_printed_digit() {
        assert!((rounding_of("71.0%", Unit::Share) - 0.0005).abs() < 1e-12);
        assert!((rounding_of("99.61%", Unit::Share) - 0.000_05).abs() < 1e-12);
        assert!((rounding_of("rejects 9%", Unit::Share) - 0.005).abs() < 1e-12);
        // Percentage points round in hundredths too (1.95% is not "at most 1.5 points").
        assert!((rounding_of("at most 1.5 points", Unit::Share) - 0.0005).abs() < 1e-12);
        assert_eq!(rounding_of("142", Unit::Count), 0.5);
        assert_eq!(rounding_of("3,000 cases", Unit::Count), 0.5);
        assert_eq!(rounding_of("1.6 to 3 times", Unit::Times), 0.05);
    }

    #[test]
    fn verdicts_follow_the_standard_error_the_rounding_and_the_note() {
        let row = |ours| {
            Claim::new(Essay::Rule, "s", "w", "99.6%")
                .target(0.996, Unit::Share)
                .ours(ours)
        };
        assert_eq!(row(est(0.9962, 0.0001)).judged().verdict, Verdict::Match);
        // 4 SE away but within 0.05 points: rounding.
        assert_eq!(row(est(0.9964, 0.0001)).judged().verdict, Verdict::Rounding);
        // 10 SE and 0.1 points away: unexplained, whatever reason it gives, unless another
        // reading's own value lands.
        assert_eq!(
            row(est(0.997, 0.0001)).judged().verdict,
            Verdict::Unexplained
        );
        assert_eq!(
            row(est(0.997, 0.0001)).why("because").judged().verdict,
            Verdict::Unexplained
        );
        assert_eq!(
            row(est(0.997, 0.0001))
                .tried("another client", est(0.9961, 0.0001), "")
                .judged()
                .verdict,
            Verdict::Explained
        );
        assert_eq!(row(None).judged().verdict, Verdict::Missing);
        let count = |k| {
            Claim::new(Essay::Rule, "s", "w", "14 of the 20")
                .target(14.0, Unit::Count)
                .ours(Some(Value::Of(k, 20)))
                .judged()
        };
        assert_eq!(count(14).verdict, Verdict::Match);
        assert_eq!(count(12).verdict, Verdict::Unexplained);
        assert_eq!(count(12).difference_text(), "-2");
        let range = |lo, hi| {
            Claim::new(Essay::Rule, "s", "w", "1% to 6%")
                .range(0.01, 0.06, Unit::Share)
                .ours(Some(Value::Range(lo, hi, Unit::Share)))
                .judged()
                .verdict
        };
        assert_eq!(range(0.031, 0.056), Verdict::Match);
        assert_eq!(range(0.031, 0.07), Verdict::Unexplained);
    }

    #[test]
    fn values_print_with_enough_decimals_for_their_standard_error() {
        assert_eq!(
            value_text(Value::Estimate(
                Estimate {
                    mean: 0.99605,
                    se: 0.00003
                },
                Unit::Share
            )),
            "99.605 ± 0.003%"
        );
        assert_eq!(
            value_text(Value::Estimate(
                Estimate {
                    mean: 0.7134,
                    se: 0.0012
                },
                Unit::Share
            )),
            "71.34 ± 0.12%"
        );
        assert_eq!(value_text(Value::Of(400, 400)), "400 of 400");
        assert_eq!(value_text(Value::Exact(199.0, Unit::Count)), "199");
        let z = Claim::new(Essay::Rule, "s", "w", "71.0%")
            .target(0.71, Unit::Share)
            .ours(est(0.7134, 0.0012))
            .judged();
        assert_eq!(z.difference_text(), "+2.8 SE");
    }
}
