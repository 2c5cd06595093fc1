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

use super::layout::{DEEPEST, LOSS, LayerMeta, WIN, byte_text, layer_job};
use super::spec::EngineGame;
use crate::games::retrograde::rules::{LayeredGame, Terminal};
use crate::pipeline::codec;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, for_chunks};
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
        for job in run.jobs() {
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
        let mut out = vec![Coverage {
            what: format!(
                "{} positions, each value rebuilt from the values its moves reach",
                S::TITLE
            ),
            stored: total,
            checked,
        }];
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
