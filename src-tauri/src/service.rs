//! The thin service layer every command calls: it owns the store, the
//! loaded worlds and the open recorders, and turns engine values into the
//! shapes the window receives. It holds no domain rules: stepping, undo,
//! pause and submit are the engine's [`Recorder`]; this only routes.
//!
//! **Durability:** every expert action goes through [`Recorder::step`],
//! which commits the step to the store before returning, so nothing reaches
//! the window that is not already on disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use understudy::recorder::Recorder;
use understudy::store::{Actor, EpisodeFilter, EpisodeRecord, EpisodeStatus, ExpertInput, Store};
use understudy::{Action, World};

use crate::episodes::{EpisodeSummary, EpisodeView, StepTaken};
use crate::error::{AppError, AppResult};
use crate::experts::{ExpertView, Settings};
use crate::paths::STORE_FILE;
use crate::review::{self, ReviewView};
use crate::world_shelf::Shelf;
use crate::worlds::{Catalog, TaskProgress, WorldDetail};

/// Who records, as each episode's `opened` event names it.
const CLIENT: &str = concat!("understudy-app ", env!("CARGO_PKG_VERSION"));

/// One open episode, locked while a call works on it.
type Session = Arc<Mutex<Recorder>>;

pub struct Service {
    store: Arc<Store>,
    data_dir: PathBuf,
    worlds_dir: Option<PathBuf>,
    shelf: OnceLock<Shelf>,
    sessions: Mutex<HashMap<String, Session>>,
    settings: Mutex<Settings>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Service {
    /// Opens (creating if needed) the store in `data_dir`. Worlds load on
    /// first use, so the window can paint before they are read.
    pub fn open(data_dir: &Path, worlds_dir: Option<PathBuf>) -> AppResult<Service> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            AppError::new(
                "io",
                format!(
                    "The data folder {} could not be created. Check that you may write there.",
                    data_dir.display()
                ),
            )
            .with_detail(e.to_string())
        })?;
        let store = Store::open(data_dir.join(STORE_FILE))?;
        Ok(Service {
            store: Arc::new(store),
            data_dir: data_dir.to_path_buf(),
            worlds_dir,
            shelf: OnceLock::new(),
            sessions: Mutex::new(HashMap::new()),
            settings: Mutex::new(Settings::load(data_dir)),
        })
    }

    /// The store, for the reviewer's and annotator's commands (`queue`,
    /// `replay_view`, `rubrics`).
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn store_path(&self) -> &Path {
        self.store.path()
    }

    /// The app's data folder (the store, settings, saved rubrics).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    // ---- worlds ----

    fn shelf(&self) -> &Shelf {
        self.shelf
            .get_or_init(|| Shelf::load(self.worlds_dir.as_deref()))
    }

    /// The folder the worlds were loaded from (agent runs are imported
    /// against it), if one was found.
    pub fn worlds_dir(&self) -> Option<&Path> {
        self.shelf().dir()
    }

    /// Checks and lists the worlds now (called from a background thread at
    /// start-up), then gives back what loading them left free.
    pub fn warm_up(&self) {
        self.shelf();
        release_free_memory();
    }

    /// The world `id`, loaded if no screen or episode holds it.
    pub fn world(&self, id: &str) -> AppResult<Arc<World>> {
        self.shelf().world(id)
    }

    /// Every world with its tasks and the current expert's progress on each.
    pub fn catalog(&self) -> AppResult<Catalog> {
        let shelf = self.shelf();
        let expert = self.current_expert_id();
        let mut progress: HashMap<(String, String), TaskProgress> = HashMap::new();
        if let Some(expert) = &expert {
            // Oldest first, so the latest finished attempt decides whether
            // the task shows as returned by a reviewer.
            for s in self.store.episode_summaries(&expert_filter(expert))? {
                let e = &s.record;
                let p = progress
                    .entry((e.world_id.clone(), e.task_id.clone()))
                    .or_default();
                match e.status {
                    EpisodeStatus::Submitted
                    | EpisodeStatus::Approved
                    | EpisodeStatus::Rejected => {
                        p.submitted += 1;
                        p.returned = crate::queue::Returned::of(&s);
                    }
                    EpisodeStatus::InProgress | EpisodeStatus::Paused => {
                        p.open_episode = Some(e.id.clone())
                    }
                    EpisodeStatus::Abandoned => {}
                }
            }
        }
        let worlds = shelf
            .summaries()
            .map(|w| {
                let mut w = w.clone();
                for t in &mut w.tasks {
                    t.progress = progress
                        .remove(&(w.id.clone(), t.id.clone()))
                        .unwrap_or_default();
                }
                w
            })
            .collect();
        Ok(Catalog {
            worlds_dir: shelf.dir().map(|d| d.display().to_string()),
            worlds,
            problems: shelf.problems().to_vec(),
        })
    }

    pub fn world_detail(&self, id: &str) -> AppResult<WorldDetail> {
        let world = self.world(id)?;
        Ok(WorldDetail::new(&world))
    }

    // ---- experts ----

    /// Every profile in the store, those that came with episodes pulled
    /// from a team hub included: what names the people whose work is shown.
    pub fn experts(&self) -> AppResult<Vec<ExpertView>> {
        let current = self.current_expert_id();
        Ok(self
            .store
            .experts()?
            .into_iter()
            .map(|e| ExpertView::new(e, current.as_deref()))
            .collect())
    }

    /// The profiles of the people who use this computer, what the start
    /// screen offers: not those that came with episodes pulled from a team
    /// hub (others', named where their work is, never recorded as).
    pub fn local_experts(&self) -> AppResult<Vec<ExpertView>> {
        let current = self.current_expert_id();
        Ok(self
            .store
            .local_experts()?
            .into_iter()
            .map(|e| ExpertView::new(e, current.as_deref()))
            .collect())
    }

    /// Creates or updates an expert and makes them the current one.
    pub fn save_expert(&self, id: Option<&str>, input: ExpertInput) -> AppResult<ExpertView> {
        if input.name.trim().is_empty() {
            return Err(AppError::new("invalid_profile", "Please enter your name."));
        }
        let expert = self.store.save_expert(id, &input)?;
        self.set_current_expert(&expert.id)?;
        Ok(ExpertView::new(expert, None).current())
    }

    /// Makes `id` the current profile. Refused: a profile that came with
    /// episodes pulled from the team hub (someone else's).
    pub fn select_expert(&self, id: &str) -> AppResult<ExpertView> {
        let expert = self.store.expert(id)?;
        if self.store.pulled_expert_ids()?.contains(&expert.id) {
            return Err(AppError::new(
                "not_local",
                format!(
                    "{} is someone on your team whose work came from the team hub. Choose your own profile, or create one.",
                    expert.name
                ),
            ));
        }
        self.set_current_expert(&expert.id)?;
        Ok(ExpertView::new(expert, None).current())
    }

    pub fn current_expert(&self) -> AppResult<Option<ExpertView>> {
        let Some(id) = self.current_expert_id() else {
            return Ok(None);
        };
        match self.store.expert(&id) {
            Ok(e) => Ok(Some(ExpertView::new(e, None).current())),
            Err(understudy::Error::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn current_expert_id(&self) -> Option<String> {
        lock(&self.settings).current_expert.clone()
    }

    fn set_current_expert(&self, id: &str) -> AppResult<()> {
        let mut settings = lock(&self.settings);
        settings.current_expert = Some(id.to_string());
        settings.save(&self.data_dir)
    }

    fn require_expert(&self) -> AppResult<String> {
        self.current_expert()?.map(|e| e.id).ok_or_else(|| {
            AppError::new(
                "no_expert",
                "Please fill in your expert profile first, so your work is credited to you.",
            )
        })
    }

    // ---- episodes ----

    /// The current expert's episodes that can be resumed, newest first.
    pub fn open_episodes(&self) -> AppResult<Vec<EpisodeSummary>> {
        let Some(expert) = self.current_expert_id() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for e in self
            .store
            .episodes(&expert_filter(&expert))?
            .into_iter()
            .rev()
        {
            if e.status.is_open() {
                let steps = self.store.steps(&e.id)?;
                let listing = self.shelf().summary(&e.world_id);
                out.push(EpisodeSummary::new(&e, listing, &steps));
            }
        }
        Ok(out)
    }

    pub fn start(&self, world_id: &str, task_id: &str) -> AppResult<EpisodeView> {
        let expert = self.require_expert()?;
        let world = self.world(world_id)?;
        let mut recorder = Recorder::start(
            Arc::clone(&self.store),
            world,
            task_id,
            Actor::Expert { id: expert },
            0,
        )?;
        recorder.opened_by(CLIENT)?;
        let view = EpisodeView::new(&recorder);
        lock(&self.sessions).insert(view.id.clone(), Arc::new(Mutex::new(recorder)));
        Ok(view)
    }

    /// The episode as it is now; reopens it from the store (rebuilding the
    /// world by replay) when this run of the app has not opened it yet.
    pub fn episode(&self, id: &str) -> AppResult<EpisodeView> {
        let mut view = self.with(id, |r| Ok(EpisodeView::new(r)))?;
        view.drafts = self.store.drafts(id)?;
        Ok(view)
    }

    /// Saves a draft and the working time (see `save_draft`).
    pub fn save_draft(&self, id: &str, slot: &str, text: &str) -> AppResult<()> {
        self.with(id, |r| {
            self.store.save_draft(id, slot, text)?;
            if r.record().status.is_open() {
                r.checkpoint()?;
            }
            Ok(())
        })
    }

    /// Saves the working time of an open episode (see `checkpoint_episode`).
    pub fn checkpoint(&self, id: &str) -> AppResult<()> {
        self.with(id, |r| Ok(r.checkpoint()?))
    }

    fn session(&self, id: &str) -> AppResult<Session> {
        if let Some(s) = lock(&self.sessions).get(id) {
            return Ok(Arc::clone(s));
        }
        let record = self.store.episode(id)?;
        let world = self.world(&record.world_id)?;
        let mut recorder = Recorder::reopen(Arc::clone(&self.store), world, id, false)?;
        recorder.opened_by(CLIENT)?;
        let session = Arc::new(Mutex::new(recorder));
        // Another call may have reopened it meanwhile: keep the first.
        Ok(Arc::clone(
            lock(&self.sessions)
                .entry(id.to_string())
                .or_insert(session),
        ))
    }

    fn with<T>(&self, id: &str, f: impl FnOnce(&mut Recorder) -> AppResult<T>) -> AppResult<T> {
        let session = self.session(id)?;
        let mut recorder = lock(&session);
        f(&mut recorder)
    }

    /// Performs one action and returns it once it is durably recorded.
    pub fn step(
        &self,
        id: &str,
        action: Action,
        rationale: Option<String>,
    ) -> AppResult<StepTaken> {
        self.with(id, |r| {
            let recorded = r.step(action, rationale)?;
            Ok(StepTaken::new(&recorded.record, r))
        })
    }

    pub fn annotate(
        &self,
        id: &str,
        idx: u32,
        rationale: Option<String>,
        flag: Option<String>,
    ) -> AppResult<()> {
        self.with(id, |r| Ok(r.annotate(idx, rationale, flag)?))
    }

    pub fn undo(&self, id: &str) -> AppResult<EpisodeView> {
        self.with(id, |r| {
            r.undo()?;
            Ok(EpisodeView::new(r))
        })
    }

    pub fn redo(&self, id: &str) -> AppResult<EpisodeView> {
        self.with(id, |r| {
            r.redo()?;
            Ok(EpisodeView::new(r))
        })
    }

    pub fn pause(&self, id: &str) -> AppResult<EpisodeView> {
        self.with(id, |r| {
            r.pause()?;
            Ok(EpisodeView::new(r))
        })
    }

    pub fn resume(&self, id: &str) -> AppResult<EpisodeView> {
        self.with(id, |r| {
            r.resume()?;
            Ok(EpisodeView::new(r))
        })
    }

    /// Pauses every episode open in this run, so that time with the app
    /// closed is not counted as work. Called when the window closes.
    pub fn pause_all(&self) {
        let sessions: Vec<Session> = lock(&self.sessions).values().cloned().collect();
        for session in sessions {
            let mut r = lock(&session);
            if r.record().status == EpisodeStatus::InProgress {
                // Best effort: the app is closing either way.
                let _ = r.pause();
            }
        }
    }

    /// What the episode changed in the world and what was last said, for the
    /// expert to check before submitting.
    pub fn review(&self, id: &str) -> AppResult<ReviewView> {
        self.with(id, |r| review::build(r))
    }

    pub fn submit(&self, id: &str, final_message: Option<String>) -> AppResult<EpisodeView> {
        let view = self.with(id, |r| {
            r.submit(final_message.filter(|m| !m.trim().is_empty()))?;
            Ok(EpisodeView::new(r))
        })?;
        lock(&self.sessions).remove(id);
        Ok(view)
    }

    pub fn abandon(&self, id: &str) -> AppResult<()> {
        self.with(id, |r| Ok(r.abandon()?))?;
        lock(&self.sessions).remove(id);
        Ok(())
    }

    /// Discards the episode (kept in the store, marked abandoned) and starts
    /// the same task afresh.
    pub fn restart(&self, id: &str) -> AppResult<EpisodeView> {
        let record: EpisodeRecord = self.with(id, |r| {
            r.abandon()?;
            Ok(r.record().clone())
        })?;
        lock(&self.sessions).remove(id);
        self.start(&record.world_id, &record.task_id)
    }
}

/// Parsing world files leaves much freed memory in the allocator; give it
/// back to the system so the app's footprint is what it actually holds.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap pages; it touches no live
    // allocation and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn expert_filter(expert_id: &str) -> EpisodeFilter {
    EpisodeFilter {
        actor_kind: Some("expert".into()),
        actor_id: Some(expert_id.to_string()),
        ..EpisodeFilter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(dir: &Path) -> Service {
        let worlds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/worlds");
        Service::open(dir, Some(worlds)).expect("open the service")
    }

    fn draft(name: &str) -> ExpertInput {
        ExpertInput {
            name: name.into(),
            domain: "Customer support".into(),
            credentials: "Support lead".into(),
            credentials_attested: true,
        }
    }

    #[test]
    fn redo_takes_the_undone_action_again() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        s.save_expert(None, draft("Renee")).unwrap();
        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        assert!(!ep.transitions.can_redo);
        s.step(&ep.id, Action::message("Looking into it."), None)
            .unwrap();
        let undone = s.undo(&ep.id).unwrap();
        assert!(undone.transitions.can_redo && !undone.transitions.can_undo);
        let redone = s.redo(&ep.id).unwrap();
        assert_eq!(
            redone
                .steps
                .iter()
                .map(|st| (st.idx, st.retracted))
                .collect::<Vec<_>>(),
            [(0, true), (1, false)]
        );
        assert_eq!(redone.steps[1].action, Action::message("Looking into it."));
        assert!(redone.transitions.can_undo && !redone.transitions.can_redo);
    }

    #[test]
    fn the_start_screen_lists_only_the_people_of_this_computer_not_pulled_profiles() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let me = s.save_expert(None, draft("Renee")).unwrap();
        // A reviewer's sync brings another expert's episode and profile.
        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        s.step(&ep.id, Action::message("Looking into it."), None)
            .unwrap();
        s.submit(&ep.id, None).unwrap();
        let mut theirs = s.store().trajectory(&ep.id).unwrap();
        theirs.record.id = "pulled-1".into();
        theirs.record.actor = understudy::store::Actor::Expert {
            id: "x-elsewhere".into(),
        };
        let mut other = s.store().expert(&me.id).unwrap();
        other.id = "x-elsewhere".into();
        other.name = "Omar Elsewhere".into();
        s.store()
            .import_pulled(&[other], &[(theirs, Vec::new())])
            .unwrap();
        let names = |all: Vec<ExpertView>| all.into_iter().map(|x| x.name).collect::<Vec<_>>();
        assert_eq!(names(s.local_experts().unwrap()), ["Renee"]);
        assert_eq!(
            names(s.experts().unwrap()),
            ["Omar Elsewhere", "Renee"],
            "the names of others' work stay known"
        );
        let refused = s.select_expert("x-elsewhere").unwrap_err();
        assert_eq!(refused.code, "not_local");
        assert!(
            refused
                .message
                .contains("Omar Elsewhere is someone on your team"),
            "{}",
            refused.message
        );
        assert_eq!(s.current_expert().unwrap().unwrap().id, me.id);
        // The pulled profile still names its work where the work is shown.
        assert_eq!(
            s.store().expert("x-elsewhere").unwrap().name,
            "Omar Elsewhere"
        );
    }

    #[test]
    fn an_expert_records_an_episode_from_start_to_submit() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        let err = s.start("support-desk", "duplicate-charge").unwrap_err();
        assert_eq!(err.code, "no_expert");
        let expert = s.save_expert(None, draft("Renee")).unwrap();
        assert!(expert.current);

        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        assert_eq!(ep.status, EpisodeStatus::InProgress);
        assert!(ep.transitions.can_step && !ep.transitions.can_undo);
        assert!(ep
            .tools
            .iter()
            .any(|t| t.name == "view_invoices" && t.view.as_deref() == Some("invoices")));
        let refund = Action::tool(
            "issue_refund",
            json!({"invoice_id": "INV-24073", "amount": 79.0, "reason": "Duplicate charge", "ticket_id": "T-1042"}),
        );
        let wrong = s.step(&ep.id, Action::message("oops"), None).unwrap();
        assert!(wrong.step.ok);
        assert!(wrong.transitions.can_undo);
        let undone = s.undo(&ep.id).unwrap();
        assert!(undone.steps[0].retracted);
        assert!(!undone.transitions.can_undo);
        let step = s
            .step(&ep.id, refund, Some("duplicate".into()))
            .unwrap()
            .step;
        assert!(step.ok, "{}", step.text);
        assert_eq!(step.rationale.as_deref(), Some("duplicate"));
        s.annotate(
            &ep.id,
            step.idx,
            Some("Two payments for one invoice".into()),
            Some("check".into()),
        )
        .unwrap();

        // The catalogue shows it in progress; closing the window pauses it.
        let catalog = s.catalog().unwrap();
        let support_desk = |c: &Catalog| {
            c.worlds
                .iter()
                .find(|w| w.id == "support-desk")
                .cloned()
                .expect("the bundled support desk")
        };
        let task = support_desk(&catalog)
            .tasks
            .into_iter()
            .find(|t| t.id == "duplicate-charge")
            .unwrap();
        assert_eq!(task.progress.open_episode.as_deref(), Some(ep.id.as_str()));
        s.pause_all();
        let paused = s.episode(&ep.id).unwrap();
        assert_eq!(paused.status, EpisodeStatus::Paused);
        assert!(paused.transitions.can_resume && !paused.transitions.can_step);
        s.resume(&ep.id).unwrap();

        // The review shows field-level changes against the seeded world.
        s.step(&ep.id, Action::message("Refunded $79.00."), None)
            .unwrap();
        let review = s.review(&ep.id).unwrap();
        assert_eq!(review.final_message.as_deref(), Some("Refunded $79.00."));
        assert_eq!(
            (review.steps_kept, review.steps_undone, review.messages_sent),
            (2, 1, 1)
        );
        let invoices = review
            .tables
            .iter()
            .find(|t| t.table == "invoices")
            .unwrap();
        assert_eq!(
            invoices.label.as_deref(),
            Some("Invoices"),
            "the table's title from labels.toml"
        );
        let inv = &invoices.changed[0];
        assert_eq!(inv.key, "INV-24073");
        assert_eq!(inv.fields.len(), 1);
        assert_eq!(inv.fields[0].field, "refunded_cents");
        assert_eq!(
            inv.fields[0].label.as_deref(),
            Some("Refunded so far"),
            "labelled from the world's labels.toml"
        );
        assert_eq!(
            (inv.fields[0].before.clone(), inv.fields[0].after.clone()),
            (json!(0), json!(7900))
        );
        assert!(review
            .tables
            .iter()
            .any(|t| t.table == "refunds" && t.added.len() == 1));

        let submitted = s.submit(&ep.id, None).unwrap();
        assert_eq!(submitted.status, EpisodeStatus::Submitted);
        assert!(!submitted.transitions.can_submit);
        assert!(s.open_episodes().unwrap().is_empty());
        let task = support_desk(&s.catalog().unwrap())
            .tasks
            .iter()
            .find(|t| t.id == "duplicate-charge")
            .cloned()
            .unwrap();
        assert_eq!(task.progress.submitted, 1);
    }

    #[test]
    fn a_second_run_reopens_the_episode_by_replay() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let s = service(dir.path());
            s.save_expert(None, draft("Hugo")).unwrap();
            let ep = s.start("support-desk", "partial-refund-remaining").unwrap();
            s.step(
                &ep.id,
                Action::tool("get_ticket", json!({"ticket_id": "T-1046"})),
                None,
            )
            .unwrap();
            ep.id
        };
        let s = service(dir.path());
        assert_eq!(
            s.current_expert().unwrap().map(|e| e.name).as_deref(),
            Some("Hugo")
        );
        let open = s.open_episodes().unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!((open[0].id.as_str(), open[0].steps), (id.as_str(), 1));
        let ep = s.episode(&id).unwrap();
        assert_eq!(ep.steps.len(), 1);
        let next = s
            .step(
                &id,
                Action::tool("lookup_customer", json!({"customer_id": "C-1035"})),
                None,
            )
            .unwrap();
        assert_eq!(next.step.idx, 1);
    }

    #[test]
    fn the_window_gets_argument_problems_and_listings_as_data() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        s.save_expert(None, draft("Ines")).unwrap();
        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        let bad = s
            .step(
                &ep.id,
                Action::tool(
                    "issue_refund",
                    json!({"invoice_id": "24073", "amount": "lots", "reason": "Duplicate charge"}),
                ),
                None,
            )
            .unwrap()
            .step;
        let error = bad.error.expect("an invalid-arguments error");
        assert_eq!(
            serde_json::to_value(error.code).unwrap(),
            "invalid_arguments"
        );
        // The text stays the engine's; the problems carry the same as data.
        assert_eq!(bad.text, format!("Error: {}", error.message));
        let mut problems: Vec<(String, String, serde_json::Value)> = error
            .problems
            .into_iter()
            .map(|p| (p.field, p.keyword, p.expected))
            .collect();
        problems.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            problems,
            vec![
                ("amount".into(), "type".into(), json!("number")),
                ("invoice_id".into(), "pattern".into(), json!("^INV-[0-9]+$")),
                ("ticket_id".into(), "required".into(), json!(null)),
            ]
        );

        // A view's listing has exactly the shape the window's type declares.
        let listing = s
            .step(
                &ep.id,
                Action::tool("view_invoices", json!({"limit": 2})),
                None,
            )
            .unwrap()
            .step;
        assert!(listing.ok, "{}", listing.text);
        let typed: understudy::observation::ViewListing =
            serde_json::from_value(listing.content.clone()).expect("a listing");
        assert_eq!(typed.rows.len(), 2);
        assert_eq!(serde_json::to_value(&typed).unwrap(), listing.content);
    }

    #[test]
    fn the_tau_records_lists_are_the_experts_and_their_reads_are_steps() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        s.save_expert(None, draft("Maya")).unwrap();
        let world = s.world_detail("tau-airline").unwrap();
        let lists: Vec<(&str, bool)> = world
            .views
            .iter()
            .map(|v| (v.name.as_str(), v.expert_only))
            .collect();
        assert_eq!(
            lists,
            vec![("users", true), ("reservations", true), ("flights", true)]
        );
        let task = s
            .catalog()
            .unwrap()
            .worlds
            .into_iter()
            .find(|w| w.id == "tau-airline")
            .unwrap()
            .tasks[0]
            .id
            .clone();
        let ep = s.start("tau-airline", &task).unwrap();
        // The window offers the expert the lists; an agent's tools stay τ-bench's.
        for list in ["view_users", "view_reservations", "view_flights"] {
            assert!(ep.tools.iter().any(|t| t.name == list), "{list}");
        }
        let agent = s.world("tau-airline").unwrap().tool_specs();
        assert!(agent.iter().all(|t| !t.name.starts_with("view_")));
        let listing = s
            .step(
                &ep.id,
                Action::tool("view_users", json!({"limit": 5})),
                None,
            )
            .unwrap()
            .step;
        assert!(listing.ok, "{}", listing.text);
        let stored = s.store().steps(&ep.id).unwrap();
        assert_eq!(stored.len(), 1);
        assert_eq!(
            stored[0].action,
            Action::tool("view_users", json!({"limit": 5}))
        );
        // Opened again, the read is there with its result.
        let reopened = s.episode(&ep.id).unwrap();
        assert!(reopened.steps[0].ok);
    }

    #[test]
    fn worlds_stay_in_memory_only_while_used() {
        let dir = tempfile::tempdir().unwrap();
        let s = service(dir.path());
        s.save_expert(None, draft("Renee")).unwrap();
        let catalog = s.catalog().unwrap();
        assert!(catalog.worlds.iter().any(|w| w.id == "tau-retail"));
        // Listed, checked, and not kept.
        for w in &catalog.worlds {
            assert!(!s.shelf().is_loaded(&w.id), "{} is still loaded", w.id);
        }
        let ep = s.start("support-desk", "duplicate-charge").unwrap();
        assert!(s.shelf().is_loaded("support-desk"));
        // Another world's screen: the open episode keeps its own world.
        s.world_detail("tau-retail").unwrap();
        assert!(s.shelf().is_loaded("tau-retail") && s.shelf().is_loaded("support-desk"));
        // Once the episode is done, only the world asked for last stays.
        s.step(&ep.id, Action::message("Looking into it."), None)
            .unwrap();
        s.world_detail("tau-airline").unwrap();
        s.abandon(&ep.id).unwrap();
        assert!(!s.shelf().is_loaded("support-desk") && !s.shelf().is_loaded("tau-retail"));
        assert!(s.shelf().is_loaded("tau-airline"));
        // The resume list names a world's episodes from its listing.
        let again = s.start("support-desk", "duplicate-charge").unwrap();
        let open = s.open_episodes().unwrap();
        assert_eq!(open[0].id, again.id);
        assert_eq!(open[0].world_name, "Brightline Support Desk");
        assert_eq!(open[0].task_title, "Refund a duplicate March charge");
        // A world that is not on the shelf is named as such.
        let missing = s.world("no-such-world").unwrap_err();
        assert_eq!(missing.code, "not_found");
    }

    #[test]
    fn a_broken_worlds_folder_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let s = Service::open(dir.path(), Some(dir.path().join("missing"))).unwrap();
        let catalog = s.catalog().unwrap();
        assert!(catalog.worlds.is_empty());
        assert!(catalog.problems[0].message.contains("could not be read"));
        let s = Service::open(dir.path(), None).unwrap();
        assert!(s.catalog().unwrap().problems[0]
            .message
            .contains("No worlds folder"));
    }
}
