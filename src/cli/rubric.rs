//! `understudy rubric ...` (being written).
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum RubricCommand {
    /// Lint rubrics (not available yet).
    Lint {},
}

pub fn run(_cmd: RubricCommand) -> anyhow::Result<ExitCode> {
    anyhow::bail!("rubric lint is not available yet")
}
