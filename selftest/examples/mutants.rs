//! Prints the mutation table, the spec cases no mutant makes fail, and the kill rate.
//!
//! `cargo run -p conformance-selftest --example mutants [--all-capabilities] [NAME-FILTER]`

fn main() {
    let mut options = conformance_selftest::AnalysisOptions::default();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--all-capabilities" => options.all_capabilities = true,
            other => options.only = Some(other.to_owned()),
        }
    }
    let analysis = conformance_selftest::analyze(&options);
    print!("{}", analysis.render());
    let ok =
        analysis.survivors().is_empty() && analysis.unexplained().is_empty() && analysis.baseline_failures.is_empty();
    std::process::exit(if ok { 0 } else { 1 });
}
