//! `tessera serve` end to end: the server on `127.0.0.1:0`, driven over real sockets by
//! the crate's small HTTP client: every route, each limit (413, clamped time limit, 503
//! with Retry-After, 408, malformed JSON/YAML named by path), authentication (TLS client
//! certificates made at test time, bearer token), graceful shutdown, and the
//! kube-scheduler extender with bodies shaped as kube-scheduler sends them.
#![cfg(feature = "serve")]

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera::serve::client::{Client, Response};
use tessera::serve::{Config, Limits, Running};
use tessera::wire::decision::Decision;
use tessera::Instance;

struct Server {
    rt: tokio::runtime::Runtime,
    running: Option<Running>,
}

impl Server {
    fn start(config: Config) -> Server {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let running = rt.block_on(tessera::serve::start(config)).expect("server starts");
        Server { rt, running: Some(running) }
    }
    fn with(f: impl FnOnce(&mut Config)) -> Server {
        let mut c = Config { listen: "127.0.0.1:0".parse().unwrap(), ..Config::default() };
        f(&mut c);
        Server::start(c)
    }
    fn addr(&self) -> std::net::SocketAddr {
        self.running.as_ref().unwrap().addr
    }
    fn client(&self) -> Client {
        Client::new(self.addr()).with_timeout(Duration::from_secs(60))
    }
    fn state(&self) -> Arc<tessera::serve::State> {
        self.running.as_ref().unwrap().state.clone()
    }
    fn shutdown(&mut self) {
        if let Some(r) = self.running.take() {
            self.rt.block_on(r.shutdown());
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn gauge(s: &Server, which: &str) -> i64 {
    let st = s.state();
    let m = &st.metrics;
    match which {
        "in_flight" => m.in_flight.load(std::sync::atomic::Ordering::Relaxed),
        _ => m.queued.load(std::sync::atomic::Ordering::Relaxed),
    }
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

const SMALL: &str = r#"{"nodes":[{"name":"n1","allocatable":{"cpu":"4","memory":"8Gi"}},{"name":"n2","allocatable":{"cpu":"4","memory":"8Gi"}}],
 "podGroups":[{"name":"job","tasks":[{"name":"w","count":2,"requests":{"cpu":"3"}}]},
              {"name":"big","tasks":[{"name":"w","count":1,"requests":{"cpu":"5"}}]}]}"#;

/// A cycle the exact engine does not prove in a second on this machine.
fn hard_instance() -> String {
    serde_json::to_string(&tessera::tooling::generate::generate("flat-1024", 1).unwrap()).unwrap()
}

fn decision_of(r: &Response) -> Decision {
    assert_eq!(r.status, 200, "{}", r.text());
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("not a decision ({e}): {}", r.text()))
}

fn error_of(r: &Response) -> (String, String) {
    let v = r.json().unwrap();
    (v["error"].as_str().unwrap().to_string(), v["path"].as_str().unwrap().to_string())
}

#[test]
fn solve_check_compare_and_the_probes() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    // Solve: 2 nodes x 4 cpu; `job` needs 3 + 3 (one per node), `big` 5 fits nowhere.
    let r = c.post_json("/v1/solve?solver=exact&timeLimit=5s&gap=0", SMALL.as_bytes()).unwrap();
    assert_eq!(r.header("tessera-time-limit"), Some("5000ms"));
    assert_eq!(r.header("tessera-time-limit-clamped"), None);
    let d = decision_of(&r);
    let inst = Instance::from_text(SMALL).unwrap();
    assert!(tessera::check(&inst, &d).is_valid());
    assert_eq!(d.placements.len(), 1);
    assert_eq!(d.placements[0].pod_group, "job");
    assert_eq!(d.unplaced[0].pod_group, "big");
    // The same instance as YAML, with a baseline solver.
    let yaml = serde_yaml_ng::to_string(&serde_json::from_str::<Value>(SMALL).unwrap()).unwrap();
    let r = c.request("POST", "/v1/solve?solver=ffd", Some("application/yaml"), yaml.as_bytes()).unwrap();
    let d = decision_of(&r);
    assert_eq!(d.stats.solver.as_deref(), Some("ffd"));
    assert!(tessera::check(&inst, &d).is_valid());
    // Check: the decision is valid; a broken one is not, with rule numbers.
    let body = json!({"instance": serde_json::from_str::<Value>(SMALL).unwrap(), "decision": d});
    let r = c.post_json("/v1/check", body.to_string().as_bytes()).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.json().unwrap()["valid"], true);
    let mut bad = d.clone();
    bad.placements[0].pods[1].node = "n1".into(); // 6 cpu on a 4-cpu node
    let body = json!({"instance": serde_json::from_str::<Value>(SMALL).unwrap(), "decision": bad});
    let v = c.post_json("/v1/check", body.to_string().as_bytes()).unwrap().json().unwrap();
    assert_eq!(v["valid"], false);
    assert!(v["violations"].as_array().unwrap().iter().any(|x| x["rule"] == 1), "{v}");
    // Compare: two solvers, rows checked, summary per solver.
    let body =
        json!({"instances": {"small": serde_json::from_str::<Value>(SMALL).unwrap()}, "solvers": ["exact", "ffd"], "timeLimit": "2s"});
    let v = c.post_json("/v1/compare", body.to_string().as_bytes()).unwrap().json().unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["valid"] == true && r["placed"] == 1));
    assert_eq!(v["summary"].as_array().unwrap().len(), 2);
    // Probes, OpenAPI, metrics.
    assert_eq!(c.get("/healthz").unwrap().status, 200);
    assert_eq!(c.get("/readyz").unwrap().status, 200);
    let api = c.get("/openapi.json").unwrap().json().unwrap();
    for route in [
        "/v1/solve",
        "/v1/check",
        "/v1/compare",
        "/v1/cluster",
        "/v1/plan",
        "/scheduler/filter",
        "/scheduler/prioritize",
        "/scheduler/preempt",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
    ] {
        assert!(api["paths"].get(route).is_some(), "openapi lacks {route}");
    }
    let m = c.get("/metrics").unwrap();
    assert!(m.header("content-type").unwrap().starts_with("text/plain"));
    let text = m.text();
    assert!(text.contains("tessera_http_requests_total{route=\"/v1/solve\",status=\"200\"} 2"), "{text}");
    assert!(text.contains("tessera_solve_duration_seconds_count{solver=\"exact\"}"));
    assert!(text.contains("tessera_solves_in_flight 0") && text.contains("tessera_solves_queued 0"));
    // Unknown route and method: JSON errors.
    let r = c.get("/v2/nothing").unwrap();
    assert_eq!(r.status, 404);
    assert!(error_of(&r).0.contains("/v2/nothing"));
    assert_eq!(c.get("/v1/solve").unwrap().status, 405);
}

#[test]
fn bad_input_is_400_with_the_path() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    let r = c.post_json("/v1/solve", br#"{"nodes":[{"name":"a","allocatable":{"memory":"12Q"}}]}"#).unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(
        error_of(&r),
        ("nodes[0].allocatable.memory: invalid quantity \"12Q\"".to_string(), "nodes[0].allocatable.memory".to_string())
    );
    // Malformed JSON.
    let r = c.post_json("/v1/solve", br#"{"nodes": [{"name": "a",}]}"#).unwrap();
    assert_eq!(r.status, 400);
    assert!(error_of(&r).0.contains("line 1"), "{}", r.text());
    // Malformed YAML, and a wrong type in YAML named by its path.
    let r = c.request("POST", "/v1/solve", Some("application/yaml"), b"nodes:\n  - name: a\n   allocatable: {").unwrap();
    assert_eq!(r.status, 400, "{}", r.text());
    let r = c
        .request(
            "POST",
            "/v1/solve",
            Some("application/yaml"),
            b"nodes:\n  - name: a\n    allocatable: {cpu: 2}\npodGroups:\n  - name: g\n    tasks:\n      - {name: t, count: many}\n",
        )
        .unwrap();
    assert_eq!(r.status, 400);
    assert_eq!(error_of(&r).1, "podGroups[0].tasks[0].count");
    // Unknown key, cross-reference error, bad query, empty body, not JSON under a JSON type.
    let r = c.post_json("/v1/solve", br#"{"nodes":[],"colour":"blue"}"#).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "colour"));
    let r = c.post_json("/v1/solve", br#"{"nodes":[{"name":"a"}],"pods":[{"name":"p","node":"b"}]}"#).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "pods[0].node"));
    let r = c.post_json("/v1/solve?solver=magic", SMALL.as_bytes()).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "query.solver"));
    let r = c.post_json("/v1/solve?timeLimit=soon", SMALL.as_bytes()).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "query.timeLimit"));
    let r = c.post_json("/v1/solve?gap=2", SMALL.as_bytes()).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "query.gap"));
    assert_eq!(c.post_json("/v1/solve", b"").unwrap().status, 400);
    assert_eq!(c.post_json("/v1/solve", b"nodes: []").unwrap().status, 400);
    let r = c
        .post_json("/v1/check", br#"{"instance":{"nodes":[{"name":"a","allocatable":{"cpu":"x"}}]},"decision":{"status":"Optimal"}}"#)
        .unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "instance.nodes[0].allocatable.cpu"));
    let r = c.post_json("/v1/compare", br#"{"instances":{"a":{"nodes":[]}},"solvers":["exact","nope"]}"#).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "solvers[1]"));
    // None of this was a fault of the server.
    assert!(!s.state().metrics.render().contains("status=\"5"));
}

#[test]
fn oversized_body_is_413() {
    let s = Server::with(|c| c.limits.max_body_bytes = 1000);
    let mut c = s.client();
    let big = format!("{{\"nodes\":[],\"podGroups\":[],\"pods\":[]{}}}", " ".repeat(2000));
    let r = c.post_json("/v1/solve", big.as_bytes()).unwrap();
    assert_eq!(r.status, 413);
    assert!(error_of(&r).0.contains("1000 bytes"));
    // Just under the limit is read.
    assert_eq!(c.post_json("/v1/solve", SMALL.as_bytes()).unwrap().status, 200);
    assert!(s.state().metrics.render().contains("tessera_rejected_requests_total{reason=\"body_too_large\"} 1"));
}

#[test]
fn time_limit_over_the_cap_is_clamped() {
    let s = Server::with(|c| {
        c.limits.max_time_limit = Duration::from_millis(800);
        c.limits.default_time_limit = Duration::from_millis(500);
    });
    let mut c = s.client();
    let hard = hard_instance();
    let t = Instant::now();
    let r = c.post_json("/v1/solve?timeLimit=1h", hard.as_bytes()).unwrap();
    let took = t.elapsed();
    assert_eq!(r.header("tessera-time-limit"), Some("800ms"));
    assert_eq!(r.header("tessera-time-limit-clamped"), Some("true"));
    let d = decision_of(&r);
    assert!(took < Duration::from_secs(8), "a clamped solve took {took:?}");
    let inst = Instance::from_text(&hard).unwrap();
    assert!(tessera::check(&inst, &d).is_valid());
    // No limit asked: the default.
    let r = c.post_json("/v1/solve", SMALL.as_bytes()).unwrap();
    assert_eq!(r.header("tessera-time-limit"), Some("500ms"));
}

#[test]
fn saturated_server_answers_503_with_retry_after() {
    let s = Server::with(|c| {
        c.limits.max_concurrent_solves = 1;
        c.limits.max_queued_solves = 1;
    });
    let hard = Arc::new(hard_instance());
    let addr = s.addr();
    let spawn = |limit: &'static str| {
        let hard = hard.clone();
        std::thread::spawn(move || Client::new(addr).post_json(&format!("/v1/solve?timeLimit={limit}"), hard.as_bytes()).unwrap())
    };
    let first = spawn("2s");
    wait_until("one solve in flight", || gauge(&s, "in_flight") == 1);
    let second = spawn("1s");
    wait_until("one solve queued", || gauge(&s, "queued") == 1);
    let mut c = s.client();
    let r = c.post_json("/v1/solve", SMALL.as_bytes()).unwrap();
    assert_eq!(r.status, 503, "{}", r.text());
    let retry: u64 = r.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&retry));
    // The admitted ones are answered, in full.
    assert_eq!(first.join().unwrap().status, 200);
    assert_eq!(second.join().unwrap().status, 200);
    assert_eq!(c.post_json("/v1/solve", SMALL.as_bytes()).unwrap().status, 200);
    assert!(s.state().metrics.render().contains("tessera_rejected_requests_total{reason=\"saturated\"} 1"));
}

#[test]
fn slow_body_is_408() {
    let s = Server::with(|c| c.limits.read_timeout = Duration::from_millis(300));
    let mut tcp = std::net::TcpStream::connect(s.addr()).unwrap();
    tcp.write_all(b"POST /v1/solve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"nodes\":")
        .unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = std::io::BufReader::new(tcp);
    let r = tessera::serve::client::read_response(&mut reader).unwrap();
    assert_eq!(r.status, 408);
    // Headers that never end: the connection is closed.
    let mut tcp = std::net::TcpStream::connect(s.addr()).unwrap();
    tcp.write_all(b"POST /v1/solve HTTP/1.1\r\nHost: x\r\n").unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let t = Instant::now();
    let _ = tcp.read_to_end(&mut buf);
    assert!(t.elapsed() < Duration::from_secs(5), "the server kept a stalled connection open");
}

#[test]
fn graceful_shutdown_finishes_in_flight_solves_and_refuses_new_ones() {
    let mut s = Server::with(|c| c.limits.shutdown_grace = Duration::from_secs(30));
    let hard = Arc::new(hard_instance());
    let addr = s.addr();
    let h = hard.clone();
    let t = Instant::now();
    let inflight = std::thread::spawn(move || Client::new(addr).post_json("/v1/solve?timeLimit=2s", h.as_bytes()).unwrap());
    wait_until("the solve in flight", || gauge(&s, "in_flight") == 1);
    s.running.as_ref().unwrap().begin_shutdown();
    wait_until("the listener closed", || std::net::TcpStream::connect(addr).is_err());
    let r = inflight.join().unwrap();
    let d = decision_of(&r);
    assert!(t.elapsed() >= Duration::from_millis(1500), "the in-flight solve ran to its deadline");
    assert!(tessera::check(&Instance::from_text(&hard).unwrap(), &d).is_valid());
    s.shutdown();
}

#[test]
fn shutdown_cancels_solves_past_the_grace_period() {
    let mut s = Server::with(|c| c.limits.shutdown_grace = Duration::from_millis(300));
    let hard = hard_instance();
    let addr = s.addr();
    let t = Instant::now();
    let h = hard.clone();
    let inflight = std::thread::spawn(move || Client::new(addr).post_json("/v1/solve?timeLimit=50s", h.as_bytes()).unwrap());
    wait_until("the solve in flight", || gauge(&s, "in_flight") == 1);
    s.running.as_ref().unwrap().begin_shutdown();
    let r = inflight.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(30), "cancelled long before its 50 s deadline ({:?})", t.elapsed());
    let d = decision_of(&r);
    assert!(tessera::check(&Instance::from_text(&hard).unwrap(), &d).is_valid(), "a cancelled solve still answers a valid decision");
    s.shutdown();
}

#[test]
fn a_client_that_goes_away_cancels_its_solve() {
    let s = Server::with(|_| {});
    let hard = hard_instance();
    let mut tcp = std::net::TcpStream::connect(s.addr()).unwrap();
    let head = format!(
        "POST /v1/solve?timeLimit=50s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        hard.len()
    );
    tcp.write_all(head.as_bytes()).unwrap();
    tcp.write_all(hard.as_bytes()).unwrap();
    wait_until("the solve in flight", || gauge(&s, "in_flight") == 1);
    drop(tcp);
    let t = Instant::now();
    wait_until("the solve cancelled", || gauge(&s, "in_flight") == 0);
    assert!(t.elapsed() < Duration::from_secs(15));
}

// ---------------------------------------------------------------------------------------
// TLS and authentication

struct Pki {
    dir: PathBuf,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

impl Pki {
    fn new(test: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("tessera-tls-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.distinguished_name.push(rcgen::DnType::CommonName, "tessera test CA");
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        Pki { dir, ca, ca_key }
    }
    /// A certificate signed by the CA: (cert PEM path, key PEM path, DER chain, key DER).
    fn issue(&self, name: &str, sans: &[&str], client: bool) -> (PathBuf, PathBuf, rustls::pki_types::CertificateDer<'static>, Vec<u8>) {
        let mut params = rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(rcgen::DnType::CommonName, name);
        params.extended_key_usages =
            vec![if client { rcgen::ExtendedKeyUsagePurpose::ClientAuth } else { rcgen::ExtendedKeyUsagePurpose::ServerAuth }];
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        let (c, k) = (self.dir.join(format!("{name}.pem")), self.dir.join(format!("{name}-key.pem")));
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c, k, cert.der().clone(), key.serialize_der())
    }
    fn client_config(&self, client_cert: Option<(rustls::pki_types::CertificateDer<'static>, Vec<u8>)>) -> Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca.der().clone()).unwrap();
        let b = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots);
        Arc::new(match client_cert {
            None => b.with_no_client_auth(),
            Some((c, k)) => b.with_client_auth_cert(vec![c], rustls::pki_types::PrivateKeyDer::Pkcs8(k.into())).unwrap(),
        })
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn tls_with_client_certificates_or_a_token() {
    let pki = Pki::new("auth");
    let (cert, key, _, _) = pki.issue("server", &["localhost", "127.0.0.1"], false);
    let (_, _, client_der, client_key) = pki.issue("kube-scheduler", &[], true);
    let token = pki.dir.join("token");
    std::fs::write(&token, "s3cret-token\n").unwrap();
    let s = Server::with(|c| {
        c.tls_cert = Some(cert.clone());
        c.tls_key = Some(key.clone());
        c.client_ca = Some(pki.dir.join("ca.pem"));
        c.token_file = Some(token.clone());
    });
    let with_cert = pki.client_config(Some((client_der, client_key)));
    let without = pki.client_config(None);
    let mut c = Client::new(s.addr()).with_tls(with_cert, "localhost").unwrap();
    assert_eq!(c.post_json("/v1/solve", SMALL.as_bytes()).unwrap().status, 200, "client certificate accepted");
    let mut anon = Client::new(s.addr()).with_tls(without.clone(), "localhost").unwrap();
    let r = anon.post_json("/v1/solve", SMALL.as_bytes()).unwrap();
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
    assert_eq!(anon.get("/metrics").unwrap().status, 401);
    assert_eq!(anon.get("/healthz").unwrap().status, 200, "probes need no credentials");
    let mut wrong = Client::new(s.addr()).with_tls(without.clone(), "localhost").unwrap().with_token("s3cret-tokex");
    assert_eq!(wrong.get("/metrics").unwrap().status, 401);
    let mut tok = Client::new(s.addr()).with_tls(without, "localhost").unwrap().with_token("s3cret-token");
    assert_eq!(tok.post_json("/v1/solve", SMALL.as_bytes()).unwrap().status, 200, "bearer token accepted");
    // Plain HTTP to the TLS port gets no answer.
    assert!(Client::new(s.addr()).with_timeout(Duration::from_secs(5)).get("/healthz").is_err());
}

#[test]
fn client_certificates_are_required_without_a_token() {
    let pki = Pki::new("mtls");
    let (cert, key, _, _) = pki.issue("server", &["localhost"], false);
    let s = Server::with(|c| {
        c.tls_cert = Some(cert.clone());
        c.tls_key = Some(key.clone());
        c.client_ca = Some(pki.dir.join("ca.pem"));
    });
    // A certificate from another CA fails the handshake.
    let other = Pki::new("other");
    let (_, _, der, k) = other.issue("intruder", &[], true);
    let roots_of_pki = pki.client_config(None);
    let cfg = {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(pki.ca.der().clone()).unwrap();
        Arc::new(
            rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_root_certificates(roots)
                .with_client_auth_cert(vec![der], rustls::pki_types::PrivateKeyDer::Pkcs8(k.into()))
                .unwrap(),
        )
    };
    assert!(Client::new(s.addr()).with_tls(cfg, "localhost").unwrap().get("/metrics").is_err());
    assert!(Client::new(s.addr()).with_tls(roots_of_pki, "localhost").unwrap().get("/metrics").is_err(), "no certificate: refused");
}

#[test]
fn binding_off_loopback_requires_tls_and_authentication() {
    let mut c = Config { listen: "0.0.0.0:0".parse().unwrap(), ..Config::default() };
    assert!(c.validate().unwrap_err().contains("requires TLS"));
    c.tls_cert = Some("c.pem".into());
    c.tls_key = Some("k.pem".into());
    assert!(c.validate().unwrap_err().contains("client authentication"));
    c.token_file = Some("t".into());
    assert!(c.validate().is_ok());
    let l = Limits { default_time_limit: Duration::from_secs(100), ..Limits::default() };
    assert!(Config { limits: l, ..Config::default() }.validate().is_err());
}

// ---------------------------------------------------------------------------------------
// kube-scheduler extender

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kube").join(name)
}

fn read_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

fn items<'a>(list: &'a Value, kind: &str) -> Vec<&'a Value> {
    list["items"].as_array().unwrap().iter().filter(|i| i["kind"] == kind).collect()
}

fn pod_named<'a>(list: &'a Value, name: &str) -> &'a Value {
    items(list, "Pod").into_iter().find(|p| p["metadata"]["name"] == name).unwrap()
}

/// `ExtenderArgs` as kube-scheduler's HTTPExtender builds it: full `v1.NodeList`, or
/// node names only with `nodeCacheCapable: true`.
fn filter_args(pod: &Value, nodes: &[&Value], cache_capable: bool) -> Value {
    if cache_capable {
        let names: Vec<&Value> = nodes.iter().map(|n| &n["metadata"]["name"]).collect();
        json!({"Pod": pod, "Nodes": null, "NodeNames": names})
    } else {
        json!({"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": null})
    }
}

fn push(c: &mut Client, view: &Value) -> Value {
    let r = c.post_json("/v1/cluster", view.to_string().as_bytes()).unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    r.json().unwrap()
}

/// The one node a filter answer passes (from `Nodes` or `NodeNames`).
fn passed(v: &Value) -> Vec<String> {
    if let Some(names) = v["NodeNames"].as_array() {
        return names.iter().map(|n| n.as_str().unwrap().to_string()).collect();
    }
    v["Nodes"]["items"].as_array().unwrap().iter().map(|n| n["metadata"]["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn extender_filters_a_gang_arriving_one_by_one_to_its_plan() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    let view = read_json("upstream-v1beta1.json");
    let summary = push(&mut c, &view);
    assert_eq!((summary["nodes"].as_u64(), summary["pendingGroups"].as_u64()), (Some(8), Some(1)));
    let nodes = items(&view, "Node");
    // The first call exactly as the fixture written from the Go types.
    let args = std::fs::read_to_string(fixture("extender-filter-args.json")).unwrap();
    let r = c.post_json("/scheduler/filter", args.as_bytes()).unwrap().json().unwrap();
    assert_eq!(r["NodeNames"], Value::Null, "full nodes in, full nodes out");
    assert_eq!(r["Error"], "");
    let first = passed(&r);
    assert_eq!(first.len(), 1);
    assert_eq!(r["FailedNodes"].as_object().unwrap().len(), 7);
    // The members one by one, alternating the two shapes of ExtenderArgs.
    let mut chosen = BTreeMap::new();
    for (i, name) in ["train-0", "train-1", "train-2", "train-3"].iter().enumerate() {
        let args = filter_args(pod_named(&view, name), &nodes, i % 2 == 1);
        let r = c.post_json("/scheduler/filter", args.to_string().as_bytes()).unwrap().json().unwrap();
        let p = passed(&r);
        assert_eq!(p.len(), 1, "{name}: {r}");
        assert_eq!(r["FailedNodes"].as_object().unwrap().len(), 7);
        assert!(r["FailedNodes"].as_object().unwrap().values().all(|v| v.as_str().unwrap().starts_with("tessera: planned on")));
        chosen.insert(name.to_string(), p[0].clone());
        // Prioritize agrees: the planned node 10, the others 0.
        let scores = c.post_json("/scheduler/prioritize", args.to_string().as_bytes()).unwrap().json().unwrap();
        let scores: BTreeMap<String, i64> =
            scores.as_array().unwrap().iter().map(|h| (h["Host"].as_str().unwrap().to_string(), h["Score"].as_i64().unwrap())).collect();
        assert_eq!(scores.len(), 8);
        assert!(scores.iter().all(|(n, s)| *s == if *n == p[0] { 10 } else { 0 }));
    }
    assert_eq!(chosen["train-0"], first[0]);
    // By hand: r1 nodes have 6 cpu free, members need 7: the whole gang on r2, one per node.
    let distinct: BTreeSet<&String> = chosen.values().collect();
    assert_eq!(distinct.len(), 4);
    assert!(chosen.values().all(|n| n.starts_with("r2-")), "{chosen:?}");
    // The answers are the plan, and the plan is valid.
    let plan = c.get("/v1/plan").unwrap();
    let d = decision_of(&plan);
    let imp = tessera::kube::import_texts(&[("", &view.to_string())]).unwrap();
    assert!(tessera::check(&Instance::from_doc(&imp.instance).unwrap(), &d).is_valid());
    let mut planned: Vec<String> = d.placements[0].pods.iter().map(|p| p.node.clone()).collect();
    planned.sort();
    let mut got: Vec<String> = chosen.values().cloned().collect();
    got.sort();
    assert_eq!(planned, got);
    // Candidates without the planned node: every node fails, naming the plan.
    let args = filter_args(pod_named(&view, "train-0"), &nodes[..4], true);
    let r = c.post_json("/scheduler/filter", args.to_string().as_bytes()).unwrap().json().unwrap();
    assert!(passed(&r).is_empty());
    assert!(r["FailedNodes"]["r1-n0"].as_str().unwrap().contains("not a candidate"));
}

#[test]
fn extender_replans_when_the_view_changes() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    let mut view = read_json("upstream-v1beta1.json");
    push(&mut c, &view);
    let nodes: Vec<Value> = items(&view, "Node").into_iter().cloned().collect();
    let node_refs: Vec<&Value> = nodes.iter().collect();
    let args = filter_args(pod_named(&view, "train-0"), &node_refs, true);
    let r = c.post_json("/scheduler/filter", args.to_string().as_bytes()).unwrap().json().unwrap();
    assert!(passed(&r)[0].starts_with("r2-"));
    let v1 = c.get("/v1/cluster").unwrap().json().unwrap()["version"].as_u64().unwrap();
    // The web pods move from rack r1 to rack r2: now only r1 holds the gang.
    for it in view["items"].as_array_mut().unwrap() {
        if it["kind"] == "Pod" && it["metadata"]["name"].as_str().unwrap().starts_with("web-") {
            let n = it["spec"]["nodeName"].as_str().unwrap().replace("r1-", "r2-");
            it["spec"]["nodeName"] = json!(n);
        }
    }
    push(&mut c, &view);
    let r = c.post_json("/scheduler/filter", args.to_string().as_bytes()).unwrap().json().unwrap();
    let p = passed(&r);
    assert_eq!(p.len(), 1);
    assert!(p[0].starts_with("r1-"), "replanned onto r1: {r}");
    let cl = c.get("/v1/cluster").unwrap().json().unwrap();
    assert_eq!(cl["version"].as_u64().unwrap(), v1 + 1);
    assert_eq!(cl["plan"]["current"], true);
    // The new plan is valid for the new view.
    let d = decision_of(&c.get("/v1/plan").unwrap());
    let imp = tessera::kube::import_texts(&[("", &view.to_string())]).unwrap();
    assert!(tessera::check(&Instance::from_doc(&imp.instance).unwrap(), &d).is_valid());
    assert!(d.placements[0].pods.iter().all(|p| p.node.starts_with("r1-")));
    assert!(s.state().metrics.render().contains("tessera_extender_plans_total{outcome=\"done\"}"));
}

#[test]
fn extender_preempt_keeps_the_planned_node_and_its_victims() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    let view = read_json("mixed-list.json");
    push(&mut c, &view);
    let uid = |name: &str| pod_named(&view, name)["metadata"]["uid"].as_str().unwrap().to_string();
    let nodes = items(&view, "Node");
    let pod = pod_named(&view, "urgent-0");
    // Where does the plan put urgent-0? The filter says (all candidates given).
    let r = c.post_json("/scheduler/filter", filter_args(pod, &nodes, true).to_string().as_bytes()).unwrap().json().unwrap();
    let node = passed(&r)[0].clone();
    assert!(node == "cpu-1" || node == "cpu-2");
    // The plan's victims on that node, by uid.
    let d = decision_of(&c.get("/v1/plan").unwrap());
    let on_node: BTreeMap<&str, &str> =
        [("default/batch-0", "cpu-1"), ("default/batch-1", "cpu-1"), ("default/batch-2", "cpu-2"), ("default/batch-3", "cpu-2")].into();
    let mut expect: Vec<String> = d
        .evictions
        .iter()
        .filter(|e| on_node.get(e.pod.as_str()) == Some(&node.as_str()))
        .map(|e| uid(e.pod.trim_start_matches("default/")))
        .collect();
    expect.sort();
    assert!(!expect.is_empty());
    // kube-scheduler's candidates: both nodes, with its own victim choice.
    let args = json!({"Pod": pod, "NodeNameToVictims": null, "NodeNameToMetaVictims": {
        "cpu-1": {"Pods": [{"UID": uid("batch-0")}, {"UID": uid("batch-1")}], "NumPDBViolations": 0},
        "cpu-2": {"Pods": [{"UID": uid("batch-2")}, {"UID": uid("batch-3")}], "NumPDBViolations": 1}}});
    let r = c.post_json("/scheduler/preempt", args.to_string().as_bytes()).unwrap().json().unwrap();
    let m = r["NodeNameToMetaVictims"].as_object().unwrap();
    assert_eq!(m.keys().collect::<Vec<_>>(), [&node]);
    let mut got: Vec<String> = m[&node]["Pods"].as_array().unwrap().iter().map(|p| p["UID"].as_str().unwrap().to_string()).collect();
    got.sort();
    assert_eq!(got, expect);
    // Full victims (without nodeCacheCapable) give the same answer.
    let full = json!({"Pod": pod, "NodeNameToVictims": {
        "cpu-1": {"Pods": [pod_named(&view, "batch-0"), pod_named(&view, "batch-1")], "NumPDBViolations": 0},
        "cpu-2": {"Pods": [pod_named(&view, "batch-2"), pod_named(&view, "batch-3")], "NumPDBViolations": 1}}, "NodeNameToMetaVictims": null});
    let r2 = c.post_json("/scheduler/preempt", full.to_string().as_bytes()).unwrap().json().unwrap();
    assert_eq!(r2, r);
    // The unplaceable pod fails every node (and is never given one).
    let r = c
        .post_json("/scheduler/filter", filter_args(pod_named(&view, "singleton"), &nodes, true).to_string().as_bytes())
        .unwrap()
        .json()
        .unwrap();
    assert!(passed(&r).is_empty());
    let failed = r["FailedNodes"].as_object().unwrap().len() + r["FailedAndUnresolvableNodes"].as_object().unwrap().len();
    assert_eq!(failed, 4);
}

#[test]
fn extender_adds_a_pod_it_did_not_know_and_answers_errors() {
    let s = Server::with(|_| {});
    let mut c = s.client();
    let view = read_json("coscheduling.json");
    let nodes = items(&view, "Node");
    let newcomer = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late", "namespace": "ml", "uid": "1234"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]}, "status": {"phase": "Pending"}});
    // No view yet: an extender error, nodes unconstrained.
    let r = c.post_json("/scheduler/filter", filter_args(&newcomer, &nodes, true).to_string().as_bytes()).unwrap().json().unwrap();
    assert!(r["Error"].as_str().unwrap().contains("POST /v1/cluster"));
    push(&mut c, &view);
    let r = c.post_json("/scheduler/filter", filter_args(&newcomer, &nodes, true).to_string().as_bytes()).unwrap().json().unwrap();
    assert_eq!(passed(&r).len(), 1, "{r}");
    assert_eq!(c.get("/v1/cluster").unwrap().json().unwrap()["version"], 2, "the pod was added to the view");
    // Malformed args: 400 naming the field.
    let r = c.post_json("/scheduler/filter", br#"{"Pod": {"spec": {"containers": "x"}}, "NodeNames": []}"#).unwrap();
    assert_eq!(r.status, 400);
    assert!(error_of(&r).1.starts_with("Pod.spec.containers"), "{}", r.text());
    let r = c.post_json("/v1/cluster", br#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}]}"#).unwrap();
    assert_eq!((r.status, error_of(&r).1.as_str()), (400, "items[0].status.allocatable.cpu"));
}
