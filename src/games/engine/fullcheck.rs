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
//! Values are compared as two-byte codes (a one-byte layer's bytes
//! widened, [`super::layout::code_at`]); a layer stored with two bytes per
//! position must need them (some depth past 119 plies), so the width is
//! checked to be the canonical one.
//!
//! Memory: the layer checked and the layers its moves reach, one or two
//! bytes per position each (as the engine).

use std::marker::PhantomData;

use super::layout::{
    DEEPEST, LayerInfo, ReachMeta, WIDE_DEEPEST, WIDE_LOSS, WIDE_WIN, code_at, code_text,
    layer_job, reach_job,
};
use super::spec::EngineGame;
use crate::pipeline::error::{Error, Result};
use crate::pipeline::fullcheck::{Checker, Coverage, Ctx, SAMPLE_RUN, for_chunks, le_u64s};
use crate::pipeline::shard::Shard;
use crate::solvers::engine::rules::{LayeredGame, Terminal};

/// The full checker of game `S` (`EngineChecker::<S>::NEW`).
pub struct EngineChecker<S>(PhantomData<fn() -> S>);

impl<S> EngineChecker<S> {
    /// The checker.
    pub const NEW: EngineChecker<S> = EngineChecker(PhantomData);
}

/// A layer's stored values: its `values` bytes, one or two per position,
/// and its meta.
struct Stored {
    bytes: Vec<u8>,
    wide: bool,
    meta: LayerInfo,
}

impl Stored {
    /// The two-byte code of rank `r` (`None` past the layer).
    fn code(&self, r: u64) -> Option<u16> {
        code_at(&self.bytes, self.wide, r)
    }

    /// What the meta must say, from the values: `[wins, losses, draws]`
    /// and the deepest win and loss.
    fn counts(&self, len: u64) -> ([u64; 3], u16, u16) {
        let (mut c, mut win, mut loss) = ([0u64; 3], 0u16, 0u16);
        for r in 0..len {
            match self.code(r) {
                Some(0) | None => c[2] += 1,
                Some(x) if x >= WIDE_LOSS => {
                    c[1] += 1;
                    loss = loss.max(x - WIDE_LOSS);
                }
                Some(x) => {
                    c[0] += 1;
                    win = win.max(x.saturating_sub(WIDE_WIN));
                }
            }
        }
        (c, win, loss)
    }
}

/// The values of a layer's shard, or why not: the meta names the layer
/// and says the width, the values have that width, and a two-byte layer
/// has a depth past one byte (the width is canonical).
fn values_of(shard: Shard, name: &str, len: u64) -> std::result::Result<Stored, String> {
    let meta = LayerInfo::decode(shard.section("meta").map_err(|e| e.to_string())?)?;
    if meta.layer != name {
        return Err(format!("its meta names layer {}", meta.layer));
    }
    if meta.wide && meta.max_win_depth.max(meta.max_loss_depth) <= u16::from(DEEPEST) {
        return Err("two bytes per position, but its meta's depths fit one".into());
    }
    let v = shard
        .sections
        .into_iter()
        .find(|s| s.name == "values")
        .map(|s| s.bytes)
        .ok_or("no values section")?;
    if v.len() as u64 != len * meta.value_bytes() {
        return Err(format!(
            "{} value bytes for {len} positions of {} bytes",
            v.len(),
            meta.value_bytes()
        ));
    }
    Ok(Stored {
        bytes: v,
        wide: meta.wide,
        meta,
    })
}

/// The code a position must hold, from the codes its moves reach (`None`:
/// a code outside the encoding among them, or a depth past it).
fn expected(children: &[u16]) -> Option<u16> {
    let mut shortest_loss: Option<u16> = None;
    let mut longest_win: Option<u16> = None;
    let mut draw = false;
    for &b in children {
        match b {
            0 => draw = true,
            1..WIDE_WIN => return None,
            WIDE_WIN..WIDE_LOSS => {
                let d = b - WIDE_WIN;
                longest_win = Some(longest_win.map_or(d, |w| w.max(d)));
            }
            _ => {
                let d = b - WIDE_LOSS;
                shortest_loss = Some(shortest_loss.map_or(d, |l| l.min(d)));
            }
        }
    }
    match (shortest_loss, draw, longest_win) {
        (Some(d), _, _) => (d < WIDE_DEEPEST).then(|| WIDE_WIN + d + 1),
        (None, true, _) => Some(0),
        (None, false, Some(d)) => (d < WIDE_DEEPEST).then(|| WIDE_LOSS + d + 1),
        (None, false, None) => None,
    }
}

impl<S: EngineGame> Checker for EngineChecker<S> {
    fn kind(&self) -> &'static str {
        S::KIND
    }

    /// Layers and reachability jobs can be checked one by one (each reads
    /// the shards its moves reach, checked or not).
    fn checks_some_jobs(&self) -> bool {
        true
    }

    /// Layers can be checked at one run of [`SAMPLE_RUN`] positions in K
    /// (`--sample K`); reachability is checked whole.
    fn samples(&self) -> bool {
        true
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
        for job in run.jobs().iter().filter(|j| cx.wanted(&j.name)) {
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
        cx.set_total(
            layers
                .iter()
                .map(|&(l, _)| sampled(game.layer_size(l), cx.sample()))
                .sum(),
        );
        let (mut checked, mut symmetric) = (0u64, 0u64);
        for (l, job) in &layers {
            if let Some((c, sym)) = check_layer::<S>(cx, &game, &names, *l, job) {
                checked += c;
                symmetric += sym;
            }
        }
        let reach = check_reach::<S>(cx, &game, &names, &reaches);
        let in_run = run
            .jobs()
            .iter()
            .filter(|j| !j.name.starts_with("reach-"))
            .count();
        let mut which = if layers.len() < in_run {
            format!(" of {} of the run's {in_run} layers (--jobs)", layers.len())
        } else {
            String::new()
        };
        if cx.sample() > 1 {
            which += &format!(
                ", one run of {SAMPLE_RUN} ranks in {} (--sample)",
                cx.sample()
            );
        }
        let mut out = vec![Coverage {
            what: format!(
                "{} positions{which}, each value rebuilt from the values its moves reach",
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

/// Checks the layer `l` of job `job`: every value rebuilt from its moves'
/// values, every symmetric image holding the same value, the meta's counts
/// and depths. `None` when its shard or a child layer's cannot be read
/// (reported); else the positions checked and the images compared.
fn check_layer<S: EngineGame>(
    cx: &Ctx,
    game: &S::Game,
    names: &[String],
    l: usize,
    job: &str,
) -> Option<(u64, u64)> {
    cx.job(job);
    let size = game.layer_size(l);
    let load = |layer: usize| -> Option<Stored> {
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
    let own = load(l)?;
    let mut below: Vec<Option<Stored>> = (0..game.layer_count()).map(|_| None).collect();
    let mut complete = true;
    for c in game.child_layers(l) {
        below[c] = load(c);
        complete &= below[c].is_some();
    }
    if !complete {
        cx.bad(job, "inputs", "a layer its moves reach cannot be read");
        return None;
    }
    let sym = std::sync::atomic::AtomicU64::new(0);
    let byte_of = |p: &<S::Game as LayeredGame>::Position| -> Option<u16> {
        let (pl, r) = game.rank(p);
        if pl == l {
            own.code(r)
        } else {
            below.get(pl)?.as_ref()?.code(r)
        }
    };
    let k = cx.sample();
    let picked = size.div_ceil(SAMPLE_RUN).div_ceil(k);
    for_chunks(picked, cx.threads(), |runs| {
        let mut kids = Vec::with_capacity(64);
        let mut syms = 0u64;
        let lo = |j: u64| j * k * SAMPLE_RUN;
        let ranks = runs
            .clone()
            .flat_map(|j| lo(j)..(lo(j) + SAMPLE_RUN).min(size));
        let mut done = 0u64;
        for r in ranks {
            done += 1;
            let p = game.unrank(l, r);
            let stored = own.code(r).expect("a rank of the layer");
            let want = match game.terminal(&p) {
                Some(Terminal::Win) => Some(WIDE_WIN),
                Some(Terminal::Loss) => Some(WIDE_LOSS),
                Some(Terminal::Draw) => Some(0),
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
                            format!("rank {r} {}", S::describe(game, &p)),
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
                    format!("rank {r} {}", S::describe(game, &p)),
                    format!(
                        "holds {}, its moves give {}",
                        code_text(stored),
                        want.map_or("no value".to_string(), code_text)
                    ),
                );
            }
            game.symmetries(&p, &mut |q| {
                syms += 1;
                if byte_of(&q) != Some(stored) {
                    cx.bad(
                        job,
                        format!("rank {r} {}", S::describe(game, &p)),
                        format!(
                            "holds {}, its symmetric image {} {}",
                            code_text(stored),
                            S::describe(game, &q),
                            byte_of(&q).map_or("is not solved".to_string(), code_text)
                        ),
                    );
                }
            });
        }
        sym.fetch_add(syms, std::sync::atomic::Ordering::Relaxed);
        cx.advance(done);
    });
    // The meta's counts and depths (what the tables publish) from
    // the values.
    let (c, win, loss) = own.counts(size);
    let m = &own.meta;
    let said = (
        [m.wins, m.losses, m.draws],
        m.max_win_depth,
        m.max_loss_depth,
    );
    if said != (c, win, loss) {
        cx.bad(
                job,
                "meta",
                format!(
                    "says {:?} wins/losses/draws, deepest win {} and loss {}; the values give {c:?}, {win} and {loss}",
                    said.0, said.1, said.2
                ),
            );
    }
    Some((sampled(size, k), sym.into_inner()))
}

/// Positions of a layer of `size` ranks that a check of one run of
/// [`SAMPLE_RUN`] in `k` looks at (every run from the first).
fn sampled(size: u64, k: u64) -> u64 {
    (0..size.div_ceil(SAMPLE_RUN).div_ceil(k))
        .map(|j| SAMPLE_RUN.min(size - j * k * SAMPLE_RUN))
        .sum()
}

/// The reachable bits of a `reach-NAME` shard and its meta, or why not.
fn reach_of(
    shard: Shard,
    name: &str,
    len: u64,
) -> std::result::Result<(ReachMeta, Vec<u64>), String> {
    let meta: ReachMeta = shard.meta().map_err(|e| e.to_string())?;
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
                match values.code(r) {
                    Some(0) => c[3] += 1,
                    Some(b) if b >= WIDE_LOSS => c[2] += 1,
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
    fn the_expected_code_follows_the_rule() {
        let (win, loss) = (WIDE_WIN, WIDE_LOSS);
        // A move to a loss in 3 and one to a loss in 1: a win in 2.
        assert_eq!(expected(&[loss + 3, loss + 1, win + 5]), Some(win + 2));
        // No loss, a draw: a draw.
        assert_eq!(expected(&[win + 2, 0]), Some(0));
        // Only wins: a loss in 1 + the longest, past one byte too.
        assert_eq!(expected(&[win + 2, win + 7]), Some(loss + 8));
        assert_eq!(expected(&[win + 130]), Some(loss + 131));
        // A code outside the encoding.
        assert_eq!(expected(&[5]), None);
        assert_eq!(expected(&[]), None);
    }
}
