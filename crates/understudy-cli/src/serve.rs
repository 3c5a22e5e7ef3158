//! `understudy serve`: serve worlds to agents over JSON lines on stdio,
//! HTTP on loopback, or MCP on stdio. The protocol is in `docs/agent-api.md`; this file only
//! turns flags into a [`Server`] and runs a transport on one tokio runtime.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use understudy::store::{Durability, Store};
use understudy_serve::http::HttpOptions;
use understudy_serve::{CommandSimulator, ServeConfig, Server, UserSimulator};

/// The store's file name inside the data folder; the desktop app uses the
/// same file, so agent episodes show up there for review.
const STORE_FILE: &str = "understudy.sqlite";
/// The desktop app's identifier, which names its data folder.
const APP_ID: &str = "dev.understudy.app";

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Serve JSON lines on standard input and output (one request per line).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve MCP (the Model Context Protocol) on standard input and output:
    /// one session, one recorded episode of the task --task (or --seed)
    /// chooses. Over HTTP, MCP is served on `/mcp` of --http.
    #[arg(long, conflicts_with_all = ["stdio", "http"])]
    mcp: bool,
    /// --mcp: the task the session runs [default: the one --seed picks].
    #[arg(long, value_name = "TASK_ID", requires = "mcp")]
    task: Option<String>,
    /// --mcp: the world of --task (needed only when two served worlds have
    /// that task), or without --task the world whose tasks --seed picks from.
    #[arg(long, value_name = "WORLD_ID", requires = "mcp")]
    world_id: Option<String>,
    /// --mcp: the episode's seed; without --task it also picks the task (the
    /// served tasks in `tasks` order, index seed modulo their number).
    #[arg(long, value_name = "N", requires = "mcp")]
    seed: Option<u64>,
    /// --mcp: the agent's model, recorded as the episode's actor [default:
    /// the MCP client's name and version].
    #[arg(long, value_name = "NAME", requires = "mcp")]
    model: Option<String>,
    /// Serve HTTP on ADDR, e.g. 127.0.0.1:8000 (port 0 picks a free port; the
    /// address is printed as `listening on http://...`).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Allow --http on a non-loopback address (give it a --token too).
    #[arg(long)]
    allow_remote: bool,
    /// HTTP: every request must carry `Authorization: Bearer TOKEN`. Prefer
    /// the environment variable: command lines are visible to other users.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "UNDERSTUDY_TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// HTTP: also accept requests whose `Host` is NAME (a DNS name this
    /// server is reached by); repeat for several. Other names are refused.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Seconds a shutdown (SIGINT/SIGTERM, or end of stdio input) may take:
    /// requests in flight get until then to finish, then open episodes are
    /// closed; a step still running then is abandoned.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = super::seconds::parse)]
    shutdown_grace: Duration,
    /// A world folder to serve; repeat for several.
    #[arg(long = "world", value_name = "DIR")]
    worlds: Vec<PathBuf>,
    /// Serve every world folder inside DIR. Without --world or --worlds-dir:
    /// $UNDERSTUDY_WORLDS_DIR, else ./fixtures/worlds.
    #[arg(long, value_name = "DIR")]
    worlds_dir: Option<PathBuf>,
    /// The trajectory store [default: understudy.sqlite in the user data
    /// folder, as the desktop app uses; $UNDERSTUDY_DATA_DIR overrides the folder].
    #[arg(long, value_name = "FILE", env = "UNDERSTUDY_STORE")]
    store: Option<PathBuf>,
    /// full: every step is fsynced (survives power loss). fast: durable
    /// against a process crash, not power loss (SQLite synchronous=NORMAL).
    #[arg(long, value_enum, default_value = "full")]
    durability: DurabilityArg,
    /// Hard cap on open episodes; resets over it get `too_many_episodes` (429).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_concurrent: u32,
    /// Seconds without a request after which an episode is closed (recorded
    /// as abandoned if it was still running).
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = super::seconds::parse)]
    idle_timeout: Duration,
    /// A command that plays the customer once a task's scripted replies run
    /// out: gets {world, task, instruction, facts, conversation, message} as
    /// JSON on stdin, prints {"reply": "..."}.
    #[arg(long, value_name = "CMD ARGS")]
    user_sim: Option<String>,
    /// Seconds the user simulator may take per reply.
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = super::seconds::parse)]
    user_sim_timeout: Duration,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DurabilityArg {
    Full,
    Fast,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    if !args.stdio && !args.mcp && args.http.is_none() {
        bail!("choose a transport: --stdio, --mcp, or --http 127.0.0.1:PORT");
    }
    if let Some(addr) = args.http {
        if !addr.ip().is_loopback() && !args.allow_remote {
            bail!("--http {addr} is not a loopback address. Use 127.0.0.1, or add --allow-remote (with --token, so that only your clients can drive episodes)");
        }
    }
    let idle = args.idle_timeout;
    let sim_timeout = args.user_sim_timeout;
    let worlds = load_worlds(&args)?;
    let store_path = match &args.store {
        Some(p) => p.clone(),
        None => default_store()?,
    };
    let durability = match args.durability {
        DurabilityArg::Full => Durability::Full,
        DurabilityArg::Fast => Durability::Fast,
    };
    let store = Arc::new(Store::open_with(&store_path, durability)?);
    let user_sim: Option<Box<dyn UserSimulator>> = match &args.user_sim {
        Some(cmd) => Some(Box::new(
            CommandSimulator::new(cmd, sim_timeout)
                .map_err(|e| anyhow::anyhow!("--user-sim: {e}"))?,
        )),
        None => None,
    };
    let config = ServeConfig {
        max_concurrent: args.max_concurrent as usize,
        idle_timeout: idle,
        durability,
    };
    let server = Arc::new(Server::new(worlds, store, config)?.with_user_simulator(user_sim));
    tracing::info!(store = %store_path.display(), worlds = server.worlds().count(), "serving");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    if let Some(addr) = args.http {
        if args.token.is_none() && !addr.ip().is_loopback() {
            tracing::warn!(
                "serving {addr} without --token: anyone who can reach it can drive episodes"
            );
        }
        let options = HttpOptions {
            token: args.token.clone(),
            allowed_hosts: args.allow_hosts.clone(),
            shutdown_grace: args.shutdown_grace,
            ..HttpOptions::default()
        };
        runtime.block_on(run_http(addr, server, options))?;
    } else if args.mcp {
        let defaults = mcp_defaults(&args);
        understudy_serve::mcp::check_defaults(&server, &defaults)
            .map_err(|e| anyhow::anyhow!("--mcp: {}", e.message))?;
        runtime.block_on(run_mcp(server, defaults, args.shutdown_grace))?;
    } else {
        runtime.block_on(run_stdio(server, args.shutdown_grace))?;
    }
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(ExitCode::SUCCESS)
}

async fn run_http(
    addr: SocketAddr,
    server: Arc<Server>,
    options: HttpOptions,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    // The first line on stdout, so scripts and tests can find a port 0 bind.
    let mut out = std::io::stdout();
    writeln!(out, "listening on http://{local}")?;
    out.flush()?;
    let reaper = understudy_serve::spawn_reaper(Arc::clone(&server));
    understudy_serve::http::serve_with(listener, server, options, shutdown_signal()).await?;
    reaper.abort();
    Ok(())
}

/// The `reset` fields of the MCP session, from the --mcp flags.
fn mcp_defaults(args: &ServeArgs) -> serde_json::Map<String, serde_json::Value> {
    let mut fields = serde_json::Map::new();
    let text = |v: &Option<String>| v.clone().map(serde_json::Value::String);
    for (name, value) in [
        ("task_id", text(&args.task)),
        ("world_id", text(&args.world_id)),
        ("seed", args.seed.map(serde_json::Value::from)),
        ("model", text(&args.model)),
    ] {
        if let Some(v) = value {
            fields.insert(name.to_string(), v);
        }
    }
    fields
}

/// One MCP session on standard input and output. Like JSON lines, the end
/// of input or a signal closes the server's episodes (abandoned if still
/// running).
async fn run_mcp(
    server: Arc<Server>,
    defaults: serde_json::Map<String, serde_json::Value>,
    grace: Duration,
) -> anyhow::Result<()> {
    let reaper = understudy_serve::spawn_reaper(Arc::clone(&server));
    let session = understudy_serve::mcp::serve_stdio(
        Arc::clone(&server),
        defaults,
        tokio::io::stdin(),
        tokio::io::stdout(),
    );
    let result = tokio::select! {
        r = session => r,
        _ = shutdown_signal() => Ok(()),
    };
    finish_stdio(server, reaper, grace, result).await
}

/// The end of a session on standard input and output: the reaper stops and
/// the server's episodes close within `grace` (a step that never ends is
/// left to end with the process; what was closed and left is logged).
async fn finish_stdio(
    server: Arc<Server>,
    reaper: tokio::task::JoinHandle<()>,
    grace: Duration,
    result: std::io::Result<()>,
) -> anyhow::Result<()> {
    reaper.abort();
    let _ = tokio::task::spawn_blocking(move || server.close_all_within(grace)).await;
    // A closed stdout (the client went away) is a normal end, not an error.
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// The stdio loop runs on its own thread: it blocks on standard input and
/// on the engine, and must not hold an async worker. The runtime keeps the
/// idle reaper and the signal handler.
async fn run_stdio(server: Arc<Server>, grace: Duration) -> anyhow::Result<()> {
    let reaper = understudy_serve::spawn_reaper(Arc::clone(&server));
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let s = Arc::clone(&server);
    std::thread::Builder::new()
        .name("stdio".into())
        .spawn(move || {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            let result = understudy_serve::stdio::serve_lines(&s, stdin, stdout);
            let _ = done_tx.send(result);
        })
        .context("starting the stdio thread")?;
    let result = tokio::select! {
        r = done_rx => r.unwrap_or(Ok(())),
        _ = shutdown_signal() => Ok(()),
    };
    // On a signal the stdio thread may be inside a step that never ends:
    // it is waited for only so long (the thread ends with the process).
    finish_stdio(server, reaper, grace, result).await
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn load_worlds(args: &ServeArgs) -> anyhow::Result<Vec<Arc<understudy::World>>> {
    let mut dirs: Vec<PathBuf> = args.worlds.clone();
    let mut folder = args.worlds_dir.clone();
    if dirs.is_empty() && folder.is_none() {
        folder = std::env::var_os("UNDERSTUDY_WORLDS_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| Some(PathBuf::from("fixtures/worlds")).filter(|p| p.is_dir()));
    }
    if let Some(folder) = &folder {
        dirs.extend(world_dirs(folder)?);
    }
    if dirs.is_empty() {
        bail!("no worlds to serve: give --world DIR (repeatable) or --worlds-dir DIR");
    }
    dirs.iter().map(|d| super::load_world(d)).collect()
}

fn world_dirs(folder: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(folder)
        .with_context(|| format!("cannot read the worlds folder {}", folder.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("world.toml").is_file())
        .collect();
    out.sort();
    if out.is_empty() {
        bail!(
            "{} has no world folders (folders with a world.toml)",
            folder.display()
        );
    }
    Ok(out)
}

/// `understudy.sqlite` in the desktop app's data folder: $UNDERSTUDY_DATA_DIR,
/// else the platform's user data folder.
fn default_store() -> anyhow::Result<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("UNDERSTUDY_DATA_DIR") {
        return Ok(dir.join(STORE_FILE));
    }
    let base = if cfg!(target_os = "macos") {
        var("HOME").map(|h| h.join("Library/Application Support"))
    } else if cfg!(windows) {
        var("APPDATA")
    } else {
        var("XDG_DATA_HOME").or_else(|| var("HOME").map(|h| h.join(".local/share")))
    };
    let base = base.context("cannot find the user data folder (no HOME); give --store FILE")?;
    Ok(base.join(APP_ID).join(STORE_FILE))
}
