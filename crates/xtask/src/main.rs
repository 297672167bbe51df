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

const USAGE: &str = "\
cargo xtask <command>

  serve    install what is missing, then run the ratelab demo (the page comes with its issue)
  test     install what is missing, then run every check: fmt, clippy, native tests,
           wasm tests in headless Chromium
  setup    only install what is missing
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => setup().and_then(|()| test()),
        Some("serve") => setup().and_then(|()| serve()),
        Some("setup") => setup(),
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
    if !Path::new("/usr/bin/chromium").exists() || !Path::new("/usr/bin/chromedriver").exists() {
        apt_install(&["chromium", "chromium-driver"])?;
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
    step("clippy, warnings denied (native, and the core for wasm32)");
    run(
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    run(
        "cargo",
        &[
            "clippy",
            "-p",
            "ratelab",
            "--target",
            "wasm32-unknown-unknown",
            "--lib",
            "--test",
            "determinism",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    step("native tests (optimised: the statistical tests simulate millions of decisions)");
    run("cargo", &["test", "--workspace", "--profile", "ci"], &[])?;
    step("wasm tests in headless Chromium");
    run(
        "cargo",
        &[
            "test",
            "-p",
            "ratelab",
            "--target",
            "wasm32-unknown-unknown",
            "--test",
            "determinism",
        ],
        &[("CHROMEDRIVER", "/usr/bin/chromedriver")],
    )?;
    eprintln!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs the demo (the page is served here once it exists).
fn serve() -> Result {
    step("the boundary-burst demo");
    run(
        "cargo",
        &["run", "--release", "-q", "-p", "ratelab-cli", "--", "demo"],
        &[],
    )
}
