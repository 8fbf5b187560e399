//! The terminal UI: driven by actions without a terminal, rendered to text snapshots,
//! fitted on every screen, on a census-shaped hierarchy, and the real binary in tmux.
//!
//! One test executable (see docs/development.md): a new file here is one `mod` line.

#[path = "../common/mod.rs"]
mod common;

mod canned;
mod input_edges;
mod plan_edits;
mod report_key;
mod tui_fit;
mod tui_flow;
mod tui_scale;
mod tui_snapshots;
mod tui_tmux;
mod tui_zcdp;
mod unmeasured;
