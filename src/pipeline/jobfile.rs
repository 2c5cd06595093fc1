//! Job files (`jobs/NAME.toml`): one computation, `kind = "…"` plus the
//! kind's parameters. Unknown fields are errors that name file, line and field.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::error::{Error, Result};
use super::kind::Kinds;
use super::kind::{JobKind, JobSpec};

/// A job file read from disk and planned by its kind.
#[derive(Debug, Clone)]
pub struct JobFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its name: the file stem (`jobs/NAME.toml` → `NAME`).
    pub name: String,
    /// The `kind` value.
    pub kind: String,
    /// The parameters without `kind`, as the kind normalised them.
    pub params: toml::Table,
    /// The jobs, in dependency order.
    pub jobs: Vec<JobSpec>,
}

/// 1-based line and column of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// A job-file error located at the line where `key = …` is written (line 0
/// if the key is absent).
pub fn error_at_key(path: &Path, text: &str, key: &str, message: impl Into<String>) -> Error {
    let (line, col) = text
        .lines()
        .enumerate()
        .find(|(_, l)| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='))
        })
        .map_or((0, 0), |(i, l)| (i + 1, l.len() - l.trim_start().len() + 1));
    Error::JobFile {
        path: path.to_path_buf(),
        line,
        col,
        message: message.into(),
    }
}

/// Memory a plan takes per job while it is built and written (the job in
/// the kind's list, in `plan.toml` and its manifest, its parameters): a
/// generous bound, so that the check comes before any real allocation.
pub const PLAN_BYTES_PER_JOB: u128 = 2048;

/// Memory a plan takes per input of a job (its name in the kind's list, name
/// and id in `plan.toml` and in the manifest).
pub const PLAN_BYTES_PER_INPUT: u128 = 512;

/// A number for people: `1,234`, or `1.7e12` when large.
fn count_text(n: u128) -> String {
    if n < 10_000_000 {
        super::resources::thousands(n)
    } else {
        format!("{:.1e}", n as f64)
    }
}

/// Checks, before the kind builds its jobs, that the plan a job file expands
/// into fits in memory: `jobs` jobs reading `inputs` input shards in all
/// cost [`PLAN_BYTES_PER_JOB`] and [`PLAN_BYTES_PER_INPUT`] each, and must
/// stay within [`allocation_limit`](super::resources::allocation_limit).
/// Every kind whose number of jobs is not bounded by the length of the job
/// file (sizes, ranges, tiles) calls it from [`JobKind::plan`] with counts
/// computed arithmetically, so a job file like `n_max = 400` is refused with
/// the numbers instead of aborting in an allocation.
///
/// # Errors
/// [`Error::JobFile`] at `key`: more jobs or input references than a plan may
/// have ([`MAX_PLAN_JOBS`], [`MAX_PLAN_INPUTS`]), or a
/// plan larger than the allocation limit, naming the numbers.
pub fn check_plan_size(path: &Path, text: &str, key: &str, jobs: u128, inputs: u128) -> Result<()> {
    let bytes = jobs
        .saturating_mul(PLAN_BYTES_PER_JOB)
        .saturating_add(inputs.saturating_mul(PLAN_BYTES_PER_INPUT));
    let what = format!(
        "this job file plans {} job(s) reading {} input shard(s) in all; the plan alone",
        count_text(jobs),
        count_text(inputs)
    );
    super::resources::check_allocation(&what, u64::try_from(bytes).unwrap_or(u64::MAX))
        .map_err(|e| error_at_key(path, text, key, e))?;
    if jobs > MAX_PLAN_JOBS as u128 {
        let n = usize::try_from(jobs).unwrap_or(usize::MAX);
        return Err(error_at_key(path, text, key, too_many_jobs(n)));
    }
    if inputs > u128::from(MAX_PLAN_INPUTS) {
        let n = u64::try_from(inputs).unwrap_or(u64::MAX);
        return Err(error_at_key(path, text, key, too_many_inputs(n)));
    }
    Ok(())
}

/// Parses a job file's text into the kind's parameter struct `T` (which
/// should have `#[serde(deny_unknown_fields)]` and a `kind` field).
///
/// # Errors
/// [`Error::JobFile`] with the line and column toml reports and its message
/// on one line (e.g. ``unknown field `boxs`, expected `kind` or `boxes` ``).
pub fn parse_params<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let (line, col) = e.span().map_or((0, 0), |s| line_col(text, s.start));
        Error::JobFile {
            path: path.to_path_buf(),
            line,
            col,
            message: plain_message(e.message()),
        }
    })
}

/// toml's message on one line, in the job file's terms: its integers are
/// signed 64-bit, so a larger number says so, not "u64 value was too large";
/// a quoted number says to drop the quotes.
pub fn plain_message(m: &str) -> String {
    let m = m.trim().replace('\n', " ");
    if m.contains("value was too large") || m.contains("number too large") {
        return format!(
            "number too large: a job file's integers are at most {} ({m})",
            i64::MAX
        );
    }
    if m.starts_with("invalid type: string")
        && (m.contains("expected u") || m.contains("expected i"))
    {
        return format!("{m}: write the number without quotes");
    }
    m
}

/// Most jobs one plan may have: a plan takes a few KiB a job in memory (the
/// job's parameters, id, inputs), so 20,000 jobs plan in well under 100 MB.
/// Far above any standard job file (the largest, 10×80 Chomp, has 149).
pub const MAX_PLAN_JOBS: usize = 20_000;

/// Most input references (a job reading another's shard) one plan may
/// have: about 150 bytes each in memory, so at most about 75 MB. One Chomp
/// box of the most parts (1,000, each reading every earlier one) has 499,500.
pub const MAX_PLAN_INPUTS: u64 = 500_000;

/// Why a plan of `n` jobs is refused ([`MAX_PLAN_JOBS`]).
pub fn too_many_jobs(n: usize) -> String {
    format!(
        "{n} jobs or more, above the {MAX_PLAN_JOBS} jobs a plan may have; split the job \
         file into several, or give fewer, larger jobs"
    )
}

/// Why a plan whose jobs read `n` shards of others in all is refused
/// ([`MAX_PLAN_INPUTS`]).
pub fn too_many_inputs(n: u64) -> String {
    format!(
        "its jobs would read {n} shards of other jobs or more, above the {MAX_PLAN_INPUTS} \
         a plan may have (each part of a split box reads every earlier part); give fewer \
         parts (a larger job_memory or window_positions) or split the job file"
    )
}

/// Largest job file read, in bytes: 1 MiB holds about 80,000 box entries
/// (a box is about 12 bytes), more than [`MAX_PLAN_JOBS`]
/// allows, and parses in under 100 MB; a larger file (or `/dev/zero`) is
/// refused before it is read whole.
pub const MAX_JOB_FILE_BYTES: u64 = 1 << 20;

/// The text of a job file of at most [`MAX_JOB_FILE_BYTES`].
///
/// # Errors
/// [`Error::Io`] if unreadable; [`Error::JobFile`] if larger or not UTF-8.
fn read_capped(path: &Path) -> Result<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(Error::io(path))?;
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(Error::io(path))?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(Error::JobFile {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
            message: format!(
                "larger than {} MiB, the most a job file may be: not read",
                MAX_JOB_FILE_BYTES >> 20
            ),
        });
    }
    String::from_utf8(bytes).map_err(|_| Error::JobFile {
        path: path.to_path_buf(),
        line: 0,
        col: 0,
        message: "not UTF-8 text".into(),
    })
}

/// Reads a job file, finds its kind in `registry` and plans it.
///
/// # Errors
/// [`Error::Io`] if unreadable; [`Error::JobFile`] if `kind` is missing or
/// unknown or the kind rejects the parameters.
pub fn read_job_file(path: &Path, registry: &dyn Kinds) -> Result<JobFile> {
    let text = read_capped(path)?;
    let table: toml::Table = parse_params(path, &text)?;
    let kind_name = match table.get("kind") {
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => return Err(error_at_key(path, &text, "kind", "`kind` must be a string")),
        None => {
            return Err(Error::JobFile {
                path: path.to_path_buf(),
                line: 1,
                col: 1,
                message: format!("missing field `kind` (one of: {})", kind_names(registry)),
            });
        }
    };
    let kind: &dyn JobKind = registry.kind(&kind_name).ok_or_else(|| {
        error_at_key(
            path,
            &text,
            "kind",
            format!(
                "unknown kind `{kind_name}` (known: {})",
                kind_names(registry)
            ),
        )
    })?;
    let (params, jobs) = kind.plan(path, &text)?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("job")
        .to_string();
    Ok(JobFile {
        path: path.to_path_buf(),
        name,
        kind: kind_name,
        params,
        jobs,
    })
}

/// [`read_job_file`], then each job split over ranks as its kind says
/// under `policy` ([`JobKind::split`]): its ranks, and the memory of one
/// rank and the CPU of all in its estimates.
///
/// # Errors
/// As [`read_job_file`], and the kind's refusal of the policy.
pub fn read_job_file_split(
    path: &Path,
    registry: &dyn Kinds,
    policy: &super::kind::SplitPolicy,
) -> Result<JobFile> {
    let mut jf = read_job_file(path, registry)?;
    if *policy == super::kind::SplitPolicy::default() {
        return Ok(jf);
    }
    let kind = registry.kind(&jf.kind).expect("the kind was found");
    for j in &mut jf.jobs {
        if let Some(s) = kind.split(j, policy)? {
            j.ranks = s.ranks;
            j.memory = s.memory;
            j.cpu_seconds = s.cpu_seconds;
        }
    }
    Ok(jf)
}

fn kind_names(registry: &dyn Kinds) -> String {
    registry.names().into_iter().collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        let t = "a = 1\nbb = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 9), (2, 4));
    }

    #[test]
    fn error_at_key_finds_the_line() {
        let t = "kind = \"x\"\n  boxes = [[1, 2]]\n";
        match error_at_key(Path::new("j.toml"), t, "boxes", "bad") {
            Error::JobFile { line, col, .. } => assert_eq!((line, col), (2, 3)),
            e => panic!("{e}"),
        }
    }
}
