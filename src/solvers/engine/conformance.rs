//! A self-test of any [`LayeredGame`]: its contracts checked on random
//! positions of every layer (the idea of GamesmanOne's tier self-test).

use super::rules::{LayeredGame, Terminal};

/// Checks the contracts of [`LayeredGame`] on up to `per_layer` positions
/// of each layer (all of a layer that small), chosen by a fixed
/// pseudo-random sequence from `seed`:
/// - the rank is a bijection (`rank(unrank(r)) == r`, and distinct ranks
///   give distinct positions among those drawn); `layer_of` and `rank_in`
///   agree with `rank`; `for_each_position` gives `unrank`'s positions in
///   rank order on four windows of each layer;
/// - every move leads to the layer itself or a child layer;
/// - a non-terminal position has a move;
/// - moves and un-moves agree: for each in-layer child `c` of `p`,
///   `parents(c)` yields `p` as many times as `p` has moves to `c`; and each
///   parent `q` of `p` is non-terminal, in `p`'s layer, and has that many
///   moves to `p`;
/// - symmetry: each image of `p` is terminal exactly when `p` is, with the
///   same outcome, has as many moves, and the same number of in-layer ones;
/// - the counter bound: in-layer moves, plus one if some move leaves the
///   layer, are at most [`LayeredGame::counter_bound`];
/// - image layers: a layer with an image layer has its size; the image of
///   `p` lies there, is terminal exactly when `p` is, with the same
///   outcome, and has as many moves, whose images are its moves' (as
///   multisets);
/// - with symmetry reduction: the canonical image is an image of `p`, the
///   same for every image, and the stabiliser counts the images equal to
///   `p` (identity included).
///
/// Returns one line per broken contract (at most 20), empty if all hold.
pub fn check_rules<G: LayeredGame>(game: &G, per_layer: u64, seed: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut rng = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let push = |out: &mut Vec<String>, layer: usize, r: u64, why: String| {
        if out.len() < 20 {
            out.push(format!("layer {}, rank {r}: {why}", game.layer_name(layer)));
        }
    };
    for layer in 0..game.layer_count() {
        let size = game.layer_size(layer);
        let child_layers = game.child_layers(layer);
        let ranks: Vec<u64> = if size <= per_layer {
            (0..size).collect()
        } else {
            (0..per_layer).map(|_| next() % size).collect()
        };
        check_enumeration(game, layer, &mut next, &mut |r, why| {
            push(&mut out, layer, r, why);
        });
        let mut seen: Vec<(u64, G::Position)> = Vec::new();
        for &r in &ranks {
            let mut problem = |why: String| push(&mut out, layer, r, why);
            let p = game.unrank(layer, r);
            if !check_ranks(game, layer, r, &p, &mut problem) {
                continue;
            }
            if seen.len() < 4096 {
                if let Some((r2, _)) = seen.iter().find(|(r2, q)| *r2 != r && *q == p) {
                    problem(format!("ranks {r} and {r2} give {p:?}"));
                }
                seen.push((r, p));
            }
            let term = game.terminal(&p);
            let kids = if term.is_none() {
                children_of(game, &p)
            } else {
                Vec::new()
            };
            check_moves(
                game,
                layer,
                &p,
                term.is_some(),
                &kids,
                &child_layers,
                &mut problem,
            );
            if let Some(bound) = game.counter_bound(layer) {
                let inside = kids.iter().filter(|c| game.layer_of(c) == layer).count();
                let count = inside as u32 + u32::from(inside < kids.len());
                if count > bound {
                    problem(format!(
                        "{inside} in-layer moves and {} out: counter {count} past counter_bound {bound}",
                        kids.len() - inside
                    ));
                }
            }
            check_symmetry(game, layer, &p, term, &kids, &mut problem);
            check_image(game, layer, &p, term, &kids, &mut problem);
            if game.halves_by_image(layer) {
                check_halves(game, layer, &p, &kids, &mut problem);
            }
            if game.reduces_by_symmetry() {
                check_canonical(game, &p, &mut problem);
            }
        }
    }
    out
}

/// [`LayeredGame::for_each_position`] agrees with `unrank` on a few
/// windows of `layer` (the start, the end, random ones across block
/// boundaries); `problem(rank, why)`.
fn check_enumeration<G: LayeredGame>(
    game: &G,
    layer: usize,
    next: &mut impl FnMut() -> u64,
    problem: &mut impl FnMut(u64, String),
) {
    let size = game.layer_size(layer);
    for w in 0..4u64 {
        let len = 70.min(size);
        let start = match w {
            0 => 0,
            1 => size - len,
            _ => next() % (size - len + 1),
        };
        let mut at = start;
        game.for_each_position(layer, start, start + len, &mut |r, p| {
            if r != at || p != game.unrank(layer, r) {
                problem(
                    r,
                    format!("for_each_position gives {p:?} at rank {r}, expected rank {at}"),
                );
            }
            at = r + 1;
        });
        if at != start + len {
            problem(
                start,
                format!(
                    "for_each_position over {start}..{} stops at {at}",
                    start + len
                ),
            );
        }
    }
}

/// `p`, unranked from rank `r` of `layer`, ranks back there by `rank`,
/// `layer_of` and `rank_in`; `false` if `rank` does not (the rest of the
/// checks would only repeat it).
fn check_ranks<G: LayeredGame>(
    game: &G,
    layer: usize,
    r: u64,
    p: &G::Position,
    problem: &mut impl FnMut(String),
) -> bool {
    let back = game.rank(p);
    if back != (layer, r) {
        problem(format!("unrank gives {p:?}, whose rank is {back:?}"));
        return false;
    }
    if game.layer_of(p) != layer || game.rank_in(layer, p) != r {
        problem(format!(
            "layer_of / rank_in give ({}, {}) for {p:?}",
            game.layer_of(p),
            game.rank_in(layer, p)
        ));
    }
    true
}

/// The moves of `p` (`kids`, empty when it has `ended`): at least one when
/// play goes on, each into `layer` or a child layer; in-layer moves and
/// un-moves agree both ways, and no parent is terminal.
fn check_moves<G: LayeredGame>(
    game: &G,
    layer: usize,
    p: &G::Position,
    ended: bool,
    kids: &[G::Position],
    child_layers: &[usize],
    problem: &mut impl FnMut(String),
) {
    if !ended && kids.is_empty() {
        problem(format!("{p:?} is not terminal and has no move"));
    }
    for &c in kids {
        let (l, _) = game.rank(&c);
        if l != layer && !child_layers.contains(&l) {
            problem(format!(
                "a move of {p:?} leads to layer {}, not a child layer",
                game.layer_name(l)
            ));
        }
    }
    // The in-layer moves by rank (`children_in_layer`) are `children`'s.
    if !ended && game.rank(p).0 == layer {
        let mut got = Vec::new();
        game.children_in_layer(layer, game.rank(p).1, p, &mut |r| got.push(r));
        let mut want: Vec<u64> = kids
            .iter()
            .map(|c| game.rank(c))
            .filter(|&(l, _)| l == layer)
            .map(|(_, r)| r)
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            problem(format!(
                "children_in_layer of {p:?} gives the ranks {got:?}; children give {want:?}"
            ));
        }
    }
    // The seeding pass's view of the moves (`moves_out`) is `children`'s.
    if !ended {
        let mut out = Vec::new();
        let inside = game.moves_out(layer, p, &mut |l, r| out.push((l, r)));
        let mut want: Vec<(usize, u64)> = kids
            .iter()
            .map(|c| game.rank(c))
            .filter(|&(l, _)| l != layer)
            .collect();
        let stay = kids.len() - want.len();
        out.sort_unstable();
        want.sort_unstable();
        if inside as usize != stay || out != want {
            problem(format!(
                "moves_out of {p:?} gives {inside} in-layer move(s) and {out:?} leaving; children give {stay} and {want:?}"
            ));
        }
    }
    // Moves and un-moves agree.
    for &c in kids {
        if game.rank(&c).0 != layer {
            continue;
        }
        let moves = kids.iter().filter(|&&k| k == c).count();
        let mut back = 0;
        game.parents(&c, &mut |q| back += usize::from(q == *p));
        if back != moves {
            problem(format!(
                "{p:?} has {moves} move(s) to {c:?}, whose parents list it {back} time(s)"
            ));
        }
    }
    let mut parents = Vec::new();
    game.parents(p, &mut |q| parents.push(q));
    if game.rank(p).0 == layer {
        let r = game.rank(p).1;
        let mut got = Vec::new();
        game.parents_ranked(layer, r, p, &mut |q, rq| got.push((rq, q)));
        let mut want: Vec<(u64, G::Position)> = parents
            .iter()
            .filter(|q| game.rank(q).0 == layer)
            .map(|q| (game.rank(q).1, *q))
            .collect();
        let key = |e: &(u64, G::Position)| e.0;
        got.sort_by_key(key);
        want.sort_by_key(key);
        if got != want {
            problem(format!(
                "parents_ranked of {p:?} (rank {r}) gives {got:?}; parents and rank_in give {want:?}"
            ));
        }
    }
    for &q in &parents {
        let (l, _) = game.rank(&q);
        if l != layer {
            problem(format!("parent {q:?} lies in another layer"));
            continue;
        }
        if game.terminal(&q).is_some() {
            problem(format!("parent {q:?} is terminal"));
            continue;
        }
        let listed = parents.iter().filter(|&&x| x == q).count();
        let moves = children_of(game, &q).iter().filter(|&&k| k == *p).count();
        if listed != moves {
            problem(format!(
                "parent {q:?} is listed {listed} time(s) but has {moves} move(s) to {p:?}"
            ));
        }
    }
}

/// The halves contract for one position `p` of a layer solved by halves:
/// its in-layer moves (`kids`) stay in its half, and its image lies in the
/// layer, in the other half.
fn check_halves<G: LayeredGame>(
    game: &G,
    layer: usize,
    p: &G::Position,
    kids: &[G::Position],
    problem: &mut impl FnMut(String),
) {
    let half = game.first_half(p);
    for c in kids.iter().filter(|c| game.layer_of(c) == layer) {
        if game.first_half(c) != half {
            problem(format!("its in-layer move to {c:?} changes its half"));
        }
    }
    let q = game.image(p);
    if game.layer_of(&q) != layer || game.first_half(&q) == half {
        problem(format!(
            "its image {q:?} is not in the other half of its layer"
        ));
    }
}

/// Every image of `p` lies in `layer`, ends as `p` does (`term`) and has
/// as many moves (`kids`), as many of them in-layer.
fn check_symmetry<G: LayeredGame>(
    game: &G,
    layer: usize,
    p: &G::Position,
    term: Option<Terminal>,
    kids: &[G::Position],
    problem: &mut impl FnMut(String),
) {
    let in_layer = |ks: &[G::Position]| ks.iter().filter(|k| game.rank(k).0 == layer).count();
    game.symmetries(p, &mut |s| {
        let (l, _) = game.rank(&s);
        let ts = game.terminal(&s);
        let why = if l != layer {
            Some(format!("its image {s:?} lies in another layer"))
        } else if ts != term {
            Some(format!("its image {s:?} ends as {ts:?}, it as {term:?}"))
        } else if term.is_none() {
            let ks = children_of(game, &s);
            (ks.len() != kids.len() || in_layer(&ks) != in_layer(kids)).then(|| {
                format!(
                    "its image {s:?} has {} moves ({} in-layer), it {} ({})",
                    ks.len(),
                    in_layer(&ks),
                    kids.len(),
                    in_layer(kids)
                )
            })
        } else {
            None
        };
        if let Some(why) = why {
            problem(why);
        }
    });
}

/// The canonical-image contract for one position `p`.
fn check_canonical<G: LayeredGame>(game: &G, p: &G::Position, problem: &mut impl FnMut(String)) {
    let (c, k) = game.canonical(p);
    if game.is_canonical(p) != (c == *p) {
        problem(format!(
            "is_canonical says {}, but its canonical image is {c:?}",
            game.is_canonical(p)
        ));
    }
    let mut images = vec![*p];
    game.symmetries(p, &mut |s| images.push(s));
    if !images.contains(&c) {
        problem(format!(
            "its canonical image {c:?} is not one of its images"
        ));
    }
    // One image per group element: the stabiliser is the number equal to
    // `p`, and |G| / |orbit|.
    let fixed = images.iter().filter(|&&s| s == *p).count();
    let mut distinct: Vec<G::Position> = Vec::new();
    for s in &images {
        if !distinct.contains(s) {
            distinct.push(*s);
        }
    }
    let want = images.len() / distinct.len();
    if k as usize != want || fixed != want {
        problem(format!(
            "stabiliser {k}, but {fixed} of its {} images are itself ({} distinct)",
            images.len(),
            distinct.len()
        ));
    }
    for s in &distinct {
        let (cs, ks) = game.canonical(s);
        if cs != c || ks != k {
            problem(format!(
                "its image {s:?} has canonical image {cs:?} (stabiliser {ks}), it {c:?} ({k})"
            ));
        }
    }
}

fn children_of<G: LayeredGame>(game: &G, p: &G::Position) -> Vec<G::Position> {
    let mut v = Vec::new();
    game.children(p, &mut |c| v.push(c));
    v
}

/// The image of `p` (of `layer`, when it has an image layer) lies in that
/// layer, of the same size, ends play as `p` does, and its moves are the
/// images of `p`'s moves (as multisets).
fn check_image<G: LayeredGame>(
    game: &G,
    layer: usize,
    p: &G::Position,
    term: Option<Terminal>,
    kids: &[G::Position],
    problem: &mut impl FnMut(String),
) {
    let Some(src) = game.image_layer(layer) else {
        return;
    };
    if game.image_layer(src).is_some() || game.layer_size(src) != game.layer_size(layer) {
        problem(format!(
            "image layer {} is itself an image layer, or of another size",
            game.layer_name(src)
        ));
        return;
    }
    let q = game.image(p);
    if game.rank(&q).0 != src {
        problem(format!(
            "the image {q:?} of {p:?} is not in layer {}",
            game.layer_name(src)
        ));
        return;
    }
    if game.terminal(&q) != term {
        problem(format!("the image {q:?} of {p:?} ends play otherwise"));
        return;
    }
    if term.is_some() {
        return;
    }
    let mut want: Vec<(usize, u64)> = kids.iter().map(|c| game.rank(&game.image(c))).collect();
    let mut got: Vec<(usize, u64)> = children_of(game, &q).iter().map(|c| game.rank(c)).collect();
    want.sort_unstable();
    got.sort_unstable();
    if want != got {
        problem(format!(
            "the moves of the image {q:?} are not the images of the moves of {p:?}"
        ));
    }
}
