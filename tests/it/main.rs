//! The engine's integration tests, in one crate so the engine links once.
//! Each module is one area; shared fixtures come from `understudy-testkit`.

mod all_arguments;
mod bounds;
mod determinism;
mod episode;
mod expert_views;
mod fuzz;
mod golden;
mod grading;
mod guards_see_calls;
mod plugin;
mod rubric_cheats;
mod rubric_judge;
mod rubric_lint;
mod rubric_score;
mod rubric_worlds;
mod sandbox;
mod simulation;
mod store;
mod store_edges;
mod tau_conformance;
mod tidy;
mod world_load;
