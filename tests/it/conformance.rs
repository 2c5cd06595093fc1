//! The conformance harness: every registered game ([`gametables::games::GAMES`])
//! passes the same checks on the smallest standard job file of each of its
//! kinds, with no per-game code here. A new game gets these tests by
//! registering.
//!
//! In process, through the library (so that a deliberately broken game can
//! be run too): plan, run every job, merge, `verify` against the reference
//! manifest, `verify --full`, `report` with no mismatch, `plot` twice to
//! identical bytes, a probe answered from the run, and a damaged shard
//! refused. Through the binary: the same probe through `gametables query …
//! --json` and through `serve`, with the same JSON.

use std::path::{Path, PathBuf};

use gametables::games::GAMES;
use gametables::pipeline::fullcheck::{self, Options};
use gametables::pipeline::jobfile::read_job_file;
use gametables::pipeline::plan::{PlanFile, write_plan};
use gametables::pipeline::probe::Params;
use gametables::pipeline::registry::{Game, Registry, StandardJob};
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::shard::Durability;
use gametables::pipeline::{ClaimStatus, RunView, merge, plots, worker};

use crate::support::{gt, repo, serve};

fn params(query: &str) -> Params {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Every check of the harness on one standard job of `game`, in process;
/// `Err` names the first step that failed.
fn conform(registry: &Registry, game: &Game, job: &StandardJob, root: &Path) -> Result<(), String> {
    let step = |what: &str, e: &dyn std::fmt::Display| {
        format!("{} / {}: {what}: {e}", game.name, job.name)
    };
    let job_file = repo().join("jobs").join(format!("{}.toml", job.name));
    let reference = repo().join("manifests").join(format!("{}.toml", job.name));
    let jf = read_job_file(&job_file, registry).map_err(|e| step("plan", &e))?;
    let plan = PlanFile::from_job_file(&jf).map_err(|e| step("plan", &e))?;
    let dir = RunDir::new(root.join("run"));
    write_plan(&dir, &plan, false).map_err(|e| step("plan", &e))?;
    for j in &plan.jobs {
        worker::run_worker(
            registry,
            &dir.manifest_path(&j.id),
            Some(dir.root()),
            Durability::Deferred,
        )
        .map_err(|e| step(&format!("job {}", j.name), &e))?;
    }
    let view = RunView::open(dir.root(), registry).map_err(|e| step("open", &e))?;
    merge::merge(&view).map_err(|e| step("merge", &e))?;
    merge::verify(&view, reference.is_file().then_some(reference.as_path()))
        .map_err(|e| step("verify --against the reference manifest", &e))?;
    let checker = registry.checker(view.kind.name());
    let full = fullcheck::full_check(&view, checker, Options::default())
        .map_err(|e| step("verify --full", &e))?;
    let checked: u64 = full.coverage.iter().map(|c| c.checked).sum();
    if full.total > 0 || checked == 0 {
        return Err(step(
            "verify --full",
            &format!(
                "{} bad values, {checked} checked: {:?}",
                full.total,
                full.problem_lines()
            ),
        ));
    }
    let claims = merge::report(&view, &registry.works()).map_err(|e| step("report", &e))?;
    if let Some(c) = claims.iter().find(|c| c.status == ClaimStatus::Mismatch) {
        return Err(step(
            "report",
            &format!("mismatch: {} ({} vs {})", c.claim, c.expected, c.ours),
        ));
    }
    let read_plots = || -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
        let drawn = plots::write_plots(&view).map_err(|e| step("plot", &e))?;
        Ok(drawn
            .into_iter()
            .flat_map(|(_, svg, png)| [svg, png])
            .map(|p| {
                let b = std::fs::read(&p).unwrap_or_default();
                (p, b)
            })
            .collect())
    };
    if read_plots()? != read_plots()? {
        return Err(step("plot", &"two plots of the same run differ"));
    }
    if !job.probe.0.is_empty() {
        let probes = registry
            .probes(&[dir.root().to_path_buf()], 64 << 20)
            .map_err(|e| step("probe", &e))?;
        let p = probes
            .game(job.probe.0)
            .ok_or_else(|| step("probe", &format!("no probe `{}`", job.probe.0)))?;
        p.query(&params(job.probe.1))
            .map_err(|e| step("probe", &e))?;
    }
    // A damaged shard: one byte of the first job's shard flipped.
    let first = &plan.jobs[0];
    let path = dir.shard_path(&first.id);
    let mut bytes = std::fs::read(&path).map_err(|e| step("damage", &e))?;
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&path, &bytes).map_err(|e| step("damage", &e))?;
    match merge::verify(&view, None) {
        Ok(_) => Err(step(
            "damaged shard",
            &format!("verify passed with {} damaged", first.name),
        )),
        Err(e) if e.to_string().contains(&first.name) => Ok(()),
        Err(e) => Err(step(
            "damaged shard",
            &format!("refused without naming {}: {e}", first.name),
        )),
    }
}

#[test]
fn every_registered_game_conforms() {
    let registry = gametables::games::registry();
    let mut kinds_covered = Vec::new();
    for game in GAMES {
        assert!(
            !game.standard_jobs.is_empty(),
            "{}: no standard job file",
            game.name
        );
        for job in game.standard_jobs {
            let t = tempfile::tempdir().unwrap();
            conform(&registry, game, job, t.path()).unwrap();
            let jf = read_job_file(
                &repo().join("jobs").join(format!("{}.toml", job.name)),
                &registry,
            )
            .unwrap();
            kinds_covered.push(jf.kind);
        }
        assert!(
            !game.checkers.is_empty() || game.kinds.is_empty(),
            "{}: no full checker",
            game.name
        );
    }
    for k in registry.kinds() {
        assert!(
            kinds_covered.iter().any(|c| c == k.name()),
            "kind {} has no standard job in the harness",
            k.name()
        );
        assert!(
            registry.checker(k.name()).is_some(),
            "kind {} has no full checker",
            k.name()
        );
    }
}

/// A game whose merge drops a table: the harness must fail it (at the
/// reference manifest, whose table digests no longer match).
#[test]
fn a_game_whose_merge_drops_a_table_fails_the_harness() {
    use gametables::pipeline::kind::{JobKind, JobSpec, RunAccess, ShardSource, TableFile};
    use gametables::pipeline::shard::Section;
    use gametables::pipeline::{Claim, Result};

    struct DropsATable;
    static INNER: &dyn JobKind = gametables::games::dodgem::DODGEM;
    impl JobKind for DropsATable {
        fn name(&self) -> &'static str {
            INNER.name()
        }
        fn about(&self) -> &'static str {
            "Dodgem, but its merge drops its last table"
        }
        fn plan(&self, p: &Path, t: &str) -> Result<(toml::Table, Vec<JobSpec>)> {
            INNER.plan(p, t)
        }
        fn zstd_level(&self) -> i32 {
            INNER.zstd_level()
        }
        fn run(&self, j: &JobSpec, i: &dyn ShardSource) -> Result<Vec<Section>> {
            INNER.run(j, i)
        }
        fn merge(&self, run: &dyn RunAccess) -> Result<Vec<TableFile>> {
            let mut t = INNER.merge(run)?;
            t.pop();
            Ok(t)
        }
        fn check(&self, _: &dyn RunAccess) -> Result<Vec<String>> {
            Ok(vec![])
        }
        fn claims(&self, _: &dyn RunAccess) -> Result<Vec<Claim>> {
            Ok(vec![])
        }
    }
    let real = &gametables::games::dodgem::GAME;
    static BROKEN: std::sync::OnceLock<Game> = std::sync::OnceLock::new();
    let broken = BROKEN.get_or_init(|| Game {
        name: "broken-dodgem",
        kinds: &[&DropsATable],
        ..*real
    });
    let games: &'static [&'static Game] = Box::leak(vec![broken as &Game].into_boxed_slice());
    let registry = Registry { games };
    let t = tempfile::tempdir().unwrap();
    let e = conform(&registry, broken, &real.standard_jobs[0], t.path()).unwrap_err();
    assert!(e.contains("verify --against the reference manifest"), "{e}");
    // The real game passes the same steps.
    let t = tempfile::tempdir().unwrap();
    conform(
        &gametables::games::registry(),
        real,
        &real.standard_jobs[0],
        t.path(),
    )
    .unwrap();
}

/// The probe of each standard job through `gametables query … --json` and
/// through `serve` (`/api/v1/GAME?…`): the same JSON.
#[test]
fn every_game_answers_its_probe_through_the_cli_and_serve() {
    for game in GAMES {
        for job in game.standard_jobs.iter().filter(|j| !j.probe.0.is_empty()) {
            let t = tempfile::tempdir().unwrap();
            let run = t.path().join("run");
            let ok = gt()
                .args(["run", &format!("jobs/{}.toml", job.name), "--run-dir"])
                .arg(&run)
                .arg("--no-progress")
                .current_dir(repo())
                .output()
                .unwrap();
            assert!(ok.status.success(), "{}: run failed", job.name);
            let out = gt()
                .arg("query")
                .args(job.query)
                .arg("--run-dir")
                .arg(&run)
                .arg("--json")
                .current_dir(repo())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}: query: {}",
                job.name,
                String::from_utf8_lossy(&out.stderr)
            );
            let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let (_server, site) = serve(&[&run]);
            let url = format!(
                "{}/api/v1/{}?{}",
                site.trim_end_matches('/'),
                job.probe.0,
                job.probe.1
            );
            let body = ureq::get(&url)
                .call()
                .map(|mut r| r.body_mut().read_to_string().unwrap())
                .unwrap_or_else(|e| panic!("{url}: {e}"));
            let served: serde_json::Value = serde_json::from_str(&body).unwrap();
            assert_eq!(
                served, cli,
                "{}: serve and query differ for {url}",
                job.name
            );
        }
    }
}
