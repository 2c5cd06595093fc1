//! Three-row Chomp: Brouwer's recurrence against brute force and against the
//! literal recurrence, the published facts (seed 000, Brouwer, Nivasch, OEIS),
//! split independence and resume of the `three-row` job kind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gametables::games::three_row::kind::{OEIS_TERMS, oeis_terms, plan_tiles, row_line};
use gametables::solvers::chomp::ChompBox;
use gametables::solvers::three_row::{
    RowClass, RowState, TileGeom, TileInput, TileOutput, TileRecord, classify, f_table, naive_f,
    solve_tile, solve_tile_blocked,
};

use crate::support::{gt, root_of, run_cmd, table_digests, write_job};

fn solve_blocked(q_max: u32, bq: u32, br: u32, threads: usize) -> TileOutput {
    solve_tile_blocked(
        &TileGeom::triangle(q_max),
        TileInput::default(),
        &TileRecord {
            f_upto_q: Some(300),
            sample_step: Some(7),
        },
        bq,
        br,
        threads,
    )
    .expect("whole triangle")
}

/// The P-positions of the 3×n box agree with f: (p, q, r) is P iff p = f(q, r).
fn check_against_box(n: u32) {
    let f = f_table(n);
    let b = ChompBox::new(3, n as usize).expect("3×n box");
    let p = b.solve();
    let mut checked = 0;
    for pp in 1..=n {
        for q in 0..=pp {
            for r in 0..=q {
                let is_p = p.is_p(b.rank_rows(&[pp, q, r]));
                assert_eq!(
                    is_p,
                    f[q as usize][r as usize] == pp,
                    "position ({pp}, {q}, {r})"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(
        checked as u64,
        b.len() - 1,
        "every staircase of the box but the empty one"
    );
}

#[test]
fn recurrence_agrees_with_the_box_solver_3x120() {
    // Acceptance 1: every 3-row position with p ≤ 120 (seed 000 checks the same).
    check_against_box(120);
}

#[test]
fn recurrence_agrees_with_the_box_solver_3x200() {
    check_against_box(200);
}

#[test]
fn rows_94_and_95_by_brute_force_3x200() {
    // BRIEF.md / seed 000: (135, 135, 95) is a P-position; f(q, 94) = q + 56
    // exactly for q ≥ 133 and not at q = 132 — here without the recurrence.
    let b = ChompBox::new(3, 200).expect("box");
    let p = b.solve();
    let is_p = |x: [u32; 3]| p.is_p(b.rank_rows(&x));
    assert!(is_p([135, 135, 95]));
    for q in 133..=144 {
        assert!(is_p([q + 56, q, 94]), "({}, {q}, 94)", q + 56);
    }
    assert!(!is_p([188, 132, 94]));
}

#[test]
fn fast_recurrence_equals_the_literal_one() {
    // naive_f is Brouwer's recurrence word for word (least positive integer,
    // plain sets); solve_tile only looks at values ≥ q and skips dead rows.
    assert_eq!(f_table(300), naive_f(300));
}

#[test]
fn small_values() {
    // BRIEF.md: f(0,0) = 1, f(q,0) = q+1; row 1 has only (3,1,1) and (2,2,1).
    let f = f_table(50);
    assert_eq!(f[0][0], 1);
    for (q, row) in f.iter().enumerate() {
        assert_eq!(row[0], q as u32 + 1);
    }
    let row1: Vec<u32> = (1..=50)
        .filter(|&q| f[q][1] >= q as u32)
        .map(|q| f[q][1])
        .collect();
    assert_eq!(row1, vec![3, 2]);
}

#[test]
fn any_blocking_gives_the_same_output() {
    // One block on one thread against blocks of every shape on 1–3 threads.
    let a = solve_blocked(700, 10_000, 10_000, 1);
    for (bq, br, threads) in [
        (1, 1000, 1),
        (64, 64, 1),
        (64, 64, 2),
        (100, 37, 3),
        (256, 7, 2),
        (13, 50, 2),
    ] {
        let b = solve_blocked(700, bq, br, threads);
        let what = format!("blocks {bq}×{br}, {threads} threads");
        assert_eq!(a.rows, b.rows, "rows, {what}");
        assert_eq!(a.cols, b.cols, "columns, {what}");
        assert_eq!(a.diag, b.diag, "{what}");
        assert_eq!(a.p_count, b.p_count, "{what}");
        assert_eq!(a.wins, b.wins, "{what}");
        assert_eq!(a.small_f, b.small_f, "{what}");
        assert_eq!(a.sampled_f, b.sampled_f, "{what}");
        assert_eq!(a.live_cells, b.live_cells, "{what}");
    }
}

#[test]
fn tiles_chained_like_the_pipeline_give_the_same_rows() {
    // Chain tiles exactly as the job kind does (rows from (i−1, j), columns
    // from (i, j−1), the longer diagonal), for uneven ranges.
    let q_max = 600;
    let reference = solve_blocked(q_max, 1000, 1000, 1);
    for (qr, rr) in [(97, 150), (250, 40), (601, 601), (1, 300)] {
        let mut done: BTreeMap<(u32, u32), TileOutput> = BTreeMap::new();
        let mut finals: Vec<Option<RowState>> = vec![None; q_max as usize + 1];
        for (g, _) in plan_tiles(q_max, qr, rr) {
            let mut input = TileInput::default();
            if let Some((_, t)) = done.iter().find(|((q1, r0), _)| *q1 == g.q0 && *r0 == g.r0) {
                input.rows = t.rows.clone();
                input.diag = t.diag.clone();
            }
            if g.r0 > 0 {
                let (_, t) = done
                    .iter()
                    .find(|((q1, r0), t)| {
                        *q1 == g.q1
                            && *r0 < g.r0
                            && t.cols.len() as u32 == g.q1 - g.q0
                            && *r0 + rr == g.r0
                    })
                    .expect("column input");
                input.cols = t.cols.clone();
                if t.diag.len() > input.diag.len() {
                    input.diag = t.diag.clone();
                }
            }
            let mut out = solve_tile(&g, input, &TileRecord::default()).expect("tile");
            out.diag.truncate(g.diag_out() as usize);
            if g.q1 == q_max + 1 {
                for (r, st) in g.rows_out().zip(&out.rows) {
                    finals[r as usize] = Some(st.clone());
                }
            }
            done.insert((g.q1, g.r0), out);
        }
        let finals: Vec<RowState> = finals.into_iter().map(|s| s.expect("every row")).collect();
        assert_eq!(finals, reference.rows, "ranges {qr}×{rr}");
    }
}

/// Facts of seed 000 / Brouwer / Nivasch at Q = 16,000 (≈ 15 s of CPU).
#[test]
fn seed_facts_at_q_16000() {
    let q_max = 16_000;
    let out = solve_blocked(q_max, 256, 256, 2);
    // 3×p has exactly one winning move for every p ≤ Q (Brouwer: p ≤ 130,000).
    let mut wins = vec![0u32; q_max as usize + 1];
    for w in &out.wins {
        wins[w.p as usize] += 1;
    }
    assert!(wins[1..].iter().all(|&n| n == 1));
    let classes: Vec<RowClass> = (0..=q_max)
        .map(|r| classify(r, &out.rows[r as usize], q_max))
        .collect();
    // Nivasch (seed 000): rows r ≤ 10,000: 5,858 dead, 3,939 linear,
    // periodic 141 / 7 / 54 / 2 with periods 2 / 3 / 4 / 9, no other.
    let mut count: BTreeMap<(&str, u32), u32> = BTreeMap::new();
    for c in &classes[..=10_000] {
        *count
            .entry((c.name(), c.period().unwrap_or(0)))
            .or_default() += 1;
    }
    let expect: BTreeMap<(&str, u32), u32> = [
        (("dead", 0), 5858),
        (("linear", 1), 3939),
        (("periodic", 2), 141),
        (("periodic", 3), 7),
        (("periodic", 4), 54),
        (("periodic", 9), 2),
    ]
    .into_iter()
    .collect();
    assert_eq!(count, expect);
    // Brouwer's pattern table via seed 000: r = 6541.
    assert_eq!(
        row_line(6541, &classes[6541]),
        "6541,periodic,3832,,9,9250,1 1 1 -3 0 1 1 1 -3"
    );
    // Seed 000: at Q = 16,000 the rows from 11,172 up are undecided.
    assert_eq!(
        classes.iter().position(|c| *c == RowClass::Undetermined),
        Some(11_172)
    );
    // Brouwer's 40th linear row is r = 94 (he printed 95): c = 56, q₀ = 133.
    let linear: Vec<(usize, &RowClass)> = classes
        .iter()
        .enumerate()
        .take(131)
        .filter(|(_, c)| c.name() == "linear")
        .collect();
    assert_eq!(linear.len(), 54);
    assert_eq!(linear[39], (94, &RowClass::Linear { c: 56, q0: 133 }));
    assert_eq!(classes[95], RowClass::Dead { c: 135 });
}

#[test]
fn oeis_terms_from_the_solver() {
    // A029900 = f(n, n); A029899 = P-positions with p ≤ n; A029901/2 = the
    // 3×p rectangles won in row 2 and the column; A029903–5 = linear rows.
    let q_max = 1000;
    let out = solve_blocked(q_max, 256, 256, 2);
    let get = |id: &str| oeis_terms(OEIS_TERMS, id).expect("terms").1;
    let a900 = get("A029900");
    assert_eq!(
        &out.diag[..a900.len()],
        &a900.iter().map(|&x| x as u32).collect::<Vec<_>>()[..]
    );
    let mut acc = 0u64;
    let a899: Vec<u64> = out
        .p_count
        .iter()
        .map(|&c| {
            acc += u64::from(c);
            acc
        })
        .collect();
    assert_eq!(&a899[..get("A029899").len()], &get("A029899")[..]);
    let row2: Vec<(u64, u64)> = out
        .wins
        .iter()
        .filter(|w| w.row == 2)
        .map(|w| (u64::from(w.p), u64::from(w.col)))
        .collect();
    let g: Vec<u64> = row2.iter().map(|x| x.0).collect();
    let h: Vec<u64> = row2.iter().map(|x| x.1).collect();
    assert_eq!(&g[..get("A029901").len()], &get("A029901")[..]);
    assert_eq!(&h[..get("A029902").len()], &get("A029902")[..]);
    let lin: Vec<(u64, u64, u64)> = (0..=q_max)
        .filter_map(|r| match classify(r, &out.rows[r as usize], q_max) {
            RowClass::Linear { c, q0 } => Some((u64::from(c), u64::from(q0), u64::from(r))),
            _ => None,
        })
        .collect();
    for (i, id) in ["A029903", "A029904", "A029905"].iter().enumerate() {
        let ours: Vec<u64> = lin.iter().map(|t| [t.0, t.1, t.2][i]).collect();
        assert_eq!(&ours[..get(id).len()], &get(id)[..], "{id}");
    }
}

// ---- end to end through the CLI -----------------------------------------

fn job_file(dir: &Path, name: &str, q_max: u32, qr: u32, rr: u32) -> PathBuf {
    write_job(
        &dir.join("jobs"),
        &format!("{name}.toml"),
        &format!("kind = \"three-row\"\nq_max = {q_max}\nq_range = {qr}\nr_range = {rr}\n"),
    )
}

fn run(job: &Path, run_dir: &Path, workers: u32) -> std::process::Output {
    run_cmd(job, run_dir)
        .args(["--workers", &workers.to_string()])
        .output()
        .expect("gametables runs")
}

#[test]
fn tables_do_not_depend_on_the_split_or_the_worker_count() {
    let tmp = tempfile::tempdir().expect("tempdir");
    type Digests = Vec<(String, String)>;
    let mut seen: Vec<(String, String, Digests)> = Vec::new();
    for (name, qr, rr, workers) in [
        ("a", 300, 200, 2),
        ("b", 1001, 1001, 1),
        ("c", 128, 500, 2),
        ("a", 300, 200, 1),
    ] {
        let job = job_file(tmp.path(), name, 1000, qr, rr);
        let dir = tmp.path().join(format!("run-{name}-{workers}"));
        let o = run(&job, &dir, workers);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("0 mismatch"), "{stdout}");
        seen.push((name.into(), root_of(&dir), table_digests(&dir)));
    }
    assert_eq!(seen[0].2.len(), 10, "rows, classes, f-255 and 7 b-files");
    for s in &seen[1..] {
        assert_eq!(s.2, seen[0].2, "tables of split {}", s.0);
    }
    // Same split, 1 or 2 workers: the same shards, the same root.
    assert_eq!(seen[3].1, seen[0].1);
    assert_ne!(
        seen[1].1, seen[0].1,
        "different splits have different shards"
    );
}

#[test]
fn a_killed_run_resumes_from_the_last_finished_range() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let job = job_file(tmp.path(), "k", 900, 150, 300);
    let clean = tmp.path().join("clean");
    assert!(run(&job, &clean, 2).status.success());
    let dir = tmp.path().join("killed");
    let mut child = run_cmd(&job, &dir)
        .args(["--workers", "1"])
        .env("GAMETABLES_TEST_WORKER_DELAY_MS", "400")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let shards = dir.join("shards");
    let count = || {
        std::fs::read_dir(&shards).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "shard"))
            })
            .count()
        })
    };
    let t0 = std::time::Instant::now();
    while count() < 3 && t0.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    std::thread::sleep(std::time::Duration::from_millis(600)); // an orphaned worker may finish
    let finished = count();
    assert!(finished >= 3);
    let o = run(&job, &dir, 2);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let skipped: usize = stdout
        .split(" skipped")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("skipped count");
    assert!(skipped >= 3, "{stdout}");
    assert!(skipped < 21, "the kill left work to do: {stdout}");
    assert_eq!(root_of(&dir), root_of(&clean));
}

#[test]
fn query_three_row() {
    let o = gt()
        .args("query three-row --q 255 --r 120 --q-max 2000 --json".split(' '))
        .output()
        .expect("query");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let f = f_table(255)[255][120];
    assert_eq!(v["f"], f);
    assert_eq!(v["p_position"], serde_json::json!([f, 255, 120]));
    assert_eq!(v["class"], "periodic");
    assert_eq!(v["period"], 2);
    let o = gt()
        .args("query three-row --q 140 --r 95 --q-max 500".split(' '))
        .output()
        .expect("query");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("f(140, 95) = 135"), "{text}");
    assert!(text.contains("died at column 135"), "{text}");
}

#[test]
fn sampled_cells_are_every_seventh_q_and_r_and_equal_the_literal_recurrence() {
    let out = solve_blocked(700, 64, 64, 2);
    let f = f_table(700);
    let want: Vec<(u32, u32, u32)> = (0..=700u32)
        .step_by(7)
        .flat_map(|q| (0..=q).step_by(7).map(move |r| (q, r)))
        .map(|(q, r)| (q, r, f[q as usize][r as usize]))
        .collect();
    assert_eq!(out.sampled_f, want);
    let naive = naive_f(80);
    for &(q, r, v) in out.sampled_f.iter().filter(|c| c.0 <= 80) {
        assert_eq!(v, naive[q as usize][r as usize], "f({q}, {r})");
    }
}
