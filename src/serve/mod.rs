//! `gametables serve`: an HTTP JSON API over the probes of some run
//! directories, and the web page that plays against them.
//!
//! - `GET /api/v1/` — what is served: the run directories, each game's
//!   tables (board sizes, boxes) and the pictures found in `RUN_DIR/plots/`.
//! - `GET /api/v1/GAME?key=value…` — each registered game's probe
//!   (`GET /api/v1/` lists them): exactly the JSON `gametables query GAME … --json` prints;
//!   errors as `{"error": "…", "status": N}` with HTTP status 400 (bad
//!   request), 404 (outside the solved tables) or 500 (damaged shard).
//! - `GET /plots/K/FILE` — a PNG or SVG from the K-th run directory's `plots/`.
//! - `GET /` — the page (HTML, JavaScript and CSS embedded in the binary; no
//!   external assets).
//!
//! **Parameters** are those the game's probe knows
//! ([`crate::pipeline::probe::Probe::keys`]): an unknown parameter, or one
//! given twice (`n=3&n=4`), is refused (400) naming it.
//!
//! **Two kinds of work, kept apart.** A request whose answer is in memory
//! (every block it needs cached: most lookups of one value on a warm
//! server) is answered on the async threads
//! ([`crate::pipeline::probe::Probe::query_cached`]). The others are either
//! *lookups* that read a run's shards (or are refused at once) or
//! *computations* in memory (a solve beyond the runs), as the probe says
//! ([`crate::pipeline::probe::Probe::work_of`]). Lookups run on tokio's
//! blocking pool, at most [`Limits::lookups`] at once; computations run on
//! threads of their own at a lower CPU priority (nice
//! [`COMPUTE_NICE`]), at most [`Limits::concurrent`] at once. A lookup thus
//! never waits for a permit, a thread or the CPU behind a solve.
//!
//! **Bounded work.** A request off the async threads runs under a
//! [`Progress`] with the server's budget ([`Limits::max_work`]: what one
//! answer may compute in memory, refused before it starts) and a stop flag
//! that is set when its client disconnects (the handler's future is
//! dropped), when its time is up ([`Limits::time_limit`]: the answer is
//! then 503) and when the server stops; long computations read it and
//! give up. Requests over their limit of either kind wait for a permit,
//! within their time. A request whose answer cannot be served (outside
//! the runs' tables) is refused before anything is computed. SIGINT and
//! SIGTERM stop every computation and the server within
//! [`SHUTDOWN_GRACE`].
//!
//! **Errors in the API's words.** The probes' messages are written for
//! `gametables query`; [`api_words`] says them with the API's parameters
//! (`q=24000`, not `--q 24000`) and the server's limits (not `--max-work`,
//! `--run-dir`), and names a run directory by its name, never by the
//! server's path (also in a 500 for a damaged shard).
//!
//! **Errors are JSON** everywhere: `{"error": "…", "status": N}`, for the
//! API, unknown routes, malformed paths and query strings, URLs and headers
//! over the limits ([`MAX_URI_BYTES`], [`MAX_HEADER_BYTES`]: 414 and 431
//! from here; a request head larger than hyper's own buffer gets hyper's
//! bodiless 431, given a JSON body by [`JsonErrorIo`]).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::pipeline::probe::{DEFAULT_MAX_WORK, ProbeError, Probes, Progress, Work, params_of};

/// The page: one HTML file with its script and style inline.
pub const PAGE: &str = include_str!("page.html");

/// Longest URL (path and query) answered; longer ones get a JSON 414.
pub const MAX_URI_BYTES: usize = 8 << 10;

/// Most bytes of request headers answered; more get a JSON 431.
pub const MAX_HEADER_BYTES: usize = 16 << 10;

/// How long after SIGINT or SIGTERM the server waits for the requests in
/// flight (told to stop) before it exits anyway.
pub const SHUTDOWN_GRACE: Duration = Duration::from_millis(1200);

/// Default of [`Limits::time_limit`].
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(10);

/// The nice value of the threads that compute in memory (and of the
/// threads they start): the CPU goes to lookups first.
pub const COMPUTE_NICE: i32 = 10;

/// What one request may take (`serve --max-work`, `--time-limit`).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most values one answer may compute in memory ([`Progress::max_work`]).
    pub max_work: u64,
    /// Longest a request may take, waiting included; then it is stopped and
    /// answered 503.
    pub time_limit: Duration,
    /// Requests computing in memory at once (each on a thread of its own,
    /// niced); default the number of cores.
    pub concurrent: usize,
    /// Lookups reading a run at once (on tokio's blocking pool), separate
    /// from [`Limits::concurrent`]; default twice the number of cores, at
    /// least 4.
    pub lookups: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let cores = crate::pipeline::resources::cores().max(1);
        Limits {
            max_work: DEFAULT_MAX_WORK,
            time_limit: DEFAULT_TIME_LIMIT,
            concurrent: cores,
            lookups: (2 * cores).max(4),
        }
    }
}

/// What the handlers share.
struct App {
    probes: Probes,
    limits: Limits,
    /// Permits to compute in memory.
    compute: Arc<tokio::sync::Semaphore>,
    /// Permits to look up on the blocking pool.
    lookup: Arc<tokio::sync::Semaphore>,
    /// The run directories' paths (as given and canonical) and the names
    /// errors call them by, longest path first ([`api_words`]).
    run_names: Vec<(String, String)>,
    /// The requests computing, to stop on shutdown.
    in_flight: Mutex<Vec<Weak<Progress>>>,
}

impl App {
    fn new(probes: Probes, limits: Limits) -> App {
        let run_names = run_names(&probes);
        App {
            probes,
            limits,
            compute: Arc::new(tokio::sync::Semaphore::new(limits.concurrent.max(1))),
            lookup: Arc::new(tokio::sync::Semaphore::new(limits.lookups.max(1))),
            run_names,
            in_flight: Mutex::new(Vec::new()),
        }
    }

    /// A new request's progress, known to [`App::stop_all`].
    fn progress(&self) -> Arc<Progress> {
        let p = Arc::new(Progress {
            max_work: self.limits.max_work,
            // A computation whose time model says it cannot end within the
            // request's time is refused at once instead of stopped at the end.
            time_limit: Some(self.limits.time_limit),
            ..Progress::default()
        });
        let mut v = self
            .in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(&p));
        p
    }

    /// Tells every computation in flight to stop (shutdown).
    fn stop_all(&self) {
        let v = self
            .in_flight
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for p in v.iter().filter_map(Weak::upgrade) {
            p.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Sets a request's stop flag when dropped: when the handler returns, and
/// when hyper drops it because the client went away.
struct StopOnDrop(Arc<Progress>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Relaxed);
    }
}

/// The router of `serve` over `probes` with the default [`Limits`] (also
/// used by tests in-process).
pub fn router(probes: Probes) -> Router {
    router_with(probes, Limits::default())
}

/// The router of `serve` over `probes` with `limits`.
pub fn router_with(probes: Probes, limits: Limits) -> Router {
    router_of(Arc::new(App::new(probes, limits)))
}

fn router_of(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/v1/", get(index))
        .route("/api/v1", get(index))
        .route("/api/v1/{game}", get(query))
        .route("/plots/{run}/{file}", get(plot))
        .fallback(unknown_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(limit_request_head))
        .with_state(app)
}

/// Binds `addr` and serves `probes` under `limits` until SIGINT (Ctrl-C)
/// or SIGTERM; calls `ready` with the address bound (port 0 picks a free
/// one). On either signal every computation in flight is told to stop, and
/// the server returns within [`SHUTDOWN_GRACE`] whatever still runs.
///
/// # Errors
/// If the address cannot be bound or the server fails.
pub async fn serve(
    probes: Probes,
    addr: SocketAddr,
    limits: Limits,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = JsonErrorListener(tokio::net::TcpListener::bind(addr).await?);
    ready(axum::serve::Listener::local_addr(&listener)?);
    let app = Arc::new(App::new(probes, limits));
    let (tx, rx) = tokio::sync::watch::channel(false);
    let stopper = app.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        stopper.stop_all();
        let _ = tx.send(true);
    });
    let (mut graceful, mut hard) = (rx.clone(), rx);
    let server = axum::serve(listener, router_of(app)).with_graceful_shutdown(async move {
        let _ = graceful.wait_for(|s| *s).await;
    });
    tokio::select! {
        r = async { server.await } => r,
        () = async {
            let _ = hard.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => Ok(()),
    }
}

/// SIGINT or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Refuses, with the API's JSON error body, a URL longer than
/// [`MAX_URI_BYTES`] (414) and headers larger than [`MAX_HEADER_BYTES`] (431).
async fn limit_request_head(req: Request, next: Next) -> Response {
    let uri = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri > MAX_URI_BYTES {
        return error_body(
            StatusCode::URI_TOO_LONG,
            &format!("the URL has {uri} bytes, more than the {MAX_URI_BYTES} answered here"),
        );
    }
    let headers: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if headers > MAX_HEADER_BYTES {
        return error_body(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            &format!(
                "the request headers have {headers} bytes, more than the {MAX_HEADER_BYTES} answered here"
            ),
        );
    }
    next.run(req).await
}

async fn page() -> impl IntoResponse {
    ([(header::CACHE_CONTROL, "no-cache")], Html(PAGE))
}

fn json(status: StatusCode, v: &serde_json::Value) -> Response {
    json_bytes(status, v.to_string().into_bytes())
}

fn json_bytes(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The HTTP status that reports a probe's error: a bad request 400, outside
/// the solved tables (or over the work budget) 404, a damaged or missing
/// shard 500, stopped (time limit, shutdown) 503.
pub fn status_of(e: &ProbeError) -> StatusCode {
    match e {
        ProbeError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ProbeError::NotSolved(_) => StatusCode::NOT_FOUND,
        ProbeError::Run(_) => StatusCode::INTERNAL_SERVER_ERROR,
        ProbeError::Stopped(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl App {
    /// The response of a probe's error: its status ([`status_of`]) and
    /// message in the API's words ([`api_words`]).
    fn error(&self, e: &ProbeError) -> Response {
        let server_error = matches!(e, ProbeError::Run(_));
        error_body(
            status_of(e),
            &api_words(&e.to_string(), &self.run_names, server_error),
        )
    }
}

/// The API's error body `{"error": message, "status": N}` with `status`.
fn error_body(status: StatusCode, message: &str) -> Response {
    json(
        status,
        &serde_json::json!({"error": message, "status": status.as_u16()}),
    )
}

/// Picture files (`.png`, `.svg`) in `dir/plots/`, sorted.
/// The pictures of a run: regular files in `plots/` only (a symbolic link
/// there, which could point anywhere, is neither listed nor served).
fn plots_of(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("plots"))
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_type().ok()?.is_file().then_some(())?;
            e.file_name().into_string().ok()
        })
        .filter(|n| safe_name(n) && (n.ends_with(".png") || n.ends_with(".svg")))
        .collect();
    v.sort();
    v
}

/// A plain file name: letters, digits, `.`, `-`, `_`, not starting with `.`.
fn safe_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with('.')
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

async fn index(State(app): State<Arc<App>>) -> Response {
    let games: BTreeMap<&str, serde_json::Value> = app
        .probes
        .games
        .iter()
        .map(|g| (g.game(), g.describe()))
        .collect();
    let runs: Vec<serde_json::Value> = app
        .probes
        .runs
        .iter()
        .enumerate()
        .map(|(i, (d, kind))| {
            serde_json::json!({
                "index": i,
                "dir": d.display().to_string(),
                "kind": kind,
                "plots": plots_of(d).into_iter().map(|f| format!("/plots/{i}/{f}")).collect::<Vec<_>>(),
            })
        })
        .collect();
    json(
        StatusCode::OK,
        &serde_json::json!({"version": env!("CARGO_PKG_VERSION"), "runs": runs, "games": games}),
    )
}

async fn query(
    State(app): State<Arc<App>>,
    game: Result<UrlPath<String>, PathRejection>,
    pairs: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let UrlPath(game) = match game {
        Ok(g) => g,
        Err(e) => return error_body(e.status(), &e.body_text()),
    };
    let Query(pairs) = match pairs {
        Ok(p) => p,
        Err(e) => return error_body(e.status(), &e.body_text()),
    };
    let Some(probe) = app.probes.game(&game) else {
        let names: Vec<&str> = app.probes.games.iter().map(|g| g.game()).collect();
        return app.error(&ProbeError::NotSolved(format!(
            "no game `{game}` here (games: {})",
            names.join(", ")
        )));
    };
    let params = match params_of(&game, probe.keys(), pairs) {
        Ok(p) => p,
        Err(e) => return app.error(&e),
    };
    // Answers from memory (cached blocks) right here; only requests that
    // read or decompress a block, or compute, go further.
    if let Some(r) = probe.query_cached(&params) {
        return match r {
            Ok(body) => json_bytes(StatusCode::OK, body),
            Err(e) => app.error(&e),
        };
    }
    let kind = probe.work_of(&params);
    let limit = app.limits.time_limit;
    let progress = app.progress();
    // Stops the computation when this future ends or is dropped (the
    // client went away).
    let _stop = StopOnDrop(progress.clone());
    let too_long = || {
        app.error(&ProbeError::Stopped(format!(
            "stopped after {} s, this server's time limit per request; \
             a run covering the request answers it at once",
            limit.as_secs_f64()
        )))
    };
    let answer = move |app: &App, p: &Progress| {
        app.probes
            .game(&game)
            .expect("checked above")
            .query_with(&params, p)
    };
    let work = async {
        match kind {
            Work::Lookup => {
                let permit = app
                    .lookup
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed");
                let (app2, p2) = (app.clone(), progress.clone());
                tokio::task::spawn_blocking(move || {
                    let _permit = permit; // held until the lookup ends
                    answer(&app2, &p2)
                })
                .await
                .map_err(|e| e.to_string())
            }
            Work::Compute => {
                let permit = app
                    .compute
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the semaphore is never closed");
                let (app2, p2) = (app.clone(), progress.clone());
                let (tx, rx) = tokio::sync::oneshot::channel();
                std::thread::Builder::new()
                    .name("gt-compute".into())
                    .spawn(move || {
                        let _permit = permit; // held until the computation ends
                        lower_priority();
                        let _ = tx.send(answer(&app2, &p2));
                    })
                    .map_err(|e| format!("no thread to compute on: {e}"))?;
                rx.await
                    .map_err(|_| "the computation ended without an answer".to_string())
            }
        }
    };
    match tokio::time::timeout(limit, work).await {
        Err(_) => too_long(),
        Ok(Ok(Ok(body))) => json_bytes(StatusCode::OK, body),
        Ok(Ok(Err(e))) => app.error(&e),
        Ok(Err(e)) => error_body(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the request failed: {e}"),
        ),
    }
}

/// Lowers the calling thread's CPU priority to [`COMPUTE_NICE`] (threads
/// it starts inherit it), so that lookups get the CPU first. Linux only
/// (elsewhere nothing is done); a failure is ignored.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread (on Linux the nice
    // value is per thread: `who` is this thread's id).
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid, COMPUTE_NICE);
    }
}

/// The run directories of `probes` as errors may name them: each path as
/// given and canonical, with the name the API calls it by (its last
/// component), longest path first.
fn run_names(probes: &Probes) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for (dir, _) in &probes.runs {
        let name = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut paths = vec![dir.display().to_string()];
        if let Ok(c) = std::fs::canonicalize(dir) {
            paths.push(c.display().to_string());
        }
        for p in paths {
            if !p.is_empty() && p != name {
                v.push((p, name.clone()));
            }
        }
    }
    v.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    v.dedup();
    v
}

/// The server's own words for what a probe says in `gametables query`'s:
/// each run directory's path (`run_names`: path and name) becomes its name;
/// the CLI's hints about its own flags become the server's (`--max-work`:
/// this server's work limit; `pass --run-dir`: serve its run directory;
/// `--time-limit`, `--memory`);
/// a flag with a value becomes the API's parameter (`--q 24000` →
/// `q=24000`, `--q-max` → `q_max`); with `server_error` (a 500: a damaged
/// or missing shard, an unreadable table), any other absolute path is cut
/// to its last component.
pub fn api_words(message: &str, run_names: &[(String, String)], server_error: bool) -> String {
    let mut m = message.to_string();
    for (path, name) in run_names {
        m = m.replace(path.as_str(), name);
    }
    for (cli, api) in [
        (
            "(half of what this process may use here; --memory raises it)",
            "(this server's memory limit per request)",
        ),
        (" and pass --run-dir", " and serve its run directory"),
        (", or pass --run-dir", ", or serve its run directory"),
        (" (--run-dir) ", " served here "),
        (" then --run-dir or serve it", " then serve it"),
        (" and serve or --run-dir it", " and serve it"),
    ] {
        m = m.replace(cli, api);
    }
    // "(`query` then finds runs/NAME)": how the CLI finds a run.
    while let Some(at) = m.find(" (`query` then finds ") {
        match m[at..].find(')') {
            Some(end) => m.replace_range(at..at + end + 1, ""),
            None => break,
        }
    }
    let mut out = String::with_capacity(m.len());
    let mut rest = m.as_str();
    while let Some(at) = rest.find("--") {
        let (before, after) = rest.split_at(at);
        out.push_str(before);
        let starts_word = before
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '-');
        let name_len = after[2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(after.len() - 2);
        let name = after[2..2 + name_len].trim_end_matches('-');
        if !starts_word || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str("--");
            rest = &after[2..];
            continue;
        }
        rest = &after[2 + name.len()..];
        let server = match name {
            "max-work" => Some("this server's work limit"),
            "time-limit" => Some("this server's time limit per request"),
            "memory" => Some("this server's memory limit per request"),
            "run-dir" => Some("a run directory served"),
            _ => None,
        };
        if let Some(words) = server {
            out.push_str(words);
            continue;
        }
        let key = name.replace('-', "_");
        // A value follows: a number or a list of numbers.
        let value = rest
            .strip_prefix(' ')
            .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            .map(|v| {
                let end = v.find(char::is_whitespace).unwrap_or(v.len());
                v[..end].trim_end_matches([':', ';', ',', ')', '.'])
            });
        match value {
            Some(v) => {
                out.push_str(&format!("{key}={v}"));
                rest = &rest[1 + v.len()..];
            }
            None => out.push_str(&format!("`{key}`")),
        }
    }
    out.push_str(rest);
    if server_error {
        out = out
            .split(' ')
            .map(|w| {
                let bare = w.trim_start_matches(['(', '`', '"', '\'']);
                if bare.starts_with('/') && bare.matches('/').count() >= 2 {
                    let lead = &w[..w.len() - bare.len()];
                    let tail = bare.rsplit('/').next().unwrap_or(bare);
                    format!("{lead}{tail}")
                } else {
                    w.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    out
}

async fn plot(
    State(app): State<Arc<App>>,
    path: Result<UrlPath<(String, String)>, PathRejection>,
) -> Response {
    let UrlPath((run_text, file)) = match path {
        Ok(p) => p,
        Err(e) => return error_body(e.status(), &e.body_text()),
    };
    let Ok(run) = run_text.parse::<usize>() else {
        return error_body(
            StatusCode::BAD_REQUEST,
            &format!(
                "/plots/{run_text}/{file}: `{run_text}` is not a run number (GET /api/v1/ lists them)"
            ),
        );
    };
    let not_found = || not_found(&format!("no picture /plots/{run}/{file}"));
    let Some((dir, _)) = app.probes.runs.get(run) else {
        return not_found();
    };
    if !safe_name(&file) {
        return not_found();
    }
    let ctype = if file.ends_with(".png") {
        "image/png"
    } else if file.ends_with(".svg") {
        "image/svg+xml"
    } else {
        return not_found();
    };
    let path: PathBuf = dir.join("plots").join(&file);
    // Only a regular file: never a symbolic link out of the run directory.
    match tokio::fs::symlink_metadata(&path).await {
        Ok(m) if m.is_file() => {}
        _ => return not_found(),
    }
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, ctype)], bytes).into_response(),
        Err(_) => not_found(),
    }
}

/// A 404 with the API's JSON error body.
fn not_found(message: &str) -> Response {
    json(
        StatusCode::NOT_FOUND,
        &serde_json::json!({"error": message, "status": 404}),
    )
}

/// Any route the server does not have: 404 with the API's JSON error body.
async fn unknown_route(uri: axum::http::Uri) -> Response {
    not_found(&format!("no such route: {}", uri.path()))
}

/// A method other than GET on a route: 405 with the API's JSON error body.
async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    error_body(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{method} {}: only GET is answered", uri.path()),
    )
}

/// A TCP listener whose connections are [`JsonErrorIo`]s.
struct JsonErrorListener(tokio::net::TcpListener);

impl axum::serve::Listener for JsonErrorListener {
    type Io = JsonErrorIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = axum::serve::Listener::accept(&mut self.0).await;
        (
            JsonErrorIo {
                inner: io,
                pending: Vec::new(),
                sent: 0,
            },
            addr,
        )
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// A connection that gives hyper's own error responses a JSON body. hyper
/// answers a request it cannot parse (a head larger than its buffer, a
/// malformed request line or header) before any handler runs, with a
/// status line, `content-length: 0` and no body; every response of this
/// server's handlers has a body. Such a head written by hyper is replaced
/// by the same status with the API's JSON error body.
pub struct JsonErrorIo {
    inner: tokio::net::TcpStream,
    /// Bytes to write before anything else (a rewritten error response).
    pending: Vec<u8>,
    /// How much of `pending` is written.
    sent: usize,
}

impl JsonErrorIo {
    /// Writes what is pending; `Ready(Ok)` once all of it is written.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.sent < self.pending.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.sent..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

/// `head` (one write of a whole response head without a body) with a JSON
/// body, if it is an error head hyper wrote for a request it could not
/// parse: status 4xx or 5xx and `content-length: 0`.
pub fn json_error_response(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.1 ")?;
    if !text.ends_with("\r\n\r\n") || !(rest.starts_with('4') || rest.starts_with('5')) {
        return None;
    }
    let status: u16 = rest.get(..3)?.parse().ok()?;
    let lines: Vec<&str> = text.trim_end().split("\r\n").collect();
    if !lines
        .iter()
        .any(|l| l.eq_ignore_ascii_case("content-length: 0"))
    {
        return None;
    }
    let reason = StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("error");
    let body = serde_json::json!({
        "error": format!("{reason}: the request could not be read (its URL or headers are too long, or malformed)"),
        "status": status,
    })
    .to_string();
    let mut out = String::new();
    for l in &lines {
        if l.eq_ignore_ascii_case("content-length: 0") {
            out.push_str("content-type: application/json\r\n");
            out.push_str(&format!("content-length: {}\r\n", body.len()));
        } else {
            out.push_str(l);
            out.push_str("\r\n");
        }
    }
    out.push_str("\r\n");
    out.push_str(&body);
    Some(out.into_bytes())
}

impl AsyncRead for JsonErrorIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for JsonErrorIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        std::task::ready!(self.drain(cx))?;
        if let Some(out) = json_error_response(buf) {
            self.pending = out;
            self.sent = 0;
            // Taken whole; written by this call or the next write or flush.
            let _ = self.drain(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        std::task::ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
