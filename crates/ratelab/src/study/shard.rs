//! A study split across machines: shard K of N computes every job whose place in the plan is
//! K − 1 modulo N (so each experiment's jobs, cheap and dear, spread over every shard), and
//! the merge puts the shards' results back in the plan's order, from which the report is
//! assembled exactly as from one run. A shard carries what it was computed from (the study's
//! size, its part, and a fingerprint of the whole plan and of the version that planned it),
//! so that shards of different studies or versions are refused by name, never mixed.

use super::experiments::JobResult;
use super::plan::{Job, StudyConfig};
use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The shard format's version.
pub const SHARD_FORMAT: u32 = 1;

/// Which slice of a study's jobs: the `k`-th of `n` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Which slice, 1 to `n`.
    pub k: u32,
    /// How many slices.
    pub n: u32,
}

impl Part {
    /// Reads `K/N` (1 ≤ K ≤ N ≤ 10,000), for `flag`'s message.
    pub fn parse(flag: &str, text: &str) -> Result<Part, Error> {
        let bad = |nearest: &str| {
            Error::invalid(
                flag,
                text,
                &format!("K/N, the K-th of N slices, 1 ≤ K ≤ N ≤ 10000; nearest valid: {nearest}"),
            )
        };
        let Some((k, n)) = text.trim().split_once('/') else {
            return Err(bad("1/1"));
        };
        let (Ok(k), Ok(n)) = (k.trim().parse::<u64>(), n.trim().parse::<u64>()) else {
            return Err(bad("1/2"));
        };
        let n_ok = n.clamp(1, 10_000);
        let k_ok = k.clamp(1, n_ok);
        if (k, n) != (k_ok, n_ok) {
            return Err(bad(&format!("{k_ok}/{n_ok}")));
        }
        Ok(Part {
            k: k as u32,
            n: n as u32,
        })
    }

    /// Whether the job at `index` of the plan is this slice's.
    pub fn holds(self, index: usize) -> bool {
        index as u64 % u64::from(self.n) == u64::from(self.k - 1)
    }

    /// The file a shard of this part is written to.
    pub fn file_name(self) -> String {
        format!("shard-{}-of-{}.json", self.k, self.n)
    }
}

/// One shard: its part, what it was computed from, and its jobs' results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    /// [`SHARD_FORMAT`].
    pub format: u32,
    /// The ratelab version that computed it.
    pub version: String,
    /// The study's size and seed.
    pub config: StudyConfig,
    /// Whether only the honest-client table's jobs were planned (`--only honest`).
    pub honest_only: bool,
    /// Its slice.
    pub part: Part,
    /// Jobs in the whole plan.
    pub jobs: u64,
    /// [`fingerprint`] of the whole plan.
    pub fingerprint: u64,
    /// Its jobs' results, each with its place in the plan, in order.
    pub results: Vec<(u64, JobResult)>,
}

/// A 64-bit FNV-1a hash of the plan, every job's kind and scenario as Rust prints them: two
/// plans with the same fingerprint are, for any practical purpose, the same jobs.
pub fn fingerprint(jobs: &[Job]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{jobs:?}").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Shard {
    /// The shard `part` of the plan `jobs`, from its jobs' `results` (each with its place).
    pub fn new(
        config: StudyConfig,
        honest_only: bool,
        part: Part,
        jobs: &[Job],
        results: Vec<(u64, JobResult)>,
    ) -> Shard {
        Shard {
            format: SHARD_FORMAT,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            config,
            honest_only,
            part,
            jobs: jobs.len() as u64,
            fingerprint: fingerprint(jobs),
            results,
        }
    }
}

/// What a merge needs to assemble the report: the study's size, whether it was the honest
/// table alone, and every job's result in the plan's order.
#[derive(Debug)]
pub struct Merged {
    /// The study's size and seed.
    pub config: StudyConfig,
    /// Whether only the honest-client table's jobs were planned.
    pub honest_only: bool,
    /// Every job's result, in the plan's order.
    pub results: Vec<Option<JobResult>>,
}

/// Puts `shards` (each named for messages by its file) back together: they must be of one
/// study (format, version, size, seed, plan) and one N, each part exactly once, each holding
/// exactly its slice's jobs; `plan` gives the plan of a size to check the fingerprint against.
pub fn merge(
    shards: Vec<(String, Shard)>,
    plan: impl Fn(StudyConfig, bool) -> Result<Vec<Job>, Error>,
) -> Result<Merged, String> {
    let Some((first_name, first)) = shards.first() else {
        return Err(
            "no shard to merge: write them with `ratelab study --shard K/N --out DIR`".into(),
        );
    };
    let (first_name, n) = (first_name.clone(), first.part.n);
    if !(1..=10_000).contains(&n) {
        return Err(format!(
            "{first_name} says it is one of {n} shards: a study splits into 1 to 10000"
        ));
    }
    let (config, honest_only) = (first.config, first.honest_only);
    let jobs = plan(config, honest_only).map_err(|e| e.to_string())?;
    let print = fingerprint(&jobs);
    let mut by_part: Vec<Option<&str>> = vec![None; n as usize];
    let mut results: Vec<Option<JobResult>> = vec![None; jobs.len()];
    for (name, shard) in &shards {
        let differs = |what: &str, a: String, b: String| {
            format!(
                "{name} is not of the same study as {first_name}: its {what} is {a}, not {b}; \
                 merge the shards of one `ratelab study` command"
            )
        };
        if shard.format != SHARD_FORMAT {
            return Err(format!(
                "{name} is a shard of format {}; this ratelab reads format {SHARD_FORMAT}: \
                 compute it again with this version",
                shard.format
            ));
        }
        if shard.version != env!("CARGO_PKG_VERSION") {
            return Err(format!(
                "{name} was computed by ratelab {}; this is ratelab {}: compute every shard \
                 with one version",
                shard.version,
                env!("CARGO_PKG_VERSION")
            ));
        }
        if shard.part.n != n {
            return Err(differs(
                "number of shards",
                shard.part.n.to_string(),
                n.to_string(),
            ));
        }
        if shard.config != config || shard.honest_only != honest_only {
            let show = |c: StudyConfig, h: bool| {
                format!(
                    "--runs {} --minutes {} --seed {}{}",
                    c.runs,
                    c.minutes,
                    c.seed,
                    if h { " --only honest" } else { "" }
                )
            };
            return Err(differs(
                "study",
                show(shard.config, shard.honest_only),
                show(config, honest_only),
            ));
        }
        if shard.fingerprint != print || shard.jobs != jobs.len() as u64 {
            return Err(format!(
                "{name} was planned differently from this ratelab's plan of the same size \
                 (fingerprint {:016x}, not {print:016x}): compute it again with this version",
                shard.fingerprint
            ));
        }
        let part = shard.part;
        if part.k == 0 || part.k > n {
            return Err(format!(
                "{name} says it is shard {} of {n}: a shard is 1 to {n}",
                part.k
            ));
        }
        if let Some(other) = by_part[part.k as usize - 1].replace(name) {
            return Err(format!(
                "shard {} of {n} appears twice: {other} and {name}; merge each shard once",
                part.k
            ));
        }
        let expected = (0..jobs.len()).filter(|&i| part.holds(i));
        let held = shard.results.iter().map(|(i, _)| *i as usize);
        if !expected.eq(held) {
            return Err(format!(
                "{name} does not hold exactly the jobs of shard {} of {n}; compute it again",
                part.k
            ));
        }
        for (i, result) in &shard.results {
            results[*i as usize] = Some(result.clone());
        }
    }
    if let Some(k) = by_part.iter().position(Option::is_none) {
        let k = k + 1;
        return Err(format!(
            "shard {k} of {n} is missing: run `ratelab study --shard {k}/{n} --out DIR` \
             with the same --runs, --minutes and --seed, and merge its folder too"
        ));
    }
    Ok(Merged {
        config,
        honest_only,
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_k_of_n_and_bad_ones_name_the_nearest() {
        assert_eq!(
            Part::parse("--shard", "2/3").expect("valid"),
            Part { k: 2, n: 3 }
        );
        assert_eq!(
            Part::parse("--shard", " 1 / 1 ").expect("valid"),
            Part { k: 1, n: 1 }
        );
        for (bad, nearest) in [("0/3", "1/3"), ("4/3", "3/3"), ("1/0", "1/1"), ("3", "1/1")] {
            let e = Part::parse("--shard", bad)
                .expect_err("invalid")
                .to_string();
            assert!(e.contains(bad.trim()) && e.contains(nearest), "{bad}: {e}");
        }
        assert!(Part::parse("--shard", "a/b").is_err());
        assert!(Part::parse("--shard", "1/10001").is_err());
    }

    #[test]
    fn the_parts_of_n_hold_every_job_once() {
        for n in 1..9 {
            for i in 0..50 {
                let holders = (1..=n).filter(|&k| Part { k, n }.holds(i)).count();
                assert_eq!(holders, 1, "job {i} of {n} parts");
            }
        }
    }
}
