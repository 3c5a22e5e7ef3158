//! The engine side of the agent API, independent of transport: every
//! operation is a blocking call taking [`Fields`] and returning a [`Reply`]
//! or an [`ApiError`]. Transports only frame requests and responses, so
//! stdio and HTTP cannot behave differently.

use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{json, Map, Value};

use understudy::action::Action;
use understudy::error::Error;
use understudy::observation::Observation;
use understudy::recorder::Recorder;
use understudy::store::{Actor, Durability, EpisodeStatus, Store};
use understudy::trajectory as transcript;
use understudy::world::World;

use super::protocol::{self, codes, ApiError, Fields, Move, Op, StepResponse};
use super::reward::{self, RewardSource};
use super::sessions::{EpisodePool, Session, SessionState, Sessions};
use super::user_sim::{Turn, UserSimRequest, UserSimulator};

/// Limits and policies of one server.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Hard cap on open episodes; resets over it are refused.
    pub max_concurrent: usize,
    /// Episodes with no request for this long are closed as abandoned.
    pub idle_timeout: Duration,
    /// Reported by `health`; the store was opened with it.
    pub durability: Durability,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            max_concurrent: 64,
            idle_timeout: Duration::from_secs(300),
            durability: Durability::Full,
        }
    }
}

/// A successful response.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Reply {
    Step(Box<StepResponse>),
    Value(Value),
}

impl Reply {
    pub fn into_value(self) -> Value {
        match self {
            Reply::Step(s) => serde_json::to_value(s).unwrap_or(Value::Null),
            Reply::Value(v) => v,
        }
    }
}

/// Idle episodes kept per world for reuse by later resets.
const IDLE_EPISODES_PER_WORLD: usize = 8;

/// The longest client-chosen `episode_id` and `model`.
const MAX_ID_LEN: usize = 128;
const MAX_MODEL_LEN: usize = 200;

/// Serves worlds to agents: episodes, recording, rewards.
pub struct Server {
    worlds: IndexMap<String, Arc<World>>,
    store: Arc<Store>,
    sessions: Sessions,
    pool: Arc<EpisodePool>,
    reward: Box<dyn RewardSource>,
    user_sim: Option<Box<dyn UserSimulator>>,
    config: ServeConfig,
}

impl Server {
    /// A server over `worlds`, recording into `store`. World ids must be
    /// unique: a task is found by world id and task id.
    pub fn new(
        worlds: Vec<Arc<World>>,
        store: Arc<Store>,
        config: ServeConfig,
    ) -> Result<Server, Error> {
        if worlds.is_empty() {
            return Err(Error::Other("the server needs at least one world".into()));
        }
        let mut map = IndexMap::new();
        for w in worlds {
            let id = w.meta.id.clone();
            if let Some(prev) = map.insert(id.clone(), w) {
                return Err(Error::Other(format!(
                    "two worlds have the id `{id}` (one is {}); serve each world id once",
                    prev.root.display()
                )));
            }
        }
        Ok(Server {
            worlds: map,
            reward: reward::default_source(Arc::clone(&store)),
            store,
            sessions: Sessions::new(config.max_concurrent, config.idle_timeout),
            pool: Arc::new(EpisodePool::new(IDLE_EPISODES_PER_WORLD)),
            user_sim: None,
            config,
        })
    }

    pub fn with_reward_source(mut self, source: Box<dyn RewardSource>) -> Server {
        self.reward = source;
        self
    }

    pub fn with_user_simulator(mut self, sim: Option<Box<dyn UserSimulator>>) -> Server {
        self.user_sim = sim;
        self
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn config(&self) -> &ServeConfig {
        &self.config
    }

    pub fn worlds(&self) -> impl Iterator<Item = &Arc<World>> {
        self.worlds.values()
    }

    /// Open sessions (running or finished but kept).
    pub fn open_sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Runs one operation. Blocking: a step runs the engine and commits to
    /// the store.
    pub fn handle(&self, op: Op, fields: Fields) -> Result<Reply, ApiError> {
        match op {
            Op::Reset => self.reset(&fields).map(|s| Reply::Step(Box::new(s))),
            Op::Step => self.step(&fields).map(|s| Reply::Step(Box::new(s))),
            Op::State => self.state(&fields).map(Reply::Value),
            Op::Close => self.close(&fields).map(Reply::Value),
            Op::Schema => self.schema(&fields).map(Reply::Value),
            Op::Tasks => self.tasks(&fields).map(Reply::Value),
            Op::Health => self.health(&fields).map(Reply::Value),
            Op::Metadata => self.metadata(&fields).map(Reply::Value),
        }
    }

    /// The world and task a `reset` with fields `f` runs: the task named,
    /// else the one `seed` picks ([`Server::default_task`]). Starts
    /// nothing: an MCP session chooses its task when it opens and starts
    /// the episode when it is first used.
    pub fn chosen_task(&self, f: &Fields) -> Result<(Arc<World>, String), ApiError> {
        let task_id = f.text("task_id", "a task id, as listed by `tasks`")?;
        let world_id = f.text("world_id", "a world id, as listed by `tasks`")?;
        let seed = f.unsigned("seed", "a non-negative integer")?.unwrap_or(0);
        match task_id {
            Some(t) => Ok((Arc::clone(self.resolve(world_id.as_deref(), &t)?), t)),
            None => self.default_task(world_id.as_deref(), seed),
        }
    }

    fn reset(&self, f: &Fields) -> Result<StepResponse, ApiError> {
        f.check_known()?;
        let (world, task_id) = self.chosen_task(f)?;
        let seed = f.unsigned("seed", "a non-negative integer")?.unwrap_or(0);
        let key = f.text("episode_id", "text")?;
        if let Some(k) = &key {
            check_id(k)?;
        }
        let model = f
            .text("model", "text naming the agent's model")?
            .unwrap_or_else(|| "unknown".to_string());
        check_model(&model)?;
        let reservation = self.sessions.reserve(key.as_deref())?;
        let episode = self.pool.take(&world).map_err(engine_error)?;
        let recorder = Recorder::start_with(
            Arc::clone(&self.store),
            episode,
            &task_id,
            Actor::Agent {
                model: model.clone(),
            },
            seed,
        )
        .map_err(engine_error)?;
        let record_id = recorder.record().id.clone();
        let key = key.unwrap_or_else(|| record_id.clone());
        let task = recorder.episode().task();
        let observation = reset_observation(&task_id, &task.instruction, &task.opening_message);
        let mut info = step_info(&recorder, EpisodeStatus::InProgress);
        info.insert("title".into(), json!(task.title));
        info.insert("policy".into(), json!(world.policy));
        self.sessions.insert(
            reservation,
            key.clone(),
            world,
            model,
            recorder,
            Arc::clone(&self.pool),
        );
        tracing::debug!(episode = %key, task = %task_id, "reset");
        Ok(StepResponse {
            episode_id: key,
            record_id,
            observation,
            reward: 0.0,
            done: false,
            terminated: false,
            truncated: false,
            info,
        })
    }

    fn step(&self, f: &Fields) -> Result<StepResponse, ApiError> {
        f.check_known()?;
        let key = f.required_text("episode_id", "the id `reset` returned")?;
        let parsed = protocol::parse_move(f)?;
        let session = self.sessions.get(&key)?;
        let _busy = session.enter(&self.sessions);
        let mut st = session.lock();
        if st.closed {
            return Err(self.sessions.unknown(&key));
        }
        if st.rec().is_done() || !st.rec().record().status.is_open() {
            let why = if st.truncated {
                "the step limit was reached"
            } else if st.terminated {
                "the task ended"
            } else {
                "it was submitted"
            };
            return Err(ApiError::new(
                409,
                codes::EPISODE_OVER,
                format!("episode {key:?} is over ({why}); reset to start a new one"),
            ));
        }
        let action = match parsed {
            Move::Submit { final_message } => return self.submit(&session, &mut st, final_message),
            Move::Act(Action::Tool { tool, args })
                if tool == protocol::SUBMIT_TOOL && !session.world.tools.contains_key(&tool) =>
            {
                match protocol::submit_args(&args) {
                    Ok(Move::Submit { final_message }) => {
                        return self.submit(&session, &mut st, final_message)
                    }
                    Ok(Move::Act(_)) => unreachable!("submit_args only gives a submission"),
                    Err(e) => {
                        return Err(ApiError::new(
                            400,
                            codes::INVALID_ACTION,
                            format!("`action` is not a valid action: {e}"),
                        ))
                    }
                }
            }
            Move::Act(action) => action,
        };
        if let Action::Message { message } = &action {
            self.simulate_reply(&session, &mut st, message)?;
        }
        let stepped = st.rec_mut().step(action, None);
        st.rec_mut().set_next_reply(None);
        let recorded = stepped.map_err(engine_error)?;
        let out = recorded.outcome;
        let done = out.terminated || out.truncated;
        let (reward, info) = if done {
            st.terminated = out.terminated;
            st.truncated = out.truncated;
            self.finish(&session, &mut st, None)
        } else {
            (
                self.reward.step_reward(st.rec()),
                step_info(st.rec(), EpisodeStatus::InProgress),
            )
        };
        Ok(StepResponse {
            episode_id: key,
            record_id: st.rec().record().id.clone(),
            observation: out.observation,
            reward,
            done,
            terminated: out.terminated,
            truncated: out.truncated,
            info,
        })
    }

    /// Ends a running episode as the performer's submission. Not a world
    /// step: nothing changes in the world and no step is recorded.
    fn submit(
        &self,
        session: &Session,
        st: &mut SessionState,
        final_message: Option<String>,
    ) -> Result<StepResponse, ApiError> {
        st.terminated = true;
        let (reward, info) = self.finish(session, st, final_message);
        let final_message = st.rec().record().final_message.clone();
        Ok(StepResponse {
            episode_id: session.key.clone(),
            record_id: st.rec().record().id.clone(),
            observation: Observation::success(
                json!({"submitted": true, "final_message": final_message}),
                "Submitted.".to_string(),
            ),
            reward,
            done: true,
            terminated: true,
            truncated: false,
            info,
        })
    }

    /// Submits the ended episode and computes its final reward. The step
    /// that ended it is already committed, so failures here are reported in
    /// `info` rather than undoing what the client was shown.
    fn finish(
        &self,
        session: &Session,
        st: &mut SessionState,
        final_message: Option<String>,
    ) -> (f64, Map<String, Value>) {
        if let Err(e) = st.rec_mut().submit(final_message) {
            tracing::error!(episode = %session.key, "cannot mark the episode submitted: {e}");
        }
        session.mark_done();
        let mut info = step_info(st.rec(), st.rec().record().status);
        let (reward, extra) = match self.reward.final_reward(st.rec()) {
            Ok(fin) => (fin.reward, fin.info),
            Err(e) => {
                tracing::warn!(episode = %session.key, "scoring failed: {e}");
                let mut m = Map::new();
                m.insert("reward_source".into(), json!(self.reward.name()));
                m.insert("reward_error".into(), json!(e));
                (0.0, m)
            }
        };
        st.reward = reward;
        st.reward_info = extra.clone();
        info.extend(extra);
        (reward, info)
    }

    /// Asks the user simulator for the customer's reply when the task does
    /// not answer the message itself (no answer it asks for, no scripted
    /// reply left); without a simulator the task's fallback applies.
    fn simulate_reply(
        &self,
        session: &Session,
        st: &mut SessionState,
        message: &str,
    ) -> Result<(), ApiError> {
        let Some(sim) = &self.user_sim else {
            return Ok(());
        };
        let episode = st.rec().episode();
        if episode.answers_itself(message) {
            return Ok(());
        }
        let task = episode.task();
        let request = UserSimRequest {
            world: &session.world.meta.id,
            task: &task.id,
            instruction: &task.instruction,
            facts: &task.facts,
            conversation: conversation(&task.opening_message, st.rec()),
            message,
        };
        let reply = sim.reply(&request).map_err(|e| {
            ApiError::new(
                502,
                codes::USER_SIM_FAILED,
                format!("the user simulator failed, so the message was not sent: {e}"),
            )
        })?;
        st.rec_mut().set_next_reply(Some(reply));
        Ok(())
    }

    fn state(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let key = f.required_text("episode_id", "the id `reset` returned")?;
        let session = self.sessions.get(&key)?;
        let _busy = session.enter(&self.sessions);
        let st = session.lock();
        if st.closed {
            return Err(self.sessions.unknown(&key));
        }
        let rec = st.rec();
        let ep = rec.episode();
        Ok(json!({
            "episode_id": key,
            "record_id": rec.record().id,
            "world_id": session.world.meta.id,
            "task_id": ep.task_id(),
            "seed": ep.seed(),
            "model": session.model,
            "status": rec.record().status.as_str(),
            "step_count": ep.steps(),
            "max_steps": ep.task().max_steps,
            "clock": ep.clock(),
            "done": session.is_done(),
            "terminated": st.terminated,
            "truncated": st.truncated,
            "reward": st.reward,
        }))
    }

    fn close(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let key = f.required_text("episode_id", "the id `reset` returned")?;
        let session = self
            .sessions
            .remove(&key)
            .ok_or_else(|| self.sessions.unknown(&key))?;
        let (status, steps, record_id) = close_session(&session);
        Ok(json!({
            "episode_id": key,
            "record_id": record_id,
            "status": status.as_str(),
            "steps": steps,
        }))
    }

    fn schema(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let world_id = f.text("world_id", "a world id")?;
        let task_id = f.text("task_id", "a task id")?;
        let (world, specs) = match &task_id {
            Some(t) => {
                let world = self.resolve(world_id.as_deref(), t)?;
                let task = world.task(t).ok_or_else(|| unknown_task(world, t))?;
                (world, world.task_tool_specs(task))
            }
            None if world_id.is_none() && self.worlds.len() > 1 => {
                let by_world: Map<String, Value> = self
                    .worlds
                    .values()
                    .map(|w| (w.meta.id.clone(), json!(agent_tools(w, w.tool_specs()))))
                    .collect();
                return Ok(json!({
                    "world_id": null,
                    "task_id": null,
                    "action": protocol::action_schema("user"),
                    "observation": protocol::observation_schema(),
                    "state": protocol::state_schema(),
                    "tools_by_world": by_world,
                }));
            }
            None => {
                let world = self.world(world_id.as_deref())?;
                (world, world.tool_specs())
            }
        };
        Ok(json!({
            "world_id": world.meta.id,
            "task_id": task_id,
            "action": protocol::action_schema(&world.meta.user),
            "observation": protocol::observation_schema(),
            "state": protocol::state_schema(),
            "tools": agent_tools(world, specs),
        }))
    }

    fn tasks(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let only = f.text("world_id", "a world id")?;
        if let Some(w) = &only {
            self.world(Some(w))?;
        }
        let mut tasks = Vec::new();
        for world in self.worlds.values() {
            if only.as_deref().is_some_and(|w| w != world.meta.id) {
                continue;
            }
            for task in world.tasks.values() {
                let mut tools: Vec<String> = world
                    .task_tool_specs(task)
                    .into_iter()
                    .map(|s| s.name)
                    .collect();
                if !world.tools.contains_key(protocol::SUBMIT_TOOL) {
                    tools.push(protocol::SUBMIT_TOOL.to_string());
                }
                tasks.push(json!({
                    "world_id": world.meta.id,
                    "task_id": task.id,
                    "gym_id": protocol::gym_id(&world.meta.id, &task.id),
                    "title": task.title,
                    "difficulty": task.difficulty,
                    "instruction": task.instruction,
                    "max_steps": task.max_steps,
                    "tools": tools,
                }));
            }
        }
        let worlds: Vec<Value> = self.worlds.values().map(|w| world_summary(w)).collect();
        Ok(json!({"worlds": worlds, "tasks": tasks}))
    }

    fn health(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let worlds: Vec<Value> = self.worlds.values().map(|w| world_summary(w)).collect();
        Ok(json!({
            // OpenEnv's word; its validator accepts no other.
            "status": "healthy",
            "version": env!("CARGO_PKG_VERSION"),
            "worlds": worlds,
            "episodes": {
                "open": self.sessions.len(),
                "running": self.sessions.running(),
                "max_concurrent": self.sessions.cap(),
            },
            "idle_timeout_s": self.sessions.idle_timeout().as_secs_f64(),
            "durability": match self.config.durability {
                Durability::Full => "full",
                Durability::Fast => "fast",
            },
            "reward_source": self.reward.name(),
            "user_sim": self.user_sim.is_some(),
        }))
    }

    /// What OpenEnv's `/metadata` carries (`name`, `description`,
    /// `version`): the world's own when one is served.
    fn metadata(&self, f: &Fields) -> Result<Value, ApiError> {
        f.check_known()?;
        let mut worlds = self.worlds.values();
        Ok(match (worlds.next(), worlds.next()) {
            (Some(w), None) => json!({
                "name": w.meta.name,
                "description": if w.meta.description.trim().is_empty() {
                    format!("The Understudy world `{}`: {} tasks.", w.meta.id, w.tasks.len())
                } else {
                    w.meta.description.clone()
                },
                "version": w.meta.version,
            }),
            _ => json!({
                "name": "Understudy",
                "description": format!(
                    "Understudy worlds, served to agents with every episode recorded: {}.",
                    self.world_list()
                ),
                "version": env!("CARGO_PKG_VERSION"),
            }),
        })
    }

    /// The task a reset without `task_id` runs: the served tasks in
    /// `tasks` order (only `world_id`'s when given), index `seed` modulo
    /// their number, so seed 0 is the first and seeds walk through them.
    fn default_task(
        &self,
        world_id: Option<&str>,
        seed: u64,
    ) -> Result<(Arc<World>, String), ApiError> {
        let candidates: Vec<(&Arc<World>, &String)> = match world_id {
            Some(w) => {
                let world = self.world(Some(w))?;
                world.tasks.keys().map(|t| (world, t)).collect()
            }
            None => self
                .worlds
                .values()
                .flat_map(|w| w.tasks.keys().map(move |t| (w, t)))
                .collect(),
        };
        let count = candidates.len() as u64;
        if count == 0 {
            return Err(ApiError::new(
                404,
                codes::UNKNOWN_TASK,
                "`reset` without `task_id`: no served world has a task",
            ));
        }
        let index = usize::try_from(seed % count).unwrap_or(0);
        let (world, task) = candidates[index];
        Ok((Arc::clone(world), task.clone()))
    }

    /// Closes sessions idle past the timeout, recording running ones as
    /// abandoned. Returns how many were closed.
    pub fn reap_idle(&self) -> usize {
        let idle = self.sessions.take_idle();
        for s in &idle {
            let (status, steps, _) = close_session(s);
            tracing::info!(episode = %s.key, status = status.as_str(), steps, "closed an idle episode");
        }
        idle.len()
    }

    /// Closes every session (shutdown, or the stdio client went away).
    pub fn close_all(&self) -> usize {
        let all = self.sessions.take_all();
        for s in &all {
            close_session(s);
        }
        all.len()
    }

    /// [`Server::close_all`] for a shutdown that must end: a session whose
    /// step is still running after `limit` is left as it is (its committed
    /// steps are in the store; its status stays `in_progress`, as after a
    /// crash). Returns how many were closed and how many were left.
    pub fn close_all_within(&self, limit: Duration) -> (usize, usize) {
        let deadline = Instant::now().checked_add(limit);
        let (mut closed, mut stuck) = (0, 0);
        for s in self.sessions.take_all() {
            let guard = match deadline {
                Some(d) => s.lock_until(d),
                None => Some(s.lock()),
            };
            match guard {
                Some(mut st) => {
                    close_locked(&s, &mut st);
                    closed += 1;
                }
                None => {
                    tracing::warn!(episode = %s.key, "a step was still running at shutdown; the episode stays in_progress");
                    stuck += 1;
                }
            }
        }
        if closed > 0 {
            tracing::info!(closed, "closed open episodes");
        }
        (closed, stuck)
    }

    fn world(&self, world_id: Option<&str>) -> Result<&Arc<World>, ApiError> {
        match world_id {
            Some(w) => self.worlds.get(w).ok_or_else(|| {
                ApiError::new(
                    404,
                    codes::UNKNOWN_WORLD,
                    format!("no world `{w}`; this server serves {}", self.world_list()),
                )
            }),
            None if self.worlds.len() == 1 => Ok(self.worlds.values().next().expect("one world")),
            None => Err(ApiError::invalid_request(format!(
                "`world_id` is needed: this server serves {}",
                self.world_list()
            ))),
        }
    }

    /// Finds the world of `task_id`; `world_id` is needed only when two
    /// served worlds share the task id.
    fn resolve(&self, world_id: Option<&str>, task_id: &str) -> Result<&Arc<World>, ApiError> {
        if let Some(w) = world_id {
            let world = self.world(Some(w))?;
            return match world.task(task_id) {
                Some(_) => Ok(world),
                None => Err(unknown_task(world, task_id)),
            };
        }
        let found: Vec<&Arc<World>> = self
            .worlds
            .values()
            .filter(|w| w.task(task_id).is_some())
            .collect();
        match found.as_slice() {
            [one] => Ok(one),
            [] if self.worlds.len() == 1 => Err(unknown_task(
                self.worlds.values().next().expect("one world"),
                task_id,
            )),
            [] => Err(ApiError::new(
                404,
                codes::UNKNOWN_TASK,
                format!(
                    "no served world has a task `{task_id}`; GET /tasks (or op `tasks`) lists them"
                ),
            )),
            many => Err(ApiError::invalid_request(format!(
                "task `{task_id}` exists in worlds {}; give `world_id`",
                many.iter()
                    .map(|w| format!("`{}`", w.meta.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    fn world_list(&self) -> String {
        self.worlds
            .keys()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn unknown_task(world: &World, task_id: &str) -> ApiError {
    let mut known: Vec<&str> = world.tasks.keys().map(String::as_str).take(20).collect();
    if world.tasks.len() > known.len() {
        known.push("...");
    }
    ApiError::new(
        404,
        codes::UNKNOWN_TASK,
        format!(
            "world `{}` has no task `{task_id}`; its tasks are: {}",
            world.meta.id,
            known.join(", ")
        ),
    )
}

/// A world's tools as OpenAI function specs, with the `submit`
/// pseudo-tool unless the world has its own.
fn agent_tools(world: &World, specs: Vec<understudy::world::ToolSpec>) -> Vec<Value> {
    let mut tools: Vec<Value> = specs.iter().map(protocol::openai_function).collect();
    if !world.tools.contains_key(protocol::SUBMIT_TOOL) {
        tools.push(protocol::submit_function(&world.meta.user));
    }
    tools
}

fn world_summary(w: &World) -> Value {
    json!({
        "world_id": w.meta.id,
        "name": w.meta.name,
        "version": w.meta.version,
        "content_hash": w.content_hash,
        "tasks": w.tasks.len(),
    })
}

/// The first observation of an episode. It must equal what
/// `Episode::reset` returns; a test holds the two together.
pub fn reset_observation(task_id: &str, instruction: &str, opening: &str) -> Observation {
    Observation::success(
        json!({"task_id": task_id, "instruction": instruction, "opening_message": opening}),
        opening.to_string(),
    )
}

fn step_info(rec: &Recorder, status: EpisodeStatus) -> Map<String, Value> {
    let ep = rec.episode();
    let mut info = Map::new();
    info.insert("world_id".into(), json!(ep.world().meta.id));
    info.insert("task_id".into(), json!(ep.task_id()));
    info.insert("steps".into(), json!(ep.steps()));
    info.insert("max_steps".into(), json!(ep.task().max_steps));
    info.insert("clock".into(), json!(ep.clock()));
    info.insert("status".into(), json!(status.as_str()));
    info
}

/// The conversation as the customer saw it: the opening message, then each
/// kept message step and its reply (the trajectory's transcript, without
/// tool calls).
fn conversation(opening: &str, rec: &Recorder) -> Vec<Turn> {
    let mut turns = Vec::new();
    if !opening.is_empty() {
        turns.push(Turn {
            role: "customer",
            content: opening.to_string(),
        });
    }
    for turn in rec.trajectory().transcript(false).turns {
        if let transcript::Turn::Say {
            idx: Some(_),
            message,
            reply,
            ..
        } = turn
        {
            turns.push(Turn {
                role: "agent",
                content: message.to_string(),
            });
            if !reply.is_empty() {
                turns.push(Turn {
                    role: "customer",
                    content: reply.to_string(),
                });
            }
        }
    }
    turns
}

/// Marks a session closed; a running episode is recorded as abandoned with
/// every step kept. Returns the stored status and the number of steps.
fn close_session(session: &Session) -> (EpisodeStatus, usize, String) {
    close_locked(session, &mut session.lock())
}

/// [`close_session`] with the state already locked.
fn close_locked(session: &Session, st: &mut SessionState) -> (EpisodeStatus, usize, String) {
    if !st.closed {
        st.closed = true;
        if st.rec().record().status.is_open() {
            if let Err(e) = st.rec_mut().abandon() {
                tracing::error!(episode = %session.key, "cannot mark the episode abandoned: {e}");
            }
        }
    }
    (
        st.rec().record().status,
        st.rec().steps().len(),
        st.rec().record().id.clone(),
    )
}

fn check_id(id: &str) -> Result<(), ApiError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
    if id.is_empty() || id.len() > MAX_ID_LEN || !id.chars().all(ok_char) {
        return Err(ApiError::invalid_request(format!(
            "`episode_id` must be 1 to {MAX_ID_LEN} characters of letters, digits, `-`, `_`, `.` or `:`; got {id:?}"
        )));
    }
    Ok(())
}

fn check_model(model: &str) -> Result<(), ApiError> {
    if model.trim().is_empty()
        || model.chars().count() > MAX_MODEL_LEN
        || model.chars().any(char::is_control)
    {
        return Err(ApiError::invalid_request(format!(
            "`model` must be 1 to {MAX_MODEL_LEN} characters without control characters"
        )));
    }
    Ok(())
}

/// Maps engine errors to API errors. Only failures of the caller or the
/// environment get here; world-level failures are observations.
fn engine_error(e: Error) -> ApiError {
    let message = e.to_string();
    match e {
        Error::EpisodeOver { .. } => ApiError::new(409, codes::EPISODE_OVER, message),
        Error::UnknownTask { .. } => ApiError::new(404, codes::UNKNOWN_TASK, message),
        Error::InvalidAction(_) => ApiError::new(400, codes::INVALID_ACTION, message),
        Error::Conflict(_) => ApiError::new(409, "conflict", message),
        Error::Sqlite(_) | Error::Store { .. } | Error::Io { .. } => {
            tracing::error!("store failure: {message}");
            ApiError::new(500, codes::STORE, message)
        }
        _ => {
            tracing::error!("internal failure: {message}");
            ApiError::new(500, codes::INTERNAL, message)
        }
    }
}
