//! Integration tests of the `understudy` command line, in one crate: each
//! module drives the real binary (`CARGO_BIN_EXE_understudy`) against
//! fixtures from `understudy-testkit`.

mod crash;
mod export;
mod hub_team;
mod output_files;
mod read_only_store;
mod replay_stored;
mod review_cli;
mod rubric_batch;
mod rubric_judge_cli;
mod runaway_world;
mod serve_cli;
mod store_processes;
mod time_limits;
mod time_zones;
