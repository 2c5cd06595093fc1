//! Quixo through the generic engine: the job kind end to end, its probe,
//! its plans, and the engine's values against the independent brute-force
//! solver's (`solvers::quixo`'s tests solve 3×3 and 4×4 with a naive solver
//! that shares nothing with the layered rules; the figures below are its).

use crate::support::{
    gt, job_path, outcome, plan_cmd, reference, reference_root, root_of, run_job_ok, text,
};

/// Reads `KEY = VALUE` of the summary table.
fn summary(dir: &std::path::Path, name: &str) -> toml::Table {
    let t = std::fs::read_to_string(dir.join("tables").join(name)).unwrap();
    toml::from_str(&t).unwrap()
}

/// The summary's `reachable` (positions, wins, losses, draws).
fn reachable(s: &toml::Table) -> Vec<i64> {
    s["reachable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_integer().unwrap())
        .collect()
}

/// quixo-3: every board (3⁹ = 19,683) solved, the counts and the start's
/// value of the brute-force solver (X wins in 7 plies; no draw on 3×3),
/// the reference digests, every move of a position through `query`.
#[test]
fn quixo_3_gives_the_brute_force_values_and_the_reference_digests() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    run_job_ok(&job_path("quixo-3"), &dir);
    assert_eq!(root_of(&dir), reference_root("quixo-3"));
    let s = summary(&dir, "quixo-3-summary.toml");
    let int = |k: &str| s[k].as_integer().unwrap();
    assert_eq!(
        (int("positions"), int("wins"), int("losses"), int("draws")),
        (19_683, 12_748, 6_935, 0)
    );
    assert_eq!(s["start_value"].as_str(), Some("win in 7"));
    assert_eq!(int("layers_solved"), 30);
    // Boards (seen by the player to move) reachable from the start, and of
    // those won, lost, drawn: the plain search of `solvers::quixo`'s tests.
    let reach = reachable(&s);
    assert_eq!(reach, [16_021, 10_126, 5_895, 0]);
    // After X's b1-b3, O to move loses in 6 whatever it plays: 17 moves,
    // every one a loss in 6 for O.
    let out = gt()
        .args([
            "query",
            "quixo",
            "--n",
            "3",
            "--moves",
            "b1-b3",
            "--json",
            "--run-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["position"], "O:.X./.../...");
    assert_eq!(
        (v["value"].as_str(), v["depth"].as_u64()),
        (Some("loss"), Some(6))
    );
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 17);
    assert!(
        moves
            .iter()
            .all(|m| m["value"] == "loss" && m["depth"] == 6)
    );
    // The same answer solved in memory (no run directory).
    let mem = gt()
        .args(["query", "quixo", "--n", "3", "--moves", "b1-b3", "--json"])
        .current_dir(t.path())
        .output()
        .unwrap();
    let m: serde_json::Value = serde_json::from_slice(&mem.stdout).unwrap();
    assert_eq!(m["moves"], v["moves"]);
    assert_eq!(m["source"], "solved in memory");
}

/// Requests the probe refuses, each with a one-line reason: exit 2 for a
/// bad request, 1 for a board no run solves.
#[test]
fn quixo_queries_refuse_bad_positions_and_moves() {
    for (args, want, exit) in [
        (vec!["--n", "3", "--moves", "b2-b3"], "not a legal move", 2),
        // Regression: a move after a line ended play was played.
        (
            vec![
                "--n",
                "3",
                "--position",
                "X:OOO/XX./...",
                "--moves",
                "a1-c1",
            ],
            "`a1-c1` cannot be played: play has ended",
            2,
        ),
        // Regression: a missing run directory was "not a directory".
        (
            vec!["--n", "3", "--run-dir", "/nonexistent/run"],
            "/nonexistent/run: does not exist",
            1,
        ),
        (vec!["--n", "6"], "3×3, 4×4 and 5×5", 2),
        (
            vec!["--n", "3", "--position", "X:..../..../..../...."],
            "not 3×3",
            2,
        ),
        (
            vec!["--n", "3", "--position", "X:.../.Z./..."],
            "is not X, O, . or -",
            2,
        ),
        (
            vec!["--n", "4"],
            "run `gametables run jobs/quixo-4.toml` first",
            1,
        ),
        // Regression: 5×5 pointed at jobs/quixo-5.toml, a cluster's run
        // that a local `run` refuses.
        (
            vec!["--n", "5"],
            "run `gametables run jobs/quixo-5-20g.toml` first (`query` then finds runs/quixo-5-20g)",
            1,
        ),
    ] {
        let t = tempfile::tempdir().unwrap();
        let (code, _, err) = outcome(
            gt().arg("query")
                .arg("quixo")
                .args(&args)
                .current_dir(t.path()),
        );
        assert_eq!(code, Some(exit), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// `plan jobs/quixo-5.toml`: all 182 layers and their reachability, every
/// job's memory; the largest layers (9-7 and 9-8, two bytes a board) need
/// more than one machine here has, and the endgame plan fits in 20 GB a
/// job.
#[test]
fn quixo_5_plans_every_layer_and_the_endgame_fits() {
    let t = tempfile::tempdir().unwrap();
    let out = plan_cmd(&job_path("quixo-5"), &t.path().join("whole"))
        .output()
        .unwrap();
    let all = text(&out);
    // 182 layer jobs and 182 reachability jobs.
    assert!(all.contains("364 job(s); largest layer-9-7"), "{all}");
    assert!(all.contains("layer-9-8"), "{all}");
    let out = plan_cmd(&job_path("quixo-5-endgame"), &t.path().join("end"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let plan: toml::Table =
        toml::from_str(&std::fs::read_to_string(t.path().join("end/plan.toml")).unwrap()).unwrap();
    let jobs = plan["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 50);
    for j in jobs {
        let mem = j["memory"].as_integer().unwrap();
        assert!(mem <= 20 << 30, "{j:?}");
    }
}

/// `jobs/quixo-5-20g.toml` (`job_memory = "20G"`): every layer of the 5×5
/// board whose job fits 20 GiB and whose child layers are kept, as the very
/// jobs of the whole board's plan (same ids: `job_memory` is not a
/// parameter of the jobs), closed under moves; every endgame layer (≥ 22
/// cubes) fits, 11-10 (8.9·10⁹ boards) does not.
#[test]
fn quixo_5_20g_keeps_every_layer_that_fits_as_jobs_of_the_whole_plan() {
    let t = tempfile::tempdir().unwrap();
    let jobs_of = |job: &str, dir: &str| planned_jobs(&job_path(job), &t.path().join(dir), &[]);
    let kept = jobs_of("quixo-5-20g", "fits");
    let whole = jobs_of("quixo-5", "whole");
    let id = |j: &toml::Table| j["id"].as_str().unwrap().to_string();
    let name = |j: &toml::Table| j["name"].as_str().unwrap().to_string();
    assert_eq!(kept.len(), 79);
    let names: Vec<String> = kept.iter().map(name).collect();
    for j in &kept {
        assert!(j["memory"].as_integer().unwrap() <= 20 << 30, "{j:?}");
        // The same job in the whole board's plan.
        assert!(whole.iter().any(|w| id(w) == id(j)), "{}", name(j));
        // Its inputs (the child layers) are kept too.
        for i in j["inputs"].as_array().unwrap() {
            assert!(
                names.contains(&i["name"].as_str().unwrap().to_string()),
                "{}",
                name(j)
            );
        }
    }
    for a in 0..=25usize {
        for b in 0..=a.min(25 - a) {
            if a + b >= 22 {
                assert!(names.contains(&format!("layer-{a}-{b}")), "{a}-{b}");
            }
        }
    }
    assert!(!names.contains(&"layer-11-10".to_string()));
    assert!(names.contains(&"layer-15-5".to_string()));
}

/// The jobs of `plan JOB --run-dir DIR EXTRA…`, as written to its
/// `plan.toml`.
fn planned_jobs(job: &std::path::Path, dir: &std::path::Path, extra: &[&str]) -> Vec<toml::Table> {
    let out = plan_cmd(job, dir).args(extra).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let plan: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("plan.toml")).unwrap()).unwrap();
    plan["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j.as_table().unwrap().clone())
        .collect()
}

/// `layers = ["14-6"]` (jobs/quixo-5-14-6.toml) keeps that layer and every
/// layer its moves reach, as jobs of the whole board's plan: 21 layers, 20
/// of them quixo-5-20g's, and 14-6, which `--task-memory 20G` splits over
/// two ranks. `layers = ["14-5", "13-8"]` keeps 33. A name that is not a layer of
/// the job file, or a value that is not a list of names, is refused at its
/// key.
#[test]
fn a_layers_selection_keeps_those_layers_and_the_layers_they_reach() {
    let t = tempfile::tempdir().unwrap();
    let jobs_of = |job: &std::path::Path, dir: &str, extra: &[&str]| {
        planned_jobs(job, &t.path().join(dir), extra)
    };
    let id = |j: &toml::Table| j["id"].as_str().unwrap().to_string();
    let name = |j: &toml::Table| j["name"].as_str().unwrap().to_string();
    let kept = jobs_of(&job_path("quixo-5-14-6"), "kept", &["--task-memory", "20G"]);
    let whole = jobs_of(&job_path("quixo-5"), "whole", &[]);
    let fits = jobs_of(&job_path("quixo-5-20g"), "fits", &[]);
    assert_eq!(kept.len(), 21);
    let names: Vec<String> = kept.iter().map(name).collect();
    for j in &kept {
        assert!(whole.iter().any(|w| id(w) == id(j)), "{}", name(j));
        for i in j["inputs"].as_array().unwrap() {
            assert!(names.contains(&i["name"].as_str().unwrap().to_string()));
        }
        let split = name(j) == "layer-14-6";
        let ranks = j.get("ranks").and_then(toml::Value::as_integer);
        assert_eq!(ranks.is_some_and(|r| r > 1), split, "{}", name(j));
        assert!(j["memory"].as_integer().unwrap() <= 20 << 30, "{}", name(j));
    }
    let shared = kept
        .iter()
        .filter(|j| fits.iter().any(|f| id(f) == id(j)))
        .count();
    assert_eq!(shared, 20);
    assert!(!names.contains(&"layer-13-8".to_string()));
    assert!(!names.contains(&"layer-14-5".to_string()));
    let two = t.path().join("two.toml");
    std::fs::write(
        &two,
        "kind = \"quixo\"\nn = 5\nlayers = [\"14-5\", \"13-8\"]\n",
    )
    .unwrap();
    assert_eq!(jobs_of(&two, "two", &[]).len(), 33);
    for (body, want) in [
        ("layers = [\"14-99\"]", "no layer 14-99 among the layers"),
        ("layers = \"14-5\"", "layers is a list of layer names"),
        (
            "min_cubes = 20\nlayers = [\"13-6\"]",
            "no layer 13-6 among the layers",
        ),
    ] {
        let job = t.path().join("bad.toml");
        std::fs::write(&job, format!("kind = \"quixo\"\nn = 5\n{body}\n")).unwrap();
        let out = plan_cmd(&job, &t.path().join("bad")).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want) && err.contains("layers"), "{err}");
    }
}

/// The run of jobs/quixo-5-14-6.toml (7 Dec 2026, two-byte cells holding
/// their counters) solved again 20 layers of the quixo-5-20g run (5 Dec
/// 2026, a counter byte a board): their shards are the same bytes, deep
/// layers with two-byte values among them; its other layer, 14-6, is the
/// one beyond quixo-5-20g.
#[test]
fn quixo_5_14_6_solved_its_20_layers_of_quixo_5_20g_to_the_same_bytes() {
    let new = reference("quixo-5-14-6");
    let old = reference("quixo-5-20g");
    let mut shared = 0;
    let mut beyond = Vec::new();
    for s in &new.shards {
        match old.shards.iter().find(|o| o.name == s.name) {
            Some(o) => {
                assert_eq!((&s.id, &s.sha256), (&o.id, &o.sha256), "{}", s.name);
                shared += 1;
            }
            None => beyond.push(s.name.clone()),
        }
    }
    assert_eq!(shared, 20);
    assert_eq!(beyond, ["layer-14-6"]);
}

/// quixo-4 (ignored: about a minute): all 3¹⁶ = 43,046,721 boards, the
/// brute-force solver's counts (26,434,489 wins, 15,003,736 losses,
/// 1,608,496 draws; X wins in 21), the reference digests, `verify --full`.
#[test]
#[ignore = "solves 4x4 Quixo (about a minute on 2 cores)"]
fn quixo_4_gives_the_brute_force_values() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    run_job_ok(&job_path("quixo-4"), &dir);
    assert_eq!(root_of(&dir), reference_root("quixo-4"));
    let s = summary(&dir, "quixo-4-summary.toml");
    let int = |k: &str| s[k].as_integer().unwrap();
    assert_eq!(
        (int("positions"), int("wins"), int("losses"), int("draws")),
        (43_046_721, 26_434_489, 15_003_736, 1_608_496)
    );
    assert_eq!(s["start_value"].as_str(), Some("win in 21"));
    let reach = reachable(&s);
    assert_eq!(reach, [41_252_115, 24_978_330, 14_667_135, 1_606_650]);
    let out = gt().arg("verify").arg(&dir).arg("--full").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 bad value(s)"), "{}", text(&out));
}

/// The positions reachable from the start *with the colour to move* (a
/// board and who moves: what GamesmanOne's `analyze` counts), found by a
/// plain breadth-first search over (board, colour), valued by the engine's
/// tables (a position's value is its board's, seen by the player to move):
/// (reachable, wins, losses, draws).
fn reachable_with_colour(n: usize) -> [u64; 4] {
    use gametables::solvers::engine::{LayeredGame, Value, solve_all};
    use gametables::solvers::quixo::{Board, QuixoLayers};
    let g = QuixoLayers::new(n).unwrap();
    let values = solve_all(&g, 2).unwrap();
    let mut offset = vec![0u64; g.layer_count() + 1];
    for l in 0..g.layer_count() {
        offset[l + 1] = offset[l] + g.layer_size(l);
    }
    let index = |b: &Board, colour: u64| {
        let (l, r) = g.rank(b);
        (offset[l] + r) * 2 + colour
    };
    let mut seen = vec![0u64; (offset[g.layer_count()] * 2).div_ceil(64) as usize];
    let mut todo = vec![(Board::EMPTY, 0u64)];
    let first = index(&Board::EMPTY, 0);
    seen[(first / 64) as usize] |= 1 << (first % 64);
    let mut out = [0u64; 4];
    while let Some((b, colour)) = todo.pop() {
        let (l, r) = g.rank(&b);
        out[0] += 1;
        match Value::from_byte(values[l][r as usize]) {
            Some(Value::Win(_)) => out[1] += 1,
            Some(Value::Loss(_)) => out[2] += 1,
            _ => out[3] += 1,
        }
        if g.rules().outcome(b).is_some() {
            continue;
        }
        for (_, c) in g.rules().children(b) {
            let i = index(&c, 1 - colour);
            if seen[(i / 64) as usize] >> (i % 64) & 1 == 0 {
                seen[(i / 64) as usize] |= 1 << (i % 64);
                todo.push((c, 1 - colour));
            }
        }
    }
    out
}

/// GamesmanOne (GamesCrafters, v1.3.0, `analyze quixo 2`) counts 32,027
/// positions of 3×3 Quixo reachable from the start (board and side to
/// move), 20,247 won and 11,780 lost for the player to move, no draw
/// (docs/peers/gamesmanone.md): the same as our tables give.
#[test]
fn quixo_3_reachable_counts_agree_with_gamesmanone() {
    assert_eq!(reachable_with_colour(3), [32_027, 20_247, 11_780, 0]);
}

/// GamesmanOne on 4×4 (`analyze quixo 1`): 82,497,861 reachable positions,
/// 49,953,979 won, 29,330,646 lost, 3,213,236 drawn (ignored: solves 4×4
/// in memory, about a minute).
#[test]
#[ignore = "solves 4x4 Quixo in memory"]
fn quixo_4_reachable_counts_agree_with_gamesmanone() {
    assert_eq!(
        reachable_with_colour(4),
        [82_497_861, 49_953_979, 29_330_646, 3_213_236]
    );
}
