//! Tic-tac-toe, the smallest engine game, end to end: its standard job and
//! reference digests, the published counts in its report, `query` without
//! a board parameter, `verify --full`, and job files read through serde
//! (unknown keys refused, naming the line).

use crate::support::{
    exits, gt, job_path, outcome, plan_cmd, reference_root, repo, root_of, run_job_ok, text,
    write_job,
};

/// `run jobs/tictactoe.toml`: the reference digests, a report whose two
/// claims (the start a draw, OEIS A317573 and A317574; 5,478 legal
/// positions, Mathematics Stack Exchange) match, the per-layer reachable
/// counts, and `verify --full` clean.
#[test]
fn tictactoe_matches_its_reference_and_the_published_counts() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    run_job_ok(&job_path("tictactoe"), &dir);
    assert_eq!(root_of(&dir), reference_root("tictactoe"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("2 claims: 2 match, 0 mismatch"), "{report}");
    assert!(report.contains("| 5478 | 5478 | match |"), "{report}");
    let csv = std::fs::read_to_string(dir.join("tables/tictactoe-3x3-layers.csv")).unwrap();
    let reachable: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(7).unwrap().parse().unwrap())
        .collect();
    // Layers 9 … 0 (solving order); they sum to 5,478.
    assert_eq!(reachable, [78, 390, 1140, 1520, 1260, 756, 252, 72, 9, 1]);
    let out = text(&gt().arg("verify").arg(&dir).arg("--full").output().unwrap());
    assert!(out.contains("0 bad value(s)"), "{out}");
    assert!(out.contains("6,046 of 6,046"), "{out}");
}

/// `query tictactoe` takes no board: the start's value, a winning reply
/// found by the engine, and the board parameter refused as unknown.
#[test]
fn tictactoe_query_needs_no_board() {
    let t = tempfile::tempdir().unwrap();
    let q = |args: &[&str]| {
        text(
            &gt()
                .arg("query")
                .arg("tictactoe")
                .args(args)
                .current_dir(t.path())
                .output()
                .unwrap(),
        )
    };
    let out = q(&[]);
    assert!(out.contains("value for X (to move): draw"), "{out}");
    // X on the centre, O on an edge: X wins (in 5 plies).
    let out = q(&["--moves", "b2 b1"]);
    assert!(out.contains("value for X (to move): win in 5"), "{out}");
    let out = q(&["--position", "XX./OO./..."]);
    assert!(out.contains("c3         win in 1"), "{out}");
    let (code, _, err) = outcome(
        gt().args(["query", "tictactoe", "--n", "3"])
            .current_dir(t.path()),
    );
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = outcome(
        gt().args(["query", "tictactoe", "--position", "XXX/.../..."])
            .current_dir(t.path()),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("3 X and 0 O"), "{err}");
}

/// Engine job files are read through serde: a key the game does not know
/// is refused at its line, the messages name the key and what is wanted,
/// and a quixo job file's parameters (so its job ids) are as before.
#[test]
fn engine_job_files_refuse_unknown_keys_at_their_line() {
    let t = tempfile::tempdir().unwrap();
    for (body, want) in [
        ("kind = \"tictactoe\"\nn = 3\n", ":2:1: unknown field `n`"),
        (
            "kind = \"quixo\"\nn = 3\nsize = 4\n",
            ":3:1: unknown field `size`, expected `n` or `min_cubes`",
        ),
        (
            "kind = \"quixo\"\nn = 7\n",
            "n = 7: Quixo boards here are 3×3, 4×4 and 5×5",
        ),
        ("kind = \"quixo\"\nmin_cubes = 2\n", "missing field `n`"),
        (
            "kind = \"quixo\"\nn = 3\nmin_cubes = 10\n",
            ":3:1: min_cubes = 10 is not a whole number from 0 to the 9 cells",
        ),
    ] {
        let j = write_job(t.path(), "j.toml", body);
        let out = exits(gt().arg("plan").arg(&j), 1);
        assert!(out.contains(want), "{body}: {out}");
    }
    // The plan of jobs/quixo-3.toml names the reference's jobs.
    let dir = t.path().join("plan");
    let out = text(&plan_cmd(&job_path("quixo-3"), &dir).output().unwrap());
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(repo().join("manifests/quixo-3.toml")).unwrap())
            .unwrap();
    let shards = manifest["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 60);
    for s in shards {
        let id = s["id"].as_str().unwrap();
        let name = s["name"].as_str().unwrap();
        assert!(
            out.contains(&format!("{}  {name} ", &id[..12])),
            "{name}: {out}"
        );
    }
}

/// Regression (a tester's find): moves went on after a line ended play,
/// on the command line and through the API's probe; now the first move
/// after the end is refused, naming it and why play ended.
#[test]
fn no_move_is_played_after_the_end() {
    let t = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec!["--position", "XX./OO./...", "--moves", "c3 c2"],
            "`c2` cannot be played: play has ended in XXX/OO./... (game over: X has three in a row: O has lost)",
        ),
        (
            vec!["--moves", "a1 b1 a2 b2 a3 c3"],
            "`c3` cannot be played: play has ended",
        ),
        (
            vec!["--position", "XOX/XOO/OXX", "--moves", "a1"],
            "the board is full without a line: a draw",
        ),
    ] {
        let (code, _, err) = outcome(
            gt().arg("query")
                .arg("tictactoe")
                .args(&args)
                .current_dir(t.path()),
        );
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // The ended position itself is answered.
    let out = text(
        &gt()
            .args(["query", "tictactoe", "--moves", "a1 b1 a2 b2 a3"])
            .current_dir(t.path())
            .output()
            .unwrap(),
    );
    assert!(out.contains("O has lost"), "{out}");
}
