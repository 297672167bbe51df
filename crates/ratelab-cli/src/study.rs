//! `ratelab study`: runs every experiment of the essay's study on all cores, with a progress
//! bar on stderr, and writes its tables (CSV, Markdown), plots (SVG) and REPRODUCTION.md.

use crate::args::{StudyArgs, StudyFormat};
use crate::pool;
use crate::text::{self, quote};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ratelab::spec::parse_count;
use ratelab::study::{
    assemble, plan, run_job, Job, JobResult, Part, Shard, StudyConfig, StudyReport,
};
use ratelab_charts::{Draw, Plot, Theme};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Parses `study` flags, runs it, writes the outputs; returns what to print.
pub fn main(args: &StudyArgs) -> Result<String, String> {
    let e = |err: ratelab::Error| text::core(&err);
    let config = StudyConfig {
        runs: parse_count("--runs", &args.runs, 2, 1_000).map_err(e)? as u32,
        minutes: parse_count("--minutes", &args.minutes, 10, 100_000).map_err(e)?,
        seed: parse_count("--seed", &args.seed, 0, u64::MAX).map_err(e)?,
    };
    let threads = args
        .threads
        .as_deref()
        .map(|t| parse_count("--threads", t, 1, 256).map(|n| n as usize))
        .transpose()
        .map_err(e)?;
    // An empty folder name is no folder: it would write the study into the current one.
    if args.out.as_deref().is_some_and(|o| o.trim().is_empty()) {
        return Err(
            "invalid --out '': expected a folder to write the study's files into, like --out study"
                .into(),
        );
    }
    let part = args
        .shard
        .as_deref()
        .map(|s| Part::parse("--shard", s))
        .transpose()
        .map_err(e)?;
    if part.is_some() && !args.merge.is_empty() {
        return Err(
            "--shard and --merge go in separate commands: compute each shard with \
                    --shard K/N --out DIR, then --merge DIR... --out DIR"
                .into(),
        );
    }
    if part.is_some() && args.out.is_none() {
        return Err(
            "--shard needs --out DIR: the folder its shard-K-of-N.json is written to, \
                    e.g. --shard 1/2 --out part1"
                .into(),
        );
    }
    if !args.merge.is_empty() {
        // The size, seed and part are the shards'; a flag that says otherwise is refused,
        // not ignored.
        let given = [
            ("--runs", args.runs != "20"),
            ("--minutes", args.minutes != "2000"),
            ("--seed", args.seed != "1"),
            ("--only", args.only.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(format!(
                "--merge takes the study's size and seed from its shards; {flag} belongs on \
                 the --shard commands, so leave it out here"
            ));
        }
    }
    let out = args.out.as_deref().map(PathBuf::from);
    // Read before --out is touched: a merge's mistakes cost nothing.
    let merged = if args.merge.is_empty() {
        None
    } else {
        Some(read_shards(&args.merge)?)
    };
    if let Some(dir) = &out {
        // Before any work: an hour's study must not end in "cannot write".
        prepare_out(dir)?;
    }
    let started = Instant::now();
    let merging = merged.as_ref().map(|m| m.results.len());
    let report = match (merged, part) {
        (Some(merged), _) => {
            let mut jobs = plan(merged.config).map_err(|e| text::core(&e))?;
            if merged.honest_only {
                ratelab::study::keep_honest(&mut jobs);
            }
            assemble(merged.config, &jobs, &merged.results)
        }
        (None, Some(part)) => {
            let honest_only = args.only.is_some();
            let (jobs, results) = run_jobs(config, honest_only, Some(part), threads, args.timings)?;
            let results = results
                .into_iter()
                .enumerate()
                .filter_map(|(i, r)| r.map(|r| (i as u64, r)))
                .collect();
            let shard = Shard::new(config, honest_only, part, &jobs, results);
            let Some(dir) = &out else {
                return Err("--shard needs --out DIR".into());
            };
            let path = dir.join(part.file_name());
            let json = serde_json::to_string(&shard).map_err(|e| e.to_string())?;
            std::fs::write(&path, json + "\n")
                .map_err(|e| format!("cannot write {}: {e}", quote(&path.display().to_string())))?;
            text::note(&format!(
                "ratelab: shard {} of {} ({} of {} jobs) in {:.2} s; written to {}",
                part.k,
                part.n,
                shard.results.len(),
                jobs.len(),
                started.elapsed().as_secs_f64(),
                text::escaped(&path.display().to_string())
            ));
            return Ok(String::new());
        }
        (None, None) => run(config, args.only.is_some(), threads, args.timings)?,
    };
    let seconds = started.elapsed().as_secs_f64();
    if let Some(dir) = &out {
        write_outputs(dir, &report)?;
    }
    text::note(&format!(
        "ratelab: study {} in {seconds:.2} s{}",
        merging.map_or("done".to_owned(), |jobs| format!(
            "merged from {} shard folder(s), {jobs} jobs,",
            args.merge.len()
        )),
        out.as_ref().map_or(String::new(), |d| format!(
            "; files in {}",
            text::escaped(&d.display().to_string())
        ))
    ));
    if args.format == StudyFormat::Json {
        return serde_json::to_string_pretty(&report)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string());
    }
    Ok(report
        .tables
        .iter()
        .map(|t| t.markdown() + "\n")
        .collect::<String>()
        + "\n"
        + &report.reproduction())
}

/// Creates `--out` and checks that a file can be written in it (and removes that file).
fn prepare_out(dir: &Path) -> Result<(), String> {
    let shown = || quote(&dir.display().to_string());
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create --out directory {}: {e}", shown()))?;
    let probe = dir.join(format!(".ratelab-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"ratelab")
        .map_err(|e| format!("cannot write in --out directory {}: {e}", shown()))?;
    std::fs::remove_file(&probe)
        .map_err(|e| format!("cannot remove a file from --out directory {}: {e}", shown()))
}

/// Runs every job (or only the honest-client table's) on every core; the report does not
/// depend on the thread count. On a terminal a progress bar shows on stderr.
pub fn run(
    config: StudyConfig,
    honest_only: bool,
    threads: Option<usize>,
    timings: bool,
) -> Result<StudyReport, String> {
    let (jobs, results) = run_jobs(config, honest_only, None, threads, timings)?;
    Ok(assemble(config, &jobs, &results))
}

/// Plans the study and runs its jobs (with `part`, only that slice's: the others' results
/// are `None`); returns the plan and the results in its order.
fn run_jobs(
    config: StudyConfig,
    honest_only: bool,
    part: Option<Part>,
    threads: Option<usize>,
    timings: bool,
) -> Result<(Vec<Job>, Vec<Option<JobResult>>), String> {
    let mut jobs = plan(config).map_err(|e| text::core(&e))?;
    if honest_only {
        ratelab::study::keep_honest(&mut jobs);
    }
    let mine: Vec<usize> = (0..jobs.len())
        .filter(|&i| part.is_none_or(|p| p.holds(i)))
        .collect();
    let threads = threads.unwrap_or_else(pool::cores);
    let mut compute_us = 0u128;
    let mut job_us = vec![0u128; jobs.len()];
    let mut results: Vec<Option<Result<JobResult, String>>> = vec![None; jobs.len()];
    let bar = progress_bar(mine.len() as u64);
    pool::for_each(
        mine.len(),
        threads,
        |m| {
            let t0 = Instant::now();
            let result = run_job(&jobs[mine[m]]).map_err(|e| text::core(&e));
            (result, t0.elapsed().as_micros())
        },
        |m, (result, us)| {
            compute_us += us;
            job_us[mine[m]] = us;
            results[mine[m]] = Some(result);
            if let Some(bar) = &bar {
                bar.inc(1);
            }
        },
    )?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    text::note(&format!(
        "ratelab: {} jobs, {:.2} s inside the simulator, summed over jobs",
        mine.len(),
        compute_us as f64 / 1e6
    ));
    if timings {
        let timed: Vec<Job> = mine.iter().map(|&i| jobs[i].clone()).collect();
        let us: Vec<u128> = mine.iter().map(|&i| job_us[i]).collect();
        text::note(&timings_table(&timed, &us));
    }
    let mut out = Vec::with_capacity(jobs.len());
    for (i, r) in results.into_iter().enumerate() {
        out.push(match r {
            Some(r) => Some(r?),
            None if mine.binary_search(&i).is_ok() => return Err("a job did not run".into()),
            None => None,
        });
    }
    Ok((jobs, out))
}

/// Reads every shard-K-of-N.json in `dirs` and checks they make one whole study.
fn read_shards(dirs: &[String]) -> Result<ratelab::study::Merged, String> {
    let mut shards = Vec::new();
    for dir in dirs {
        let shown = quote(dir);
        let entries = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read --merge folder {shown}: {e}"))?;
        let mut names: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
            })
            .collect();
        if names.is_empty() {
            return Err(format!(
                "no shard file (shard-K-of-N.json) in --merge folder {shown}: write them with \
                 `ratelab study --shard K/N --out {dir}`"
            ));
        }
        names.sort();
        for path in names {
            let name = quote(&path.display().to_string());
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("cannot read {name}: {e}"))?;
            let shard: Shard = serde_json::from_str(&text).map_err(|e| {
                format!("{name} is not a shard written by `ratelab study --shard`: {e}")
            })?;
            shards.push((name, shard));
        }
    }
    ratelab::study::merge(shards, |config, honest_only| {
        let mut jobs = plan(config)?;
        if honest_only {
            ratelab::study::keep_honest(&mut jobs);
        }
        Ok(jobs)
    })
}

/// Each experiment's jobs, its seconds inside the simulator summed over its jobs, its share of
/// all of them and its slowest job, slowest experiment first.
fn timings_table(jobs: &[Job], job_us: &[u128]) -> String {
    let mut by: Vec<(&str, usize, u128, u128)> = Vec::new();
    for (job, &us) in jobs.iter().zip(job_us) {
        let name = job.kind.experiment();
        match by.iter_mut().find(|e| e.0 == name) {
            Some(e) => {
                e.1 += 1;
                e.2 += us;
                e.3 = e.3.max(us);
            }
            None => by.push((name, 1, us, us)),
        }
    }
    by.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    let all: u128 = job_us.iter().sum();
    let mut out = format!(
        "{:<30} {:>5} {:>9} {:>6} {:>12}",
        "experiment", "jobs", "seconds", "share", "slowest job"
    );
    for (name, n, us, slowest) in by {
        out += &format!(
            "\n{name:<30} {n:>5} {:>9.3} {:>5.1}% {:>10.3} s",
            us as f64 / 1e6,
            100.0 * us as f64 / all.max(1) as f64,
            slowest as f64 / 1e6
        );
    }
    out
}

/// A bar of `total` jobs on stderr, only when stderr is a terminal: a log or a pipe gets
/// the summary lines alone.
fn progress_bar(total: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(10));
    if let Ok(style) =
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} jobs, {elapsed} elapsed, {eta} left")
    {
        bar.set_style(style.progress_chars("#>-"));
    }
    Some(bar)
}

fn write_outputs(dir: &Path, report: &StudyReport) -> Result<(), String> {
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| {
            format!(
                "cannot write {}: {e}",
                quote(&dir.join(name).display().to_string())
            )
        })
    };
    let mut markdown = String::new();
    for t in &report.tables {
        write(&format!("{}.csv", t.id), &t.csv())?;
        markdown += &(t.markdown() + "\n");
    }
    write("tables.md", &markdown)?;
    write("REPRODUCTION.md", &report.reproduction())?;
    write("claims.csv", &report.claims_csv())?;
    write("swc-offsets.svg", &svg(&report.counter_offsets_plot())?)?;
    for p in &report.plots {
        write(&format!("{}.svg", p.id), &svg(&p.plot)?)?;
    }
    Ok(())
}

/// One of the study's plots as an SVG of 800 × 400, drawn by the same chart code as the page's.
fn svg(plot: &Plot) -> Result<String, String> {
    plot.svg(800, 400, Theme::LIGHT)
}
