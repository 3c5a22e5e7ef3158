//! Feature unification for the workspace, managed by `cargo hakari`.
//!
//! Every member depends on this crate (the engine only as a
//! dev-dependency), which asks for the union of the features any build of
//! the workspace turns on. So `cargo test -p understudy-hub`, `cargo build
//! -p understudy-cli` and the app's build all resolve each shared
//! dependency the same way and reuse one compiled copy, instead of
//! recompiling tokio, serde and the rest for every different selection of
//! packages (which made CI's clean build compile much of the tree twice).
//!
//! After changing a dependency, run `cargo hakari generate` and commit the
//! result. The crate has no code.
