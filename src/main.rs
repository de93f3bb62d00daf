//! `tessera`: the command-line placement oracle.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tessera::tooling::compare::Contender;
use tessera::tooling::{compare, generate};
use tessera::{check, Diagnostics, Instance, Options, ProgressSink, SolverKind};

#[derive(Parser)]
#[command(name = "tessera", version, about = "Exact gang, topology and preemption-aware placement for one scheduling cycle")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Yaml,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Suite {
    Flat,
    Preemption,
    /// Every solver of the registry against exact on generated classes; writes `--out DIR`.
    Gap,
    /// Exact on the large topology classes, and the candidate evaluation with 1 vs 2 threads.
    Topology,
    /// The exact engine at production scale (flat-256 with preemption, preempt-256,
    /// flat-1024, preempt-1024, openb-1024, topo-4096): bounds per row, wall time and peak
    /// memory of each solve process, known answers, 1 vs 2 threads; writes `--out DIR`.
    Scale,
    /// Load on `tessera serve`: --clients concurrent clients for --duration against a
    /// loopback server, small and 256-node instances; every answer validated.
    #[cfg(feature = "serve")]
    Serve,
}

#[derive(Clone, Copy, ValueEnum)]
enum CompareFormat {
    /// Aligned terminal text.
    Table,
    Csv,
    Json,
    Markdown,
}

#[cfg(feature = "serve")]
#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on; off loopback, TLS and client authentication are required.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: std::net::SocketAddr,
    /// PEM certificate chain: serve HTTPS.
    #[arg(long)]
    tls_cert_file: Option<PathBuf>,
    /// PEM private key of --tls-cert-file.
    #[arg(long)]
    tls_key_file: Option<PathBuf>,
    /// PEM CA bundle: clients presenting a certificate it signed are authenticated
    /// (what kube-scheduler's extender tlsConfig presents).
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// File holding a bearer token: clients sending `Authorization: Bearer TOKEN` are authenticated.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Largest request body, e.g. 32Mi.
    #[arg(long, default_value = "32Mi")]
    max_body: String,
    /// Time limit of a solve that names none (nor its instance).
    #[arg(long, default_value = "10s")]
    default_time_limit: String,
    /// Cap on any solve's time limit (larger ones are clamped).
    #[arg(long, default_value = "60s")]
    max_time_limit: String,
    /// Solves running at once (default: the number of CPUs).
    #[arg(long)]
    max_concurrent_solves: Option<usize>,
    /// Solves waiting for a slot; beyond it requests get 503 with Retry-After.
    #[arg(long, default_value_t = 64)]
    max_queued_solves: usize,
    /// Time to receive a request's headers and body.
    #[arg(long, default_value = "30s")]
    read_timeout: String,
    /// After SIGTERM, how long in-flight solves may run before they are cancelled.
    #[arg(long, default_value = "70s")]
    shutdown_grace: String,
    /// Budget of one extender plan of the cluster view.
    #[arg(long, default_value = "5s")]
    plan_time_limit: String,
    /// How long an extender call waits for the plan of a changed view.
    #[arg(long, default_value = "10s")]
    filter_wait: String,
}

#[cfg(feature = "serve")]
fn serve(a: ServeArgs) -> Result<ExitCode, String> {
    let dur = |flag: &str, v: &str| tessera::wire::parse_duration(v).map_err(|e| format!("--{flag}: {e}"));
    let max_body = tessera::wire::quantity::parse(&a.max_body, tessera::wire::quantity::Scale::Base)
        .map_err(|e| format!("--max-body: {e} {:?}", a.max_body))?;
    let mut limits = tessera::serve::Limits {
        max_body_bytes: usize::try_from(max_body).map_err(|_| "--max-body: too large".to_string())?,
        default_time_limit: dur("default-time-limit", &a.default_time_limit)?,
        max_time_limit: dur("max-time-limit", &a.max_time_limit)?,
        max_queued_solves: a.max_queued_solves,
        read_timeout: dur("read-timeout", &a.read_timeout)?,
        shutdown_grace: dur("shutdown-grace", &a.shutdown_grace)?,
        ..tessera::serve::Limits::default()
    };
    if let Some(n) = a.max_concurrent_solves {
        limits.max_concurrent_solves = n;
    }
    let config = tessera::serve::Config {
        listen: a.listen,
        tls_cert: a.tls_cert_file,
        tls_key: a.tls_key_file,
        client_ca: a.client_ca_file,
        token_file: a.token_file,
        limits,
        plan_time_limit: dur("plan-time-limit", &a.plan_time_limit)?,
        filter_wait: dur("filter-wait", &a.filter_wait)?,
    };
    tessera::serve::run(config)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
enum ImportSource {
    /// Cluster objects from `kubectl get … -o json` (or YAML): Nodes, Pods, PriorityClasses
    /// and the group objects of every gang convention (docs/kube-import.md). Warnings (pods
    /// made unplaceable, objects ignored) go to standard error.
    Kube {
        /// Files (JSON or YAML; a List or objects); `-` reads standard input.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "yaml")]
        output: Format,
        /// Write the instance here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Serve the placement oracle over HTTP (`/v1/solve`, `/v1/check`, `/v1/compare`) and a
    /// kube-scheduler extender (`/scheduler/…`), until SIGTERM or SIGINT (docs/serve.md).
    #[cfg(feature = "serve")]
    Serve(Box<ServeArgs>),
    /// Build an instance from another format (`import kube FILE…`).
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// Turn a decision made on `import kube FILE…` into the Kubernetes objects that carry it
    /// out: policy/v1 Evictions for the victims, then v1 Bindings for the placed pods, in
    /// the order they must be applied. The decision is checked against the instance first.
    Export {
        /// The decision (YAML or JSON).
        decision: PathBuf,
        /// The same cluster files the instance was imported from.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "json")]
        output: Format,
        /// Write the objects here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// The YuniKorn queues.yaml the decision was made with (as for solve).
        #[arg(long)]
        queues: Option<PathBuf>,
    },
    /// Decide one cycle: place pending pod groups (exact by default).
    Solve {
        /// Instance file (YAML or JSON); `-` reads standard input.
        instance: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "yaml")]
        output: Format,
        /// Write the decision here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Wall-clock budget, e.g. 10s, 500ms (default: options.timeLimit, else 10s).
        #[arg(long)]
        time_limit: Option<String>,
        /// Relative gap at which to stop (default: options.relativeGap, else 0 = prove optimal).
        #[arg(long)]
        gap: Option<f64>,
        /// Deterministic budget in work units (default: options.workLimit, else none): the
        /// same input then gives the same decision on any machine and thread count.
        #[arg(long)]
        work_limit: Option<u64>,
        /// Solver to use (see --list-solvers).
        #[arg(long, default_value = "exact")]
        solver: String,
        /// List the solvers and exit.
        #[arg(long)]
        list_solvers: bool,
        /// Threads for parallel phases (the decision does not depend on it).
        #[arg(long)]
        threads: Option<usize>,
        /// A YuniKorn queues.yaml (one partition) for the instance's pod groups.
        #[arg(long)]
        queues: Option<PathBuf>,
        /// Progress on standard error (exact solver): the warm start, each objective tier
        /// as it is proven or stopped, the deadline.
        #[arg(long)]
        progress: bool,
    },
    /// Validate a decision against an instance: hard rules and objective terms 1-3.
    Check {
        instance: PathBuf,
        decision: PathBuf,
        /// The YuniKorn queues.yaml the decision was made with (as for solve).
        #[arg(long)]
        queues: Option<PathBuf>,
    },
    /// Generate a synthetic instance of a named class.
    Generate {
        /// Instance class (see --list).
        #[arg(long, default_value = "flat-64")]
        class: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value = "yaml")]
        output: Format,
        #[arg(long)]
        out: Option<PathBuf>,
        /// List the classes and exit.
        #[arg(long)]
        list: bool,
    },
    /// Show a YuniKorn queue tree: limits, properties and computed priorities, then the
    /// scheduling order of the pod groups with their effective priority keys. FILE is a
    /// YuniKorn queues.yaml (partitions > queues) or an instance with a `queues` key (or
    /// any instance together with --queues). `solve --queues` enforces them.
    Queues {
        /// queues.yaml or instance file (YAML or JSON); `-` reads standard input.
        file: PathBuf,
        /// A YuniKorn queues.yaml for the pod groups of the instance FILE.
        #[arg(long)]
        queues: Option<PathBuf>,
    },
    /// Write the cycle MILP of an instance in CPLEX LP format: the objective of tier 1, or of
    /// a later tier with the earlier tiers' values as floor rows (the model the exact
    /// solver solves for that tier).
    ExportLp {
        instance: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
        /// Which objective tier (1-based; the header lists them).
        #[arg(long, default_value_t = 1)]
        tier: usize,
        /// Values of the earlier tiers, comma-separated (a decision's `stats.tierValues`).
        #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
        fix: Vec<f64>,
    },
    /// Run several solvers on the same instances and compare them with the exact solver:
    /// groups placed and victims per priority level, extra pods, time, `check` result and
    /// the gap to exact, then a summary per solver. Exit 1 if any decision fails `check`.
    Compare {
        /// Instance files (YAML or JSON).
        #[arg(required = true)]
        instances: Vec<PathBuf>,
        /// Comma-separated solver names (default: every solver, see `solve --list-solvers`).
        #[arg(long)]
        solvers: Option<String>,
        /// Budget per solve.
        #[arg(long, default_value = "10s")]
        time_limit: String,
        #[arg(long, value_enum, default_value = "table")]
        format: CompareFormat,
        /// Write the report here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// A YuniKorn queues.yaml applied to every instance.
        #[arg(long)]
        queues: Option<PathBuf>,
    },
    /// Benchmark on generated classes: exact against first-fit decreasing (`--suite flat`),
    /// against Kubernetes-style workload preemption (`--suite preemption`), or every solver
    /// against exact with results.csv, summary.md and SVG plots written to `--out DIR`
    /// (`--suite gap`).
    Bench {
        /// Which benchmark: flat (exact vs ffd), preemption (exact vs k8s-preempt), gap
        /// (all solvers, writes --out DIR) or topology (topo-4096: cycle time, proofs, and
        /// candidate evaluation with 1 vs 2 threads).
        #[arg(long, value_enum, default_value = "flat")]
        suite: Suite,
        /// Comma-separated classes (default: flat-64,flat-256,flat-1024 for flat;
        /// preempt-256,preempt-1024 for preemption; tiny,hetero-trap,flat-64,flat-256,preempt-256,tas-unconstrained,tas-preferred-slices,tas-queues for gap).
        #[arg(long)]
        classes: Option<String>,
        /// Instances per class (default 5; gap: 70,50,40,15,25,10,10,10 = 230 instances).
        #[arg(long)]
        seeds: Option<u64>,
        /// Budget per solve (default 10s; gap: 10s for tiny, hetero-trap and the tas-* classes, 2s for the others).
        #[arg(long)]
        time_limit: Option<String>,
        /// Output directory (gap suite only; required there).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Comma-separated solvers (gap suite; default: every solver), or the one solver of
        /// the serve suite's requests (default: exact).
        #[arg(long)]
        solvers: Option<String>,
        /// How long the clients send (serve suite only).
        #[arg(long, default_value = "60s")]
        duration: String,
        /// Concurrent clients (serve suite only).
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// Threads per solve (scale suite; default 2).
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Known answers per instance, read and updated when the run improves one (scale
        /// suite; e.g. docs/scale/best-known.json).
        #[arg(long)]
        best_known: Option<PathBuf>,
        /// Seeds per class on which the 1- vs 2-thread ratio is measured (scale suite).
        #[arg(long, default_value_t = 1)]
        ratio_seeds: u64,
        /// Work limit per solve (scale suite): every run then repeats exactly, so two builds
        /// (`--binary`) compare without timing noise; `--time-limit` is each solve's hard
        /// limit (give it room, e.g. 300s).
        #[arg(long)]
        work_limit: Option<u64>,
        /// The tessera executable that solves (scale suite; default: this one), to measure
        /// another build against the same known answers.
        #[arg(long)]
        binary: Option<PathBuf>,
    },
    /// Run a scenario over time: cycles every period, YuniKorn's gang lifecycle between
    /// them (format: docs/simulate.md). Prints the event log as JSON lines and then the
    /// summary (one line, kind "summary"), or tables with --format table. Several solvers
    /// or placeholder modes (comma-separated) run one after the other and print a
    /// side-by-side comparison.
    Simulate {
        /// Scenario file (YAML or JSON); `-` reads standard input.
        #[arg(required_unless_present = "openb", conflicts_with = "openb")]
        scenario: Option<PathBuf>,
        /// Instead of a file: arrivals on NODES (64, 256 or 1024) nodes of the openb trace
        /// with its job shapes and pod lifetimes (see `tessera::sim::openb`).
        #[arg(long, value_name = "NODES")]
        openb: Option<usize>,
        /// With --openb: hours of arrivals (the run stops there).
        #[arg(long, default_value_t = 24.0, requires = "openb")]
        hours: f64,
        /// With --openb: offered GPU load (GPU demand x lifetime over capacity).
        #[arg(long, default_value_t = 0.9, requires = "openb")]
        load: f64,
        /// With --openb: the seed of cluster sample, arrivals and shapes.
        #[arg(long, default_value_t = 1, requires = "openb")]
        seed: u64,
        /// With --openb: write the generated scenario (YAML, to --out or standard output)
        /// instead of running it; `tessera simulate FILE` replays it unchanged.
        #[arg(long, requires = "openb")]
        emit_scenario: bool,
        /// Cycle solver(s), comma-separated (see `solve --list-solvers`).
        #[arg(long, default_value = "exact")]
        solver: String,
        /// Placeholder mode(s), comma-separated: yunikorn (member by member against queue
        /// headroom, as YuniKorn's core) or atomic (a gang's placeholders only when all fit).
        #[arg(long, default_value = "yunikorn")]
        placeholders: String,
        #[arg(long, value_enum, default_value = "jsonl")]
        format: SimFormat,
        /// Wall-clock budget of each cycle decision, e.g. 1s (default: the instance's, else 10s).
        #[arg(long)]
        time_limit: Option<String>,
        /// Deterministic budget of each decision in work units (exact solver).
        #[arg(long)]
        work_limit: Option<u64>,
        /// Threads for parallel phases (decisions do not depend on it).
        #[arg(long)]
        threads: Option<usize>,
        /// Validate every cycle decision with the checker (failures are counted and logged).
        #[arg(long)]
        check: bool,
        /// Write the output here (atomically) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum SimFormat {
    /// The event log as JSON lines, then the summary as one JSON line.
    Jsonl,
    /// Aligned text for people.
    Table,
}

fn read_instance(path: Option<&Path>, queues: Option<&Path>) -> Result<Instance, String> {
    let text = read_text(path)?;
    let Some(qf) = queues else { return Instance::from_text(&text).map_err(|e| e.to_string()) };
    let name = path.map(|p| p.display().to_string()).unwrap_or_default();
    let mut doc: tessera::wire::InstanceDoc = tessera::wire::from_text(&text).map_err(|e| format!("{name}: {e}"))?;
    if !doc.queues.is_empty() {
        return Err(format!("{name} has its own queues; drop --queues or the instance's queues key"));
    }
    // The queues.yaml is validated on its own first, so its errors carry its own paths
    // (`partitions[0].queues[1]...`); then its partition's queues become the instance's.
    let qtext = read_text(Some(qf))?;
    let qdoc: tessera::wire::QueuesYamlDoc = tessera::wire::from_text(&qtext).map_err(|e| format!("{}: {e}", qf.display()))?;
    tessera::model::queues::QueueTree::from_yaml_doc(&qdoc, &doc.shared_devices).map_err(|e| format!("{}: {e}", qf.display()))?;
    doc.queues = qdoc.partitions[0].queues.clone();
    Instance::from_doc(&doc).map_err(|e| format!("{name} with {}: {e}", qf.display()))
}

fn read_text(path: Option<&Path>) -> Result<String, String> {
    match path {
        None => Err("no instance given (a path, or - for standard input)".into()),
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| format!("stdin: {e}"))?;
            Ok(s)
        }
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())),
    }
}

/// Writes whole or not at all: a temporary file renamed into place.
fn write_out(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(p) => tessera::tooling::write_atomic(p, text),
    }
}

/// Imports cluster files (errors name the file, then the path inside it).
fn import_kube(files: &[PathBuf]) -> Result<tessera::kube::Imported, String> {
    let mut texts = Vec::new();
    for f in files {
        texts.push((f.display().to_string(), read_text(Some(f))?));
    }
    let sources: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    tessera::kube::import_texts(&sources).map_err(|e| e.to_string())
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve(*args),
        Command::Import { source: ImportSource::Kube { files, output, out } } => {
            let imported = import_kube(&files)?;
            for w in &imported.warnings {
                eprintln!("warning: {w}");
            }
            let text = match output {
                Format::Yaml => serde_yaml_ng::to_string(&imported.instance).map_err(|e| e.to_string())?,
                Format::Json => serde_json::to_string_pretty(&imported.instance).map_err(|e| e.to_string())? + "\n",
            };
            write_out(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { decision, files, output, out, queues } => {
            let imported = import_kube(&files)?;
            let inst = match &queues {
                None => Instance::from_doc(&imported.instance).map_err(|e| e.to_string())?,
                Some(q) => {
                    // As `solve --queues`: the queues.yaml's partition becomes the instance's queues.
                    let qtext = read_text(Some(q))?;
                    let qdoc: tessera::wire::QueuesYamlDoc =
                        tessera::wire::from_text(&qtext).map_err(|e| format!("{}: {e}", q.display()))?;
                    let mut doc = imported.instance.clone();
                    tessera::model::queues::QueueTree::from_yaml_doc(&qdoc, &doc.shared_devices)
                        .map_err(|e| format!("{}: {e}", q.display()))?;
                    doc.queues = qdoc.partitions[0].queues.clone();
                    Instance::from_doc(&doc).map_err(|e| format!("with {}: {e}", q.display()))?
                }
            };
            let text = read_text(Some(&decision))?;
            let d: tessera::Decision = tessera::wire::from_text(&text).map_err(|e| format!("{}: {e}", decision.display()))?;
            let report = check::check(&inst, &d);
            if !report.is_valid() {
                eprint!("{}", check::render(&report));
                return Err(format!("{} is not a valid decision for these cluster files; nothing exported", decision.display()));
            }
            let list = tessera::kube::export(&imported, &d).map_err(|e| format!("{}: {e}", decision.display()))?;
            let text = match output {
                Format::Yaml => serde_yaml_ng::to_string(&list).map_err(|e| e.to_string())?,
                Format::Json => serde_json::to_string_pretty(&list).map_err(|e| e.to_string())? + "\n",
            };
            write_out(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve { instance, output, out, time_limit, gap, work_limit, solver, list_solvers, threads, queues, progress } => {
            if list_solvers {
                for s in SolverKind::ALL {
                    println!("{:<10} {}", s.name(), s.describe());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let kind = SolverKind::from_name(&solver).ok_or_else(|| {
                let names: Vec<&str> = SolverKind::ALL.iter().map(|s| s.name()).collect();
                format!("unknown solver {solver:?} (available: {})", names.join(", "))
            })?;
            let time_limit = match time_limit {
                Some(t) => Some(tessera::wire::parse_duration(&t).map_err(|e| format!("--time-limit: {e}"))?),
                None => None,
            };
            if let Some(g) = gap {
                if !(0.0..=1.0).contains(&g) {
                    return Err(format!("--gap: must be between 0 and 1, got {g}"));
                }
            }
            let inst = read_instance(instance.as_deref(), queues.as_deref())?;
            let opts = Options {
                solver: kind,
                time_limit,
                relative_gap: gap,
                work_limit,
                threads,
                progress: progress.then(ProgressSink::stderr),
                diagnostics: Diagnostics::from_env(),
                ..Options::default()
            };
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| e.to_string())?;
            let d = pool.install(|| tessera::solve(&inst, &opts));
            let text = match output {
                Format::Yaml => d.to_yaml(),
                Format::Json => d.to_json() + "\n",
            };
            write_out(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { instance, decision, queues } => {
            let inst = read_instance(Some(&instance), queues.as_deref())?;
            let text = read_text(Some(&decision))?;
            let d: tessera::Decision = tessera::wire::from_text(&text).map_err(|e| format!("{}: {e}", decision.display()))?;
            let report = check::check(&inst, &d);
            print!("{}", check::render(&report));
            Ok(if report.violations.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Generate { class, seed, output, out, list } => {
            if list {
                for c in generate::classes() {
                    println!("{:<12} {}", c, generate::describe(c).unwrap_or(""));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let doc = generate::generate(&class, seed)?;
            let text = match output {
                Format::Yaml => serde_yaml_ng::to_string(&doc).map_err(|e| e.to_string())?,
                Format::Json => serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n",
            };
            write_out(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Queues { file, queues } => {
            print!("{}", show_queues(&file, queues.as_deref())?);
            Ok(ExitCode::SUCCESS)
        }
        Command::ExportLp { instance, out, tier, fix } => {
            let inst = read_instance(Some(&instance), None)?;
            write_out(out.as_deref(), &tessera::tooling::export_lp(&inst, tier, &fix)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { instances, solvers: names, time_limit, format, out, queues } => {
            let limit = tessera::wire::parse_duration(&time_limit).map_err(|e| format!("--time-limit: {e}"))?;
            let list = pick_solvers(names.as_deref())?;
            let mut insts = Vec::new();
            for p in &instances {
                // Errors name the file, then the path of the bad field inside it.
                let inst = match &queues {
                    Some(q) => read_instance(Some(p), Some(q))?,
                    None => Instance::from_text(&read_text(Some(p))?).map_err(|e| format!("{}: {e}", p.display()))?,
                };
                insts.push((p.display().to_string(), inst));
            }
            let cfg = Options { time_limit: Some(limit), diagnostics: Diagnostics::from_env(), ..Options::default() };
            let bar = progress_bar((insts.len() * list.len()) as u64);
            let report = compare::compare(&insts, &list, &cfg, &mut |_, _, r| {
                bar.inc(1);
                bar.set_message(format!("{} {}", r.instance, r.solver));
                if !r.valid {
                    bar.println(format!("INVALID: {} / {} fails check: {}", r.instance, r.solver, r.violations.join("; ")));
                }
            });
            bar.finish_and_clear();
            let fmt = match format {
                CompareFormat::Table => compare::Format::Table,
                CompareFormat::Csv => compare::Format::Csv,
                CompareFormat::Json => compare::Format::Json,
                CompareFormat::Markdown => compare::Format::Markdown,
            };
            write_out(out.as_deref(), &compare::render(&report, fmt))?;
            let bad = report.invalid().count();
            if bad > 0 {
                eprintln!("error: {bad} decision(s) fail check (see the check column)");
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Simulate {
            scenario,
            openb,
            hours,
            load,
            seed,
            emit_scenario,
            solver,
            placeholders,
            format,
            time_limit,
            work_limit,
            threads,
            check,
            out,
        } => {
            let sc = match (scenario, openb) {
                (_, Some(nodes)) => {
                    let doc = tessera::sim::openb::scenario(nodes, hours, load, seed).map_err(|e| format!("--openb: {e}"))?;
                    if emit_scenario {
                        let text = serde_yaml_ng::to_string(&doc).map_err(|e| format!("--emit-scenario: {e}"))?;
                        write_out(out.as_deref(), &text)?;
                        return Ok(ExitCode::SUCCESS);
                    }
                    tessera::sim::Scenario::from_doc(&doc).map_err(|e| format!("--openb: {e}"))?
                }
                (Some(path), None) => {
                    let text = read_text(Some(&path))?;
                    tessera::sim::Scenario::from_text(&text).map_err(|e| format!("{}: {e}", path.display()))?
                }
                (None, None) => return Err("no scenario given (a path, or --openb NODES)".into()),
            };
            simulate(&sc, &solver, &placeholders, format, time_limit.as_deref(), work_limit, threads, check, out.as_deref())
        }
        Command::Bench {
            suite,
            classes,
            seeds,
            time_limit,
            out,
            solvers: names,
            duration,
            clients,
            threads,
            best_known,
            ratio_seeds,
            work_limit,
            binary,
        } => {
            #[cfg(feature = "serve")]
            if let Suite::Serve = suite {
                let b = tessera::serve::bench::LoadBench {
                    duration: tessera::wire::parse_duration(&duration).map_err(|e| format!("--duration: {e}"))?,
                    clients: clients.max(1),
                    solver: names.clone(),
                    ..Default::default()
                };
                let report = tessera::serve::bench::run_load(&b, &mut |line| eprintln!("{line}"))?;
                print!("{report}");
                return Ok(ExitCode::SUCCESS);
            }
            let _ = (&duration, clients);
            let limit = match &time_limit {
                Some(t) => Some(tessera::wire::parse_duration(t).map_err(|e| format!("--time-limit: {e}"))?),
                None => None,
            };
            if !matches!(suite, Suite::Scale) && work_limit.is_some() {
                return Err("--work-limit applies to the scale suite only".into());
            }
            if let Suite::Gap = suite {
                let out = out.ok_or("--suite gap needs --out DIR")?;
                let class_list: Vec<(String, u64)> = match &classes {
                    None => tessera::tooling::bench::GAP_CLASSES.iter().map(|&(c, n)| (c.to_string(), seeds.unwrap_or(n))).collect(),
                    Some(list) => split_list(list).into_iter().map(|c| (c, seeds.unwrap_or(5))).collect(),
                };
                let names = names.as_deref().map(split_list);
                if let Some(n) = &names {
                    pick_solvers(Some(&n.join(",")))?;
                }
                let suite = tessera::tooling::bench::GapSuite {
                    classes: class_list,
                    time_limit: limit,
                    solvers: names,
                    command: std::iter::once("tessera".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" "),
                };
                let total: u64 = suite.classes.iter().map(|c| c.1).sum::<u64>()
                    * suite.solvers.as_ref().map(|s| s.len()).unwrap_or(SolverKind::ALL.len()) as u64;
                let bar = progress_bar(total);
                let result = tessera::tooling::bench::run_gap(&suite, &out, &mut |done, _, line| {
                    bar.set_position(done as u64);
                    if line.contains("INVALID") {
                        bar.println(line.clone());
                    }
                    bar.set_message(line);
                })?;
                bar.finish_and_clear();
                eprintln!(
                    "wrote {}/results.csv ({} rows), summary.md, gap-distribution.svg, time-vs-nodes.svg",
                    out.display(),
                    result.rows.len()
                );
                if result.invalid > 0 {
                    eprintln!("error: {} decision(s) fail check (listed in summary.md)", result.invalid);
                    return Ok(ExitCode::from(1));
                }
                return Ok(ExitCode::SUCCESS);
            }
            if let Suite::Scale = suite {
                let out = out.ok_or("--suite scale needs --out DIR")?;
                std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
                let binary = match binary {
                    Some(b) => b,
                    None => std::env::current_exe().map_err(|e| format!("this executable: {e}"))?,
                };
                let suite = tessera::tooling::bench::ScaleSuite {
                    classes: split_list(&classes.unwrap_or_else(|| tessera::tooling::bench::SCALE_CLASSES.join(","))),
                    seeds: seeds.unwrap_or(5),
                    time_limit: limit.unwrap_or(std::time::Duration::from_secs(10)),
                    work_limit: work_limit.filter(|&w| w > 0),
                    threads: threads.max(1),
                    binary,
                    out: out.clone(),
                    best_known,
                    ratio_seeds,
                    command: std::iter::once("tessera".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" "),
                };
                let bar = progress_bar((suite.classes.len() as u64) * suite.seeds);
                let result = tessera::tooling::bench::run_scale(&suite, &mut |done, total, line| {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                    bar.println(line);
                })?;
                bar.finish_and_clear();
                print!("{}", result.summary);
                eprintln!("wrote {}/summary.md, results.csv, instances/, decisions/", out.display());
                let mut failed = false;
                if result.invalid > 0 {
                    eprintln!("error: {} decision(s) fail check", result.invalid);
                    failed = true;
                }
                for c in &result.contradicted {
                    eprintln!("error: bound contradicted by a known valid decision: {c}");
                    failed = true;
                }
                return Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS });
            }
            let _ = (threads, ratio_seeds);
            if out.is_some() || names.is_some() || best_known.is_some() || binary.is_some() {
                return Err("--out, --solvers, --best-known and --binary apply to the gap or scale suites only".into());
            }
            let limit = limit.unwrap_or(std::time::Duration::from_secs(10));
            let seeds = seeds.unwrap_or(5);
            let classes = classes.unwrap_or_else(|| {
                match suite {
                    Suite::Flat => "flat-64,flat-256,flat-1024",
                    Suite::Preemption | Suite::Gap => "preempt-256,preempt-1024",
                    Suite::Topology => "topo-4096",
                    Suite::Scale => "",
                    #[cfg(feature = "serve")]
                    Suite::Serve => "",
                }
                .to_string()
            });
            let classes = split_list(&classes);
            let report = match suite {
                Suite::Flat => tessera::tooling::bench::run(&classes, seeds, limit, &mut |line| eprintln!("{line}"))?,
                Suite::Topology => tessera::tooling::bench::run_topology(&classes, seeds, limit, &mut |line| eprintln!("{line}"))?,
                _ => tessera::tooling::bench::run_preemption(&classes, seeds, limit, &mut |line| eprintln!("{line}"))?,
            };
            print!("{report}");
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `tessera queues`: the tree of a queues.yaml, or of an instance's queues with the
/// scheduling order of its pod groups. The raw document is read, so that the order can
/// be shown for any instance, one that does not validate as a whole included.
fn show_queues(file: &Path, queues_file: Option<&Path>) -> Result<String, String> {
    use tessera::model::queues::{self, QueueTree};
    use tessera::wire::QueuesYamlDoc;
    let text = read_text(Some(file))?;
    fn named(p: &Path) -> impl Fn(tessera::InputError) -> String + '_ {
        move |e| format!("{}: {e}", p.display())
    }
    let value: serde_json::Value = tessera::wire::from_text(&text).map_err(named(file))?;
    let is_queues_yaml = value.get("partitions").is_some();
    if is_queues_yaml {
        if queues_file.is_some() {
            return Err(format!("{} is a queues.yaml; --queues goes with an instance file", file.display()));
        }
        let tree = queues::parse_queues_yaml(&text).map_err(named(file))?;
        return Ok(queues::render(&tree, &[]));
    }
    let doc: tessera::wire::InstanceDoc = tessera::wire::from_text(&text).map_err(named(file))?;
    let tree = match queues_file {
        Some(qf) => {
            if !doc.queues.is_empty() {
                return Err(format!("{} has its own queues; drop --queues or the instance's queues key", file.display()));
            }
            let qtext = read_text(Some(qf))?;
            let qdoc: QueuesYamlDoc = tessera::wire::from_text(&qtext).map_err(named(qf))?;
            QueueTree::from_yaml_doc(&qdoc, &doc.shared_devices).map_err(named(qf))?
        }
        None => QueueTree::from_instance(&doc).map_err(named(file))?.ok_or_else(|| {
            format!("{}: no queues (give a queues.yaml, an instance with a queues key, or --queues FILE)", file.display())
        })?,
    };
    let apps = queues::apps_from_doc(&doc, &tree).map_err(named(file))?;
    Ok(queues::render(&tree, &apps))
}

/// `tessera simulate`.
#[allow(clippy::too_many_arguments)]
fn simulate(
    sc: &tessera::sim::Scenario,
    solvers: &str,
    modes: &str,
    format: SimFormat,
    time_limit: Option<&str>,
    work_limit: Option<u64>,
    threads: Option<usize>,
    check: bool,
    out: Option<&Path>,
) -> Result<ExitCode, String> {
    use tessera::sim::{PlaceholderMode, SimOptions};
    let kinds = split_list(solvers)
        .iter()
        .map(|n| {
            SolverKind::from_name(n).ok_or_else(|| {
                let all: Vec<&str> = SolverKind::ALL.iter().map(|s| s.name()).collect();
                format!("--solver: unknown solver {n:?} (available: {})", all.join(", "))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if kinds.is_empty() {
        return Err("--solver: no solver named".into());
    }
    let modes = split_list(modes)
        .iter()
        .map(|m| PlaceholderMode::from_name(m).ok_or_else(|| format!("--placeholders: unknown mode {m:?} (yunikorn, atomic)")))
        .collect::<Result<Vec<_>, _>>()?;
    if modes.is_empty() {
        return Err("--placeholders: no mode named".into());
    }
    let time_limit = match time_limit {
        Some(t) => Some(tessera::wire::parse_duration(t).map_err(|e| format!("--time-limit: {e}"))?),
        None => None,
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| e.to_string())?;
    let mut runs = Vec::new();
    for &solver in &kinds {
        for &placeholders in &modes {
            let opts = SimOptions { solver, placeholders, time_limit, work_limit, threads, check };
            let bar = progress_bar(100);
            bar.set_message(format!("{} / {}: simulated time", solver.name(), placeholders.name()));
            // Off a terminal (a log file, CI) the bar is hidden: a line every 10 % instead.
            let plain = !std::io::IsTerminal::is_terminal(&std::io::stderr());
            let mut last_tenth = 0;
            let mut tick = |p: tessera::sim::Progress| {
                if p.end <= 0 {
                    return;
                }
                let pct = (p.at.clamp(0, p.end) * 100 / p.end) as u64;
                bar.set_position(pct);
                if plain && pct / 10 > last_tenth {
                    last_tenth = pct / 10;
                    eprintln!("simulate: {} / {}: {pct} % of simulated time, {} cycles", solver.name(), placeholders.name(), p.cycles);
                }
            };
            let run = pool.install(|| tessera::sim::simulate_with_progress(sc, &opts, &mut tick))?;
            bar.finish_and_clear();
            if plain {
                let t = &run.summary.totals;
                eprintln!(
                    "simulate: {} / {}: done, {} cycles, {} decisions checked, {} failed",
                    solver.name(),
                    placeholders.name(),
                    t.cycles_run,
                    t.decisions_checked,
                    t.check_failures
                );
            }
            runs.push(run);
        }
    }
    let failures: u64 = runs.iter().map(|r| r.summary.totals.check_failures).sum();
    let text = if runs.len() > 1 {
        let sums: Vec<_> = runs.iter().map(|r| r.summary.clone()).collect();
        match format {
            SimFormat::Table => tessera::sim::compare_table(&sums),
            SimFormat::Jsonl => sums.iter().map(|s| serde_json::json!({"kind": "summary", "summary": s}).to_string() + "\n").collect(),
        }
    } else {
        let r = &runs[0];
        match format {
            SimFormat::Table => format!("{}\n{}", tessera::sim::log_table(&r.log), tessera::sim::summary_table(&r.summary)),
            SimFormat::Jsonl => r.log_jsonl() + &serde_json::json!({"kind": "summary", "summary": r.summary}).to_string() + "\n",
        }
    };
    write_out(out, &text)?;
    Ok(if failures > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// The named solvers (comma-separated), or every solver of the registry.
fn pick_solvers(names: Option<&str>) -> Result<Vec<Contender>, String> {
    let Some(names) = names else { return Ok(SolverKind::ALL.iter().map(|&k| Contender::of(k)).collect()) };
    let list = split_list(names);
    if list.is_empty() {
        return Err("--solvers: no solver named".into());
    }
    list.iter()
        .map(|n| {
            SolverKind::from_name(n).map(Contender::of).ok_or_else(|| {
                let all: Vec<&str> = SolverKind::ALL.iter().map(|s| s.name()).collect();
                format!("--solvers: unknown solver {n:?} (available: {})", all.join(", "))
            })
        })
        .collect()
}

/// A progress bar on standard error (hidden when standard error is not a terminal).
fn progress_bar(total: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template("[{elapsed_precise}] [{bar:40}] {pos}/{len} ETA {eta} {wide_msg}") {
        bar.set_style(style.progress_chars("#>-"));
    }
    bar
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
