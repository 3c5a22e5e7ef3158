//! Everything that touches SQLite directly: the sandbox, the deterministic
//! built-in functions, and conversion between SQLite and JSON values.

pub mod functions;
pub mod sandbox;
pub mod values;

pub use sandbox::{Sandbox, SandboxMode};
