//! The worlds the app offers. Each folder is loaded once at start-up, to
//! check it and to list its tasks; after that a world stays in memory only
//! while something uses it (an open episode, or the screen that asked for
//! it last). A loaded world is its parsed files and seeded database, tens
//! of MB for the τ-bench worlds, and an expert works in one world at a
//! time: holding every world for the whole run was most of what the app
//! process added to a blank page (tests-e2e/test_memory.py).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use indexmap::IndexMap;
use understudy::World;

use crate::error::{AppError, AppResult};
use crate::paths;
use crate::worlds::{WorldProblem, WorldSummary};

/// The worlds found at start-up, by id.
pub(crate) struct Shelf {
    dir: Option<PathBuf>,
    entries: IndexMap<String, Entry>,
    problems: Vec<WorldProblem>,
    /// The world asked for last, kept loaded so that moving between its
    /// screens does not read it again.
    recent: Mutex<Option<Arc<World>>>,
}

struct Entry {
    folder: PathBuf,
    /// Its listing as the start screen shows it, without anyone's progress.
    summary: WorldSummary,
    /// The world while anything holds it; loading it again is only needed
    /// once nothing does.
    live: Mutex<Weak<World>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shelf {
    /// Loads every world folder under `dir` in parallel and keeps their
    /// listings; a world that fails to load is listed with a plain
    /// explanation instead of stopping the others.
    pub fn load(dir: Option<&Path>) -> Shelf {
        let empty = |dir: Option<&Path>, problem: WorldProblem| Shelf {
            dir: dir.map(Path::to_path_buf),
            entries: IndexMap::new(),
            problems: vec![problem],
            recent: Mutex::new(None),
        };
        let Some(dir) = dir else {
            return empty(None, WorldProblem {
                folder: String::new(),
                message: "No worlds folder was found. Start the app with --worlds-dir pointing at a folder of worlds.".into(),
            });
        };
        let folders = match paths::world_dirs(dir) {
            Ok(f) => f,
            Err(e) => {
                return empty(
                    Some(dir),
                    WorldProblem {
                        folder: dir.display().to_string(),
                        message: format!("The worlds folder could not be read ({e})."),
                    },
                )
            }
        };
        let results: Vec<(PathBuf, understudy::Result<World>)> = std::thread::scope(|s| {
            let handles: Vec<_> = folders
                .iter()
                .map(|f| (f.clone(), s.spawn(move || World::load(f))))
                .collect();
            handles
                .into_iter()
                .map(|(f, h)| {
                    let result = h.join().unwrap_or_else(|_| {
                        Err(understudy::Error::Other("loading crashed".into()))
                    });
                    (f, result)
                })
                .collect()
        });
        let mut entries = IndexMap::new();
        let mut problems = Vec::new();
        for (folder, result) in results {
            match result {
                Ok(w) => {
                    let summary = WorldSummary::new(&w);
                    entries.insert(
                        w.meta.id.clone(),
                        Entry {
                            folder,
                            summary,
                            live: Mutex::new(Weak::new()),
                        },
                    );
                }
                Err(e) => problems.push(WorldProblem {
                    folder: folder.display().to_string(),
                    message: AppError::from(e).message,
                }),
            }
        }
        Shelf {
            dir: Some(dir.to_path_buf()),
            entries,
            problems,
            recent: Mutex::new(None),
        }
    }

    /// The folder the worlds were found in, if one was.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The folders that did not load, each with a plain explanation.
    pub fn problems(&self) -> &[WorldProblem] {
        &self.problems
    }

    /// Every world's listing, in folder order.
    pub fn summaries(&self) -> impl Iterator<Item = &WorldSummary> {
        self.entries.values().map(|e| &e.summary)
    }

    /// One world's listing: its name and its tasks' titles, without
    /// loading it.
    pub fn summary(&self, id: &str) -> Option<&WorldSummary> {
        self.entries.get(id).map(|e| &e.summary)
    }

    /// The world `id`, loaded again from its folder if nothing holds it.
    pub fn world(&self, id: &str) -> AppResult<Arc<World>> {
        let entry = self
            .entries
            .get(id)
            .ok_or_else(|| AppError::not_found(format!("The world \"{id}\"")))?;
        let world = {
            // Held while loading, so two screens asking at once load it once.
            let mut live = lock(&entry.live);
            match live.upgrade() {
                Some(w) => w,
                None => {
                    let w = Arc::new(World::load(&entry.folder)?);
                    *live = Arc::downgrade(&w);
                    w
                }
            }
        };
        *lock(&self.recent) = Some(Arc::clone(&world));
        Ok(world)
    }

    /// Whether the world `id` is in memory now (for tests of what is kept).
    #[cfg(test)]
    pub fn is_loaded(&self, id: &str) -> bool {
        self.entries
            .get(id)
            .is_some_and(|e| lock(&e.live).strong_count() > 0)
    }
}
