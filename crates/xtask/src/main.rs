//! `cargo xtask`: the project's set-up and orchestration, so that a fresh machine needs two
//! commands. `serve` builds and serves the page; `test` runs every check CI runs.
//!
//! Every install step first looks for what it would install and skips it when present, so a
//! second run costs seconds. Only std is used, so this builds before anything else exists.

mod cmd;
mod live;
mod mem_bench;
mod page;

use cmd::{output, output_in_root, root, run, run_capturing, step, target_dir, Result};
use live::{
    build_redis_cell, probe_bench, probe_python, probe_record, probe_soak, redis_cell_module,
    Servers, GO, GO_X_TIME, HAPROXY, NGINX, PROBE_LIVE, REDIS, VARNISHD, VARNISH_MODULES,
};
use mem_bench::mem_bench;
use page::{build_page, docs, PageBuilds};
use std::env;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// The wasm-bindgen version: the CLI and the crate must match exactly.
const WASM_BINDGEN: &str = "0.2.130";

/// The Trunk release line: 0.22 needs a newer rustc than this machine kind has.
const TRUNK: &str = "0.21";

/// The fuzz targets of fuzz/, each with the longest input libFuzzer is to try.
const FUZZ_TARGETS: [(&str, u32); 5] = [
    ("spec", 4_096),
    ("url_state", 4_096),
    ("import", 65_536),
    ("limiter_laws", 16_384),
    ("scenario", 1_024),
];

const USAGE: &str = "\
cargo xtask <command>

  serve    install what is missing, build the page and serve it on http://127.0.0.1:8080/
  test     install what is missing, then run every check: fmt, clippy, native tests,
           wasm tests in headless Chromium, the built page end to end in Chromium
  test --quick
           the inner loop: formatting and the native tests (unit, property, CLI); no
           set-up, clippy, memory-peak measurement, live probes, wasm or browser. Not
           what CI runs.
  build    install what is missing and build the static site into dist/
  setup    only install what is missing
  docs     render the book under docs/ into dist/docs/ (which `build` does too)
  screenshot
           build the page and take the README's picture of it again (docs/images/page.png)
  probe-bench
           start nginx on loopback and measure how late `ratelab probe` sends at 2,000
           requests a second (the book's performance chapter, docs/src/performance.md)
  probe-record [NAME ...]
           start nginx, redis-server and HAProxy on loopback and record the page's Real
           limiters probe reports (those named, or all) into www/probes/, then write the
           view the page shows of each
  probe-soak N [TEST]
           start nginx, redis-server, HAProxy and the libraries' servers on loopback and run the live probe tests N
           times in a row with one core kept busy by a spin loop; prints `N passed, M failed`
           and the range of every timing margin the tests print; with TEST, only the live
           tests whose names contain it
  mem-bench
           build the CLI in release and run `ratelab simulate` on the largest accepted
           scenario of each kind (a flood at a 24 h window, a limit of a million with many
           limiters, a long queueing run, a large replay, a big retry spike), printing the
           peak resident memory of each (the book's memory chapter, docs/src/memory.md)
  fuzz [SECONDS]
           install cargo-fuzz if missing, then run each fuzz target of fuzz/ for SECONDS
           (default 600) in turn, failing on any crash; `cargo xtask fuzz 30` is the short
           form. Not part of `test`.
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") if args.get(1).map(String::as_str) == Some("--quick") => quick_test(),
        Some("test") if args.len() > 1 => Err(format!(
            "test takes --quick or nothing (got {:?}): `cargo xtask test` runs every check, \
             `cargo xtask test --quick` the native tests alone",
            args[1]
        )),
        Some("test") => setup().and_then(|()| test()),
        Some("serve") => setup().and_then(|()| serve()),
        Some("build") => setup().and_then(|()| build_page()),
        Some("docs") => docs(),
        Some("screenshot") => setup()
            .and_then(|()| build_page())
            .and_then(|()| run("node", &["tests/screenshot.mjs"], &[])),
        Some("setup") => setup(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("probe-bench") => setup().and_then(|()| probe_bench()),
        Some("mem-bench") => mem_bench(),
        Some("probe-record") => setup().and_then(|()| probe_record(&args[1..])),
        Some("probe-soak") => match args.get(1).and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if n > 0 => setup().and_then(|()| probe_soak(n, args.get(2).map(String::as_str))),
            _ => Err(format!(
                "probe-soak needs a number of rounds from 1 up, like `cargo xtask probe-soak 30` (got {:?})",
                args.get(1).map_or("nothing", String::as_str)
            )),
        },
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Installs whatever is missing: the wasm target, wasm-bindgen's CLI, Chromium and its driver.
fn setup() -> Result {
    step("set-up (skips what is already installed)");
    let targets = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !targets
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        run("rustup", &["target", "add", "wasm32-unknown-unknown"], &[])?;
    }
    for (tool, component) in [("fmt", "rustfmt"), ("clippy", "clippy")] {
        if output("cargo", &[tool, "--version"]).is_none() {
            run("rustup", &["component", "add", component], &[])?;
        }
    }
    let have = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if !have.contains(WASM_BINDGEN) {
        // Without --locked: its lock file pins a release the registry mirror lacks.
        run(
            "cargo",
            &["install", "wasm-bindgen-cli", "--version", WASM_BINDGEN],
            &[],
        )?;
    }
    let trunk = output("trunk", &["--version"]).unwrap_or_default();
    if !trunk.contains(&format!("trunk {TRUNK}.")) {
        run(
            "cargo",
            &[
                "install",
                "trunk",
                "--version",
                &format!("~{TRUNK}"),
                "--locked",
            ],
            &[],
        )?;
    }
    if !Path::new("/usr/bin/chromium").exists() || !Path::new("/usr/bin/chromedriver").exists() {
        apt_install(&["chromium", "chromium-driver"])?;
    }
    // The real limiters `ratelab probe` is tested against; started by the tests' harness
    // below, never as system services.
    if ![NGINX, REDIS, HAPROXY]
        .iter()
        .all(|p| Path::new(p).exists())
    {
        apt_install(&["nginx", "redis-server", "haproxy"])?;
    }
    // The libraries' live tests: Go's x/time/rate (Debian's golang and its x/time), Varnish
    // with Debian's varnish-modules (vsthrottle), and Python's limits from PyPI (pinned in
    // tests/probe/requirements.txt) in a virtual environment of its own under target/.
    if ![GO, GO_X_TIME, VARNISHD, VARNISH_MODULES]
        .iter()
        .all(|p| Path::new(p).exists())
    {
        apt_install(&[
            "golang-go",
            "golang-golang-x-time-dev",
            "varnish",
            "varnish-modules",
        ])?;
    }
    if !redis_cell_module().exists() {
        build_redis_cell()?;
    }
    let python = probe_python();
    let pinned = python.exists()
        && output(
            &python.display().to_string(),
            &["-c", "import limits; print(limits.__version__)"],
        )
        .is_some_and(|v| v.trim() == "5.8.0");
    if !pinned {
        let venv = python
            .parent()
            .and_then(Path::parent)
            .ok_or("no directory for the probe's Python")?
            .display()
            .to_string();
        run("python3", &["-m", "venv", &venv], &[])?;
        run(
            &python.display().to_string(),
            &[
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
                "tests/probe/requirements.txt",
            ],
            &[],
        )?;
    }
    let node_modules = root().join("node_modules");
    // (express, express-rate-limit and rate-limiter-flexible: the Node libraries the probe
    // tests run on loopback.)
    let installed = [
        "playwright-core",
        "binaryen",
        "axe-core",
        "terser",
        "express",
        "express-rate-limit",
        "rate-limiter-flexible",
    ]
    .iter()
    .all(|p| node_modules.join(p).join("package.json").exists());
    if !installed {
        // The versions are pinned in package-lock.json; browsers are never downloaded.
        run(
            "npm",
            &["ci", "--no-audit", "--no-fund"],
            &[("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")],
        )?;
    }
    eprintln!("tools ready");
    Ok(())
}

fn apt_install(packages: &[&str]) -> Result {
    let root_user = output("id", &["-u"]).is_some_and(|u| u.trim() == "0");
    let (program, prefix): (&str, &[&str]) = if root_user {
        ("apt-get", &[])
    } else {
        ("sudo", &["apt-get"])
    };
    let with = |args: &[&str]| -> Vec<String> {
        prefix.iter().chain(args).map(|s| s.to_string()).collect()
    };
    let noninteractive = [("DEBIAN_FRONTEND", "noninteractive")];
    let update = with(&["update", "-qq"]);
    run(
        program,
        &update.iter().map(String::as_str).collect::<Vec<_>>(),
        &noninteractive,
    )?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend_from_slice(packages);
    let install = with(&install);
    run(
        program,
        &install.iter().map(String::as_str).collect::<Vec<_>>(),
        &noninteractive,
    )
}

/// The inner loop: formatting and the native tests (the live probes stay ignored).
fn quick_test() -> Result {
    let started = Instant::now();
    step("formatting");
    run("cargo", &["fmt", "--all", "--check"], &[])?;
    step("native tests (optimised), without the live probes and the memory-peak measurement");
    // The memory-peak measurement (every limiter, fleet and client against the allocator's
    // count: 80 s on two cores) is not a unit or property test; `cargo xtask test` runs it.
    run(
        "cargo",
        &[
            "test",
            "--workspace",
            "--profile",
            "ci",
            "--",
            "--skip",
            "the_estimate_bounds_the_measured_peak_and_is_close_to_it",
        ],
        &[],
    )?;
    eprintln!(
        "\nquick checks passed in {:.0} s (`cargo xtask test` runs every check, the \
         memory-peak measurement included)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every check CI runs.
fn test() -> Result {
    let started = Instant::now();
    step("formatting");
    run("cargo", &["fmt", "--all", "--check"], &[])?;
    // Trunk builds `--offline`: every crate is fetched first (on a fresh machine nothing is
    // there yet; on a warm one this takes a moment).
    step("every crate of the lock file, fetched (skipped where already there)");
    run("cargo", &["fetch"], &[])?;
    step("the page's two builds, started in the background (they are waited for below)");
    let mut page = PageBuilds::start()?;
    step("clippy, warnings denied (native, and the wasm crates for wasm32)");
    let deny = ["--", "-D", "warnings"];
    run(
        "cargo",
        &[&["clippy", "--workspace", "--all-targets"][..], &deny].concat(),
        &[],
    )?;
    // The core's unit tests use native-only dev-dependencies, so for wasm only its library
    // and its wasm test are checked.
    for targets in [
        &["-p", "ratelab", "--lib", "--test", "determinism"][..],
        &["-p", "ratelab-web", "--all-targets"],
        &["-p", "ratelab-study", "--all-targets"],
        &["-p", "ratelab-extra", "--all-targets"],
        &["-p", "ratelab-tools", "--all-targets"],
    ] {
        let args = [
            &["clippy", "--target", "wasm32-unknown-unknown"][..],
            targets,
            &deny,
        ]
        .concat();
        run("cargo", &args, &[])?;
    }
    // The core without its features, as the page's smaller modules take it: code that only
    // the study's build uses must not leave it warnings.
    run(
        "cargo",
        &[
            &["clippy", "-p", "ratelab", "--lib", "--no-default-features"][..],
            &deny,
        ]
        .concat(),
        &[],
    )?;
    step("the core's API documentation, warnings denied (its examples run with the tests)");
    run(
        "cargo",
        &["doc", "-p", "ratelab", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // And with the private items, whose links a contributor follows as much.
    run(
        "cargo",
        &[
            "doc",
            "-p",
            "ratelab",
            "--no-deps",
            "--document-private-items",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    step("native tests (optimised: the statistical tests simulate millions of decisions)");
    let native = run_capturing("cargo", &["test", "--workspace", "--profile", "ci"], &[])?;
    no_ignored_tests_but_probe_live(&native)?;
    step(
        "ratelab probe against real nginx, redis-server (with redis-cell), HAProxy and the libraries (Node's, Go's, Varnish's, Python's) on loopback",
    );
    page.confine(true);
    {
        let servers = Servers::start()?;
        let env = servers.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run("cargo", &[&["test"][..], &PROBE_LIVE].concat(), &env)?;
    }
    page.confine(false);
    step("wasm tests in headless Chromium");
    let chromedriver = [("CHROMEDRIVER", "/usr/bin/chromedriver")];
    let wasm = ["--target", "wasm32-unknown-unknown"];
    run(
        "cargo",
        &[
            &["test", "-p", "ratelab"][..],
            &wasm,
            &["--test", "determinism"],
        ]
        .concat(),
        &chromedriver,
    )?;
    for krate in ["ratelab-web", "ratelab-extra", "ratelab-tools"] {
        run(
            "cargo",
            &[&["test", "-p", krate][..], &wasm, &["--test", "browser"]].concat(),
            &chromedriver,
        )?;
    }
    step("the page, built and tested end to end in Chromium");
    page.wait_page()?;
    node_tests(page)?;
    eprintln!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The sum of the `N ignored` counts in libtest's `test result:` lines.
fn ignored_in(output: &str) -> u64 {
    output
        .lines()
        .filter_map(|l| l.trim().strip_prefix("test result:"))
        .filter_map(|l| {
            l.split(';')
                .find_map(|part| part.trim().strip_suffix(" ignored"))
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .sum()
}

/// A green run means every test ran: the only ignored tests allowed in the workspace run are
/// the `probe_live` ones, which need nginx, redis-server and HAProxy and which this task runs
/// itself, with `--ignored`, right after.
fn no_ignored_tests_but_probe_live(native: &str) -> Result {
    let ignored = ignored_in(native);
    let listed = output_in_root(
        "cargo",
        // The same selection as the live run (up to `--ignored`), listed instead of run.
        &[&["test"][..], &PROBE_LIVE[..8], &["--list"]].concat(),
    )
    .ok_or("cannot list the probe_live tests")?;
    let probe_live = listed.lines().filter(|l| l.ends_with(": test")).count() as u64;
    if probe_live == 0 {
        return Err("no ignored probe_live tests listed: is the probe's live test gone?".into());
    }
    if ignored != probe_live {
        return Err(format!(
            "the workspace tests ignored {ignored} test(s) but only the {probe_live} probe_live \
             ones are run later; `cargo test --workspace --profile ci -- --list --ignored` \
             names them"
        ));
    }
    eprintln!("ignored: {ignored}, exactly the probe_live tests run below");
    Ok(())
}

/// End-to-end test files run after the page with the fault is built: the panic banner's,
/// which loads that page, and the one that times the page's own work (its longest
/// main-thread task), which runs with the machine to itself.
const E2E_AFTER_FAULT: [&str; 2] = ["csp.test.mjs", "hostile.test.mjs"];

/// The end-to-end tests, against the `ratelab` binary built here (passed in `RATELAB_CLI`),
/// one file at a time, failing on any skipped or to-do test as on a failed one: every file
/// but those of [`E2E_AFTER_FAULT`] while the page with the fault is still building in the
/// background, then those.
fn node_tests(page: PageBuilds) -> Result {
    run(
        "cargo",
        &[
            "build",
            "-p",
            "ratelab-cli",
            "--profile",
            "ci",
            "--bin",
            "ratelab",
        ],
        &[],
    )?;
    let target = target_dir()?;
    let cli = target.join("ci").join("ratelab");
    if !cli.is_file() {
        return Err(format!("no ratelab binary at {}", cli.display()));
    }
    let dir = root().join("tests");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.ends_with(".test.mjs"))
        .collect();
    files.sort();
    if let Some(gone) = E2E_AFTER_FAULT
        .iter()
        .find(|f| !files.iter().any(|g| g == *f))
    {
        return Err(format!(
            "tests/{gone} is named in E2E_AFTER_FAULT but is not there"
        ));
    }
    let (after, first): (Vec<String>, Vec<String>) = files
        .into_iter()
        .partition(|f| E2E_AFTER_FAULT.contains(&f.as_str()));
    let cli_s = cli.display().to_string();
    let mut tests = node_test_files("first", &first, &cli_s)?;
    page.wait()?;
    tests += node_test_files("after", &after, &cli_s)?;
    eprintln!("end to end: {tests} tests, none skipped");
    Ok(())
}

/// Runs the end-to-end test `files` (names under tests/) one at a time, with a TAP report in
/// `target/node-tests-PART.tap`; how many tests ran, or an error if any failed, was skipped or
/// is to do.
fn node_test_files(part: &str, files: &[String], cli: &str) -> Result<u64> {
    let tap = target_dir()?.join(format!("node-tests-{part}.tap"));
    let _ = std::fs::remove_file(&tap);
    let tap_s = tap.display().to_string();
    let destination = format!("--test-reporter-destination={tap_s}");
    let paths: Vec<String> = files.iter().map(|f| format!("tests/{f}")).collect();
    let mut args = vec![
        "--test",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        "--test-reporter=tap",
        &destination,
    ];
    args.extend(paths.iter().map(String::as_str));
    run("node", &args, &[("RATELAB_CLI", cli)])?;
    let summary = std::fs::read_to_string(&tap).map_err(|e| format!("cannot read {tap_s}: {e}"))?;
    let (ran, skipped, todo) = tap_counts(&summary).ok_or(format!("no test summary in {tap_s}"))?;
    if ran == 0 || skipped > 0 || todo > 0 {
        return Err(format!(
            "the end-to-end tests ran {ran} test(s) and skipped {skipped}, with {todo} to do: \
             a skipped test is a failure here (see {tap_s})"
        ));
    }
    Ok(ran)
}

/// Tests, skipped and to-do tests from the closing `# tests N`, `# skipped N` (`# skip N` in
/// other TAP producers) and `# todo N` lines of a TAP report; `None` without a `# tests` line.
fn tap_counts(tap: &str) -> Option<(u64, u64, u64)> {
    let count = |names: &[&str]| -> Option<u64> {
        tap.lines().rev().find_map(|l| {
            let (name, n) = l.strip_prefix("# ")?.split_once(' ')?;
            names.contains(&name).then(|| n.trim().parse().ok())?
        })
    };
    Some((
        count(&["tests"])?,
        count(&["skip", "skipped"]).unwrap_or(0),
        count(&["todo"]).unwrap_or(0),
    ))
}

/// Builds the page and serves dist/ on loopback until interrupted.
fn serve() -> Result {
    build_page()?;
    step("serving the page on http://127.0.0.1:8080/ (Ctrl-C stops)");
    run("node", &["tests/serve.mjs", "dist", "8080"], &[])
}

/// Runs each fuzz target for `seconds` (default 600) in turn, on one core; a crash fails.
///
/// cargo-fuzz needs nightly flags, which `RUSTC_BOOTSTRAP=1` allows on stable. New inputs go
/// to fuzz/target/corpus/, so the committed corpus in fuzz/corpus/ only seeds the runs.
fn fuzz(seconds: Option<&str>) -> Result {
    let seconds: u32 = match seconds {
        None => 600,
        Some(s) => s
            .parse()
            .ok()
            .filter(|&s| s > 0)
            .ok_or_else(|| format!("fuzz takes a number of seconds above 0, not '{s}'"))?,
    };
    step("cargo-fuzz (skipped when installed)");
    if output("cargo", &["fuzz", "--version"]).is_none() {
        run("cargo", &["install", "cargo-fuzz", "--locked"], &[])?;
    }
    let bootstrap = [("RUSTC_BOOTSTRAP", "1")];
    let fuzz_dir = root().join("fuzz");
    for (target, max_len) in FUZZ_TARGETS {
        step(&format!("fuzzing {target} for {seconds} s"));
        let found = fuzz_dir.join("target").join("corpus").join(target);
        std::fs::create_dir_all(&found)
            .map_err(|e| format!("cannot create {}: {e}", found.display()))?;
        let seeds = fuzz_dir.join("corpus").join(target);
        let (found, seeds) = (found.display().to_string(), seeds.display().to_string());
        let (time, len) = (
            format!("-max_total_time={seconds}"),
            format!("-max_len={max_len}"),
        );
        run(
            "cargo",
            &[
                "fuzz", "run", target, "-O", &found, &seeds, "--", &time, &len,
            ],
            &bootstrap,
        )
        .map_err(|e| format!("{e}: the crashing input is in fuzz/artifacts/{target}/"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn ignored_tests_are_summed_over_every_test_binary() {
        let out = "\
running 3 tests
test a ... ok
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

running 7 tests
test result: ok. 0 passed; 0 failed; 7 ignored; 0 measured; 0 filtered out; finished in 0.00s
   Doc-tests ratelab
test result: ok. 12 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out; finished in 1.2s
";
        assert_eq!(ignored_in(out), 9);
        assert_eq!(
            ignored_in("test x ... ignored\n"),
            0,
            "only summaries count"
        );
    }

    #[test]
    fn a_tap_summary_gives_tests_skips_and_todos() {
        // The closing lines of `node --test --test-reporter=tap` (Node 20).
        let tap = "TAP version 13\n# Subtest: x\nok 1 - x\n1..3\n# tests 3\n# suites 0\n\
                   # pass 1\n# fail 0\n# cancelled 0\n# skipped 1\n# todo 1\n# duration_ms 226\n";
        assert_eq!(tap_counts(tap), Some((3, 1, 1)));
        let other = "1..2\n# tests 2\n# pass 2\n# skip 0\n";
        assert_eq!(tap_counts(other), Some((2, 0, 0)));
        assert_eq!(tap_counts("1..0\n"), None, "no summary is not a pass");
    }

    #[test]
    fn the_target_directory_is_cargo_s() {
        let want = env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .map(|p| if p.is_absolute() { p } else { root().join(p) })
            .unwrap_or_else(|| root().join("target"));
        assert_eq!(target_dir(), Ok(want));
    }
}
