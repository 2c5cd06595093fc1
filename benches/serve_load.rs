//! Load test of `gametables serve` on a Dodgem 5×5 run, in two phases.
//!
//! 1. **Bounded load** (the acceptance figure): 64 concurrent keep-alive
//!    clients together *offer* a fixed rate (`GT_LOAD_RATE`, default 1,000
//!    requests per second) of 20,000 random positions. Each client sends on
//!    its own schedule of Poisson arrivals (exponential gaps of mean
//!    `clients / rate`, its own seed), so the load is open: a slow answer
//!    does not slow the arrivals down. Latency is measured from each
//!    request's *scheduled* send time, not from when the client got round to
//!    sending it, so a request that waits behind a slow one counts its wait
//!    (no coordinated omission).
//! 2. **Saturation** (the capacity figure): the same clients in a closed
//!    loop, each sending its next request as soon as the last is answered
//!    (`GT_LOAD_SAT_REQUESTS`, default 10,000). It gives the most requests
//!    per second the server answers here, but its latency is not a service
//!    time: with 64 requests always in flight, the mean latency is
//!    64 / throughput (Little's law), a queue length set by the machine's
//!    speed and by the load generator sharing it.
//!
//! Why the bounded load is the acceptance figure: a question like "p99 ≤ 10
//! ms for 64 concurrent clients" is about how long an answer takes when the
//! server keeps up with its users, which a closed loop cannot show (it
//! always runs the server flat out, so its latency only measures its
//! queue). The offered rate is well below the saturated throughput, as it
//! must be for any latency target to hold.
//!
//! Before each phase every client opens its keep-alive connection and the
//! clients together ask `GT_LOAD_WARMUP` (default 2,000) positions as fast
//! as they can, not measured (answers checked): the figures are those of a
//! running server, not of its first second (64 connections opening at once
//! and a cold block cache; `GT_LOAD_WARMUP=0` measures that too).
//!
//! Positions are random (xorshift, fixed seed): a layer uniformly (not the
//! empty board, which is no position of play), then an index in it
//! uniformly. Every answer (value, depth, and each legal move's
//! value and depth for the mover) is checked against the run's layers
//! decoded whole, after the phase (so that checking does not take CPU from
//! the server while it is measured); a wrong answer fails the bench.
//! Printed per phase: wall time, latency p50/p90/p99/max, wrong answers, the
//! server's and the clients' CPU per request and the load average; for the
//! bounded load also the latency from each request's actual send (the
//! difference is time the request waited for its client: behind the
//! client's previous request, or for the CPU); for saturation the requests
//! answered per second. At the end the server's peak and current RSS.
//!
//! `GT_DODGEM5_RUN=DIR cargo bench -p gametables-benches --bench serve_load` (DIR: a finished
//! `gametables run jobs/dodgem-5.toml --run-dir DIR`). Optional:
//! `GT_LOAD_MODE` (`both`, the default; `bounded`; `saturate`),
//! `GT_LOAD_CLIENTS` (64), `GT_LOAD_REQUESTS` (20000, bounded phase),
//! `GT_LOAD_RATE` (1000 requests per second offered in all),
//! `GT_LOAD_SAT_REQUESTS` (10000, saturation phase), `GT_LOAD_WARMUP`
//! (2000 before each phase), `GT_LOAD_CACHE_MB`
//! (the server's `--cache-mb`; default the server's default),
//! `GT_LOAD_DUMP` (a file: one line per request of the last phase run,
//! start, latency and latency from the actual send in ms).
//! `GT_LOAD_CLIENTS=1 GT_LOAD_MODE=saturate` measures one client in
//! sequence (a warm server's probe time).

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gametables::pipeline::RunView;
use gametables::solvers::dodgem::{Board, Layer, Position, Tables, Value};
use gametables::solvers::engine::Value as EngineValue;

fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// A xorshift64 generator (fixed seeds: the same positions and schedules on
/// every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let x = &mut self.0;
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
}

/// How a phase sends its requests.
#[derive(Clone, Copy)]
enum Pace {
    /// Open loop: `rate` requests per second offered in all, Poisson
    /// arrivals per client; latency from the scheduled send time.
    Offered { rate: f64 },
    /// Closed loop: each client sends as soon as its last answer came;
    /// latency from the send.
    Saturate,
}

/// What one phase measured.
struct Phase {
    /// Latency of each request (from its scheduled send time for an
    /// offered load), sorted.
    lat: Vec<Duration>,
    /// From the moment each request was actually sent to its answer, sorted
    /// (the same as `lat` for a closed loop).
    sent: Vec<Duration>,
    bad: usize,
    wall: Duration,
    server_cpu: f64,
    client_cpu: f64,
}

/// The server under test and the reference to check its answers.
struct Target {
    base: String,
    server: u32,
    board: Board,
    tables: Tables,
}

impl Target {
    /// `Ok` if `body` is the right answer for `p`.
    fn check(&self, p: &Position, body: &str) -> bool {
        let board = self.board;
        let word = |v: Value| (v.word().to_string(), v.depth().map(u64::from));
        let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
            return false;
        };
        let want = word(self.tables.value(p).unwrap());
        let got = (
            v["value"].as_str().unwrap_or("").to_string(),
            v["depth"].as_u64(),
        );
        let mut ok = got == want;
        let moves = board.moves(p);
        ok &= v["moves"].as_array().map(Vec::len) == Some(moves.len());
        for m in &moves {
            let name = board.move_name(*m);
            let e = v["moves"]
                .as_array()
                .and_then(|a| a.iter().find(|x| x["move"] == name.as_str()));
            // The engine's encoding is Dodgem's: its `for_mover` gives the
            // move's value for the player making it.
            let after = self.tables.value(&board.apply(p, *m)).unwrap();
            let mover = EngineValue::from_byte(after.to_byte()).unwrap().for_mover();
            let want = (mover.word().to_string(), mover.depth().map(u64::from));
            ok &= e.is_some_and(|e| {
                (
                    e["value"].as_str().unwrap_or("").to_string(),
                    e["depth"].as_u64(),
                ) == want
            });
        }
        ok
    }

    /// Runs one phase: `positions` spread over `clients` clients (client
    /// `c` asks positions `c`, `c + clients`, …), after each client has
    /// opened its connection and asked its share of `warm` (as fast as it
    /// can, not measured; the answers are checked too).
    fn phase(
        &self,
        warm: &[Position],
        positions: &[Position],
        clients: usize,
        pace: Pace,
    ) -> Phase {
        let ready = std::sync::Barrier::new(clients + 1);
        let start = std::sync::OnceLock::new();
        let go = std::sync::Barrier::new(clients + 1);
        let url = |p: &Position| {
            let text = self.board.position_text(p);
            format!(
                "{}/api/v1/dodgem?n=5&position={}",
                self.base,
                text.replace(' ', "%20")
                    .replace(':', "%3A")
                    .replace(',', "%2C")
            )
        };
        // Each client keeps its answers; they are checked after the phase,
        // so that checking does not compete with the server for the CPU.
        type Answers<'a> = Vec<(&'a Position, Duration, Duration, Duration, String)>;
        let (results, warmed, (cpu0, client0, t0)) = std::thread::scope(|s| {
            let hs: Vec<_> = (0..clients)
                .map(|c| {
                    let (ready, go, start, url) = (&ready, &go, &start, &url);
                    s.spawn(move || {
                        let agent: ureq::Agent = ureq::Agent::config_builder()
                            .http_status_as_error(false)
                            .build()
                            .into();
                        let get = |p: &Position| {
                            let mut r = agent.get(&url(p)).call().expect("request");
                            r.body_mut().read_to_string().unwrap()
                        };
                        let warmed: Vec<(&Position, String)> = warm
                            .iter()
                            .skip(c)
                            .step_by(clients)
                            .map(|p| (p, get(p)))
                            .collect();
                        ready.wait();
                        go.wait();
                        let t0: Instant = *start.get().expect("set before go");
                        let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ ((c as u64 + 1) * 0x9E37_79B9));
                        let mut due = t0;
                        let mut out: Answers<'_> = Vec::new();
                        for p in positions.iter().skip(c).step_by(clients) {
                            let scheduled = match pace {
                                Pace::Offered { rate } => {
                                    let gap = -rng.unit().ln() * clients as f64 / rate;
                                    due += Duration::from_secs_f64(gap);
                                    let now = Instant::now();
                                    if due > now {
                                        std::thread::sleep(due - now);
                                    }
                                    Some(due)
                                }
                                Pace::Saturate => None,
                            };
                            let sent = Instant::now();
                            let body = get(p);
                            let done = Instant::now();
                            let from = scheduled.unwrap_or(sent);
                            out.push((p, from - t0, done - from, done - sent, body));
                        }
                        (out, warmed)
                    })
                })
                .collect();
            ready.wait();
            let at = (
                cpu_seconds(self.server),
                cpu_seconds(std::process::id()),
                Instant::now(),
            );
            start.set(at.2).expect("set once");
            go.wait();
            let (results, warmed): (Vec<Answers<'_>>, Vec<_>) =
                hs.into_iter().map(|h| h.join().unwrap()).unzip();
            (results, warmed, at)
        });
        let wall = t0.elapsed();
        let server_cpu = cpu_seconds(self.server) - cpu0;
        let client_cpu = cpu_seconds(std::process::id()) - client0;
        if let Ok(path) = std::env::var("GT_LOAD_DUMP") {
            // One line per request: start (scheduled or sent) after the
            // phase began, latency, latency from the actual send (ms).
            let mut rows: Vec<_> = results.iter().flatten().map(|r| (r.1, r.2, r.3)).collect();
            rows.sort();
            let text: String = rows
                .iter()
                .map(|(t, l, s)| {
                    format!(
                        "{:.3} {:.3} {:.3}\n",
                        t.as_secs_f64() * 1e3,
                        l.as_secs_f64() * 1e3,
                        s.as_secs_f64() * 1e3
                    )
                })
                .collect();
            std::fs::write(&path, text).expect("GT_LOAD_DUMP");
        }
        let mut bad = 0;
        for (p, body) in warmed.iter().flatten() {
            if !self.check(p, body) {
                bad += 1;
                eprintln!(
                    "WRONG answer (warm-up) for {}: {body}",
                    self.board.position_text(p)
                );
            }
        }
        let (mut lat, mut sent) = (Vec::new(), Vec::new());
        for (p, _, l, s, body) in results.iter().flatten() {
            lat.push(*l);
            sent.push(*s);
            if !self.check(p, body) {
                bad += 1;
                eprintln!("WRONG answer for {}: {body}", self.board.position_text(p));
            }
        }
        lat.sort();
        sent.sort();
        Phase {
            lat,
            sent,
            bad,
            wall,
            server_cpu,
            client_cpu,
        }
    }
}

/// The `f`-quantile of sorted durations, in milliseconds.
fn quantile(sorted: &[Duration], f: f64) -> f64 {
    let i = ((sorted.len() as f64 * f) as usize).min(sorted.len() - 1);
    sorted[i].as_secs_f64() * 1e3
}

impl Phase {
    /// Latency percentiles, wrong answers, CPU per request, load.
    fn figures(&self) -> String {
        let lat = &self.lat;
        let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        format!(
            "latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; wrong answers {}; server CPU {:.1} µs per request (clients {:.1} µs, not counting the checks); load average {}",
            quantile(lat, 0.5),
            quantile(lat, 0.9),
            quantile(lat, 0.99),
            quantile(lat, 1.0),
            self.bad,
            self.server_cpu * 1e6 / lat.len() as f64,
            self.client_cpu * 1e6 / lat.len() as f64,
            load.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        )
    }

    /// Requests answered per second over the phase.
    fn rate(&self) -> f64 {
        self.lat.len() as f64 / self.wall.as_secs_f64()
    }
}

fn main() {
    let Ok(run) = std::env::var("GT_DODGEM5_RUN") else {
        eprintln!("serve_load: set GT_DODGEM5_RUN to a finished dodgem-5 run directory; skipped");
        return;
    };
    let mode = std::env::var("GT_LOAD_MODE").unwrap_or_else(|_| "both".into());
    let (bounded, saturate) = match mode.as_str() {
        "both" => (true, true),
        "bounded" => (true, false),
        "saturate" => (false, true),
        other => panic!("GT_LOAD_MODE: `{other}` is not both, bounded or saturate"),
    };
    let clients = env_or("GT_LOAD_CLIENTS", 64).max(1);
    let total = env_or("GT_LOAD_REQUESTS", 20_000);
    let rate = env_or("GT_LOAD_RATE", 1_000).max(1) as f64;
    let sat_total = env_or("GT_LOAD_SAT_REQUESTS", 10_000);
    let warmup = env_or("GT_LOAD_WARMUP", 2_000);
    let exe = std::env::current_exe().unwrap();
    let gt = exe.parent().unwrap().parent().unwrap().join("gametables");
    let cache_mb = env_or("GT_LOAD_CACHE_MB", 0);
    let mut server = Command::new(&gt)
        .args(["serve", &run, "--bind", "127.0.0.1:0"])
        .args(if cache_mb > 0 {
            vec!["--cache-mb".to_string(), cache_mb.to_string()]
        } else {
            Vec::new()
        })
        .stdout(Stdio::piped())
        .spawn()
        .expect("start gametables serve");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("address line")
        .trim_end_matches('/')
        .to_string();

    // The reference: every layer decoded whole.
    let board = Board::new(5).unwrap();
    let view = RunView::open(run.as_ref(), &gametables::games::registry()).unwrap();
    let n = board.n();
    let all: Vec<(usize, usize)> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect();
    let tables = tables_from_run(&view, board, &all);
    let target = Target {
        base,
        server: server.id(),
        board,
        tables,
    };

    // Random positions: a layer, then an index. The empty board (layer
    // (0, 0): no car at all) is no position of play, which the probe
    // refuses (issue 27): it is left out.
    let played: Vec<(usize, usize)> = all.iter().copied().filter(|&l| l != (0, 0)).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut positions = |count: usize| -> Vec<Position> {
        (0..count)
            .map(|_| {
                let (a, b) = played[(rng.next() % played.len() as u64) as usize];
                let l = Layer::new(board, a, b);
                l.position(rng.next() % l.len())
            })
            .collect()
    };
    let mut bad = 0;
    if bounded && total > 0 {
        let warm = positions(warmup);
        let ps = positions(total);
        let r = target.phase(&warm, &ps, clients, Pace::Offered { rate });
        println!(
            "serve_load bounded: {} requests offered at {rate:.0} req/s (Poisson arrivals, {clients} keep-alive clients), {:.2} s; from the scheduled send: {}; from the actual send: p50 {:.2} ms, p99 {:.2} ms",
            r.lat.len(),
            r.wall.as_secs_f64(),
            r.figures(),
            quantile(&r.sent, 0.5),
            quantile(&r.sent, 0.99),
        );
        bad += r.bad;
    }
    if saturate && sat_total > 0 {
        let warm = positions(warmup);
        let ps = positions(sat_total);
        let r = target.phase(&warm, &ps, clients, Pace::Saturate);
        println!(
            "serve_load saturate: {} requests, {clients} closed-loop clients (each sends when answered), {:.2} s, {:.0} req/s; {}",
            r.lat.len(),
            r.wall.as_secs_f64(),
            r.rate(),
            r.figures()
        );
        bad += r.bad;
    }
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .map_or("?".to_string(), |l| {
                l[k.len() + 1..]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
    };
    println!(
        "serve_load: server peak RSS (VmHWM) {}, now (VmRSS) {}",
        field("VmHWM"),
        field("VmRSS")
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(bad, 0, "wrong answers");
}

/// User + system CPU seconds of process `pid` so far (from `/proc/PID/stat`).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) closed by ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    ticks as f64 / 100.0
}

/// The layers `which` of a `dodgem` run as Dodgem's own solver's tables
/// (each shard's `values` section: the engine's one-byte values are the
/// bytes of Dodgem's solver).
fn tables_from_run(view: &RunView, board: Board, which: &[(usize, usize)]) -> Tables {
    use gametables::pipeline::kind::ShardSource;
    let mut t = Tables::empty(board);
    for &(a, b) in which {
        let shard = view.load(&format!("layer-{a}-{b}")).unwrap();
        t.insert(a, b, shard.section("values").unwrap().to_vec());
    }
    t
}
