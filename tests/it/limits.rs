//! Memory that user input can make unbounded (issue 15, item 1): every
//! query and every plan knows what it will allocate before it allocates, and
//! refuses above a bound naming the number and the limit. Run under
//! `ulimit -v` (an address-space limit): no input exits 134 (an aborted
//! allocation) or is killed; the bound follows the limit.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use gametables::games::impartial::probe::octal::LONG_OCTAL_WORK;
use gametables::games::three_row::kind::{count_tiles, plan_tiles};
use gametables::games::three_row::probe::{LONG_CELLS, solve_cells};

use crate::support::{EXE, gt, show};

/// Address space given to the process in the `ulimit -v` tests (KiB).
const ULIMIT_KIB: u64 = 2 << 20;

/// `gametables ARGS` under `ulimit -v ULIMIT_KIB`, in `dir`.
fn limited(dir: &Path, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {ULIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(EXE)
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Refused with exit 1: one line naming `needle`, the estimate and the
/// limit, which follows `ulimit -v` (half of 2 GiB); no abort, no kill.
fn assert_refused(o: &Output, needle: &str) {
    let all = show(o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{all}");
    assert!(err.contains(needle), "`{needle}` not in {all}");
    assert!(err.contains("needs about"), "{all}");
    assert!(err.contains("more than the limit of 1.0 GiB"), "{all}");
    assert!(err.contains("--memory raises it"), "{all}");
}

/// The issue's three examples, each under `ulimit -v`.
#[test]
fn issue_examples_are_refused_with_the_number_and_the_limit() {
    let t = tempfile::tempdir().unwrap();
    // Was: exit 134, "memory allocation of 400000000004 bytes failed".
    let o = limited(
        t.path(),
        &[
            "query",
            "subtraction",
            "--set",
            "1,3,4",
            "--n",
            "100000000000",
        ],
    );
    assert_refused(&o, "--n 100000000000");
    // Was: grew to 24 GB until the kernel killed it.
    let o = limited(
        t.path(),
        &[
            "query",
            "three-row",
            "--q",
            "255",
            "--r",
            "120",
            "--q-max",
            "4000000000",
        ],
    );
    assert_refused(&o, "--q-max 4000000000 --r 120");
    // Was: accepted by the job-file checks, then aborted in allocation.
    std::fs::write(
        t.path().join("c400.toml"),
        "kind = \"chomp-census\"\nn_max = 400\n",
    )
    .unwrap();
    let o = limited(t.path(), &["plan", "c400.toml", "--run-dir", "run"]);
    assert_refused(
        &o,
        "c400.toml:2:1: this job file plans 73,941 job(s) reading 2.7e9 input shard(s)",
    );
    assert!(!t.path().join("run/plan.toml").exists());
    // --memory raises the bound: the same plan is then refused only by it.
    let o = limited(
        t.path(),
        &["plan", "c400.toml", "--run-dir", "run", "--memory", "1T"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("more than the limit of 1.0 TiB"),
        "{}",
        show(&o)
    );
}

/// Other members of the kind: inputs that allocate in proportion to a
/// number the user types. None aborts or is killed under `ulimit -v`; each
/// is refused before allocating or answers within the bound.
#[test]
fn no_input_aborts_or_is_killed_under_ulimit() {
    let t = tempfile::tempdir().unwrap();
    let jobs: &[(&str, &str)] = &[
        // q_range = 1 at q_max = 10⁸: 5·10¹⁵ tiles (counted, never built).
        (
            "t1.toml",
            "kind = \"three-row\"\nq_max = 100000000\nq_range = 1\n",
        ),
        (
            "t2.toml",
            "kind = \"three-row\"\nq_max = 100000000\nq_range = 1000\n",
        ),
        (
            "o1.toml",
            "kind = \"octal\"\ncode = \"0.77\"\nn_max = 268435455\nranges = 1000\n",
        ),
        (
            "c1.toml",
            "kind = \"chomp-census\"\nn_max = 400\nmax_ranks_per_job = 1\n",
        ),
        ("c2.toml", "kind = \"chomp-census\"\nn_max = 200\n"),
        (
            "b1.toml",
            "kind = \"chomp-boxes\"\nboxes = [[1, 4294967295]]\n",
        ),
        ("g1.toml", "kind = \"chomp-grundy\"\nboxes = [[40, 40]]\n"),
        ("d1.toml", "kind = \"dodgem\"\nn = 9\n"),
    ];
    let mut cases: Vec<Vec<String>> = Vec::new();
    for (name, text) in jobs {
        std::fs::write(t.path().join(name), text).unwrap();
        cases.push(
            ["plan", name, "--run-dir", &format!("run-{name}")]
                .map(String::from)
                .to_vec(),
        );
    }
    for q in [
        "query subtraction --set 1,3,4 --n 300000000",
        "query subtraction --set 1,3,4 --n 18446744073709551615",
        "query subtraction --set 1,3,4 --heaps 18446744073709551615,3",
        "query subtraction --set 4294967295 --heaps 100000",
        "query three-row --q 100000000 --r 100000000",
        "query three-row --q 4294967295 --r 0",
        "query three-row --q 1 --r 1 --q-max 4294967295",
        "query octal 0.77 --n 18446744073709551615",
        "query chomp 10000x4294967295",
        "query chomp --position 4294967295,4294967295",
        "query chomp --grundy 30x30",
        "query nim 18446744073709551615,18446744073709551615",
        "query dodgem --n 18446744073709551615",
    ] {
        cases.push(q.split(' ').map(String::from).collect());
    }
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = limited(t.path(), &args);
        let all = show(&o);
        assert!(
            matches!(o.status.code(), Some(0..=2)),
            "{args:?} (not 0, 1 or 2: 134 is an aborted allocation, no code a kill): {all}"
        );
        assert!(!all.contains("memory allocation of"), "{args:?}: {all}");
        assert!(!all.contains("panicked"), "{args:?}: {all}");
    }
}

/// The tile count of a three-row plan, counted without building the plan,
/// equals the plan's.
#[test]
fn three_row_tiles_are_counted_exactly_before_planning() {
    for q_max in [1u32, 2, 7, 40, 63, 64, 100] {
        for q_range in 1..=12 {
            for r_range in [1u32, 3, 5, 12, 200] {
                let tiles = plan_tiles(q_max, q_range, r_range);
                let inputs: usize = tiles.iter().map(|(_, i)| i.len()).sum();
                assert_eq!(
                    count_tiles(q_max, q_range, r_range, u128::MAX),
                    Some((tiles.len() as u128, inputs as u128)),
                    "q_max {q_max}, q_range {q_range}, r_range {r_range}"
                );
                assert_eq!(
                    count_tiles(q_max, q_range, r_range, tiles.len() as u128 - 1),
                    None
                );
            }
        }
    }
}

/// A query that runs longer than a moment says what it computes and how far
/// it is (issue example: `query three-row --q 100000000 --r 100000000` ran
/// silently for minutes; it is now refused for its memory, and one that fits
/// shows progress). A query long by its size says so as it starts, so this
/// holds on an idle machine as on a loaded one; the bar follows the work done
/// (on a terminal only).
#[test]
fn long_queries_say_so() {
    // Long by their size, so they say so as they start on any machine, idle
    // or not (no clock involved): each solve is at least the threshold.
    assert!(solve_cells(50_000, 4_501) >= LONG_CELLS);
    const { assert!(800_001u64 * 800_001 >= LONG_OCTAL_WORK) };
    for (args, what) in [
        (
            &["query", "three-row", "--q", "50000", "--r", "4500"][..],
            "query: computing f(q, r) for rows r ≤ 4500 and columns q ≤ 50000 in memory: by its size",
        ),
        (
            &["query", "octal", "0.77", "--n", "800000"][..],
            "query: computing G(0..800001) of the octal game 0.77 in memory: by its size",
        ),
    ] {
        let o = gt().args(args).output().unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with(what), "{args:?}: {err}");
        assert_eq!(
            err.lines().count(),
            1,
            "said once, no bar off a terminal: {err}"
        );
    }
    // Small ones say nothing (far below the threshold and the two-second timer).
    assert!(solve_cells(16_000, 121) < LONG_CELLS / 10);
    let o = gt()
        .args(["query", "three-row", "--q", "255", "--r", "120"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "", "{}", show(&o));
}
