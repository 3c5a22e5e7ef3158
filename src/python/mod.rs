//! TEMPORARY stub until the python module lands.
pub mod calc;
pub mod json;
pub mod number;
