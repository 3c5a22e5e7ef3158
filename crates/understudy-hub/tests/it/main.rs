//! The hub against a real PostgreSQL server (started by `scripts/hub.sh`,
//! which sets `UNDERSTUDY_HUB_TEST_DATABASE`). Each test gets a database of
//! its own. Without a server the tests fail under `CI=true` and are
//! skipped (with a note) elsewhere.

mod support;

mod export;
mod faults;
mod feeds;
mod graders;
mod grades;
mod limits;
mod outbox;
mod pulled;
mod refusals;
mod review;
mod roles;
mod screens;
mod tokens;
