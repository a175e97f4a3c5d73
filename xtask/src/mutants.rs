//! `cargo xtask mutants`: the kit's mutation analysis. Runs the spec against the reference
//! memory saver and every mutant of `conformance_selftest::MUTANTS`, and prints the
//! mutation table (mutant, what it breaks and covers, the cases that caught it), the spec
//! cases no mutant makes fail (with the reason each is there) and the kill rate.
//!
//! Exit codes: 0 when every mutant is caught, no never-failing case is unexplained and the
//! memory saver passes every case; 1 otherwise.

use std::process::ExitCode;

use conformance_selftest::{analyze, AnalysisOptions};

/// The options of `cargo xtask mutants`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run every capability against every mutant (slower; shows each bug's failures
    /// outside the capabilities it declares). Default: only the declared capabilities.
    #[arg(long)]
    all_capabilities: bool,

    /// Only the mutants whose name contains TEXT (the never-failing list is then omitted).
    #[arg(long, value_name = "TEXT")]
    only: Option<String>,

    /// Mutants run at once, 1 to 1024 (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,

    /// Instead of the spec, run the fuzzer alone against every mutant with its default
    /// budget (500 sequences or 30 s per mutant, seed 0) and print which it kills.
    #[arg(long)]
    fuzz: bool,

    /// Print the catalog (name, the capabilities it breaks, the bug in one line; those
    /// whose name contains `--only`) and run nothing: the names `--mutant NAME` takes.
    #[arg(long, conflicts_with_all = ["fuzz", "all_capabilities", "jobs"])]
    list: bool,
}

/// Runs the analysis and prints it.
pub fn run(args: Args) -> ExitCode {
    // The durability crash test re-executes this binary with the same arguments: in that
    // child, run its workload on the mutant's storage instead of the analysis.
    if let Some(code) = conformance_selftest::child_main_if_requested() {
        return code;
    }
    if let Some(only) = args.only.as_deref() {
        if !conformance_selftest::MUTANTS.iter().any(|m| m.name.contains(only)) {
            eprintln!("error: no mutant's name contains `{only}` (`cargo xtask mutants --list` prints the catalog)");
            return ExitCode::from(crate::USAGE);
        }
    }
    if args.list {
        for m in
            conformance_selftest::MUTANTS.iter().filter(|m| args.only.as_deref().is_none_or(|o| m.name.contains(o)))
        {
            let breaks: Vec<String> = m.breaks.iter().map(ToString::to_string).collect();
            println!("{:<45} {:<28} {}", m.name, breaks.join(","), m.description);
        }
        return ExitCode::SUCCESS;
    }
    // A signal removes the SQLite mutants' case directories before the process exits.
    checkpoint_conformance::interrupt::install();
    if args.fuzz {
        let code = crate::fuzz::mutants(args.only.as_deref());
        // The run's case directories are gone: its lock file goes too.
        conformance_core::leftovers::release();
        return code;
    }
    let mut options =
        AnalysisOptions { all_capabilities: args.all_capabilities, only: args.only, ..Default::default() };
    if let Some(jobs) = args.jobs {
        options.jobs = usize::from(jobs);
    }
    let analysis = analyze(&options);
    // The run's case directories are gone: its lock file goes too (the next run would name
    // this one as a run that did not finish).
    conformance_core::leftovers::release();
    print!("{}", analysis.render());
    if analysis.survivors().is_empty() && analysis.unexplained().is_empty() && analysis.baseline_failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
