//! The bodies of coco's fuzz targets, shared with the regression tests
//! (`tests/library/fuzz_regressions.rs` includes `targets.rs` directly).

pub mod targets;
