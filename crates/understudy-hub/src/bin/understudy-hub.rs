//! `understudy-hub --database URL --listen ADDR`: the hub server alone, for
//! a team's server machine and for the fault tests (which kill it). The
//! same server as `understudy hub serve`.

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: understudy-hub --database postgres://user@host/db --listen 127.0.0.1:8600");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut database = std::env::var("UNDERSTUDY_HUB_DATABASE").ok();
    let mut listen = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--database" => database = args.next(),
            "--listen" => listen = args.next(),
            _ => return usage(),
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
        max_body_bytes: understudy_hub::DEFAULT_MAX_BODY_BYTES,
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
