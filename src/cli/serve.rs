//! `understudy serve` (being written).
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ServeArgs {}

pub fn run(_args: ServeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("serve is not available yet")
}
