//! `understudy debug ...`: hidden commands used by the test suite.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Subcommand;
use understudy::recorder::Recorder;
use understudy::store::{Actor, Store};
use understudy::Action;

#[derive(Subcommand)]
pub enum DebugCommand {
    /// Records steps in a loop, printing `step <episode> <idx>` after each
    /// one is committed; the crash test kills it at random moments. With
    /// `--sessions N`, N sessions record at once over the one store (their
    /// steps are group-committed), each printing its own lines.
    RecordLoop {
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        world: PathBuf,
        #[arg(long)]
        task: String,
        /// Resume this episode first.
        #[arg(long)]
        resume: Option<String>,
        /// Stop after this many steps (per session).
        #[arg(long, default_value_t = 1_000_000)]
        max: u64,
        /// Sessions recording at once, each in its own episodes.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
        sessions: u64,
    },
}

pub fn run(cmd: DebugCommand) -> anyhow::Result<ExitCode> {
    let DebugCommand::RecordLoop {
        store,
        world,
        task,
        resume,
        max,
        sessions,
    } = cmd;
    if sessions > 1 && resume.is_some() {
        anyhow::bail!("--resume continues one episode; it cannot be combined with --sessions");
    }
    let store = Arc::new(Store::open(&store)?);
    let world = super::load_world(&world)?;
    let first = match resume {
        Some(id) => Some(Recorder::reopen(store.clone(), world.clone(), &id, false)?),
        None => None,
    };
    if sessions == 1 {
        return record_loop(&store, &world, &task, first, max).map(|()| ExitCode::SUCCESS);
    }
    let threads: Vec<_> = (0..sessions)
        .map(|_| {
            let (store, world, task) = (store.clone(), world.clone(), task.clone());
            std::thread::spawn(move || record_loop(&store, &world, &task, None, max))
        })
        .collect();
    for t in threads {
        t.join()
            .map_err(|_| anyhow::anyhow!("a recording session panicked"))??;
    }
    Ok(ExitCode::SUCCESS)
}

/// One session's loop: `first` (a resumed episode) or a new one, then a
/// new episode whenever one ends.
fn record_loop(
    store: &Arc<Store>,
    world: &Arc<understudy::World>,
    task: &str,
    first: Option<Recorder>,
    max: u64,
) -> anyhow::Result<()> {
    let start = || {
        Recorder::start(
            store.clone(),
            world.clone(),
            task,
            Actor::Agent {
                model: "crash-test".into(),
            },
            0,
        )
    };
    let mut rec = match first {
        Some(rec) => rec,
        None => start()?,
    };
    for i in 0..max {
        if rec.is_done() {
            rec.submit(None)?;
            rec = start()?;
        }
        let action = if i % 2 == 0 {
            Action::message(format!("message {i}"))
        } else {
            Action::tool("get_account", serde_json::json!({"account_id": "A-1"}))
        };
        let step = rec.step(action, Some(format!("because {i}")))?;
        // One line per write, under stdout's lock: sessions never interleave.
        let mut out = std::io::stdout().lock();
        writeln!(out, "step {} {}", rec.record().id, step.record.idx)?;
        out.flush()?;
    }
    Ok(())
}
