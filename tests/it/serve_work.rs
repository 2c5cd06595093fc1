//! `serve` under issue 44: lookups that read a run never wait behind
//! in-memory solves; a request whose answer cannot be served is refused
//! before anything is computed; a shard repaired by `run` is read again by
//! a running server; the API takes only the parameters a game knows, each
//! once, answers numbers as JSON numbers and says its errors in its own
//! words (no CLI flag, no server path).

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gametables::games::three_row::probe::{ThreeRowProbe, ThreeRowRequest};
use gametables::pipeline::probe::{Probe, ProbeError, Progress, Work};

use crate::support::{EXE, KillOnDrop, gt, job_path, outcome, run_job, run_job_ok, write_job};

/// Runs job text `body` into `root/NAME` (exit 0, or 3: a short
/// three-row run cannot decide the published claims; its shards and
/// tables are complete) and returns the run directory.
fn run_small(root: &Path, name: &str, body: &str) -> PathBuf {
    let job = write_job(root, &format!("{name}.toml"), body);
    let dir = root.join(name);
    let o = run_job(&job, &dir);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        crate::support::text(&o)
    );
    dir
}

/// A three-row run of rows and columns up to 299.
const THREE_ROW: &str = "kind = \"three-row\"\nq_max = 299\nq_range = 100\nr_range = 75\n";
/// Kayles to 3000.
const KAYLES: &str = "kind = \"octal\"\ncode = \"0.77\"\nn_max = 3000\n";
/// Chomp boxes 5×7.
const BOXES: &str = "kind = \"chomp-boxes\"\nboxes = [[5, 7]]\n";

/// `gametables serve DIRS ARGS --bind 127.0.0.1:0`: the server and its
/// address (`host:port`).
fn start(dirs: &[&Path], args: &[&str]) -> (KillOnDrop, String) {
    let mut child: Child = Command::new(EXE)
        .arg("serve")
        .args(dirs)
        .args(args)
        .args(["--bind", "127.0.0.1:0"])
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

/// `GET target`: status, body as JSON, and how long it took.
fn get(site: &str, target: &str) -> (u16, serde_json::Value, Duration) {
    let t0 = Instant::now();
    let mut s = TcpStream::connect(site).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(
        format!("GET {target} HTTP/1.1\r\nHost: {site}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let took = t0.elapsed();
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {out:?}"));
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let v = serde_json::from_str(body).unwrap_or_else(|e| panic!("{target}: {e}: {body:?}"));
    (status, v, took)
}

/// `gametables query ARGS --json`, which must exit 0, as JSON.
fn query_json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = outcome(gt().args(args).arg("--json"));
    assert_eq!(code, Some(0), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// Row 3: with more in-memory solves in flight than the server computes at
/// once (the issue's load: six clients asking `three-row?q=24000&r=24000`
/// of a server without a three-row run), lookups
/// from runs (octal values of a Kayles run, Chomp bites of a box run;
/// blocks not cached, so each goes off the async threads) all answer 200,
/// each within 2 s. Before, they waited for a permit the solves held (9–10
/// s, or 503 at the time limit).
#[test]
fn lookups_from_runs_do_not_wait_behind_in_memory_solves() {
    let t = tempfile::tempdir().unwrap();
    let kayles = run_small(t.path(), "kayles", KAYLES);
    let boxes = run_small(t.path(), "boxes", BOXES);
    let (server, site) = start(
        &[&kayles, &boxes],
        &["--max-work", "100000000000", "--time-limit", "120"],
    );
    // More solves than the server's cores (its computing permits), each
    // of 2.9·10⁸ cells (about 2 s of CPU).
    let solves = (gametables::pipeline::resources::cores() + 4).max(6);
    let mut clients = Vec::new();
    for _ in 0..solves {
        let target = "/api/v1/three-row?q=24000&r=24000";
        let mut s = TcpStream::connect(&site).unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .unwrap();
        clients.push(s);
    }
    // The solves have started (and hold every computing permit).
    std::thread::sleep(Duration::from_millis(700));
    let mut slowest = Duration::ZERO;
    for k in 0..24u64 {
        let target = if k % 3 == 2 {
            format!("/api/v1/chomp?position=7,{},{}", 1 + k % 7, 1 + k % 7 / 2)
        } else {
            // Different blocks of the values (4 bytes a value).
            format!("/api/v1/octal?code=0.77&n={}", 100 + k * 120)
        };
        let (status, v, took) = get(&site, &target);
        assert_eq!(status, 200, "{target}: {v}");
        slowest = slowest.max(took);
        assert!(
            took < Duration::from_secs(2),
            "{target} took {took:?} while {solves} solves ran"
        );
    }
    // Solves were still running when the lookups ended: the last answer
    // comes later, and every solve is answered (none stopped).
    let mut running = 0;
    for s in &mut clients {
        s.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        if matches!(s.peek(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock) {
            running += 1;
        }
    }
    assert!(running > 0, "every solve ended before the lookups did");
    for s in &mut clients {
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        assert!(head.starts_with(b"HTTP/1.1 200"), "{head:?}");
    }
    eprintln!(
        "slowest lookup {slowest:?}; {running} of {solves} solves still running after the lookups"
    );
    drop(clients);
    drop(server);
}

/// Row 4: `three-row?q=24000&r=24000` of a server whose three-row run
/// classifies rows up to 299 is refused (404) before f is computed: the
/// probe starts no solve (its progress stays untouched), says which rows
/// the run has, and the server answers at once. A row the run has, with a
/// column past it, is still computed and answered.
#[test]
fn three_row_outside_the_runs_rows_is_refused_before_computing() {
    let t = tempfile::tempdir().unwrap();
    let tr = run_small(t.path(), "tr", THREE_ROW);
    let probe = ThreeRowProbe::open(&tr).unwrap();
    let req = ThreeRowRequest {
        q: 24_000,
        r: 24_000,
        q_max: None,
    };
    let progress = Progress::default();
    let e = probe.answer_with(&req, &progress).unwrap_err();
    assert!(matches!(e, ProbeError::NotSolved(_)), "{e}");
    assert!(e.to_string().contains("r ≤ 299"), "{e}");
    assert_eq!(
        progress.total.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "a solve was started"
    );
    assert!(progress.what.lock().unwrap().is_empty());
    let params = |q: &str| {
        gametables::pipeline::probe::params_of(
            "three-row",
            probe.keys(),
            [("q".into(), q.into()), ("r".into(), "24000".into())],
        )
        .unwrap()
    };
    assert_eq!(probe.work_of(&params("24000")), Work::Lookup);

    let (_server, site) = start(&[&tr], &[]);
    let (status, v, took) = get(&site, "/api/v1/three-row?q=24000&r=24000");
    assert_eq!(status, 404, "{v}");
    assert!(v["error"].as_str().unwrap().contains("r ≤ 299"), "{v}");
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    // Row 100 is in the run's table; f(400, 100) is computed in memory.
    let (status, v, _) = get(&site, "/api/v1/three-row?q=400&r=100");
    assert_eq!(status, 200, "{v}");
    let memory = ThreeRowProbe::new()
        .answer(&ThreeRowRequest {
            q: 400,
            r: 100,
            q_max: Some(400),
        })
        .unwrap();
    assert_eq!(v["f"], memory.f, "{v}");
}

/// Row 8: a server answering 500 for a damaged shard answers again, with
/// the repaired values, as soon as `run` has repaired the shard (no
/// restart): the shard is reopened when its file changes. The 500 names
/// the job but not the server's path.
#[test]
fn serve_reads_a_shard_again_once_run_repaired_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d3");
    run_job_ok(&job_path("dodgem-3"), &dir);
    let d = dir.to_str().unwrap();
    let want = query_json(&["query", "dodgem", "--n", "3", "--run-dir", d]);
    crate::support::damage_values_block(&dir, "layer-2-2");
    let (_server, site) = start(&[&dir], &[]);
    for _ in 0..2 {
        let (status, v, _) = get(&site, "/api/v1/dodgem?n=3");
        assert_eq!(status, 500, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("layer-2-2") && e.contains("checksum"), "{e}");
        assert!(!e.contains(t.path().to_str().unwrap()), "{e}");
    }
    let (code, out, err) =
        outcome(crate::support::run_cmd(&job_path("dodgem-3"), &dir).args(["--workers", "1"]));
    assert_eq!(code, Some(0), "{out}{err}");
    let (status, v, _) = get(&site, "/api/v1/dodgem?n=3");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v, want);
}

/// Row 10: numbers are JSON numbers, in `query --json` and the API alike:
/// three-row's `c`, `q0`, `period`, `start` (a class without one: `null`),
/// Quixo's board `n` (in its answer's `variant` and in `GET /api/v1/`),
/// as Dodgem's `n` is; the API answers what the CLI prints.
#[test]
fn api_and_cli_json_give_numbers_as_numbers() {
    let t = tempfile::tempdir().unwrap();
    let tr = run_small(t.path(), "tr", THREE_ROW);
    let (_server, site) = start(&[&tr], &[]);
    let trd = tr.to_str().unwrap();
    let mut with_period = 0;
    for (q, r) in [
        (250, 140),
        (255, 120),
        (299, 2),
        (280, 0),
        (200, 1),
        (290, 3),
        (290, 5),
    ] {
        let (status, v, _) = get(&site, &format!("/api/v1/three-row?q={q}&r={r}"));
        assert_eq!(status, 200, "{v}");
        let cli = query_json(&[
            "query",
            "three-row",
            "--q",
            &q.to_string(),
            "--r",
            &r.to_string(),
            "--run-dir",
            trd,
        ]);
        assert_eq!(v, cli, "q = {q}, r = {r}");
        for k in ["q0", "period", "start"] {
            assert!(v[k].is_u64() || v[k].is_null(), "{k}: {v}");
        }
        assert!(v["c"].is_number() || v["c"].is_null(), "{v}");
        assert!(v["class"].is_string(), "{v}");
        if v["class"] != "undetermined" && v["class"] != "dead" {
            with_period += 1;
            assert!(v["period"].as_u64().unwrap() >= 1, "{v}");
            assert!(v["start"].is_u64(), "{v}");
            assert!(v["c"].is_number() && v["c_exact"].is_string(), "{v}");
        }
    }
    assert!(with_period > 0, "no row with a period among those asked");

    let (status, v, _) = get(&site, "/api/v1/quixo?n=3");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["variant"], 3, "{v}");
    assert_eq!(v, query_json(&["query", "quixo", "--n", "3"]));
    let (_, v, _) = get(&site, "/api/v1/dodgem?n=3");
    assert_eq!(v["variant"], 3, "{v}");
}

/// The heap games and Green Hackenbush have API routes that answer what
/// `query … --json` prints: Nim (Bouton 1901: 3,4,5 has nim-sum 2 and one
/// winning move, 3 → 1), misère Nim, Sub({1,3,4}) (Winning Ways, ch. 4:
/// G = 0,1,0,1,2,3,2, period 7) and a tree of value 3 by the colon
/// principle.
#[test]
fn nim_subtraction_and_hackenbush_api_answer_what_query_prints() {
    let (_server, site) = start(&[], &[]);
    let cases: [(&str, &[&str]); 6] = [
        ("/api/v1/nim?heaps=3,4,5", &["query", "nim", "3,4,5"]),
        (
            "/api/v1/nim?heaps=1,1,1&misere=1",
            &["query", "nim", "1,1,1", "--misere"],
        ),
        (
            "/api/v1/subtraction?set=1,3,4&heaps=10,15,20",
            &[
                "query",
                "subtraction",
                "--set",
                "1,3,4",
                "--heaps",
                "10,15,20",
            ],
        ),
        (
            "/api/v1/hackenbush?tree=0,1,1,0,4",
            &["query", "hackenbush", "0,1,1,0,4"],
        ),
        ("/api/v1/hackenbush?tree=-", &["query", "hackenbush", "-"]),
        (
            "/api/v1/octal?code=0.77&heaps=5,7",
            &["query", "octal", "0.77", "--heaps", "5,7"],
        ),
    ];
    for (url, cli) in cases {
        let (status, v, _) = get(&site, url);
        assert_eq!(status, 200, "{url}: {v}");
        assert_eq!(v, query_json(cli), "{url}");
    }
    let (_, v, _) = get(&site, "/api/v1/nim?heaps=3,4,5");
    assert_eq!(v["nim_sum"], 2);
    assert_eq!(v["winning_moves"][0]["from"], 3);
    assert_eq!(v["winning_moves"][0]["to"], 1);
    let (_, v, _) = get(&site, "/api/v1/subtraction?set=1,3,4&n=6");
    assert_eq!(v["values"], serde_json::json!([0, 1, 0, 1, 2, 3, 2]));
    assert_eq!(v["period"]["period"], 7);
    let (_, v, _) = get(&site, "/api/v1/hackenbush?tree=0,1,1,0,4");
    assert_eq!(v["grundy"], 3);
    assert_eq!(v["moves"].as_array().unwrap().len(), 5);
    // Kayles (OEIS A002186): G(5) = 4, G(7) = 2, so 5 + 7 has value 6.
    let (_, v, _) = get(&site, "/api/v1/octal?code=0.77&heaps=5,7");
    assert_eq!(v["grundy"], 6);
    for bad in [
        "/api/v1/hackenbush?tree=0,5",
        "/api/v1/hackenbush?tree=",
        "/api/v1/nim?heaps=3,x",
        "/api/v1/subtraction?set=1,3&n=99999999",
    ] {
        let (status, v, _) = get(&site, bad);
        assert_eq!(status, 400, "{bad}: {v}");
    }
    let (_, v, _) = get(&site, "/api/v1/");
    for g in [
        "nim",
        "subtraction",
        "hackenbush",
        "octal",
        "chomp",
        "dodgem",
        "quixo",
        "tictactoe",
        "three-row",
    ] {
        assert!(v["games"][g]["view"].is_string(), "{g}: {v}");
        assert!(v["games"][g]["title"].is_string(), "{g}: {v}");
    }
}

/// Row 10: a parameter given twice (`n=3&n=4`, which answered 4×4) and a
/// parameter the game does not know are refused (400), naming it (and the
/// game's parameters).
#[test]
fn api_refuses_repeated_and_unknown_parameters() {
    let (_server, site) = start(&[], &[]);
    let (status, v, _) = get(&site, "/api/v1/dodgem?n=3&n=4");
    assert_eq!(status, 400, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("`n` given twice"), "{e}");
    let (status, v, _) = get(&site, "/api/v1/quixo?n=3&position=&n=3");
    assert_eq!(status, 400, "{v}");
    let (status, v, _) = get(&site, "/api/v1/three-row?q=5&r=2&qmax=9");
    assert_eq!(status, 400, "{v}");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("`qmax`") && e.contains("`q`, `r`, `q_max`"),
        "{e}"
    );
    let (status, v, _) = get(&site, "/api/v1/chomp?rect=3x4&hints=1");
    assert_eq!(status, 400, "{v}");
    assert!(v["error"].as_str().unwrap().contains("`hints`"), "{v}");
    // Known parameters are taken (this server solves no Chomp box: 404).
    let (status, v, _) = get(&site, "/api/v1/chomp?rect=3x4&grundy=0");
    assert_eq!(status, 404, "{v}");
    let (status, v, _) = get(&site, "/api/v1/dodgem?n=3&desjardins=0&moves=");
    assert_eq!(status, 200, "{v}");
}

/// Whether `text` quotes a command-line flag (`--word`).
fn has_flag(text: &str) -> bool {
    text.match_indices("--").any(|(i, _)| {
        text[i + 2..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase())
    })
}

/// Row 10: the API's errors are in its own words: no command-line flag
/// (`--max-work`, `--run-dir`, `--q`, `--time-limit`) and no path of the
/// server (a damaged shard's 500 included), while `query` keeps its flags.
#[test]
fn api_errors_name_no_cli_flag_and_no_server_path() {
    let t = tempfile::tempdir().unwrap();
    let tr = run_small(t.path(), "tr", THREE_ROW);
    let kayles = run_small(t.path(), "kayles", KAYLES);
    let boxes = run_small(t.path(), "boxes", BOXES);
    let d3 = t.path().join("d3");
    run_job_ok(&job_path("dodgem-3"), &d3);
    crate::support::damage_values_block(&d3, "layer-2-2");
    let (_server, site) = start(&[&tr, &kayles, &boxes, &d3], &["--max-work", "1000"]);
    let root = t.path().to_str().unwrap().to_string();
    for (target, status, says) in [
        ("/api/v1/three-row?q=3&r=5".to_string(), 400, "r=5"),
        (
            "/api/v1/three-row?q=500&r=200".to_string(),
            404,
            "work limit",
        ),
        ("/api/v1/three-row?q=500&r=400".to_string(), 404, "r ≤ 299"),
        ("/api/v1/octal?code=0.77&n=5000".to_string(), 404, "n=5000"),
        ("/api/v1/octal?code=0.137&n=5000".to_string(), 404, "0.137"),
        (
            "/api/v1/octal?code=0.137&n=50000000".to_string(),
            404,
            "n=50000000",
        ),
        ("/api/v1/chomp?rect=9x9".to_string(), 404, "boxes"),
        ("/api/v1/chomp".to_string(), 400, "rect="),
        (
            "/api/v1/dodgem?n=5".to_string(),
            404,
            "serve its run directory",
        ),
        (
            "/api/v1/quixo?n=4".to_string(),
            404,
            "serve its run directory",
        ),
        ("/api/v1/dodgem?n=3".to_string(), 500, "layer-2-2"),
    ] {
        let (got, v, _) = get(&site, &target);
        let e = v["error"].as_str().unwrap_or_default();
        assert_eq!(got, status, "{target}: {v}");
        assert!(e.contains(says), "{target}: `{says}` not in {e}");
        assert!(!has_flag(e), "{target}: a CLI flag in {e}");
        assert!(!e.contains(&root), "{target}: the server's path in {e}");
    }
    // The CLI keeps its flags.
    let (code, _, err) = outcome(gt().args(["query", "three-row", "--q", "3", "--r", "5"]));
    assert_ne!(code, Some(0));
    assert!(err.contains("--r 5"), "{err}");
}

/// [`gametables::serve::api_words`] maps each kind of CLI wording.
#[test]
fn api_words_rewrite_flags_paths_and_hints() {
    use gametables::serve::api_words;
    let runs = vec![("/srv/x/runs/d5".to_string(), "d5".to_string())];
    for (cli, api) in [
        (
            "--r 5 > --q 3: three-row positions have p ≥ q ≥ r",
            "r=5 > q=3: three-row positions have p ≥ q ≥ r",
        ),
        (
            "--q-max 16000 --r 3: computing rows 0..=3 to column 16000 in memory needs \
             5 values computed in memory, more than the 4 allowed per request here \
             (--max-work); give --q-max equal to --q, or use a run",
            "q_max=16000 r=3: computing rows 0..=3 to column 16000 in memory needs \
             5 values computed in memory, more than the 4 allowed per request here \
             (this server's work limit); give `q_max` equal to `q`, or use a run",
        ),
        (
            "give a rectangle (e.g. 8x10) or --position 10,10,9,4",
            "give a rectangle (e.g. 8x10) or position=10,10,9,4",
        ),
        (
            "no run directory for Quixo 4: run `gametables run jobs/quixo-4.toml` first \
             (`query` then finds runs/quixo-4), or pass --run-dir",
            "no run directory for Quixo 4: run `gametables run jobs/quixo-4.toml` first, \
             or serve its run directory",
        ),
        (
            "--n 9000: the run /srv/x/runs/d5 of 0.77 has n ≤ 3000 only",
            "n=9000: the run d5 of 0.77 has n ≤ 3000 only",
        ),
        ("x--y and a - b -- c", "x--y and a - b -- c"),
    ] {
        assert_eq!(api_words(cli, &runs, false), api, "{cli}");
    }
    assert_eq!(
        api_words(
            "shard of job a (b) (/srv/y/shards/c.shard): missing",
            &runs,
            true
        ),
        "shard of job a (b) (c.shard): missing"
    );
}

/// A breaker's findings on the new routes, each refused at once (400) in
/// the API's JSON: an octal sum of 200 heaps of 1,000 (its answer, every
/// move with the heaps after it, took all the memory of the server), a
/// subtraction set whose values and period search would take minutes
/// (the requests kept running after their 503 and held every lookup
/// permit), `n` or `period` with `heaps`, and a Hackenbush tree over 500
/// edges (seconds for its cuts). The server answers at once afterwards.
#[test]
fn heavy_heap_and_tree_requests_are_refused_before_they_are_computed() {
    let (_server, site) = start(&[], &[]);
    let many = vec!["1000"; 200].join(",");
    let ones = vec!["1"; 100].join(",");
    let big_set = (1..1600)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let star = vec!["0"; 501].join(",");
    for bad in [
        format!("/api/v1/octal?code=0.77&heaps={many}"),
        format!("/api/v1/octal?code=0.77&heaps={ones}"),
        "/api/v1/octal?code=0.77&heaps=600,600".to_string(),
        "/api/v1/octal?code=0.77&heaps=5&n=abc".to_string(),
        "/api/v1/octal?code=0.77&heaps=5&period=1".to_string(),
        format!("/api/v1/subtraction?set={big_set}&n=1000000"),
        format!("/api/v1/hackenbush?tree={star}"),
    ] {
        let t0 = std::time::Instant::now();
        let (status, v, _) = get(&site, &bad);
        assert_eq!(status, 400, "{}: {v}", &bad[..bad.len().min(80)]);
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(2),
            "{}",
            &bad[..60.min(bad.len())]
        );
    }
    // A set with a huge move proves no period within the values computed,
    // and says so at once (the search was quadratic in the values).
    let (status, v, _) = get(&site, "/api/v1/subtraction?set=4294967295&n=100000");
    assert_eq!(status, 200, "{v}");
    assert!(v["period"].is_null(), "{v}");
    let (status, v, _) = get(&site, "/api/v1/nim?heaps=3");
    assert_eq!(status, 200, "{v}");
}
