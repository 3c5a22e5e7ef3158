//! `scale-world FACTOR DEST`: writes tau-retail with its users and orders
//! repeated FACTOR times into DEST (see `understudy_testkit::scale`), for
//! `scripts/bench`'s world-size rows. The output is for benchmarks only.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [factor, dest] = args.as_slice() else {
        eprintln!("usage: scale-world FACTOR DEST (FACTOR a whole number ≥ 1, DEST a new folder)");
        return ExitCode::from(2);
    };
    let Ok(factor) = factor.parse::<usize>() else {
        eprintln!("scale-world: FACTOR `{factor}` is not a whole number");
        return ExitCode::from(2);
    };
    match understudy_testkit::scale::write_scaled_tau_retail(factor, std::path::Path::new(dest)) {
        Ok(users) => {
            eprintln!("scale-world: {users} users written to {dest}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scale-world: {e}");
            ExitCode::FAILURE
        }
    }
}
