//! The `understudy` command line: a thin front end over the engine and the
//! agent server. Each subcommand lives in its own file; errors are reported
//! once, here, as `error: ...` with a non-zero exit.

mod debug;
mod export;
mod hub;
mod record;
mod replay;
mod review;
mod rubric;
mod run;
mod score;
mod seconds;
mod serve;
mod world;

use std::process::ExitCode;

/// Episodes allocate many small, short-lived values (JSON trees, script
/// maps, rows); mimalloc serves them markedly faster than the system
/// allocator (issue 13's profile: a quarter of replay was malloc and free).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "understudy",
    version,
    about = "Record expert trajectories in simulated jobs, serve them to agents, score and export them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check and describe world folders.
    #[command(subcommand)]
    World(world::WorldCommand),
    /// Run a list of actions against a task; print observations and the state diff as JSON.
    /// With --store, record it as an expert's episode and submit it for review.
    Run(run::RunArgs),
    /// Replay JSONL action lists on fresh episodes (in parallel); write observations and state diffs.
    Replay(replay::ReplayArgs),
    /// Export episodes as datasets (native JSONL, Hugging Face/TRL, OpenAI, dataset folder).
    Export(export::ExportArgs),
    /// Import episodes JSONL into the store (validated; all or nothing).
    Import(export::ImportArgs),
    /// Rubric tools: lint (gold, do-nothing and mutation checks).
    #[command(subcommand)]
    Rubric(rubric::RubricCommand),
    /// The review queue: list submitted episodes, approve them as gold or reject them.
    #[command(subcommand)]
    Review(review::ReviewCommand),
    /// Score trajectories against their tasks' rubrics.
    Score(score::ScoreArgs),
    /// Serve worlds to agents: JSON lines on stdio, or HTTP on loopback.
    Serve(serve::ServeArgs),
    /// A team hub on PostgreSQL: serve it, add people, push a store, pull assignments and reviews.
    #[command(subcommand)]
    Hub(hub::HubCommand),
    /// Commands for the test suite.
    #[command(subcommand, hide = true)]
    Debug(debug::DebugCommand),
}

fn main() -> ExitCode {
    // `understudy ... | head` closes the pipe early; exit quietly as other
    // Unix tools do instead of reporting a panic.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info);
    }));
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("UNDERSTUDY_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::World(cmd) => world::run(cmd),
        Command::Run(args) => run::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Debug(cmd) => debug::run(cmd),
        Command::Export(args) => export::run(args),
        Command::Import(args) => export::run_import(args),
        Command::Rubric(cmd) => rubric::run(cmd),
        Command::Review(cmd) => review::run(cmd),
        Command::Score(args) => score::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Hub(cmd) => hub::run(cmd),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Loads a world, turning load problems into a readable error. Its seeded
/// database is kept as an image under the cache folder
/// (`UNDERSTUDY_CACHE_DIR`, else the user's cache directory), so the next
/// command on the same world skips seeding.
pub(crate) fn load_world(
    dir: &std::path::Path,
) -> anyhow::Result<std::sync::Arc<understudy::World>> {
    let cache = understudy::world::default_cache_dir();
    Ok(std::sync::Arc::new(understudy::World::load_cached(
        dir,
        cache.as_deref(),
    )?))
}
