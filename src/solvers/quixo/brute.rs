//! Brute-force solvers for the tests only: a naive one for 2×2 and 3×3 that
//! shares nothing with the module (its own grid, moves and lines, absolute
//! colours, every one of the 3^(n²)·2 positions), and one over the module's
//! own rules, un-moves and ranks (every board of the chosen layers) that the
//! naive one checks, that runs 4×4 (`#[ignore]`), and the full 5×5 layers
//! against the per-layer table of the paper's authors (`#[ignore]`).
//!
//! Both are retrograde analysis by successor counting with a FIFO queue
//! started from every finished position (depth 0): a position is a win in
//! d + 1 as soon as one child is a loss in d, a loss in d + 1 when its last
//! child turns out a win in d; the queue hands out positions in order of
//! depth, so a win takes the shortest and a loss the longest line. What is
//! never decided is a draw.

use super::index::{Layer, layers};
use super::{Board, Outcome, Rules, Symmetry};
use crate::solvers::engine::placement::rank_pair;

/// A set of indices, one bit each (small enough to stay in cache).
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)])
    }
    #[inline]
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    /// Sets bit i; whether it was clear.
    #[inline]
    fn insert(&mut self, i: usize) -> bool {
        let was = self.get(i);
        self.0[i / 64] |= 1 << (i % 64);
        !was
    }
}

/// Value codes.
const DRAW: u8 = 0;
const WIN: u8 = 1;
const LOSS: u8 = 2;

/// A solved table: value (`DRAW`, `WIN`, `LOSS` for the player to move) and
/// depth in plies per position.
struct Table {
    value: Vec<u8>,
    depth: Vec<u16>,
}

/// Counts of one set of positions.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    win: u64,
    loss: u64,
    draw: u64,
}

impl Counts {
    fn add(&mut self, v: u8) {
        match v {
            WIN => self.win += 1,
            LOSS => self.loss += 1,
            _ => self.draw += 1,
        }
    }
    fn total(&self) -> u64 {
        self.win + self.loss + self.draw
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} positions: {} wins, {} losses, {} draws (for the player to move)",
            self.total(),
            self.win,
            self.loss,
            self.draw
        )
    }
}

// ---------------------------------------------------------------------------
// The naive solver: a grid of n×n cells, row 0 at the TOP (unlike the
// module), cells 0 blank, 1 X, 2 O; position index = ternary(grid)·2 + side
// (0 = X to move, 1 = O).

struct Naive {
    n: usize,
}

impl Naive {
    fn positions(&self) -> usize {
        3usize.pow((self.n * self.n) as u32) * 2
    }

    fn decode(&self, i: usize) -> (Vec<u8>, u8) {
        let side = (i % 2) as u8;
        let mut t = i / 2;
        let mut g = vec![0u8; self.n * self.n];
        for cell in g.iter_mut() {
            *cell = (t % 3) as u8;
            t /= 3;
        }
        (g, side)
    }

    fn encode(&self, g: &[u8], side: u8) -> usize {
        let mut t = 0usize;
        for &c in g.iter().rev() {
            t = t * 3 + c as usize;
        }
        t * 2 + side as usize
    }

    fn line_of(&self, g: &[u8], sym: u8) -> bool {
        let n = self.n;
        let at = |r: usize, c: usize| g[r * n + c];
        (0..n).any(|r| (0..n).all(|c| at(r, c) == sym))
            || (0..n).any(|c| (0..n).all(|r| at(r, c) == sym))
            || (0..n).all(|i| at(i, i) == sym)
            || (0..n).all(|i| at(i, n - 1 - i) == sym)
    }

    /// Finished? The player to move wins on a line of their own symbol,
    /// else loses on a line of the opponent's.
    fn terminal(&self, g: &[u8], side: u8) -> Option<u8> {
        let me = side + 1;
        let you = 2 - side;
        if self.line_of(g, me) {
            Some(WIN)
        } else if self.line_of(g, you) {
            Some(LOSS)
        } else {
            None
        }
    }

    /// The children of a position (one per legal move, duplicates kept).
    fn children(&self, g: &[u8], side: u8) -> Vec<usize> {
        let n = self.n;
        let me = side + 1;
        let mut out = Vec::new();
        for r in 0..n {
            for c in 0..n {
                if !(r == 0 || c == 0 || r == n - 1 || c == n - 1) {
                    continue;
                }
                let v = g[r * n + c];
                if v != 0 && v != me {
                    continue;
                }
                // Push in at the left end of row r (if the cube is not there).
                if c != 0 {
                    let mut h = g.to_vec();
                    for k in (1..=c).rev() {
                        h[r * n + k] = h[r * n + k - 1];
                    }
                    h[r * n] = me;
                    out.push(self.encode(&h, 1 - side));
                }
                if c != n - 1 {
                    let mut h = g.to_vec();
                    for k in c..n - 1 {
                        h[r * n + k] = h[r * n + k + 1];
                    }
                    h[r * n + n - 1] = me;
                    out.push(self.encode(&h, 1 - side));
                }
                // Push in at the top of column c.
                if r != 0 {
                    let mut h = g.to_vec();
                    for k in (1..=r).rev() {
                        h[k * n + c] = h[(k - 1) * n + c];
                    }
                    h[c] = me;
                    out.push(self.encode(&h, 1 - side));
                }
                if r != n - 1 {
                    let mut h = g.to_vec();
                    for k in r..n - 1 {
                        h[k * n + c] = h[(k + 1) * n + c];
                    }
                    h[(n - 1) * n + c] = me;
                    out.push(self.encode(&h, 1 - side));
                }
            }
        }
        out
    }

    fn solve(&self) -> Table {
        let np = self.positions();
        let mut value = vec![DRAW; np];
        let mut depth = vec![0u16; np];
        let mut left = vec![0u32; np];
        let mut terminal = vec![false; np];
        let mut edges: Vec<(u32, u32)> = Vec::new(); // (child, parent)
        let mut queue = std::collections::VecDeque::new();
        for i in 0..np {
            let (g, side) = self.decode(i);
            if let Some(v) = self.terminal(&g, side) {
                value[i] = v;
                terminal[i] = true;
                queue.push_back(i);
                continue;
            }
            let ch = self.children(&g, side);
            assert!(!ch.is_empty());
            left[i] = ch.len() as u32;
            for c in ch {
                edges.push((c as u32, i as u32));
            }
        }
        edges.sort_unstable();
        let mut start = vec![0usize; np + 1];
        for &(c, _) in &edges {
            start[c as usize + 1] += 1;
        }
        for i in 0..np {
            start[i + 1] += start[i];
        }
        let mut decided = terminal.clone();
        while let Some(c) = queue.pop_front() {
            for &(_, p) in &edges[start[c]..start[c + 1]] {
                let p = p as usize;
                if decided[p] {
                    continue;
                }
                if value[c] == LOSS {
                    value[p] = WIN;
                    depth[p] = depth[c] + 1;
                    decided[p] = true;
                    queue.push_back(p);
                } else {
                    left[p] -= 1;
                    if left[p] == 0 {
                        value[p] = LOSS;
                        depth[p] = depth[c] + 1;
                        decided[p] = true;
                        queue.push_back(p);
                    }
                }
            }
        }
        Table { value, depth }
    }

    /// The module's board for naive position `i` (cell (row r, col c) is
    /// module cell c + n·(n−1−r)).
    fn to_board(&self, i: usize) -> Board {
        let n = self.n;
        let (g, side) = self.decode(i);
        let me = side + 1;
        let mut b = Board::EMPTY;
        for r in 0..n {
            for c in 0..n {
                let bit = 1u32 << (c + n * (n - 1 - r));
                match g[r * n + c] {
                    0 => {}
                    v if v == me => b.mine |= bit,
                    _ => b.theirs |= bit,
                }
            }
        }
        b
    }

    /// Positions reachable from the start (X to move, all blank), not
    /// moving on from finished ones.
    fn reachable(&self) -> Vec<bool> {
        let mut seen = vec![false; self.positions()];
        let start = 0; // all blank, X to move
        seen[start] = true;
        let mut stack = vec![start];
        while let Some(i) = stack.pop() {
            let (g, side) = self.decode(i);
            if self.terminal(&g, side).is_some() {
                continue;
            }
            for c in self.children(&g, side) {
                if !seen[c] {
                    seen[c] = true;
                    stack.push(c);
                }
            }
        }
        seen
    }
}

// ---------------------------------------------------------------------------
// The solver over the module: every board of every layer, index = the
// layer's offset + rank.

struct Indexed {
    layers: Vec<(Layer, u64)>, // (layer, offset), by offset
    /// `by_counts[26·a + b]` = (offset, `C(N − a, b)`) of layer (a, b).
    by_counts: Vec<(u64, u64)>,
    full: u32,
}

impl Indexed {
    /// Every layer of the n×n board.
    fn new(n: usize) -> Indexed {
        let ix = Indexed::of_layers(n, &layers(n));
        assert_eq!(ix.total(), 3u64.pow((n * n) as u32));
        ix
    }

    /// The given layers only. A solve over them is exact if the moves of
    /// their boards stay among them; predecessors outside are skipped.
    fn of_layers(n: usize, list: &[(usize, usize)]) -> Indexed {
        let cells = n * n;
        let mut by_counts = vec![(u64::MAX, 0); 26 * 26];
        let mut v = Vec::new();
        let mut off = 0;
        for &(a, b) in list {
            let l = Layer::new(n, a, b).unwrap();
            by_counts[26 * a + b] = (off, l.theirs_ranks());
            v.push((l, off));
            off += l.size();
        }
        Indexed {
            layers: v,
            by_counts,
            full: ((1u64 << cells) - 1) as u32,
        }
    }

    fn total(&self) -> u64 {
        let (l, o) = self.layers.last().unwrap();
        o + l.size()
    }

    #[inline]
    fn index(&self, b: Board) -> u64 {
        self.find(b).expect("a board of an indexed layer")
    }

    /// The index of `b`, or `None` if its layer is not indexed.
    #[inline]
    fn find(&self, b: Board) -> Option<u64> {
        let (a, bb) = b.layer();
        let (o, t) = self.by_counts[26 * a + bb];
        (o != u64::MAX).then(|| {
            o + rank_pair(
                u64::from(b.mine),
                u64::from(b.theirs),
                t,
                u64::from(self.full),
            )
        })
    }

    #[inline]
    fn board(&self, i: u64) -> Board {
        let k = self.layers.partition_point(|&(_, o)| o <= i) - 1;
        let (l, o) = self.layers[k];
        l.unrank(i - o)
    }

    /// Every (index, board), in index order.
    fn all(&self) -> impl Iterator<Item = (u64, Board)> + '_ {
        self.layers
            .iter()
            .flat_map(|&(l, o)| l.boards().enumerate().map(move |(r, b)| (o + r as u64, b)))
    }
}

/// One position's state in [`solve_indexed`], packed in a byte: bits 0–1
/// the value (`OPEN`, `WIN`, `LOSS`), bits 2–7 the moves not yet known to
/// lead to a win of the opponent (at most 32). Depths, written once per
/// position, live apart so that the byte array stays small in cache.
const OPEN: u8 = 3;

fn solve_indexed(r: &Rules, ix: &Indexed) -> Table {
    let np = ix.total() as usize;
    let mut state = vec![0u8; np];
    let mut depth = vec![0u8; np];
    // Level by level (all positions decided at depth d, then d + 1), each
    // level sorted by index: the parents of one layer's positions lie in
    // two layers, so the look-ups of a stretch of the level stay in cache.
    // Within a level the order does not change any value or depth.
    let mut level: Vec<(u32, Board)> = Vec::new();
    for (i, b) in ix.all() {
        state[i as usize] = match r.outcome(b) {
            Some(Outcome::Win) => {
                level.push((i as u32, b));
                WIN
            }
            Some(Outcome::Loss) => {
                level.push((i as u32, b));
                LOSS
            }
            None => OPEN | (r.moves(b).count() as u8) << 2,
        };
    }
    let mut d: u8 = 0;
    while !level.is_empty() {
        let d1 = d.checked_add(1).expect("depth fits a byte");
        let mut next = Vec::new();
        for &(c, cb) in &level {
            let cv = state[c as usize] & 3;
            for (p, _) in r.predecessors(cb) {
                if r.outcome(p).is_some() {
                    continue; // finished from the start (cheaper than a look-up)
                }
                let Some(j) = ix.find(p) else {
                    continue; // a layer outside the index
                };
                let j = j as usize;
                let st = state[j];
                if st & 3 != OPEN {
                    continue; // decided
                }
                if cv == LOSS {
                    state[j] = WIN;
                    depth[j] = d1;
                    next.push((j as u32, p));
                } else if st >> 2 == 1 {
                    state[j] = LOSS;
                    depth[j] = d1;
                    next.push((j as u32, p));
                } else {
                    state[j] = st - (1 << 2);
                }
            }
        }
        next.sort_unstable_by_key(|&(j, _)| j);
        level = next;
        d = d1;
    }
    let value = state
        .iter()
        .map(|&st| if st & 3 == OPEN { DRAW } else { st & 3 })
        .collect();
    Table {
        value,
        depth: depth.into_iter().map(u16::from).collect(),
    }
}

/// Everything the tests report for one board size.
struct Summary {
    all: Counts,
    classes: Counts,
    reachable: Counts,
    reachable_classes: Counts,
    start: (u8, u16),
    first_moves: Vec<(String, u8, u16)>,
    longest_win: u16,
    longest_loss: u16,
}

fn summarise(r: &Rules, ix: &Indexed, t: &Table) -> Summary {
    let np = ix.total() as usize;
    // Reachable boards (seen by the player to move) from the empty board,
    // not moving on from finished ones.
    let mut seen = Bits::new(np);
    let start = ix.index(Board::EMPTY) as usize;
    seen.insert(start);
    let mut stack = vec![Board::EMPTY];
    while let Some(b) = stack.pop() {
        if r.outcome(b).is_some() {
            continue;
        }
        for (_, c) in r.children(b) {
            if seen.insert(ix.index(c) as usize) {
                stack.push(c);
            }
        }
    }
    let mut all = Counts::default();
    let mut reachable = Counts::default();
    let mut classes = Counts::default();
    let mut reachable_classes = Counts::default();
    let (mut longest_win, mut longest_loss) = (0, 0);
    // Each symmetry class once, at its first index: mark the orbit.
    let mut marked = Bits::new(np);
    for (i, b) in ix.all() {
        let i = i as usize;
        let v = t.value[i];
        all.add(v);
        if seen.get(i) {
            reachable.add(v);
        }
        match v {
            WIN => longest_win = longest_win.max(t.depth[i]),
            LOSS => longest_loss = longest_loss.max(t.depth[i]),
            _ => {}
        }
        if marked.get(i) {
            continue;
        }
        let mut any_seen = false;
        for s in Symmetry::ALL {
            let j = ix.index(r.transform(b, s)) as usize;
            assert_eq!(
                (t.value[j], t.depth[j]),
                (v, t.depth[i]),
                "values are symmetric"
            );
            marked.insert(j);
            any_seen |= seen.get(j);
        }
        classes.add(v);
        if any_seen {
            reachable_classes.add(v);
        }
    }
    let first_moves = r
        .children(Board::EMPTY)
        .map(|(mv, c)| {
            let j = ix.index(c) as usize;
            (r.move_name(mv), t.value[j], t.depth[j])
        })
        .collect();
    Summary {
        all,
        classes,
        reachable,
        reachable_classes,
        start: (t.value[start], t.depth[start]),
        first_moves,
        longest_win,
        longest_loss,
    }
}

fn value_name(v: u8) -> &'static str {
    match v {
        WIN => "win",
        LOSS => "loss",
        _ => "draw",
    }
}

fn report(n: usize, s: &Summary) {
    println!("Quixo {n}x{n}:");
    println!(
        "  start (empty board, X to move): {} in {} plies",
        value_name(s.start.0),
        s.start.1
    );
    println!(
        "  all boards seen by the player to move (= positions up to the colour swap): {}",
        s.all
    );
    println!("  ... up to the 8 symmetries (classes): {}", s.classes);
    println!(
        "  reachable from the start (boards seen by the player to move): {}",
        s.reachable
    );
    println!("  ... up to the 8 symmetries: {}", s.reachable_classes);
    println!(
        "  longest win {} plies, longest loss {} plies",
        s.longest_win, s.longest_loss
    );
    let mut line = String::from("  first moves (value for the opponent, then X's result): ");
    for (m, v, d) in &s.first_moves {
        line += &format!(
            "{m} {}{d} ",
            match *v {
                WIN => "L", // the child is a win for O: a losing move for X
                LOSS => "W",
                _ => "D",
            }
        );
    }
    println!("{line}");
}

/// The naive solver and the module's agree on every position of 2×2 and
/// 3×3 (value and depth), and values are the same for all 8 images.
#[test]
fn naive_brute_force_agrees_with_the_rules_on_every_position() {
    for n in [2, 3] {
        let naive = Naive { n };
        let nt = naive.solve();
        let r = Rules::new(n).unwrap();
        let ix = Indexed::new(n);
        let t = solve_indexed(&r, &ix);
        let mut raw = Counts::default();
        for i in 0..naive.positions() {
            let b = naive.to_board(i);
            let j = ix.index(b) as usize;
            assert_eq!(
                (nt.value[i], nt.depth[i]),
                (t.value[j], t.depth[j]),
                "{n}x{n} naive position {i}"
            );
            raw.add(nt.value[i]);
        }
        // Symmetry invariance.
        for i in 0..ix.total() {
            let b = ix.board(i);
            for s in Symmetry::ALL {
                let j = ix.index(r.transform(b, s)) as usize;
                assert_eq!(
                    (t.value[i as usize], t.depth[i as usize]),
                    (t.value[j], t.depth[j])
                );
            }
        }
        let reach = naive.reachable();
        let mut raw_reach = Counts::default();
        for (i, &seen) in reach.iter().enumerate() {
            if seen {
                raw_reach.add(nt.value[i]);
            }
        }
        let s = summarise(&r, &ix, &t);
        report(n, &s);
        println!(
            "  naive solver, raw positions (board and absolute colour to move, 3^{} x 2): {raw}",
            n * n
        );
        println!("  naive solver, raw positions reachable from the start: {raw_reach}");
        assert_eq!(raw.total(), 2 * 3u64.pow((n * n) as u32));
        // Each board seen by the player to move is two raw positions.
        assert_eq!(raw.win, 2 * s.all.win);
        assert_eq!(raw.loss, 2 * s.all.loss);
        assert_eq!(raw.draw, 2 * s.all.draw);
    }
}

/// Published: Tanaka, Bonnet, Tixeuil, Tamura, "Quixo Is Solved" (ACG 2021,
/// LNCS 13262; arXiv 2007.15895) analyses 3×3 and 4×4 besides 5×5. Only
/// the abstracts could be read here: the Japanese version ("Quixoの強解決",
/// GPW 2020, IPSJ proceedings pp. 181–188) says in its abstract that for
/// 4×4 and 3×3 it "made concrete winning sequences clear" (具体的な勝利手順を
/// 明らかにした): neither start is a draw. The page of the paper's results
/// for the small boards is not verified. Computed here: the first player
/// wins the 3×3 start in 7 plies (the 4×4 start in 21, `four_by_four_brute_force`).
#[test]
fn published_3x3_start_is_won_by_the_first_player() {
    let r = Rules::new(3).unwrap();
    let ix = Indexed::new(3);
    let t = solve_indexed(&r, &ix);
    let s = ix.index(Board::EMPTY) as usize;
    assert_eq!((value_name(t.value[s]), t.depth[s]), ("win", 7));
}

/// CPU seconds (user + system) of this process so far, from
/// `/proc/self/stat` (Linux; 0 elsewhere). Assumes 100 clock ticks a second.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |k: usize| {
        f.get(k - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (tick(14) + tick(15)) / 100.0
}

/// 4×4 by brute force over all 43,046,721 boards (release: `cargo test
/// --release -- --ignored four_by_four`). Published (see
/// `published_3x3_start_is_won_by_the_first_player`): not a draw. Computed:
/// the first player wins in 21 plies. Values and depths are checked to be
/// the same on all 8 images of every board.
#[test]
#[ignore = "4x4 brute force: release build, about a minute of CPU, 0.4 GB"]
fn four_by_four_brute_force() {
    let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
    let r = Rules::new(4).unwrap();
    let ix = Indexed::new(4);
    let t = solve_indexed(&r, &ix);
    let (solve_wall, solve_cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
    let s = summarise(&r, &ix, &t);
    report(4, &s);
    println!("  solve {solve_wall:.1} s wall, {solve_cpu:.1} s CPU (one thread)");
    println!(
        "  with reachability, symmetry classes and the summary: {:.1} s wall, {:.1} s CPU",
        t0.elapsed().as_secs_f64(),
        cpu_seconds() - c0
    );
    assert_eq!(s.all.total(), 43_046_721);
    assert_eq!((value_name(s.start.0), s.start.1), ("win", 21));
    assert_eq!(
        (s.all.win, s.all.loss, s.all.draw),
        (26_434_489, 15_003_736, 1_608_496)
    );
}

/// The full 5×5 layers (no blank cube: a + b = 25) are closed under moves:
/// solve all 2^25 boards and compare each layer's win / loss / draw counts
/// with the per-layer table of the paper's authors, file
/// `python/result-5by5-activeIsO.txt` of github.com/st34-satoshi/quixo-cpp
/// (commit 9d71c50; counts of all boards with O to move, x X cubes and o O
/// cubes, no symmetry). O to move with (x, o) is our layer (a, b) = (o, x).
#[test]
#[ignore = "5x5 full layers: release build, about a minute of CPU"]
fn five_by_five_full_layers_match_the_authors_table() {
    let (t0, c0) = (std::time::Instant::now(), cpu_seconds());
    let r = Rules::new(5).unwrap();
    let full: Vec<(usize, usize)> = (0..=25).rev().map(|a| (a, 25 - a)).collect();
    let ix = Indexed::of_layers(5, &full);
    assert_eq!(ix.total(), 1 << 25);
    let t = solve_indexed(&r, &ix);
    let mut longest = 0;
    for (x, o, w, l, d) in super::FULL_5X5 {
        let (a, b) = (o, x);
        let (lay, off) = ix
            .layers
            .iter()
            .copied()
            .find(|(l, _)| (l.a(), l.b()) == (a, b))
            .unwrap();
        let mut c = Counts::default();
        for i in off..off + lay.size() {
            c.add(t.value[i as usize]);
            longest = longest.max(t.depth[i as usize]);
        }
        println!("5x5 layer ({a}, {b}) [O to move, {x} X, {o} O]: {c}");
        assert_eq!((c.win, c.loss, c.draw), (w, l, d), "layer ({a}, {b})");
    }
    println!(
        "5x5 full layers: 2^25 boards, longest decided line {longest} plies; {:.1} s wall, {:.1} s CPU",
        t0.elapsed().as_secs_f64(),
        cpu_seconds() - c0
    );
}
