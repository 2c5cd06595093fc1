//! Probes read single blocks: a byte flipped inside one block of a shard
//! fails exactly the lookups that need that block, with an error naming the
//! job, the shard file and the block; lookups elsewhere still answer, and
//! `verify` names the shard.

use gametables::games::chomp::kind::boxes::winning_moves_from_run;
use gametables::games::chomp::probe::{ChompProbe, ChompRequest};
use gametables::games::dodgem::Dodgem;
use gametables::games::engine::probe::{EngineProbe, EngineRequest};
use gametables::solvers::chomp::grundy::grundy_values;
use gametables::solvers::chomp::{ChompBox, Staircase};
use gametables::solvers::dodgem::{Board, Layer, Position, from_desjardins};

type DodgemProbe = EngineProbe<Dodgem>;
use gametables::games::impartial::probe::octal::{OctalProbe, OctalRequest};
use gametables::games::three_row::probe::{ThreeRowProbe, ThreeRowRequest};
use gametables::pipeline::RunView;

use crate::support::{gt, job_path, outcome, run_job, run_job_ok, serve, text, write_job};

/// `gametables ARGS`: (exit code, standard output, standard error).
fn call(args: &[&str]) -> (Option<i32>, String, String) {
    outcome(gt().args(args))
}

#[test]
fn a_damaged_block_fails_only_the_probes_that_read_it() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d3");
    let d = dir.to_str().unwrap();
    run_job_ok(&job_path("dodgem-3"), &dir);
    let start = ["query", "dodgem", "--n", "3", "--run-dir", d, "--json"];
    let small = [
        "query",
        "dodgem",
        "--n",
        "3",
        "--run-dir",
        d,
        "--position",
        "blue:a2 red:b1 to-move:blue",
        "--json",
    ];
    let (code, before, _) = call(&small);
    assert_eq!(code, Some(0));
    assert_eq!(call(&start).0, Some(0));

    // Flip one byte inside the `values` block of layer-2-2 (the start's layer).
    let id = crate::support::damage_values_block(&dir, "layer-2-2");

    let (code, _, err) = call(&start);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("layer-2-2") && err.contains(&id[..12]),
        "{err}"
    );
    assert!(err.contains("block 0") && err.contains("checksum"), "{err}");
    // In a long-lived probe (a server's) the damaged block is never cached:
    // it fails again on every read, and no answer comes from the cache.
    {
        let probe = DodgemProbe::open(&dir).unwrap();
        let req = EngineRequest {
            variant: "3".into(),
            ..EngineRequest::default()
        };
        for _ in 0..2 {
            let e = probe.answer(&req).unwrap_err().to_string();
            assert!(e.contains("layer-2-2") && e.contains("checksum"), "{e}");
            assert!(probe.answer_cached(&req).is_none());
        }
    }
    // Layer (1, 1) and the layers below it are intact: same answer as before.
    let (code, after, err) = call(&small);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(after, before);
    // verify names the shard.
    let (code, out, err) = call(&["verify", d]);
    assert_eq!(code, Some(3), "{out}{err}");
    assert!(format!("{out}{err}").contains("layer-2-2"), "{out}{err}");
}

/// A three-row job of 3 × 4 ranges.
const THREE_ROW: &str = "kind = \"three-row\"\nq_max = 299\nq_range = 100\nr_range = 75\n";
/// Kayles to 5000 in 4 ranges.
const KAYLES: &str = "kind = \"octal\"\ncode = \"0.77\"\nn_max = 5000\nranges = 4\n";

/// Runs job file text `job` into `root/NAME` and opens the run. Exit 3 is
/// accepted: a short three-row run cannot classify the rows the published
/// claims are about (its report says so), but its shards are complete.
fn run_small(root: &std::path::Path, name: &str, job: &str) -> gametables::pipeline::RunView {
    let file = write_job(root, &format!("{name}.toml"), job);
    let dir = root.join(name);
    let o = run_job(&file, &dir);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{}", text(&o));
    gametables::pipeline::RunView::open(&dir, &gametables::games::registry()).unwrap()
}

/// Chomp from blocks: every staircase of a 5×7 box (and, transposed, of a
/// 7×5 one) gets the winning bites an independent in-memory solve of the box
/// gives, and the same as decoding the whole box shard; every staircase of a
/// 4×6 Grundy box gets the value an in-memory computation gives.
#[test]
fn chomp_and_grundy_block_probes_agree_with_in_memory_solves() {
    let t = tempfile::tempdir().unwrap();
    let boxes = "kind = \"chomp-boxes\"\nboxes = [[3, 12], [5, 7]]\n";
    let boxes = run_small(t.path(), "boxes", boxes);
    let grundy = "kind = \"chomp-grundy\"\nboxes = [[4, 6]]\n";
    let grundy = run_small(t.path(), "grundy", grundy);
    let mut probe = ChompProbe::new(0);
    probe.add_run(boxes).unwrap();
    probe.grundy.add_run(grundy).unwrap();
    let whole = RunView::open(&t.path().join("boxes"), &gametables::games::registry()).unwrap();
    let b = ChompBox::new(5, 7).unwrap();
    let p = b.solve();
    let mut rows = vec![0u32; 5];
    let mut checked = 0;
    for x in 0..b.len() {
        b.unrank(x, &mut rows);
        let Ok(s) = Staircase::new(&rows) else {
            continue; // the empty board
        };
        let req = |s: &Staircase| ChompRequest {
            position: s.clone(),
            label: s.to_string(),
            is_rectangle: false,
        };
        let a = probe.answer(&req(&s)).unwrap();
        let want = b.winning_moves(&p, &s).unwrap();
        assert_eq!(a.winning_moves, want, "{s}");
        let (_, from_whole) = winning_moves_from_run(&whole, &s).unwrap().unwrap();
        assert_eq!(a.winning_moves, from_whole, "{s}");
        // The transpose (up to 7 rows of 5) is answered from the 5×7 box.
        let tr = s.transpose();
        let at = probe.answer(&req(&tr)).unwrap();
        let mut mirrored: Vec<_> = want
            .iter()
            .map(|m| gametables::solvers::chomp::Bite {
                row: m.col,
                col: m.row,
            })
            .collect();
        mirrored.sort();
        if tr.rows().len() > 3 || tr.rows()[0] > 12 {
            assert_eq!(at.winning_moves, mirrored, "{tr}");
        }
        checked += 1;
    }
    assert_eq!(checked, b.len() - 1);
    let g = ChompBox::new(4, 6).unwrap();
    let values = grundy_values(&g);
    let mut rows = vec![0u32; 4];
    for x in 1..g.len() {
        g.unrank(x, &mut rows);
        let s = Staircase::new(&rows).unwrap();
        let a = probe
            .grundy
            .answer(&ChompRequest {
                position: s.clone(),
                label: s.to_string(),
                is_rectangle: false,
            })
            .unwrap();
        assert_eq!(a.grundy, values[x as usize], "{s}");
        assert!(a.source.contains("grundy-4x6"), "{}", a.source);
    }
}

/// Three-row f from a run's tiles (3 × 4 ranges, so cells on every kind of
/// tile, its edges and corners) equals the in-memory recurrence; octal G(n)
/// from a run's range shards equals the in-memory sequence, with the run's
/// period.
#[test]
fn three_row_and_octal_run_probes_agree_with_in_memory() {
    let t = tempfile::tempdir().unwrap();
    let tr = run_small(t.path(), "tr", THREE_ROW);
    let mut from_run = ThreeRowProbe::new();
    from_run.add_run(tr).unwrap();
    let memory = ThreeRowProbe::new();
    let mut cells = Vec::new();
    for q in [
        0, 1, 2, 74, 75, 76, 99, 100, 101, 149, 150, 199, 200, 250, 298, 299,
    ] {
        for r in [
            0, 1, 37, 74, 75, 76, 99, 100, 149, 150, 151, 224, 225, 226, 298, 299,
        ] {
            if r <= q {
                cells.push((q, r));
            }
        }
    }
    for (q, r) in cells {
        let req = ThreeRowRequest {
            q,
            r,
            q_max: Some(299),
        };
        let a = from_run.answer(&req).unwrap();
        let b = memory.answer(&req).unwrap();
        assert_eq!(a.f, b.f, "f({q}, {r})");
        assert!(a.f_source.contains("tile-q"), "{}", a.f_source);
        assert_eq!(a.class_line, b.class_line, "row {r}");
    }
    // Past q_max: computed in memory.
    let a = from_run
        .answer(&ThreeRowRequest {
            q: 320,
            r: 10,
            q_max: None,
        })
        .unwrap();
    assert!(a.f_source.contains("in memory"), "{}", a.f_source);

    let oc = run_small(t.path(), "kayles", KAYLES);
    let mut probe = OctalProbe::new();
    probe.add_run(oc).unwrap();
    let memory = OctalProbe::new();
    for n in [0, 1, 80, 999, 1000, 1001, 2500, 4999, 5000] {
        let req = OctalRequest {
            code: "0.77".into(),
            n,
            period: true,
        };
        let a = probe.answer(&req).unwrap();
        let b = memory.answer(&req).unwrap();
        assert!(a.source.contains("run"), "{}", a.source);
        assert_eq!(a.values_from, (n + 1).saturating_sub(1000));
        assert_eq!(a.values, b.values[a.values_from..], "n = {n}");
        assert_eq!(a.json()["g"], b.json()["g"]);
        let (pa, pb) = (a.period.unwrap(), b.period.unwrap());
        assert_eq!((pa.period, pa.preperiod), (pb.period, pb.preperiod));
        assert_eq!((pa.period, pa.preperiod), (12, 71));
    }
    // Another code: in memory.
    let a = probe
        .answer(&OctalRequest {
            code: "0.07".into(),
            n: 50,
            period: false,
        })
        .unwrap();
    assert!(a.source.contains("in memory"), "{}", a.source);
    // n past the run of that code: refused, naming the run (issue 27: it
    // was computed in memory, silently ignoring the run given).
    let e = probe
        .answer(&OctalRequest {
            code: "0.77".into(),
            n: 6000,
            period: false,
        })
        .unwrap_err();
    assert!(
        matches!(&e, gametables::pipeline::probe::ProbeError::NotSolved(m)
            if m.contains("has n ≤ 5000 only") && m.contains("kayles")),
        "{e}"
    );
}

/// `serve` answers each game's API with exactly what `query … --json`
/// prints (Dodgem, Chomp and three-row from runs, read block by block), octal
/// G(n) from its run, and errors as JSON with 400 (bad request) and 404
/// (outside the solved tables).
#[test]
fn serve_answers_what_query_json_prints() {
    let t = tempfile::tempdir().unwrap();
    let d3 = t.path().join("d3");
    run_job_ok(&job_path("dodgem-3"), &d3);
    run_small(
        t.path(),
        "boxes",
        "kind = \"chomp-boxes\"\nboxes = [[5, 7]]\n",
    );
    run_small(t.path(), "tr", THREE_ROW);
    run_small(t.path(), "kayles", KAYLES);
    let dir = |n: &str| t.path().join(n).to_str().unwrap().to_string();
    let (_server, site) = serve(&[
        &t.path().join("d3"),
        &t.path().join("boxes"),
        &t.path().join("tr"),
        &t.path().join("kayles"),
    ]);
    let base = site.trim_end_matches('/').to_string();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let get = |path: &str| -> (u16, serde_json::Value) {
        let mut r = agent.get(format!("{base}{path}")).call().unwrap();
        let status = r.status().as_u16();
        let body = r.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&body).unwrap())
    };
    // `query ARGS… --run-dir RUN --json`, which must exit 0.
    let query = |args: &[&str], run: &str| -> serde_json::Value {
        let d = dir(run);
        let (code, out, err) = call(&[&["query"], args, &["--run-dir", &d, "--json"]].concat());
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let cases: Vec<(String, serde_json::Value)> = vec![
        (
            "/api/v1/dodgem?n=3".into(),
            query(&["dodgem", "--n", "3"], "d3"),
        ),
        (
            "/api/v1/dodgem?n=3&position=blue%3Aa2%20red%3Ab1%20to-move%3Ablue".into(),
            query(
                &[
                    "dodgem",
                    "--n",
                    "3",
                    "--position",
                    "blue:a2 red:b1 to-move:blue",
                ],
                "d3",
            ),
        ),
        (
            "/api/v1/chomp?rect=5x7".into(),
            query(&["chomp", "5x7"], "boxes"),
        ),
        (
            "/api/v1/chomp?position=7,6,3,3,1".into(),
            query(&["chomp", "--position", "7,6,3,3,1"], "boxes"),
        ),
        (
            "/api/v1/three-row?q=250&r=140".into(),
            query(&["three-row", "--q", "250", "--r", "140"], "tr"),
        ),
    ];
    // Twice: the second answer comes from cached blocks (on the server's
    // async threads, not its blocking pool) and must be the same.
    for (path, want) in cases {
        for _ in 0..2 {
            let (status, got) = get(&path);
            assert_eq!(status, 200, "{path}: {got}");
            assert_eq!(got, want, "{path}");
        }
    }
    let (status, v) = get("/api/v1/octal?code=0.77&n=4321");
    assert_eq!(status, 200, "{v}");
    let memory = gametables::games::impartial::probe::octal::OctalProbe::new()
        .answer(&gametables::games::impartial::probe::octal::OctalRequest {
            code: "0.77".into(),
            n: 4321,
            period: false,
        })
        .unwrap();
    assert_eq!(v["g"], memory.values[4321], "{v}");
    assert!(v["source"].as_str().unwrap().contains("kayles"), "{v}");
    // Errors: malformed (400), outside the solved tables (404).
    for (path, want) in [
        ("/api/v1/dodgem?n=3&position=blue%3Az9", 400),
        ("/api/v1/chomp", 400),
        ("/api/v1/chomp?rect=9x9", 404),
        ("/api/v1/dodgem?n=5", 404),
        ("/api/v1/nosuchgame", 404),
    ] {
        let (status, v) = get(path);
        assert_eq!(status, want, "{path}: {v}");
        assert_eq!(v["status"], want, "{path}: {v}");
        assert!(!v["error"].as_str().unwrap().is_empty(), "{path}: {v}");
    }
}

/// The Dodgem probe's answer from cached blocks (what `serve` answers on
/// its async threads) is `None` until the blocks it needs have been read,
/// then equal to the answer read from the shards; every answer of a 3×3
/// run equals the in-memory solve's, its JSON bytes are the printed
/// `json()` value, and each move's desJardins name is the reflection of its
/// name.
#[test]
fn dodgem_cached_answers_equal_answers_read_from_blocks() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d3");
    run_job_ok(&job_path("dodgem-3"), &dir);
    let run = DodgemProbe::open(&dir).unwrap();
    let memory = DodgemProbe::default();
    let board = Board::new(3).unwrap();
    let req = |p: Position| EngineRequest {
        variant: "3".into(),
        position: Some(board.position_text(&p)),
        ..EngineRequest::default()
    };
    // Nothing read yet: no answer from the cache, and none from memory
    // before the in-memory solve.
    let start = req(board.start());
    assert!(run.answer_cached(&start).is_none());
    assert!(memory.answer_cached(&start).is_none());
    let mut checked = 0;
    for a in 0..3 {
        for b in 0..3 {
            let layer = Layer::new(board, a, b);
            for i in 0..layer.len() {
                let r = req(layer.position(i));
                if (a, b) == (0, 0) {
                    // The board without cars is no position of play
                    // (issue 27): refused by both, from a run or memory.
                    assert!(run.answer(&r).is_err() && memory.answer(&r).is_err());
                    continue;
                }
                let read = run.answer(&r).unwrap();
                let cached = run.answer_cached(&r).expect("blocks read").unwrap();
                assert_eq!(cached, read);
                let mem = memory.answer(&r).unwrap();
                assert_eq!(
                    (&mem.position, mem.value, &mem.moves, &mem.note),
                    (&read.position, read.value, &read.moves, &read.note)
                );
                assert!(memory.answer_cached(&r).is_some());
                assert_eq!(read.json_bytes(), read.json().to_string().into_bytes());
                for m in &read.moves {
                    let dj = from_desjardins(&board, &m.name).unwrap();
                    assert_eq!(m.other, Some(("desjardins", dj)));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
    // A malformed request is refused without I/O.
    let bad = EngineRequest {
        variant: "3".into(),
        position: Some("blue:z9".into()),
        ..EngineRequest::default()
    };
    assert!(matches!(run.answer_cached(&bad), Some(Err(_))));
}

/// `serve` lists and serves only regular files of a run's `plots/`: a
/// symbolic link there (to `/etc/passwd`, say) is neither listed nor
/// served; a missing picture and an unknown route answer 404 with the API's
/// JSON error body.
#[test]
fn serve_never_follows_a_link_out_of_plots_and_answers_json_404s() {
    let t = tempfile::tempdir().unwrap();
    let d3 = t.path().join("d3");
    run_job_ok(&job_path("dodgem-3"), &d3);
    std::fs::create_dir_all(d3.join("plots")).unwrap();
    std::fs::write(d3.join("plots/real.svg"), "<svg/>").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", d3.join("plots/leak.png")).unwrap();
    let (_server, site) = serve(&[&d3]);
    let base = site.trim_end_matches('/').to_string();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let get = |path: &str| -> (u16, String) {
        let mut r = agent.get(format!("{base}{path}")).call().unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    let (status, index) = get("/api/v1/");
    assert_eq!(status, 200);
    assert!(index.contains("/plots/0/real.svg"), "{index}");
    assert!(!index.contains("leak.png"), "{index}");
    assert_eq!(get("/plots/0/real.svg"), (200, "<svg/>".to_string()));
    for path in [
        "/plots/0/leak.png",
        "/plots/0/missing.png",
        "/plots/7/real.svg",
        "/no/such/route",
    ] {
        let (status, body) = get(path);
        assert_eq!(status, 404, "{path}: {body}");
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
        assert_eq!(v["status"], 404, "{path}: {body}");
        assert!(
            v["error"].as_str().is_some_and(|e| !e.contains("root:")),
            "{path}: {body}"
        );
    }
}
