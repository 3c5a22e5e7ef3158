//! (being written) See docs/ARCHITECTURE.md.
