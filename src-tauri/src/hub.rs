//! The team hub in the app: sign in, the expert's assignment queue, and
//! offline-first sync of what they record. Thin commands over
//! `understudy_hub::outbox`, which holds the logic (what waits, sending
//! it, plain-word failures); with no hub signed in every command answers
//! "not connected" and the app works on its own as before.
//!
//! A background thread syncs every [`SYNC_EVERY`] while signed in, so
//! finished work leaves the machine without the expert thinking of it;
//! "Send now" syncs at once.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde::Serialize;
use tauri::{Manager, State};
use ts_rs::TS;
use understudy_hub::outbox::{plain_words, Outbox, SignedIn, Status, WorkState};
use understudy_hub::work::Work;

use crate::error::{AppError, AppResult};
use crate::ipc::command;
use crate::service::Service;
use crate::AppState;

/// How often the app syncs in the background while signed in
/// (`UNDERSTUDY_HUB_SYNC_SECS` overrides it, e.g. for the window tests).
pub const SYNC_EVERY: Duration = Duration::from_secs(30);

/// How soon the background sync tries again while work done in the
/// screens waits (the hub was down): a decision is sent soon after the hub
/// is back, without anyone pressing "Send now".
pub const RETRY_WAITING_WORK: Duration = Duration::from_secs(5);

fn sync_every() -> Duration {
    std::env::var("UNDERSTUDY_HUB_SYNC_SECS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| *n > 0)
        .map(Duration::from_secs)
        .unwrap_or(SYNC_EVERY)
}

/// The hub side of the app's state.
pub struct HubState {
    outbox: Result<Arc<Outbox>, AppError>,
    /// Set by [`HubState::wake`]: the background sync runs now rather
    /// than at its next tick.
    wake: Arc<(Mutex<bool>, Condvar)>,
}

impl HubState {
    /// Reads the hub settings in the data folder (none: not connected).
    pub fn open(data_dir: Option<&std::path::Path>) -> HubState {
        let outbox = match data_dir {
            Some(dir) => Outbox::open(dir).map(Arc::new).map_err(|e| {
                AppError::new(
                    "hub",
                    "The app's team hub settings could not be read; sign in to the hub again.",
                )
                .with_detail(e.to_string())
            }),
            None => Err(AppError::new(
                "hub",
                "The team hub is not available because the app has no data folder.",
            )),
        };
        HubState {
            outbox,
            wake: Arc::default(),
        }
    }

    fn outbox(&self) -> AppResult<&Arc<Outbox>> {
        self.outbox.as_ref().map_err(Clone::clone)
    }

    /// Who is signed in (none without a hub, or with unreadable settings).
    pub fn signed_in_as(&self) -> Option<SignedIn> {
        self.outbox.as_ref().ok()?.account()
    }

    /// Queues work done in a screen for the next sync; `false`: not
    /// signed in, so it stays local.
    pub fn queue(&self, work: Work) -> Result<bool, understudy_hub::HubError> {
        match &self.outbox {
            Ok(outbox) => outbox.queue(work),
            Err(_) => Ok(false),
        }
    }

    /// The hub's state for `store` (tests and callers without a window).
    pub fn status_of(&self, store: &understudy::store::Store) -> AppResult<Status> {
        self.outbox()?.status(store).map_err(hub_error)
    }

    /// Has the background sync send what was just queued.
    pub fn wake(&self) {
        let (flag, cv) = &*self.wake;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }

    /// Waits until woken or `every` passed.
    fn wait(&self, every: Duration) {
        let (flag, cv) = &*self.wake;
        let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
        let (mut woken, _) = cv
            .wait_timeout_while(guard, every, |woken| !*woken)
            .unwrap_or_else(|e| e.into_inner());
        *woken = false;
    }
}

/// Who is signed in.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HubAccountView {
    /// The hub's address.
    pub url: String,
    pub login: String,
    pub name: String,
    /// `expert`, `reviewer`, ...
    pub role: String,
}

/// A task the hub assigned to the signed-in expert.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AssignmentView {
    #[ts(type = "number")]
    pub id: i64,
    pub world_id: String,
    pub task_id: String,
    /// RFC 3339, UTC.
    pub due_at: Option<String>,
    /// How many experts the task was given to.
    pub overlap: i32,
    /// `ready`: the assigned world is on this computer, the same version;
    /// `other_version`: a different version is here; `missing`: it is not.
    pub here: String,
}

/// Where a piece of work done in a screen is, for its note.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HubWorkView {
    /// `review:<episode id>`, `grades:<episode id>` or `rubric:<hash>`.
    pub key: String,
    /// `waiting` (saved here, will be sent), `sent`, or `refused`.
    pub state: String,
    /// Why the hub refused it, in plain words.
    pub message: Option<String>,
}

/// Everything the app shows about the hub.
#[derive(Debug, Clone, Serialize, TS)]
pub struct HubView {
    /// `None`: not connected; recordings stay on this computer.
    pub account: Option<HubAccountView>,
    /// Recordings not yet sent (or changed since they were).
    pub waiting: u32,
    /// RFC 3339, when the last sync completed.
    pub last_synced_at: Option<String>,
    /// Why the last sync failed, in plain words.
    pub last_error: Option<String>,
    pub syncing: bool,
    pub assignments: Vec<AssignmentView>,
    /// Decisions, grades and rubric versions made in the screens: waiting
    /// first, then what became of those sent.
    pub work: Vec<HubWorkView>,
}

fn view(service: &Service, s: Status) -> HubView {
    HubView {
        account: s.account.map(|a| HubAccountView {
            url: a.url,
            login: a.login,
            name: a.name,
            role: a.role.as_str().to_string(),
        }),
        waiting: u32::try_from(s.waiting).unwrap_or(u32::MAX),
        last_synced_at: s.last_synced_at,
        last_error: s.last_error,
        syncing: s.syncing,
        work: s
            .work
            .into_iter()
            .map(|w| HubWorkView {
                key: w.key,
                state: match w.state {
                    WorkState::Waiting => "waiting",
                    WorkState::Sent => "sent",
                    WorkState::Refused => "refused",
                }
                .to_string(),
                message: w.message,
            })
            .collect(),
        assignments: s
            .assignments
            .into_iter()
            .map(|a| {
                let here = match service.world(&a.world_id) {
                    Ok(w) if w.content_hash == a.world_hash => "ready",
                    Ok(_) => "other_version",
                    Err(_) => "missing",
                };
                AssignmentView {
                    id: a.id,
                    world_id: a.world_id,
                    task_id: a.task_id,
                    due_at: a.due_at,
                    overlap: a.overlap,
                    here: here.to_string(),
                }
            })
            .collect(),
    }
}

/// Runs `f` on a thread of its own: the hub's client is blocking
/// (reqwest's blocking client), which must not run on the async runtime's
/// threads that Tauri runs commands on.
fn off_runtime<T: Send>(f: impl FnOnce() -> AppResult<T> + Send) -> AppResult<T> {
    std::thread::scope(|scope| {
        scope.spawn(f).join().unwrap_or_else(|_| {
            Err(AppError::new(
                "hub",
                "Talking to the team hub failed unexpectedly. Your work is saved on this computer; try again.",
            ))
        })
    })
}

fn hub_error(e: understudy_hub::HubError) -> AppError {
    AppError::new("hub", plain_words(&e)).with_detail(e.to_string())
}

fn status(state: &AppState) -> AppResult<HubView> {
    let service = state.service()?;
    let s = state.hub().status_of(service.store())?;
    Ok(view(service, s))
}

command! {
    /// The hub's state: who is signed in, what waits to be sent, the queue.
    #[tauri::command(async)]
    pub fn hub_status(state: State<'_, AppState>) -> AppResult<HubView> {
        status(&state)
    }
}

command! {
    /// Signs in to the hub at `url`, with the access token when one is
    /// given, else with the login and password; then syncs once.
    #[tauri::command(async)]
    pub fn hub_sign_in(
        state: State<'_, AppState>,
        url: String,
        login: String,
        password: String,
        token: String,
    ) -> AppResult<HubView> {
        let service = state.service()?;
        let outbox = state.hub().outbox()?;
        let s = off_runtime(|| {
            if token.trim().is_empty() {
                outbox.sign_in_with_password(&url, &login, &password)
            } else {
                outbox.sign_in_with_token(&url, &token)
            }
            .map_err(hub_error)?;
            outbox.sync(service.store()).map_err(hub_error)
        })?;
        Ok(view(service, s))
    }
}

command! {
    /// Forgets the hub account (recordings stay on this computer).
    #[tauri::command(async)]
    pub fn hub_sign_out(state: State<'_, AppState>) -> AppResult<HubView> {
        let outbox = state.hub().outbox()?;
        off_runtime(|| outbox.sign_out().map_err(hub_error))?;
        status(&state)
    }
}

command! {
    /// Sends what waits and pulls the queue now.
    #[tauri::command(async)]
    pub fn hub_sync(state: State<'_, AppState>) -> AppResult<HubView> {
        let service = state.service()?;
        let outbox = state.hub().outbox()?;
        let s = off_runtime(|| outbox.sync(service.store()).map_err(hub_error))?;
        Ok(view(service, s))
    }
}

/// Syncs every [`SYNC_EVERY`] while signed in, and at once when a screen
/// queued work ([`HubState::wake`]), on a thread of its own.
pub fn start_background_sync(app: tauri::AppHandle) {
    let every = sync_every();
    std::thread::spawn(move || loop {
        let state = app.state::<AppState>();
        let waiting = state
            .hub()
            .outbox()
            .is_ok_and(|o| o.signed_in() && o.work_waiting() > 0);
        state.hub().wait(if waiting {
            every.min(RETRY_WAITING_WORK)
        } else {
            every
        });
        let (Ok(service), Ok(outbox)) = (state.service(), state.hub().outbox()) else {
            return;
        };
        if outbox.signed_in() {
            let _ = outbox.sync(service.store());
        }
    });
}
