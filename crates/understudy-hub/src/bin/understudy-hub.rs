//! `understudy-hub --database URL --listen ADDR`: the hub server alone, for
//! a team's server machine and for the fault tests (which kill it). The
//! same server as `understudy hub serve`.

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: understudy-hub --database postgres://user@host/db --listen 127.0.0.1:8600 [--max-body-bytes N] [--max-connections N] [--header-timeout SECS]");
    ExitCode::from(2)
}

/// A positive number given to `flag`.
fn number(flag: &str, value: Option<String>) -> Result<u64, ExitCode> {
    match value.as_deref().map(str::parse::<u64>) {
        Some(Ok(n)) if n > 0 => Ok(n),
        _ => {
            eprintln!(
                "error: {flag}: expected a whole number above 0, got {}",
                value.as_deref().unwrap_or("nothing")
            );
            Err(ExitCode::from(2))
        }
    }
}

fn main() -> ExitCode {
    let mut database = std::env::var("UNDERSTUDY_HUB_DATABASE").ok();
    let mut listen = None;
    let mut limits = understudy_hub::Limits::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let parsed = match a.as_str() {
            "--database" => {
                database = args.next();
                Ok(())
            }
            "--listen" => {
                listen = args.next();
                Ok(())
            }
            "--max-body-bytes" => number(&a, args.next()).map(|n| {
                limits.max_body_bytes = usize::try_from(n).unwrap_or(usize::MAX);
            }),
            "--max-connections" => number(&a, args.next()).map(|n| {
                limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
            }),
            "--header-timeout" => number(&a, args.next()).map(|n| {
                limits.header_read_timeout = std::time::Duration::from_secs(n);
            }),
            _ => return usage(),
        };
        if let Err(code) = parsed {
            return code;
        }
    }
    let (Some(database_url), Some(listen)) = (database, listen) else {
        return usage();
    };
    let listen = match listen.parse() {
        Ok(a) => a,
        Err(_) => {
            eprintln!("error: --listen: `{listen}` is not an address such as 127.0.0.1:8600");
            return ExitCode::from(2);
        }
    };
    let config = understudy_hub::HubConfig {
        database_url,
        listen,
        limits,
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(understudy_hub::serve(&config, async {
        let _ = tokio::signal::ctrl_c().await;
    })) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
