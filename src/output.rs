//! Lines for the terminal that never panic.
//!
//! `println!` and `eprintln!` panic when the write fails (standard output
//! redirected to a file on a full disk, a worker whose log cannot grow). The
//! [`outln!`](crate::outln) and [`errln!`](crate::errln) macros write the
//! same lines without panicking: a failed write to standard output is
//! remembered ([`stdout_error`]) and `cli::main` turns it into exit status 1
//! with one line on standard error; a failed write to standard error is
//! dropped (there is nowhere left to say it).

use std::fmt;
use std::io::Write;
use std::sync::Mutex;

/// The first failed write to standard output, as text.
static STDOUT_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes `args` and, if `newline`, a line end to standard output; records
/// a failure instead of panicking.
pub fn out(args: fmt::Arguments<'_>, newline: bool) {
    let mut o = std::io::stdout().lock();
    let r = o
        .write_fmt(args)
        .and_then(|()| if newline { o.write_all(b"\n") } else { Ok(()) });
    if let Err(e) = r {
        record(e);
    }
}

/// Writes `args` and a line end to standard error, ignoring failures.
pub fn err(args: fmt::Arguments<'_>) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args).and_then(|()| e.write_all(b"\n"));
}

fn record(e: std::io::Error) {
    let mut slot = STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slot.get_or_insert_with(|| e.to_string());
}

/// Flushes standard output and returns the first write that failed, if any
/// (e.g. `No space left on device (os error 28)`).
pub fn stdout_error() -> Option<String> {
    if let Err(e) = std::io::stdout().lock().flush() {
        record(e);
    }
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// `println!` that never panics (see the [module docs](crate::output)).
#[macro_export]
macro_rules! outln {
    () => { $crate::output::out(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::output::out(format_args!($($arg)*), true) };
}

/// `print!` that never panics (see the [module docs](crate::output)).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::out(format_args!($($arg)*), false) };
}

/// `eprintln!` that never panics (see the [module docs](crate::output)).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::err(format_args!($($arg)*)) };
}
