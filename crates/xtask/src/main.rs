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
const FUZZ_TARGETS: [(&str, u32); 4] = [
    ("spec", 4_096),
    ("url_state", 4_096),
    ("import", 65_536),
    ("limiter_laws", 16_384),
];

const USAGE: &str = "\
cargo xtask <command>

  serve    install what is missing, build the page and serve it on http://127.0.0.1:8080/
  test     install what is missing, then run every check: fmt, clippy, native tests,
           wasm tests in headless Chromium, the built page end to end in Chromium
  build    install what is missing and build the static site into dist/
  setup    only install what is missing
  fuzz [SECONDS]
           install cargo-fuzz if missing, then run each fuzz target of fuzz/ for SECONDS
           (default 600) in turn, failing on any crash; `cargo xtask fuzz 30` is the short
           form. Not part of `test`.
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => setup().and_then(|()| test()),
        Some("serve") => setup().and_then(|()| serve()),
        Some("build") => setup().and_then(|()| build_page()),
        Some("setup") => setup(),
        Some("fuzz") => fuzz(args.get(1).map(String::as_str)),
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
    let node_modules = root().join("node_modules");
    let installed = ["playwright-core", "binaryen", "axe-core"]
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
    ] {
        let args = [
            &["clippy", "--target", "wasm32-unknown-unknown"][..],
            targets,
            &deny,
        ]
        .concat();
        run("cargo", &args, &[])?;
    }
    step("native tests (optimised: the statistical tests simulate millions of decisions)");
    run("cargo", &["test", "--workspace", "--profile", "ci"], &[])?;
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
    for krate in ["ratelab-web", "ratelab-extra"] {
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
    run("node", &["--test", "tests/"], &[])?;
    eprintln!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
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
