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
//! A request whose answer is in memory (every block it needs cached: most
//! lookups of one value on a warm server) is answered on the async threads
//! ([`crate::pipeline::probe::Probe::query_cached`]); the others run on tokio's blocking pool (a
//! lookup reads and decompresses a block; some requests compute in memory).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::pipeline::probe::{Params, ProbeError, Probes};

/// The page: one HTML file with its script and style inline.
pub const PAGE: &str = include_str!("page.html");

/// What the handlers share.
struct App {
    probes: Probes,
}

/// The router of `serve` over `probes` (also used by tests in-process).
pub fn router(probes: Probes) -> Router {
    let app = Arc::new(App { probes });
    Router::new()
        .route("/", get(page))
        .route("/api/v1/", get(index))
        .route("/api/v1", get(index))
        .route("/api/v1/{game}", get(query))
        .route("/plots/{run}/{file}", get(plot))
        .fallback(unknown_route)
        .with_state(app)
}

/// Binds `addr` and serves `probes` until Ctrl-C; calls `ready` with the
/// address bound (port 0 picks a free one).
///
/// # Errors
/// If the address cannot be bound or the server fails.
pub async fn serve(
    probes: Probes,
    addr: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    ready(listener.local_addr()?);
    axum::serve(listener, router(probes))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
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
/// the solved tables 404, a damaged or missing shard 500.
pub fn status_of(e: &ProbeError) -> StatusCode {
    match e {
        ProbeError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ProbeError::NotSolved(_) => StatusCode::NOT_FOUND,
        ProbeError::Run(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

fn error(e: &ProbeError) -> Response {
    let status = status_of(e);
    json(
        status,
        &serde_json::json!({"error": e.to_string(), "status": status.as_u16()}),
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
    UrlPath(game): UrlPath<String>,
    Query(params): Query<Params>,
) -> Response {
    if app.probes.game(&game).is_none() {
        let names: Vec<&str> = app.probes.games.iter().map(|g| g.game()).collect();
        return error(&ProbeError::NotSolved(format!(
            "no game `{game}` here (games: {})",
            names.join(", ")
        )));
    }
    // Answers from memory (cached blocks) right here; only requests that
    // read or decompress a block, or compute, go to the blocking pool.
    let probe = app.probes.game(&game).expect("checked above");
    let r = match probe.query_cached(&params) {
        Some(r) => Ok(r),
        None => {
            let app2 = app.clone();
            tokio::task::spawn_blocking(move || {
                app2.probes
                    .game(&game)
                    .expect("checked above")
                    .query_json(&params)
            })
            .await
        }
    };
    match r {
        Ok(Ok(body)) => json_bytes(StatusCode::OK, body),
        Ok(Err(e)) => error(&e),
        Err(e) => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            &serde_json::json!({"error": format!("probe failed: {e}"), "status": 500}),
        ),
    }
}

async fn plot(
    State(app): State<Arc<App>>,
    UrlPath((run, file)): UrlPath<(usize, String)>,
) -> Response {
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
