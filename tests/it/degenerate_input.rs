//! Wrong or silent answers on degenerate input (issue 15, item 5): Nim
//! misère at the empty position, malformed lists in every command that reads
//! one, errors that quote what the user typed.

use std::collections::HashMap;

use gametables::solvers::impartial::nim::{self, NimMove, Play};

use crate::support::{gt, show};

/// Whether the player to move wins, by plain game-tree search over every
/// move (no theory): normal play, the player without a move loses; misère
/// play, the player without a move (no token left) wins.
fn naive_wins(heaps: &[u64], play: Play, memo: &mut HashMap<(Vec<u64>, Play), bool>) -> bool {
    let mut key = heaps.to_vec();
    key.sort_unstable();
    if let Some(&w) = memo.get(&(key.clone(), play)) {
        return w;
    }
    let mut any_move = false;
    let mut wins = false;
    for i in 0..heaps.len() {
        for to in 0..heaps[i] {
            any_move = true;
            let mut next = heaps.to_vec();
            next[i] = to;
            if !naive_wins(&next, play, memo) {
                wins = true;
            }
        }
    }
    if !any_move {
        wins = play == Play::Misere;
    }
    memo.insert((key, play), wins);
    wins
}

/// Every position of at most 4 heaps of at most 5 tokens, the empty one
/// (no heap) included, in both plays: the P-test and every winning move
/// agree with the naive search. Regression: at the empty position (and any
/// position of empty heaps) in misère play the player to move has already
/// won; the library's P-test said so, but `query nim 0 --misere` printed
/// "P-position" because it took "no winning move" for a P-position.
#[test]
fn nim_positions_up_to_4_heaps_of_5_agree_with_a_naive_search() {
    let mut memo = HashMap::new();
    let mut positions: Vec<Vec<u64>> = vec![vec![]];
    for len in 1..=4u32 {
        for code in 0..6u64.pow(len) {
            positions.push((0..len).map(|k| code / 6u64.pow(k) % 6).collect());
        }
    }
    assert_eq!(positions.len(), 1 + 6 + 36 + 216 + 1296);
    for play in [Play::Normal, Play::Misere] {
        for h in &positions {
            let wins = naive_wins(h, play, &mut memo);
            assert_eq!(nim::is_p_position(h, play), !wins, "{h:?} {play:?}");
            let mut want: Vec<NimMove> = Vec::new();
            for i in 0..h.len() {
                for to in 0..h[i] {
                    let mut next = h.clone();
                    next[i] = to;
                    if !naive_wins(&next, play, &mut memo) {
                        want.push(NimMove {
                            heap: i,
                            from: h[i],
                            to,
                        });
                    }
                }
            }
            let mut got = nim::winning_moves(h, play);
            got.sort();
            want.sort();
            assert_eq!(got, want, "{h:?} {play:?}");
        }
    }
    // The one N-position without a winning move: misère, no token left.
    for h in [&[][..], &[0], &[0, 0, 0]] {
        assert!(!nim::is_p_position(h, Play::Misere));
        assert!(nim::winning_moves(h, Play::Misere).is_empty());
    }
}

#[test]
fn query_nim_misere_at_the_empty_position_is_won_by_the_player_to_move() {
    for heaps in ["0", "0,0"] {
        let o = gt()
            .args(["query", "nim", heaps, "--misere"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("N-position"), "{out}");
        assert!(!out.contains("P-position"), "{out}");
        assert!(out.contains("already won"), "{out}");
        let o = gt()
            .args(["query", "nim", heaps, "--misere", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["p_position"], false, "{v}");
        assert_eq!(v["winning_moves"].as_array().map(Vec::len), Some(0), "{v}");
    }
    // Normal play: the empty position is lost for the player to move.
    let o = gt().args(["query", "nim", "0", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["p_position"], true, "{v}");
}

/// Malformed lists are refused in every command that reads one, with exit
/// status 2 and an error quoting the list as typed. Regression: `query nim
/// 3,,4` answered for the heaps 3 and 4 (the empty item dropped, so "heap
/// 2" was the 4).
#[test]
fn malformed_lists_are_refused_everywhere_quoting_the_input() {
    let cases: &[(&[&str], &str)] = &[
        (&["query", "nim", "3,,4"], "3,,4"),
        (&["query", "nim", "3,4,"], "3,4,"),
        (&["query", "nim", ",3"], ",3"),
        (&["query", "nim", ""], "``"),
        (&["query", "nim", "3,x"], "3,x"),
        (&["query", "nim", "3,-1"], "3,-1"),
        (&["query", "nim", "3;4"], "3;4"),
        (&["query", "subtraction", "--set", "1,,4"], "1,,4"),
        (
            &[
                "query",
                "subtraction",
                "--set",
                "1,3,4",
                "--heaps",
                "10,,15",
            ],
            "10,,15",
        ),
        (&["query", "chomp", "--position", "10,,9"], "10,,9"),
        (&["query", "chomp", "--position", "10,9,"], "10,9,"),
        (
            &["query", "chomp", "--grundy", "--position", "4,,2"],
            "4,,2",
        ),
        (
            &[
                "query",
                "dodgem",
                "--n",
                "3",
                "--position",
                "blue:a2,,a3 red:b1 to-move:blue",
            ],
            "blue:a2,,a3",
        ),
        (
            &[
                "query",
                "dodgem",
                "--n",
                "3",
                "--position",
                "blue:a2,a3, red:b1 to-move:red",
            ],
            "blue:a2,a3,",
        ),
    ];
    for (args, quoted) in cases {
        let o = gt().args(*args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(quoted),
            "{args:?}: `{quoted}` not quoted in {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}: {}", show(&o));
    }
    // Well-formed lists with spaces still work.
    let o = gt().args(["query", "nim", " 3, 4 ,5"]).output().unwrap();
    assert!(o.status.success(), "{}", show(&o));
}
