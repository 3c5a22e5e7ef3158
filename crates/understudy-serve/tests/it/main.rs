//! The agent server's integration tests, in one crate: a real HTTP server
//! on loopback over a real SQLite store (`support`), the protocol and
//! recording (`serve`), and concurrent episodes (`load`).

mod fuzz;
mod hostile;
mod load;
mod serve;
mod support;
mod ws;
