//! Brute-force solvers for the tests only: a naive one for 2×2 and 3×3 that
//! shares nothing with the module (its own grid, moves and lines, absolute
//! colours, every one of the 3^(n²)·2 positions), and one over the module's
//! own rules, un-moves and ranks (every board of every layer) that the
//! naive one checks and that also runs 4×4.
//!
//! Both are retrograde analysis by successor counting with a FIFO queue
//! started from every finished position (depth 0): a position is a win in
//! d + 1 as soon as one child is a loss in d, a loss in d + 1 when its last
//! child turns out a win in d; the queue hands out positions in order of
//! depth, so a win takes the shortest and a loss the longest line. What is
//! never decided is a draw.

use super::index::{Layer, layers};
use super::{Board, Outcome, Rules, Symmetry};

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
    n: usize,
    layers: Vec<(Layer, u64)>, // (layer, offset), by offset
    offset: [[u64; 26]; 26],
}

impl Indexed {
    fn new(n: usize) -> Indexed {
        let mut offset = [[u64::MAX; 26]; 26];
        let mut v = Vec::new();
        let mut off = 0;
        for (a, b) in layers(n) {
            let l = Layer::new(n, a, b).unwrap();
            offset[a][b] = off;
            v.push((l, off));
            off += l.size();
        }
        assert_eq!(off, 3u64.pow((n * n) as u32));
        Indexed {
            n,
            layers: v,
            offset,
        }
    }

    fn total(&self) -> u64 {
        let (l, o) = self.layers.last().unwrap();
        o + l.size()
    }

    #[inline]
    fn index(&self, b: Board) -> u64 {
        let (a, bb) = b.layer();
        let l = Layer::new(self.n, a, bb).unwrap();
        self.offset[a][bb] + l.rank(b)
    }

    #[inline]
    fn board(&self, i: u64) -> Board {
        let k = self.layers.partition_point(|&(_, o)| o <= i) - 1;
        let (l, o) = self.layers[k];
        l.unrank(i - o)
    }
}

fn solve_indexed(r: &Rules, ix: &Indexed) -> Table {
    let np = ix.total() as usize;
    let mut value = vec![DRAW; np];
    let mut depth = vec![0u16; np];
    let mut left = vec![0u8; np];
    let mut decided = vec![false; np];
    let mut queue: Vec<u32> = Vec::with_capacity(np / 4);
    for &(l, o) in &ix.layers {
        for rank in 0..l.size() {
            let b = l.unrank(rank);
            let i = (o + rank) as usize;
            match r.outcome(b) {
                Some(Outcome::Win) => {
                    value[i] = WIN;
                    decided[i] = true;
                    queue.push(i as u32);
                }
                Some(Outcome::Loss) => {
                    value[i] = LOSS;
                    decided[i] = true;
                    queue.push(i as u32);
                }
                None => left[i] = r.moves(b).count() as u8,
            }
        }
    }
    let mut head = 0;
    while head < queue.len() {
        let c = queue[head] as usize;
        head += 1;
        let cb = ix.board(c as u64);
        let (cv, cd) = (value[c], depth[c]);
        for (p, _) in r.predecessors(cb) {
            let j = ix.index(p) as usize;
            if decided[j] {
                continue; // finished parents are decided from the start
            }
            if cv == LOSS {
                value[j] = WIN;
                depth[j] = cd + 1;
                decided[j] = true;
                queue.push(j as u32);
            } else {
                left[j] -= 1;
                if left[j] == 0 {
                    value[j] = LOSS;
                    depth[j] = cd + 1;
                    decided[j] = true;
                    queue.push(j as u32);
                }
            }
        }
    }
    Table { value, depth }
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
    let np = ix.total();
    let mut all = Counts::default();
    let mut classes = Counts::default();
    let (mut longest_win, mut longest_loss) = (0, 0);
    for i in 0..np {
        let v = t.value[i as usize];
        all.add(v);
        match v {
            WIN => longest_win = longest_win.max(t.depth[i as usize]),
            LOSS => longest_loss = longest_loss.max(t.depth[i as usize]),
            _ => {}
        }
        let b = ix.board(i);
        if r.canonical(b).board == b {
            classes.add(v);
        }
    }
    // Reachable boards (seen by the player to move) from the empty board.
    let mut seen = vec![false; np as usize];
    let start = ix.index(Board::EMPTY);
    seen[start as usize] = true;
    let mut stack = vec![Board::EMPTY];
    while let Some(b) = stack.pop() {
        if r.outcome(b).is_some() {
            continue;
        }
        for (_, c) in r.children(b) {
            let j = ix.index(c) as usize;
            if !seen[j] {
                seen[j] = true;
                stack.push(c);
            }
        }
    }
    let mut reachable = Counts::default();
    let mut reachable_classes = Counts::default();
    for i in 0..np {
        if seen[i as usize] {
            reachable.add(t.value[i as usize]);
            let b = ix.board(i);
            let c = r.canonical(b).board;
            // A class is counted once, at its least member, if any member is reachable.
            let members: Vec<u64> = Symmetry::ALL
                .iter()
                .map(|&s| ix.index(r.transform(b, s)))
                .collect();
            if members.iter().filter(|&&j| seen[j as usize]).min() == Some(&i) {
                let _ = c;
                reachable_classes.add(t.value[i as usize]);
            }
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
        start: (t.value[start as usize], t.depth[start as usize]),
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

/// "Quixo Is Solved" (Tanaka, Bonnet, Tixeuil, Tamura; ACG 2021, arXiv
/// 2007.15895; the GPW 2020 version, IPSJ proceedings pp. 181–188, says in
/// its abstract that for 4×4 and 3×3 it gives "concrete winning
/// sequences"): the first player wins the 3×3 start.
#[test]
fn paper_quixo_is_solved_3x3_start_is_a_first_player_win() {
    let r = Rules::new(3).unwrap();
    let ix = Indexed::new(3);
    let t = solve_indexed(&r, &ix);
    let s = ix.index(Board::EMPTY) as usize;
    assert_eq!(value_name(t.value[s]), "win");
    println!("3x3 start: win in {} plies", t.depth[s]);
}

/// 4×4 by brute force over all 43,046,721 boards (release: `cargo test
/// --release -- --ignored four_by_four`). The same paper: a first-player
/// win on 4×4.
#[test]
#[ignore = "4x4 brute force: release build, about a minute"]
fn four_by_four_brute_force() {
    let t0 = std::time::Instant::now();
    let r = Rules::new(4).unwrap();
    let ix = Indexed::new(4);
    let t = solve_indexed(&r, &ix);
    let solve_s = t0.elapsed().as_secs_f64();
    let s = summarise(&r, &ix, &t);
    report(4, &s);
    println!(
        "  solve {solve_s:.1} s, with the summary {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(s.all.total(), 43_046_721);
    assert_eq!(value_name(s.start.0), "win");
}
