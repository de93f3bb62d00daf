//! `cargo bench --bench preemption`: the preemption benchmark of
//! `tessera bench --suite preemption` (exact vs the Kubernetes-style `k8s-preempt`
//! baseline on `preempt-256` and `preempt-1024`).
//! Environment: TESSERA_BENCH_SEEDS (default 5), TESSERA_BENCH_LIMIT (default 10s).

fn main() {
    let seeds = std::env::var("TESSERA_BENCH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    let limit = std::env::var("TESSERA_BENCH_LIMIT").unwrap_or_else(|_| "10s".into());
    let limit = tessera::wire::parse_duration(&limit).expect("TESSERA_BENCH_LIMIT");
    let classes: Vec<String> = ["preempt-256", "preempt-1024"].iter().map(|s| s.to_string()).collect();
    match tessera::tooling::bench::run_preemption(&classes, seeds, limit, &mut |l| eprintln!("{l}")) {
        Ok(r) => println!("{r}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
