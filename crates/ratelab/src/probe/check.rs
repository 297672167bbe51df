//! A report read back from a file: its scenario, compared again with a model, and checked
//! against its own trace so a tampered report is refused.

use super::plan::{MAX_REQUESTS, MAX_TARGETS};
use super::record::{Outcome, Record};
use super::report::{compare, gateway_reports, groups, ProbeReport};
use crate::error::Error;
use crate::sim::Scenario;

impl ProbeReport {
    /// The scenario a report was recorded with, holding `model` as its one limiter (the
    /// traffic is not needed again: the report's trace is what was sent).
    pub fn scenario(&self, model: &crate::LimiterSpec) -> Scenario {
        Scenario {
            limiters: vec![model.clone()],
            limit: self.limit,
            window: self.window_us,
            duration: self.duration_us.max(1),
            ..Scenario::default()
        }
    }

    /// The same report compared with another model, from its trace alone: how a reader asks
    /// "does my gateway behave like this limiter?" of a report they recorded.
    pub fn with_model(&self, model: &crate::LimiterSpec) -> Result<ProbeReport, Error> {
        let scenario = self.scenario(model);
        let limiter = scenario.build_limiter(model, 0)?;
        let records: Vec<Record> = self
            .trace
            .sent_us
            .iter()
            .zip(self.trace.outcome.chars())
            .enumerate()
            .map(|(i, (&sent, c))| Record {
                due: self.trace.due_us.get(i).copied().unwrap_or(sent),
                sent,
                attempt: 1,
                outcome: Outcome::from_letter(c).unwrap_or(Outcome::Other),
                latency: 0,
                gateway: self.trace.gateway.get(i).copied().unwrap_or(0),
                retry_after: self.trace.retry_after_us.get(i).copied().flatten(),
            })
            .collect();
        let groups = groups(&records);
        let (comparison, letters) = compare(
            &scenario,
            &records,
            &groups,
            self.offered,
            (&model.text, self.epoch_us),
            limiter,
        );
        let mut out = self.clone();
        if !self.gateways.is_empty() {
            let targets: Vec<String> = self.gateways.iter().map(|g| g.target.clone()).collect();
            out.gateways = gateway_reports(&scenario, &records, &groups, &targets, Some(&letters));
        }
        out.comparison = Some(comparison);
        out.trace.model = Some(letters);
        Ok(out)
    }

    /// Checks that a report read from a file is whole and consistent, so that what the page
    /// shows of it is what was recorded: a trace of one time and letter a request sent, in
    /// order, whose letters add up to the counts, within the simulator's ranges.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |problem: String| Error::BadFile {
            problem,
            accepted: "a report written by `ratelab probe --format json`".into(),
        };
        let (lo, hi) = crate::sim::LIMIT_RANGE;
        if !(lo..=hi).contains(&self.limit) {
            return Err(bad(format!(
                "has a limit of {}, outside {lo} to {hi}",
                self.limit
            )));
        }
        let (lo, hi) = crate::sim::WINDOW_RANGE;
        if !(lo..=hi).contains(&self.window_us) {
            return Err(bad(format!(
                "has a window of {} µs, outside 1ms to 24h",
                self.window_us
            )));
        }
        if self.sent > MAX_REQUESTS {
            return Err(bad(format!(
                "has {} requests, more than a probe sends ({MAX_REQUESTS})",
                self.sent
            )));
        }
        let n = self.trace.sent_us.len() as u64;
        let letters = self.trace.outcome.chars().count() as u64;
        if n != self.sent || letters != self.sent {
            return Err(bad(format!(
                "says {} requests were sent but its trace has {n} times and {letters} outcomes",
                self.sent
            )));
        }
        if self.offered > self.sent {
            return Err(bad(format!(
                "has more first tries ({}) than requests ({})",
                self.offered, self.sent
            )));
        }
        if let Some(i) = self.trace.sent_us.windows(2).position(|w| w[0] > w[1]) {
            return Err(bad(format!(
                "has its trace out of order at request {}",
                i + 2
            )));
        }
        if let Some(c) = self
            .trace
            .outcome
            .chars()
            .find(|&c| Outcome::from_letter(c).is_none())
        {
            return Err(bad(format!(
                "has an outcome letter {c:?} in its trace (accepted: A, R, O, E, T)"
            )));
        }
        let count = |c: char| self.trace.outcome.chars().filter(|&x| x == c).count() as u64;
        for (what, letter, said) in [
            ("admitted", 'A', self.audit.admitted),
            ("rejected", 'R', self.audit.rejected),
            ("other", 'O', self.other),
            ("errors", 'E', self.errors),
            ("timeouts", 'T', self.timeouts),
        ] {
            if count(letter) != said {
                return Err(bad(format!(
                    "says {said} {what} but its trace has {}",
                    count(letter)
                )));
            }
        }
        if !self.trace.due_us.is_empty() && self.trace.due_us.len() as u64 != n {
            return Err(bad(format!(
                "has {} due times for {n} requests in its trace",
                self.trace.due_us.len()
            )));
        }
        if !self.trace.latency_us.is_empty() && self.trace.latency_us.len() as u64 != n {
            return Err(bad(format!(
                "has {} answer times for {n} requests in its trace",
                self.trace.latency_us.len()
            )));
        }
        if !self.trace.retry_after_us.is_empty() && self.trace.retry_after_us.len() as u64 != n {
            return Err(bad(format!(
                "has {} Retry-After entries for {n} requests in its trace",
                self.trace.retry_after_us.len()
            )));
        }
        let gateways = self.gateways.len() as u64;
        if gateways > MAX_TARGETS {
            return Err(bad(format!(
                "has {gateways} gateways, more than a probe sends to ({})",
                MAX_TARGETS
            )));
        }
        if !self.trace.gateway.is_empty() || gateways > 0 {
            if self.trace.gateway.len() as u64 != n {
                return Err(bad(format!(
                    "has {} gateways' numbers for {n} requests in its trace",
                    self.trace.gateway.len()
                )));
            }
            if let Some(g) = self
                .trace
                .gateway
                .iter()
                .find(|&&g| u64::from(g) >= gateways)
            {
                return Err(bad(format!(
                    "sends a request to gateway {g} of its {gateways}"
                )));
            }
        }
        if let Some(m) = &self.trace.model {
            if m.chars().count() as u64 != n || m.chars().any(|c| !"AR-".contains(c)) {
                return Err(bad(
                    "has a model trace that is not one A, R or - a request".into()
                ));
            }
        }
        Ok(())
    }
}
