//! The command line as clap sees it: every command, flag, default and example, which is
//! also what `--help`, `ratelab help COMMAND` and the shell completions show.
//!
//! Values are kept as the text given and parsed by the core's own parsers, so a bad one gets
//! the same one-line message as everywhere else; only closed sets (formats, scripts, shells)
//! are checked by clap, which also completes them.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The names `--script` accepts: the Redis recipes of `ratelab probe` (a test holds them to
/// the scripts the probe carries).
pub(crate) const SCRIPT_NAMES: [&str; 5] = [
    "sorted-set",
    "sorted-set-record-rejects",
    "gcra",
    "fixed-window",
    "redis-cell",
];

const SPECS: &str = "\
A SPEC is name[:key=value,...].
  Limiters: fixed-window, sliding-log, sliding-window-counter, token-bucket, gcra,
            leaky-bucket. Keys: burst=B, rate=N/DUR, record-rejects=true, servers=K,
            mode=meter|queue (leaky-bucket).
            Real servers, in their own units and arithmetic: nginx (rate=Nr/s|Nr/m,
            burst=B, delay=D or nodelay: a limit_req line), haproxy (period=DUR, limit=N,
            record-rejects=true|false: http_req_rate(period) denied above N).
  Traffic:  steady, small-bursts, page-loads, big-bursts, on-off (load=X);
            flood (start=DUR|worst, every=DUR, for=DUR); boundary-burst (before=DUR,
            after=DUR); retry (rate=N/DUR, spike=S, at=DUR, tries=M, every=DUR);
            replay (file=PATH, format=auto|seconds|ms|iso|access-log, client=IP,
            field=NAME:VALUE): one timestamp per line (epoch seconds or ms, ISO 8601)
            or an nginx/Apache access log, filtered on the client or another field.
  DUR is like 60s, 1min, 250ms, 1.5s, 2h.

Examples:
  ratelab demo
  ratelab simulate --limiter fixed-window --limiter token-bucket:burst=10 --traffic boundary-burst --limit 60
  ratelab study --out study
  ratelab probe --target http://127.0.0.1:8080/api --traffic boundary-burst --limit 20 --window 1s
  ratelab completions bash > /usr/share/bash-completion/completions/ratelab";

/// ratelab: what each rate limiter really lets through.
#[derive(Debug, Parser)]
#[command(
    name = "ratelab",
    version,
    after_help = SPECS,
    max_term_width = 100,
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Cmd {
    /// Runs limiters against the same traffic and audits every decision against "at most L
    /// in any window W".
    #[command(after_help = "\
Examples:
  ratelab simulate --limiter fixed-window --limiter sliding-log --limiter token-bucket:burst=10 \\
                   --traffic boundary-burst --limit 60
  ratelab simulate --limiter gcra --traffic steady:load=0.9 --runs 20 --format json
  ratelab simulate --limiter sliding-log --traffic replay:file=access.log,client=203.0.113.7

A SPEC is name[:key=value,...]; `ratelab help` lists the names and keys.")]
    Simulate(SimulateArgs),
    /// Reruns every experiment of the essay's study, with its tables, plots and
    /// REPRODUCTION.md.
    #[command(after_help = "\
Examples:
  ratelab study --out study
  ratelab study --runs 5 --minutes 200 --format json
  ratelab study --only honest --threads 1")]
    Study(StudyArgs),
    /// Sends the traffic in real time to a live limiter (HTTP or a Redis script) and audits
    /// its answers. Loopback only unless --allow-remote.
    ///
    /// Caps, checked before anything is sent, for the worst case in which every retry is
    /// sent: at most 1,000,000 requests, 5,000 in any one second (a peak, not an average),
    /// 5,000 in one millisecond, and nothing due after 1h. On a terminal a progress bar shows
    /// on stderr; Ctrl-C stops sending, waits up to --timeout for answers in flight, prints
    /// the report of what was sent marked partial and exits with status 130.
    #[command(after_help = "\
Examples:
  ratelab probe --target http://127.0.0.1:8080/api --traffic boundary-burst \\
                --limit 20 --window 1s --model leaky-bucket:burst=5,mode=meter
  ratelab probe --redis redis://127.0.0.1:6379 --script sorted-set-record-rejects \\
                --traffic retry:rate=15/1s,spike=40,at=1s,tries=4,every=100ms --limit 20 --window 1s --duration 6s
  ratelab probe --target http://127.0.0.1:8081/api --target http://127.0.0.1:8082/api \
                --target http://127.0.0.1:8083/api --route round-robin --traffic boundary-burst \
                --limit 20 --window 1s --model nginx:rate=20r/s,burst=5,nodelay --coord local
  ratelab probe --redis redis://127.0.0.1:6379 --gateways 3 --script sorted-set \
                --traffic boundary-burst --limit 20 --window 1s
  ratelab probe --target http://127.0.0.1:8080/ --traffic flood:every=10ms --dry-run")]
    Probe(ProbeArgs),
    /// The boundary burst against every limiter, as a table.
    #[command(after_help = "\
Examples:
  ratelab demo
  ratelab demo --limit 20 --window 1s")]
    Demo(DemoArgs),
    /// Reads a limiter's configuration as you would paste it (an nginx limit_req_zone with
    /// its limit_req, an HAProxy stick table with its deny rule) and says what it really
    /// promises: the most any arrivals get into one window, arrivals that reach it, the
    /// boundary burst, N instances together, and what a rejected client is told.
    #[command(after_help = "\
Examples:
  ratelab check nginx.conf
  ratelab check haproxy.cfg --window 1min --instances 4
  printf 'limit_req_zone $binary_remote_addr zone=one:10m rate=10r/s;\\nlimit_req zone=one burst=5 nodelay;\\n' | ratelab check -")]
    Check(CheckArgs),
    /// Reads an access log with the statuses the server sent (nginx or Apache common or
    /// combined, with nginx's $msec appended for milliseconds; JSON lines with a time and a
    /// status; CSV time,status[,key]) and finds which limiter, with which settings, decides
    /// its requests as the server did: every limiter ratelab models, ranked by the share of
    /// requests each decides as the log says.
    #[command(after_help = "\
Examples:
  ratelab fit access.log
  ratelab fit access.log --status 429,503 --key all
  ratelab fit requests.csv --format json")]
    Fit(FitArgs),
    /// Prints a completion script for a shell.
    #[command(after_help = "\
Examples:
  ratelab completions bash > ~/.local/share/bash-completion/completions/ratelab
  ratelab completions zsh > ~/.zfunc/_ratelab
  ratelab completions fish > ~/.config/fish/completions/ratelab.fish")]
    Completions(CompletionsArgs),
}

/// Output format of `simulate`, `probe` and `demo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// One JSON document.
    Json,
    /// A table for people.
    Table,
}

/// Output format of `study`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StudyFormat {
    /// The report as one JSON document.
    Json,
    /// The tables and REPRODUCTION.md.
    Markdown,
}

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// A limiter, name[:key=value,...]; once per limiter, at least one. E.g. sliding-log,
    /// token-bucket:burst=10, leaky-bucket:burst=5,mode=queue
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub limiter: Vec<String>,
    /// The traffic (required). E.g. steady:load=0.8, boundary-burst, flood:every=10ms,
    /// retry:spike=200,tries=5, replay:file=access.log
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub traffic: Option<String>,
    /// L, the requests allowed per window: 1 to 1,000,000. E.g. --limit 60
    #[arg(
        long,
        value_name = "N",
        default_value = "100",
        allow_hyphen_values = true
    )]
    pub limit: String,
    /// W, the window: 1ms to 24h. E.g. --window 1s
    #[arg(
        long,
        value_name = "DUR",
        default_value = "60s",
        allow_hyphen_values = true
    )]
    pub window: String,
    /// How long each run lasts, in minutes: 1 to 100,000. E.g. --minutes 600
    #[arg(
        long,
        value_name = "M",
        default_value = "60",
        allow_hyphen_values = true
    )]
    pub minutes: String,
    /// Independent runs, averaged with a standard error: 1 to 100,000. E.g. --runs 20
    #[arg(
        long,
        value_name = "R",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub runs: String,
    /// The seed of the arrivals: 0 to 2^64 − 1. E.g. --seed 7
    #[arg(
        long,
        value_name = "S",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub seed: String,
    /// Output: a table, or JSON with one object per limiter. E.g. --format json
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Table)]
    pub format: Format,
    /// Gateways enforcing each limiter together: 1 to 64. The report then describes the whole
    /// fleet against the global rule, with its room instants and each gateway's counts.
    /// E.g. --gateways 4
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub gateways: Option<String>,
    /// How requests reach the gateways (with --gateways): round-robin (the default), random,
    /// or skewed:hot=X (gateway 0 takes share X). E.g. --route random
    #[arg(long, value_name = "ROUTE", allow_hyphen_values = true)]
    pub route: Option<String>,
    /// How the gateways coordinate (with --gateways): local (the default: each enforces the
    /// whole limit), split (each 1/N), sync:every=DUR[,delay=DUR] (each decides on the last
    /// snapshot of every admission plus its own since), central[:rtt=DUR[,outage=AT+DUR,
    /// fail=open|closed]] (one shared limiter), lease:size=B[,ttl=DUR] (blocks of permits
    /// from a central limiter). local, split and sync take skew=DUR (up to 1h): the
    /// gateways' clocks spread from 0 to DUR ahead. E.g. --coord sync:every=1s,delay=100ms
    #[arg(long, value_name = "COORD", allow_hyphen_values = true)]
    pub coord: Option<String>,
    /// Retrying clients sharing the key (with --traffic retry:...): 1 to 10,000, each with its
    /// own seed and the same policy; the same as clients=M in the traffic spec (a mix,
    /// retry:...+clients=M,..., gives each group's there instead). E.g. --clients 200
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub clients: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct StudyArgs {
    /// Runs per experiment: 2 to 1,000. E.g. --runs 5
    #[arg(
        long,
        value_name = "R",
        default_value = "20",
        allow_hyphen_values = true
    )]
    pub runs: String,
    /// Minutes per run: 10 to 100,000. E.g. --minutes 200
    #[arg(
        long,
        value_name = "M",
        default_value = "2000",
        allow_hyphen_values = true
    )]
    pub minutes: String,
    /// The seed: 0 to 2^64 − 1. E.g. --seed 9
    #[arg(
        long,
        value_name = "S",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub seed: String,
    /// A directory for the CSV, Markdown and SVG files and REPRODUCTION.md; created, and
    /// checked writable before any work starts. E.g. --out study
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub out: Option<String>,
    /// What to print: the tables and REPRODUCTION.md, or the report as JSON.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = StudyFormat::Markdown)]
    pub format: StudyFormat,
    /// Only the honest-client table's jobs (for timing). E.g. --only honest
    #[arg(long, value_name = "PART", value_parser = ["honest"])]
    pub only: Option<String>,
    /// Worker threads: 1 to 256 [default: every core]. Results do not depend on it.
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub threads: Option<String>,
    /// Print on stderr where the time went: each experiment's jobs, seconds inside the
    /// simulator and share, slowest first.
    #[arg(long)]
    pub timings: bool,
    /// Compute only the K-th of N disjoint slices of the study's jobs (a Slurm array task, a
    /// Kubernetes Job, a CI matrix cell) into DIR/shard-K-of-N.json; --merge puts them
    /// together. Needs --out. E.g. --shard 2/4
    #[arg(long, value_name = "K/N", allow_hyphen_values = true)]
    pub shard: Option<String>,
    /// Write the whole report from the shards in these folders (shard-K-of-N.json files of
    /// one study, every K once) into --out: byte for byte what one run writes. E.g. --merge
    /// part1 part2 --out study
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub merge: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ProbeArgs {
    /// An HTTP limiter to send GET requests to; repeat it for a fleet of gateways (up to 64),
    /// each request going to the one --route picks. E.g. --target http://127.0.0.1:8080/api
    #[arg(long, value_name = "URL", allow_hyphen_values = true)]
    pub target: Vec<String>,
    /// A Redis server to run a limiter script on (with --script). E.g. --redis
    /// redis://127.0.0.1:6379
    #[arg(long, value_name = "URL", allow_hyphen_values = true)]
    pub redis: Option<String>,
    /// The Redis limiter recipe (with --redis). E.g. --script gcra
    #[arg(long, value_name = "NAME", value_parser = SCRIPT_NAMES)]
    pub script: Option<String>,
    /// The gcra script's burst, or redis-cell's max_burst: 1 to 1,000,000 [default: the
    /// limit]. E.g. --burst 5
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub burst: Option<String>,
    /// redis-cell's quantity, the cells each request takes (CL.THROTTLE's fifth argument): 1
    /// to 1,000,000 [default: 1]. E.g. --quantity 3
    #[arg(long, value_name = "Q", allow_hyphen_values = true)]
    pub quantity: Option<String>,
    /// The traffic (required), as for simulate. E.g. boundary-burst, flood:every=10ms
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub traffic: Option<String>,
    /// L, the requests allowed per window: 1 to 1,000,000. E.g. --limit 20
    #[arg(
        long,
        value_name = "N",
        default_value = "100",
        allow_hyphen_values = true
    )]
    pub limit: String,
    /// W, the window: 1ms to 24h. E.g. --window 1s
    #[arg(
        long,
        value_name = "DUR",
        default_value = "60s",
        allow_hyphen_values = true
    )]
    pub window: String,
    /// How long the traffic lasts: up to 1h, retries included. E.g. --duration 6s
    #[arg(
        long,
        value_name = "DUR",
        default_value = "10s",
        allow_hyphen_values = true
    )]
    pub duration: String,
    /// The seed of the arrivals: 0 to 2^64 − 1. E.g. --seed 7
    #[arg(
        long,
        value_name = "S",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub seed: String,
    /// A model limiter to decide the same send times and compare [default: none for HTTP,
    /// the script's own for Redis]. E.g. --model leaky-bucket:burst=5,mode=meter
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub model: Option<String>,
    /// Output: a table, or the report as JSON. E.g. --format json
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Table)]
    pub format: Format,
    /// HTTP statuses that mean admitted: statuses, classes and ranges [default: 2xx].
    /// E.g. --admit 200,204
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub admit: Option<String>,
    /// HTTP statuses that mean rejected [default: 429,503]. E.g. --reject 429,500-504
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub reject: Option<String>,
    /// How long to wait for an answer: 1ms to 60s. E.g. --timeout 500ms
    #[arg(
        long,
        value_name = "DUR",
        default_value = "2s",
        allow_hyphen_values = true
    )]
    pub timeout: String,
    /// A header for every HTTP request; repeatable; no CR or LF. E.g. --header X-Client:probe-1
    #[arg(long, value_name = "NAME:VALUE", allow_hyphen_values = true)]
    pub header: Vec<String>,
    /// Gateways: with --redis, how many separate connections (1 to 64) send to the one
    /// script and key; with --target, the number of --target URLs, if given. The model is
    /// then a fleet of as many. E.g. --redis redis://127.0.0.1:6379 --gateways 3
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub gateways: Option<String>,
    /// How requests are spread over several gateways, by the fleet's own router (seed
    /// --seed): round-robin (the default), random, or skewed:hot=X (gateway 0 takes share X).
    /// E.g. --route random
    #[arg(long, value_name = "ROUTE", allow_hyphen_values = true)]
    pub route: Option<String>,
    /// How the model's gateways coordinate, as for simulate [default: local with --target,
    /// each URL its own limiter; central with --redis, one script and key]. E.g. --coord local
    #[arg(long, value_name = "COORD", allow_hyphen_values = true)]
    pub coord: Option<String>,
    /// Allow a target that is not a loopback address.
    #[arg(long)]
    pub allow_remote: bool,
    /// Print what would be sent, check every cap, and send nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// L: each burst holds L requests: 1 to 1,000,000. E.g. --limit 20
    #[arg(
        long,
        value_name = "N",
        default_value = "100",
        allow_hyphen_values = true
    )]
    pub limit: String,
    /// W, the window: 1ms to 24h. E.g. --window 1s
    #[arg(
        long,
        value_name = "DUR",
        default_value = "60s",
        allow_hyphen_values = true
    )]
    pub window: String,
    /// Output: a table, or JSON as simulate writes it. E.g. --format json
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The configuration file, or - for standard input.
    #[arg(value_name = "FILE|-")]
    pub file: String,
    /// The window to find the worst of: 1ms to 24h (default: the configuration's own period).
    /// E.g. --window 1min
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub window: Option<String>,
    /// How many instances each enforce the configuration on their own: 1 to 10,000. E.g.
    /// --instances 4
    #[arg(
        long,
        value_name = "N",
        default_value = "2",
        allow_hyphen_values = true
    )]
    pub instances: String,
    /// Output: text, or JSON. E.g. --format json
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub(crate) struct FitArgs {
    /// The log, or - for standard input.
    #[arg(value_name = "LOG|-")]
    pub log: String,
    /// The statuses that mean the limiter rejected a request: 100 to 599, comma-separated.
    /// E.g. --status 429,503
    #[arg(
        long,
        value_name = "CODES",
        default_value = "429",
        allow_hyphen_values = true
    )]
    pub status: String,
    /// One limiter per client (the log's host, a JSON line's client or ip, a CSV's third
    /// column), or one for every request. E.g. --key all
    #[arg(long, value_enum, value_name = "KEY", default_value_t = FitKey::Client)]
    pub key: FitKey,
    /// Output: text, or JSON. E.g. --format json
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = Format::Table)]
    pub format: Format,
}

/// What `fit` keeps one limiter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FitKey {
    /// One limiter per client.
    Client,
    /// One limiter for every request.
    All,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}
