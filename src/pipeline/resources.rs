//! What jobs need and what this machine has: memory budgets, the threads a
//! worker may use, and the units `plan` prints them in.
//!
//! Every [`JobSpec`](super::JobSpec) carries the kind's estimate of its peak
//! memory and of the threads it can use. The local executor runs a job only
//! when its memory fits what is left of a budget (default
//! [`available_memory`]; `run --memory`), and refuses at plan time a job
//! above the whole budget; the Slurm executor asks for the memory and
//! threads (`--mem`, `--cpus-per-task`). A worker learns its threads from
//! `worker --threads N` (the local executor passes it), else from
//! `SLURM_CPUS_PER_TASK`, else from the cores it may run on.
//!
//! What one command allocates itself is bounded too: a query, and the plan
//! a job file expands into, know their size before allocating and are
//! refused above [`allocation_limit`] ([`check_allocation`]), which is half
//! of what this process may get ([`default_allocation_limit`]: the
//! available memory, an address-space limit (`ulimit -v`), a cgroup limit)
//! unless `--memory` sets it.

use std::sync::OnceLock;

static WORKER_THREADS: OnceLock<usize> = OnceLock::new();

/// Sets the threads this process's jobs may use (the worker command does,
/// from `--threads`). Only the first call counts.
pub fn set_worker_threads(threads: usize) {
    let _ = WORKER_THREADS.set(threads.max(1));
}

/// The threads a job in this process may use (≥ 1): what
/// [`set_worker_threads`] set, else `SLURM_CPUS_PER_TASK` (a Slurm task), else
/// the cores this process may run on. Kinds call this instead of
/// `std::thread::available_parallelism`; their results never depend on it.
pub fn worker_threads() -> usize {
    *WORKER_THREADS.get_or_init(|| {
        std::env::var("SLURM_CPUS_PER_TASK")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(cores)
    })
}

/// The cores this process may run on (≥ 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `MemAvailable` of `/proc/meminfo` in bytes: what the kernel says can be
/// given to new processes without swapping. `None` if unreadable (not Linux).
pub fn available_memory() -> Option<u64> {
    meminfo_field(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable:",
    )
}

/// Peak resident memory of this process so far (`VmHWM` of
/// `/proc/self/status`), bytes; `None` if unreadable (not Linux). Workers
/// log it beside the job's estimate.
pub fn peak_rss() -> Option<u64> {
    meminfo_field(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmHWM:",
    )
}

/// CPU time this process has used so far, user + system, seconds
/// (`getrusage(RUSAGE_SELF)`); `None` if the call fails. Workers log a
/// job's CPU beside its wall time.
pub fn cpu_seconds() -> Option<f64> {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given,
    // which points to one; it is read only when the call succeeds.
    let u = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) != 0 {
            return None;
        }
        u.assume_init()
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(secs(u.ru_utime) + secs(u.ru_stime))
}

/// `MemTotal` of `/proc/meminfo` in bytes, `None` if unreadable.
pub fn total_memory() -> Option<u64> {
    meminfo_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemTotal:")
}

fn meminfo_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// Parses a memory size: a number of bytes with an optional binary suffix
/// `K`, `M`, `G`, `T` (optionally followed by `i`/`iB`/`B`, any case), e.g.
/// `16G`, `512MiB`, `1048576`. Fractions are allowed with a suffix (`1.5G`).
///
/// # Errors
/// A message naming the input if it is not a size or overflows 64 bits.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let bad = || format!("`{text}` is not a memory size (e.g. 16G, 512M, 1048576)");
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .or_else(|| unit.strip_suffix('i'))
        .unwrap_or(&unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(bad()),
    };
    if num.is_empty() {
        return Err(bad());
    }
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(1u64 << shift).ok_or_else(bad);
    }
    let x: f64 = num.parse().map_err(|_| bad())?;
    let v = x * (1u64 << shift) as f64;
    if shift == 0 || !v.is_finite() || v >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(v.ceil() as u64)
}

pub use crate::util::thousands;

/// A byte count for people: `812 B`, `3.4 MiB`, `17.2 GiB`.
pub fn fmt_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v >= 100.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Seconds for people: `under 1 s`, `42 s`, `7.5 min`, `3.2 h`.
pub fn fmt_seconds(s: u64) -> String {
    match s {
        0 => "under 1 s".into(),
        1..120 => format!("{s} s"),
        120..7200 => format!("{:.1} min", s as f64 / 60.0),
        _ => format!("{:.1} h", s as f64 / 3600.0),
    }
}

static ALLOCATION_LIMIT: OnceLock<u64> = OnceLock::new();

/// Sets the most one query or one plan of this process may allocate
/// (`--memory`). Only the first call counts.
pub fn set_allocation_limit(bytes: u64) {
    let _ = ALLOCATION_LIMIT.set(bytes);
}

/// What [`check_allocation`] allows: what [`set_allocation_limit`] set,
/// else [`default_allocation_limit`].
pub fn allocation_limit() -> u64 {
    *ALLOCATION_LIMIT.get_or_init(default_allocation_limit)
}

/// The default bound on what one query or plan may allocate: half of the
/// least of the available memory (`MemAvailable`), this process's
/// address-space limit (`ulimit -v`, `RLIMIT_AS`) and its cgroup's memory
/// limit (`memory.max`); 1 GiB if none can be read. Half, because a
/// process needs room beside its largest allocation, and a shared machine
/// beside the process.
pub fn default_allocation_limit() -> u64 {
    [
        available_memory(),
        address_space_limit(),
        cgroup_memory_limit(),
    ]
    .into_iter()
    .flatten()
    .min()
    .map_or(1 << 30, |m| m / 2)
}

/// `RLIMIT_AS` (`ulimit -v`) in bytes, `None` when unlimited.
pub fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out-pointer for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(r.rlim_cur)
}

/// The memory limit of this process's cgroup (v2 `memory.max`), `None` if
/// there is none or it cannot be read.
pub fn cgroup_memory_limit() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    std::fs::read_to_string(format!(
        "/sys/fs/cgroup{}/memory.max",
        path.trim_end_matches('/')
    ))
    .ok()?
    .trim()
    .parse()
    .ok()
}

/// Refuses to allocate `need` bytes for `what` above [`allocation_limit`].
///
/// # Errors
/// One line naming `what`, the estimate and the limit, and how to raise it.
pub fn check_allocation(what: &str, need: u64) -> Result<(), String> {
    let limit = allocation_limit();
    if need <= limit {
        return Ok(());
    }
    Err(format!(
        "{what} needs about {} of memory, more than the limit of {} (half of what this \
         process may use here; --memory raises it)",
        fmt_bytes(need),
        fmt_bytes(limit)
    ))
}

/// Megabytes (MiB, rounded up) for Slurm's `--mem`, at least 1.
pub fn slurm_mem_mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("64kb"), Ok(64 << 10));
        assert_eq!(parse_size(" 2 t "), Ok(2 << 40));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        for bad in ["", "G", "12Q", "-3G", "1.5", "99999999999T", "1e3M", "3,5G"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn bytes_and_seconds_print_for_people() {
        assert_eq!(fmt_bytes(812), "812 B");
        assert_eq!(fmt_bytes(3 << 20), "3.0 MiB");
        assert_eq!(fmt_bytes(17_179_869_184 + (1 << 29)), "16.5 GiB");
        assert_eq!(fmt_bytes(300 << 30), "300 GiB");
        assert_eq!(fmt_seconds(0), "under 1 s");
        assert_eq!(fmt_seconds(42), "42 s");
        assert_eq!(fmt_seconds(450), "7.5 min");
        assert_eq!(fmt_seconds(11_520), "3.2 h");
        assert_eq!(slurm_mem_mib(1), 1);
        assert_eq!(slurm_mem_mib((1 << 20) + 1), 2);
    }

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:       24683584 kB\nMemFree:        24429468 kB\nMemAvailable:   24394384 kB\n";
        assert_eq!(
            meminfo_field(text, "MemAvailable:"),
            Some(24_394_384 * 1024)
        );
        assert_eq!(meminfo_field(text, "MemTotal:"), Some(24_683_584 * 1024));
        assert_eq!(meminfo_field(text, "SwapTotal:"), None);
    }
}
