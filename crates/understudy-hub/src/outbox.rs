//! The desktop app's side of the hub, offline-first: who is signed in
//! (kept in `hub.json` in the app's data folder), which episodes were sent
//! and with what digest, the last assignments pulled, and the last sync's
//! time or failure in plain words.
//!
//! The app keeps recording into its own store whether or not the hub is
//! reachable; [`Outbox::sync`] pushes what changed since the last sync with
//! the idempotent [`Hub::push`] and pulls the expert's queue. A sync cut off
//! anywhere is finished by the next one. Without a signed-in account every
//! call is a no-op and the app works as it does alone.
//!
//! Reviewers, graders and annotators work from the same screens: a sync
//! pulls the hub's finished episodes, decisions and rubric versions into
//! the local store ([`crate::pull`]), and the work they do there is
//! queued ([`Outbox::queue`]) and sent by the next sync ([`crate::work`]),
//! exactly once, however often the hub is away.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use understudy::store::Store;

use crate::client::{self, Hub, PushOptions};
use crate::error::HubError;
use crate::people::Person;
use crate::pull;
use crate::roles::Role;
use crate::wire::Assignment;
use crate::work::{self, Delivered, Work};

/// The file in the app's data folder.
pub const FILE: &str = "hub.json";

/// The signed-in account.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Account {
    url: String,
    token: String,
    #[serde(default)]
    token_id: i64,
    person: Person,
}

impl Account {
    /// The hub and person, as the store's hub cursors name them.
    fn key(&self) -> String {
        format!("{}#{}", self.url, self.person.id)
    }
}

/// What `hub.json` holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Saved {
    account: Option<Account>,
    /// Episode id → the digest the hub holds (as of the last sync).
    #[serde(default)]
    sent: HashMap<String, String>,
    #[serde(default)]
    last_synced_at: Option<String>,
    #[serde(default)]
    last_error: Option<String>,
    /// The queue as last pulled, shown while the hub is unreachable.
    #[serde(default)]
    assignments: Vec<Assignment>,
    /// Work done in the screens, oldest first, waiting to be sent.
    #[serde(default)]
    pending: Vec<Work>,
    /// What became of work sent, newest last (the last [`DELIVERED_KEPT`]).
    #[serde(default)]
    delivered: Vec<Delivered>,
}

/// How many sent pieces of work `hub.json` remembers, for the screens'
/// "Sent to the hub".
pub const DELIVERED_KEPT: usize = 500;

/// Where a piece of work done in the screens is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkState {
    /// Saved on this computer, to be sent at the next sync.
    Waiting,
    /// On the hub.
    Sent,
    /// The hub refused it; it stays on this computer only.
    Refused,
}

/// A piece of work and where it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkStatus {
    /// [`Work::key`].
    pub key: String,
    pub state: WorkState,
    /// Why it was refused, in plain words.
    pub message: Option<String>,
}

/// Who is signed in, without the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignedIn {
    pub url: String,
    pub login: String,
    pub name: String,
    pub role: Role,
}

/// What the app shows about the hub.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    /// `None`: no hub configured; the app works on its own.
    pub account: Option<SignedIn>,
    /// Local episodes the hub lacks or holds an older copy of.
    pub waiting: usize,
    /// RFC 3339, when the last sync completed.
    pub last_synced_at: Option<String>,
    /// Why the last sync failed, in plain words; `None` after a success.
    pub last_error: Option<String>,
    /// A sync is under way.
    pub syncing: bool,
    /// The signed-in person's queue (as last pulled).
    pub assignments: Vec<Assignment>,
    /// Work done in the screens: waiting first, then what was sent.
    pub work: Vec<WorkStatus>,
}

/// What one sync got done before it finished or failed: kept either way.
#[derive(Default)]
struct Progress {
    sent: Option<HashMap<String, String>>,
    assignments: Option<Vec<Assignment>>,
    delivered: Vec<(Work, Delivered)>,
}

/// The app's hub state, shared by its commands and its background sync.
pub struct Outbox {
    path: PathBuf,
    saved: Mutex<Saved>,
    /// Held while a sync runs: one at a time.
    running: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A hub error in words for the expert using the app (a lawyer, an
/// underwriter), saying what happened to their work and what to do.
pub fn plain_words(e: &HubError) -> String {
    match e {
        HubError::Transport { url, .. } => format!(
            "The team hub at {url} cannot be reached right now. Your work is saved on this computer and will be sent when the hub is back."
        ),
        HubError::Api { code, message, .. } => match code.as_str() {
            "unauthorized" => "The hub did not accept your sign-in. Sign in again, or ask your team's admin for a new access token.".to_string(),
            "token_revoked" => "Your access to the hub was withdrawn. Sign in again, or ask your team's admin for a new access token. Your work is still saved on this computer.".to_string(),
            "unknown_world" => format!(
                "The hub does not have the version of the world one of your recordings was made in, so nothing was sent. Ask your team's admin to add it. ({message})"
            ),
            "busy" | "database" => "The team hub is busy or having trouble. Your work is saved on this computer; sending will be tried again shortly.".to_string(),
            "forbidden" => format!("The hub refused: {message}"),
            _ => format!("The hub refused to take your recordings: {message}"),
        },
        HubError::Invalid(message) => message.clone(),
        other => format!("Sending to the hub failed: {other}"),
    }
}

impl Outbox {
    /// Reads `hub.json` in `dir` (none: not signed in).
    pub fn open(dir: &Path) -> Result<Outbox, HubError> {
        let path = dir.join(FILE);
        let saved = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                HubError::Invalid(format!(
                    "{} is not the app's hub settings ({e}); delete it and sign in again",
                    path.display()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Saved::default(),
            Err(e) => {
                return Err(HubError::Io {
                    what: format!("reading {}", path.display()),
                    source: e,
                })
            }
        };
        Ok(Outbox {
            path,
            saved: Mutex::new(saved),
            running: Mutex::new(()),
        })
    }

    /// Writes `hub.json` (readable by its owner only: it holds a token).
    fn save(&self, saved: &Saved) -> Result<(), HubError> {
        let bytes =
            serde_json::to_vec_pretty(saved).map_err(|e| HubError::Invalid(e.to_string()))?;
        let tmp = self.path.with_extension("json.tmp");
        let io = |what: &str, e| HubError::Io {
            what: format!("{what} {}", tmp.display()),
            source: e,
        };
        {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut f = options.open(&tmp).map_err(|e| io("writing", e))?;
            std::io::Write::write_all(&mut f, &bytes).map_err(|e| io("writing", e))?;
            f.sync_all().map_err(|e| io("writing", e))?;
        }
        std::fs::rename(&tmp, &self.path).map_err(|e| HubError::Io {
            what: format!("saving {}", self.path.display()),
            source: e,
        })
    }

    /// Whether a hub is configured.
    pub fn signed_in(&self) -> bool {
        lock(&self.saved).account.is_some()
    }

    /// Signs in with a login and password (the hub issues a token).
    pub fn sign_in_with_password(
        &self,
        url: &str,
        login: &str,
        password: &str,
    ) -> Result<Person, HubError> {
        if login.trim().is_empty() || password.is_empty() {
            return Err(HubError::Invalid(
                "Enter both your login and your password.".into(),
            ));
        }
        check_url(url)?;
        let issued = client::sign_in(url, login.trim(), password).map_err(|e| {
            if e.code() == Some("unauthorized") {
                HubError::Invalid(
                    "That login and password do not match an account on this hub. Check them and try again."
                        .into(),
                )
            } else {
                e
            }
        })?;
        self.remember(url, &issued.token, issued.token_id, issued.person)
    }

    /// Signs in with a token an admin gave.
    pub fn sign_in_with_token(&self, url: &str, token: &str) -> Result<Person, HubError> {
        if token.trim().is_empty() {
            return Err(HubError::Invalid(
                "Paste the access token your team's admin gave you.".into(),
            ));
        }
        check_url(url)?;
        let person = Hub::new(url, token)?.me()?;
        self.remember(url, token.trim(), 0, person)
    }

    fn remember(
        &self,
        url: &str,
        token: &str,
        token_id: i64,
        person: Person,
    ) -> Result<Person, HubError> {
        let mut saved = lock(&self.saved);
        let url = url.trim().trim_end_matches('/').to_string();
        let same_hub = saved
            .account
            .as_ref()
            .is_some_and(|a| a.url == url && a.person.id == person.id);
        let mut next = if same_hub {
            saved.clone()
        } else {
            Saved::default()
        };
        next.account = Some(Account {
            url,
            token: token.to_string(),
            token_id,
            person: person.clone(),
        });
        next.last_error = None;
        self.save(&next)?;
        *saved = next;
        Ok(person)
    }

    /// Forgets the account (and revokes its token on the hub when it can
    /// be reached; signing out works offline too).
    pub fn sign_out(&self) -> Result<(), HubError> {
        let account = lock(&self.saved).account.clone();
        if let Some(a) = account {
            if let Ok(hub) = Hub::new(&a.url, &a.token) {
                let _ = hub.sign_out();
            }
        }
        let mut saved = lock(&self.saved);
        self.save(&Saved::default())?;
        *saved = Saved::default();
        Ok(())
    }

    /// The digest of every episode recorded here (pulled ones are others'
    /// and never pushed).
    fn digests(store: &Store) -> Result<HashMap<String, String>, HubError> {
        let mut out = HashMap::new();
        for r in client::recorded_here(store)? {
            let (t, expert) = client::load(store, &r.id)?;
            out.insert(r.id.clone(), client::digest(&t, expert.as_ref()));
        }
        Ok(out)
    }

    /// What the app shows: who, how many episodes wait, the last sync.
    pub fn status(&self, store: &Store) -> Result<Status, HubError> {
        let saved = lock(&self.saved).clone();
        let syncing = self.running.try_lock().is_err();
        let Some(account) = &saved.account else {
            return Ok(Status {
                account: None,
                waiting: 0,
                last_synced_at: None,
                last_error: None,
                syncing: false,
                assignments: Vec::new(),
                work: Vec::new(),
            });
        };
        let waiting = if account.person.role.pushes() {
            Self::digests(store)?
                .iter()
                .filter(|(id, d)| saved.sent.get(*id) != Some(d))
                .count()
        } else {
            0
        };
        Ok(Status {
            account: Some(SignedIn {
                url: account.url.clone(),
                login: account.person.login.clone(),
                name: account.person.name.clone(),
                role: account.person.role,
            }),
            waiting,
            last_synced_at: saved.last_synced_at.clone(),
            last_error: saved.last_error.clone(),
            syncing,
            assignments: saved.assignments.clone(),
            work: work_status(&saved),
        })
    }

    /// Who is signed in (none: the app works on its own).
    pub fn account(&self) -> Option<SignedIn> {
        lock(&self.saved).account.as_ref().map(|a| SignedIn {
            url: a.url.clone(),
            login: a.person.login.clone(),
            name: a.person.name.clone(),
            role: a.person.role,
        })
    }

    /// How many pieces of work done in the screens wait to be sent.
    pub fn work_waiting(&self) -> usize {
        lock(&self.saved).pending.len()
    }

    /// Queues work done in the screens (already saved in the local store)
    /// for the next sync. Without an account it does nothing and answers
    /// `false`: the work stays local, as without a hub. The same grades
    /// or rubric version already waiting are not queued twice.
    pub fn queue(&self, work: Work) -> Result<bool, HubError> {
        let mut saved = lock(&self.saved);
        if saved.account.is_none() {
            return Ok(false);
        }
        // A rubric version never changes, so one waiting is enough. Grades
        // are read when sent, and a sync may already have read them: each
        // grading queues a send (the hub stores each grade once).
        let already = matches!(work, Work::Rubric { .. }) && saved.pending.contains(&work);
        if !already {
            let mut next = saved.clone();
            next.pending.push(work);
            self.save(&next)?;
            *saved = next;
        }
        Ok(true)
    }

    /// Sends what changed and pulls the queue; a failure is kept (in plain
    /// words) for the status, not returned: the next sync tries again.
    /// Without an account it does nothing. One sync runs at a time; a call
    /// while one runs waits for it.
    pub fn sync(&self, store: &Store) -> Result<Status, HubError> {
        {
            let _running = lock(&self.running);
            let account = lock(&self.saved).account.clone();
            if let Some(account) = account {
                let pending = lock(&self.saved).pending.clone();
                let mut progress = Progress::default();
                let outcome = Self::sync_once(&account, store, &pending, &mut progress);
                let mut saved = lock(&self.saved);
                // Signed out or into another account meanwhile: drop it.
                if saved.account.as_ref().map(|a| (&a.url, &a.token))
                    == Some((&account.url, &account.token))
                {
                    let mut next = saved.clone();
                    next.apply(progress);
                    match outcome {
                        Ok(()) => {
                            next.last_synced_at = Some(understudy::store::now());
                            next.last_error = None;
                        }
                        Err(e) => next.last_error = Some(plain_words(&e)),
                    }
                    self.save(&next)?;
                    *saved = next;
                }
            }
        }
        self.status(store)
    }

    /// One sync, in an order that lets each part rely on the ones before:
    /// the recordings pushed, the episodes to work on pulled, the work
    /// done here sent (grades name pulled episodes), then the decisions,
    /// the other graders' grades, rubric versions and queue pulled. What
    /// got done is in `progress` even when a later part fails.
    fn sync_once(
        account: &Account,
        store: &Store,
        pending: &[Work],
        progress: &mut Progress,
    ) -> Result<(), HubError> {
        let hub = Hub::new(&account.url, &account.token)?;
        let role = account.person.role;
        if role.pushes() {
            // Digests first: an episode changed during the push is counted
            // as waiting and sent by the next sync.
            let sent = Self::digests(store)?;
            hub.push(store, PushOptions::default())?;
            progress.sent = Some(sent);
        }
        if role.pulls_episodes() {
            pull::episodes(&hub, store, &account.key())?;
        }
        for w in pending {
            let refused = work::send(&hub, store, w)?;
            progress.delivered.push((
                w.clone(),
                Delivered {
                    key: w.key(),
                    at: understudy::store::now(),
                    refused,
                },
            ));
        }
        pull::reviews(&hub, store, &account.key())?;
        if role.pulls_episodes() {
            pull::grading(&hub, store, &account.key())?;
        }
        pull::rubrics(&hub, store)?;
        progress.assignments = Some(hub.assignments()?);
        Ok(())
    }
}

impl Saved {
    /// Keeps what a sync got done: the digests sent, the queue, the work
    /// delivered (taken off the waiting list; work queued meanwhile
    /// stays).
    fn apply(&mut self, progress: Progress) {
        if let Some(sent) = progress.sent {
            self.sent = sent;
        }
        if let Some(assignments) = progress.assignments {
            self.assignments = assignments;
        }
        for (w, d) in progress.delivered {
            if let Some(i) = self.pending.iter().position(|p| *p == w) {
                self.pending.remove(i);
            }
            self.delivered.retain(|old| old.key != d.key);
            self.delivered.push(d);
        }
        let over = self.delivered.len().saturating_sub(DELIVERED_KEPT);
        self.delivered.drain(..over);
    }
}

/// Waiting work first (oldest first), then what became of work sent
/// (newest first); one entry per key, the latest.
fn work_status(saved: &Saved) -> Vec<WorkStatus> {
    let mut out: Vec<WorkStatus> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for w in &saved.pending {
        let key = w.key();
        if seen.insert(key.clone()) {
            out.push(WorkStatus {
                key,
                state: WorkState::Waiting,
                message: None,
            });
        }
    }
    for d in saved.delivered.iter().rev() {
        if seen.insert(d.key.clone()) {
            out.push(WorkStatus {
                key: d.key.clone(),
                state: if d.refused.is_some() {
                    WorkState::Refused
                } else {
                    WorkState::Sent
                },
                message: d.refused.clone(),
            });
        }
    }
    out
}

fn check_url(url: &str) -> Result<(), HubError> {
    let url = url.trim();
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(HubError::Invalid(format!(
            "“{url}” is not a hub address. It looks like http://hub.example.org:8600 — ask your team's admin for it."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_account_nothing_is_sent_and_nothing_waits() {
        let dir = tempfile::tempdir().expect("a folder");
        let store = Store::open(dir.path().join("s.db")).expect("a store");
        let outbox = Outbox::open(dir.path()).expect("no settings yet");
        assert!(!outbox.signed_in());
        let s = outbox.sync(&store).expect("a no-op");
        assert_eq!(s.account, None);
        assert_eq!(s.waiting, 0);
        assert!(!dir.path().join(FILE).exists(), "nothing is written");
    }

    #[test]
    fn bad_settings_and_addresses_are_named() {
        let dir = tempfile::tempdir().expect("a folder");
        std::fs::write(dir.path().join(FILE), "{not json").expect("a bad file");
        let e = Outbox::open(dir.path()).err().expect("a bad file");
        assert!(e.to_string().contains("hub.json"), "{e}");
        std::fs::remove_file(dir.path().join(FILE)).expect("removed");
        let outbox = Outbox::open(dir.path()).expect("fresh");
        let e = outbox
            .sign_in_with_token("hub.example:8600", "t")
            .expect_err("no scheme");
        assert!(e.to_string().contains("is not a hub address"), "{e}");
        let e = outbox
            .sign_in_with_password("http://h:1", "", "x")
            .expect_err("no login");
        assert!(e.to_string().contains("login and your password"), "{e}");
    }

    #[test]
    fn unreachable_hubs_and_revoked_tokens_are_told_in_plain_words() {
        let cut = HubError::Transport {
            url: "http://hub:8600".into(),
            message: "connection refused".into(),
        };
        let text = plain_words(&cut);
        assert!(
            text.contains("cannot be reached") && text.contains("saved on this computer"),
            "{text}"
        );
        let revoked = HubError::Api {
            status: 401,
            code: "token_revoked".into(),
            message: "revoked at ...".into(),
        };
        assert!(plain_words(&revoked).contains("access to the hub was withdrawn"));
    }
}
