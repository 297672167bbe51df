//! The live servers the probe tests run against (nginx, redis-server, HAProxy on loopback,
//! started in the foreground and stopped on drop), and the commands that use them:
//! `probe-soak`, `probe-bench`, `probe-record`.

use crate::cmd::{root, run, step, target_dir, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Debian's nginx, Redis server and HAProxy, which the probe tests run on loopback.
pub(crate) const NGINX: &str = "/usr/sbin/nginx";
pub(crate) const REDIS: &str = "/usr/bin/redis-server";
pub(crate) const HAPROXY: &str = "/usr/sbin/haproxy";
/// Debian's Go, its golang.org/x/time (the rate package's source), Varnish, and
/// varnish-modules (vsthrottle), for the libraries' live tests.
pub(crate) const GO: &str = "/usr/bin/go";
pub(crate) const GO_X_TIME: &str = "/usr/share/gocode/src/golang.org/x/time/rate/rate.go";
pub(crate) const VARNISHD: &str = "/usr/sbin/varnishd";
pub(crate) const VARNISH_MODULES: &str = "/usr/share/doc/varnish-modules";

/// redis-cell's module, built from crates.io by [`build_redis_cell`].
pub(crate) fn redis_cell_module() -> PathBuf {
    root().join("target/redis-cell/release/libredis_cell.so")
}

/// Builds redis-cell 0.2.2 as its README does (`cargo build --release`), from the crate
/// crates.io serves: `cargo fetch` on tests/probe/redis-cell/Cargo.toml downloads it (and
/// what its lock pins), and a copy of it, with that lock and a `[workspace]` table of its own,
/// is built into target/redis-cell.
pub(crate) fn build_redis_cell() -> Result {
    let manifest = "tests/probe/redis-cell/Cargo.toml";
    run("cargo", &["fetch", "--manifest-path", manifest], &[])?;
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let registry = cargo_home.join("registry/src");
    let fetched = std::fs::read_dir(&registry)
        .map_err(|e| format!("cannot read {}: {e}", registry.display()))?
        .filter_map(|d| d.ok())
        .map(|d| d.path().join("redis-cell-0.2.2"))
        .find(|p| p.join("Cargo.toml").exists())
        .ok_or_else(|| {
            format!(
                "cargo fetch left no redis-cell-0.2.2 in {}",
                registry.display()
            )
        })?;
    let copy = root().join("target/redis-cell-src");
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&fetched, &copy)?;
    let toml = copy.join("Cargo.toml");
    let text = std::fs::read_to_string(&toml)
        .map_err(|e| format!("cannot read {}: {e}", toml.display()))?;
    std::fs::write(&toml, text + "\n[workspace]\n")
        .map_err(|e| format!("cannot write {}: {e}", toml.display()))?;
    std::fs::copy(
        root().join("tests/probe/redis-cell/Cargo.lock"),
        copy.join("Cargo.lock"),
    )
    .map_err(|e| format!("cannot copy redis-cell's lock: {e}"))?;
    let copy_manifest = toml.display().to_string();
    let target = root().join("target/redis-cell").display().to_string();
    run(
        "cargo",
        &[
            "build",
            "--release",
            "--manifest-path",
            &copy_manifest,
            "--target-dir",
            &target,
        ],
        // (Its 2018 code warns under today's compiler; the warnings are not ours to fix.)
        &[("RUSTFLAGS", "--cap-lints allow")],
    )
}

/// Copies the directory `from` to `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> Result {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    for entry in
        std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?
    {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| format!("cannot copy {}: {e}", src.display()))?;
        }
    }
    Ok(())
}

/// The Python of the virtual environment Python's limits is installed in.
pub(crate) fn probe_python() -> PathBuf {
    root().join("target/probe-python/bin/python")
}

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
pub(crate) struct Servers {
    children: Vec<(&'static str, std::process::Child)>,
    nginx: String,
    /// The three nginx gateways' addresses, `nginx` first, separated by commas.
    nginx_fleet: String,
    redis: String,
    haproxy: String,
    /// express-rate-limit and rate-limiter-flexible in one Node server (`tests/probe/libraries.mjs`).
    libraries: String,
    /// Go's x/time/rate (`tests/probe/go-rate.go`).
    go_rate: String,
    /// Varnish with vsthrottle (`tests/probe/vsthrottle.vcl`).
    vsthrottle: String,
    /// Python's limits (`tests/probe/limits_server.py`).
    limits: String,
    dir: PathBuf,
}

impl Servers {
    pub(crate) fn start() -> Result<Servers> {
        let free_port = || -> Result<u16> {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .map_err(|e| format!("no free loopback port: {e}"))
        };
        let (nginx_port, redis_port, haproxy_port) = (free_port()?, free_port()?, free_port()?);
        let libraries_port = free_port()?;
        let (go_port, varnish_port, limits_port) = (free_port()?, free_port()?, free_port()?);
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
            libraries: format!("http://127.0.0.1:{libraries_port}"),
            go_rate: format!("http://127.0.0.1:{go_port}"),
            vsthrottle: format!("http://127.0.0.1:{varnish_port}"),
            limits: format!("http://127.0.0.1:{limits_port}"),
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
        let cell = redis_cell_module().display().to_string();
        servers.children.push(spawn(
            "redis-server",
            REDIS,
            &[
                "--loadmodule",
                &cell,
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
        // express-rate-limit and rate-limiter-flexible, as npm installed them.
        let script = root()
            .join("tests/probe/libraries.mjs")
            .display()
            .to_string();
        let libraries_port_s = libraries_port.to_string();
        servers.children.push(spawn(
            "node-libraries",
            "node",
            &[&script, &libraries_port_s],
        )?);
        // Go's rate, built from the test's source against Debian's x/time (GOPATH mode: no
        // module proxy is needed).
        let go_bin = dir.join("go-rate").display().to_string();
        let go_src = root().join("tests/probe/go-rate.go").display().to_string();
        run(
            GO,
            &["build", "-o", &go_bin, &go_src],
            &[
                ("GO111MODULE", "off"),
                ("GOPATH", "/usr/share/gocode"),
                ("GOFLAGS", ""),
            ],
        )?;
        let go_port_s = go_port.to_string();
        servers
            .children
            .push(spawn("go-rate", &go_bin, &[&go_port_s])?);
        // varnishd in the foreground (-F), its working directory in the scratch directory.
        let vcl = root()
            .join("tests/probe/vsthrottle.vcl")
            .display()
            .to_string();
        let listen = format!("127.0.0.1:{varnish_port}");
        let varnish_dir = dir.join("varnish").display().to_string();
        servers.children.push(spawn(
            "varnishd",
            VARNISHD,
            &[
                "-F",
                "-a",
                &listen,
                "-f",
                &vcl,
                "-n",
                &varnish_dir,
                "-s",
                "malloc,16m",
            ],
        )?);
        let python = probe_python().display().to_string();
        let limits_script = root()
            .join("tests/probe/limits_server.py")
            .display()
            .to_string();
        let limits_port_s = limits_port.to_string();
        servers.children.push(spawn(
            "python-limits",
            &python,
            &[&limits_script, &limits_port_s],
        )?);
        let mut listening = vec![
            (nginx_port, 0),
            (redis_port, 1),
            (haproxy_port, 2),
            (libraries_port, 3),
            (go_port, 4),
            (varnish_port, 5),
            (limits_port, 6),
        ];
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
            // (varnishd compiles its VCL with the C compiler first: seconds.)
            let deadline = Instant::now() + std::time::Duration::from_secs(30);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                let (name, child) = &mut servers.children[k];
                let name = *name;
                let exited = child.try_wait().ok().flatten();
                if exited.is_some() || Instant::now() > deadline {
                    let why = exited.map_or_else(
                        || "nothing listens on it 30 s after starting".to_owned(),
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
            "nginx on {}, redis-server on {}, haproxy on {}, Node's libraries on {}, Go's rate on {}, Varnish on {}, Python's limits on {}; nginx gateways {}",
            servers.nginx,
            servers.redis,
            servers.haproxy,
            servers.libraries,
            servers.go_rate,
            servers.vsthrottle,
            servers.limits,
            servers.nginx_fleet
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

    pub(crate) fn env(&self) -> [(&str, String); 10] {
        let file = |name: &str| self.dir.join(name).display().to_string();
        [
            ("RATELAB_NGINX", self.nginx.clone()),
            ("RATELAB_NGINX_FLEET", self.nginx_fleet.clone()),
            ("RATELAB_REDIS", self.redis.clone()),
            ("RATELAB_HAPROXY", self.haproxy.clone()),
            ("RATELAB_LIBRARIES", self.libraries.clone()),
            ("RATELAB_GO_RATE", self.go_rate.clone()),
            ("RATELAB_VSTHROTTLE", self.vsthrottle.clone()),
            ("RATELAB_LIMITS", self.limits.clone()),
            // The first nginx's log of /fit and HAProxy's log lines, for the fit tests.
            ("RATELAB_NGINX_FIT_LOG", file("fit.log")),
            ("RATELAB_HAPROXY_LOG", file("haproxy.out")),
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

/// The live probe tests' arguments after `cargo test`, as `test` runs them: three at a time
/// (each mostly waits on its sends' times; every one is keyed apart from the others, by its
/// own header value or Redis key), as `probe-soak` measures their margins.
pub(crate) const PROBE_LIVE: [&str; 11] = [
    "-p",
    "ratelab-cli",
    "--profile",
    "ci",
    "--test",
    "probe_live",
    "--",
    "--ignored",
    "--test-threads",
    "3",
    "--nocapture",
];

/// Runs the live probe tests `rounds` times against one nginx, redis-server and HAProxy, with a
/// spin loop keeping one of the machine's cores busy (as a CI machine doing other work
/// would), and reports how many rounds passed and the range of every margin the tests print
/// (`margin LABEL WHAT VALUE` lines), so that each tolerance can be checked against what was
/// measured.
pub(crate) fn probe_soak(rounds: u32, only: Option<&str>) -> Result {
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
            .args(only)
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
pub(crate) fn probe_bench() -> Result {
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
pub(crate) fn probe_record(only: &[String]) -> Result {
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
