//! Retry policies and fleets of clients (issue 20): the exponential schedule in closed form,
//! each jitter's range and mean, the retry budget's rule, `Retry-After` honoured, one client
//! of a fleet being the essays' client, and herding at a fixed window's boundary dissolved
//! by jitter.

mod common;

use ratelab::limiter::Decide;
use ratelab::sim::{simulate, simulate_run, ClientReport, Scenario};

use ratelab::time::{Micros, MINUTE, SECOND};
use ratelab::traffic::{RetryClient, Try};

fn scenario(traffic: &str, limiters: &[&str], limit: u64, window: Micros) -> Scenario {
    common::scenario(traffic, limiters, (limit, window), 10 * MINUTE, (4, 11))
}

/// One request's tries when every one is rejected: (time, try number).
fn all_rejected(client: &mut RetryClient) -> Vec<Try> {
    let mut out = Vec::new();
    while let Some(tr) = client.next() {
        client.rejected(tr, None);
        out.push(tr);
    }
    out
}

/// A client with one request (a spike of 1 at 1 s, no steady stream) and `policy` keys.
fn lone(keys: &str) -> RetryClient {
    let s = scenario(
        &format!("retry:rate=1/1000h,spike=1,at=1s,{keys}"),
        &["fixed-window"],
        10,
        MINUTE,
    );
    s.retry_client(0).expect("a retrying client")
}

#[test]
fn exponential_backoff_without_jitter_follows_its_closed_form() {
    // Gaps 1, 2, 4, 8 s, then the 10 s cap.
    let mut c = lone("tries=7,policy=exponential,base=1s,factor=2,cap=10s");
    let times: Vec<Micros> = all_rejected(&mut c).iter().map(|t| t.at).collect();
    let want: Vec<Micros> = [1, 2, 4, 8, 16, 26, 36]
        .iter()
        .map(|s| s * SECOND)
        .collect();
    assert_eq!(times, want);
    assert_eq!(c.gave_up, 1, "seven tries, then it gives up");
    // A factor of 1.5 from 3 µs: each gap is the last times 1.5, rounded down to the µs.
    let mut c = lone("tries=6,policy=exponential,base=3us,factor=1.5,cap=1h");
    let gaps: Vec<Micros> = all_rejected(&mut c)
        .windows(2)
        .map(|w| w[1].at - w[0].at)
        .collect();
    assert_eq!(gaps, [3, 4, 6, 9, 13]);
    // Fixed: the essays' gap every time.
    let mut c = lone("tries=4,every=250ms");
    let gaps: Vec<Micros> = all_rejected(&mut c)
        .windows(2)
        .map(|w| w[1].at - w[0].at)
        .collect();
    assert_eq!(gaps, [250_000; 3]);
}

/// The gaps of many lone requests' first retries under `keys`.
fn first_gaps(keys: &str, n: u32) -> Vec<Micros> {
    let s = scenario(
        &format!("retry:rate=1/1000h,spike={n},at=1s,tries=2,{keys}"),
        &["fixed-window"],
        10,
        MINUTE,
    );
    let mut c = s.retry_client(0).expect("a retrying client");
    let mut first = Vec::new();
    while let Some(tr) = c.next() {
        if tr.attempt == 1 {
            c.rejected(tr, None);
        } else {
            first.push(tr.at - SECOND);
        }
    }
    first
}

/// Mean and standard error.
fn mean_se(xs: &[Micros]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

#[test]
fn each_jitter_keeps_to_its_range_and_mean() {
    let d = 1_000_000u64;
    let n = 20_000;
    // Full: uniform on [0, d], mean d/2.
    let full = first_gaps("every=1s,jitter=full", n);
    assert!(full.iter().all(|&g| g <= d));
    let (m, se) = mean_se(&full);
    assert!(
        (m - d as f64 / 2.0).abs() < 5.0 * se,
        "full jitter mean {m} ± {se}"
    );
    // Equal: d/2 plus uniform on [0, d/2], mean 3d/4.
    let equal = first_gaps("every=1s,jitter=equal", n);
    assert!(equal.iter().all(|&g| (d / 2..=d).contains(&g)));
    let (m, se) = mean_se(&equal);
    assert!(
        (m - 0.75 * d as f64).abs() < 5.0 * se,
        "equal jitter mean {m} ± {se}"
    );
    // Decorrelated, first retry: uniform on [base, 3·base], mean 2·base, capped.
    let dec = first_gaps(
        "policy=exponential,base=1s,cap=2500ms,jitter=decorrelated",
        n,
    );
    assert!(dec.iter().all(|&g| (d..=2_500_000).contains(&g)));
    let at_cap = dec.iter().filter(|&&g| g == 2_500_000).count() as f64 / f64::from(n);
    // P(uniform on [1, 3] s ≥ 2.5 s) = 1/4; binomial SE = sqrt(p(1−p)/n).
    let se = (0.25f64 * 0.75 / f64::from(n)).sqrt();
    assert!(
        (at_cap - 0.25).abs() < 5.0 * se,
        "decorrelated share at the cap {at_cap}"
    );
    // None: exactly d.
    assert!(first_gaps("every=1s", 100).iter().all(|&g| g == d));
}

#[test]
fn decorrelated_jitter_grows_from_its_last_wait() {
    // One request's chain per seed: every gap in [base, min(cap, 3 · the last gap)], the
    // first "last gap" being base.
    let (base, cap) = (100_000, 30 * SECOND);
    let mut reached_cap = 0;
    for seed in 0..300 {
        let mut s = scenario(
            "retry:rate=1/1000h,spike=1,at=1s,tries=12,policy=exponential,base=100ms,cap=30s,jitter=decorrelated",
            &["fixed-window"],
            10,
            MINUTE,
        );
        s.seed = seed;
        let mut c = s.retry_client(0).expect("a client");
        // The spike's request (a steady first try is rare at one per 1000 h, but possible).
        let times: Vec<Micros> = all_rejected(&mut c)
            .iter()
            .filter(|t| t.first == SECOND)
            .map(|t| t.at)
            .collect();
        assert_eq!(times.len(), 12);
        let mut last = base;
        for w in times.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                gap >= base && gap <= cap.min(3 * last),
                "seed {seed}: gap {gap} after {last}"
            );
            reached_cap += u32::from(gap == cap);
            last = gap;
        }
    }
    assert!(reached_cap > 0, "chains grow to the cap");
}

#[test]
fn the_budget_allows_retries_up_to_its_share_of_first_tries_in_a_trailing_minute() {
    // A steady 120 first tries a minute against a limiter admitting 10: most are rejected,
    // and a 10% budget allows about 12 retries a minute.
    let s = scenario(
        "retry:rate=120/1min,spike=0,at=1s,tries=5,every=1s,budget=10%",
        &["fixed-window"],
        10,
        MINUTE,
    );
    let mut c = s.retry_client(0).expect("a client");
    let mut firsts: Vec<Micros> = Vec::new();
    let mut spent: Vec<Micros> = Vec::new();
    let mut limiter = s.build_limiter(&s.limiters[0], 0).expect("built");
    let mut retries_sent = 0u64;
    while let Some(tr) = c.next() {
        if tr.attempt == 1 {
            firsts.push(tr.at);
        } else {
            retries_sent += 1;
        }
        if limiter.admit(tr.at) {
            continue;
        }
        let gave_up_before = c.gave_up;
        c.rejected(tr, None);
        if c.gave_up == gave_up_before {
            spent.push(tr.at);
            // The rule at this rejection: retries of the trailing minute, this one included,
            // at most 10% of its first tries.
            let from = tr.at.saturating_sub(MINUTE - 1);
            let f = firsts.iter().filter(|&&x| x >= from).count() as u64;
            let r = spent.iter().filter(|&&x| x >= from).count() as u64;
            assert!(
                r * 10 <= f,
                "at {}: {r} retries against {f} first tries",
                tr.at
            );
        } else if tr.attempt < 5 {
            // Refused by the budget: one more would have broken the rule.
            let from = tr.at.saturating_sub(MINUTE - 1);
            let f = firsts.iter().filter(|&&x| x >= from).count() as u64;
            let r = spent.iter().filter(|&&x| x >= from).count() as u64;
            assert!(
                (r + 1) * 10 > f,
                "at {}: refused with {r} retries against {f}",
                tr.at
            );
        }
    }
    assert_eq!(retries_sent, spent.len() as u64);
    // Without the budget, the same client retries far more.
    let plain = scenario(
        "retry:rate=120/1min,spike=0,at=1s,tries=5,every=1s",
        &["fixed-window"],
        10,
        MINUTE,
    );
    let with = simulate(&s).expect("runs").results[0].clone();
    let without = simulate(&plain).expect("runs").results[0].clone();
    let (a, b) = (
        with.client.expect("client"),
        without.client.expect("client"),
    );
    assert!(a.amplification < b.amplification);
    assert!(
        a.amplification.expect("some") < 1.11,
        "{:?}",
        a.amplification
    );
}

#[test]
fn one_client_of_a_fleet_is_the_essays_client_bit_for_bit() {
    let classic = scenario(
        "retry:rate=30/1min,spike=200,at=5min,tries=8,every=1s",
        &[
            "sliding-log:record-rejects=true",
            "token-bucket",
            "fixed-window",
        ],
        100,
        MINUTE,
    );
    let one = scenario(
        "retry:rate=30/1min,spike=200,at=5min,tries=8,every=1s,clients=1,retry-after=ignore,jitter=none,policy=fixed",
        &["sliding-log:record-rejects=true", "token-bucket", "fixed-window"],
        100,
        MINUTE,
    );
    assert_eq!(classic.traffic, one.traffic, "the defaults, written out");
    for run in 0..classic.runs {
        assert_eq!(
            simulate_run(&classic, run).expect("runs"),
            simulate_run(&one, run).expect("runs")
        );
    }
    // Its report's client block says so: no policy keys, and the tallies.
    let r = simulate(&classic).expect("runs");
    for l in &r.results {
        let c = l.client.as_ref().expect("retry traffic has a client block");
        assert_eq!(c.policy, "");
        assert_eq!((c.requests, c.attempts), (l.offered, l.decisions));
        assert!(c.gave_up <= c.requests);
    }
}

#[test]
fn a_fleet_sends_each_clients_requests_in_time_order() {
    let fleet = scenario(
        "retry:rate=6/1min,spike=20,at=2min,tries=4,every=1s,clients=25",
        &["sliding-log"],
        100,
        MINUTE,
    );
    let mut clients = fleet.retry_clients(0).expect("a fleet");
    let one = fleet.retry_client(0).expect("client 0");
    let mut last = 0;
    let mut per_client = vec![0u64; 25];
    let mut n = 0u64;
    while let Some((c, tr)) = clients.next() {
        assert!(tr.at >= last, "tries in time order");
        last = tr.at;
        per_client[c as usize] += u64::from(tr.attempt == 1);
        // Reject the spike's first tries only.
        if tr.attempt == 1 && tr.at == 2 * MINUTE {
            clients.rejected(c, tr, None);
        } else {
            clients.admitted(c, tr);
        }
        n += 1;
    }
    // Each client has its own first tries: the spike of 20 plus its own Poisson stream.
    assert!(per_client.iter().all(|&k| k >= 20));
    let distinct: std::collections::BTreeSet<u64> = per_client.iter().copied().collect();
    assert!(
        distinct.len() > 1,
        "clients draw their own streams: {per_client:?}"
    );
    // Client 0 of the fleet is the lone client.
    let mut alone = one;
    let mut k = 0;
    while alone.next().is_some() {
        k += 1;
    }
    assert_eq!(k, per_client[0]);
    assert!(n > 25 * 20);
}

#[test]
fn honouring_retry_after_against_a_token_bucket_wastes_fewer_tries_than_every_second() {
    // A spike of 15 against a bucket of 10 refilling one token every 6 s: the 5 rejected,
    // retried every second, knock about 6 times per token each; told when the next token
    // comes, all knock once per token and one gets it (about 5 + 4 + 3 + 2 + 1 tries wasted
    // against 6 times that). Honouring pays where a token takes longer than the fixed gap.
    let base = "retry:rate=2/1min,spike=15,at=2min,tries=50";
    let every = scenario(&format!("{base},every=1s"), &["token-bucket"], 10, MINUTE);
    let honor = scenario(
        &format!("{base},every=1s,retry-after=honor"),
        &["token-bucket"],
        10,
        MINUTE,
    );
    for run in 0..every.runs {
        let a = &simulate_run(&every, run).expect("runs")[0];
        let b = &simulate_run(&honor, run).expect("runs")[0];
        let wasted = |s: &ratelab::sim::RunStats| s.decisions - s.admitted;
        assert!(
            wasted(b) * 5 < wasted(a),
            "run {run}: honouring wasted {} tries, every second {}",
            wasted(b),
            wasted(a)
        );
        assert_eq!(a.offered, b.offered, "the same requests");
        assert!(b.admitted >= a.admitted, "and no fewer served");
    }
}

#[test]
fn a_fleet_told_to_come_back_at_the_next_window_herds_and_jitter_dissolves_it() {
    // 200 clients sending one request a minute each against a fixed window of 100 a minute:
    // once a window is full, everyone rejected is told to come back at the next window's start
    // and does, together; with full jitter over a 10 s gap added they spread over 10 s.
    let base = "retry:rate=1/1min,spike=0,at=1s,tries=6,every=10s,retry-after=honor,clients=200";
    for seed in 1..=5 {
        let mut herd = scenario(base, &["fixed-window"], 100, MINUTE);
        let mut spread = scenario(
            &format!("{base},jitter=full"),
            &["fixed-window"],
            100,
            MINUTE,
        );
        herd.seed = seed;
        spread.seed = seed;
        let h = simulate(&herd).expect("runs").results[0]
            .client
            .clone()
            .expect("client");
        let s = simulate(&spread).expect("runs").results[0]
            .client
            .clone()
            .expect("client");
        // The herd: a window's worth of rejected requests at one instant.
        assert!(
            h.peak_attempts_per_second >= 100,
            "seed {seed}: herd peak {}",
            h.peak_attempts_per_second
        );
        // Spread over 10 s, a second holds about a tenth of them plus the steady 3.3 a second.
        assert!(
            s.peak_attempts_per_second * 3 < h.peak_attempts_per_second,
            "seed {seed}: jittered peak {} against {}",
            s.peak_attempts_per_second,
            h.peak_attempts_per_second
        );
    }
}

#[test]
fn a_mix_of_one_policy_is_that_fleet_and_its_groups_add_up() {
    // 30 + 20 clients of one policy are the fleet of 50: each client keeps its number, so its
    // seed, and its policy. Every number of the fleet is the same; the groups split it.
    let keys = "tries=6,policy=exponential,base=2s,factor=2,cap=1min,jitter=full,retry-after=honor";
    let base = format!("retry:rate=2/1min,spike=20,at=2min,{keys}");
    let limiters = ["fixed-window", "sliding-log:record-rejects=true", "gcra"];
    let fleet = scenario(&format!("{base},clients=50"), &limiters, 100, MINUTE);
    let mix = scenario(
        &format!("{base},clients=30+clients=20,{keys}"),
        &limiters,
        100,
        MINUTE,
    );
    let (f, m) = (
        simulate(&fleet).expect("runs"),
        simulate(&mix).expect("runs"),
    );
    for (a, b) in f.results.iter().zip(&m.results) {
        let (ca, cb) = (a.client.as_ref().expect("a"), b.client.as_ref().expect("b"));
        let mut same = b.clone();
        same.client = Some(ClientReport {
            policy: ca.policy.clone(),
            groups: Vec::new(),
            ..cb.clone()
        });
        assert_eq!(a, &same, "{}: the mix is the fleet", a.limiter);
        assert_eq!(cb.clients, 50);
        let g = &cb.groups;
        assert_eq!((g.len(), g[0].clients, g[1].clients), (2, 30, 20));
        assert_eq!(g[0].policy, format!("clients=30,{keys}"));
        assert_eq!(g[1].policy, format!("clients=20,{keys}"));
        let sum = |f: fn(&ClientReport) -> u64| g.iter().map(f).sum::<u64>();
        assert_eq!(sum(|c| c.requests), cb.requests);
        assert_eq!(sum(|c| c.attempts), cb.attempts);
        assert_eq!(sum(|c| c.gave_up), cb.gave_up);
        assert!(g
            .iter()
            .all(|c| c.peak_attempts_per_second <= cb.peak_attempts_per_second));
        assert!(sum(|c| c.peak_attempts_per_second) >= cb.peak_attempts_per_second);
        let locked: f64 = g.iter().map(|c| c.lockout_share * c.clients as f64).sum();
        assert!((locked - cb.lockout_share * 50.0).abs() < 1e-9);
    }
}

#[test]
fn each_group_of_a_mix_retries_by_its_own_policy() {
    // Against a fixed window of 100 a minute, 100 clients sending 1.2 a minute: 60 that never
    // retry, 40 that retry every 5 s up to 4 tries. Each group is the same clients as in a
    // fleet of its own policy (client numbers 0–59 and 60–99), so a try of the first group is
    // always a first try, and the second's at most 4 per request.
    let base = "retry:rate=6/5min,spike=0,at=0s";
    let mix = scenario(
        &format!("{base},tries=1,clients=60+clients=40,tries=4,every=5s"),
        &["fixed-window"],
        100,
        MINUTE,
    );
    let mut clients = mix.retry_clients(0).expect("a fleet");
    let mut tries = [0u64; 100];
    let mut last_try = [0u32; 100];
    let mut lane = mix.build_limiter(&mix.limiters[0], 0).expect("builds");
    while let Some((c, tr)) = clients.next() {
        tries[c as usize] += 1;
        last_try[c as usize] = last_try[c as usize].max(tr.attempt);
        if lane.decide(tr.at).admitted() {
            clients.admitted(c, tr);
        } else {
            clients.rejected(c, tr, None);
        }
    }
    assert!(
        last_try[..60].iter().all(|&t| t == 1),
        "the first group never retries"
    );
    assert!(last_try[60..].iter().all(|&t| t <= 4));
    assert!(
        last_try[60..].contains(&4),
        "the second retries, to its last try"
    );
    for (i, c) in clients.clients()[..60].iter().enumerate() {
        assert_eq!(tries[i], c.requests, "client {i}: one try a request");
    }
    // The report's groups say the same.
    let r = simulate(&mix).expect("runs");
    let g = &r.results[0].client.as_ref().expect("client").groups;
    assert_eq!(g[0].attempts, g[0].requests);
    assert!(g[1].attempts > g[1].requests && g[1].attempts <= 4 * g[1].requests);
    assert_eq!(g[0].policy, "clients=60,tries=1,every=1s");
    assert_eq!(g[1].policy, "clients=40,tries=4,every=5s");
}

#[test]
fn in_a_herd_at_a_fixed_windows_boundary_the_few_who_jitter_are_the_ones_locked_out() {
    // The herding section's clients (100 sending 1.2 a minute against 100 a minute, backing
    // off from 10 s and honouring Retry-After), 90 without jitter and 10 with full jitter:
    // the herd arrives at each boundary together and fills the window within its first
    // second; a jittered client comes back later in the window, finds it full, and is told to
    // wait for the next. Jitter spreads a fleet only if everyone jitters.
    let keys = "tries=6,policy=exponential,base=10s,factor=2,cap=1min,retry-after=honor";
    let mix =
        format!("retry:rate=6/5min,spike=0,at=0s,{keys},clients=90+clients=10,{keys},jitter=full");
    for seed in 1..=5 {
        let s = common::scenario(
            &mix,
            &["fixed-window"],
            (100, MINUTE),
            30 * MINUTE,
            (1, seed),
        );
        let r = simulate(&s).expect("runs");
        let g = &r.results[0].client.as_ref().expect("client").groups;
        let (herd, jittered) = (&g[0], &g[1]);
        assert!(
            jittered.lockout_share > 0.5 && herd.lockout_share < 0.2,
            "seed {seed}: locked out {} of the jittered, {} of the herd",
            jittered.lockout_share,
            herd.lockout_share
        );
        let amp = |c: &ClientReport| c.amplification.expect("requests");
        assert!(
            amp(jittered) > 1.5 * amp(herd),
            "seed {seed}: {} against {}",
            amp(jittered),
            amp(herd)
        );
    }
}
