//! `understudy score` (being written).
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ScoreArgs {}

pub fn run(_args: ScoreArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("score is not available yet")
}
