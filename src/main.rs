//! The `understudy` command line: a thin front end over the engine.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
