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
    /// one is committed; the crash test kills it at random moments.
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
        /// Stop after this many steps.
        #[arg(long, default_value_t = 1_000_000)]
        max: u64,
    },
}

pub fn run(cmd: DebugCommand) -> anyhow::Result<ExitCode> {
    let DebugCommand::RecordLoop {
        store,
        world,
        task,
        resume,
        max,
    } = cmd;
    let store = Arc::new(Store::open(&store)?);
    let world = super::load_world(&world)?;
    let mut rec = match resume {
        Some(id) => Recorder::reopen(store.clone(), world.clone(), &id, false)?,
        None => Recorder::start(
            store.clone(),
            world.clone(),
            &task,
            Actor::Agent {
                model: "crash-test".into(),
            },
            0,
        )?,
    };
    let mut out = std::io::stdout().lock();
    for i in 0..max {
        if rec.is_done() {
            rec.submit(None)?;
            rec = Recorder::start(
                store.clone(),
                world.clone(),
                &task,
                Actor::Agent {
                    model: "crash-test".into(),
                },
                0,
            )?;
        }
        let action = if i % 2 == 0 {
            Action::message(format!("message {i}"))
        } else {
            Action::tool("get_account", serde_json::json!({"account_id": "A-1"}))
        };
        let step = rec.step(action, Some(format!("because {i}")))?;
        writeln!(out, "step {} {}", rec.record().id, step.record.idx)?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}
