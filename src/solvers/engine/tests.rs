//! The engine on small made-up games, against a naive level-by-level solver
//! that uses only the moves (never the un-moves nor the engine's code).

use super::*;

/// A toy game with cycles: `k` tokens (the layer) and a marker `x` on
/// `m` cells, cut into rings of `ring` cells. Moves: the marker steps to the
/// next cell of its ring, or (from an odd cell) to `2x` mod m, inside the
/// layer; or one token is taken (from a cell `x` with x mod 3 ≠ 2) and the
/// marker jumps to `3x + 1`; or two tokens (from an even cell) and it jumps
/// to `x + 2`. With no token left the game is over: the player to move wins
/// if `x` is a multiple of 3. `broken` makes the un-moves wrong (the step
/// back goes the wrong way). `draws` ends play in a draw on the last cell
/// (in every layer, so in-layer moves reach ended draws) and, with no
/// token left, on a cell `x ≡ 2 (mod 3)`. `fan` ≥ 2 adds the in-layer
/// moves `x → x + j mod m` for j = 2 … `fan` (many moves to count), and
/// `wide` names every layer in [`LayeredGame::wide_values`].
struct Ring {
    k: usize,
    m: u64,
    ring: u64,
    broken: bool,
    draws: bool,
    /// The counter bound the game claims (`None`: none).
    bound: Option<u32>,
    /// Positions from this cell on also name a parent outside the layer.
    stray_from: u64,
    fan: u64,
    wide: bool,
}

impl Ring {
    fn new(k: usize, m: u64) -> Ring {
        Ring {
            k,
            m,
            ring: m,
            broken: false,
            draws: false,
            bound: None,
            stray_from: u64::MAX,
            fan: 0,
            wide: false,
        }
    }
    fn step(&self, x: u64) -> u64 {
        let base = x / self.ring * self.ring;
        let len = self.ring.min(self.m - base);
        base + (x - base + 1) % len
    }
    fn step_back(&self, y: u64) -> u64 {
        let base = y / self.ring * self.ring;
        let len = self.ring.min(self.m - base);
        base + (y - base + len - 1) % len
    }
}

impl LayeredGame for Ring {
    fn counter_bound(&self, _layer: usize) -> Option<u32> {
        self.bound
    }

    fn wide_values(&self, _layer: usize) -> bool {
        self.wide
    }

    type Position = (usize, u64);
    fn layer_count(&self) -> usize {
        self.k + 1
    }
    fn layer_name(&self, layer: usize) -> String {
        format!("k{layer}")
    }
    fn layer_size(&self, _layer: usize) -> u64 {
        self.m
    }
    fn child_layers(&self, layer: usize) -> Vec<usize> {
        (layer.saturating_sub(2)..layer).collect()
    }
    fn unrank(&self, layer: usize, rank: u64) -> (usize, u64) {
        (layer, rank)
    }
    fn rank(&self, p: &(usize, u64)) -> (usize, u64) {
        *p
    }
    fn terminal(&self, p: &(usize, u64)) -> Option<Terminal> {
        if self.draws && (p.1 == self.m - 1 || (p.0 == 0 && p.1 % 3 == 2)) {
            return Some(Terminal::Draw);
        }
        (p.0 == 0).then_some(if p.1.is_multiple_of(3) {
            Terminal::Win
        } else {
            Terminal::Loss
        })
    }
    fn children(&self, &(k, x): &(usize, u64), f: &mut impl FnMut((usize, u64))) {
        f((k, self.step(x)));
        if x % 2 == 1 {
            f((k, 2 * x % self.m));
        }
        for j in 2..=self.fan {
            f((k, (x + j) % self.m));
        }
        if k >= 1 && x % 3 != 2 {
            f((k - 1, (3 * x + 1) % self.m));
        }
        if k >= 2 && x % 2 == 0 {
            f((k - 2, (x + 2) % self.m));
        }
    }
    fn parents(&self, &(k, y): &(usize, u64), f: &mut impl FnMut((usize, u64))) {
        if k == 0 {
            return;
        }
        let mut out = |q: (usize, u64)| {
            if self.terminal(&q).is_none() {
                f(q);
            }
        };
        if y >= self.stray_from {
            out((k, self.m + y));
        }
        out((
            k,
            if self.broken {
                self.step(y)
            } else {
                self.step_back(y)
            },
        ));
        // 2x ≡ y (mod m) for odd x: x = y/2 or (y + m)/2.
        for x in [y / 2, (y + self.m) / 2] {
            if x < self.m && x % 2 == 1 && 2 * x % self.m == y {
                out((k, x));
            }
        }
        for j in 2..=self.fan {
            out((k, (y + self.m - j % self.m) % self.m));
        }
    }
}

/// Level-by-level values from the moves alone: a position is won in t if
/// some move reaches a position lost in t − 1, lost in t if every move
/// reaches a won position and the deepest is won in t − 1.
fn naive<G: LayeredGame>(game: &G) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    for l in 0..game.layer_count() {
        for r in 0..game.layer_size(l) {
            all.push(game.unrank(l, r));
        }
    }
    let index = |p: &G::Position| all.iter().position(|q| q == p).unwrap();
    let kids: Vec<Vec<usize>> = all
        .iter()
        .map(|p| {
            let mut v = Vec::new();
            if game.terminal(p).is_none() {
                game.children(p, &mut |c| v.push(index(&c)));
            }
            v
        })
        .collect();
    let mut val: Vec<Option<Value>> = all
        .iter()
        .map(|p| {
            game.terminal(p).map(|t| match t {
                Terminal::Win => Value::Win(0),
                Terminal::Loss => Value::Loss(0),
                Terminal::Draw => Value::Draw,
            })
        })
        .collect();
    for t in 1..=4000u16 {
        let before = val.clone();
        for i in 0..all.len() {
            if before[i].is_some() {
                continue;
            }
            if kids[i]
                .iter()
                .any(|&c| before[c] == Some(Value::Loss(t - 1)))
            {
                val[i] = Some(Value::Win(t));
            } else if kids[i]
                .iter()
                .all(|&c| matches!(before[c], Some(Value::Win(_))))
                && kids[i]
                    .iter()
                    .any(|&c| before[c] == Some(Value::Win(t - 1)))
            {
                val[i] = Some(Value::Loss(t));
            }
        }
    }
    // One byte per position, or two (little-endian) for a layer with a
    // depth past one byte.
    let mut out = Vec::new();
    let mut i = 0;
    for l in 0..game.layer_count() {
        let layer: Vec<Value> = (0..game.layer_size(l))
            .map(|k| val[i + k as usize].unwrap_or(Value::Draw))
            .collect();
        i += layer.len();
        let deep = layer
            .iter()
            .any(|v| v.depth().is_some_and(|d| d > u16::from(MAX_DEPTH)));
        out.push(if deep {
            layer
                .iter()
                .flat_map(|v| v.to_wide().to_le_bytes())
                .collect()
        } else {
            layer.iter().map(|v| v.to_byte()).collect()
        });
    }
    out
}

/// Play that ends in a draw (a full tic-tac-toe board without a line):
/// such a position is a draw, and a parent with a move into it is never
/// lost, whether the ended draw lies in the parent's layer or in a child
/// layer. Checked against the naive solver and the conformance checks.
#[test]
fn ended_draws_are_draws_and_save_their_parents() {
    let mut saved = 0;
    for m in [5, 7, 12, 31] {
        let mut g = Ring::new(5, m);
        g.draws = true;
        assert!(check_rules(&g, 200, 1).is_empty(), "ring of {m}");
        let got = solve_all(&g, 2).unwrap();
        assert_eq!(got, naive(&g), "ring of {m} with ended draws");
        // Each layer's last cell is an ended draw (byte 0); the same game
        // without ended draws values it otherwise.
        let plain = solve_all(&Ring::new(5, m), 1).unwrap();
        for l in 0..=5 {
            assert_eq!(got[l][(m - 1) as usize], 0, "ring of {m}, layer {l}");
            saved += (0..m as usize)
                .filter(|&r| plain[l][r] >= LOSS_BASE && got[l][r] == 0)
                .count();
        }
    }
    // Some positions lost without ended draws are draws with them.
    assert!(saved > 0);
}

#[test]
fn the_engine_agrees_with_a_naive_solver_on_a_game_with_cycles() {
    let mut total = LayerStats::default();
    for m in [5, 7, 12, 31, 64] {
        let g = Ring::new(6, m);
        let want = naive(&g);
        let got = solve_all(&g, 1).unwrap();
        assert_eq!(got, want, "ring of {m}");
        for s in got.iter().skip(1).map(|v| LayerStats::of(v)) {
            total.wins += s.wins;
            total.losses += s.losses;
            total.draws += s.draws;
        }
    }
    // Wins, losses and draws (cycles nobody can force) all occur outside
    // the terminal layer.
    assert!(
        total.wins > 0 && total.losses > 0 && total.draws > 0,
        "{total:?}"
    );
}

#[test]
fn the_bytes_do_not_depend_on_the_thread_count() {
    // Large enough for several blocks per depth.
    let g = Ring {
        ring: 10,
        ..Ring::new(4, 5 * BLOCK + 17)
    };
    assert_eq!(check_rules(&g, 2000, 3), Vec::<String>::new());
    let one = solve_all(&g, 1).unwrap();
    for t in [2, 3, 8] {
        assert_eq!(solve_all(&g, t).unwrap(), one, "{t} threads");
    }
}

#[test]
fn the_self_test_passes_on_a_sound_game_and_fails_on_a_broken_un_move() {
    let sound = Ring::new(5, 13);
    assert_eq!(check_rules(&sound, 100, 1), Vec::<String>::new());
    let broken = Ring {
        broken: true,
        ..Ring::new(5, 13)
    };
    let problems = check_rules(&broken, 100, 1);
    assert!(!problems.is_empty());
    assert!(
        problems[0].contains("parents list it") || problems[0].contains("move(s) to"),
        "{problems:?}"
    );
}

#[test]
fn a_missing_child_layer_is_an_error_naming_it() {
    let g = Ring::new(3, 7);
    let e = solve_layer(&g, 2, &[], 1).unwrap_err();
    assert!(e.to_string().contains("reach layer k0"), "{e}");
}

#[test]
fn solve_order_puts_children_first() {
    let g = Ring::new(5, 3);
    assert_eq!(solve_order(&g), vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn value_bytes_round_trip() {
    for b in 0..=255u8 {
        if let Some(v) = Value::from_byte(b) {
            assert_eq!(v.to_byte(), b);
        } else {
            assert!((1..WIN_BASE).contains(&b));
        }
    }
    assert_eq!(Value::Loss(3).for_mover(), Value::Win(4));
}

/// Two markers of [`Ring`] sharing the tokens: a move is a move of
/// [`Ring`] by either marker. Swapping the markers is a symmetry; with
/// `reduce` the engine solves one of each swapped pair. `bad_stabiliser`
/// always reports a stabiliser of 1 (wrong on the diagonal x = y).
struct TwinRing {
    ring: Ring,
    reduce: bool,
    bad_stabiliser: bool,
}

impl TwinRing {
    fn new(k: usize, m: u64, reduce: bool) -> TwinRing {
        TwinRing {
            ring: Ring::new(k, m),
            reduce,
            bad_stabiliser: false,
        }
    }
}

impl LayeredGame for TwinRing {
    /// Either marker's moves: twice a ring's.
    fn counter_bound(&self, _layer: usize) -> Option<u32> {
        self.ring.bound.map(|b| 2 * b)
    }

    fn wide_values(&self, layer: usize) -> bool {
        self.ring.wide_values(layer)
    }

    type Position = (usize, u64, u64);
    fn layer_count(&self) -> usize {
        self.ring.layer_count()
    }
    fn layer_name(&self, layer: usize) -> String {
        self.ring.layer_name(layer)
    }
    fn layer_size(&self, _layer: usize) -> u64 {
        self.ring.m * self.ring.m
    }
    fn child_layers(&self, layer: usize) -> Vec<usize> {
        self.ring.child_layers(layer)
    }
    fn unrank(&self, layer: usize, rank: u64) -> Self::Position {
        (layer, rank / self.ring.m, rank % self.ring.m)
    }
    fn rank(&self, p: &Self::Position) -> (usize, u64) {
        (p.0, p.1 * self.ring.m + p.2)
    }
    fn terminal(&self, p: &Self::Position) -> Option<Terminal> {
        (p.0 == 0).then_some(if (p.1 + p.2).is_multiple_of(3) {
            Terminal::Win
        } else {
            Terminal::Loss
        })
    }
    fn children(&self, &(k, x, y): &Self::Position, f: &mut impl FnMut(Self::Position)) {
        self.ring.children(&(k, x), &mut |(k2, x2)| f((k2, x2, y)));
        self.ring.children(&(k, y), &mut |(k2, y2)| f((k2, x, y2)));
    }
    fn parents(&self, &(k, x, y): &Self::Position, f: &mut impl FnMut(Self::Position)) {
        self.ring.parents(&(k, x), &mut |(_, x0)| f((k, x0, y)));
        self.ring.parents(&(k, y), &mut |(_, y0)| f((k, x, y0)));
    }
    fn symmetries(&self, &(k, x, y): &Self::Position, f: &mut impl FnMut(Self::Position)) {
        f((k, y, x));
    }
    fn reduces_by_symmetry(&self) -> bool {
        self.reduce
    }
    fn canonical(&self, &(k, x, y): &Self::Position) -> (Self::Position, u32) {
        let fixed = if x == y && !self.bad_stabiliser { 2 } else { 1 };
        ((k, x.min(y), x.max(y)), fixed)
    }
}

#[test]
fn symmetry_reduction_gives_the_plain_and_the_naive_values() {
    for (k, m) in [(4, 7), (5, 12), (6, 13)] {
        let plain = solve_all(&TwinRing::new(k, m, false), 1).unwrap();
        assert_eq!(plain, naive(&TwinRing::new(k, m, false)), "{k} {m}");
        let g = TwinRing::new(k, m, true);
        assert_eq!(check_rules(&g, 500, 9), Vec::<String>::new());
        for t in [1, 2, 3] {
            assert_eq!(solve_all(&g, t).unwrap(), plain, "{k} {m}, {t} threads");
        }
    }
}

#[test]
fn the_self_test_fails_on_a_wrong_stabiliser_and_the_engine_refuses_it() {
    let g = TwinRing {
        bad_stabiliser: true,
        ..TwinRing::new(5, 12, true)
    };
    let problems = check_rules(&g, 500, 9);
    assert!(
        problems.iter().any(|p| p.contains("stabiliser 1")),
        "{problems:?}"
    );
    // The engine finds move counts that are not whole, or counts that do
    // not match, and says so rather than give wrong values.
    let got = solve_all(&g, 1);
    let plain = solve_all(&TwinRing::new(5, 12, false), 1).unwrap();
    assert!(
        got.as_ref() != Ok(&plain),
        "a wrong stabiliser went unnoticed"
    );
}

#[test]
fn symmetry_reduction_bytes_do_not_depend_on_the_thread_count() {
    // 181² = 32,761 positions a layer: several blocks per depth.
    let plain = solve_all(&TwinRing::new(4, 181, false), 2).unwrap();
    for t in [1, 2, 3, 8] {
        assert_eq!(
            solve_all(&TwinRing::new(4, 181, true), t).unwrap(),
            plain,
            "{t} threads"
        );
    }
}

/// A game whose layers are long walks, deeper than one byte holds: layer
/// `k` has cells `0 … m − 1`; a move steps to the next cell, from a cell
/// `x ≡ 3 (mod 7)` also skips one, and from the last cell leaves for cell 0
/// of layer `k − 1`. Layer 0 is over: the player to move wins on an even
/// cell. Depths grow by about `m` a layer. The layers from `wide_from` up
/// are named in [`LayeredGame::wide_values`].
struct Walk {
    layers: usize,
    m: u64,
    wide_from: usize,
    /// The counter bound the game claims (`None`: none).
    bound: Option<u32>,
}

impl LayeredGame for Walk {
    type Position = (usize, u64);
    fn layer_count(&self) -> usize {
        self.layers
    }
    fn layer_name(&self, layer: usize) -> String {
        format!("w{layer}")
    }
    fn layer_size(&self, _layer: usize) -> u64 {
        self.m
    }
    fn child_layers(&self, layer: usize) -> Vec<usize> {
        (layer.saturating_sub(1)..layer).collect()
    }
    fn unrank(&self, layer: usize, rank: u64) -> (usize, u64) {
        (layer, rank)
    }
    fn rank(&self, p: &(usize, u64)) -> (usize, u64) {
        *p
    }
    fn terminal(&self, p: &(usize, u64)) -> Option<Terminal> {
        (p.0 == 0).then_some(if p.1.is_multiple_of(2) {
            Terminal::Win
        } else {
            Terminal::Loss
        })
    }
    fn children(&self, &(k, x): &(usize, u64), f: &mut impl FnMut((usize, u64))) {
        if x + 1 < self.m {
            f((k, x + 1));
        }
        if x % 7 == 3 && x + 2 < self.m {
            f((k, x + 2));
        }
        if x == self.m - 1 {
            f((k - 1, 0));
        }
    }
    fn parents(&self, &(k, y): &(usize, u64), f: &mut impl FnMut((usize, u64))) {
        if k == 0 {
            return;
        }
        if y >= 1 {
            f((k, y - 1));
        }
        if y >= 2 && (y - 2) % 7 == 3 {
            f((k, y - 2));
        }
    }
    fn wide_values(&self, layer: usize) -> bool {
        layer >= self.wide_from
    }
    fn counter_bound(&self, _layer: usize) -> Option<u32> {
        self.bound
    }
}

#[test]
fn layers_deeper_than_one_byte_get_two_bytes_a_position_whatever_the_hint() {
    let game = |wide_from| Walk {
        layers: 7,
        m: 61,
        wide_from,
        bound: None,
    };
    assert_eq!(check_rules(&game(7), 500, 1), Vec::<String>::new());
    let want = naive(&game(7));
    // Some layers fit one byte, the deep ones take two.
    let widths: Vec<Option<bool>> = want.iter().map(|v| is_wide(v, 61)).collect();
    assert!(
        widths.contains(&Some(false)) && widths.contains(&Some(true)),
        "{widths:?}"
    );
    let deepest = want
        .iter()
        .filter(|v| is_wide(v, 61) == Some(true))
        .map(|v| {
            LayerStats::of_layer(v, 61)
                .max_win_depth
                .max(LayerStats::of_layer(v, 61).max_loss_depth)
        })
        .max()
        .unwrap();
    assert!(deepest > 200, "{deepest}");
    // No hint (one byte tried first, solved again on overflow), every
    // layer hinted, and only the top ones: the naive solver's bytes.
    for wide_from in [7, 0, 3] {
        for threads in [1, 3] {
            let got = solve_all(&game(wide_from), threads).unwrap();
            assert_eq!(got, want, "hint from layer {wide_from}, {threads} threads");
        }
    }
    // The values read back through `value_at` for both widths.
    for (l, v) in want.iter().enumerate() {
        let wide = is_wide(v, 61).unwrap();
        let s = LayerStats::of_layer(v, 61);
        let n = (0..61)
            .filter(|&r| matches!(value_at(v, wide, r), Some(Value::Win(_))))
            .count();
        assert_eq!(n as u64, s.wins, "layer {l}");
    }
}

#[test]
fn two_byte_codes_round_trip() {
    for w in 0..=u16::MAX {
        match Value::from_wide(w) {
            Some(v) => assert_eq!(v.to_wide(), w),
            None => assert!(
                (1..WIDE_WIN_BASE).contains(&w) || w > WIDE_LOSS_BASE + WIDE_MAX_DEPTH,
                "{w}"
            ),
        }
    }
    assert_eq!(Value::Win(300).to_wide(), WIDE_WIN_BASE + 300);
    assert_eq!(
        Value::from_byte(LOSS_BASE + 7),
        Value::from_wide(WIDE_LOSS_BASE + 7)
    );
}

/// With a counter bound of at most 15 the counters live in the value cells:
/// the bytes are those of the naive solver and of the plain solve (with
/// cycles, on 1 and 3 threads, and with symmetry reduction); a bound the
/// game breaks is found by the self-test (the engine itself refuses only a
/// counter past 15, which no game here reaches).
#[test]
fn counters_kept_in_the_value_cells_give_the_same_bytes() {
    for m in [7, 31, 64] {
        let g = Ring {
            bound: Some(3),
            ..Ring::new(6, m)
        };
        assert_eq!(check_rules(&g, 200, 5), Vec::<String>::new());
        let want = naive(&g);
        for t in [1, 3] {
            assert_eq!(solve_all(&g, t).unwrap(), want, "ring of {m}, {t} threads");
        }
    }
    let big = Ring {
        ring: 10,
        bound: Some(3),
        ..Ring::new(4, 5 * BLOCK + 17)
    };
    let plain = Ring {
        bound: None,
        ..Ring::new(4, 5 * BLOCK + 17)
    };
    let plain = Ring { ring: 10, ..plain };
    assert_eq!(solve_all(&big, 3).unwrap(), solve_all(&plain, 1).unwrap());
    let mut twin = TwinRing::new(4, 9, true);
    let want = solve_all(&TwinRing::new(4, 9, false), 1).unwrap();
    twin.ring.bound = Some(3);
    assert_eq!(solve_all(&twin, 2).unwrap(), want);
    // A bound of 1: a position with two in-layer moves breaks it.
    let broken = Ring {
        bound: Some(1),
        ..Ring::new(4, 31)
    };
    let problems = check_rules(&broken, 200, 5);
    assert!(
        problems.iter().any(|p| p.contains("past counter_bound 1")),
        "{problems:?}"
    );
    // The engine needs only that every counter fits a cell (at most 15).
    assert_eq!(solve_all(&broken, 1).unwrap(), naive(&broken));
}

/// Two-byte cells hold counters up to 255 (their codes moved up while
/// solving): 21 in-layer moves and a drawn move out counted in the cells
/// give the naive solver's bytes and those of a counter byte a position, on
/// 1 and 3 threads, split over 3 ranks, with draws, with symmetry
/// reduction, and for layers deeper than one byte holds.
#[test]
fn two_byte_cells_keep_counters_past_15_in_the_cells() {
    for draws in [false, true] {
        let fan = |bound, wide| Ring {
            fan: 20,
            bound,
            wide,
            draws,
            ring: 10,
            ..Ring::new(4, 2 * BLOCK + 33)
        };
        let inline = fan(Some(23), true);
        assert_eq!(check_rules(&inline, 300, 5), Vec::<String>::new());
        let want = naive(&inline);
        assert_eq!(solve_all(&fan(None, false), 1).unwrap(), want);
        assert_eq!(solve_all(&fan(None, true), 1).unwrap(), want);
        for t in [1, 3] {
            assert_eq!(
                solve_all(&inline, t).unwrap(),
                want,
                "draws {draws}, {t} threads"
            );
        }
        assert_eq!(split_all(&inline, 3, 2, 64).unwrap(), want);
        // One-byte cells cannot hold 23: a counter byte is kept.
        assert_eq!(solve_all(&fan(Some(23), false), 2).unwrap(), want);
    }
    let mut twin = TwinRing::new(4, 9, true);
    let want = solve_all(&TwinRing::new(4, 9, false), 1).unwrap();
    twin.ring.bound = Some(3);
    twin.ring.wide = true;
    assert_eq!(solve_all(&twin, 2).unwrap(), want);
    // Deeper than a byte: the stored codes are those of `Value::to_wide`.
    let walk = |bound| Walk {
        layers: 5,
        m: 61,
        wide_from: 0,
        bound,
    };
    let want = naive(&walk(None));
    assert!(want.iter().any(|v| is_wide(v, 61) == Some(true)));
    assert_eq!(solve_all(&walk(Some(2)), 2).unwrap(), want);
}

/// Every layer of `game` solved split over `ranks` ranks (threads of a
/// [`Mesh`], `threads` threads each, trading every `batch` updates), the
/// child layers from the split solve too.
fn split_all<G: LayeredGame>(
    game: &G,
    ranks: usize,
    threads: usize,
    batch: usize,
) -> Result<Vec<Vec<u8>>, SolveError> {
    let mut done: Vec<Option<Vec<u8>>> = vec![None; game.layer_count()];
    for l in solve_order(game) {
        let kids = game.child_layers(l);
        let below: Vec<(usize, &[u8])> = kids
            .iter()
            .filter_map(|&c| done[c].as_deref().map(|b| (c, b)))
            .collect();
        let v = solve_in_mesh(game, l, &below, ranks, threads, batch)?;
        done[l] = Some(v);
    }
    Ok(done.into_iter().map(Option::unwrap_or_default).collect())
}

/// A layer split over 1–4 ranks (and more ranks than blocks: empty parts)
/// gives the bytes of the unsplit solve: with cycles and draws, with
/// counters in the value cells, with symmetry reduction (images of a
/// canonical position owned by other ranks), with two-byte values found
/// by overflow, trading after every update or once a round.
#[test]
fn a_layer_split_over_ranks_gives_the_unsplit_bytes() {
    let big = Ring {
        ring: 10,
        ..Ring::new(4, 5 * BLOCK + 17)
    };
    let inline = Ring {
        bound: Some(3),
        ..Ring::new(4, 3 * BLOCK + 5)
    };
    let drawn = Ring {
        draws: true,
        ..Ring::new(5, 2 * BLOCK + 9)
    };
    let walk = Walk {
        layers: 3,
        m: BLOCK + 100,
        wide_from: 3,
        bound: None,
    };
    for (what, want, got) in [
        ("ring", solve_all(&big, 1), split_all(&big, 3, 2, 1 << 20)),
        ("ring", solve_all(&big, 1), split_all(&big, 4, 1, 1)),
        ("ring", solve_all(&big, 1), split_all(&big, 2, 1, 100)),
        (
            "inline",
            solve_all(&inline, 1),
            split_all(&inline, 3, 2, 50),
        ),
        ("drawn", solve_all(&drawn, 1), split_all(&drawn, 4, 1, 7)),
        ("walk", solve_all(&walk, 1), split_all(&walk, 2, 2, 1000)),
        (
            "small",
            naive(&Ring::new(4, 31)).into_iter().map(Ok).collect(),
            split_all(&Ring::new(4, 31), 3, 1, 1),
        ),
    ] {
        assert_eq!(got.unwrap(), want.unwrap(), "{what}");
    }
    assert!(
        split_all(&walk, 2, 1, 1000)
            .unwrap()
            .iter()
            .any(|v| v.len() as u64 == 2 * walk.m)
    );
    let plain = solve_all(&TwinRing::new(4, 181, false), 2).unwrap();
    for (ranks, batch) in [(2, 1 << 20), (3, 64), (4, 1)] {
        let got = split_all(&TwinRing::new(4, 181, true), ranks, 1, batch).unwrap();
        assert_eq!(got, plain, "{ranks} ranks, batch {batch}");
    }
}

/// A broken contract found by one rank fails every rank: the finder names
/// the position, the others say another rank failed.
#[test]
fn a_broken_contract_on_one_rank_stops_every_rank() {
    // Only the last of three ranks owns positions with a stray parent.
    let g = Ring {
        stray_from: 3 * BLOCK,
        ring: 10,
        ..Ring::new(3, 4 * BLOCK)
    };
    // The first layer the unsplit solve refuses, its children solved.
    let mut done: Vec<Vec<u8>> = vec![Vec::new(); 4];
    let (layer, unsplit) = solve_order(&g)
        .into_iter()
        .find_map(|l| {
            let below: Vec<(usize, &[u8])> = g
                .child_layers(l)
                .iter()
                .map(|&c| (c, &done[c][..]))
                .collect();
            match solve_layer(&g, l, &below, 1) {
                Ok(v) => {
                    done[l] = v;
                    None
                }
                Err(e) => Some((l, e)),
            }
        })
        .expect("the broken game was solved");
    assert!(
        matches!(unsplit, SolveError::Contract { .. }),
        "{unsplit:?}"
    );
    let below: Vec<(usize, &[u8])> = g
        .child_layers(layer)
        .iter()
        .map(|&c| (c, &done[c][..]))
        .collect();
    let mesh = Mesh::new(3, 1 << 20);
    let errs: Vec<SolveError> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..3)
            .map(|k| {
                let mut ex = mesh.rank(k);
                let (g, below) = (&g, &below);
                s.spawn(move || {
                    solve_part(g, layer, below, 1, &mut ex, &mut split::NoCheckpoints).unwrap_err()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        errs.iter()
            .any(|e| matches!(e, SolveError::Contract { .. })),
        "{errs:?}"
    );
    assert!(
        errs.iter().all(|e| matches!(
            e,
            SolveError::Contract { .. } | SolveError::OtherRank { .. }
        )),
        "{errs:?}"
    );
}

/// Checkpoints kept in memory: one every `every` rounds; saving round
/// `stop` or later fails (a crash); `resumed` notes the round loaded.
#[derive(Clone, Default)]
struct MemStore {
    every: u32,
    stop: u32,
    now: u32,
    saved: std::collections::BTreeMap<(bool, u32), Vec<Vec<u8>>>,
    resumed: Option<u32>,
    /// Loading fails (a damaged checkpoint).
    damaged: bool,
    discarded: bool,
}

impl split::Checkpoints for MemStore {
    fn round(&mut self, round: u32) {
        self.now = round;
    }
    fn due(&mut self) -> bool {
        self.now > 0 && self.now.is_multiple_of(self.every)
    }
    fn save(&mut self, wide: bool, round: u32, parts: &[&[u8]]) -> Result<(), String> {
        if round >= self.stop {
            return Err(format!("stopped at round {round}"));
        }
        self.saved
            .insert((wide, round), parts.iter().map(|p| p.to_vec()).collect());
        Ok(())
    }
    fn saved(&self, wide: bool) -> Vec<u32> {
        self.saved
            .keys()
            .filter(|k| k.0 == wide)
            .map(|k| k.1)
            .collect()
    }
    fn load(&mut self, wide: bool, round: u32, into: &mut [&mut [u8]]) -> Result<(), String> {
        if self.damaged {
            // Half written over, as a torn file would be.
            into[0].fill(7);
            return Err("damaged".into());
        }
        let parts = &self.saved[&(wide, round)];
        for (to, from) in into.iter_mut().zip(parts) {
            to.copy_from_slice(from);
        }
        self.resumed = Some(round);
        Ok(())
    }
    fn keep_from(&mut self, round: u32) {
        self.saved.retain(|k, _| k.1 >= round);
    }
    fn discard(&mut self, _why: &str) {
        self.saved.clear();
        self.discarded = true;
    }
}

/// Solves `layer` split over `ranks` mesh ranks with a checkpoint store
/// each: every rank's result and store.
fn mesh_with_stores<G: LayeredGame>(
    game: &G,
    layer: usize,
    below: &[(usize, &[u8])],
    stores: Vec<MemStore>,
) -> Vec<(Result<Vec<u8>, SolveError>, MemStore)> {
    let mesh = Mesh::new(stores.len(), 64);
    std::thread::scope(|s| {
        let hs: Vec<_> = stores
            .into_iter()
            .enumerate()
            .map(|(k, mut st)| {
                let mut ex = mesh.rank(k);
                s.spawn(move || (solve_part(game, layer, below, 1, &mut ex, &mut st), st))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// A solve stopped after a checkpoint (saving a later round fails, as a
/// crash would end it) resumes from the newest round every rank saved and
/// gives the bytes of a solve never stopped: one rank and three, one-byte
/// and two-byte cells, counters in the cells, symmetry reduction.
#[test]
fn a_solve_resumed_from_a_checkpoint_gives_the_same_bytes() {
    fn check<G: LayeredGame>(what: &str, game: &G, every: u32, stop: u32) {
        let want = solve_all(game, 1).unwrap();
        let l = solve_order(game).into_iter().last().unwrap();
        let below: Vec<(usize, &[u8])> = game
            .child_layers(l)
            .iter()
            .map(|&c| (c, &want[c][..]))
            .collect();
        for ranks in [1, 3] {
            let fresh = MemStore {
                every,
                stop,
                ..MemStore::default()
            };
            let first = mesh_with_stores(game, l, &below, vec![fresh; ranks]);
            assert!(
                first
                    .iter()
                    .all(|(r, _)| matches!(r, Err(SolveError::Checkpoint { .. }))),
                "{what}: the solve was not stopped"
            );
            let stores: Vec<MemStore> = first
                .into_iter()
                .map(|(_, st)| MemStore {
                    stop: u32::MAX,
                    ..st
                })
                .collect();
            let second = mesh_with_stores(game, l, &below, stores.clone());
            let mut got = Vec::new();
            for (r, st) in second {
                assert!(st.resumed.is_some(), "{what}: not resumed");
                got.extend(r.unwrap());
            }
            assert_eq!(got, want[l], "{what}, {ranks} ranks");
            // One rank's checkpoint damaged: every rank starts again, and
            // the bytes are the same.
            let mut stores = stores;
            stores[ranks - 1].damaged = true;
            let third = mesh_with_stores(game, l, &below, stores);
            let mut got = Vec::new();
            for (r, st) in third {
                assert!(st.discarded, "{what}: a damaged checkpoint was kept");
                got.extend(r.unwrap());
            }
            assert_eq!(got, want[l], "{what}, {ranks} ranks, damaged");
        }
    }
    check(
        "ring",
        &Ring {
            ring: 10,
            ..Ring::new(3, 3 * BLOCK + 17)
        },
        2,
        5,
    );
    check(
        "inline",
        &Ring {
            bound: Some(3),
            ring: 10,
            ..Ring::new(3, 2 * BLOCK + 5)
        },
        3,
        7,
    );
    check("twin", &TwinRing::new(3, 181, true), 2, 5);
    check(
        "walk",
        &Walk {
            layers: 2,
            m: BLOCK + 100,
            wide_from: 0,
            bound: None,
        },
        50,
        2000,
    );
}

/// The reachable bits of a layer split over 1–4 ranks are those of the
/// unsplit closure (with symmetry classes filled in across parts).
#[test]
fn reachable_bits_split_over_ranks_are_the_unsplit_bits() {
    fn check<G: LayeredGame>(what: &str, game: &G, start: G::Position) {
        let want = reach_all(game, start, 1);
        let parents = parent_layers(game);
        for ranks in [1, 2, 3, 4] {
            for l in 0..game.layer_count() {
                let ins: Vec<(usize, &[u64])> =
                    parents[l].iter().map(|&p| (p, &want[p][..])).collect();
                let mesh = Mesh::new(ranks, 1 << 20);
                let parts: Vec<Vec<u64>> = std::thread::scope(|s| {
                    let hs: Vec<_> = (0..ranks)
                        .map(|k| {
                            let mut ex = mesh.rank(k);
                            let ins = &ins;
                            s.spawn(move || {
                                reach::reach_part(game, l, ins, Some(start), 2, &mut ex).unwrap()
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap()).collect()
                });
                assert_eq!(parts.concat(), want[l], "{what}, layer {l}, {ranks} ranks");
            }
        }
    }
    let ring = Ring {
        ring: 10,
        ..Ring::new(3, 3 * BLOCK + 17)
    };
    check("ring", &ring, (3, 5));
    check("twin", &TwinRing::new(3, 181, true), (3, 7, 7));
}
