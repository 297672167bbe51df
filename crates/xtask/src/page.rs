//! Building the page with Trunk: in the foreground for `serve` and `build`, and for `test` in
//! the background from its start, at the lowest priority (taking what clippy and the native
//! tests leave of the cores, one core while the live probes run, then what the wasm tests
//! leave), so that the builds' minutes are not added to theirs.
//!
//! Trunk builds into its own target directory, `target/page`: cargo runs there never wait on
//! the lock of `target/`, where the tests' builds are.

use crate::cmd::{output, path_with_node_tools, root, run, step, Result};
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Where the page's builds run, under the workspace root.
const PAGE_TARGET: &str = "target/page";
/// The page with the main module's deliberate fault, for the panic-banner test only.
const FAULT_DIST: &str = "target/dist-fault";
/// What the background builds wrote, printed when they are waited for.
const LOG: &str = "target/page-build.log";

/// Where the page with the fault is built from: index.html with its main module alone
/// ([`fault_page`]).
const FAULT_HTML: &str = "target/fault-page/index.html";

/// Trunk's arguments: the page, or the page with the deliberate fault into [`FAULT_DIST`],
/// from [`FAULT_HTML`].
fn trunk_args(fault: bool) -> Vec<&'static str> {
    let mut args = vec!["build", "--release", "--offline"];
    if fault {
        args.extend(["--features", "fault-hook", "--dist", FAULT_DIST, FAULT_HTML]);
    }
    args
}

/// Writes [`FAULT_HTML`]: index.html with every Rust module but the main one left out (the
/// fault is the main module's; the others are built alike with it or without, and
/// [`copy_modules`] copies them over from dist/), its paths made relative to where it is.
/// Trunk then builds one module, not four: the others' optimisation took about 2 of the 3
/// minutes the page with the fault took in the background. Returns the modules left out.
fn fault_page() -> Result<Vec<String>> {
    let html = std::fs::read_to_string(root().join("index.html"))
        .map_err(|e| format!("cannot read index.html: {e}"))?;
    let mut left_out = Vec::new();
    let mut page = String::with_capacity(html.len());
    for line in html.lines() {
        let rust = line.contains("data-trunk rel=\"rust\"");
        if rust && !line.contains("data-type=\"main\"") {
            let name = line
                .split("href=\"crates/")
                .nth(1)
                .and_then(|rest| rest.split_once("/Cargo.toml"))
                .map(|(name, _)| name.to_owned())
                .ok_or_else(|| {
                    format!("index.html: a Rust module without a crate's path: {line}")
                })?;
            left_out.push(name);
            continue;
        }
        // From target/fault-page/, the root is two folders up.
        let line = line
            .replace("href=\"crates/", "href=\"../../crates/")
            .replace("href=\"www/", "href=\"../../www/")
            .replace("src=\"www/", "src=\"../../www/");
        page.push_str(&line);
        page.push('\n');
    }
    if left_out.is_empty() {
        return Err(
            "index.html names no Rust module but the main one: is its markup changed?".into(),
        );
    }
    let path = root().join(FAULT_HTML);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&path, page).map_err(|e| format!("cannot write {FAULT_HTML}: {e}"))?;
    Ok(left_out)
}

/// Copies the modules `names` (wasm-bindgen's glue and the wasm of each) from dist/, just
/// built, into [`FAULT_DIST`].
fn copy_modules(names: &[String]) -> Result {
    for name in names {
        for file in [format!("{name}.js"), format!("{name}_bg.wasm")] {
            let from = root().join("dist").join(&file);
            let to = root().join(FAULT_DIST).join(&file);
            std::fs::copy(&from, &to)
                .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))?;
        }
    }
    Ok(())
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
/// background from the start of the test run: one cargo job, one binaryen thread, at the
/// lowest priority, so that they take what the checks before them leave of the cores. Where
/// `taskset` is there and the machine has more than one core, [`PageBuilds::confine`] keeps
/// them to its last core while the live probes run, so that the probes keep a core to
/// themselves (their soak keeps one core busy the same way: `cargo xtask probe-soak`), and
/// lets them onto every core again after.
pub(crate) struct PageBuilds {
    thread: Option<JoinHandle<Result>>,
    /// The build running now, to stop if the test run ends before it does.
    running: Arc<Mutex<Option<Child>>>,
    /// The cores the builds may run on (`taskset`'s list), or `None` without `taskset` or a
    /// second core.
    cpus: Arc<Mutex<Option<String>>>,
    cores: usize,
    /// Told when the page itself is built (before the page with the fault is started).
    page_built: Option<Receiver<()>>,
    started: Instant,
}

impl PageBuilds {
    pub(crate) fn start() -> Result<PageBuilds> {
        let log = root().join(LOG);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let cpus = (cores > 1 && output("taskset", &["--version"]).is_some())
            .then(|| format!("0-{}", cores - 1));
        let running: Arc<Mutex<Option<Child>>> = Arc::new(Mutex::new(None));
        let slot = Arc::clone(&running);
        let cpus = Arc::new(Mutex::new(cpus));
        let cpus_now = Arc::clone(&cpus);
        let file = File::create(&log).map_err(|e| format!("cannot create {LOG}: {e}"))?;
        eprintln!(
            "\n$ trunk {} && trunk {}   (in the background, at the lowest priority; output in {LOG})",
            trunk_args(false).join(" "),
            trunk_args(true).join(" "),
        );
        let (built, page_built) = channel();
        let thread = std::thread::spawn(move || -> Result {
            let mut left_out = Vec::new();
            for fault in [false, true] {
                if fault {
                    left_out = fault_page()?;
                }
                // The slot is held from here until the build is in it, so that a change of
                // cores (which takes the slot first, then the cores) either finds this build
                // there or is seen in the cores read here.
                let mut slot_guard = slot.lock().map_err(|_| "the build's lock")?;
                // Stopped between the two builds: the second is not started.
                if slot_guard.is_none() && fault {
                    return Err("the page's builds were stopped".into());
                }
                let cpus = cpus_now.lock().map_err(|_| "the cores' lock")?.clone();
                let mut command = match &cpus {
                    Some(list) => {
                        let mut c = Command::new("taskset");
                        c.args(["-c", list, "nice", "-n", "19", "trunk"]);
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
                *slot_guard = Some(child);
                drop(slot_guard);
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
                if !fault {
                    // Nobody listening is no failure: the run may no longer wait for it.
                    let _ = built.send(());
                }
            }
            copy_modules(&left_out)
        });
        Ok(PageBuilds {
            thread: Some(thread),
            running,
            cpus,
            cores,
            page_built: Some(page_built),
            started: Instant::now(),
        })
    }

    /// Keeps the builds to the machine's last core (`to_last`), or lets them onto every core:
    /// the build running now (trunk and every process under it, each of their threads) and
    /// the one still to start. Nothing without `taskset` or a second core.
    pub(crate) fn confine(&self, to_last: bool) {
        let Ok(guard) = self.running.lock() else {
            return;
        };
        let list = if to_last {
            format!("{}", self.cores.saturating_sub(1))
        } else {
            format!("0-{}", self.cores.saturating_sub(1))
        };
        let changed = self.cpus.lock().is_ok_and(|mut cpus| match cpus.as_mut() {
            Some(now) if *now != list => {
                now.clone_from(&list);
                true
            }
            _ => false,
        });
        if !changed {
            return;
        }
        eprintln!("(the page's builds now on cores {list}, at the lowest priority)");
        let Some(group) = guard.as_ref().map(|c| c.id().to_string()) else {
            return;
        };
        // Twice over: a process started by one not yet moved is caught the second time (its
        // children after that inherit the new set).
        for _ in 0..2 {
            let pids = output("pgrep", &["-g", &group]).unwrap_or_default();
            for pid in pids.split_whitespace() {
                let _ = Command::new("taskset")
                    .args(["-a", "-p", "-c", &list, pid])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }

    /// Waits for the page's build (the one with the fault may still be running), then renders
    /// the book into dist/docs/: what every end-to-end test but the panic banner's needs.
    pub(crate) fn wait_page(&mut self) -> Result {
        step("the page's build, waited for (started in the background at the start of the run)");
        let waited = Instant::now();
        let built = self
            .page_built
            .take()
            .ok_or("the page's build was already waited for")?;
        if built.recv().is_err() {
            // The thread ended without the page: its error says why.
            return self
                .finish()
                .and(Err("the page's build ended without the page".into()));
        }
        eprintln!(
            "  (the page built {:.1} s after the start, {:.1} s of it waited for)",
            self.started.elapsed().as_secs_f64(),
            waited.elapsed().as_secs_f64()
        );
        docs()
    }

    /// Waits for both builds (the page with the fault after the page), and prints what they
    /// wrote.
    pub(crate) fn wait(mut self) -> Result {
        step("the page with the fault, waited for (built after the page, in the background)");
        self.finish()
    }

    /// Joins the builds' thread and prints their log: their result.
    fn finish(&mut self) -> Result {
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
        result
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
