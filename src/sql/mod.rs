//! Everything that touches SQLite directly: the sandbox, the deterministic
//! built-in functions, conversion between SQLite and JSON values, and
//! SQLite's failures in words.

pub mod errors;
pub mod functions;
pub mod sandbox;
pub mod values;

pub use errors::sql_message;
pub use sandbox::{Sandbox, SandboxMode};
