//! `understudy replay`: batch replay of JSONL action lists.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use understudy::replay;

#[derive(Args)]
pub struct ReplayArgs {
    /// The world folder.
    #[arg(long)]
    world: PathBuf,
    /// JSONL input: one `{"actions": [...]}` per line (engine or τ-bench action shapes).
    #[arg(long)]
    input: PathBuf,
    /// JSONL output, one line per input line, in input order (`-` for standard output).
    #[arg(long, default_value = "-")]
    output: PathBuf,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let world = super::load_world(&args.world)?;
    let text = std::fs::read_to_string(&args.input)
        .with_context(|| format!("reading {}", args.input.display()))?;
    let inputs = replay::parse_input(&text, &args.input.display().to_string())?;
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(inputs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} replaying [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let outputs = replay::replay_all(&world, &inputs, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let mut buf = Vec::with_capacity(outputs.len() * 512);
    for out in &outputs {
        serde_json::to_writer(&mut buf, out)?;
        buf.push(b'\n');
    }
    if args.output.as_os_str() == "-" {
        std::io::stdout().write_all(&buf)?;
    } else {
        // Write to a temporary file and rename, so a failure never leaves a
        // half-written output behind.
        let tmp = args.output.with_extension("jsonl.partial");
        std::fs::write(&tmp, &buf).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &args.output)
            .with_context(|| format!("writing {}", args.output.display()))?;
    }
    eprintln!(
        "replayed {} action lists in world {}",
        outputs.len(),
        world.meta.id
    );
    Ok(ExitCode::SUCCESS)
}
