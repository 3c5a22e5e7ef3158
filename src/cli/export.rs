//! `understudy export` / `understudy import` (being written).
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExportArgs {}

#[derive(clap::Args)]
pub struct ImportArgs {}

pub fn run(_args: ExportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("export is not available yet")
}

pub fn run_import(_args: ImportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("import is not available yet")
}
