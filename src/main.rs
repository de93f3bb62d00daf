//! `tessera`: the command-line placement oracle.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tessera::{check, generate, model, solvers, Instance, SolveConfig};

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
}

#[derive(Subcommand)]
enum Command {
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
        /// Solver to use (see --list-solvers).
        #[arg(long, default_value = "exact")]
        solver: String,
        /// List the solvers and exit.
        #[arg(long)]
        list_solvers: bool,
        /// Threads for parallel phases (the decision does not depend on it).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Validate a decision against an instance: hard rules and objective terms 1-3.
    Check { instance: PathBuf, decision: PathBuf },
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
    /// Write the cycle MILP of an instance in CPLEX LP format.
    ExportLp {
        instance: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Benchmark the exact solver on generated classes: against first-fit decreasing
    /// (`--suite flat`) or against Kubernetes-style workload preemption (`--suite preemption`).
    Bench {
        /// Which benchmark: flat (exact vs ffd) or preemption (exact vs k8s-preempt).
        #[arg(long, value_enum, default_value = "flat")]
        suite: Suite,
        /// Comma-separated classes (default: flat-64,flat-256,flat-1024 for flat;
        /// preempt-256,preempt-1024 for preemption).
        #[arg(long)]
        classes: Option<String>,
        /// Instances per class.
        #[arg(long, default_value_t = 5)]
        seeds: u64,
        /// Budget per solve.
        #[arg(long, default_value = "10s")]
        time_limit: String,
    },
}

fn read_instance(path: Option<&Path>) -> Result<Instance, String> {
    let text = read_text(path)?;
    Instance::from_text(&text).map_err(|e| e.to_string())
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
        Some(p) => {
            let tmp = p.with_extension(format!("tmp.{}", std::process::id()));
            std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, p).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("{}: {e}", p.display())
            })
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Solve { instance, output, out, time_limit, gap, solver, list_solvers, threads } => {
            if list_solvers {
                for s in solvers::all() {
                    println!("{:<10} {}", s.name(), s.describe());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let s = solvers::by_name(&solver).ok_or_else(|| {
                let names: Vec<&str> = solvers::all().iter().map(|s| s.name()).collect();
                format!("unknown solver {solver:?} (available: {})", names.join(", "))
            })?;
            let time_limit = match time_limit {
                Some(t) => Some(model::parse_duration(&t).map_err(|e| format!("--time-limit: {e}"))?),
                None => None,
            };
            if let Some(g) = gap {
                if !(0.0..=1.0).contains(&g) {
                    return Err(format!("--gap: must be between 0 and 1, got {g}"));
                }
            }
            let inst = read_instance(instance.as_deref())?;
            let cfg = SolveConfig { time_limit, relative_gap: gap, threads };
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build().map_err(|e| e.to_string())?;
            let d = pool.install(|| s.solve(&inst, &cfg));
            let text = match output {
                Format::Yaml => d.to_yaml(),
                Format::Json => d.to_json() + "\n",
            };
            write_out(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { instance, decision } => {
            let inst = read_instance(Some(&instance))?;
            let text = read_text(Some(&decision))?;
            let d: tessera::Decision = tessera::spec::from_text(&text).map_err(|e| format!("{}: {e}", decision.display()))?;
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
        Command::ExportLp { instance, out } => {
            let inst = read_instance(Some(&instance))?;
            write_out(out.as_deref(), &tessera::solve::export_lp(&inst))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench { suite, classes, seeds, time_limit } => {
            let limit = model::parse_duration(&time_limit).map_err(|e| format!("--time-limit: {e}"))?;
            let classes = classes.unwrap_or_else(|| {
                match suite {
                    Suite::Flat => "flat-64,flat-256,flat-1024",
                    Suite::Preemption => "preempt-256,preempt-1024",
                }
                .to_string()
            });
            let classes: Vec<String> = classes.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
            let report = match suite {
                Suite::Flat => tessera::bench::run(&classes, seeds, limit, &mut |line| eprintln!("{line}"))?,
                Suite::Preemption => tessera::bench::run_preemption(&classes, seeds, limit, &mut |line| eprintln!("{line}"))?,
            };
            print!("{report}");
            Ok(ExitCode::SUCCESS)
        }
    }
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
