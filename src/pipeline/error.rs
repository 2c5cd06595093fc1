//! The pipeline's error type: every variant names the file, job or run
//! directory it concerns.

use std::path::{Path, PathBuf};

/// Errors of the pipeline layer (job files, manifests, shards, executors,
/// merge, verify). Displayed as one line that names what failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error (shown in the message, so not chained again).
        err: std::io::Error,
    },
    /// A job file is malformed (line and column are 1-based; 0 when unknown).
    #[error("{}{}: {message}", path.display(), at_line(*line, *col))]
    JobFile {
        /// The job file.
        path: PathBuf,
        /// Line of the offending item.
        line: usize,
        /// Column of the offending item.
        col: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A manifest, plan or result file is malformed or unsafe.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A shard is missing, damaged or of the wrong job.
    #[error("shard of job {job} ({}): {message}", path.display())]
    Shard {
        /// The job's name and id prefix.
        job: String,
        /// The shard file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A job's computation or a kind's merge failed.
    #[error("job {job}: {message}")]
    Job {
        /// The job's name (or the kind, for merge-level errors).
        job: String,
        /// What is wrong.
        message: String,
    },
    /// The run directory cannot be used as asked.
    #[error("run directory {}: {message}", path.display())]
    RunDir {
        /// The run directory.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// Slurm is missing, unreachable or refused a submission; the message
    /// says what to do.
    #[error("slurm: {message}")]
    Slurm {
        /// What is wrong and what to do, on one line.
        message: String,
    },
    /// Verification found mismatches; each line names one.
    #[error("verification failed:\n  {}", problems.join("\n  "))]
    Verify {
        /// One line per mismatch.
        problems: Vec<String>,
    },
}

/// Shorthand for pipeline results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl AsRef<Path>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.as_ref().to_path_buf();
        move |err| Error::Io { path, err }
    }

    /// A job-level error.
    pub fn job(job: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Job {
            job: job.into(),
            message: message.into(),
        }
    }
}

/// `:LINE:COL` of a job-file error, or nothing when the place is unknown (0).
fn at_line(line: usize, col: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}:{col}")
    }
}
