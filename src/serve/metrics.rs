//! Prometheus metrics of the server, written in the text exposition format (version
//! 0.0.4): requests by route and status, request latency, solve time by solver, in-flight
//! and queued solves, rejected requests by reason, and the extender's plan.
//!
//! A handful of series guarded by one mutex: the server's request rate is bounded by its
//! solves, far below what a lock per request costs.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds (seconds) of the latency and solve-time histogram buckets.
pub const BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];

#[derive(Clone, Debug, Default)]
struct Histogram {
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, secs: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS.len()];
        }
        for (i, b) in BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.counts[i] += 1;
            }
        }
        self.sum += secs;
        self.count += 1;
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {}", self.counts.get(i).copied().unwrap_or(0));
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

#[derive(Default)]
struct Series {
    requests: BTreeMap<(String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
    solve: BTreeMap<String, Histogram>,
    rejected: BTreeMap<String, u64>,
    plans: BTreeMap<String, u64>,
}

/// The server's metrics.
#[derive(Default)]
pub struct Metrics {
    series: Mutex<Series>,
    /// Solves running now.
    pub in_flight: AtomicI64,
    /// Solves waiting for a slot now.
    pub queued: AtomicI64,
    /// Connections open now.
    pub connections: AtomicI64,
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

impl Metrics {
    fn with<R>(&self, f: impl FnOnce(&mut Series) -> R) -> R {
        let mut s = self.series.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s)
    }

    /// One finished request.
    pub fn request(&self, route: &str, status: u16, took: Duration) {
        self.with(|s| {
            *s.requests.entry((route.to_string(), status)).or_insert(0) += 1;
            s.latency.entry(route.to_string()).or_default().observe(took.as_secs_f64());
        })
    }

    /// One finished solve.
    pub fn solve(&self, solver: &str, took: Duration) {
        self.with(|s| s.solve.entry(solver.to_string()).or_default().observe(took.as_secs_f64()))
    }

    /// One request refused before any work (`saturated`, `body_too_large`, `read_timeout`,
    /// `unauthorized`, `shutting_down`).
    pub fn rejected(&self, reason: &str) {
        self.with(|s| *s.rejected.entry(reason.to_string()).or_insert(0) += 1)
    }

    /// One extender plan finished (`done`) or dropped for a newer view (`superseded`).
    pub fn plan(&self, outcome: &str) {
        self.with(|s| *s.plans.entry(outcome.to_string()).or_insert(0) += 1)
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.with(|s| {
            out.push_str("# HELP tessera_http_requests_total HTTP requests by route and status.\n");
            out.push_str("# TYPE tessera_http_requests_total counter\n");
            for ((route, status), n) in &s.requests {
                let _ = writeln!(out, "tessera_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}", escape(route));
            }
            out.push_str("# HELP tessera_http_request_duration_seconds Time from request to response, by route.\n");
            out.push_str("# TYPE tessera_http_request_duration_seconds histogram\n");
            for (route, h) in &s.latency {
                h.write(&mut out, "tessera_http_request_duration_seconds", &format!("route=\"{}\"", escape(route)));
            }
            out.push_str("# HELP tessera_solve_duration_seconds Time of one solve, by solver.\n");
            out.push_str("# TYPE tessera_solve_duration_seconds histogram\n");
            for (solver, h) in &s.solve {
                h.write(&mut out, "tessera_solve_duration_seconds", &format!("solver=\"{}\"", escape(solver)));
            }
            out.push_str("# HELP tessera_rejected_requests_total Requests refused before any work, by reason.\n");
            out.push_str("# TYPE tessera_rejected_requests_total counter\n");
            for (reason, n) in &s.rejected {
                let _ = writeln!(out, "tessera_rejected_requests_total{{reason=\"{}\"}} {n}", escape(reason));
            }
            out.push_str("# HELP tessera_extender_plans_total Extender plans by outcome.\n");
            out.push_str("# TYPE tessera_extender_plans_total counter\n");
            for (o, n) in &s.plans {
                let _ = writeln!(out, "tessera_extender_plans_total{{outcome=\"{}\"}} {n}", escape(o));
            }
        });
        for (name, help, v) in [
            ("tessera_solves_in_flight", "Solves running now.", &self.in_flight),
            ("tessera_solves_queued", "Solves waiting for a slot now.", &self.queued),
            ("tessera_open_connections", "Connections open now.", &self.connections),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {}", v.load(Ordering::Relaxed));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.request("/v1/solve", 200, Duration::from_millis(30));
        m.request("/v1/solve", 200, Duration::from_millis(300));
        m.request("/v1/solve", 400, Duration::from_millis(1));
        let t = m.render();
        assert!(t.contains("tessera_http_requests_total{route=\"/v1/solve\",status=\"200\"} 2"), "{t}");
        assert!(t.contains("tessera_http_requests_total{route=\"/v1/solve\",status=\"400\"} 1"));
        // 1 ms <= 0.005; 30 ms first fits 0.05; 300 ms first fits 0.5.
        assert!(t.contains("tessera_http_request_duration_seconds_bucket{route=\"/v1/solve\",le=\"0.005\"} 1"));
        assert!(t.contains("tessera_http_request_duration_seconds_bucket{route=\"/v1/solve\",le=\"0.05\"} 2"));
        assert!(t.contains("tessera_http_request_duration_seconds_bucket{route=\"/v1/solve\",le=\"0.5\"} 3"));
        assert!(t.contains("tessera_http_request_duration_seconds_count{route=\"/v1/solve\"} 3"));
        assert!(t.contains("tessera_solves_in_flight 0"));
    }
}
