//! What the integration tests share: the `gametables` binary as a
//! [`Command`], its outputs as text, job files and run directories, the
//! reference manifests, waiting for a condition, the processes of a run, a
//! server started for a test, and proptest's configuration.
//!
//! Every test module runs in this one process, so nothing here changes the
//! process's environment, current directory or limits: a command gets them
//! on the child.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use gametables::pipeline::plan::PlanFile;
use gametables::pipeline::result::ResultFile;
use gametables::pipeline::rundir::RunDir;
use gametables::pipeline::worker::DELAY_ENV;

/// The `gametables` binary cargo built for these tests.
pub const EXE: &str = env!("CARGO_BIN_EXE_gametables");

/// The repository (the package root).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The standard job file `jobs/NAME.toml`.
pub fn job_path(name: &str) -> PathBuf {
    repo().join("jobs").join(format!("{name}.toml"))
}

/// The reference manifest `manifests/NAME.toml`.
pub fn reference(name: &str) -> ResultFile {
    ResultFile::load(&repo().join("manifests").join(format!("{name}.toml"))).unwrap()
}

/// The root digest of the reference manifest `manifests/NAME.toml`.
pub fn reference_root(name: &str) -> String {
    reference(name).root
}

/// Set (to anything) to let [`gt`] keep the host's `PATH`: the tests that
/// need a real Slurm cluster (`scripts/ci-slurm-tests.sh` sets it).
pub const HOST_PATH_ENV: &str = "GAMETABLES_TEST_HOST_PATH";

/// The `PATH` of [`gt`]: a directory that does not exist, so the binary
/// finds no `sinfo`, `scontrol` or `sbatch` of the host (a cluster's login
/// node, where users build, has them: a test must not read its nodes).
pub const HERMETIC_PATH: &str = "/nonexistent/gametables-tests-path";

/// `gametables` with no `RUST_LOG`, no worker delay (the test hook
/// [`DELAY_ENV`]), no standard input and, unless [`HOST_PATH_ENV`] is set,
/// the hermetic [`HERMETIC_PATH`] (the binary runs no other program but
/// itself and the Slurm commands). Tests that want a delay, another `PATH`
/// (fake Slurm commands) or a working directory set them on the command.
pub fn gt() -> Command {
    let mut c = Command::new(EXE);
    c.env_remove("RUST_LOG")
        .env_remove(DELAY_ENV)
        .stdin(Stdio::null());
    if std::env::var_os(HOST_PATH_ENV).is_none() {
        c.env("PATH", HERMETIC_PATH);
    }
    c
}

/// Standard output, then standard error.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The exit status and both outputs, labelled (for assertion messages).
pub fn show(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `cmd`; fails the test unless it exits 0.
pub fn ok(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?} failed:\n{}", show(&o));
    o
}

/// Runs `cmd`; fails the test unless it exits `code`. Returns standard
/// output then standard error.
pub fn exits(cmd: &mut Command, code: i32) -> String {
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(code), "{cmd:?}:\n{}", show(&o));
    text(&o)
}

/// `gametables ARGS`, which must exit 0.
pub fn run_ok(args: &[&str]) -> Output {
    ok(gt().args(args))
}

/// Runs `cmd`: (exit code, standard output, standard error).
pub fn outcome(cmd: &mut Command) -> (Option<i32>, String, String) {
    let o = cmd.output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs `cmd`: (whether it exited 0, standard output then standard error).
pub fn passed(cmd: &mut Command) -> (bool, String) {
    let o = cmd.output().unwrap();
    (o.status.success(), text(&o))
}

/// Writes the job file `dir/NAME` (`dir` created if need be) and returns its path.
pub fn write_job(dir: &Path, name: &str, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// `gametables plan JOB --run-dir DIR`.
pub fn plan_cmd(job: &Path, dir: &Path) -> Command {
    let mut c = gt();
    c.arg("plan").arg(job).arg("--run-dir").arg(dir);
    c
}

/// `gametables run JOB --run-dir DIR --no-progress`; more arguments may follow.
pub fn run_cmd(job: &Path, dir: &Path) -> Command {
    let mut c = gt();
    c.arg("run")
        .arg(job)
        .arg("--run-dir")
        .arg(dir)
        .arg("--no-progress");
    c
}

/// The summary line of `plan`'s output `out` (`N job(s); largest …`) starts
/// with `start` and contains each of `parts`.
pub fn assert_plan_summary(out: &str, start: &str, parts: &[&str]) {
    let summary = out
        .lines()
        .find(|l| l.contains(" job(s); largest "))
        .unwrap_or_else(|| panic!("no summary line:\n{out}"));
    assert!(summary.starts_with(start), "{summary}");
    for p in parts {
        assert!(summary.contains(p), "`{p}` not in {summary}");
    }
}

/// [`run_cmd`], whatever its exit status.
pub fn run_job(job: &Path, dir: &Path) -> Output {
    run_cmd(job, dir).output().unwrap()
}

/// [`run_cmd`], which must exit 0.
pub fn run_job_ok(job: &Path, dir: &Path) -> Output {
    ok(&mut run_cmd(job, dir))
}

/// Writes the job file `root/NAME.toml` and runs it into `root/NAME`, which
/// must exit 0; returns the run directory.
pub fn run_text(root: &Path, name: &str, body: &str) -> PathBuf {
    let job = write_job(root, &format!("{name}.toml"), body);
    let dir = root.join(name);
    run_job_ok(&job, &dir);
    dir
}

/// A run directory's `result.toml`.
pub fn result(dir: &Path) -> ResultFile {
    ResultFile::load(&dir.join("result.toml")).unwrap()
}

/// The root digest of a run directory's `result.toml`.
pub fn root_of(dir: &Path) -> String {
    result(dir).root
}

/// (name, sha256) of every table of a run directory's `result.toml`.
pub fn table_digests(dir: &Path) -> Vec<(String, String)> {
    result(dir)
        .tables
        .iter()
        .map(|t| (t.name.clone(), t.sha256.clone()))
        .collect()
}

/// A run directory's `plan.toml`.
pub fn plan(dir: &Path) -> PlanFile {
    PlanFile::load(&RunDir::new(dir)).unwrap()
}

/// The shard file of job `name` in a planned run directory.
pub fn shard_path(dir: &Path, name: &str) -> PathBuf {
    RunDir::new(dir).shard_path(&plan(dir).job(name).unwrap().id)
}

/// The first entry of folder `dir` (the only one, where this is used).
pub fn first_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// Shard files (at their final names) and their modification times, sorted.
pub fn shard_times(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("shards"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "shard"))
        .map(|p| {
            let t = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, t)
        })
        .collect();
    v.sort();
    v
}

/// Calls `f` every `every` until it gives a value; fails the test after
/// `secs` seconds, naming `what`.
pub fn poll<T>(what: &str, secs: u64, every: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "timed out after {secs} s waiting for {what}"
        );
        std::thread::sleep(every);
    }
}

/// Waits (polling every 20 ms) until `f` holds; fails the test after `secs`
/// seconds, naming `what`.
pub fn wait_until(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    poll(what, secs, Duration::from_millis(20), || f().then_some(()));
}

/// Processes whose parent is `pid` (from `/proc/*/stat`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            // Field 4 (after the parenthesised command) is the parent pid.
            if let Some(rest) = stat.rsplit_once(')').map(|x| x.1) {
                let f: Vec<&str> = rest.split_whitespace().collect();
                if f.get(1).and_then(|s| s.parse::<u32>().ok()) == Some(pid) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Whether process `pid` still exists.
pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// `kill -9 PID`, which must succeed.
pub fn sigkill(pid: u32) {
    let ok = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Runs `cmd` to its end and returns its output with the resources of that
/// child alone (`wait4`; `getrusage(RUSAGE_CHILDREN)` would be the largest
/// of every child this process has waited for, other tests' too).
///
/// Its `ru_maxrss` (KiB) is the child's peak or this process's, whichever
/// is larger: Linux charges a child, at its `exec`, with the peak of the
/// memory it was spawned from (std spawns with `CLONE_VM`). A test that
/// measures a child's memory therefore runs in a process of its own
/// ([`in_own_process`]), where this process is small.
#[expect(clippy::zombie_processes, reason = "reaped by wait4, not Child::wait")]
pub fn output_with_rusage(cmd: &mut Command) -> (Output, libc::rusage) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        err.read_to_end(&mut b).unwrap();
        b
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let stderr = err.join().unwrap();
    let mut status = 0;
    // SAFETY: `ru` is a valid out-pointer and `status` a valid int; the
    // child is ours and not yet waited for (std never reaps it behind us).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut ru) }, pid);
    let out = Output {
        status: ExitStatus::from_raw(status),
        stdout,
        stderr,
    };
    (out, ru)
}

/// Set in a process of this test binary that [`in_own_process`] started.
const OWN_PROCESS_ENV: &str = "GAMETABLES_TEST_OWN_PROCESS";

/// For a test that must not share its process with other tests (it
/// measures what its children use): true in a new process of this test
/// binary that runs only the test `name` (its full path, e.g.
/// `pipeline_break::zstd_bomb_is_refused_without_a_huge_allocation`), where
/// the caller goes on with the test's body; false in the first process,
/// after that run has passed.
pub fn in_own_process(name: &str) -> bool {
    if std::env::var_os(OWN_PROCESS_ENV).is_some() {
        return true;
    }
    let o = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1"])
        .env(OWN_PROCESS_ENV, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{name} in its own process:\n{}",
        show(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("test result: ok. 1 passed"),
        "{name} did not run in its own process:\n{}",
        show(&o)
    );
    false
}

/// A child process killed (and reaped) when dropped, also when a test fails.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `gametables serve RUN_DIR… --bind 127.0.0.1:0` (a free port): the server,
/// killed when dropped, and the address it prints (`http://…`).
pub fn serve(run_dirs: &[&Path]) -> (KillOnDrop, String) {
    use std::io::BufRead;
    let mut server = KillOnDrop(
        gt().arg("serve")
            .args(run_dirs)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let site = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    (server, site)
}

/// Proptest's configuration with `cases` cases; failing cases are kept
/// beside the test's source file (`tests/it/NAME.proptest-regressions`),
/// where they were kept before the tests became modules of one binary (the
/// default would now put them in `tests/proptest-regressions/NAME.txt`).
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..proptest::test_runner::Config::default()
    }
}

/// Flips one byte inside the first block of section `values` of job
/// `job`'s shard in `dir` (in place); returns the job's id.
pub fn damage_values_block(dir: &Path, job: &str) -> String {
    let plan = PlanFile::load(&RunDir::new(dir)).unwrap();
    let j = plan.job(job).unwrap();
    let p = RunDir::new(dir).shard_path(&j.id);
    let bytes = std::fs::read(&p).unwrap();
    let parts = gametables::pipeline::shard::craft::split(&bytes);
    let vi = parts
        .header
        .sections
        .iter()
        .position(|s| s.0 == "values")
        .unwrap();
    let hlen = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let before_blocks: usize = parts.header.sections[..vi]
        .iter()
        .map(|s| s.1.div_ceil(u64::from(parts.block_size)) as usize)
        .sum();
    let off = 16
        + hlen
        + parts.blocks[..before_blocks]
            .iter()
            .map(Vec::len)
            .sum::<usize>()
        + 3;
    let mut bad = bytes;
    bad[off] ^= 0x20;
    std::fs::write(&p, &bad).unwrap();
    j.id.clone()
}
