//! Episodes: one run of one task in a world, Gymnasium-style.
//!
//! An [`Episode`] owns an in-memory SQLite database over the world's seed
//! image: it reads the seed's pages from the one shared image and keeps only
//! the pages it writes (copy-on-write, `understudy-cowvfs`). `reset` drops
//! those pages (no re-seeding, no copy), and `step` applies one action. Everything a step can observe is a function of the
//! world, the task, the seed and the actions so far: the clock and ids are
//! simulated, and SQLite's time and random functions are replaced.

mod argument_problems;
mod changes;
pub mod customer;
mod json_columns;
mod restore;
mod tool_call;
mod unknown_tool;
mod view_call;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use changes::{Changes, TableChanges};

use crate::action::Action;
use crate::error::{Error, Result};
use crate::observation::{Observation, ObservationErrorCode};
use crate::sql::functions::{Call, SharedState, SimState};
use crate::sql::sandbox::{Sandbox, SandboxMode};
use crate::sql::sql_message;
use crate::sql::values::{bind_named, collect_rows, from_json};
use crate::sql::OperationBudget;
use crate::world::{Audience, Task, World, VIEW_TOOL_PREFIX};

/// Prepared statements kept per episode connection.
const STATEMENT_CACHE: usize = 256;

/// The result of `reset`: the first observation and episode info.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResetOutcome {
    /// What the performer sees first: the task's opening message.
    pub observation: Observation,
    /// Where the episode stands: ids, step count, the simulated clock.
    pub info: StepInfo,
}

/// The result of `step`, in Gymnasium's five-tuple sense.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// What the step returned to the performer.
    pub observation: Observation,
    /// Always 0 here; rubric scoring assigns the episode's reward at the end.
    pub reward: f64,
    /// The task reached an end (a tool that ends the episode succeeded).
    pub terminated: bool,
    /// The step limit was hit.
    pub truncated: bool,
    /// Where the episode stands after the step.
    pub info: StepInfo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
/// Where an episode stands, returned with every reset and step.
pub struct StepInfo {
    /// The world's id.
    pub world_id: String,
    /// The task being performed.
    pub task_id: String,
    /// Steps taken so far, including this one.
    pub steps: u32,
    /// The task's step limit; the step that reaches it is truncated.
    pub max_steps: u32,
    /// The simulated clock after this step.
    pub clock: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    Terminated,
    Truncated,
}

/// Rows touched since reset, as (table, rowid); filled by SQLite's update hook.
type Touched = Arc<Mutex<BTreeSet<(String, i64)>>>;

/// One episode of one task. Reusable: `reset` starts it over.
pub struct Episode {
    world: Arc<World>,
    /// Always `Some` except while lent to a script for one call.
    conn: Option<Connection>,
    /// The pages this episode wrote over the world's shared seed image;
    /// reset drops them.
    overlay: understudy_cowvfs::Overlay,
    /// The seeded database, read-only, to diff against and restore from;
    /// one per world, shared by its episodes.
    base: Arc<Mutex<Connection>>,
    sandbox: Sandbox,
    state: SharedState,
    touched: Touched,
    /// One operation budget per call and per query.
    budget: OperationBudget,
    task_id: String,
    seed: u64,
    steps: u32,
    replies_used: usize,
    /// The reply to the next message once the scripted replies have run out
    /// (from a user simulator); used once.
    next_reply: Option<String>,
    status: Status,
    /// When false, step limits and terminating tools do not end the episode
    /// (batch replay of recorded action lists).
    enforce_limits: bool,
    /// A person recording in the app is performing, so the views shown to
    /// the expert only may be read; an agent gets them as unknown tools.
    expert: bool,
}

impl Episode {
    /// Opens an episode's databases. Call `reset` before stepping.
    pub fn new(world: Arc<World>) -> Result<Episode> {
        let state: SharedState = Arc::new(Mutex::new(SimState::new(
            world.meta.clock_start,
            0,
            world.meta.ids.clone(),
        )));
        let (conn, overlay) = crate::world::open_episode_connection(&state, &world.snapshot)?;
        let sandbox = Sandbox::install(&conn)?;
        // rusqlite keeps 16 statements by default; one episode of a world
        // with a few tools and views uses more, and an LRU that small
        // re-prepares (re-parses) SQL on nearly every step.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        let touched: Touched = Arc::new(Mutex::new(BTreeSet::new()));
        let sink = Arc::clone(&touched);
        conn.update_hook(Some(move |_action, _db: &str, table: &str, rowid: i64| {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((table.to_string(), rowid));
        }))?;
        let budget = OperationBudget::install(&conn)?;
        let base = world.base.get(&world.snapshot)?;
        Ok(Episode {
            world,
            conn: Some(conn),
            overlay,
            base,
            sandbox,
            state,
            touched,
            budget,
            task_id: String::new(),
            seed: 0,
            steps: 0,
            replies_used: 0,
            next_reply: None,
            status: Status::Terminated,
            enforce_limits: true,
            expert: false,
        })
    }

    /// Starts `task` over from the seeded state. `seed` drives the world's
    /// `random()`; ids and the clock restart.
    pub fn reset(&mut self, task_id: &str, seed: u64) -> Result<ResetOutcome> {
        let task = self.world.task(task_id).ok_or_else(|| Error::UnknownTask {
            world: self.world.meta.id.clone(),
            task: task_id.to_string(),
        })?;
        let opening = task.opening_message.clone();
        let instruction = task.instruction.clone();
        let world = Arc::clone(&self.world);
        restore::reset_database(self)?;
        *self.lock_state() = SimState::new(world.meta.clock_start, seed, world.meta.ids.clone());
        self.task_id = task_id.to_string();
        self.seed = seed;
        self.steps = 0;
        self.replies_used = 0;
        self.next_reply = None;
        self.status = Status::Running;
        let observation = Observation::success(
            json!({"task_id": task_id, "instruction": instruction, "opening_message": opening}),
            opening,
        );
        Ok(ResetOutcome {
            observation,
            info: self.info(),
        })
    }

    /// Applies one action. World-level failures (bad arguments, a guard
    /// refusing) are observations; only a finished episode is an `Err`.
    pub fn step(&mut self, action: &Action) -> Result<StepOutcome> {
        match self.status {
            Status::Running => {}
            Status::Terminated => {
                return Err(Error::EpisodeOver {
                    reason: "the task ended".into(),
                })
            }
            Status::Truncated => {
                return Err(Error::EpisodeOver {
                    reason: "the step limit was reached".into(),
                })
            }
        }
        let (observation, ends) = match action {
            Action::Message { message } => (self.reply(message), false),
            Action::Tool { tool, args } => self.call(tool, args),
        };
        self.steps += 1;
        {
            let tick = self.world.meta.tick_seconds;
            self.lock_state().advance(tick);
        }
        let max_steps = self.task().max_steps;
        let terminated = ends && observation.ok;
        let truncated = !terminated && self.steps >= max_steps;
        if !self.enforce_limits {
            return Ok(StepOutcome {
                observation,
                reward: 0.0,
                terminated,
                truncated,
                info: self.info(),
            });
        }
        self.status = if terminated {
            Status::Terminated
        } else if truncated {
            Status::Truncated
        } else {
            Status::Running
        };
        Ok(StepOutcome {
            observation,
            reward: 0.0,
            terminated,
            truncated,
            info: self.info(),
        })
    }

    /// Runs one call. A failed call gives back the ids and random numbers it
    /// drew, as its savepoint gives back its rows: the world, simulated
    /// state included, is exactly as it was.
    fn call(&mut self, name: &str, args: &serde_json::Map<String, Value>) -> (Observation, bool) {
        let draws = self.lock_state().draws();
        let (observation, ends) = self.dispatch(name, args);
        let mut state = self.lock_state();
        if observation.ok {
            state.calls.push(Call {
                tool: name.to_string(),
                args: args.clone(),
            });
        } else {
            state.restore(draws);
        }
        drop(state);
        (observation, ends)
    }

    fn dispatch(
        &mut self,
        name: &str,
        args: &serde_json::Map<String, Value>,
    ) -> (Observation, bool) {
        let world = Arc::clone(&self.world);
        let allowed = match &world.task(&self.task_id).and_then(|t| t.tools.clone()) {
            None => true,
            Some(list) => list.iter().any(|t| t == name) || name.starts_with(VIEW_TOOL_PREFIX),
        };
        self.budget.renew();
        if let (true, Some(tool)) = (allowed, world.tools.get(name)) {
            return (tool_call::run(self, tool, args), tool.ends_episode);
        }
        if let Some(view) = name
            .strip_prefix(VIEW_TOOL_PREFIX)
            .and_then(|v| world.views.get(v))
            .filter(|v| self.expert || v.audience == Audience::Everyone)
        {
            return (view_call::run(self, view, args), false);
        }
        let offered: Vec<String> = world
            .task(&self.task_id)
            .map(|t| {
                if self.expert {
                    world.expert_task_tool_specs(t)
                } else {
                    world.task_tool_specs(t)
                }
            })
            .unwrap_or_else(|| world.tool_specs())
            .into_iter()
            .map(|s| s.name)
            .collect();
        let message = unknown_tool::message(name, world.tools.contains_key(name), &offered);
        (
            Observation::failure(ObservationErrorCode::UnknownTool, message),
            false,
        )
    }

    /// A message to the customer; the observation is their reply: what the
    /// message asks for among the task's answers; else the next scripted
    /// reply; else the user simulator's (set with [`Episode::set_next_reply`]);
    /// else, for a task with answers, that the customer did not understand;
    /// else nothing.
    fn reply(&mut self, message: &str) -> Observation {
        let simulated = self.next_reply.take();
        let task = self.task();
        let reply = if let Some(answer) = customer::answer(task, message) {
            answer
        } else if let Some(scripted) = task.replies.get(self.replies_used).cloned() {
            self.replies_used += 1;
            scripted
        } else if let Some(simulated) = simulated {
            simulated
        } else if !task.answers.is_empty() {
            task.unanswered
                .clone()
                .unwrap_or_else(|| customer::UNANSWERED.to_string())
        } else {
            String::new()
        };
        Observation::success(json!({ "reply": reply }), reply)
    }

    /// True when the task itself answers `message` (one of its answers, or
    /// a scripted reply still left), so no user simulator need be asked.
    pub fn answers_itself(&self, message: &str) -> bool {
        self.scripted_replies_left() > 0 || customer::answer(self.task(), message).is_some()
    }

    /// How many scripted replies the next messages will still get.
    pub fn scripted_replies_left(&self) -> usize {
        self.world
            .task(&self.task_id)
            .map(|t| t.replies.len().saturating_sub(self.replies_used))
            .unwrap_or(0)
    }

    /// Sets the customer's reply to the next message, for when the task's
    /// scripted replies have run out: lets a user simulator outside the
    /// engine answer without the engine running it.
    pub fn set_next_reply(&mut self, reply: Option<String>) {
        self.next_reply = reply;
    }

    /// Says whether a person recording in the app is performing: only then
    /// may the views shown to the expert only (`audience = "expert"`) be
    /// read. Off by default, so every agent path (the server, MCP, batch
    /// replay of action lists) sees the world as agents are offered it.
    pub fn set_expert(&mut self, expert: bool) {
        self.expert = expert;
    }

    /// Replaying a recorded action list must apply every action, as the
    /// recording environment did, even past a step limit or an ending tool.
    pub fn set_enforce_limits(&mut self, enforce: bool) {
        self.enforce_limits = enforce;
    }

    /// The state diff against the seeded world.
    pub fn changes(&self) -> Result<Changes> {
        changes::compute(self)
    }

    /// Runs a read-only query against the live state, under the sandbox and
    /// the operation budget: for rubrics and inspection. Looking changes
    /// nothing: ids and random numbers the query draws are given back, so
    /// scoring or inspecting an episode cannot change what it does next.
    pub fn query(
        &self,
        sql: &str,
        params: &serde_json::Map<String, Value>,
    ) -> Result<Vec<serde_json::Map<String, Value>>> {
        crate::sql::sandbox::check_statement_kind(sql).map_err(Error::Other)?;
        self.budget.renew();
        let draws = self.lock_state().draws();
        let conn = self.conn();
        let rows = self.sandbox.with(SandboxMode::WorldRead, || {
            let mut stmt = conn.prepare_cached(sql)?;
            if !stmt.readonly() {
                return Err(Error::Other("the query must only read".into()));
            }
            bind_named(&mut stmt, |name| params.get(name).map(from_json))?;
            collect_rows(&mut stmt).map_err(query_failure)
        });
        self.lock_state().restore(draws);
        rows
    }

    /// The world this episode runs in.
    pub fn world(&self) -> &Arc<World> {
        &self.world
    }

    /// The task being performed (the one chosen at reset).
    pub fn task(&self) -> &Task {
        self.world
            .task(&self.task_id)
            .expect("an episode's task exists once reset")
    }

    /// The id of the task being performed.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The seed given at reset; with the actions, it fixes every observation.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Steps taken since reset.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// True once the episode terminated or was truncated.
    pub fn is_done(&self) -> bool {
        self.status != Status::Running
    }

    /// The simulated clock, as RFC 3339 in UTC.
    pub fn clock(&self) -> String {
        self.lock_state().now_rfc3339()
    }

    fn info(&self) -> StepInfo {
        StepInfo {
            world_id: self.world.meta.id.clone(),
            task_id: self.task_id.clone(),
            steps: self.steps,
            max_steps: self
                .world
                .task(&self.task_id)
                .map(|t| t.max_steps)
                .unwrap_or(0),
            clock: self.clock(),
        }
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn conn(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("the connection is only lent during a script call")
    }
}

/// A query stopped by a bound says so in words; any other failure stays a
/// database error.
fn query_failure(e: rusqlite::Error) -> Error {
    if crate::sql::budget::is_exhausted(&e) {
        Error::Other(format!("the query took too long: {}", sql_message(&e)))
    } else if crate::sql::is_bound(&e) {
        Error::Other(format!("the query was stopped: {}", sql_message(&e)))
    } else {
        Error::Sqlite(e)
    }
}
