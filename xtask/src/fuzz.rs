//! `cargo xtask fuzz` and `cargo xtask replay`: the model-based fuzzer
//! (`conformance_spec::fuzz`) against a reference backend or a mutant, and the replay of a
//! trace file (docs/trace-format.md).
//!
//! Exit codes: 0 no divergence / the saver gave what the trace says; 1 a divergence (the
//! repro is written) / the first differing call is named; 2 a usage error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use conformance_core::Strength;

use conformance_spec::fuzz::{fuzz, FuzzOptions};

use crate::USAGE;

/// The saver: a reference backend, a saver through the bridge (the flags of
/// `checkpoint-conformance replay`), or a mutant of the self-test's catalog.
#[derive(Debug, clap::Args)]
pub struct Target {
    #[command(flatten)]
    saver: checkpoint_conformance::SaverArgs,

    /// A mutant of the catalog (`cargo xtask mutants` lists them) instead of a backend.
    #[arg(long, value_name = "NAME")]
    mutant: Option<String>,
}

/// The options of `cargo xtask fuzz`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: Target,
    /// The seed (the same seed gives the same sequences).
    #[arg(long, default_value_t = 0, conflicts_with = "seeds")]
    seed: u64,
    /// A shard of a long campaign: the seeds `A..B` (A included, B excluded, A < B), each
    /// run for `--cases` sequences in turn, stopping at the first divergence. Shards of one
    /// campaign can run on separate machines (a CI matrix, docs/using-the-kit.md); the repro
    /// names its own seed, so it replays alone.
    #[arg(long, value_name = "A..B", value_parser = parse_seeds)]
    seeds: Option<std::ops::Range<u64>>,
    /// Sequences to run (at least 1).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    cases: u32,
    /// Stop after SECONDS (at least 1) even if fewer sequences ran; checked before each sequence.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Where to write the repro trace on a divergence.
    #[arg(long, value_name = "FILE", default_value = "fuzz-repro.json")]
    out: PathBuf,
}

/// `A..B` as a non-empty range of seeds (`A < B`), else one line saying why.
fn parse_seeds(s: &str) -> Result<std::ops::Range<u64>, String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("`{s}` is not a seed range A..B"))?;
    let num = |x: &str| x.trim().parse::<u64>().map_err(|e| format!("`{x}` in `{s}`: {e}"));
    let (a, b) = (num(a)?, num(b)?);
    if a >= b {
        return Err(format!("`{s}` is empty (A must be less than B)"));
    }
    Ok(a..b)
}

/// The options of `cargo xtask replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The trace file, or a directory: every `*.json` in it, each on a fresh saver.
    file: PathBuf,
    #[command(flatten)]
    target: Target,
}

/// The registration of the target, and what it keeps alive (checkpoint_conformance's one
/// target builder; a mutant's registration keeps nothing).
fn registration(target: &Target) -> Result<checkpoint_conformance::target::Target, ExitCode> {
    if let Some(name) = &target.mutant {
        let Some(m) = conformance_selftest::mutant(name) else {
            eprintln!("error: unknown mutant `{name}` (`cargo xtask mutants` lists the catalog)");
            return Err(ExitCode::from(USAGE));
        };
        return Ok(checkpoint_conformance::target::Target::bare(conformance_selftest::registration(m)));
    }
    let work_dir = crate::bridge_dir();
    checkpoint_conformance::target::build(target.saver.spec(&work_dir))
}

/// Runs the fuzzer. Once the run is over, on every path out of it, its lock file goes
/// (`conformance_core::leftovers`): writing the repro claims one too, after the fixtures
/// are gone, and a lock file left behind makes the next run name this one as killed.
pub fn run(args: Args) -> ExitCode {
    let code = fuzz_checked(args);
    conformance_core::leftovers::release();
    code
}

/// [`run`] without the release of the lock file.
fn fuzz_checked(args: Args) -> ExitCode {
    // Found before the run, so that a divergence found is never lost to an unwritable path.
    if let Err(e) = conformance_spec::outputs::check_writable(&args.out) {
        eprintln!("error: --out: {e}");
        return ExitCode::from(USAGE);
    }
    // SIGINT/SIGTERM/SIGHUP: what the run made is removed, exit 128 + the signal.
    checkpoint_conformance::interrupt::install();
    let kept = match registration(&args.target) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let reg = &kept.registration;
    let seeds = args.seeds.clone().unwrap_or(args.seed..args.seed + 1);
    let started = std::time::Instant::now();
    let budget = args.time.map(Duration::from_secs);
    let (mut total_sequences, mut total_ops) = (0u64, 0u64);
    let mut found = None;
    for seed in seeds.clone() {
        let time = match budget {
            Some(b) if started.elapsed() >= b => break,
            Some(b) => Some(b - started.elapsed()),
            None => None,
        };
        let options = FuzzOptions { seed, cases: args.cases, time, ..Default::default() };
        let outcome = match fuzz(reg, &options) {
            Ok(o) => o,
            Err(e) => {
                // A saver the bridge child cannot find is bad input (exit 2), with its reason.
                if let Some(reason) = kept.bad_saver() {
                    eprintln!("error: {reason}");
                    return ExitCode::from(checkpoint_conformance::USAGE);
                }
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let secs = outcome.elapsed.as_secs_f64();
        println!(
            "fuzz {}: seed {}, {} sequences, {} ops ({} concurrent batches, {} reopens or instance switches) in {:.1} s ({:.0} ops/s)",
            reg.name(),
            outcome.seed,
            outcome.sequences,
            outcome.ops,
            outcome.batches,
            outcome.reopens,
            secs,
            outcome.ops as f64 / secs.max(1e-9)
        );
        total_sequences += outcome.sequences;
        total_ops += outcome.ops;
        if outcome.divergence.is_some() {
            found = Some(outcome);
            break;
        }
    }
    if args.seeds.is_some() {
        println!(
            "shard {}..{}: {total_sequences} sequences, {total_ops} ops in {:.1} s",
            seeds.start,
            seeds.end,
            started.elapsed().as_secs_f64()
        );
    }
    let Some((seed, mut d)) = found.and_then(|o| Some((o.seed, o.divergence?))) else {
        println!("no divergence from the model");
        return ExitCode::SUCCESS;
    };
    if let Some(name) = &args.target.mutant {
        // The run to repeat is against the mutant, which is not a backend.
        d.trace.source = format!("cargo xtask fuzz --mutant {name} --seed {seed}");
    }
    println!("DIVERGENCE (shrunk to {} steps):\n{}", d.trace.steps.len(), d.trace.readable());
    println!("the last call differs from the model:\n  {}", d.message.replace('\n', "\n  "));
    if let Err(e) = conformance_core::output_file::write_replacing(&args.out, d.trace.to_json().as_bytes()) {
        eprintln!("error: cannot write {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    println!(
        "\nrepro written to {} (replay: cargo xtask replay {} --backend X)",
        args.out.display(),
        args.out.display()
    );
    println!("\nas a regression case:\n{}", d.trace.rust_snippet(&format!("fuzz_seed_{seed}")));
    ExitCode::FAILURE
}

/// Replays a trace file, or every trace of a directory (each on a fresh saver), on the
/// target: the installed binary's `replay` ([`checkpoint_conformance::replay`]), which
/// also takes a mutant here.
pub fn run_replay(args: ReplayArgs) -> ExitCode {
    checkpoint_conformance::interrupt::install();
    let traces = match checkpoint_conformance::replay::read_traces(&args.file) {
        Ok(t) => t,
        Err(code) => return code,
    };
    match registration(&args.target) {
        Ok(target) => checkpoint_conformance::replay::replay_traces(target, &traces),
        Err(code) => code,
    }
}

/// The default budget of `cargo xtask mutants --fuzz` per mutant.
pub const MUTANT_BUDGET: (u32, Duration) = (5000, Duration::from_secs(30));

/// `cargo xtask mutants --fuzz`: the fuzzer alone against every mutant of the catalog
/// (those whose name contains `only`), with [`MUTANT_BUDGET`]; prints each verdict and the
/// kill rate. Exit 0 always when the run completed (the rate is the result).
pub fn mutants(only: Option<&str>) -> ExitCode {
    let (cases, time) = MUTANT_BUDGET;
    let options = FuzzOptions { seed: 0, cases, time: Some(time), ..Default::default() };
    let mut killed = 0;
    let mut total = 0;
    let mut survivors = Vec::new();
    println!(
        "fuzzer alone vs the mutant catalog (budget per mutant: {cases} sequences or {} s, seed 0)",
        time.as_secs()
    );
    for m in conformance_selftest::MUTANTS.iter().filter(|m| only.is_none_or(|o| m.name.contains(o))) {
        total += 1;
        let reg = conformance_selftest::registration(m);
        match fuzz(&reg, &options) {
            // A MUST mutant is killed by a MUST divergence only, as by a failed case.
            Ok(o) => {
                match o.divergence.as_ref().filter(|d| d.strength == Strength::Must || m.strength == Strength::Should) {
                    Some(d) => {
                        killed += 1;
                        let first = d.message.lines().next().unwrap_or("");
                        let first: String = first.chars().take(110).collect();
                        println!(
                            "  KILLED   {:<45} {:<6} after {:>4} sequences, {:>2} steps: {first}",
                            m.name,
                            format!("{:?}", d.strength).to_uppercase(),
                            o.sequences,
                            d.trace.steps.len()
                        );
                    }
                    None => {
                        survivors.push(m.name);
                        let should = if o.divergence.is_some() { " (a SHOULD divergence only)" } else { "" };
                        println!(
                            "  survived {:<45} {} sequences in {:.1} s{should}",
                            m.name,
                            o.sequences,
                            o.elapsed.as_secs_f64()
                        );
                    }
                }
            }
            Err(e) => {
                survivors.push(m.name);
                println!("  error    {:<45} {e}", m.name);
            }
        }
    }
    let rate = if total == 0 { 0.0 } else { 100.0 * f64::from(killed) / f64::from(total) };
    println!("fuzzer kill rate: {killed}/{total} ({rate:.1}%)");
    if !survivors.is_empty() {
        println!("survivors: {}", survivors.join(", "));
    }
    ExitCode::SUCCESS
}
