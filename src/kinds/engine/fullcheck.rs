//! `verify --full` for games solved by the engine: every stored value
//! rebuilt from the values of the position's moves, by the game's own move
//! generation ([`LayeredGame::children`], [`LayeredGame::terminal`],
//! [`LayeredGame::rank`]), never by the engine's code (this module reaches
//! only the trait: `tests/it/architecture.rs`).
//!
//! **The rule checked** at every position of every solved layer (value
//! bytes as in [`super::layout`]): a terminal position holds its terminal
//! value (win or loss in 0); otherwise, over its moves, a win in `d + 1`
//! if the shortest loss among the positions its moves reach is a loss in
//! `d`; else a draw if some move reaches a draw; else (every move reaches a
//! win) a loss in `1 +` the longest of those wins. By induction on the
//! depth, values that satisfy this everywhere are the game's values (draws
//! are then exactly the positions that are neither). With a symmetry group
//! ([`LayeredGame::symmetries`]) every image of a position must hold the
//! same byte.
//!
//! Memory: the layer checked and the layers its moves reach, one byte per
//! position each (as the engine).

use std::marker::PhantomData;

use super::layout::{DEEPEST, LOSS, LayerMeta, ReachMeta, WIN, byte_text, layer_job, reach_job};
use super::spec::EngineGame;
use crate::games::retrograde::rules::{LayeredGame, Terminal};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, for_chunks, le_u64s};
use crate::pipeline::shard::Shard;

/// The full checker of game `S` (`EngineChecker::<S>::NEW`).
pub struct EngineChecker<S>(PhantomData<fn() -> S>);

impl<S> EngineChecker<S> {
    /// The checker.
    pub const NEW: EngineChecker<S> = EngineChecker(PhantomData);
}

/// The value bytes of a layer's shard, or why not.
fn values_of(shard: Shard, name: &str, len: u64) -> std::result::Result<Vec<u8>, String> {
    let meta: LayerMeta = codec::decode(shard.section("meta").map_err(|e| e.to_string())?)?;
    if meta.layer != name {
        return Err(format!("its meta names layer {}", meta.layer));
    }
    let v = shard
        .sections
        .into_iter()
        .find(|s| s.name == "values")
        .map(|s| s.bytes)
        .ok_or("no values section")?;
    if v.len() as u64 != len {
        return Err(format!("{} value bytes for {len} positions", v.len()));
    }
    Ok(v)
}

/// The byte a position must hold, from the bytes its moves reach (`None`:
/// a byte outside the encoding among them, or a depth past it).
fn expected(children: &[u8]) -> Option<u8> {
    let mut shortest_loss: Option<u8> = None;
    let mut longest_win: Option<u8> = None;
    let mut draw = false;
    for &b in children {
        match b {
            0 => draw = true,
            1..WIN => return None,
            WIN..LOSS => longest_win = Some(longest_win.map_or(b - WIN, |w| w.max(b - WIN))),
            _ => shortest_loss = Some(shortest_loss.map_or(b - LOSS, |l| l.min(b - LOSS))),
        }
    }
    match (shortest_loss, draw, longest_win) {
        (Some(d), _, _) => (d < DEEPEST).then(|| WIN + d + 1),
        (None, true, _) => Some(0),
        (None, false, Some(d)) => (d < DEEPEST).then(|| LOSS + d + 1),
        (None, false, None) => None,
    }
}

impl<S: EngineGame> Checker for EngineChecker<S> {
    fn kind(&self) -> &'static str {
        S::KIND
    }

    fn check(&self, cx: &Ctx) -> Result<Vec<Coverage>> {
        let run = cx.run();
        let game = S::game(run.params()).map_err(|e| Error::job(S::KIND, e))?;
        let names: Vec<String> = (0..game.layer_count())
            .map(|l| game.layer_name(l))
            .collect();
        let id = |name: &str| names.iter().position(|n| n == name);
        let mut layers = Vec::new();
        let mut reaches = Vec::new();
        for job in run.jobs() {
            if let Some(name) = job.name.strip_prefix("reach-") {
                match id(name) {
                    Some(l) => reaches.push((l, job.name.clone())),
                    None => cx.bad(&job.name, "job", "names no layer of the game"),
                }
                continue;
            }
            let name = job.name.strip_prefix("layer-").unwrap_or(&job.name);
            match id(name) {
                Some(l) => layers.push((l, job.name.clone())),
                None => cx.bad(&job.name, "job", "names no layer of the game"),
            }
        }
        let total: u64 = layers.iter().map(|&(l, _)| game.layer_size(l)).sum();
        cx.set_total(total);
        let (mut checked, mut symmetric) = (0u64, 0u64);
        for (l, job) in &layers {
            let l = *l;
            cx.job(job);
            let size = game.layer_size(l);
            let load = |layer: usize| -> Option<Vec<u8>> {
                let name = &names[layer];
                let shard = cx.load(&layer_job(name))?;
                match values_of(shard, name, game.layer_size(layer)) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        cx.bad(&layer_job(name), "shard", e);
                        None
                    }
                }
            };
            let Some(own) = load(l) else { continue };
            let mut below: Vec<Option<Vec<u8>>> = vec![None; game.layer_count()];
            let mut complete = true;
            for c in game.child_layers(l) {
                below[c] = load(c);
                complete &= below[c].is_some();
            }
            if !complete {
                cx.bad(job, "inputs", "a layer its moves reach cannot be read");
                continue;
            }
            let sym = std::sync::atomic::AtomicU64::new(0);
            let byte_of = |p: &<S::Game as LayeredGame>::Position| -> Option<u8> {
                let (pl, r) = game.rank(p);
                if pl == l {
                    own.get(r as usize).copied()
                } else {
                    below.get(pl)?.as_ref()?.get(r as usize).copied()
                }
            };
            for_chunks(size, cx.threads(), |range| {
                let mut kids = Vec::with_capacity(64);
                let mut syms = 0u64;
                for r in range.clone() {
                    let p = game.unrank(l, r);
                    let stored = own[r as usize];
                    let want = match game.terminal(&p) {
                        Some(Terminal::Win) => Some(WIN),
                        Some(Terminal::Loss) => Some(LOSS),
                        None => {
                            kids.clear();
                            let mut stray = false;
                            game.children(&p, &mut |c| match byte_of(&c) {
                                Some(b) => kids.push(b),
                                None => stray = true,
                            });
                            if stray {
                                cx.bad(
                                    job,
                                    format!("rank {r} {}", S::describe(&game, &p)),
                                    "a move reaches a layer this run did not solve",
                                );
                                continue;
                            }
                            expected(&kids)
                        }
                    };
                    if want != Some(stored) {
                        cx.bad(
                            job,
                            format!("rank {r} {}", S::describe(&game, &p)),
                            format!(
                                "holds {}, its moves give {}",
                                byte_text(stored),
                                want.map_or("no value".to_string(), byte_text)
                            ),
                        );
                    }
                    game.symmetries(&p, &mut |q| {
                        syms += 1;
                        if byte_of(&q) != Some(stored) {
                            cx.bad(
                                job,
                                format!("rank {r} {}", S::describe(&game, &p)),
                                format!(
                                    "holds {}, its symmetric image {} {}",
                                    byte_text(stored),
                                    S::describe(&game, &q),
                                    byte_of(&q).map_or("is not solved".to_string(), byte_text)
                                ),
                            );
                        }
                    });
                }
                sym.fetch_add(syms, std::sync::atomic::Ordering::Relaxed);
                cx.advance(range.end - range.start);
            });
            checked += size;
            symmetric += sym.into_inner();
        }
        let reach = check_reach::<S>(cx, &game, &names, &reaches);
        let mut out = vec![Coverage {
            what: format!(
                "{} positions, each value rebuilt from the values its moves reach",
                S::TITLE
            ),
            stored: total,
            checked,
        }];
        if let Some(c) = reach {
            out.push(c);
        }
        if symmetric > 0 {
            out.push(Coverage {
                what: "symmetric images holding the same value".into(),
                stored: symmetric,
                checked: symmetric,
            });
        }
        Ok(out)
    }
}

/// The reachable bits of a `reach-NAME` shard and its meta, or why not.
fn reach_of(
    shard: Shard,
    name: &str,
    len: u64,
) -> std::result::Result<(ReachMeta, Vec<u64>), String> {
    let meta: ReachMeta = codec::decode(shard.section("meta").map_err(|e| e.to_string())?)?;
    if meta.layer != name {
        return Err(format!("its meta names layer {}", meta.layer));
    }
    let bytes = shard.section("reachable").map_err(|e| e.to_string())?;
    let words = le_u64s(bytes)
        .filter(|w| w.len() as u64 == len.div_ceil(64))
        .ok_or("reachable bits of the wrong length")?;
    Ok((meta, words))
}

/// The reachability jobs: the start's bit is set; every reachable position
/// that is not finished has all its moves' positions reachable (the set is
/// closed under play, so it holds every position reachable from the start;
/// a larger closed set would pass, as the module doc of Dodgem's checker
/// says of its own); the counts of `meta` are the bits' and the layer's
/// values'. `None` when the run has no reachability jobs.
fn check_reach<S: EngineGame>(
    cx: &Ctx,
    game: &S::Game,
    names: &[String],
    reaches: &[(usize, String)],
) -> Option<Coverage> {
    if reaches.is_empty() {
        return None;
    }
    let start = S::start(game).map(|p| game.rank(&S::position(&p)));
    let mut stored = 0u64;
    let mut checked = 0u64;
    let load = |l: usize| -> Option<(ReachMeta, Vec<u64>)> {
        let job = reach_job(&names[l]);
        let shard = cx.load(&job)?;
        match reach_of(shard, &names[l], game.layer_size(l)) {
            Ok(x) => Some(x),
            Err(e) => {
                cx.bad(&job, "shard", e);
                None
            }
        }
    };
    for (l, job) in reaches {
        let l = *l;
        cx.job(job);
        let size = game.layer_size(l);
        stored += size;
        let Some((meta, own)) = load(l) else { continue };
        let values = cx
            .load(&layer_job(&names[l]))
            .and_then(|s| values_of(s, &names[l], size).ok());
        let Some(values) = values else {
            cx.bad(job, "inputs", "the layer's values cannot be read");
            continue;
        };
        let mut kids: Vec<Option<Vec<u64>>> = vec![None; game.layer_count()];
        for c in game.child_layers(l) {
            kids[c] = load(c).map(|(_, w)| w);
        }
        let bit = |words: &[u64], r: u64| words[(r / 64) as usize] >> (r % 64) & 1 == 1;
        if let Some((sl, sr)) = start
            && sl == l
            && !bit(&own, sr)
        {
            cx.bad(job, "the start", "is not stored as reachable");
        }
        let counts = std::sync::Mutex::new([0u64; 4]);
        for_chunks(size, cx.threads(), |range| {
            let mut c = [0u64; 4];
            for r in range.clone() {
                if !bit(&own, r) {
                    continue;
                }
                c[0] += 1;
                match values[r as usize] {
                    0 => c[3] += 1,
                    b if b >= LOSS => c[2] += 1,
                    _ => c[1] += 1,
                }
                let p = game.unrank(l, r);
                if game.terminal(&p).is_some() {
                    continue;
                }
                let mut bad = None;
                game.children(&p, &mut |q| {
                    let (ql, qr) = game.rank(&q);
                    let ok = if ql == l {
                        bit(&own, qr)
                    } else {
                        kids[ql].as_ref().is_some_and(|w| bit(w, qr))
                    };
                    if !ok && bad.is_none() {
                        bad = Some(S::describe(game, &q));
                    }
                });
                if let Some(q) = bad {
                    cx.bad(
                        job,
                        format!("rank {r} {}", S::describe(game, &p)),
                        format!("stored as reachable, but its move to {q} is not"),
                    );
                }
            }
            let mut t = counts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (x, y) in t.iter_mut().zip(c) {
                *x += y;
            }
        });
        let c = counts
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let want = [meta.reachable, meta.wins, meta.losses, meta.draws];
        if c != want {
            cx.bad(
                job,
                "meta",
                format!("counts reachable / wins / losses / draws {want:?}, the bits and values give {c:?}"),
            );
        }
        checked += size;
    }
    Some(Coverage {
        what: "reachable bits, closed under moves from the start".into(),
        stored,
        checked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_byte_follows_the_rule() {
        // A move to a loss in 3 and one to a loss in 1: a win in 2.
        assert_eq!(expected(&[LOSS + 3, LOSS + 1, WIN + 5]), Some(WIN + 2));
        // No loss, a draw: a draw.
        assert_eq!(expected(&[WIN + 2, 0]), Some(0));
        // Only wins: a loss in 1 + the longest.
        assert_eq!(expected(&[WIN + 2, WIN + 7]), Some(LOSS + 8));
        // A byte outside the encoding.
        assert_eq!(expected(&[5]), None);
        assert_eq!(expected(&[]), None);
    }
}
