//! Everything that touches SQLite directly: the sandbox, the operation
//! budget and size limits, the deterministic built-in functions, conversion between SQLite
//! and JSON values, and SQLite's failures in words.

pub mod budget;
pub mod errors;
pub mod functions;
pub mod limits;
pub mod sandbox;
pub mod values;

pub use budget::OperationBudget;
pub use errors::{is_bound, sql_message};
pub use sandbox::{Sandbox, SandboxMode};
