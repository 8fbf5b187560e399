//! `names.csv` (optional): display names for regions.
//!
//! Columns `region,name`. A region is given by its display id (`US/06`) or, for a
//! leaf, by its leaf code (`06037`); when a code could be read both ways the display id
//! wins. Each region is named at most once (naming it once by display id and once by
//! leaf code counts as twice); names are trimmed and may not be empty. Names of one
//! parent's children that look the same ([`super::look_alike`]) are returned for a
//! warning.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::Path;

use super::csv_input::{CsvFile, shown, shown_name};
use super::load::{LoadError, LoadErrorKind, LoadProgress};
use super::look_alike::LookAlikes;
use super::{Hierarchy, InputFile, NodeId};

/// Reads `dir/names.csv` and attaches the names to `hierarchy`'s nodes; returns the
/// file and the names that look alike.
pub(crate) fn apply(
    dir: &Path,
    hierarchy: &mut Hierarchy,
    progress: &mut dyn FnMut(LoadProgress) -> ControlFlow<()>,
) -> Result<(InputFile, LookAlikes), LoadError> {
    let mut f = CsvFile::open(dir, "names.csv", "naming the columns region,name", progress)?;
    let [region_col, name_col] = f.columns(["region", "name"], "")?;
    let mut named: HashMap<NodeId, u64> = HashMap::new();
    let mut names: Vec<(NodeId, String, u64)> = Vec::new();
    while f.next_row()? {
        let region = f.text(region_col)?;
        let Some(id) = hierarchy.find(region) else {
            let example = match hierarchy.node(hierarchy.root()).children().next() {
                Some(child) => hierarchy.display_id(child),
                None => hierarchy.display_id(hierarchy.root()),
            };
            return Err(f.error(
                Some(region_col),
                LoadErrorKind::UnknownNamedRegion {
                    region: shown(region.as_bytes()),
                    example,
                },
            ));
        };
        if let Some(&first_line) = named.get(&id) {
            return Err(f.error(
                Some(region_col),
                LoadErrorKind::DuplicateName {
                    region: shown(region.as_bytes()),
                    node: shown_name(&hierarchy.display_id(id)),
                    first_line,
                },
            ));
        }
        let name = f.text(name_col)?;
        if let Err(problem) = super::text::check_label(name) {
            return Err(f.error(
                Some(name_col),
                LoadErrorKind::BadText {
                    what: "name",
                    text: shown_name(name),
                    problem,
                },
            ));
        }
        if name.is_empty() {
            return Err(f.error(
                Some(name_col),
                LoadErrorKind::EmptyName {
                    region: shown(region.as_bytes()),
                },
            ));
        }
        named.insert(id, f.line());
        names.push((id, name.to_string(), f.line()));
    }
    let file = f.finish()?;
    let alike = super::look_alike::names(hierarchy, &names);
    // Applied only once the whole file is valid: nothing half-loaded.
    for (id, name, _) in names {
        hierarchy.set_name(id, name);
    }
    Ok((file, alike))
}
