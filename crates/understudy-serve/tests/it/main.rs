//! The agent server's integration tests, in one crate: a real HTTP server
//! on loopback over a real SQLite store (`support`), the protocol and
//! recording (`serve`), concurrent episodes (`load`), OpenEnv's `/ws`
//! (`ws`) and MCP over stdio and `/mcp` (`mcp`).

mod fuzz;
mod hostile;
mod load;
mod mcp;
mod serve;
mod support;
mod ws;
