//! `gametables plot`: every kind that draws writes its pictures into
//! `RUN_DIR/plots/`, the same input gives the same SVG and PNG bytes (in two
//! separate processes), and the pictures stay outside the digests.

use std::path::Path;

use gametables::pipeline::result::ResultFile;

use crate::support::{gt, plan_cmd, run_job_ok, run_ok, write_job};

/// Runs a job file's text in `dir/run`, plots it twice and checks both.
fn plot_twice(dir: &Path, job: &str, stems: &[&str]) {
    let jf = write_job(dir, "job.toml", job);
    let run = dir.join("run");
    let run_s = run.to_str().unwrap();
    run_job_ok(&jf, &run);
    let before = ResultFile::load(&run.join("result.toml")).unwrap();
    let out = run_ok(&["plot", run_s]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let first: Vec<(String, Vec<u8>)> = stems
        .iter()
        .flat_map(|s| [format!("{s}.svg"), format!("{s}.png")])
        .map(|f| {
            let bytes = std::fs::read(run.join("plots").join(&f))
                .unwrap_or_else(|e| panic!("{f} not written ({e}); plot said:\n{text}"));
            (f, bytes)
        })
        .collect();
    // Every picture has content: a title in the SVG, a PNG signature.
    for (f, b) in &first {
        if f.ends_with(".svg") {
            let svg = String::from_utf8(b.clone()).unwrap();
            assert!(svg.starts_with("<svg"), "{f}");
            assert!(svg.contains("<text"), "{f} has no text");
        } else {
            assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n", "{f}");
        }
    }
    // A second process gives the same bytes.
    run_ok(&["plot", run_s]);
    for (f, b) in &first {
        let again = std::fs::read(run.join("plots").join(f)).unwrap();
        assert!(again == *b, "{f}: a second plot gave other bytes");
    }
    // Pictures are not results: the digests do not change and verify ignores them.
    run_ok(&["verify", run_s]);
    let after = ResultFile::load(&run.join("result.toml")).unwrap();
    assert_eq!(before, after);
    let listed = std::fs::read_to_string(run.join("result.toml")).unwrap();
    assert!(!listed.contains("plots/"), "result.toml lists a picture");
}

#[test]
fn three_row_plot_is_deterministic_and_outside_the_digests() {
    let d = tempfile::tempdir().unwrap();
    plot_twice(
        d.path(),
        "kind = \"three-row\"\nq_max = 900\nq_range = 301\nr_range = 301\n",
        &["three-row-f-minus-q"],
    );
}

#[test]
fn census_plot_is_deterministic_and_outside_the_digests() {
    let d = tempfile::tempdir().unwrap();
    plot_twice(
        d.path(),
        "kind = \"chomp-census\"\nn_max = 30\n",
        &["census-counts"],
    );
}

#[test]
fn dodgem_plot_is_deterministic_and_outside_the_digests() {
    let d = tempfile::tempdir().unwrap();
    plot_twice(d.path(), "kind = \"dodgem\"\nn = 3\n", &["dodgem-3-layers"]);
}

#[test]
fn octal_plot_is_deterministic_and_outside_the_digests() {
    let d = tempfile::tempdir().unwrap();
    plot_twice(
        d.path(),
        "kind = \"octal\"\ncode = \"0.77\"\nn_max = 3000\nranges = 2\n",
        &["octal-grundy"],
    );
}

#[test]
fn plot_of_an_unmerged_run_says_so() {
    let d = tempfile::tempdir().unwrap();
    let jf = write_job(d.path(), "job.toml", "kind = \"dodgem\"\nn = 3\n");
    let run = d.path().join("run");
    crate::support::ok(&mut plan_cmd(&jf, &run));
    let out = gt().args(["plot", run.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not merged yet"), "{err}");
}

/// Regression (issue 27): the census chart drew its lines across missing
/// (zero) counts on its log scale. A zero ends a line; the next positive
/// count starts another.
#[test]
fn census_lines_stop_at_zero_counts() {
    use gametables::games::chomp::picture::{CensusRow, positive_runs};
    let row = |s: u32, p: u64| CensusRow {
        squares: s,
        positions: p.max(1),
        p,
        one: 0,
        several: 0,
    };
    let rows = [
        row(1, 1),
        row(2, 0),
        row(3, 0),
        row(4, 2),
        row(5, 3),
        row(6, 0),
        row(7, 5),
    ];
    assert_eq!(
        positive_runs(&rows, |r| r.p),
        vec![vec![(1, 1)], vec![(4, 2), (5, 3)], vec![(7, 5)]]
    );
    assert!(positive_runs(&rows, |r| r.one).is_empty());
    // A size missing from the rows ends a run too.
    let gap = [row(1, 1), row(3, 1)];
    assert_eq!(positive_runs(&gap, |r| r.p).len(), 2);
}

/// Regression (issue 27): an octal plot of `n_max = 0` had the ticks
/// "-1 -1 -0 0" and a footer saying the period is proved under a title
/// saying none is.
#[test]
fn octal_plot_of_one_value_has_whole_ticks_and_an_honest_footer() {
    use gametables::games::impartial::picture::whole_tick;
    assert_eq!(whole_tick(-0.4), "");
    assert_eq!(whole_tick(-0.0), "0");
    assert_eq!(whole_tick(-1e-9), "0");
    assert_eq!(whole_tick(3.0), "3");
    assert_eq!(whole_tick(2.5), "");
    let d = tempfile::tempdir().unwrap();
    let jf = write_job(
        d.path(),
        "o0.toml",
        "kind = \"octal\"\ncode = \"0.77\"\nn_max = 0\n",
    );
    let run = d.path().join("run");
    run_job_ok(&jf, &run);
    run_ok(&["plot", run.to_str().unwrap()]);
    let svg = std::fs::read_to_string(run.join("plots/octal-grundy.svg")).unwrap();
    assert!(svg.contains("no period proved up to n = 0"), "title");
    assert!(!svg.contains(">-0<"), "a -0 tick");
    assert!(
        !svg.contains("the period is proved"),
        "the footer contradicts the title"
    );
    assert!(svg.contains("Shown: n = 0 of 1 value computed"), "footer");
    // Whole-number ticks, no two in a row with the same text (were
    // "-1 -1 -0 0").
    let ticks: Vec<&str> = svg
        .split("<text")
        .filter_map(|t| {
            t.split_once('>')
                .map(|(_, r)| r.split('<').next().unwrap_or("").trim())
        })
        .filter(|t| t.parse::<i64>().is_ok())
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(!ticks.contains(&"-0"), "{ticks:?}");
    assert!(ticks.windows(2).all(|w| w[0] != w[1]), "{ticks:?}");
}
