//! Load test of `gametables serve` on a Dodgem 5×5 run: 64 concurrent
//! keep-alive clients ask 20,000 random positions (every layer, uniformly by
//! layer then index); every answer (value, depth and each move's value) is
//! checked against the run's layers decoded whole; prints latency
//! percentiles and the server's peak RSS.
//!
//! `GT_DODGEM5_RUN=DIR cargo bench --bench serve_load` (DIR: a finished
//! `gametables run jobs/dodgem-5.toml --run-dir DIR`). Optional:
//! `GT_LOAD_CLIENTS` (64), `GT_LOAD_REQUESTS` (20000), `GT_LOAD_CACHE_MB`
//! (the server's `--cache-mb`; default the server's default).

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gametables::games::dodgem::{Board, Layer, Value};
use gametables::pipeline::kinds::dodgem::{mover_value, tables_from_run};
use gametables::pipeline::merge::RunView;

fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
    let Ok(run) = std::env::var("GT_DODGEM5_RUN") else {
        eprintln!("serve_load: set GT_DODGEM5_RUN to a finished dodgem-5 run directory; skipped");
        return;
    };
    let clients = env_or("GT_LOAD_CLIENTS", 64);
    let total = env_or("GT_LOAD_REQUESTS", 20_000);
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
    let view = RunView::open(run.as_ref()).unwrap();
    let n = board.n();
    let all: Vec<(usize, usize)> = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).collect();
    let tables = tables_from_run(&view, board, &all).unwrap();

    // Random positions (xorshift, fixed seed): a layer, then an index.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let positions: Vec<_> = (0..total)
        .map(|_| {
            let (a, b) = all[(next() % all.len() as u64) as usize];
            let l = Layer::new(board, a, b);
            l.position(next() % l.len())
        })
        .collect();
    let word = |v: Value| (v.word().to_string(), v.depth().map(u64::from));

    let cpu0 = cpu_seconds(server.id());
    let client0 = cpu_seconds(std::process::id());
    let t0 = Instant::now();
    let per = total.div_ceil(clients);
    let results: Vec<(Vec<Duration>, usize)> = std::thread::scope(|s| {
        let hs: Vec<_> = positions
            .chunks(per)
            .map(|chunk| {
                let base = &base;
                let tables = &tables;
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    let mut lat = Vec::with_capacity(chunk.len());
                    let mut bad = 0;
                    for p in chunk {
                        let text = board.position_text(p);
                        let url = format!(
                            "{base}/api/v1/dodgem?n=5&position={}",
                            text.replace(' ', "%20")
                                .replace(':', "%3A")
                                .replace(',', "%2C")
                        );
                        let t = Instant::now();
                        let mut r = agent.get(&url).call().expect("request");
                        let body = r.body_mut().read_to_string().unwrap();
                        lat.push(t.elapsed());
                        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                        let want = word(tables.value(p).unwrap());
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
                            let want =
                                word(mover_value(tables.value(&board.apply(p, *m)).unwrap()));
                            ok &= e.is_some_and(|e| {
                                (
                                    e["value"].as_str().unwrap_or("").to_string(),
                                    e["depth"].as_u64(),
                                ) == want
                            });
                        }
                        if !ok {
                            bad += 1;
                            eprintln!("WRONG answer for {text}: {body}");
                        }
                    }
                    (lat, bad)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let wall = t0.elapsed();
    let server_cpu = cpu_seconds(server.id()) - cpu0;
    let client_cpu = cpu_seconds(std::process::id()) - client0;
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?")
        .to_string();
    let _ = server.kill();
    let _ = server.wait();
    let mut lat: Vec<Duration> = results.iter().flat_map(|r| r.0.iter().copied()).collect();
    let bad: usize = results.iter().map(|r| r.1).sum();
    lat.sort();
    let q = |f: f64| lat[((lat.len() as f64 * f) as usize).min(lat.len() - 1)];
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "serve_load: {} requests, {clients} clients, {:.2} s ({:.0} req/s); latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; wrong answers {bad}; server {hwm}, CPU {:.1} µs per request (clients {:.1} µs); load average {}",
        lat.len(),
        wall.as_secs_f64(),
        lat.len() as f64 / wall.as_secs_f64(),
        q(0.5).as_secs_f64() * 1e3,
        q(0.9).as_secs_f64() * 1e3,
        q(0.99).as_secs_f64() * 1e3,
        lat.last().unwrap().as_secs_f64() * 1e3,
        server_cpu * 1e6 / lat.len() as f64,
        client_cpu * 1e6 / lat.len() as f64,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
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
