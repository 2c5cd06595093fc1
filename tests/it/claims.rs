//! Reports that never cry wolf: for every job kind, small valid job files
//! never yield a MISMATCH claim (a claim whose premise the job file does not
//! cover is "not covered"), the kind's own checks find nothing, and every
//! claim cites a published work that `report.md` lists in full.
//!
//! Each case plans, runs (every worker in this process), merges, checks and
//! reports one random small job file of the kind; proptest shrinks a failing
//! one to a smallest job file. The examples are regression tests at
//! the end.

use gametables::pipeline::ClaimStatus;
use gametables::pipeline::RunView;
use gametables::pipeline::jobfile::read_job_file;
use gametables::pipeline::merge;
use gametables::pipeline::plan::{PlanFile, write_plan};
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::shard::Durability;
use gametables::pipeline::sources;
use gametables::pipeline::worker::run_worker;
use proptest::prelude::*;

use crate::support::{run_job, write_job};

/// Plans, runs, merges and reports the job file `text` in a temporary
/// directory; returns one line per MISMATCH claim or check problem.
fn problems_of(text: &str) -> Vec<String> {
    let t = tempfile::tempdir().unwrap();
    let job = write_job(t.path(), "small.toml", text);
    let jf = read_job_file(&job, &gametables::games::registry())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let plan = PlanFile::from_job_file(&jf).unwrap();
    let dir = RunDir::new(t.path().join("run"));
    write_plan(&dir, &plan, false).unwrap();
    for j in &plan.jobs {
        run_worker(
            &gametables::games::registry(),
            &dir.manifest_path(&j.id),
            Some(dir.root()),
            Durability::Deferred,
        )
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    let view = RunView::open(dir.root(), &gametables::games::registry()).unwrap();
    let merged = merge::merge(&view).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut problems: Vec<String> = match merge::check_merged(&view, &merged, None) {
        Ok(_) => Vec::new(),
        Err(e) => vec![e.to_string()],
    };
    let claims = merge::report(&view, &gametables::games::registry().works())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    // Every claim cites a published work a reader can find (never an
    // internal name), and report.md lists the full reference of each.
    let report = std::fs::read_to_string(dir.root().join("report.md")).unwrap();
    for c in &claims {
        if sources::cited([c.source.as_str()], &gametables::games::registry().works()).is_empty()
            && !c.source.starts_with(sources::OWN_CHECK)
        {
            problems.push(format!("[{}] {}: cites no known work", c.source, c.claim));
        }
    }
    for w in sources::cited(
        claims.iter().map(|c| c.source.as_str()),
        &gametables::games::registry().works(),
    ) {
        if !report.contains(&format!("- **{}**: {}", w.name, w.reference)) {
            problems.push(format!(
                "report.md does not list the reference of {}",
                w.name
            ));
        }
    }
    for bad in ["seed 00", "seed00", "BRIEF.md", "/work/"] {
        if report.contains(bad) {
            problems.push(format!("report.md names {bad:?}"));
        }
    }
    problems.extend(
        claims
            .iter()
            .filter(|c| c.status == ClaimStatus::Mismatch)
            .map(|c| {
                format!(
                    "MISMATCH [{}] {}: published {}, ours {}",
                    c.source, c.claim, c.expected, c.ours
                )
            }),
    );
    problems
}

fn assert_no_problems(text: &str) {
    let p = problems_of(text);
    assert!(
        p.is_empty(),
        "job file:\n{text}\nproblems:\n  {}",
        p.join("\n  ")
    );
}

/// A `boxes = [...]` list of distinct boxes.
fn boxes_text(boxes: &[(u32, u32)]) -> String {
    let mut seen = Vec::new();
    for b in boxes {
        if !seen.contains(b) {
            seen.push(*b);
        }
    }
    let list: Vec<String> = seen.iter().map(|(r, c)| format!("[{r}, {c}]")).collect();
    format!("boxes = [{}]", list.join(", "))
}

/// Small boxes, now and then a long thin one or a 10-row one (claims about
/// 2×n, 3×n and the 10×10 box).
fn small_box() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        6 => (1u32..=9, 1u32..=9),
        1 => (1u32..=3, 1u32..=220),
        1 => (10u32..=11, 9u32..=11),
        1 => (1u32..=16, 1u32..=4),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chomp_boxes_small_job_files_never_mismatch(boxes in prop::collection::vec(small_box(), 1..4)) {
        assert_no_problems(&format!("kind = \"chomp-boxes\"\n{}\n", boxes_text(&boxes)));
    }

    #[test]
    fn chomp_grundy_small_job_files_never_mismatch(boxes in prop::collection::vec(
        prop_oneof![4 => (1u32..=8, 1u32..=8), 1 => (1u32..=3, 1u32..=210), 1 => (10u32..=10, 10u32..=11)], 1..3)) {
        assert_no_problems(&format!("kind = \"chomp-grundy\"\n{}\n", boxes_text(&boxes)));
    }

    #[test]
    fn chomp_census_small_job_files_never_mismatch(n_max in 1u32..=45, split in prop::option::of(1u64..=3000)) {
        let extra = split.map_or(String::new(), |m| format!("max_ranks_per_job = {m}\n"));
        assert_no_problems(&format!("kind = \"chomp-census\"\nn_max = {n_max}\n{extra}"));
    }

    #[test]
    fn octal_small_job_files_never_mismatch(
        code in prop_oneof![
            Just("0.77".to_string()), Just("0.07".to_string()), Just("0.137".to_string()),
            Just("4.7".to_string()), "[0-7]\\.[0-7]{1,3}",
        ],
        n_max in 0u64..=300,
        ranges in prop::option::of(1u64..=6),
    ) {
        let extra = ranges.map_or(String::new(), |r| format!("ranges = {r}\n"));
        let text = format!("kind = \"octal\"\ncode = \"{code}\"\nn_max = {n_max}\n{extra}");
        // Codes the kind refuses are not valid job files.
        if read_job_file_text(&text) {
            assert_no_problems(&text);
        }
    }

    #[test]
    fn three_row_small_job_files_never_mismatch(
        q_max in prop_oneof![1u32..=300, 300u32..=2500],
        q_range in 1u32..=900,
        r_range in prop::option::of(1u32..=900),
    ) {
        let q_range = q_range.min(q_max);
        let extra = r_range.map_or(String::new(), |r| format!("r_range = {}\n", r.min(q_max)));
        let text = format!("kind = \"three-row\"\nq_max = {q_max}\nq_range = {q_range}\n{extra}");
        if read_job_file_text(&text) {
            assert_no_problems(&text);
        }
    }
}

/// Whether `text` is a job file its kind accepts.
fn read_job_file_text(text: &str) -> bool {
    let t = tempfile::tempdir().unwrap();
    read_job_file(
        &write_job(t.path(), "j.toml", text),
        &gametables::games::registry(),
    )
    .is_ok()
}

/// Dodgem has one parameter: every board a default test run affords.
#[test]
fn dodgem_small_job_files_never_mismatch() {
    for n in 2..=4 {
        assert_no_problems(&format!("kind = \"dodgem\"\nn = {n}\n"));
    }
}

// ---------------------------------------------------------------- the examples

/// Issue example: Kayles to n_max = 5 compared G(0..=10) with six values and
/// exited 3; the claim is not covered (the six values match as far as they go).
#[test]
fn octal_kayles_to_5_is_not_a_mismatch() {
    assert_no_problems("kind = \"octal\"\ncode = \"0.77\"\nn_max = 5\n");
    let t = tempfile::tempdir().unwrap();
    let job = write_job(
        t.path(),
        "k5.toml",
        "kind = \"octal\"\ncode = \"0.77\"\nn_max = 5\n",
    );
    let o = run_job(&job, &t.path().join("run"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("0 mismatch"), "{out}");
    let report = std::fs::read_to_string(t.path().join("run/report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.contains("G(0..=10)"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(line.contains("not covered"), "{line}");
    assert!(
        line.contains("0 1 2 3 1 4"),
        "our six values are shown: {line}"
    );
}

/// Regression (issue 12, acceptance 5): one 17×17 box exited 3 on the "91
/// pairs" claim, counting its 136 pairs m < n ≤ 17; the claim speaks of the
/// pairs inside 14×14. A 15×15 box (105 pairs) shows the same.
#[test]
fn a_box_larger_than_14x14_does_not_mismatch_the_91_pairs() {
    assert_no_problems("kind = \"chomp-boxes\"\nboxes = [[15, 15]]\n");
}

/// The short names of the works the games cite are distinct and none
/// contains another (a claim's source names a work by containing its name).
#[test]
fn work_names_are_distinct_and_not_inside_each_other() {
    let works = gametables::games::registry().works();
    assert!(works.len() >= 10, "{} works", works.len());
    for a in &works {
        for b in &works {
            if a.name != b.name {
                assert!(!a.name.contains(b.name), "{} contains {}", a.name, b.name);
            }
        }
    }
}

/// `## Sources` lists a source naming two works with both, in registry
/// order, and nothing for a source that names none.
#[test]
fn a_source_naming_two_works_lists_both_in_order() {
    let works = gametables::games::registry().works();
    let s = sources::sources_section(["Gale 1974, as cited in the sen-ltd Chomp article"], &works);
    let chomp = s.find("**sen-ltd Chomp article**").expect("sen-ltd listed");
    let gale = s.find("**Gale 1974**").expect("Gale listed");
    assert!(chomp < gale, "{s}");
    assert!(s.contains("Amer. Math. Monthly 81 (1974)"), "{s}");
    assert_eq!(sources::sources_section(["our own check"], &works), "");
}

/// Regression (issue 27): a Dodgem job file with `max_cars = 0` reported
/// "match" for six published counts it did not compute (5×5's 240,060,402
/// among them): the counts were computed by formula, whatever the run. A
/// count is now compared only with what the run counted over its whole
/// board.
#[test]
fn dodgem_counts_match_only_when_the_run_counted_them() {
    let t = tempfile::tempdir().unwrap();
    let job = write_job(
        t.path(),
        "d0.toml",
        "kind = \"dodgem\"\nn = 5\nmax_cars = 0\n",
    );
    let o = run_job(&job, &t.path().join("run"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("0 match, 0 mismatch"), "{out}");
    let report = std::fs::read_to_string(t.path().join("run/report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.contains("5×5: positions with side to move"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        line.contains("not covered") && line.contains("at most 0 cars a side"),
        "{line}"
    );
    // The whole 3×3 board: its own counts match, the other boards' are not
    // covered.
    let job = write_job(t.path(), "d3.toml", "kind = \"dodgem\"\nn = 3\n");
    let o = run_job(&job, &t.path().join("run3"));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let report = std::fs::read_to_string(t.path().join("run3/report.md")).unwrap();
    for (claim, status) in [
        ("3×3: positions with side to move", "| match |"),
        ("3×3: placements with both sides", "| match |"),
        ("4×4: positions with side to move", "| not covered |"),
        ("5×5: positions in the largest layer", "| not covered |"),
    ] {
        let line = report
            .lines()
            .find(|l| l.contains(claim))
            .unwrap_or_else(|| panic!("{claim}: {report}"));
        assert!(line.ends_with(status), "{line}");
    }
}
