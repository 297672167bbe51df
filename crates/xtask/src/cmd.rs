//! Running commands from the workspace root: echoed, timed, failing on a non-zero exit.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

pub(crate) type Result<T = ()> = std::result::Result<T, String>;

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Runs a command in the workspace root, echoing it, failing on a non-zero exit.
pub(crate) fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
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
pub(crate) fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Like [`output`], run in the workspace root.
pub(crate) fn output_in_root(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn step(title: &str) {
    eprintln!("\n==> {title}");
}

/// Like [`run`], but also returns the command's standard output (echoed as it comes).
pub(crate) fn run_capturing(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result<String> {
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

/// Where cargo builds, as `cargo metadata` reports it (CARGO_TARGET_DIR and config included).
pub(crate) fn target_dir() -> Result<PathBuf> {
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

/// `PATH` with the npm tools (binaryen's wasm-opt, which Trunk runs) first.
pub(crate) fn path_with_node_tools() -> String {
    let bin = root().join("node_modules").join(".bin");
    format!("{}:{}", bin.display(), env::var("PATH").unwrap_or_default())
}
