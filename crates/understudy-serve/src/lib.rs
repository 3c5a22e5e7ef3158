//! The agent API: worlds served to agents Gym-style, over JSON lines on
//! stdio or HTTP on loopback. See `docs/agent-api.md`.
//!
//! **Key decision: one engine, thin transports.** [`Server`] does all the
//! work as blocking calls (parse fields, run the episode, commit the step,
//! score the end); [`stdio`] and [`http`] only frame requests, so both
//! transports answer the same request with the same bytes.
//!
//! **Every agent episode is a trajectory.** Episodes run through
//! [`understudy::recorder::Recorder`], exactly like an expert's in the app: each
//! step is committed before its result is returned, an episode that ends is
//! submitted, and one whose client goes away (stdio end of input, HTTP idle
//! timeout, server shutdown) is recorded as abandoned with every step kept.
//!
//! **A hard cap.** `max_concurrent` bounds open episodes; a reset over it
//! fails at once with `too_many_episodes` (HTTP 429). Nothing queues.
//!
//! Module map: [`protocol`] (wire types, errors, schemas), [`sessions`]
//! (the registry), [`service`] (the operations), [`reward`] (where rewards
//! come from), [`user_sim`] (the customer beyond the scripted replies),
//! [`stdio`], [`http`], and [`mcp`] (the Model Context Protocol, over
//! stdio and on the HTTP server's `/mcp`).

pub mod http;
pub mod mcp;
pub mod protocol;
pub mod reward;
pub mod service;
pub mod sessions;
pub mod stdio;
pub mod user_sim;

use std::sync::Arc;
use std::time::Duration;

pub use protocol::{ApiError, Fields, Op, StepResponse};
pub use reward::{FinalReward, NoRubric, RewardSource, RubricReward};
pub use service::{Reply, ServeConfig, Server};
pub use user_sim::{CommandSimulator, UserSimRequest, UserSimulator};

/// Runs one operation on tokio's blocking pool, for the async transports
/// (`/ws`, MCP): a step waits on the engine and an fsync, and the async
/// workers must keep serving meanwhile.
pub async fn run_blocking(server: &Arc<Server>, op: Op, fields: Fields) -> Result<Reply, ApiError> {
    let server = Arc::clone(server);
    tokio::task::spawn_blocking(move || server.handle(op, fields))
        .await
        .unwrap_or_else(|e| {
            Err(ApiError::new(
                500,
                protocol::codes::INTERNAL,
                format!("the request failed inside the server: {e}"),
            ))
        })
}

/// Closes idle sessions in the background, for as long as the runtime
/// runs. Checks a few times per timeout so a session outlives it by at
/// most about a quarter of it.
pub fn spawn_reaper(server: Arc<Server>) -> tokio::task::JoinHandle<()> {
    let timeout = server.config().idle_timeout;
    let every = (timeout / 4).clamp(Duration::from_millis(20), Duration::from_secs(5));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let s = Arc::clone(&server);
            let _ = tokio::task::spawn_blocking(move || s.reap_idle()).await;
        }
    })
}
