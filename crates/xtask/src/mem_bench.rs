//! `cargo xtask mem-bench`: the largest accepted scenario of each kind, run by the release
//! CLI, each run's peak resident memory read from `/proc`.

use crate::cmd::{run, step, target_dir, Result};
use std::env;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The scenarios of `cargo xtask mem-bench`: (kind, what differs from the largest accepted
/// scenario of its kind, arguments). `REPLAY` stands for the generated replay file.
const MEM_BENCH: [(&str, &str, &str); 5] = [
    (
        "flood at a 24 h window",
        "5 minutes of flood rather than the most decisions allowed: the window, limit and limiters set the memory",
        "--window 24h --limit 1000000 --limiter fixed-window --limiter sliding-log --limiter sliding-log:record-rejects=true --limiter gcra --traffic flood:every=1us,for=5min",
    ),
    (
        "a limit of a million, many limiters",
        "15 limiters: the most that fit (16 are refused); 5 minutes, 2 runs",
        "--limit 1000000 --window 1min --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --limiter fixed-window --traffic steady:load=1 --minutes 5 --runs 2",
    ),
    (
        "long queueing run",
        "1,000 minutes rather than 100,000: memory does not grow with the run",
        "--limit 1000 --window 1s --limiter leaky-bucket:burst=1000,mode=queue --traffic steady:load=2 --minutes 1000",
    ),
    (
        "large replay",
        "25,000,000 timestamps, the most accepted (one a ms, as epoch ms)",
        "--limit 100000 --window 1min --limiter sliding-log --limiter token-bucket --limiter fixed-window --traffic replay:file=REPLAY",
    ),
    (
        "big retry spike",
        "a spike of 5,000,000 at 4 tries, about the most accepted (10,000,000 is refused)",
        "--limit 100000 --window 1min --limiter token-bucket --traffic retry:rate=1/1s,spike=5000000,at=1min,tries=4,every=1s --minutes 10",
    ),
];

/// The largest replay accepted: 25,000,000 epoch-ms timestamps, one a millisecond.
const REPLAY_TIMES: u64 = 25_000_000;

/// Runs [`MEM_BENCH`] with a release build of the CLI and prints each run's peak resident
/// memory (the kernel's high-water mark, VmHWM, read from /proc while the run lasts).
pub(crate) fn mem_bench() -> Result {
    run("cargo", &["build", "--release", "-p", "ratelab-cli"], &[])?;
    let bin = target_dir()?.join("release").join("ratelab");
    let replay = env::temp_dir().join("ratelab-mem-bench-replay.txt");
    step(&format!(
        "writing {REPLAY_TIMES} timestamps to {}",
        replay.display()
    ));
    write_replay(&replay)?;
    let mut rows = Vec::new();
    for (kind, note, args) in MEM_BENCH {
        let args = args.replace("REPLAY", &replay.to_string_lossy());
        step(&format!("{kind}: ratelab simulate {args}"));
        let (peak_kb, seconds, status) = peak_rss(&bin, &args)?;
        eprintln!(
            "  peak {:.1} MB, {seconds:.1} s, {status}",
            peak_kb as f64 / 1024.0
        );
        rows.push(format!(
            "| {kind} | `{}` | {:.1} MB | {seconds:.1} s | {note} |",
            args.replace(&*replay.to_string_lossy(), "REPLAY"),
            peak_kb as f64 / 1024.0
        ));
        if !status.success() {
            return Err(format!("`ratelab simulate {args}` failed with {status}"));
        }
    }
    let _ = std::fs::remove_file(&replay);
    println!("| scenario | `ratelab simulate` arguments | peak RSS | time | note |");
    println!("| --- | --- | --- | --- | --- |");
    for row in rows {
        println!("{row}");
    }
    Ok(())
}

/// Writes [`REPLAY_TIMES`] epoch-ms lines, one a millisecond.
fn write_replay(path: &Path) -> Result {
    use std::io::Write;
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let start: u64 = 1_700_000_000_000;
    for i in 0..REPLAY_TIMES {
        writeln!(out, "{}", start + i).map_err(|e| format!("cannot write the replay: {e}"))?;
    }
    out.flush()
        .map_err(|e| format!("cannot write the replay: {e}"))
}

/// Runs `ratelab simulate ARGS`, output discarded, and returns its peak resident memory in
/// KB, its wall time and its exit status. The peak is VmHWM from /proc/PID/status, which the
/// kernel keeps as a high-water mark: polling it every 5 ms until the process ends misses
/// only a peak reached in its last few milliseconds.
fn peak_rss(bin: &Path, args: &str) -> Result<(u64, f64, std::process::ExitStatus)> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .arg("simulate")
        .args(args.split_whitespace())
        .stdout(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
        }
        match child.try_wait() {
            Ok(Some(status)) => return Ok((peak, started.elapsed().as_secs_f64(), status)),
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for {}: {e}", bin.display())),
        }
    }
}
