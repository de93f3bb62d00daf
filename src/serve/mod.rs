//! `tessera serve`: the placement oracle over HTTP, and a kube-scheduler extender.
//!
//! axum on tokio; every solve runs on a blocking thread (`spawn_blocking`), never on the
//! async executor, behind a bounded admission queue. Routes, limits, authentication and
//! the extender are documented for users in `docs/serve.md`; the machine-readable
//! description is `GET /openapi.json` ([`openapi`]).
//!
//! Connections are served by hyper directly (an accept loop of our own rather than
//! `axum::serve`) so that one loop handles plain TCP and TLS alike, enforces the header
//! read timeout, records which connections presented a verified client certificate, and
//! shuts down gracefully: on SIGTERM/SIGINT the listener closes, keep-alive connections
//! are told to finish, requests arriving meanwhile get `503`, in-flight solves run to
//! their deadline, and anything still running after the grace period is cancelled
//! through its [`crate::CancelHandle`].

mod app;
pub mod bench;
pub mod client;
mod cluster;
pub mod extender;
pub mod metrics;
pub mod openapi;
pub mod tls;

use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use app::{ConnInfo, State};

/// The server's limits; every one has a default and a command-line flag.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest request body (`--max-body`); larger: `413`.
    pub max_body_bytes: usize,
    /// Time limit of a solve that names none (`--default-time-limit`), nor its instance.
    pub default_time_limit: Duration,
    /// Cap on any solve's time limit (`--max-time-limit`); larger requests are clamped.
    pub max_time_limit: Duration,
    /// Solves running at once (`--max-concurrent-solves`).
    pub max_concurrent_solves: usize,
    /// Solves waiting for a slot (`--max-queued-solves`); beyond it: `503` with `Retry-After`.
    pub max_queued_solves: usize,
    /// Time to read a request's headers and body (`--read-timeout`); slower: `408`.
    pub read_timeout: Duration,
    /// After SIGTERM, how long in-flight work may run before it is cancelled
    /// (`--shutdown-grace`).
    pub shutdown_grace: Duration,
    /// Most solves one `/v1/compare` request may ask for (instances × solvers).
    pub max_compare_solves: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_body_bytes: 32 << 20,
            default_time_limit: Duration::from_secs(10),
            max_time_limit: Duration::from_secs(60),
            max_concurrent_solves: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2),
            max_queued_solves: 64,
            read_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(70),
            max_compare_solves: 64,
        }
    }
}

/// How to run the server.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to listen on (default `127.0.0.1:8080`; port 0 picks a free port).
    pub listen: SocketAddr,
    /// PEM certificate chain and key: serve TLS.
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of `tls_cert`.
    pub tls_key: Option<PathBuf>,
    /// PEM CA bundle: clients presenting a certificate it signed are authenticated.
    pub client_ca: Option<PathBuf>,
    /// File holding a bearer token: clients sending it are authenticated.
    pub token_file: Option<PathBuf>,
    /// Limits.
    pub limits: Limits,
    /// Budget of one extender plan (the cluster view's cycle).
    pub plan_time_limit: Duration,
    /// How long an extender call waits for a plan in progress before answering without one.
    pub filter_wait: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            tls_cert: None,
            tls_key: None,
            client_ca: None,
            token_file: None,
            limits: Limits::default(),
            plan_time_limit: Duration::from_secs(5),
            filter_wait: Duration::from_secs(10),
        }
    }
}

impl Config {
    /// Refuses unsafe or inconsistent settings: off loopback, TLS and an authenticated
    /// client (certificate or token) are required.
    pub fn validate(&self) -> Result<(), String> {
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return Err("--tls-cert-file and --tls-key-file go together".into());
        }
        if self.client_ca.is_some() && self.tls_cert.is_none() {
            return Err("--client-ca-file needs TLS (--tls-cert-file, --tls-key-file)".into());
        }
        if !self.listen.ip().is_loopback() {
            if self.tls_cert.is_none() {
                return Err(format!("listening on {} (not loopback) requires TLS: --tls-cert-file and --tls-key-file", self.listen));
            }
            if self.client_ca.is_none() && self.token_file.is_none() {
                return Err(format!(
                    "listening on {} (not loopback) requires client authentication: --client-ca-file or --token-file",
                    self.listen
                ));
            }
        }
        let l = &self.limits;
        if l.max_concurrent_solves == 0 || l.max_body_bytes == 0 || l.max_compare_solves == 0 {
            return Err("limits must be positive".into());
        }
        if l.default_time_limit > l.max_time_limit {
            return Err("--default-time-limit exceeds --max-time-limit".into());
        }
        Ok(())
    }
}

/// A running server: its address, and how to stop it.
pub struct Running {
    /// The bound address (the real port when 0 was asked).
    pub addr: SocketAddr,
    /// Shared state (metrics, cluster view), for tests and the benchmark.
    pub state: Arc<State>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Starts the graceful shutdown (as SIGTERM does) and waits until it is complete.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
    /// Starts the graceful shutdown without waiting.
    pub fn begin_shutdown(&self) {
        let _ = self.stop.send(true);
    }
    /// Waits until the server has stopped.
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

/// Binds and starts serving on the current tokio runtime.
pub async fn start(config: Config) -> Result<Running, String> {
    config.validate()?;
    let token = match &config.token_file {
        Some(p) => Some(tls::read_token(p)?),
        None => None,
    };
    let tls = match (&config.tls_cert, &config.tls_key) {
        (Some(c), Some(k)) => {
            Some(tokio_rustls::TlsAcceptor::from(tls::server_config(c, k, config.client_ca.as_deref(), token.is_some())?))
        }
        _ => None,
    };
    let listener = TcpListener::bind(config.listen).await.map_err(|e| format!("{}: {e}", config.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let state = Arc::new(State::new(config.clone(), token));
    let (stop, stop_rx) = watch::channel(false);
    let task = tokio::spawn(accept_loop(listener, tls, state.clone(), stop_rx));
    Ok(Running { addr, state, stop, task })
}

async fn accept_loop(listener: TcpListener, tls: Option<tokio_rustls::TlsAcceptor>, state: Arc<State>, mut stop: watch::Receiver<bool>) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let router = app::router(state.clone());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, peer)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let watcher = graceful.watcher();
                let (router, state, tls) = (router.clone(), state.clone(), tls.clone());
                tokio::spawn(async move {
                    state.metrics.connections.fetch_add(1, Ordering::Relaxed);
                    let read_timeout = state.config.limits.read_timeout;
                    match tls {
                        None => serve_conn(TokioIo::new(stream), ConnInfo { peer, client_cert: false }, router, read_timeout, watcher).await,
                        Some(acceptor) => match tokio::time::timeout(read_timeout, acceptor.accept(stream)).await {
                            Ok(Ok(s)) => {
                                let client_cert = s.get_ref().1.peer_certificates().is_some_and(|c| !c.is_empty());
                                serve_conn(TokioIo::new(s), ConnInfo { peer, client_cert }, router, read_timeout, watcher).await
                            }
                            _ => state.metrics.rejected("tls_handshake"),
                        },
                    }
                    state.metrics.connections.fetch_sub(1, Ordering::Relaxed);
                });
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    state.shutting_down.store(true, Ordering::SeqCst);
    // In-flight requests finish; past the grace period their solves are cancelled and
    // return their best decision at once.
    let grace = state.config.limits.shutdown_grace;
    let done = graceful.shutdown();
    tokio::pin!(done);
    tokio::select! {
        _ = &mut done => {}
        _ = tokio::time::sleep(grace) => {
            state.cancel_all();
            let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        }
    }
    state.cluster.stop();
}

async fn serve_conn<I>(io: I, info: ConnInfo, router: axum::Router, read_timeout: Duration, watcher: hyper_util::server::graceful::Watcher)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    use tower::ServiceExt;
    let svc = hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        req.extensions_mut().insert(info.clone());
        router.clone().oneshot(req.map(axum::body::Body::new))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(read_timeout).keep_alive(true);
    let conn = builder.serve_connection(io, svc);
    let _ = watcher.watch(conn).await;
}

/// Runs the server until SIGTERM or SIGINT, then shuts down gracefully. Prints the
/// listening address on standard output (one line), for scripts.
pub fn run(config: Config) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let running = start(config).await?;
        println!("listening on {}://{}", if running.state.config.tls_cert.is_some() { "https" } else { "http" }, running.addr);
        use std::io::Write;
        let _ = std::io::stdout().flush();
        wait_for_signal().await;
        eprintln!("tessera serve: shutting down (in-flight solves finish)");
        running.shutdown().await;
        Ok(())
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
