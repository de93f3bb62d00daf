//! Tessera as a library dependency: the crate in tests/embed/ depends on it with
//! `default-features = false`, decides a bundled instance and checks the decision. Its
//! dependency tree must hold none of the CLI's crates.

use std::path::{Path, PathBuf};
use std::process::Command;

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/embed"));
    c
}

/// The parent's target directory, so that its HiGHS build is reused.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

#[test]
fn embedding_crate_has_no_cli_dependencies() {
    let out = cargo().args(["tree", "--locked", "--offline", "-e", "normal", "--prefix", "none"]).output().expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(tree.lines().any(|l| l.starts_with("tessera v")), "tessera is not in the tree:\n{tree}");
    for heavy in ["clap", "indicatif", "plotters", "axum", "tokio", "hyper"] {
        assert!(!tree.lines().any(|l| l.starts_with(&format!("{heavy} v"))), "{heavy} is in the embedding crate's tree:\n{tree}");
    }
}

#[test]
fn embedding_crate_solves_and_checks() {
    let target = target_dir();
    let out =
        cargo().args(["build", "--release", "--locked", "--offline"]).env("CARGO_TARGET_DIR", &target).output().expect("cargo build runs");
    assert!(out.status.success(), "cargo build failed: {}", String::from_utf8_lossy(&out.stderr));
    let instance = Path::new(env!("CARGO_MANIFEST_DIR")).join("instances/quickstart.yaml");
    let run = Command::new(target.join("release/tessera-embed")).arg(&instance).output().expect("the program runs");
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success() && said.contains("valid: true"), "{said}{}", String::from_utf8_lossy(&run.stderr));
}
