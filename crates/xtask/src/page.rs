//! Building the page with Trunk: in the foreground for `serve` and `build`, and for `test` in
//! the background while the live probes and the wasm tests run (they mostly wait on sockets
//! and a browser), so that the builds' minutes are not added to theirs.
//!
//! Trunk builds into its own target directory, `target/page`: cargo runs there never wait on
//! the lock of `target/`, where the tests' builds are.

use crate::cmd::{output, path_with_node_tools, root, run, step, Result};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Where the page's builds run, under the workspace root.
const PAGE_TARGET: &str = "target/page";
/// The page with the main module's deliberate fault, for the panic-banner test only.
const FAULT_DIST: &str = "target/dist-fault";
/// What the background builds wrote, printed when they are waited for.
const LOG: &str = "target/page-build.log";

/// Trunk's arguments: the page, or the page with the deliberate fault into [`FAULT_DIST`].
fn trunk_args(fault: bool) -> Vec<&'static str> {
    let mut args = vec!["build", "--release", "--offline"];
    if fault {
        args.extend(["--features", "fault-hook", "--dist", FAULT_DIST]);
    }
    args
}

/// Trunk's environment: npm's tools first on `PATH`, and its own target directory.
fn trunk_env() -> Vec<(&'static str, String)> {
    vec![
        ("PATH", path_with_node_tools()),
        (
            "CARGO_TARGET_DIR",
            root().join(PAGE_TARGET).display().to_string(),
        ),
    ]
}

/// Builds the page into dist/ with every core, then the book into dist/docs/.
pub(crate) fn build_page() -> Result {
    let env = trunk_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run("trunk", &trunk_args(false), &env)?;
    docs()
}

/// Renders the book under docs/ into dist/docs/ (ratelab-docs), where the page links to it.
pub(crate) fn docs() -> Result {
    run(
        "cargo",
        &[
            "run",
            "--profile",
            "ci",
            "-p",
            "ratelab-docs",
            "--",
            "dist/docs",
        ],
        &[],
    )
}

/// The page's two builds (the page, then the page with the deliberate fault), running in the
/// background: one cargo job, one binaryen thread, the lowest priority and, where `taskset`
/// is there and the machine has more than one core, pinned to its last core, so that the
/// tests running meanwhile keep a core to themselves (the live probes' soak keeps one core
/// busy the same way: `cargo xtask probe-soak`).
pub(crate) struct PageBuilds {
    thread: Option<JoinHandle<Result>>,
    /// The build running now, to stop if the test run ends before it does.
    running: Arc<Mutex<Option<Child>>>,
    started: Instant,
}

impl PageBuilds {
    pub(crate) fn start() -> Result<PageBuilds> {
        let log = root().join(LOG);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let pin = (cores > 1 && output("taskset", &["--version"]).is_some())
            .then(|| (cores - 1).to_string());
        let running: Arc<Mutex<Option<Child>>> = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&running);
        let file = File::create(&log).map_err(|e| format!("cannot create {LOG}: {e}"))?;
        eprintln!(
            "\n$ trunk {} && trunk {}   (in the background{}, at the lowest priority; output in {LOG})",
            trunk_args(false).join(" "),
            trunk_args(true).join(" "),
            pin.as_ref()
                .map_or(String::new(), |c| format!(", on core {c}")),
        );
        let thread = std::thread::spawn(move || -> Result {
            for fault in [false, true] {
                // Stopped between the two builds: the second is not started.
                if slot.lock().map_err(|_| "the build's lock")?.is_none() && fault {
                    return Err("the page's builds were stopped".into());
                }
                let mut command = match &pin {
                    Some(core) => {
                        let mut c = Command::new("taskset");
                        c.args(["-c", core, "nice", "-n", "19", "trunk"]);
                        c
                    }
                    None => {
                        let mut c = Command::new("nice");
                        c.args(["-n", "19", "trunk"]);
                        c
                    }
                };
                let out = file.try_clone().map_err(|e| format!("{LOG}: {e}"))?;
                let err = file.try_clone().map_err(|e| format!("{LOG}: {e}"))?;
                command
                    .args(trunk_args(fault))
                    .envs(trunk_env())
                    .env("CARGO_BUILD_JOBS", "1")
                    .env("BINARYEN_CORES", "1")
                    .current_dir(root())
                    .process_group(0)
                    .stdout(Stdio::from(out))
                    .stderr(Stdio::from(err));
                let child = command
                    .spawn()
                    .map_err(|e| format!("cannot run trunk: {e}"))?;
                let pid = child.id();
                *slot.lock().map_err(|_| "the build's lock")? = Some(child);
                // Waited for without holding the lock, so that a drop can stop it meanwhile.
                let status = loop {
                    let mut guard = slot.lock().map_err(|_| "the build's lock")?;
                    match guard.as_mut() {
                        Some(c) => match c.try_wait() {
                            Ok(Some(status)) => break status,
                            Ok(None) => {}
                            Err(e) => return Err(format!("cannot wait for trunk ({pid}): {e}")),
                        },
                        None => return Err("the page's builds were stopped".into()),
                    }
                    drop(guard);
                    std::thread::sleep(std::time::Duration::from_millis(200));
                };
                if !status.success() {
                    return Err(format!(
                        "`trunk {}` failed with {status} (its output is in {LOG})",
                        trunk_args(fault).join(" ")
                    ));
                }
            }
            Ok(())
        });
        Ok(PageBuilds {
            thread: Some(thread),
            running,
            started: Instant::now(),
        })
    }

    /// Waits for both builds, prints what they wrote, then renders the book into dist/docs/.
    pub(crate) fn wait(mut self) -> Result {
        step("the page's builds, waited for (started in the background before the live probes)");
        let waited = Instant::now();
        let result = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err("the page's build thread panicked".into()),
            None => Err("the page's builds were already waited for".into()),
        };
        let log = std::fs::read_to_string(root().join(LOG)).unwrap_or_default();
        eprint!("{log}");
        eprintln!(
            "  ({:.1} s in all, {:.1} s of it waited for)",
            self.started.elapsed().as_secs_f64(),
            waited.elapsed().as_secs_f64()
        );
        result?;
        docs()
    }
}

impl Drop for PageBuilds {
    /// A run that ends early (a failed test) stops the build: trunk and the cargo, rustc and
    /// wasm-opt under it, all in the process group trunk leads.
    fn drop(&mut self) {
        if self.thread.is_none() {
            return;
        }
        if let Ok(mut guard) = self.running.lock() {
            if let Some(mut child) = guard.take() {
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}
