//! The team hub: one server, on PostgreSQL, that many experts' desktop apps
//! sync to, reviewers review through, and engineers export from.
//!
//! - [`serve`] runs the HTTP API (`docs/hub.md`) over a database it
//!   migrates first ([`db`]).
//! - [`people`] is the admin's bootstrap (add a person, issue a token),
//!   usable straight on the database before any server runs.
//! - [`client`] is the other side: pushing a local store's episodes, pulling
//!   assignments and reviews, reviewing and exporting, as blocking calls the
//!   CLI and the desktop app share.
//! - [`pull`] is what an app takes into its store, through the hub's change
//!   feeds (only what changed since the store's cursor; see `changes.rs`).
//!
//! **Invariant:** a push stores a batch whole or not at all (one
//! transaction), and is idempotent by episode and step id: a retry after a
//! crash or a dropped connection adds nothing twice and loses nothing, and a
//! step whose recorded content differs from the hub's copy is refused.

mod assignments;
mod changes;
pub mod client;
pub mod db;
mod episodes;
mod error;
mod graders;
mod grades;
mod http;
pub mod outbox;
pub mod people;
pub mod pull;
mod push;
pub mod roles;
pub mod wire;
pub mod work;
mod worlds;

pub use error::{codes, ApiError, HubError};
pub use http::{
    router, serve, serve_listener, HubConfig, Limits, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
};
pub use roles::Role;
