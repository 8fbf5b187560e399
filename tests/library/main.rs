//! The library through its public API: estimators, consistency, loading, the noise
//! sampler, robustness on foreign shapes, and the fuzzers' findings replayed.
//!
//! One test executable (see docs/development.md): a new file here is one `mod` line.

#[path = "../common/mod.rs"]
mod common;

mod accuracy;
mod consistency;
mod estimators;
mod fuzz_regressions;
mod gaussian_sampler;
mod layers;
mod load_errors;
mod noise_sampler;
mod parquet_input;
mod robustness;
mod sums;
mod uncertainty;
mod zcdp;
