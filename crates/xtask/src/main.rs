//! `cargo xtask`: the project's set-up and orchestration, so that a fresh machine needs two
//! commands. `serve` builds and serves the page; `test` runs every check CI runs.
//!
//! Every install step first looks for what it would install and skips it when present, so a
//! second run costs seconds. Only std is used, so this builds before anything else exists.

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
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
           set-up, clippy, live probes, wasm or browser. Not what CI runs.
  build    install what is missing and build the static site into dist/
  setup    only install what is missing
  screenshot
           build the page and take the README's picture of it again (docs/images/page.png)
  probe-bench
           start nginx on loopback and measure how late `ratelab probe` sends at 2,000
           requests a second (the book's performance chapter, docs/src/performance.md)
  probe-record [NAME ...]
           start nginx, redis-server and HAProxy on loopback and record the page's Real
           limiters probe reports (those named, or all) into www/probes/, then write the
           view the page shows of each
  probe-soak N
           start nginx, redis-server and HAProxy on loopback and run the live probe tests N
           times in a row with one core kept busy by a spin loop; prints `N passed, M failed`
           and the range of every timing margin the tests print
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
        Some("screenshot") => setup()
            .and_then(|()| build_page())
            .and_then(|()| run("node", &["tests/screenshot.mjs"], &[])),
        Some("setup") => setup(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
        Some("probe-bench") => setup().and_then(|()| probe_bench()),
        Some("mem-bench") => mem_bench(),
        Some("probe-record") => setup().and_then(|()| probe_record(&args[1..])),
        Some("probe-soak") => match args.get(1).and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if n > 0 => setup().and_then(|()| probe_soak(n)),
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

type Result<T = ()> = std::result::Result<T, String>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Runs a command in the workspace root, echoing it, failing on a non-zero exit.
fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    eprintln!("\n$ {program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    eprintln!("  ({:.1} s)", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}` failed with {status}",
            args.join(" ")
        ))
    }
}

/// The standard output of a command, if it ran and succeeded.
fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Like [`output`], run in the workspace root.
fn output_in_root(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn step(title: &str) {
    eprintln!("\n==> {title}");
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
    let node_modules = root().join("node_modules");
    let installed = ["playwright-core", "binaryen", "axe-core", "terser"]
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
    step("native tests (optimised), without the live probes");
    run("cargo", &["test", "--workspace", "--profile", "ci"], &[])?;
    eprintln!(
        "\nquick checks passed in {:.0} s (`cargo xtask test` runs every check)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every check CI runs.
fn test() -> Result {
    let started = Instant::now();
    step("formatting");
    run("cargo", &["fmt", "--all", "--check"], &[])?;
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
    step("the core's API documentation, warnings denied (its examples run with the tests)");
    run(
        "cargo",
        &["doc", "-p", "ratelab", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    step("native tests (optimised: the statistical tests simulate millions of decisions)");
    let native = run_capturing("cargo", &["test", "--workspace", "--profile", "ci"], &[])?;
    no_ignored_tests_but_probe_live(&native)?;
    step("ratelab probe against real nginx, redis-server and HAProxy on loopback");
    {
        let servers = Servers::start()?;
        run(
            "cargo",
            &[&["test"][..], &PROBE_LIVE].concat(),
            &servers.env(),
        )?;
    }
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
    build_page()?;
    // The same page with the main module's deliberate fault, for the panic-banner test only.
    let path = path_with_node_tools();
    run(
        "trunk",
        &[
            "build",
            "--release",
            "--offline",
            "--features",
            "fault-hook",
            "--dist",
            "target/dist-fault",
        ],
        &[("PATH", path.as_str())],
    )?;
    node_tests()?;
    eprintln!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Like [`run`], but also returns the command's standard output (echoed as it comes).
fn run_capturing(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<String> {
    use std::io::{BufRead, BufReader, Write};
    eprintln!("\n$ {program} {}", args.join(" "));
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let mut captured = String::new();
    if let Some(stdout) = child.stdout.take() {
        let mut echo = std::io::stdout().lock();
        // Byte lines read leniently: a test may print anything, and the child is always
        // waited for.
        for line in BufReader::new(stdout)
            .split(b'\n')
            .map_while(std::result::Result::ok)
        {
            let line = String::from_utf8_lossy(&line);
            let _ = writeln!(echo, "{line}");
            captured.push_str(&line);
            captured.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for {program}: {e}"))?;
    eprintln!("  ({:.1} s)", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(captured)
    } else {
        Err(format!(
            "`{program} {}` failed with {status}",
            args.join(" ")
        ))
    }
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

/// Where cargo builds, as `cargo metadata` reports it (CARGO_TARGET_DIR and config included).
fn target_dir() -> Result<PathBuf> {
    let meta = output_in_root(
        "cargo",
        &[
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ],
    )
    .ok_or("cannot run cargo metadata")?;
    let key = "\"target_directory\":\"";
    let start = meta
        .find(key)
        .map(|i| i + key.len())
        .ok_or("no target_directory in cargo metadata")?;
    let end = meta[start..]
        .find('"')
        .ok_or("no target_directory in cargo metadata")?;
    Ok(PathBuf::from(
        meta[start..start + end].replace("\\\\", "\\"),
    ))
}

/// The end-to-end tests, against the `ratelab` binary built here (passed in `RATELAB_CLI`),
/// failing on any skipped or to-do test as on a failed one.
fn node_tests() -> Result {
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
    let tap = target.join("node-tests.tap");
    let _ = std::fs::remove_file(&tap);
    let tap_s = tap.display().to_string();
    let cli_s = cli.display().to_string();
    run(
        "node",
        &[
            "--test",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            "--test-reporter=tap",
            &format!("--test-reporter-destination={tap_s}"),
            "tests/",
        ],
        &[("RATELAB_CLI", cli_s.as_str())],
    )?;
    let summary = std::fs::read_to_string(&tap).map_err(|e| format!("cannot read {tap_s}: {e}"))?;
    let (tests, skipped, todo) =
        tap_counts(&summary).ok_or(format!("no test summary in {tap_s}"))?;
    if tests == 0 || skipped > 0 || todo > 0 {
        return Err(format!(
            "the end-to-end tests ran {tests} test(s) and skipped {skipped}, with {todo} to do: \
             a skipped test is a failure here (see {tap_s})"
        ));
    }
    eprintln!("end to end: {tests} tests, none skipped");
    Ok(())
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

/// `PATH` with the npm tools (binaryen's wasm-opt, which Trunk runs) first.
fn path_with_node_tools() -> String {
    let bin = root().join("node_modules").join(".bin");
    format!("{}:{}", bin.display(), env::var("PATH").unwrap_or_default())
}

/// Builds the page into dist/ with Trunk, offline, optimised by npm's wasm-opt.
fn build_page() -> Result {
    let path = path_with_node_tools();
    run(
        "trunk",
        &["build", "--release", "--offline"],
        &[("PATH", path.as_str())],
    )
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

/// Debian's nginx, Redis server and HAProxy, which the probe tests run on loopback.
const NGINX: &str = "/usr/sbin/nginx";
const REDIS: &str = "/usr/bin/redis-server";
const HAPROXY: &str = "/usr/sbin/haproxy";

/// How many nginx gateways the fleet probes send to: the first is `nginx`, the others more
/// nginx processes from the same template, each with its own zones.
const NGINX_GATEWAYS: usize = 3;
const _: () = assert!(
    NGINX_GATEWAYS == 3,
    "one name in Servers::start for each extra gateway"
);

/// nginx, redis-server and HAProxy on free loopback ports, in a scratch directory, each in
/// the foreground as a child of this process (never a system service), stopped on drop; and
/// two more nginx from the same config, so that three gateways each have their own
/// `limit_req` zones.
struct Servers {
    children: Vec<(&'static str, std::process::Child)>,
    nginx: String,
    /// The three nginx gateways' addresses, `nginx` first, separated by commas.
    nginx_fleet: String,
    redis: String,
    haproxy: String,
    dir: PathBuf,
}

impl Servers {
    fn start() -> Result<Servers> {
        let free_port = || -> Result<u16> {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .map_err(|e| format!("no free loopback port: {e}"))
        };
        let (nginx_port, redis_port, haproxy_port) = (free_port()?, free_port()?, free_port()?);
        let mut fleet_ports = vec![nginx_port];
        for _ in 1..NGINX_GATEWAYS {
            fleet_ports.push(free_port()?);
        }
        let dir = root()
            .join("target")
            .join(format!("probe-servers-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("tmp"))
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // A template from tests/probe/ with PREFIX and PORT filled in, written to the scratch
        // directory.
        // Written as `as_name` in `prefix` (which also fills in PREFIX).
        let config_in = |name: &str, prefix: &Path, as_name: &str, port: u16| -> Result<String> {
            let template = std::fs::read_to_string(root().join("tests/probe").join(name))
                .map_err(|e| format!("cannot read tests/probe/{name}: {e}"))?;
            let text = template
                .replace("PREFIX", &prefix.display().to_string())
                .replace("PORT", &port.to_string());
            let path = prefix.join(as_name);
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(path.display().to_string())
        };
        let config = |name: &str, port: u16| config_in(name, &dir, name, port);
        let nginx_conf = config("nginx.conf", nginx_port)?;
        let haproxy_cfg = config("haproxy.cfg", haproxy_port)?;
        // The other gateways: the same template, each in a directory of its own (its pid
        // file, error log and temporary files).
        let mut gateway_confs = Vec::new();
        for (k, &port) in fleet_ports.iter().enumerate().skip(1) {
            let prefix = dir.join(format!("nginx-{k}"));
            std::fs::create_dir_all(prefix.join("tmp"))
                .map_err(|e| format!("cannot create {}: {e}", prefix.display()))?;
            let conf = config_in("nginx.conf", &prefix, "nginx.conf", port)?;
            gateway_confs.push((prefix, conf));
        }
        let mut servers = Servers {
            children: Vec::new(),
            nginx: format!("http://127.0.0.1:{nginx_port}"),
            nginx_fleet: fleet_ports
                .iter()
                .map(|p| format!("http://127.0.0.1:{p}"))
                .collect::<Vec<_>>()
                .join(","),
            redis: format!("redis://127.0.0.1:{redis_port}"),
            haproxy: format!("http://127.0.0.1:{haproxy_port}"),
            dir: dir.clone(),
        };
        // Each server's output goes to NAME.out in the scratch directory, shown if it fails.
        let spawn = |name: &'static str, program: &str, args: &[&str]| {
            eprintln!("\n$ {program} {} &", args.join(" "));
            let out = std::fs::File::create(dir.join(format!("{name}.out")))
                .map_err(|e| format!("cannot create {name}.out: {e}"))?;
            let err = out
                .try_clone()
                .map_err(|e| format!("cannot create {name}.out: {e}"))?;
            Command::new(program)
                .args(args)
                .stdout(out)
                .stderr(err)
                .spawn()
                .map(|child| (name, child))
                .map_err(|e| format!("cannot start {program}: {e}"))
        };
        let dir_s = dir.display().to_string();
        servers
            .children
            .push(spawn("nginx", NGINX, &["-p", &dir_s, "-c", &nginx_conf])?);
        let port_s = redis_port.to_string();
        servers.children.push(spawn(
            "redis-server",
            REDIS,
            &[
                "--port",
                &port_s,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                &dir_s,
            ],
        )?);
        // -db: in the foreground, not as a daemon.
        servers
            .children
            .push(spawn("haproxy", HAPROXY, &["-db", "-f", &haproxy_cfg])?);
        let mut listening = vec![(nginx_port, 0), (redis_port, 1), (haproxy_port, 2)];
        let names = ["nginx-1", "nginx-2"];
        for (((prefix, conf), &port), name) in
            gateway_confs.iter().zip(&fleet_ports[1..]).zip(names)
        {
            let prefix_s = prefix.display().to_string();
            listening.push((port, servers.children.len()));
            servers
                .children
                .push(spawn(name, NGINX, &["-p", &prefix_s, "-c", conf])?);
        }
        for (port, k) in listening {
            let deadline = Instant::now() + std::time::Duration::from_secs(10);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                let (name, child) = &mut servers.children[k];
                let name = *name;
                let exited = child.try_wait().ok().flatten();
                if exited.is_some() || Instant::now() > deadline {
                    let why = exited.map_or_else(
                        || "nothing listens on it 10 s after starting".to_owned(),
                        |status| format!("it exited ({status})"),
                    );
                    return Err(format!(
                        "{name} on 127.0.0.1:{port}: {why}; what it said:\n{}",
                        servers.said(name)
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        eprintln!(
            "nginx on {}, redis-server on {}, haproxy on {}; nginx gateways {}",
            servers.nginx, servers.redis, servers.haproxy, servers.nginx_fleet
        );
        Ok(servers)
    }

    /// What server `name` wrote (its output, and nginx's error log), for a message.
    fn said(&self, name: &str) -> String {
        let mut files = vec![format!("{name}.out")];
        if name == "nginx" {
            files.push("error.log".to_owned());
        } else if name.starts_with("nginx-") {
            files.push(format!("{name}/error.log"));
        }
        files
            .iter()
            .filter_map(|f| std::fs::read_to_string(self.dir.join(f)).ok())
            .collect::<Vec<_>>()
            .join("")
    }

    fn env(&self) -> [(&str, &str); 4] {
        [
            ("RATELAB_NGINX", self.nginx.as_str()),
            ("RATELAB_NGINX_FLEET", self.nginx_fleet.as_str()),
            ("RATELAB_REDIS", self.redis.as_str()),
            ("RATELAB_HAPROXY", self.haproxy.as_str()),
        ]
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The live probe tests' arguments after `cargo test`, as `test` runs them.
const PROBE_LIVE: [&str; 11] = [
    "-p",
    "ratelab-cli",
    "--profile",
    "ci",
    "--test",
    "probe_live",
    "--",
    "--ignored",
    "--test-threads",
    "1",
    "--nocapture",
];

/// Runs the live probe tests `rounds` times against one nginx, redis-server and HAProxy, with a
/// spin loop keeping one of the machine's cores busy (as a CI machine doing other work
/// would), and reports how many rounds passed and the range of every margin the tests print
/// (`margin LABEL WHAT VALUE` lines), so that each tolerance can be checked against what was
/// measured.
fn probe_soak(rounds: u32) -> Result {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    run(
        "cargo",
        &[&["test", "--no-run"][..], &PROBE_LIVE[..6]].concat(),
        &[],
    )?;
    let servers = Servers::start()?;
    let stop = Arc::new(AtomicBool::new(false));
    let spinner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        })
    };
    step(&format!(
        "the live probe tests, {rounds} rounds, one core kept busy"
    ));
    let (mut passed, mut failed) = (0u32, 0u32);
    let mut margins: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    let started = Instant::now();
    for round in 1..=rounds {
        let out = Command::new("cargo")
            .arg("test")
            .args(PROBE_LIVE)
            .envs(servers.env())
            .current_dir(root())
            .output()
            .map_err(|e| format!("cannot run cargo test: {e}"))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if parts.next() != Some("margin") {
                continue;
            }
            if let (Some(label), Some(what), Some(Ok(v))) = (
                parts.next(),
                parts.next(),
                parts.next().map(str::parse::<f64>),
            ) {
                let e = margins
                    .entry((label.to_owned(), what.to_owned()))
                    .or_insert((v, v));
                e.0 = e.0.min(v);
                e.1 = e.1.max(v);
            }
        }
        if out.status.success() {
            passed += 1;
            eprintln!("round {round}: passed");
        } else {
            failed += 1;
            eprintln!("round {round}: FAILED\n{text}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = spinner.join();
    drop(servers);
    eprintln!(
        "\n{rounds} rounds in {:.0} s; margins, lowest and highest seen:",
        started.elapsed().as_secs_f64()
    );
    for ((label, what), (lo, hi)) in &margins {
        eprintln!("  {label:<22} {what:<20} {lo:>12.4} {hi:>12.4}");
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("{failed} of {rounds} rounds failed"))
    }
}

/// How late `ratelab probe` sends at 2,000 requests a second, against nginx on loopback.
fn probe_bench() -> Result {
    run("cargo", &["build", "--release", "-p", "ratelab-cli"], &[])?;
    let servers = Servers::start()?;
    let target = format!("{}/free", servers.nginx);
    for traffic in ["steady:load=1", "flood:every=500us,for=10s"] {
        step(&format!("2,000 a second, {traffic}, for 10 s"));
        run(
            "target/release/ratelab",
            &[
                "probe",
                "--target",
                &target,
                "--traffic",
                traffic,
                "--limit",
                "2000",
                "--window",
                "1s",
                "--duration",
                "10s",
            ],
            &[],
        )?;
    }
    Ok(())
}

/// What a recorded probe is sent to: a location of the nginx of tests/probe/nginx.conf, a
/// path of the HAProxy of tests/probe/haproxy.cfg, or a Redis recipe.
#[derive(Clone, Copy)]
enum Probed {
    Nginx(&'static str),
    Haproxy(&'static str),
    Redis(&'static str),
}

/// The usual addresses the recorded commands name (the probes run on free ports).
const NGINX_AT: &str = "http://127.0.0.1:8080";
const HAPROXY_AT: &str = "http://127.0.0.1:8081";
const REDIS_AT: &str = "redis://127.0.0.1:6379";

/// The probes behind the page's "Real limiters" section: (file, what is probed, arguments).
/// Each file is `ratelab probe --format json`'s output, command included.
const PROBES: [(&str, Probed, &str); 9] = [
    (
        "nginx-nodelay-boundary-burst",
        Probed::Nginx("/nodelay"),
        "--traffic boundary-burst --limit 20 --window 1s --model leaky-bucket:burst=5,mode=meter",
    ),
    (
        "nginx-nodelay-flood",
        Probed::Nginx("/nodelay"),
        "--traffic flood:every=9ms --limit 20 --window 1s --model leaky-bucket:burst=5,mode=meter",
    ),
    (
        "nginx-delay-boundary-burst",
        Probed::Nginx("/delay"),
        "--traffic boundary-burst --limit 20 --window 1s --model nginx:rate=20r/s,burst=5",
    ),
    (
        "nginx-nodelay-retry-storm",
        Probed::Nginx("/nodelay"),
        "--traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s --model leaky-bucket:burst=5,mode=meter",
    ),
    (
        "nginx-delay4-boundary-burst",
        Probed::Nginx("/delay4"),
        "--traffic boundary-burst --limit 20 --window 1s --model nginx:rate=20r/s,burst=10,delay=4",
    ),
    (
        "haproxy-retry-storm",
        Probed::Haproxy("/rate"),
        "--traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s --seed 27 --model haproxy:period=1s,limit=20",
    ),
    (
        "haproxy-kept-retry-storm",
        Probed::Haproxy("/kept"),
        "--traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s --seed 27 --model haproxy:period=1s,limit=20,record-rejects=false",
    ),
    (
        "redis-sorted-set-retry-storm",
        Probed::Redis("sorted-set"),
        "--traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s",
    ),
    (
        "redis-sorted-set-record-rejects-retry-storm",
        Probed::Redis("sorted-set-record-rejects"),
        "--traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s",
    ),
];

/// Records [`PROBES`] (those named in `only`, or all) into www/probes/, for the page, and
/// writes the view the page shows of each. The CLI is the test suite's build (`--profile
/// ci`: optimised, with overflow checks).
fn probe_record(only: &[String]) -> Result {
    if let Some(unknown) = only
        .iter()
        .find(|n| !PROBES.iter().any(|(name, ..)| name == n))
    {
        let known: Vec<&str> = PROBES.iter().map(|p| p.0).collect();
        return Err(format!(
            "no recorded probe is named {unknown:?}; they are: {}",
            known.join(", ")
        ));
    }
    run(
        "cargo",
        &["build", "--profile", "ci", "-p", "ratelab-cli"],
        &[],
    )?;
    let bin = target_dir()?.join("ci").join("ratelab");
    let servers = Servers::start()?;
    let out_dir = root().join("www").join("probes");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    for (name, what, args) in PROBES {
        if !only.is_empty() && !only.iter().any(|n| n == name) {
            continue;
        }
        step(&format!("recording {name}"));
        let key = format!("X-Probe-Key:{name}");
        let mut argv: Vec<String> = vec!["probe".into()];
        match what {
            Probed::Nginx(path) | Probed::Haproxy(path) => {
                let at = if matches!(what, Probed::Nginx(_)) {
                    NGINX_AT
                } else {
                    HAPROXY_AT
                };
                argv.extend([
                    "--target".into(),
                    format!("{at}{path}"),
                    "--header".into(),
                    key,
                ]);
            }
            Probed::Redis(script) => argv.extend([
                "--redis".into(),
                REDIS_AT.into(),
                "--script".into(),
                script.into(),
            ]),
        }
        argv.extend(args.split(' ').map(String::from));
        argv.extend(["--format".into(), "json".into()]);
        // The command is recorded with the usual ports; the probe runs on the free ones.
        let actual: Vec<String> = argv
            .iter()
            .map(|a| {
                a.replace(NGINX_AT, &servers.nginx)
                    .replace(HAPROXY_AT, &servers.haproxy)
                    .replace(REDIS_AT, &servers.redis)
            })
            .collect();
        let out = Command::new(&bin)
            .args(&actual)
            .output()
            .map_err(|e| format!("cannot run ratelab probe: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "ratelab probe for {name} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let json = String::from_utf8_lossy(&out.stdout)
            .replace(&servers.nginx, NGINX_AT)
            .replace(&servers.haproxy, HAPROXY_AT)
            .replace(&servers.redis, REDIS_AT);
        let path = out_dir.join(format!("{name}.json"));
        std::fs::write(&path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    step("writing the views the page shows of them (www/probes/*.view.json)");
    run(
        "cargo",
        &[
            "test",
            "-p",
            "ratelab-page",
            "--profile",
            "ci",
            "--test",
            "probe_views",
        ],
        &[("RATELAB_BLESS", "1")],
    )
}

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
fn mem_bench() -> Result {
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

#[cfg(test)]
mod tests {
    use super::*;

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
