//! One request must never take the server down (issue 27): hostile and
//! careless requests to `serve` and `query`, each refused at once (or
//! answered) within its bounds; abandoned requests and signals stop the
//! work.

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{EXE, KillOnDrop, job_path, run_job_ok, run_text, show};

/// Address space of the processes under `ulimit -v` here (KiB): 2 GiB.
const ULIMIT_KIB: u64 = 2 << 20;

/// Forty 7s: every move removes 1 to 40 tokens, splitting the heap or not.
fn long_code() -> String {
    format!("0.{}", "7".repeat(40))
}

/// `gametables ARGS` under `ulimit -v` 2 GiB: its output and how long it took.
fn limited(args: &[&str]) -> (Output, Duration) {
    let t0 = Instant::now();
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ULIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(EXE)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o, t0.elapsed())
}

/// Small runs of each probe's kinds: Chomp boxes and Grundy values, a
/// three-row run, Kayles, Dodgem 3×3.
fn small_runs(root: &Path) -> Vec<PathBuf> {
    let boxes = run_text(root, "boxes", "kind = \"chomp-boxes\"\nboxes = [[5, 7]]\n");
    let grundy = run_text(
        root,
        "grundy",
        "kind = \"chomp-grundy\"\nboxes = [[3, 12]]\n",
    );
    let tr = run_text(
        root,
        "tr",
        "kind = \"three-row\"\nq_max = 299\nq_range = 100\nr_range = 75\n",
    );
    let kayles = run_text(
        root,
        "kayles",
        "kind = \"octal\"\ncode = \"0.77\"\nn_max = 3000\n",
    );
    let d3 = root.join("d3");
    run_job_ok(&job_path("dodgem-3"), &d3);
    vec![boxes, grundy, tr, kayles, d3]
}

/// A server started as `gametables serve DIRS ARGS --bind 127.0.0.1:0`,
/// under `ulimit -v` 2 GiB when `limit`; its address (`host:port`).
fn start(dirs: &[PathBuf], args: &[&str], limit: bool) -> (KillOnDrop, String) {
    let mut cmd = if limit {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("ulimit -v {ULIMIT_KIB} && exec \"$0\" \"$@\""))
            .arg(EXE);
        c
    } else {
        Command::new(EXE)
    };
    let mut child: Child = cmd
        .arg("serve")
        .args(dirs)
        .args(args)
        .args(["--bind", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let site = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .trim_end_matches('/')
        .to_string();
    (KillOnDrop(child), site)
}

/// One raw HTTP/1.1 request (`target` as sent, any bytes) with extra
/// header lines: the status, the body and how long it took.
fn raw(site: &str, target: &[u8], headers: &str) -> (u16, String, Duration) {
    let t0 = Instant::now();
    let mut s = TcpStream::connect(site).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = b"GET ".to_vec();
    req.extend_from_slice(target);
    req.extend_from_slice(
        format!(" HTTP/1.1\r\nHost: {site}\r\nConnection: close\r\n{headers}\r\n").as_bytes(),
    );
    // The server may answer (and close) before reading all of a huge head.
    let _ = s.write_all(&req);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_string());
    (status, body, t0.elapsed())
}

fn get(site: &str, target: &str) -> (u16, String, Duration) {
    raw(site, target.as_bytes(), "")
}

/// An error answer: its body is the API's JSON error with the same status.
fn assert_json_error(what: &str, status: u16, body: &str) {
    let v: serde_json::Value = serde_json::from_str(body).unwrap_or_else(|e| {
        panic!("{what}: {status} with a body that is not JSON ({e}): {body:?}")
    });
    assert_eq!(v["status"], status, "{what}: {body}");
    assert!(
        v["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: {body}"
    );
}

/// CPU time (user + system, clock ticks) of process `pid` so far.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which ends with the last ')').
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// A deterministic generator of test requests (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// A number of up to `digits` decimal digits, biased to huge ones.
    fn huge(&mut self, digits: u32) -> u64 {
        let d = 1 + self.below(u64::from(digits)) as u32;
        self.below(10u64.saturating_pow(d))
    }
}

/// One random request of the hostile families: huge sizes, long codes,
/// long URLs, bad routes and paths.
fn random_request(rng: &mut Rng) -> Vec<u8> {
    let r = match rng.below(8) {
        0 => format!("/api/v1/chomp?rect={}x{}", rng.huge(5), rng.huge(10)),
        1 => format!(
            "/api/v1/chomp?position={},{},{}&grundy={}",
            rng.huge(10),
            rng.huge(10),
            rng.huge(3),
            rng.below(2)
        ),
        2 => format!("/api/v1/three-row?q={}&r={}", rng.huge(9), rng.huge(9)),
        3 => {
            let len = 1 + rng.below(56) as usize;
            let digits: String = (0..len)
                .map(|_| char::from(b'0' + rng.below(8) as u8))
                .collect();
            format!("/api/v1/octal?code=0.{digits}&n={}", rng.huge(8))
        }
        4 => format!(
            "/api/v1/dodgem?n={}&position={}",
            rng.huge(3),
            "b".repeat(rng.below(50) as usize)
        ),
        5 => format!(
            "/api/v1/chomp?rect={}",
            "9".repeat(1000 + rng.below(200_000) as usize)
        ),
        6 => format!("/{}/{}", rng.next(), "x".repeat(rng.below(100) as usize)),
        _ => format!("/plots/{}/{}.png", rng.huge(20) as i64 - 5, rng.next()),
    };
    r.into_bytes()
}

/// Acceptance 1 of issue 27: `serve` under `ulimit -v` 2 GiB over the
/// standard runs gets each hostile request of the issue and 50 random ones
/// of the same families; it is alive afterwards and answers a normal
/// request in under 50 ms, every error body is the API's JSON, and no
/// request took more than the time limit given (2 s) and a margin.
#[test]
fn serve_under_ulimit_survives_hostile_requests() {
    let t = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for j in [
        "chomp-boxes",
        "chomp-grundy",
        "three-row-16000",
        "octal-kayles",
        "dodgem-3",
    ] {
        let d = t.path().join(j);
        run_job_ok(&job_path(j), &d);
        dirs.push(d);
    }
    let limit = Duration::from_secs(2);
    let (mut server, site) = start(&dirs, &["--time-limit", "2"], true);
    let code = long_code();
    let mut requests: Vec<Vec<u8>> = [
        "/api/v1/chomp?rect=1x1000000000".to_string(),
        "/api/v1/chomp?rect=1x100000000".to_string(),
        "/api/v1/chomp?rect=11x3&grundy=1".to_string(),
        "/api/v1/three-row?q=100000000&r=1".to_string(),
        "/api/v1/three-row?q=100000000&r=0".to_string(),
        "/api/v1/three-row?q=100000&r=100000".to_string(),
        format!("/api/v1/octal?code={code}&n=10"),
        format!("/api/v1/octal?code={code}&n=10&period=1"),
        format!("/api/v1/octal?code=0.{}&n=300", "7".repeat(56)),
        "/plots/-1/x.png".to_string(),
        "/plots/0/..%2F..%2Fetc%2Fpasswd".to_string(),
        "/no/such/route".to_string(),
        format!("/api/v1/chomp?rect={}", "1".repeat(20_000)),
        format!("/api/v1/chomp?rect={}", "1".repeat(1_000_000)),
        "/api/v1/chomp?rect=%FF%FE".to_string(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    requests.push(b"/\x01bad".to_vec());
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..50 {
        requests.push(random_request(&mut rng));
    }
    let mut slowest = Duration::ZERO;
    for (k, target) in requests.iter().enumerate() {
        let shown = String::from_utf8_lossy(&target[..target.len().min(120)]).to_string();
        let (status, body, took) = raw(&site, target, "");
        slowest = slowest.max(took);
        assert!(
            took < limit + Duration::from_millis(1500),
            "request {k} {shown}: {took:?}"
        );
        if status >= 400 {
            assert_json_error(&shown, status, &body);
        } else {
            serde_json::from_str::<serde_json::Value>(&body)
                .unwrap_or_else(|e| panic!("{shown}: {e}: {body}"));
        }
        assert!(
            server.0.try_wait().unwrap().is_none(),
            "the server died after request {k} {shown}"
        );
    }
    // Headers far over the limits, ours and hyper's.
    for n in [20_000, 1_000_000] {
        let (status, body, _) = raw(&site, b"/", &format!("X-Big: {}\r\n", "a".repeat(n)));
        assert_eq!(status, 431, "{body}");
        assert_json_error("big header", status, &body);
    }
    // A POST, and a malformed request line.
    let mut s = TcpStream::connect(&site).unwrap();
    s.write_all(
        b"POST /api/v1/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 405"), "{out}");
    assert_json_error("POST", 405, out.split_once("\r\n\r\n").unwrap().1);
    // Alive, and a normal request is quick.
    assert!(server.0.try_wait().unwrap().is_none());
    let (status, body, _) = get(&site, "/api/v1/chomp?rect=4x7");
    assert_eq!(status, 200, "{body}");
    let took = (0..5)
        .map(|_| get(&site, "/api/v1/chomp?rect=4x7").2)
        .min()
        .unwrap();
    assert!(took < Duration::from_millis(50), "{took:?}");
    eprintln!("slowest hostile request: {slowest:?}; a normal one afterwards: {took:?}");
}

/// Acceptance 3 of issue 27: `query` with each hostile input of the issue,
/// under `ulimit -v` 2 GiB, exits 1 or 2 with a one-line reason in under
/// 2 s, or answers right.
#[test]
fn hostile_queries_answer_or_refuse_at_once() {
    let t = tempfile::tempdir().unwrap();
    let runs = small_runs(t.path());
    let (boxes, grundy, kayles) = (
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
        runs[3].to_str().unwrap(),
    );
    let code = long_code();
    let refused: &[(&[&str], &str)] = &[
        (
            &["query", "chomp", "1x1000000000", "--run-dir", boxes],
            "covers 1x1000000000 (nor its transpose)",
        ),
        (
            &[
                "query",
                "chomp",
                "1x1000000000",
                "--grundy",
                "--run-dir",
                grundy,
            ],
            "covers 1x1000000000 (nor its transpose)",
        ),
        (
            &["query", "three-row", "--q", "100000000", "--r", "1"],
            "needs about 11.3 GiB",
        ),
        (
            &["query", "three-row", "--q", "100000000", "--r", "0"],
            "needs about 11.2 GiB",
        ),
        (
            &["query", "three-row", "--q", "100000", "--r", "100000"],
            "needs 5000150001 values computed in memory, more than the 300000000 allowed",
        ),
        (
            &["query", "octal", "0.77", "--n", "4000", "--run-dir", kayles],
            "has n ≤ 3000 only",
        ),
        (
            &["query", "octal", "0.07", "--run-dir", kayles],
            "a run of the octal game 0.77, not 0.07",
        ),
        (
            &[
                "query",
                "three-row",
                "--q",
                "10",
                "--r",
                "1",
                "--run-dir",
                "/etc/passwd",
            ],
            "/etc/passwd: not a directory",
        ),
    ];
    for (args, needle) in refused {
        let (o, took) = limited(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {}",
            show(&o)
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {}", show(&o));
        assert!(
            err.contains(needle),
            "{args:?}: `{needle}` not in {}",
            show(&o)
        );
        assert!(took < Duration::from_secs(2), "{args:?}: {took:?}");
    }
    // Answered right, at once.
    let answered: &[(&[&str], &str)] = &[
        (
            &["query", "chomp", "11x3", "--grundy", "--run-dir", grundy],
            "Grundy value 24",
        ),
        (
            &["query", "octal", &code, "--n", "10"],
            "G(0..=10) = 0 1 2 3 4 5 6 7 8 9 10",
        ),
    ];
    for (args, needle) in answered {
        let (o, took) = limited(args);
        assert!(o.status.success(), "{args:?}: {}", show(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(needle),
            "{args:?}: {}",
            show(&o)
        );
        assert!(took < Duration::from_secs(2), "{args:?}: {took:?}");
    }
}

/// Acceptance 2 of issue 27: three requests abandoned by their clients
/// during long work leave the server idle within 2 s (their computations
/// stop), and SIGINT or SIGTERM during work stops the server within 2 s.
#[test]
fn abandoned_requests_stop_and_signals_stop_the_server() {
    let t = tempfile::tempdir().unwrap();
    let runs = small_runs(t.path());
    let code = long_code();
    // Long work allowed: a budget and a time far above what is asked.
    let args = ["--max-work", "100000000000", "--time-limit", "600"];
    let (server, site) = start(&runs, &args, false);
    let pid = server.0.id();
    let long = [
        format!("/api/v1/octal?code={code}&n=10&period=1"),
        // Row 299 is in the run's table; f to column 3·10⁶ is computed
        // (a row past the table is refused before computing, issue 44).
        "/api/v1/three-row?q=3000000&r=299".to_string(),
        format!("/api/v1/octal?code={code}&n=20000"),
    ];
    let mut clients = Vec::new();
    for target in &long {
        let mut s = TcpStream::connect(&site).unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        clients.push(s);
    }
    // Working (alone on the machine about two cores' worth; the whole
    // suite's other tests share the cores, so only a fifth is asked here).
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    let busy = cpu_ticks(pid) - before;
    assert!(busy >= 20, "not working: {busy} ticks in 1 s");
    drop(clients);
    std::thread::sleep(Duration::from_secs(2));
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    let idle = cpu_ticks(pid) - before;
    assert!(
        idle <= 5,
        "still working 2 s after the clients left: {idle} ticks in 1 s"
    );
    // Still serving.
    assert_eq!(get(&site, "/api/v1/chomp?rect=4x7").0, 200);
    drop(server);

    for signal in [libc::SIGINT, libc::SIGTERM] {
        let (mut server, site) = start(&runs, &args, false);
        let mut s = TcpStream::connect(&site).unwrap();
        s.write_all(
            format!("GET /api/v1/octal?code={code}&n=10&period=1 HTTP/1.1\r\nHost: x\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        let t0 = Instant::now();
        // SAFETY: a plain kill(2) of our own child.
        assert_eq!(unsafe { libc::kill(server.0.id() as i32, signal) }, 0);
        let status = loop {
            if let Some(s) = server.0.try_wait().unwrap() {
                break s;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(2),
                "signal {signal}: still running after 2 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success(), "signal {signal}: {status:?}");
        // The request in flight was answered: stopped (503, JSON).
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 503"), "signal {signal}: {out}");
        assert_json_error("stopped", 503, out.split_once("\r\n\r\n").unwrap().1);
    }
}

/// A request over the time limit is stopped and answered 503 (JSON) at
/// the limit, and the server is idle again.
#[test]
fn time_limit_stops_a_request() {
    let t = tempfile::tempdir().unwrap();
    let runs = small_runs(t.path());
    let (server, site) = start(&runs, &["--time-limit", "1"], false);
    let code = long_code();
    let (status, body, took) = get(&site, &format!("/api/v1/octal?code={code}&n=10&period=1"));
    assert_eq!(status, 503, "{body}");
    assert_json_error("time limit", status, &body);
    // In the API's words: the server's limit, not the CLI's flag.
    assert!(
        body.contains("time limit") && !body.contains("--time-limit"),
        "{body}"
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_millis(1800),
        "{took:?}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let pid = server.0.id();
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(1));
    assert!(cpu_ticks(pid) - before <= 5, "still working after the 503");
}

/// The in-memory solve's cell count in closed form equals the count
/// column by column.
#[test]
fn three_row_solve_cells_in_closed_form() {
    use gametables::games::three_row::probe::solve_cells;
    use gametables::solvers::three_row::TileGeom;
    for q_last in [0, 1, 2, 5, 99, 300] {
        for rows in [1, 2, 3, 50, 301, 400] {
            let g = TileGeom {
                q0: 0,
                q1: q_last + 1,
                r0: 0,
                r1: rows,
                q_max: q_last,
            };
            assert_eq!(solve_cells(q_last, rows), g.cells(), "{q_last} {rows}");
        }
    }
    assert_eq!(solve_cells(100_000_000, 2), 2 * 100_000_001 - 1);
}

/// The three-row query's memory estimate holds for every shape of (q, r)
/// (issue 27: it said 96 MiB for q = 10⁸, r = 1, which needs 12 GB):
/// measured peaks (resident) of in-memory solves are below the estimate,
/// and the estimate at most three times the peak plus the process's
/// 48 MiB. Measures children, so it runs in a process of its own.
#[test]
fn three_row_memory_estimate_holds_for_every_shape() {
    use gametables::games::three_row::probe::solve_memory;
    if !crate::support::in_own_process("hostile::three_row_memory_estimate_holds_for_every_shape") {
        return;
    }
    for (q, r) in [
        (2_000_000, 0),
        (2_000_000, 1),
        (1_000_000, 100),
        (20_000, 3_000),
        (30_000, 8_000),
        (200_000, 1_000),
    ] {
        let (o, ru) = crate::support::output_with_rusage(
            std::process::Command::new(EXE)
                .args([
                    "query",
                    "three-row",
                    "--q",
                    &q.to_string(),
                    "--r",
                    &r.to_string(),
                ])
                .args(["--q-max", &q.to_string(), "--memory", "8G"])
                .args(["--max-work", "1000000000"]),
        );
        assert!(o.status.success(), "{q} {r}: {}", show(&o));
        let peak = ru.ru_maxrss as u64 * 1024;
        let est = solve_memory(q, r + 1);
        eprintln!("q = {q}, r = {r}: peak {peak}, estimate {est}");
        assert!(
            peak <= est,
            "q = {q}, r = {r}: peak {peak} > estimate {est}"
        );
        assert!(
            est <= 3 * peak + (48 << 20),
            "q = {q}, r = {r}: estimate {est} far above the peak {peak}"
        );
    }
}

/// The CPU seconds `plan` estimates for `job` (a path or job file text).
fn planned_cpu(dir: &Path, name: &str, text: Option<&str>) -> f64 {
    let job = match text {
        Some(t) => crate::support::write_job(dir, &format!("{name}.toml"), t),
        None => job_path(name),
    };
    let o = crate::support::ok(&mut crate::support::plan_cmd(
        &job,
        &dir.join(format!("plan-{name}")),
    ));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let cpu = out
        .split("CPU ≈ ")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"))
        .split([';', '(', '\n'])
        .next()
        .unwrap()
        .trim()
        .to_string();
    if cpu == "under 1 s" {
        return 0.5;
    }
    let (v, unit) = cpu.split_once(' ').unwrap();
    let v: f64 = v.parse().unwrap_or_else(|_| panic!("{cpu}"));
    match unit {
        "s" => v,
        "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => panic!("{cpu}"),
    }
}

/// Issue 27: `plan`'s CPU estimates hold within 3× of the CPU the runs
/// took (measured with `/usr/bin/time`, BENCHMARKS.md "Estimates against
/// measured runs"): an octal job of forty 7s to 20,000 said "under 1 s"
/// and ran 64 s here (130 s in the issue); Dawson's Kayles to 2²⁰ said
/// "under 1 s" and ran 6.9 s; three-row-50000 said "under 1 s" and ran
/// 49 s. The estimates are deterministic (work counted, never timed), so
/// the bands below are fixed.
#[test]
fn plan_cpu_estimates_are_within_three_times_the_measured_runs() {
    let t = tempfile::tempdir().unwrap();
    let forty = format!(
        "kind = \"octal\"\ncode = \"{}\"\nn_max = 20000\n",
        long_code()
    );
    for (name, text, measured) in [
        ("octal-40x7-20000", Some(forty.as_str()), 63.9),
        ("octal-dawson", None, 6.9),
        ("three-row-50000", None, 49.3),
        ("three-row-16000", None, 3.7),
        ("chomp-grundy", None, 2.75),
        ("dodgem-5", None, 35.3),
    ] {
        let est = planned_cpu(t.path(), name, text);
        assert!(
            est <= 3.0 * measured && est >= measured / 3.0,
            "{name}: estimated {est} s, measured {measured} s"
        );
    }
}
