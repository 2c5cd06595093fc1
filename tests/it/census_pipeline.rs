//! `chomp-census` and `chomp-grundy` end to end through the CLI: plan, run
//! (split sizes, 1 and 2 workers), merge, verify, report, query.

use std::path::Path;

use crate::support::{gt, passed, write_job};

fn gametables(args: &[&str], dir: &Path) -> (bool, String) {
    passed(gt().args(args).current_dir(dir))
}

/// A new temporary directory with the job file `jobs/NAME`.
fn with_job(name: &str, body: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_job(&tmp.path().join("jobs"), name, body);
    tmp
}

#[test]
fn census_split_run_matches_oeis_and_is_deterministic() {
    // Sizes with more than 2000 positions are split (s = 26 … 30).
    let tmp = with_job(
        "census.toml",
        "kind = \"chomp-census\"\nn_max = 30\nmax_ranks_per_job = 2000\n",
    );
    let mut roots = Vec::new();
    for (dir, workers) in [("r1", "1"), ("r2", "2")] {
        let (ok, out) = gametables(
            &[
                "run",
                "jobs/census.toml",
                "--run-dir",
                dir,
                "--workers",
                workers,
                "--no-progress",
            ],
            tmp.path(),
        );
        assert!(ok, "{out}");
        assert!(out.contains("0 mismatch"), "{out}");
        let result = std::fs::read_to_string(tmp.path().join(dir).join("result.toml")).unwrap();
        roots.push(
            result
                .lines()
                .find(|l| l.starts_with("root"))
                .unwrap()
                .to_string(),
        );
        let report = std::fs::read_to_string(tmp.path().join(dir).join("report.md")).unwrap();
        assert!(report.contains("not covered"), "{report}");
    }
    assert_eq!(roots[0], roots[1], "1 and 2 workers give the same digests");
    let tables = tmp.path().join("r1/tables");
    let b70 = std::fs::read_to_string(tables.join("b112470.txt")).unwrap();
    assert!(b70.starts_with("0 0\n1 1\n2 0\n3 1\n"), "{b70}");
    assert!(b70.ends_with("\n30 220\n"));
    let b71 = std::fs::read_to_string(tables.join("b112471.txt")).unwrap();
    assert!(b71.starts_with("0 1\n1 0\n2 2\n"));
    let b72 = std::fs::read_to_string(tables.join("b112472.txt")).unwrap();
    assert!(b72.starts_with("1 0\n2 2\n") && b72.ends_with("\n30 3082\n"));
    let b73 = std::fs::read_to_string(tables.join("b112473.txt")).unwrap();
    assert!(b73.ends_with("\n30 2302\n"));
    let csv = std::fs::read_to_string(tables.join("census.csv")).unwrap();
    // OEIS A112470(30) = 220, A112472(30) = 3082, A112473(30) = 2302.
    assert!(csv.ends_with("\n30,5604,220,3082,2302\n"), "{csv}");
    let plan = std::fs::read_to_string(tmp.path().join("r1/plan.toml")).unwrap();
    assert!(plan.contains("name = \"s30-1of3\""), "size 30 is split");
}

#[test]
fn grundy_run_tables_and_query() {
    let tmp = with_job(
        "g.toml",
        "kind = \"chomp-grundy\"\nboxes = [[4, 8], [3, 20]]\n",
    );
    let (ok, out) = gametables(
        &["run", "jobs/g.toml", "--run-dir", "g", "--no-progress"],
        tmp.path(),
    );
    assert!(ok, "{out}");
    assert!(out.contains("0 mismatch"), "{out}");
    let rects = std::fs::read_to_string(tmp.path().join("g/tables/grundy-rectangles.csv")).unwrap();
    assert!(
        rects.starts_with("rows,cols,grundy\n1,1,0\n1,2,1\n"),
        "{rects}"
    );
    let three = std::fs::read_to_string(tmp.path().join("g/tables/grundy-3xn.txt")).unwrap();
    assert_eq!(three.lines().count(), 20);
    assert!(three.starts_with("1 2\n"));
    let (ok, from_run) = gametables(
        &[
            "query",
            "chomp",
            "4x7",
            "--grundy",
            "--run-dir",
            "g",
            "--json",
        ],
        tmp.path(),
    );
    assert!(ok, "{from_run}");
    let (ok, in_memory) = gametables(&["query", "chomp", "4x7", "--grundy", "--json"], tmp.path());
    assert!(ok, "{in_memory}");
    let value = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["grundy"].clone();
    assert_eq!(value(&from_run), value(&in_memory));
    let line = rects.lines().find(|l| l.starts_with("4,7,")).unwrap();
    assert_eq!(line, format!("4,7,{}", value(&in_memory)));
}
