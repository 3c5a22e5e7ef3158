//! The episode registry: every open agent episode, under a hard cap, with
//! idle tracking.
//!
//! The cap counts episodes being created as well as open ones, so it holds
//! exactly even while many resets race: a reset over the cap is refused at
//! once (`too_many_episodes`), never queued. Finished episodes stay
//! readable through `state` but give their slot up to a new reset when the
//! registry is full, since they are already submitted to the store.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use understudy::episode::Episode;
use understudy::recorder::Recorder;
use understudy::world::World;

use super::protocol::{codes, ApiError};

// Sessions move between the async workers, the blocking pool and the stdio
// thread: the recorder (and the episode and SQLite connections inside it)
// must be `Send`. This fails to compile if that ever stops being true.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Recorder>();
    send::<Episode>();
};

/// One agent episode.
pub struct Session {
    pub key: String,
    pub world: Arc<World>,
    pub model: String,
    state: Mutex<SessionState>,
    pool: Arc<EpisodePool>,
    /// Milliseconds since the registry's epoch at the last request.
    last_used: AtomicU64,
    /// Requests in flight; a busy session is never idle.
    busy: AtomicUsize,
    /// Finished (terminated or truncated, and submitted).
    done: AtomicBool,
}

/// What only one request at a time may touch.
pub struct SessionState {
    /// Always `Some` until the session is dropped and its episode goes
    /// back to the pool.
    recorder: Option<Recorder>,
    /// Removed from the registry and, if it was running, abandoned. A
    /// request that fetched the session just before that sees this.
    pub closed: bool,
    pub terminated: bool,
    pub truncated: bool,
    /// The final reward once done.
    pub reward: f64,
    /// Reward details added to the final step's `info`.
    pub reward_info: Map<String, Value>,
}

impl SessionState {
    pub fn rec(&self) -> &Recorder {
        self.recorder
            .as_ref()
            .expect("a session's recorder is only taken when it is dropped")
    }

    pub fn rec_mut(&mut self) -> &mut Recorder {
        self.recorder
            .as_mut()
            .expect("a session's recorder is only taken when it is dropped")
    }
}

/// Episodes of finished sessions, kept for reuse: opening an episode costs
/// a database copy and cold prepared statements, reusing one costs a reset.
pub struct EpisodePool {
    idle: Mutex<HashMap<String, Vec<Episode>>>,
    per_world: usize,
}

impl EpisodePool {
    pub fn new(per_world: usize) -> EpisodePool {
        EpisodePool {
            idle: Mutex::new(HashMap::new()),
            per_world,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Episode>>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle episode of `world`, or a new one.
    pub fn take(&self, world: &Arc<World>) -> understudy::error::Result<Episode> {
        let reused = self
            .lock()
            .get_mut(&world.meta.id)
            .and_then(Vec::pop)
            .filter(|e| Arc::ptr_eq(e.world(), world));
        match reused {
            Some(e) => Ok(e),
            None => Episode::new(Arc::clone(world)),
        }
    }

    pub fn put(&self, episode: Episode) {
        let mut idle = self.lock();
        let slot = idle.entry(episode.world().meta.id.clone()).or_default();
        if slot.len() < self.per_world {
            slot.push(episode);
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some(recorder) = state.recorder.take() {
            self.pool.put(recorder.into_episode());
        }
    }
}

impl Session {
    pub fn lock(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state, waiting for it until `deadline` at most: `None` when a
    /// request (a step that does not end) still holds it then.
    pub fn lock_until(&self, deadline: Instant) -> Option<MutexGuard<'_, SessionState>> {
        let mut pause = Duration::from_millis(1);
        loop {
            match self.state.try_lock() {
                Ok(guard) => return Some(guard),
                Err(std::sync::TryLockError::Poisoned(e)) => return Some(e.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return None;
                    }
                    std::thread::sleep(pause.min(deadline - now));
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
            }
        }
    }

    pub fn mark_done(&self) {
        self.done.store(true, Ordering::Release);
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Marks a request in flight until the guard drops.
    pub fn enter<'a>(&'a self, sessions: &'a Sessions) -> BusyGuard<'a> {
        self.busy.fetch_add(1, Ordering::AcqRel);
        self.last_used.store(sessions.now_ms(), Ordering::Release);
        BusyGuard {
            session: self,
            sessions,
        }
    }
}

/// Keeps a session busy; on drop, the idle clock restarts from now.
pub struct BusyGuard<'a> {
    session: &'a Session,
    sessions: &'a Sessions,
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.session
            .last_used
            .store(self.sessions.now_ms(), Ordering::Release);
        self.session.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

#[derive(Default)]
struct Inner {
    open: HashMap<String, Arc<Session>>,
    /// Resets under way; they hold a slot of the cap.
    pending: usize,
    /// Client-chosen ids of resets under way.
    pending_keys: HashSet<String>,
}

/// The registry.
pub struct Sessions {
    inner: Mutex<Inner>,
    cap: usize,
    idle_timeout: Duration,
    epoch: Instant,
}

/// A slot of the cap held by a reset in progress; released on drop unless
/// the session was inserted.
pub struct Reservation<'a> {
    sessions: &'a Sessions,
    key: Option<String>,
    used: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.used {
            let mut inner = self.sessions.lock();
            inner.pending -= 1;
            if let Some(k) = &self.key {
                inner.pending_keys.remove(k);
            }
        }
    }
}

impl Sessions {
    pub fn new(cap: usize, idle_timeout: Duration) -> Sessions {
        Sessions {
            inner: Mutex::new(Inner::default()),
            cap: cap.max(1),
            idle_timeout,
            epoch: Instant::now(),
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Open and finished-but-kept sessions.
    pub fn len(&self) -> usize {
        self.lock().open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sessions still running (not finished).
    pub fn running(&self) -> usize {
        self.lock().open.values().filter(|s| !s.is_done()).count()
    }

    /// Takes a slot for a new episode, evicting finished sessions if the
    /// registry is full. Refuses over the cap.
    pub fn reserve(&self, key: Option<&str>) -> Result<Reservation<'_>, ApiError> {
        let mut inner = self.lock();
        if let Some(k) = key {
            if inner.open.contains_key(k) || inner.pending_keys.contains(k) {
                return Err(ApiError::new(
                    409,
                    codes::EPISODE_EXISTS,
                    format!("an episode with `episode_id` {k:?} is already open; close it first or choose another id"),
                ));
            }
        }
        if inner.open.len() + inner.pending >= self.cap {
            inner.open.retain(|_, s| !s.is_done());
        }
        if inner.open.len() + inner.pending >= self.cap {
            return Err(ApiError::new(
                429,
                codes::TOO_MANY_EPISODES,
                format!(
                    "{} episodes are running, the server's cap (--max-concurrent); finish or close one and retry",
                    self.cap
                ),
            ));
        }
        inner.pending += 1;
        if let Some(k) = key {
            inner.pending_keys.insert(k.to_string());
        }
        Ok(Reservation {
            sessions: self,
            key: key.map(str::to_string),
            used: false,
        })
    }

    /// Inserts the new session into the slot `reservation` held.
    pub fn insert(
        &self,
        mut reservation: Reservation<'_>,
        key: String,
        world: Arc<World>,
        model: String,
        recorder: Recorder,
        pool: Arc<EpisodePool>,
    ) -> Arc<Session> {
        let session = Arc::new(Session {
            key: key.clone(),
            world,
            model,
            state: Mutex::new(SessionState {
                recorder: Some(recorder),
                closed: false,
                terminated: false,
                truncated: false,
                reward: 0.0,
                reward_info: Map::new(),
            }),
            pool,
            last_used: AtomicU64::new(self.now_ms()),
            busy: AtomicUsize::new(0),
            done: AtomicBool::new(false),
        });
        let mut inner = self.lock();
        inner.pending -= 1;
        if let Some(k) = &reservation.key {
            inner.pending_keys.remove(k);
        }
        reservation.used = true;
        inner.open.insert(key, Arc::clone(&session));
        session
    }

    pub fn get(&self, key: &str) -> Result<Arc<Session>, ApiError> {
        self.lock()
            .open
            .get(key)
            .cloned()
            .ok_or_else(|| self.unknown(key))
    }

    /// The error for an id with no open session.
    pub fn unknown(&self, key: &str) -> ApiError {
        ApiError::new(
            404,
            codes::UNKNOWN_EPISODE,
            format!(
                "no open episode has `episode_id` {key:?}: it never existed, was closed, or was idle for more than {}s",
                self.idle_timeout.as_secs_f64()
            ),
        )
    }

    pub fn remove(&self, key: &str) -> Option<Arc<Session>> {
        self.lock().open.remove(key)
    }

    /// Removes and returns sessions with no request for longer than the
    /// idle timeout.
    pub fn take_idle(&self) -> Vec<Arc<Session>> {
        let now = self.now_ms();
        let limit = self.idle_timeout.as_millis() as u64;
        let mut inner = self.lock();
        let idle: Vec<String> = inner
            .open
            .iter()
            .filter(|(_, s)| {
                s.busy.load(Ordering::Acquire) == 0
                    && now.saturating_sub(s.last_used.load(Ordering::Acquire)) > limit
            })
            .map(|(k, _)| k.clone())
            .collect();
        idle.iter().filter_map(|k| inner.open.remove(k)).collect()
    }

    /// Removes and returns every session (shutdown, stdio end of input).
    pub fn take_all(&self) -> Vec<Arc<Session>> {
        self.lock().open.drain().map(|(_, s)| s).collect()
    }
}
