//! # Understudy engine
//!
//! Understudy turns expert behaviour in simulated jobs into training data.
//! This crate is the headless engine; the desktop app (`src-tauri`) and the
//! `understudy` CLI are thin front ends over it.
//!
//! **Key decision: a world is data.** A world is a folder with a SQLite
//! schema, seed data, tools declared in TOML (JSON-Schema parameters, SQL
//! guards and bodies, optional sandboxed Rhai steps), views, a policy and
//! tasks. No world ships Rust code, so worlds can be authored, reviewed,
//! versioned and hashed like documents. See `docs/world-format.md`.
//!
//! Typical flow:
//!
//! ```no_run
//! use std::sync::Arc;
//! use understudy::{Action, Episode, World};
//!
//! let world = Arc::new(World::load("fixtures/worlds/support-desk")?);
//! let mut episode = Episode::new(Arc::clone(&world))?;
//! let first = episode.reset("duplicate-charge", 0)?;
//! println!("customer says: {}", first.observation.text);
//! let out = episode.step(&Action::tool("lookup_customer", serde_json::json!({"email": "dana@example.com"})))?;
//! println!("{}", out.observation.text);
//! println!("{:?}", episode.changes()?);
//! # Ok::<(), understudy::Error>(())
//! ```
//!
//! Modules:
//! - [`diagnostics`], [`error`]: problems found at load, and the error type;
//! - [`world`]: loading and validating world folders;
//! - [`episode`]: reset/step, the state diff;
//! - [`action`], [`observation`]: what goes in and comes out of a step;
//! - [`sql`]: the sandbox and deterministic built-ins;
//! - [`script`]: sandboxed Rhai procedural steps;
//! - `python` (internal): Python-exact number formatting, rounding and
//!   `json.dumps`, which τ-bench observations depend on.

pub mod action;
pub mod consensus;
pub mod diagnostics;
pub mod episode;
pub mod error;
pub mod export;
pub mod grading;
pub mod observation;
mod ordered;
pub mod output_file;
pub mod plugin;
pub(crate) mod python;
pub mod recorder;
pub mod replay;
pub mod rubric;
pub mod script;
pub mod sql;
pub mod store;
pub mod template;
pub mod trajectory;
pub mod world;

pub use action::Action;
pub use episode::{Changes, Episode, ResetOutcome, StepOutcome};
pub use error::{Error, Result};
pub use observation::Observation;
pub use world::World;
