//! Talking to Slurm: the commands found on `PATH`, retried on transient
//! controller errors; `squeue` parsed; `sbatch` submissions.

use super::*;

// ---------------------------------------------------------------- talking to Slurm

/// The Slurm commands, found on `PATH`, and how long to retry them.
pub(super) struct Tools {
    pub(super) sbatch: PathBuf,
    pub(super) squeue: PathBuf,
    pub(super) scontrol: PathBuf,
    pub(super) scancel: PathBuf,
    /// A command that fails transiently ([`is_transient`]) is tried again,
    /// with backoff, until this much time has passed since its first try.
    pub(super) retry_for: Duration,
    /// Where retry notices go: the progress bar while one is drawn (hidden
    /// otherwise, which prints them plainly).
    pub(super) notices: std::sync::Mutex<ProgressBar>,
}

pub(super) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// First wait between two tries of a Slurm command; it doubles up to [`MAX_BACKOFF`].
pub(super) const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait between two tries of a Slurm command.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Messages of Slurm commands that mean "the controller is busy or briefly
/// away", worth trying again (lower case). Anything else (a bad partition,
/// a bad option, a refused account) is a real error and is not retried.
pub(super) const TRANSIENT: [&str; 9] = [
    "socket timed out on send/recv operation",
    "unable to contact slurm controller",
    "slurm temporarily unable to accept job",
    "resource temporarily unavailable",
    "transport endpoint is not connected",
    "zero bytes were transmitted or received",
    "communication connection failure",
    "slurmctld is not responding",
    "in standby mode",
];

/// Whether a failure of [`call_once`] is a transient controller failure.
pub(super) fn is_transient(err: &str) -> bool {
    let e = err.to_lowercase();
    TRANSIENT.iter().any(|t| e.contains(t))
}

impl Tools {
    pub(super) fn find(retry_for: Duration) -> Result<Tools> {
        let get = |name: &str| {
            which(name).ok_or_else(|| Error::Slurm {
                message: format!(
                    "`{name}` not found on PATH: run this on a Slurm submit (login) node or add \
                     Slurm's bin directory to PATH, or use --executor local"
                ),
            })
        };
        Ok(Tools {
            sbatch: get("sbatch")?,
            squeue: get("squeue")?,
            scontrol: get("scontrol")?,
            scancel: get("scancel")?,
            retry_for,
            notices: std::sync::Mutex::new(ProgressBar::hidden()),
        })
    }

    /// Prints a notice above the progress bar (or plainly).
    pub(super) fn notice(&self, line: &str) {
        self.notices
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .suspend(|| errln!("{line}"));
    }

    /// Runs a Slurm command, trying again with backoff (1 s, 2 s, 4 s, …,
    /// at most 30 s apart) while it fails transiently and
    /// [`Tools::retry_for`] has not passed, saying so each time. `Err`
    /// holds a one-line reason.
    pub(super) fn call(&self, exe: &Path, args: &[String]) -> std::result::Result<String, String> {
        self.call_until(exe, args, |_| None)
    }

    /// [`Tools::call`], asking `settled` after each transient failure
    /// whether the command took effect anyway (e.g. sbatch submitted the job
    /// but its answer was lost); `Some` ends the retries with that output.
    pub(super) fn call_until(
        &self,
        exe: &Path,
        args: &[String],
        settled: impl Fn(&Tools) -> Option<String>,
    ) -> std::result::Result<String, String> {
        let t0 = Instant::now();
        let mut delay = FIRST_BACKOFF;
        let mut tries = 1u32;
        loop {
            match call_once(exe, args) {
                Err(e) if is_transient(&e) => {
                    if let Some(out) = settled(self) {
                        return Ok(out);
                    }
                    if t0.elapsed() + delay > self.retry_for {
                        return Err(if tries == 1 {
                            e
                        } else {
                            format!(
                                "{e} (a transient failure, still there after {tries} tries in {} s; \
                                 --slurm-retry sets how long to keep trying)",
                                t0.elapsed().as_secs()
                            )
                        });
                    }
                    self.notice(&format!(
                        "slurm: {e}; transient, trying again in {} s (try {}, for up to {} s)",
                        delay.as_secs(),
                        tries + 1,
                        self.retry_for.as_secs()
                    ));
                    std::thread::sleep(delay);
                    delay = (delay * 2).min(MAX_BACKOFF);
                    tries += 1;
                }
                other => return other,
            }
        }
    }
}

/// Runs a Slurm command once; `Err` holds a one-line reason.
/// Longest a read-only query of the cluster's limits (`sinfo`, `scontrol
/// show config`) may take before planning goes on without it: a controller
/// that hangs must not make `--dry-run` wait silently.
pub const LIMITS_QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// [`call_once`] given at most `within`: a command still running then is
/// killed (and reaped) and an error returned saying so. The child is waited
/// for here (polled every 20 ms), its output read on two threads, so it is
/// never reaped elsewhere before it is killed.
pub(super) fn call_within(
    exe: &Path,
    args: &[String],
    within: Duration,
) -> std::result::Result<String, String> {
    use std::io::Read;
    let name = exe
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut child = Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{name}` could not start: {e}"))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + within;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{name}` did not answer within {} s",
                    within.as_secs()
                ));
            }
            Err(e) => return Err(format!("`{name}` could not be waited for: {e}")),
        }
    };
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if status.success() {
        Ok(String::from_utf8_lossy(&out).into_owned())
    } else {
        Err(format!(
            "`{name}` failed ({status}): {}",
            String::from_utf8_lossy(&err).trim()
        ))
    }
}

pub(super) fn call_once(exe: &Path, args: &[String]) -> std::result::Result<String, String> {
    let name = exe
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let out = Command::new(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{name}` could not start: {e}"))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string();
    Err(format!("`{name}` failed ({}): {last}", out.status))
}

pub(super) fn unreachable(why: &str) -> Error {
    Error::Slurm {
        message: format!(
            "cannot reach the Slurm controller ({why}); check that slurmctld is up (`scontrol ping`, \
             `sinfo`) and that SLURM_CONF names this cluster's slurm.conf, or use --executor local"
        ),
    }
}

/// `MaxArraySize` from `scontrol show config` (its `KEY = VALUE` lines), or
/// the default when the key is absent.
pub(super) fn parse_max_array_size(config: &str) -> usize {
    config
        .lines()
        .filter_map(|l| l.split_once('='))
        .find(|(k, _)| k.trim() == "MaxArraySize")
        .and_then(|(_, v)| v.trim().parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
}

pub(super) fn max_array_size(tools: &Tools) -> Result<usize> {
    let config = tools
        .call(&tools.scontrol, &["show".into(), "config".into()])
        .map_err(|e| unreachable(&e))?;
    Ok(parse_max_array_size(&config))
}

/// One row of `squeue --noheader --array --states=all --format=%F|%K|%T|%N|%M|%r`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct QueueRow {
    /// Array job id (job id for a plain job).
    pub(super) job: String,
    /// Array task id (`None` for a plain job).
    pub(super) task: Option<u32>,
    /// State, e.g. `RUNNING`, `CANCELLED`.
    pub(super) state: String,
    /// Node(s) it runs or ran on (empty while pending).
    pub(super) node: String,
    /// Time it has run, as squeue prints it (`1:02`, `1-00:00:00`).
    pub(super) elapsed: String,
    /// Reason, e.g. `Dependency`, `NonZeroExitCode`.
    pub(super) reason: String,
}

/// `STATE` or `STATE (Reason)`.
pub(super) fn state_text(r: &QueueRow) -> String {
    if r.reason.is_empty() || r.reason == "None" {
        r.state.clone()
    } else {
        format!("{} ({})", r.state, r.reason)
    }
}

impl QueueRow {
    pub(super) fn active(&self) -> bool {
        !TERMINAL_STATES.contains(&self.state.as_str())
    }
}

pub(super) const SQUEUE_FORMAT: &str = "--format=%F|%K|%T|%N|%M|%r";

/// Expands a task field: `7`, or a range list like `[3-5,9%2]` (squeue
/// prints one for tasks not yet split off, even with `--array` on some
/// versions).
pub(super) fn task_ids(field: &str) -> Option<Vec<Option<u32>>> {
    if field == "N/A" {
        return Some(vec![None]);
    }
    let body = field.trim_start_matches('[').trim_end_matches(']');
    let body = body.split('%').next().unwrap_or("");
    let mut out = Vec::new();
    for r in body.split(',') {
        match r.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                out.extend((a..=b).map(Some));
            }
            None => out.push(Some(r.parse().ok()?)),
        }
    }
    Some(out)
}

pub(super) fn parse_squeue(text: &str) -> Vec<QueueRow> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.trim().splitn(6, '|').collect();
        let [job, task, state, node, elapsed, reason] = f[..] else {
            continue;
        };
        // States may carry a suffix (e.g. `CANCELLED by 0`) in some versions.
        let state = state.split_whitespace().next().unwrap_or("").to_string();
        for t in task_ids(task).unwrap_or_default() {
            rows.push(QueueRow {
                job: job.to_string(),
                task: t,
                state: state.clone(),
                node: node.trim().to_string(),
                elapsed: elapsed.trim().to_string(),
                reason: reason.to_string(),
            });
        }
    }
    rows
}

/// The queue rows of one run directory's jobs (by job name), keyed by
/// (Slurm job id, task id). With `retry`, transient failures are retried
/// ([`Tools::call`]); without, one try (the waiting loop polls again anyway).
pub(super) fn queue(
    tools: &Tools,
    job_name: &str,
    retry: bool,
) -> std::result::Result<BTreeMap<(String, Option<u32>), QueueRow>, String> {
    let args = [
        "--noheader".into(),
        "--array".into(),
        "--states=all".into(),
        format!("--name={job_name}"),
        SQUEUE_FORMAT.into(),
    ];
    let out = if retry {
        tools.call(&tools.squeue, &args)?
    } else {
        call_once(&tools.squeue, &args)?
    };
    Ok(parse_squeue(&out)
        .into_iter()
        .map(|r| ((r.job.clone(), r.task), r))
        .collect())
}

/// The Slurm job id of a job called `job_name` whose batch script is
/// `script` (squeue `%o`), if the queue lists one: a submission whose answer
/// was lost in a transient failure, which must not be submitted twice.
pub(super) fn submitted_as(tools: &Tools, job_name: &str, script: &str) -> Option<String> {
    let out = call_once(
        &tools.squeue,
        &[
            "--noheader".into(),
            "--states=all".into(),
            format!("--name={job_name}"),
            "--format=%F|%o".into(),
        ],
    )
    .ok()?;
    out.lines().find_map(|l| {
        let (id, command) = l.trim().split_once('|')?;
        (command.trim() == script && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
            .then(|| id.to_string())
    })
}

/// Submits with `sbatch --parsable` (`args` end with the script's absolute
/// path) and returns the Slurm job id. Transient failures are retried; before
/// each retry the queue is asked whether the job went in anyway (its answer
/// lost), so a script is never submitted twice.
pub(super) fn submit(
    tools: &Tools,
    job_name: &str,
    args: &[String],
) -> std::result::Result<String, String> {
    let script = args.last().cloned().unwrap_or_default();
    let out = tools.call_until(&tools.sbatch, args, |t| {
        let id = submitted_as(t, job_name, &script)?;
        t.notice(&format!(
            "slurm: sbatch failed, but {script} is in the queue as job {id}: using it"
        ));
        Some(id)
    })?;
    // `--parsable` prints `JOBID` or `JOBID;CLUSTER`.
    let id = out.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "sbatch --parsable printed `{}`, not a job id",
            out.trim()
        ));
    }
    Ok(id)
}
