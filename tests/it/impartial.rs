//! Impartial games (seed 001): worked examples as named tests, brute-force
//! cross-checks and properties.

use std::collections::{BTreeSet, HashMap};

use gametables::solvers::impartial::hackenbush::RootedTree;
use gametables::solvers::impartial::mex;
use gametables::solvers::impartial::nim::{self, NimMove, Play};
use gametables::solvers::impartial::octal::{OctalCode, find_period};
use gametables::solvers::impartial::subtraction::{Period, Subtraction};

const SEED1: &str = "seed 001";

fn code(s: &str) -> OctalCode {
    OctalCode::parse(s).unwrap()
}

// ---------------------------------------------------------------- mex

#[test]
fn mex_examples_of_seed_001_section_4_1() {
    assert_eq!(mex([]), 0);
    assert_eq!(mex([0, 1, 2]), 3);
    assert_eq!(mex([1, 2, 4, 5]), 0);
    assert_eq!(mex([0, 2, 3, 7]), 1);
    assert_eq!(mex([3, 0, 0, 1, 2, 9]), 4);
}

// ---------------------------------------------------------------- Nim

/// Seed 001 §3: (3, 4, 5) is an N-position and the only winning move takes 2
/// from the 3-heap, leaving (1, 4, 5).
#[test]
fn seed001_nim_345_take_two_from_the_three_heap() {
    let _ = SEED1;
    let moves = nim::winning_moves(&[3, 4, 5], Play::Normal);
    assert_eq!(
        moves,
        vec![NimMove {
            heap: 0,
            from: 3,
            to: 1
        }]
    );
    assert_eq!(moves[0].taken(), 2);
    assert!(nim::is_p_position(&[1, 4, 5], Play::Normal));
    assert!(nim::is_p_position(&[1, 2, 3], Play::Normal));
}

/// Seed 001 §6 / §7.2: misère (4, 1, 1): reduce the 4-heap to 1, leaving
/// three 1-heaps.
#[test]
fn seed001_misere_411_reduce_four_to_one() {
    let moves = nim::winning_moves(&[4, 1, 1], Play::Misere);
    assert_eq!(
        moves,
        vec![NimMove {
            heap: 0,
            from: 4,
            to: 1
        }]
    );
    assert!(nim::is_p_position(&[1, 1, 1], Play::Misere));
    assert!(!nim::is_p_position(&[1, 1, 1], Play::Normal));
    // Normal play would reduce 4 to 0 instead.
    assert_eq!(
        nim::winning_move(&[4, 1, 1], Play::Normal).map(|m| m.to),
        Some(0)
    );
}

/// P-positions of Nim (or misère Nim) with heaps ≤ `max` by game-tree
/// search, independent of Bouton's formula.
fn brute_nim(max: &[u64], play: Play) -> HashMap<Vec<u64>, bool> {
    fn is_p(pos: &[u64], play: Play, memo: &mut HashMap<Vec<u64>, bool>) -> bool {
        if let Some(&v) = memo.get(pos) {
            return v;
        }
        let mut any_move = false;
        let mut reaches_p = false;
        for i in 0..pos.len() {
            for to in 0..pos[i] {
                any_move = true;
                let mut q = pos.to_vec();
                q[i] = to;
                if is_p(&q, play, memo) {
                    reaches_p = true;
                }
            }
        }
        let p = if any_move {
            !reaches_p
        } else {
            // No move: normal play, the mover loses (P); misère, the mover wins.
            play == Play::Normal
        };
        memo.insert(pos.to_vec(), p);
        p
    }
    let mut memo = HashMap::new();
    let mut all = vec![vec![]];
    for &m in max {
        all = all
            .into_iter()
            .flat_map(|v: Vec<u64>| {
                (0..=m).map(move |h| {
                    let mut w = v.clone();
                    w.push(h);
                    w
                })
            })
            .collect();
    }
    for pos in &all {
        is_p(pos, play, &mut memo);
    }
    memo
}

fn check_nim_against_brute_force(max: &[u64], play: Play) -> usize {
    let brute = brute_nim(max, play);
    for (pos, &p) in &brute {
        assert_eq!(nim::is_p_position(pos, play), p, "{play:?} {pos:?}");
        // Winning moves = exactly the moves to brute-force P-positions.
        let mut want = Vec::new();
        for i in 0..pos.len() {
            for to in 0..pos[i] {
                let mut q = pos.clone();
                q[i] = to;
                if brute[&q] {
                    want.push(NimMove {
                        heap: i,
                        from: pos[i],
                        to,
                    });
                }
            }
        }
        let mut got = nim::winning_moves(pos, play);
        got.sort();
        assert_eq!(got, want, "{play:?} {pos:?}");
    }
    brute.len()
}

#[test]
fn nim_normal_matches_game_tree_search_up_to_777() {
    assert_eq!(check_nim_against_brute_force(&[7, 7, 7], Play::Normal), 512);
}

#[test]
fn nim_misere_matches_game_tree_search_up_to_777() {
    assert_eq!(check_nim_against_brute_force(&[7, 7, 7], Play::Misere), 512);
}

#[test]
fn nim_four_and_one_heaps_match_game_tree_search() {
    for play in [Play::Normal, Play::Misere] {
        check_nim_against_brute_force(&[3, 4, 2, 5], play);
        check_nim_against_brute_force(&[9], play);
        check_nim_against_brute_force(&[], play);
    }
}

#[test]
fn nim_large_heaps_use_the_formula() {
    let heaps = [1_000_000_000u64, 999_999_999, 123_456_789, 7];
    let m = nim::winning_move(&heaps, Play::Normal).unwrap();
    let mut after = heaps;
    after[m.heap] = m.to;
    assert!(nim::is_p_position(&after, Play::Normal));
    let m = nim::winning_move(&heaps, Play::Misere).unwrap();
    let mut after = heaps;
    after[m.heap] = m.to;
    assert!(nim::is_p_position(&after, Play::Misere));
}

// ---------------------------------------------------------------- Sub(S)

/// Seed 001 §5.1: Sub({1, 3, 4}) has values 0 1 0 1 2 3 2, period 7 from 0.
#[test]
fn seed001_subtraction_134_period_seven() {
    let g = Subtraction::new(&[1, 3, 4]).unwrap();
    let v = g.grundy_sequence(13);
    assert_eq!(v, [0, 1, 0, 1, 2, 3, 2, 0, 1, 0, 1, 2, 3, 2]);
    let long = g.grundy_sequence(1000);
    for n in 0..=1000 {
        assert_eq!(long[n], [0, 1, 0, 1, 2, 3, 2][n % 7], "n = {n}");
    }
    assert_eq!(
        g.period(&long),
        Some(Period {
            preperiod: 0,
            period: 7
        })
    );
    // The proof needs only the window 0..4 to reappear at 7: 11 values.
    assert_eq!(g.period(&long[..11]).map(|p| p.period), Some(7));
    assert_eq!(g.period(&long[..10]), None);
}

/// Seed 001 §5.1: heaps (10, 15, 20) in Sub({1, 3, 4}): values 1, 1, 2, nim-sum
/// 2; the winning move on the 20-heap takes 4 (to 16, value 0).
#[test]
fn seed001_subtraction_134_heaps_10_15_20_take_four_from_twenty() {
    let g = Subtraction::new(&[1, 3, 4]).unwrap();
    let v = g.grundy_sequence(20);
    assert_eq!((v[10], v[15], v[20], v[16]), (1, 1, 2, 0));
    // The seed's move is the only one on the 20-heap; the seed does not
    // mention the second winning move, 15 → 12 (value 1 → 3 = 1 ⊕ 2).
    assert_eq!(g.winning_moves(&[10, 15, 20]), vec![(1, 3), (2, 4)]);
    assert_eq!(v[12], 3);
    assert!(g.winning_moves(&[10, 15, 16]).is_empty());
}

/// Seed 001 §2.2: Bachet's game Sub({1, 2, 3}): P iff n ≡ 0 (mod 4); from 21
/// take 1.
#[test]
fn seed001_bachet_multiples_of_four() {
    let g = Subtraction::new(&[1, 2, 3]).unwrap();
    let v = g.grundy_sequence(100);
    for (n, &x) in v.iter().enumerate() {
        assert_eq!(x == 0, n % 4 == 0);
    }
    assert_eq!(g.winning_moves(&[21]), vec![(0, 1)]);
}

#[test]
fn subtraction_is_the_octal_code_with_digits_three() {
    for set in [&[1u32, 3, 4][..], &[2, 5], &[1, 2, 3], &[3, 7, 8], &[1, 10]] {
        let sub = Subtraction::new(set).unwrap();
        let oct = OctalCode::subtraction(set).unwrap();
        assert_eq!(
            sub.grundy_sequence(400),
            oct.grundy_sequence(400),
            "{set:?}"
        );
        assert_eq!(oct.naive_sequence(60), oct.grundy_sequence(60));
    }
    assert_eq!(
        OctalCode::subtraction(&[1, 3, 4]).unwrap().to_string(),
        "0.3033"
    );
}

#[test]
fn subtraction_rejects_empty_and_zero() {
    assert!(Subtraction::new(&[]).is_err());
    assert!(Subtraction::new(&[0, 1]).is_err());
}

// ---------------------------------------------------------------- octal games

/// Seed 001 §5.2: Kayles (0.77) starts 0 1 2 3 1 4 3 2 1 4 2.
#[test]
fn seed001_kayles_first_eleven_values() {
    let v = code("0.77").grundy_sequence(10);
    assert_eq!(v, [0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2]);
}

/// Seed 001 §5.2 (Guy & Smith 1956): Kayles is periodic with period 12 from
/// n = 72 at the latest, with the period 4 1 2 8 1 4 7 2 1 8 2 7 (starting
/// at n = 72). Proved here by the periodicity theorem from computed values;
/// the least preperiod found is 71 (last exceptional value at n = 70).
#[test]
fn seed001_kayles_period_12_proved_by_the_theorem() {
    let c = code("0.77");
    let v = c.grundy_sequence(400);
    let p = find_period(&v, c.max_removal()).expect("proved within 400 values");
    assert_eq!(p.period, 12);
    assert!(p.preperiod <= 72, "seed: periodic from 72 at the latest");
    assert_eq!(p.preperiod, 71);
    assert_eq!(p.checked_through, 2 * 71 + 12 + 2);
    assert_eq!(&v[72..84], [4, 1, 2, 8, 1, 4, 7, 2, 1, 8, 2, 7]);
    assert_ne!(v[70], v[82], "70 is exceptional");
    // Too few values prove nothing.
    assert_eq!(find_period(&v[..2 * 71 + 2 * 12 + 2], 2), None);
    assert!(find_period(&v[..2 * 71 + 2 * 12 + 3], 2).is_some());
}

/// Dawson's Kayles (0.07): period 34, preperiod 53 (Guy & Smith 1956; the
/// issue's reference value, verified here by the theorem).
#[test]
fn dawsons_kayles_period_34_preperiod_53() {
    let c = code("0.07");
    let v = c.grundy_sequence(600);
    assert_eq!(&v[..12], [0, 0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3]);
    let p = find_period(&v, c.max_removal()).expect("proved");
    assert_eq!((p.period, p.preperiod), (34, 53));
}

/// Dawson's chess 0.137 is Dawson's Kayles shifted by one
/// (*Winning Ways*, ch. 4): G₀.₁₃₇(n) = G₀.₀₇(n + 1).
#[test]
fn dawsons_chess_is_dawsons_kayles_shifted() {
    let chess = code("0.137").grundy_sequence(300);
    let kayles = code("0.07").grundy_sequence(301);
    assert_eq!(chess[..], kayles[1..]);
}

const CODES: &[&str] = &[
    "0.77", "0.07", "0.137", "4.7", "0.6", "0.4", "0.3", "0.1", "0.2", "0.5", "0.51", "0.007",
    "0.16", "0.37", "4.07", "0.777", "0.15", "0.06", "0.17", "0.71", "0.44", "4.0", "0.0", "0.14",
    "0.34", "0.72", "0.753", "0.4444", "4.3", "0.26", "0.456", "0.64",
];

/// Every code: the fast sequence equals direct move enumeration for n ≤ 60.
#[test]
fn octal_fast_matches_direct_enumeration_to_60() {
    for s in CODES {
        let c = code(s);
        assert_eq!(c.grundy_sequence(60), c.naive_sequence(60), "{s}");
    }
}

/// Longer than the quick-split window, so the full scans are exercised.
#[test]
fn octal_fast_matches_direct_enumeration_to_1500() {
    for s in ["0.77", "0.07", "4.7", "0.6", "0.456", "0.4"] {
        let c = code(s);
        assert_eq!(c.grundy_sequence(1500), c.naive_sequence(1500), "{s}");
    }
}

#[test]
fn octal_extend_from_a_prefix_equals_one_pass() {
    for s in ["0.77", "4.7", "0.6"] {
        let c = code(s);
        let all = c.grundy_sequence(900);
        let mut v = all[..333].to_vec();
        c.extend(&mut v, 600);
        c.extend(&mut v, 901);
        assert_eq!(v, all, "{s}");
    }
}

/// Positions that are sums of heaps, solved by game-tree search over
/// multisets (no Sprague–Grundy), against the XOR of the heaps' values.
#[test]
fn octal_sums_match_game_tree_search() {
    fn options(code: &OctalCode, pos: &[u32]) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        for (i, &n) in pos.iter().enumerate() {
            let rest: Vec<u32> = pos
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &h)| h)
                .collect();
            let n = n as usize;
            for k in 0..=code.max_removal().min(n) {
                let d = code.digit(k);
                let mut add = |parts: &[usize]| {
                    let mut q = rest.clone();
                    q.extend(parts.iter().map(|&x| x as u32));
                    q.sort_unstable();
                    out.push(q);
                };
                if d & 1 != 0 && k >= 1 && n == k {
                    add(&[]);
                }
                if d & 2 != 0 && k >= 1 && n > k {
                    add(&[n - k]);
                }
                if d & 4 != 0 && n >= k + 2 {
                    for a in 1..=(n - k) / 2 {
                        add(&[a, n - k - a]);
                    }
                }
            }
        }
        out
    }
    fn is_p(code: &OctalCode, pos: Vec<u32>, memo: &mut HashMap<Vec<u32>, bool>) -> bool {
        if let Some(&v) = memo.get(&pos) {
            return v;
        }
        let p = !options(code, &pos).into_iter().any(|q| is_p(code, q, memo));
        memo.insert(pos, p);
        p
    }
    for s in ["0.77", "0.07", "4.7", "0.137", "0.6", "0.51"] {
        let c = code(s);
        let g = c.grundy_sequence(12);
        let mut memo = HashMap::new();
        for a in 0..=12u32 {
            for b in 0..=a.min(9) {
                for d in 0..=b.min(6) {
                    let pos = vec![d, b, a];
                    let xor = g[a as usize] ^ g[b as usize] ^ g[d as usize];
                    let mut sorted = pos.clone();
                    sorted.sort_unstable();
                    assert_eq!(is_p(&c, sorted, &mut memo), xor == 0, "{s} {pos:?}");
                }
            }
        }
    }
}

#[test]
fn octal_codes_parse_and_print() {
    assert_eq!(code("0.77").to_string(), "0.77");
    assert_eq!(code(".07").to_string(), "0.07");
    assert_eq!(code("0.070").to_string(), "0.07");
    assert_eq!(code("4.7").to_string(), "4.7");
    assert_eq!(code("0.137").max_removal(), 3);
    assert_eq!(code("4.0").max_removal(), 0);
    for bad in ["077", "1.7", "2.7", "0.8", "0.", "x.7", "0.7a"] {
        assert!(OctalCode::parse(bad).is_err(), "{bad}");
    }
}

/// Every period found is real: the sequence continues with it far beyond the
/// theorem's range.
#[test]
fn octal_periods_found_hold_far_beyond_the_proof() {
    for s in [
        "0.77", "0.07", "0.137", "0.51", "0.15", "0.3", "4.3", "0.71", "0.753",
    ] {
        let c = code(s);
        let v = c.grundy_sequence(3000);
        let p = find_period(&v[..1000], c.max_removal()).unwrap_or_else(|| panic!("{s}"));
        for n in p.preperiod..3000 - p.period {
            assert_eq!(v[n], v[n + p.period], "{s} n = {n}");
        }
        if p.preperiod > 0 {
            let n = p.preperiod - 1;
            assert_ne!(v[n], v[n + p.period], "{s}: preperiod is least");
        }
    }
}

// ---------------------------------------------------------------- Hackenbush

/// Game-tree search over the set of remaining edges.
fn brute_hackenbush(t: &RootedTree) -> u32 {
    let e = t.edges();
    // Edge i joins vertex i + 1 to its parent; cutting it removes the subtree
    // of vertex i + 1.
    let mut subtree = vec![0u32; e];
    for v in 1..=e {
        let mut u = v;
        loop {
            subtree[u - 1] |= 1 << (v - 1);
            u = t.parent(u);
            if u == 0 {
                break;
            }
        }
    }
    fn g(mask: u32, subtree: &[u32], memo: &mut HashMap<u32, u32>) -> u32 {
        if let Some(&v) = memo.get(&mask) {
            return v;
        }
        let opts: BTreeSet<u32> = (0..subtree.len())
            .filter(|&i| mask & (1 << i) != 0)
            .map(|i| g(mask & !subtree[i], subtree, memo))
            .collect();
        let v = mex(opts);
        memo.insert(mask, v);
        v
    }
    g((1u32 << e) - 1, &subtree, &mut HashMap::new())
}

/// Seed 001 §5.3: a stalk of n edges is the nim-heap *n.
#[test]
fn seed001_hackenbush_stalk_is_a_nim_heap() {
    for n in 0..10 {
        assert_eq!(RootedTree::stalk(n).grundy(), n as u64);
    }
}

#[test]
fn hackenbush_colon_principle_matches_game_tree_search() {
    // A few fixed trees plus every tree with ≤ 7 edges given by parent
    // sequences p(v) < v (all rooted trees up to relabelling).
    let fixed: &[&[usize]] = &[
        &[0, 1, 1],
        &[0, 0, 0],
        &[0, 1, 2, 2, 1, 5],
        &[0, 1, 1, 2, 2, 3, 3],
    ];
    for p in fixed {
        let t = RootedTree::from_parents(p).unwrap();
        assert_eq!(t.grundy(), u64::from(brute_hackenbush(&t)), "{p:?}");
    }
    // Y shape: stalk of 1 with two branches of 1: 1 ⊕ 1 = 0, + 1 = 1.
    assert_eq!(RootedTree::from_parents(&[0, 1, 1]).unwrap().grundy(), 1);
    let mut count = 0;
    for e in 1..=7usize {
        let total: usize = (1..=e).product();
        for idx in 0..total {
            // Mixed radix: p[i] ∈ 0..=i (vertex i + 1's parent is below it).
            let mut rest = idx;
            let p: Vec<usize> = (0..e)
                .map(|i| {
                    let d = rest % (i + 1);
                    rest /= i + 1;
                    d
                })
                .collect();
            let t = RootedTree::from_parents(&p).unwrap();
            assert_eq!(t.grundy(), u64::from(brute_hackenbush(&t)), "{p:?}");
            count += 1;
        }
    }
    assert_eq!(count, 1 + 2 + 6 + 24 + 120 + 720 + 5040);
}

#[test]
fn hackenbush_rejects_cycles() {
    assert!(RootedTree::from_parents(&[2, 1]).is_err());
    assert!(RootedTree::from_parents(&[5]).is_err());
}

// ---------------------------------------------------------------- job kind `octal` and queries

use gametables::games::impartial::kind::{parse_b_file, range_bounds};
use std::path::Path;

use crate::support::{gt, passed, plan_cmd, run_cmd, write_job};

fn gametables(args: &[&str]) -> (bool, String) {
    passed(gt().args(args))
}

#[test]
fn octal_range_bounds_cover_everything_in_order() {
    for (n_max, r) in [(0u64, 8u64), (5, 8), (1_048_576, 8), (1000, 1), (99, 7)] {
        let b = range_bounds(n_max, r);
        assert_eq!(b[0], 0);
        assert_eq!(*b.last().unwrap(), n_max + 1);
        assert!(b.windows(2).all(|w| w[0] < w[1]), "{b:?}");
        assert!(b.len() as u64 <= r + 1);
    }
    // Equal cost: end² grows linearly.
    let b = range_bounds(1_048_575, 4);
    assert_eq!(b, [0, 524_288, 741_456, 908_094, 1_048_576]);
}

fn run_job(dir: &Path, code: &str, n_max: u64, ranges: u64, workers: &str) -> String {
    let job = write_job(
        dir,
        &format!("octal-test-{ranges}.toml"),
        &format!("kind = \"octal\"\ncode = \"{code}\"\nn_max = {n_max}\nranges = {ranges}\n"),
    );
    let run_dir = dir.join(format!("run-{ranges}-{workers}"));
    let (ok, out) = passed(run_cmd(&job, &run_dir).args(["--workers", workers]));
    assert!(ok, "{out}");
    let result = std::fs::read_to_string(run_dir.join("result.toml")).unwrap();
    let root = result
        .lines()
        .find_map(|l| l.strip_prefix("root = "))
        .unwrap()
        .to_string();
    let summary = std::fs::read_to_string(run_dir.join("tables/summary.toml")).unwrap();
    let b =
        parse_b_file(&std::fs::read_to_string(run_dir.join("tables/b-file.txt")).unwrap()).unwrap();
    assert_eq!(
        b,
        code.parse::<OctalCode>()
            .unwrap()
            .naive_sequence(n_max as usize)
    );
    let report = std::fs::read_to_string(run_dir.join("report.md")).unwrap();
    assert!(
        !report.contains("Mismatch") && !report.contains("MISMATCH"),
        "{report}"
    );
    format!("{root}\n{summary}")
}

/// The pipeline end to end: ranges chained through their shards give the
/// direct sequence, the summary proves the period, and the root digest does
/// not depend on the worker count.
#[test]
fn octal_job_kind_end_to_end_kayles() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_job(tmp.path(), "0.77", 2000, 5, "2");
    let b = run_job(tmp.path(), "0.77", 2000, 5, "1");
    assert_eq!(a, b);
    assert!(a.contains("period = 12\n"), "{a}");
    assert!(a.contains("preperiod = 71\n"), "{a}");
    assert!(a.contains("last_exceptional = 70\n"), "{a}");
    assert!(a.contains("max_value = 8\n"), "{a}");
    // The report compares with the seed and Guy–Smith.
    let report = std::fs::read_to_string(tmp.path().join("run-5-2/report.md")).unwrap();
    assert!(report.contains("period 12, preperiod 71"), "{report}");
}

#[test]
fn octal_job_kind_dawson_and_unproved() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_job(tmp.path(), "0.07", 1500, 3, "2");
    assert!(
        a.contains("period = 34\n") && a.contains("preperiod = 53\n"),
        "{a}"
    );
    // Too short to prove anything: reported as not periodic.
    let b = run_job(tmp.path(), "0.77", 150, 2, "2");
    assert!(b.contains("periodic = false"), "{b}");
}

#[test]
fn octal_job_file_errors_name_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let body = "kind = \"octal\"\ncode = \"0.78\"\nn_max = 10\n";
    let job = write_job(tmp.path(), "bad.toml", body);
    let (ok, out) = passed(&mut plan_cmd(&job, &tmp.path().join("r")));
    assert!(!ok);
    assert!(
        out.contains("bad.toml:2") && out.contains("not an octal digit"),
        "{out}"
    );
}

#[test]
fn queries_print_the_seed_examples() {
    let (ok, out) = gametables(&["query", "nim", "3,4,5"]);
    assert!(ok && out.contains("take 2 from heap 1 (3 → 1)"), "{out}");
    let (ok, out) = gametables(&["query", "nim", "4,1,1", "--misere"]);
    assert!(ok && out.contains("4 → 1"), "{out}");
    let (ok, out) = gametables(&["query", "nim", "1,2,3"]);
    assert!(ok && out.contains("P-position"), "{out}");
    let (ok, out) = gametables(&[
        "query",
        "subtraction",
        "--set",
        "1,3,4",
        "--n",
        "20",
        "--heaps",
        "10,15,20",
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("= 0 1 0 1 2 3 2 0 1 0 1 2 3 2 0 1 0 1 2 3 2\n"),
        "{out}"
    );
    assert!(
        out.contains("period 7 from n = 0") && out.contains("20 → 16"),
        "{out}"
    );
    let (ok, out) = gametables(&["query", "octal", "0.77", "--n", "80", "--period"]);
    assert!(ok && out.contains("= 0 1 2 3 1 4 3 2 1 4 2 6"), "{out}");
    assert!(out.contains("period 12 from n = 71"), "{out}");
    // Without --period only G(0..=80) are computed: too few to prove it.
    let (ok, out) = gametables(&["query", "octal", "0.77", "--n", "80"]);
    assert!(ok && out.contains("= 0 1 2 3 1 4 3 2 1 4 2 6"), "{out}");
    assert!(
        out.contains("no period proved within n ≤ 80 (--period looks further)"),
        "{out}"
    );
}

/// Values that do not fit a byte switch the solver to 16-bit storage: an
/// artificial prefix with a value of 300 must continue exactly as direct
/// enumeration continues it.
#[test]
fn octal_extend_with_wide_values_matches_direct_enumeration() {
    for s in ["0.77", "0.07", "4.7"] {
        for wide in [300, 70_000] {
            let c = code(s);
            let mut prefix = c.grundy_sequence(49);
            prefix[7] = wide;
            let mut fast = prefix.clone();
            c.extend(&mut fast, 700);
            let mut slow = prefix;
            for n in 50..700 {
                let v = mex(c.option_values(n, &slow));
                slow.push(v);
            }
            assert_eq!(fast, slow, "{s} {wide}");
        }
    }
}

/// Heavy: fast vs direct enumeration to n = 30,000 (long stretches with the
/// rare-value shortcut on, for Kayles). About 15 s.
/// `cargo test --release --test it -- --ignored impartial::`
#[test]
#[ignore]
fn heavy_octal_fast_matches_direct_enumeration_to_30000() {
    for s in ["0.77", "0.07", "4.7", "0.6", "0.137"] {
        let c = code(s);
        assert_eq!(c.grundy_sequence(30_000), c.naive_sequence(30_000), "{s}");
    }
}
