//! Reads an instance, decides it with the exact engine, checks the decision.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: tessera-embed INSTANCE")?;
    let inst = tessera::Instance::from_reader(std::fs::File::open(path)?)?;
    let decision = tessera::solve(&inst, &tessera::Options::default());
    let report = tessera::check(&inst, &decision);
    println!("{:?}: {} groups placed, valid: {}", decision.status, decision.placements.len(), report.is_valid());
    if !report.is_valid() {
        std::process::exit(1);
    }
    Ok(())
}
