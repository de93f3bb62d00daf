//! Routes, request reading under the limits, admission of solves, authentication and
//! errors (`{error, path}`: 4xx for bad input with the CLI's path-named messages, 5xx only
//! for faults of the server).

use super::cluster::Cluster;
use super::metrics::Metrics;
use super::{openapi, tls, Config};
use crate::tooling::compare::{self, Contender};
use crate::wire::decision::Decision;
use crate::wire::{InputError, InstanceDoc};
use crate::{CancelHandle, Instance, Options, SolverKind};
use axum::body::Body;
use axum::extract::{MatchedPath, Query, Request, State as AxState};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http_body_util::BodyExt;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// What the accept loop knows of a connection, attached to each of its requests.
#[derive(Clone, Debug)]
pub struct ConnInfo {
    /// The client's address.
    pub peer: SocketAddr,
    /// The client presented a certificate the client CA verified.
    pub client_cert: bool,
}

/// State shared by every request.
pub struct State {
    /// The configuration the server runs with.
    pub config: Config,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Set once the graceful shutdown began.
    pub shutting_down: AtomicBool,
    /// The extender's cluster view and plan.
    pub(crate) cluster: Arc<Cluster>,
    token: Option<String>,
    slots: Arc<Semaphore>,
    /// Solves holding or waiting for a slot.
    waiting: AtomicUsize,
    active: Mutex<HashMap<u64, CancelHandle>>,
    next_id: AtomicU64,
    /// Mean solve time of recent solves (ms), for `Retry-After`.
    mean_solve_ms: AtomicU64,
}

impl State {
    pub(crate) fn new(config: Config, token: Option<String>) -> State {
        let metrics = Arc::new(Metrics::default());
        let cluster = Arc::new(Cluster::new(config.plan_time_limit, metrics.clone()));
        State {
            slots: Arc::new(Semaphore::new(config.limits.max_concurrent_solves)),
            config,
            metrics,
            shutting_down: AtomicBool::new(false),
            cluster,
            token,
            waiting: AtomicUsize::new(0),
            active: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            mean_solve_ms: AtomicU64::new(1000),
        }
    }

    /// Cancels every running solve (past the shutdown grace period).
    pub(crate) fn cancel_all(&self) {
        for c in self.active.lock().unwrap_or_else(|e| e.into_inner()).values() {
            c.cancel();
        }
        self.cluster.stop();
    }

    fn auth_required(&self) -> bool {
        self.token.is_some() || self.config.client_ca.is_some()
    }
}

/// An error answer: `{error, path}` with its status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    error: String,
    path: String,
    retry_after: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, error: impl Into<String>) -> ApiError {
        ApiError { status, error: error.into(), path: String::new(), retry_after: None }
    }
    pub(crate) fn bad(e: InputError) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, error: e.to_string(), path: e.path, retry_after: None }
    }
    fn at(status: StatusCode, path: &str, error: impl Into<String>) -> ApiError {
        ApiError { status, error: format!("{path}: {}", error.into()), path: path.to_string(), retry_after: None }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": self.error, "path": self.path});
        let mut r = (self.status, json_body(&body)).into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

fn json_body<T: serde::Serialize>(v: &T) -> Vec<u8> {
    let mut b = serde_json::to_vec(v).expect("answers always serialize");
    b.push(b'\n');
    b
}

/// A `200` JSON answer.
pub(crate) fn json_ok<T: serde::Serialize>(v: &T) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], json_body(v)).into_response()
}

pub(crate) fn router(state: Arc<State>) -> Router {
    Router::new()
        .route("/v1/solve", post(solve))
        .route("/v1/check", post(check))
        .route("/v1/compare", post(compare_route))
        .route("/v1/cluster", post(super::extender::push_cluster).get(super::extender::get_cluster))
        .route("/v1/plan", get(super::extender::get_plan))
        .route("/scheduler/filter", post(super::extender::filter))
        .route("/scheduler/prioritize", post(super::extender::prioritize))
        .route("/scheduler/preempt", post(super::extender::preempt))
        .route("/healthz", get(|| async { json_ok(&serde_json::json!({"status": "ok"})) }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(|| async { json_ok(&openapi::document()) }))
        .fallback(
            |req: Request| async move { ApiError::new(StatusCode::NOT_FOUND, format!("no route {} {}", req.method(), req.uri().path())) },
        )
        .method_not_allowed_fallback(|req: Request| async move {
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("method {} not allowed on {}", req.method(), req.uri().path()))
        })
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .with_state(state)
}

/// Records every request's route, status and latency.
async fn observe(AxState(state): AxState<Arc<State>>, req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map(|m| m.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    let t = Instant::now();
    let r = next.run(req).await;
    state.metrics.request(&route, r.status().as_u16(), t.elapsed());
    r
}

/// Probes are open; everything else needs a verified client certificate or the bearer
/// token when either is configured.
async fn authenticate(AxState(state): AxState<Arc<State>>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if !state.auth_required() || path == "/healthz" || path == "/readyz" {
        return next.run(req).await;
    }
    let cert = req.extensions().get::<ConnInfo>().is_some_and(|c| c.client_cert);
    let header = req.headers().get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
    let token_ok = state.token.as_deref().is_some_and(|t| tls::bearer_matches(header, t));
    if cert || token_ok {
        return next.run(req).await;
    }
    state.metrics.rejected("unauthorized");
    let mut r = ApiError::new(StatusCode::UNAUTHORIZED, "authentication required (client certificate or bearer token)").into_response();
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

async fn readyz(AxState(state): AxState<Arc<State>>) -> Response {
    if state.shutting_down.load(Ordering::SeqCst) {
        return ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    }
    json_ok(&serde_json::json!({"status": "ready"}))
}

async fn metrics(AxState(state): AxState<Arc<State>>) -> Response {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], state.metrics.render()).into_response()
}

/// Reads the whole body within the size limit and the read timeout, as UTF-8 text.
pub(crate) async fn read_body(state: &State, headers: &HeaderMap, body: Body) -> Result<String, ApiError> {
    let max = state.config.limits.max_body_bytes;
    let too_large = || {
        state.metrics.rejected("body_too_large");
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("request body larger than {max} bytes (--max-body)"))
    };
    if let Some(len) = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok()) {
        if len > max as u64 {
            return Err(too_large());
        }
    }
    let read = async {
        let mut body = body;
        let mut buf: Vec<u8> = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("reading the body: {e}")))?;
            if let Some(data) = frame.data_ref() {
                if buf.len() + data.len() > max {
                    return Err(too_large());
                }
                buf.extend_from_slice(data);
            }
        }
        Ok(buf)
    };
    let bytes = match tokio::time::timeout(state.config.limits.read_timeout, read).await {
        Ok(r) => r?,
        Err(_) => {
            state.metrics.rejected("read_timeout");
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("request body not received within {:?} (--read-timeout)", state.config.limits.read_timeout),
            ));
        }
    };
    String::from_utf8(bytes).map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "request body is not UTF-8"))
}

/// Parses a JSON or YAML document: `Content-Type` JSON must be JSON; YAML or none reads
/// either (JSON is YAML). Errors name the path of the bad field.
pub(crate) fn parse_doc<T: serde::de::DeserializeOwned>(headers: &HeaderMap, text: &str) -> Result<T, ApiError> {
    if content_type_ok(headers, text)? {
        // Declared JSON is read as JSON only: the YAML reading of broken JSON would
        // accept what a JSON client did not mean.
        let mut de = serde_json::Deserializer::from_str(text);
        let v = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            ApiError::bad(InputError::new(path, e.inner().to_string()))
        })?;
        de.end().map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("invalid JSON: {e}")))?;
        return Ok(v);
    }
    crate::wire::from_text(text).map_err(ApiError::bad)
}

/// `Content-Type` JSON needs a JSON object; YAML, plain text or none take either.
/// Returns whether the body is declared JSON.
pub(crate) fn content_type_ok(headers: &HeaderMap, text: &str) -> Result<bool, ApiError> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    if ct.contains("json") && !text.trim_start().starts_with('{') {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "Content-Type is JSON but the body is not a JSON object"));
    }
    // curl sends form-urlencoded unless told otherwise: read it as unspecified.
    if !(ct.is_empty()
        || ct.contains("json")
        || ct.contains("yaml")
        || ct.starts_with("text/plain")
        || ct.starts_with("application/x-www-form-urlencoded"))
    {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("unsupported Content-Type {ct:?} (application/json or application/yaml)"),
        ));
    }
    Ok(ct.contains("json"))
}

/// A slot to run one solve: holds it until dropped; the in-flight count follows.
pub(crate) struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    state: Arc<State>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.state.waiting.fetch_sub(1, Ordering::SeqCst);
        self.state.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts a request waiting for a slot until it gets one or gives up.
struct Waiting(Arc<State>, bool);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.metrics.queued.fetch_sub(1, Ordering::Relaxed);
        if !self.1 {
            self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Admission: a slot now, a place in the bounded queue, or `503` with `Retry-After`.
pub(crate) async fn admit(state: &Arc<State>) -> Result<Slot, ApiError> {
    if state.shutting_down.load(Ordering::SeqCst) {
        state.metrics.rejected("shutting_down");
        return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down"));
    }
    let l = &state.config.limits;
    let capacity = l.max_concurrent_solves + l.max_queued_solves;
    let before = state.waiting.fetch_add(1, Ordering::SeqCst);
    if before >= capacity {
        state.waiting.fetch_sub(1, Ordering::SeqCst);
        state.metrics.rejected("saturated");
        // The queue drains at about one mean solve per slot.
        let mean = state.mean_solve_ms.load(Ordering::Relaxed) as f64 / 1000.0;
        let secs = ((before + 1 - l.max_concurrent_solves) as f64 * mean / l.max_concurrent_solves as f64).ceil().clamp(1.0, 60.0);
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{} solves running and {} queued (--max-concurrent-solves, --max-queued-solves); retry later",
                l.max_concurrent_solves, l.max_queued_solves
            ),
        );
        e.retry_after = Some(secs as u64);
        return Err(e);
    }
    state.metrics.queued.fetch_add(1, Ordering::Relaxed);
    let mut waiting = Waiting(state.clone(), false);
    let permit = state.slots.clone().acquire_owned().await.map_err(|_| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "shutting down"))?;
    waiting.1 = true;
    drop(waiting);
    state.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    Ok(Slot { _permit: permit, state: state.clone() })
}

/// Cancels its solve when dropped: the client went away (the handler's future is
/// dropped) or the solve ended (then it is a no-op).
struct CancelOnDrop {
    state: Arc<State>,
    id: u64,
    handle: CancelHandle,
}

impl CancelOnDrop {
    fn new(state: &Arc<State>) -> CancelOnDrop {
        let id = state.next_id.fetch_add(1, Ordering::Relaxed);
        let handle = CancelHandle::new();
        state.active.lock().unwrap_or_else(|e| e.into_inner()).insert(id, handle.clone());
        CancelOnDrop { state: state.clone(), id, handle }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.handle.cancel();
        self.state.active.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

/// Runs `f` on a blocking thread under a slot, cancelled if the request goes away.
pub(crate) async fn run_blocking<R: Send + 'static>(
    state: &Arc<State>,
    f: impl FnOnce(CancelHandle) -> R + Send + 'static,
) -> Result<R, ApiError> {
    let slot = admit(state).await?;
    let guard = CancelOnDrop::new(state);
    let handle = guard.handle.clone();
    let t = Instant::now();
    let r = tokio::task::spawn_blocking(move || f(handle))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the solve failed: {e}")))?;
    let ms = t.elapsed().as_millis() as u64;
    let old = state.mean_solve_ms.load(Ordering::Relaxed);
    state.mean_solve_ms.store((old * 7 + ms) / 8, Ordering::Relaxed);
    drop(slot);
    drop(guard);
    Ok(r)
}

/// The time limit a request gets: its own, else its instance's, else the default,
/// clamped to the server's maximum. Returns it and whether it was clamped.
fn time_limit(state: &State, asked: Option<Duration>, inst: Option<&Instance>) -> (Duration, bool) {
    let l = &state.config.limits;
    let want = asked.or(inst.and_then(|i| i.options.time_limit)).unwrap_or(l.default_time_limit);
    if want > l.max_time_limit {
        (l.max_time_limit, true)
    } else {
        (want, false)
    }
}

fn limit_headers(r: &mut Response, limit: Duration, clamped: bool) {
    if let Ok(v) = HeaderValue::from_str(&format!("{}ms", limit.as_millis())) {
        r.headers_mut().insert("tessera-time-limit", v);
    }
    if clamped {
        r.headers_mut().insert("tessera-time-limit-clamped", HeaderValue::from_static("true"));
    }
}

/// Query of `/v1/solve`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SolveQuery {
    solver: Option<String>,
    time_limit: Option<String>,
    gap: Option<f64>,
}

fn solver_of(name: Option<&str>, path: &str) -> Result<SolverKind, ApiError> {
    let Some(n) = name else { return Ok(SolverKind::Exact) };
    SolverKind::from_name(n).ok_or_else(|| {
        let all: Vec<&str> = SolverKind::ALL.iter().map(|s| s.name()).collect();
        ApiError::at(StatusCode::BAD_REQUEST, path, format!("unknown solver {n:?} (available: {})", all.join(", ")))
    })
}

fn duration_of(text: Option<&str>, path: &str) -> Result<Option<Duration>, ApiError> {
    text.map(|t| crate::wire::parse_duration(t).map_err(|m| ApiError::at(StatusCode::BAD_REQUEST, path, m))).transpose()
}

async fn solve(
    AxState(state): AxState<Arc<State>>,
    query: Result<Query<SolveQuery>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::at(StatusCode::BAD_REQUEST, "query", e.body_text()))?;
    let kind = solver_of(q.solver.as_deref(), "query.solver")?;
    let asked = duration_of(q.time_limit.as_deref(), "query.timeLimit")?;
    if let Some(g) = q.gap {
        if !(0.0..=1.0).contains(&g) {
            return Err(ApiError::at(StatusCode::BAD_REQUEST, "query.gap", format!("must be between 0 and 1, got {g}")));
        }
    }
    let text = read_body(&state, &headers, body).await?;
    let doc: InstanceDoc = parse_doc(&headers, &text)?;
    let inst = Instance::from_doc(&doc).map_err(ApiError::bad)?;
    let (limit, clamped) = time_limit(&state, asked, Some(&inst));
    let gap = q.gap;
    let metrics = state.metrics.clone();
    let d: Decision = run_blocking(&state, move |cancel| {
        let opts = Options { solver: kind, time_limit: Some(limit), relative_gap: gap, cancel, ..Options::default() };
        let t = Instant::now();
        let d = crate::solve(&inst, &opts);
        metrics.solve(kind.name(), t.elapsed());
        d
    })
    .await?;
    let mut r = json_ok(&d);
    limit_headers(&mut r, limit, clamped);
    Ok(r)
}

/// Body of `/v1/check`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckRequest {
    instance: InstanceDoc,
    decision: Decision,
}

async fn check(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let text = read_body(&state, &headers, body).await?;
    let req: CheckRequest = parse_doc(&headers, &text)?;
    let inst = Instance::from_doc(&req.instance).map_err(|e| ApiError::bad(prefixed("instance", e)))?;
    let report = crate::check(&inst, &req.decision);
    let violations: Vec<serde_json::Value> =
        report.violations.iter().map(|v| serde_json::json!({"rule": v.rule, "message": v.message})).collect();
    Ok(json_ok(&serde_json::json!({"valid": report.is_valid(), "violations": violations, "objective": report.objective})))
}

fn prefixed(prefix: &str, e: InputError) -> InputError {
    let path = if e.path.is_empty() { prefix.to_string() } else { format!("{prefix}.{}", e.path) };
    InputError::new(path, e.message)
}

/// Body of `/v1/compare`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CompareRequest {
    /// Named instances.
    instances: BTreeMap<String, InstanceDoc>,
    /// Solver names (default: every solver).
    #[serde(default)]
    solvers: Option<Vec<String>>,
    /// Budget per solve.
    #[serde(default)]
    time_limit: Option<String>,
}

async fn compare_route(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let text = read_body(&state, &headers, body).await?;
    let req: CompareRequest = parse_doc(&headers, &text)?;
    if req.instances.is_empty() {
        return Err(ApiError::at(StatusCode::BAD_REQUEST, "instances", "at least one instance"));
    }
    let mut insts = Vec::new();
    for (name, doc) in &req.instances {
        let inst = Instance::from_doc(doc).map_err(|e| ApiError::bad(prefixed(&format!("instances.{name}"), e)))?;
        insts.push((name.clone(), inst));
    }
    let kinds: Vec<SolverKind> = match &req.solvers {
        None => SolverKind::ALL.to_vec(),
        Some(list) if list.is_empty() => return Err(ApiError::at(StatusCode::BAD_REQUEST, "solvers", "at least one solver")),
        Some(list) => list.iter().enumerate().map(|(i, n)| solver_of(Some(n), &format!("solvers[{i}]"))).collect::<Result<_, _>>()?,
    };
    let solves = insts.len() * kinds.len();
    if solves > state.config.limits.max_compare_solves {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{solves} solves asked (instances x solvers); at most {} per request", state.config.limits.max_compare_solves),
        ));
    }
    let asked = duration_of(req.time_limit.as_deref(), "timeLimit")?;
    let (limit, clamped) = time_limit(&state, asked, None);
    let report = run_blocking(&state, move |cancel| {
        let list: Vec<Contender> = kinds.into_iter().map(Contender::of).collect();
        let cfg = Options { time_limit: Some(limit), cancel, ..Options::default() };
        compare::compare(&insts, &list, &cfg, &mut |_, _, _| {})
    })
    .await?;
    let mut r = json_ok(&report);
    limit_headers(&mut r, limit, clamped);
    Ok(r)
}
