//! Python 3.11 semantics that τ-bench observations depend on.
//!
//! The reference environments are Python programs: every observation an
//! agent sees is produced by `json.dumps`, `str(float)`, `round(x, 2)` or a
//! Python exception message. Reproducing those byte for byte is what lets a
//! declarative engine replay τ-bench exactly, so this module keeps them in
//! one place, independent of the rest of the engine:
//!
//! * [`number`]: `repr(float)`, `round(x, n)` and `str()` of JSON numbers;
//! * [`json`]: `json.dumps` with default settings;
//! * [`calc`]: the `calculate` tool (`eval` of an arithmetic expression),
//!   including CPython's exact error messages.

pub mod calc;
pub mod json;
pub mod number;

mod bigint;
