//! The Slurm executor, end to end.
//!
//! Tests named `slurm_*` and marked `#[ignore]` need a real Slurm cluster
//! whose nodes see this machine's /tmp (the one-node cluster of
//! `scripts/slurm-local-up.sh`); `scripts/ci-slurm-tests.sh` brings it up,
//! runs them and tears it down:
//!
//! ```text
//! cargo test --release --test it -- --ignored slurm::
//! ```
//!
//! The other tests (dry run, missing or unreachable Slurm) need no Slurm: they
//! put fake or no Slurm commands on PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gametables::pipeline::plan::PlanFile;
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::slurm::SubmissionRecord;

use crate::support::{EXE, gt, job_path as job_file, poll, reference, repo, result, run_cmd, show};

/// Job files that must give the same digests on Slurm as locally and as in
/// `manifests/`. Adding a job file here is all a new kind needs.
const JOB_FILES: &[&str] = &["chomp-boxes", "dodgem-4"];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A directory holding fake Slurm commands, each a shell script.
fn fake_bin(root: &Path, scripts: &[(impl AsRef<str>, impl AsRef<str>)]) -> PathBuf {
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in scripts {
        let p = bin.join(name.as_ref());
        std::fs::write(&p, format!("#!/bin/sh\n{}\n", body.as_ref())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

// ---------------------------------------------------------------- without Slurm

/// `--dry-run` prints the scripts and sbatch commands (golden file
/// tests/golden/slurm-dry-run.txt; regenerate with GAMETABLES_UPDATE_GOLDEN=1).
/// A fake `scontrol` reports MaxArraySize = 5, so the 14 boxes are split into
/// arrays of 5, 5 and 4; the merge waits for all three.
#[test]
fn dry_run_prints_scripts_and_sbatch_commands_golden() {
    let t = tempfile::tempdir().unwrap();
    let bin = fake_bin(
        t.path(),
        &[(
            "scontrol",
            "printf 'Configuration data as of now\\nMaxArraySize            = 5\\nMaxJobCount             = 10000\\n'",
        )],
    );
    let run = t.path().join("run");
    let o = boxes_on_slurm(&bin)
        .args(["--dry-run", "--run-dir"])
        .arg(&run)
        .args(["--partition", "debug", "--sbatch-arg=--time=10:00"])
        .args(["--sbatch-arg", "--mem=1G", "--workers", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert!(!run.exists(), "--dry-run must not write the run directory");
    let mut out = text(&o.stdout).replace(&run.to_string_lossy().into_owned(), "<RUN_DIR>");
    out = out.replace(EXE, "<GAMETABLES>");
    // The job name ends in 8 hex digits of the run directory's path.
    let marker = "gt-chomp-boxes-";
    let k = out.find(marker).expect("a job name") + marker.len();
    let tag = out[k..k + 8].to_string();
    out = out.replace(&format!("{marker}{tag}"), &format!("{marker}TAG"));
    let golden = repo().join("tests/golden/slurm-dry-run.txt");
    if std::env::var_os("GAMETABLES_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &out).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .expect("golden file (GAMETABLES_UPDATE_GOLDEN=1 writes it)");
    assert_eq!(
        out,
        want,
        "dry-run output differs from {}",
        golden.display()
    );
}

/// Without `scontrol` the dry run still works and says which MaxArraySize it assumed.
#[test]
fn dry_run_without_slurm_assumes_the_default_max_array_size() {
    let t = tempfile::tempdir().unwrap();
    let o = boxes_on_slurm(t.path())
        .args(["--dry-run", "--run-dir"])
        .arg(t.path().join("run"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let out = text(&o.stdout);
    assert!(
        out.contains("# MaxArraySize 1001 (assumed: no `scontrol` on PATH): 1 array job(s)"),
        "{out}"
    );
    // The default throttle: at most 64 tasks of an array at once.
    assert!(out.contains("#SBATCH --array=0-13%64\n"), "{out}");
}

/// The dry run reads the node limits of the default partition from `sinfo`
/// (a fake one listing two partitions) and shows what `run` would submit:
/// each `--time` capped at the partition's limit, said in the script; the
/// partition not used (no `*`) does not count.
#[test]
fn dry_run_caps_the_time_at_the_default_partitions_limit() {
    let t = tempfile::tempdir().unwrap();
    let bin = fake_bin(
        t.path(),
        &[(
            "sinfo",
            "printf 'short*|2|1500|5:00\\nlong|64|512000|infinite\\n'",
        )],
    );
    let o = boxes_on_slurm(&bin)
        .args(["--dry-run", "--run-dir"])
        .arg(t.path().join("run"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "# node limits: largest node 2 CPUs, 1500 MiB; time limit 5 min (from `sinfo`)"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "#SBATCH --time=5 # 3 x the CPU estimate / threads, at least 10 min, or the partition's time limit\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("#SBATCH --time=5 # 3 x the shards read at 32 MiB/s plus --latency-wait"),
        "{out}"
    );
    assert!(!out.contains("#SBATCH --time=10 "), "{out}");
}

/// `gametables run jobs/chomp-boxes.toml --executor slurm`, `path` its PATH.
fn boxes_on_slurm(path: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut c = gt();
    c.env("PATH", path)
        .arg("run")
        .arg(job_file("chomp-boxes"))
        .args(["--executor", "slurm"]);
    c
}

fn assert_one_line_error(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(1), "{}", show(o));
    let err = text(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "not one line:\n{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` missing in: {err}");
    }
}

#[test]
fn missing_sbatch_is_a_one_line_error_saying_what_to_do() {
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    let o = boxes_on_slurm(t.path())
        .args(["--run-dir"])
        .arg(&run)
        .output()
        .unwrap();
    assert_one_line_error(
        &o,
        &[
            "`sbatch` not found on PATH",
            "Slurm submit (login) node",
            "--executor local",
        ],
    );
    assert!(!run.exists(), "nothing is written when Slurm is missing");
}

#[test]
fn unreachable_controller_is_a_one_line_error_saying_what_to_do() {
    let t = tempfile::tempdir().unwrap();
    let fail = "echo \"$(basename \"$0\"): error: Unable to contact slurm controller (connect failure)\" >&2; exit 1";
    let bin = fake_bin(
        t.path(),
        &[
            ("sbatch", fail),
            ("squeue", fail),
            ("scontrol", fail),
            ("scancel", fail),
        ],
    );
    let o = boxes_on_slurm(&bin)
        .args(["--slurm-retry", "0", "--run-dir"])
        .arg(t.path().join("run"))
        .output()
        .unwrap();
    assert_one_line_error(
        &o,
        &[
            "cannot reach the Slurm controller",
            "Unable to contact slurm controller",
            "check that slurmctld is up",
            "SLURM_CONF",
        ],
    );
}

/// A fake Slurm command that counts its calls in `count-NAME` and runs `body`
/// with the call number in `$n` (shell builtins only: PATH may hold nothing else).
fn counting(bin_root: &Path, name: &str, body: &str) -> (String, String) {
    let count = bin_root.join(format!("count-{name}"));
    (
        name.to_string(),
        format!(
            "n=0; [ -f '{c}' ] && read n < '{c}'; n=$((n + 1)); echo $n > '{c}'\n{body}",
            c = count.display()
        ),
    )
}

fn calls(bin_root: &Path, name: &str) -> u32 {
    std::fs::read_to_string(bin_root.join(format!("count-{name}")))
        .map_or(0, |s| s.trim().parse().unwrap())
}

const SOCKET_TIMEOUT: &str = "Socket timed out on send/recv operation";

/// Issue 15, item 6 without a cluster: a controller that times out is tried
/// again with backoff, saying so, until it answers; a real error (a bad
/// partition) is reported at once, sbatch called once; a timeout that lasts
/// longer than `--slurm-retry` ends in one error line saying how long it
/// was tried.
#[test]
fn transient_slurm_failures_are_retried_real_errors_are_not() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    let scripts = [
        counting(
            root,
            "scontrol",
            &format!(
                "if [ $n -le 2 ]; then echo 'slurm_load_ctl_conf error: {SOCKET_TIMEOUT}' >&2; exit 1; fi\n\
                 printf 'MaxArraySize = 1001\\n'"
            ),
        ),
        counting(root, "squeue", "exit 0"),
        counting(
            root,
            "sbatch",
            "echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1",
        ),
        counting(root, "scancel", "exit 0"),
    ];
    let bin = fake_bin(root, &scripts);
    let t0 = Instant::now();
    let o = boxes_on_slurm(&bin)
        .args(["--no-progress", "--partition", "nope"])
        .arg("--run-dir")
        .arg(root.join("run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = text(&o.stderr);
    assert_eq!(
        err.matches("transient, trying again").count(),
        2,
        "two retries of scontrol: {err}"
    );
    assert!(
        err.contains("trying again in 1 s") && err.contains("trying again in 2 s"),
        "{err}"
    );
    assert!(err.contains("invalid partition specified: nope"), "{err}");
    assert_eq!(calls(root, "sbatch"), 1, "a real error is not retried");
    assert!(t0.elapsed() >= Duration::from_secs(3), "backoff 1 s + 2 s");

    // Always timing out: tried for --slurm-retry seconds, then one line.
    let t2 = tempfile::tempdir().unwrap();
    let scripts = [
        counting(
            t2.path(),
            "scontrol",
            &format!("echo 'slurm_load_ctl_conf error: {SOCKET_TIMEOUT}' >&2; exit 1"),
        ),
        counting(t2.path(), "squeue", "exit 0"),
        counting(t2.path(), "sbatch", "exit 1"),
        counting(t2.path(), "scancel", "exit 0"),
    ];
    let bin = fake_bin(t2.path(), &scripts);
    let o = boxes_on_slurm(&bin)
        .args(["--no-progress", "--slurm-retry", "4"])
        .arg("--run-dir")
        .arg(t2.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = text(&o.stderr);
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("error: slurm: cannot reach the Slurm controller"),
        "{err}"
    );
    assert!(last.contains("still there after 3 tries"), "{err}");
    assert_eq!(
        calls(t2.path(), "scontrol"),
        3,
        "tries at 0, 1 and 3 s: {err}"
    );
}

#[test]
fn slurm_flags_need_the_slurm_executor() {
    let t = tempfile::tempdir().unwrap();
    let o = gt()
        .arg("run")
        .arg(job_file("chomp-boxes"))
        .args(["--detach", "--run-dir"])
        .arg(t.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "usage error: {}", show(&o));
    assert!(
        text(&o.stderr).contains("need --executor slurm"),
        "{}",
        show(&o)
    );
}

// ---------------------------------------------------------------- with Slurm (#[ignore])

fn require_cluster() {
    let ok = Command::new("sinfo")
        .args(["--noheader", "--format=%T"])
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    assert!(
        ok,
        "no Slurm cluster answers `sinfo`: run scripts/slurm-local-up.sh first"
    );
}

/// [`require_cluster`], and a temporary directory with the path of a run
/// directory in it.
fn cluster_run_dir() -> (tempfile::TempDir, PathBuf) {
    require_cluster();
    let t = tempfile::tempdir().unwrap();
    let run = t.path().join("run");
    (t, run)
}

/// `MaxArraySize` of the running cluster.
fn max_array_size() -> usize {
    let o = Command::new("scontrol")
        .args(["show", "config"])
        .output()
        .unwrap();
    text(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "MaxArraySize")
        .and_then(|(_, v)| v.trim().parse().ok())
        .expect("MaxArraySize in `scontrol show config`")
}

fn run_slurm(job: &str, run: &Path, extra: &[&str], delay_ms: Option<u64>) -> Output {
    let mut c = run_cmd(&job_file(job), run);
    c.args(["--executor", "slurm"]).args(extra);
    if let Some(ms) = delay_ms {
        c.env("GAMETABLES_TEST_WORKER_DELAY_MS", ms.to_string());
    }
    c.output().unwrap()
}

fn submission(run: &Path) -> SubmissionRecord {
    SubmissionRecord::latest(&RunDir::new(run))
        .unwrap()
        .expect("a submission record")
}

/// Polls `f` every 200 ms (Slurm commands are not to be called in a tight loop).
fn wait_for<T>(what: &str, secs: u64, f: impl FnMut() -> Option<T>) -> T {
    poll(what, secs, Duration::from_millis(200), f)
}

/// Acceptance 1: every standard job file gives, through Slurm, the digests of
/// the local executor and of `manifests/NAME.toml`.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_job_files_match_local_executor_and_manifests() {
    require_cluster();
    for &job in JOB_FILES {
        let t = tempfile::tempdir().unwrap();
        let (local, slurm) = (t.path().join("local"), t.path().join("slurm"));
        let o = run_cmd(&job_file(job), &local)
            .args(["--workers", "2"])
            .output()
            .unwrap();
        assert!(o.status.success(), "local {job}: {}", show(&o));
        let o = run_slurm(job, &slurm, &[], None);
        assert!(o.status.success(), "slurm {job}: {}", show(&o));
        assert!(
            text(&o.stdout).contains("digests match the reference"),
            "{}",
            show(&o)
        );
        let (l, s) = (result(&local), result(&slurm));
        let reference = reference(job);
        assert_eq!(s, l, "{job}: Slurm and local result.toml differ");
        assert_eq!(
            s.root, reference.root,
            "{job}: root differs from manifests/{job}.toml"
        );
        assert!(
            s.diff(&reference).is_empty(),
            "{job}: {:?}",
            s.diff(&reference)
        );
        // Scripts and %A_%a logs are kept next to the results.
        let rec = submission(&slurm);
        let array = &rec.arrays[0].slurm_job_id;
        assert!(slurm.join(&rec.arrays[0].script).is_file());
        assert!(slurm.join(format!("logs/slurm-{array}_0.out")).is_file());
        assert!(
            slurm
                .join(format!("logs/slurm-{}-merge.out", rec.merge.slurm_job_id))
                .is_file()
        );
        let jobs: usize = rec.arrays.iter().map(|a| a.jobs.len()).sum();
        assert_eq!(jobs, s.shards.len(), "{job}: every job submitted once");
        // Arrays respect the cluster's MaxArraySize (scripts/ci-slurm-tests.sh
        // sets 8), and each asks for the memory and threads of its jobs: at
        // least every job's estimate and less than twice any job's, the
        // threads every job can use.
        let max = max_array_size();
        let plan = PlanFile::load(&RunDir::new(&slurm)).unwrap();
        for a in &rec.arrays {
            assert!(a.jobs.len() <= max, "{job}: {rec:?}");
            let script = std::fs::read_to_string(slurm.join(&a.script)).unwrap();
            let sbatch = |key: &str| -> u64 {
                let line = script
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("#SBATCH --{key}=")))
                    .unwrap_or_else(|| panic!("{job}: no --{key} in {}:\n{script}", a.script));
                line.trim_end_matches('M').parse().unwrap()
            };
            let (mem_mib, cpus) = (sbatch("mem"), sbatch("cpus-per-task"));
            for id in &a.jobs {
                let j = plan.jobs.iter().find(|j| &j.id == id).unwrap();
                let est_mib = j.memory.div_ceil(1 << 20);
                assert!(
                    mem_mib >= est_mib && mem_mib <= 2 * est_mib,
                    "{job}: {} asks {mem_mib} MiB for {} ({est_mib} MiB)",
                    a.script,
                    j.name
                );
                assert_eq!(
                    cpus,
                    u64::from(j.threads),
                    "{job}: {} for {}",
                    a.script,
                    j.name
                );
            }
        }
        // The tasks use the cores Slurm gave them (SLURM_CPUS_PER_TASK): on
        // this 2-core node the one-thread jobs (Dodgem's reach jobs) run on
        // one, the solving jobs on two.
        if plan.jobs.iter().any(|j| j.threads == 2) {
            let logs: String = std::fs::read_dir(slurm.join("logs"))
                .unwrap()
                .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
                .collect();
            assert!(logs.contains("threads=2"), "{job}: no task used 2 threads");
            assert!(logs.contains("threads=1"), "{job}: no task used 1 thread");
        }
    }
}

/// Acceptance 2: `scancel` of one running array task makes the run fail
/// naming that job, its Slurm job id and its log; `run` again resubmits only
/// that job and completes the run with the reference digests.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_scancel_of_one_task_fails_the_run_and_rerun_resubmits_only_it() {
    let (_t, run) = cluster_run_dir();
    let child = run_cmd(&job_file("chomp-boxes"), &run)
        .args(["--executor", "slurm"])
        .env("GAMETABLES_TEST_WORKER_DELAY_MS", "3000")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rec = wait_for("the merge job to be submitted", 60, || {
        SubmissionRecord::latest(&RunDir::new(&run))
            .ok()
            .flatten()
            .filter(|r| !r.merge.slurm_job_id.is_empty())
    });
    let array = rec.arrays[0].slurm_job_id.clone();
    // A task that runs (the worker sleeps 3 s before writing its shard).
    let task: usize = wait_for("a running array task", 120, || {
        let o = Command::new("squeue")
            .args([
                "--noheader",
                "--array",
                "--states=RUNNING",
                "--format=%K",
                "--jobs",
            ])
            .arg(&array)
            .output()
            .ok()?;
        text(&o.stdout).lines().find_map(|l| l.trim().parse().ok())
    });
    let slurm_id = format!("{array}_{task}");
    let job_id = rec.arrays[0].jobs[task].clone();
    let o = Command::new("scancel").arg(&slurm_id).output().unwrap();
    assert!(o.status.success(), "scancel: {}", show(&o));

    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = text(&o.stderr);
    let plan = std::fs::read_to_string(run.join("plan.toml")).unwrap();
    let name = plan
        .split("[[jobs]]")
        .find(|j| j.contains(&job_id))
        .and_then(|j| j.lines().find_map(|l| l.strip_prefix("name = ")))
        .unwrap()
        .trim_matches('"')
        .to_string();
    let log = run.join(format!("logs/slurm-{slurm_id}.out"));
    for needle in [
        format!("job {name} ({})", &job_id[..12]),
        format!("Slurm job {slurm_id} CANCELLED"),
        format!("log: {}", log.display()),
        "1 Slurm job(s) failed".to_string(),
    ] {
        assert!(err.contains(&needle), "`{needle}` missing:\n{err}");
    }
    assert!(!run.join(format!("shards/{job_id}.shard")).exists());
    // Every other job finished: 13 shards.
    let shards = std::fs::read_dir(run.join("shards")).unwrap().count();
    assert_eq!(shards, 13);

    let o = run_slurm("chomp-boxes", &run, &[], None);
    assert!(o.status.success(), "rerun: {}", show(&o));
    let out = text(&o.stdout);
    assert!(out.contains("1 computed, 13 skipped"), "{out}");
    assert!(out.contains("digests match the reference"), "{out}");
    let rec2 = submission(&run);
    assert_eq!(rec2.submission, 2);
    assert_eq!(rec2.arrays.len(), 1);
    assert_eq!(
        rec2.arrays[0].jobs,
        vec![job_id],
        "only the cancelled job is resubmitted"
    );
}

/// `--detach` submits and returns; `status` shows the Slurm progress; a
/// second `run` adopts the jobs still queued (submits nothing) and waits for
/// them; the merge job finishes the run, and `verify --against` the manifest
/// passes.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_detach_then_status_and_verify() {
    let (_t, run) = cluster_run_dir();
    let o = run_slurm(
        "chomp-boxes",
        &run,
        &["--detach", "--workers", "1"],
        Some(1000),
    );
    assert!(o.status.success(), "{}", show(&o));
    let out = text(&o.stdout);
    assert!(
        out.contains("submitted as Slurm jobs") && out.contains("gametables status"),
        "{out}"
    );
    let rec = submission(&run);
    let script = std::fs::read_to_string(run.join(&rec.arrays[0].script)).unwrap();
    let last = rec.arrays[0].jobs.len() - 1;
    assert!(
        script.contains(&format!("#SBATCH --array=0-{last}%1\n")),
        "{script}"
    );

    let st = gt().arg("status").arg(&run).output().unwrap();
    let st = text(&st.stdout);
    assert!(
        st.contains(&format!(
            "slurm submission 1 (array jobs {}",
            rec.arrays[0].slurm_job_id
        )),
        "{st}"
    );
    assert!(st.contains(" waiting, 0 failed; merge "), "{st}");

    let again = run_slurm("chomp-boxes", &run, &[], None);
    assert!(again.status.success(), "{}", show(&again));
    assert!(
        text(&again.stderr).contains("adopting submission 1"),
        "{}",
        show(&again)
    );
    assert_eq!(submission(&run).submission, 1, "nothing submitted again");

    wait_for("result.toml from the merge job", 300, || {
        run.join("result.toml").exists().then_some(())
    });
    let o = gt()
        .arg("verify")
        .arg(&run)
        .arg("--against")
        .arg(repo().join("manifests/chomp-boxes.toml"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let st = gt().arg("status").arg(&run).output().unwrap();
    assert!(
        text(&st.stdout).contains("14 done, 0 running, 0 waiting, 0 failed; merged"),
        "{}",
        show(&st)
    );
}

/// A damaged shard is resubmitted, and nothing else.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_rerun_resubmits_only_a_damaged_shard() {
    let (_t, run) = cluster_run_dir();
    let o = run_slurm("chomp-boxes", &run, &[], None);
    assert!(o.status.success(), "{}", show(&o));
    let victim = result(&run).shards[3].clone();
    let p = run.join(format!("shards/{}.shard", victim.id));
    let mut bytes = std::fs::read(&p).unwrap();
    let k = bytes.len() / 2;
    bytes[k] ^= 0x40;
    std::fs::write(&p, bytes).unwrap();
    let o = run_slurm("chomp-boxes", &run, &[], None);
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        text(&o.stdout).contains("1 computed, 13 skipped, 1 recomputed (damaged)"),
        "{}",
        show(&o)
    );
    assert_eq!(submission(&run).arrays[0].jobs, vec![victim.id.clone()]);
    assert_eq!(result(&run).shards[3], victim, "same bytes again");
}

/// Acceptance 3 against the real Slurm commands: a controller that does not
/// answer (SLURM_CONF naming a port nobody listens on) is a one-line error.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_unreachable_real_controller_is_a_one_line_error() {
    require_cluster();
    let t = tempfile::tempdir().unwrap();
    let conf = std::fs::read_to_string("/etc/slurm/slurm.conf").expect("/etc/slurm/slurm.conf");
    let conf: String = conf
        .lines()
        .filter(|l| !l.starts_with("SlurmctldPort"))
        .map(|l| format!("{l}\n"))
        .chain(["SlurmctldPort=6999\n".to_string()])
        .collect();
    let bad = t.path().join("slurm.conf");
    std::fs::write(&bad, conf).unwrap();
    let run = t.path().join("run");
    let o = gt()
        .env("SLURM_CONF", &bad)
        .arg("run")
        .arg(job_file("chomp-boxes"))
        .args(["--executor", "slurm", "--slurm-retry", "0", "--run-dir"])
        .arg(&run)
        .output()
        .unwrap();
    assert_one_line_error(&o, &["cannot reach the Slurm controller", "SLURM_CONF"]);
    assert!(!run.exists());
}

/// Path of the real Slurm command `name`.
fn real(name: &str) -> String {
    let o = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .unwrap();
    let p = text(&o.stdout).trim().to_string();
    assert!(!p.is_empty(), "`{name}` not on PATH");
    p
}

/// Issue 15, item 6 on the real cluster: wrappers earlier in PATH make the
/// first calls of sbatch, squeue, scontrol and scancel fail with the busy
/// controller's messages, and one sbatch submit its job but lose the answer.
/// The run retries, says so, adopts the job that went in (nothing is
/// submitted twice) and completes with the reference digests.
#[test]
#[ignore = "needs Slurm: scripts/ci-slurm-tests.sh"]
fn slurm_transient_failures_are_survived_with_the_reference_digests() {
    require_cluster();
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("wrappers");
    std::fs::create_dir(&root).unwrap();
    let fail = |name: &str, first: u32, msg: &str, extra: &str| {
        counting(
            &root,
            name,
            &format!(
                "if [ $n -le {first} ]; then echo '{msg}' >&2; exit 1; fi\n{extra}exec {} \"$@\"",
                real(name)
            ),
        )
    };
    let sbatch_msg = format!("sbatch: error: Batch job submission failed: {SOCKET_TIMEOUT}");
    let scripts = [
        fail(
            "scontrol",
            2,
            &format!("slurm_load_ctl_conf error: {SOCKET_TIMEOUT}"),
            "",
        ),
        fail(
            "squeue",
            2,
            &format!("slurm_load_jobs error: {SOCKET_TIMEOUT}"),
            "",
        ),
        // Calls 1–2 fail; call 4 submits, then loses the answer.
        fail(
            "sbatch",
            2,
            &sbatch_msg,
            &format!(
                "if [ $n -eq 4 ]; then {} \"$@\" >/dev/null; echo '{sbatch_msg}' >&2; exit 1; fi\n",
                real("sbatch")
            ),
        ),
        fail(
            "scancel",
            1,
            &format!("scancel: error: {SOCKET_TIMEOUT}"),
            "",
        ),
    ];
    let bin = fake_bin(&root, &scripts);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = t.path().join("run");
    let o = boxes_on_slurm(&path)
        .args(["--no-progress", "--slurm-retry", "120"])
        .arg("--run-dir")
        .arg(&run)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        text(&o.stdout).contains("digests match the reference"),
        "{}",
        show(&o)
    );
    let err = text(&o.stderr);
    assert!(err.contains("transient, trying again"), "{err}");
    assert!(
        err.contains("is in the queue as job"),
        "the lost answer is found: {err}"
    );
    let rec = submission(&run);
    assert_eq!(result(&run).root, reference("chomp-boxes").root);
    // Nothing submitted twice: the queue holds exactly the recorded jobs.
    let o = Command::new(real("squeue"))
        .args(["--noheader", "--states=all", "--format=%F"])
        .arg(format!("--name={}", rec.job_name))
        .output()
        .unwrap();
    let mut ids: Vec<String> = text(&o.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    ids.sort();
    ids.dedup();
    let want = rec.slurm_ids();
    assert!(!ids.is_empty(), "{}", show(&o));
    assert!(
        ids.iter().all(|id| want.contains(id)),
        "a job outside the record (submitted twice?): {ids:?} vs {want:?}"
    );
    assert!(calls(&root, "sbatch") >= 5 && calls(&root, "scontrol") >= 3);
}
