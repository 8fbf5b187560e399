//! What the operator can ask for: every key becomes an [`Action`] through the keymap
//! ([`super::keymap`]), and [`super::app::update`] is the only place actions change state.
//!
//! Actions are named in kebab case (`next-screen`) in `keymap.toml`; a [`Context`] is a
//! section of that file: the keys of one screen or overlay, or `global`.

use std::fmt;

macro_rules! actions {
    ($($variant:ident = $name:literal : $description:literal,)*) => {
        /// An operator's request. All but [`Action::Insert`] can be bound to keys.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Action {
            $($variant,)*
            /// Types a character into the text field being edited (not bindable).
            Insert(char),
        }

        impl Action {
            /// Every bindable action.
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name used in `keymap.toml`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                    Action::Insert(_) => "insert",
                }
            }

            /// One line for the help overlay.
            pub fn description(self) -> &'static str {
                match self {
                    $(Action::$variant => $description,)*
                    Action::Insert(_) => "Type a character",
                }
            }
        }
    };
}

actions! {
    Quit = "quit": "Quit coco (asks first when a drawn release is undecided)",
    Interrupt = "interrupt": "Stop coco at once, as a signal does (an undecided draw is recorded as discarded; exit status 130)",
    ToggleExact = "toggle-exact": "Show ε exactly (fractions, every digit) or as short decimals (≈ when rounded)",
    Help = "help": "Show or close this help",
    NextScreen = "next-screen": "Go to the next screen",
    PrevScreen = "prev-screen": "Go to the previous screen",
    ScreenDataset = "screen-dataset": "Dataset screen: levels, nodes, groups",
    ScreenHierarchy = "screen-hierarchy": "Hierarchy screen: regions and their histograms",
    ScreenBudget = "screen-budget": "Budget screen: ε per level, methods, K",
    ScreenPreview = "screen-preview": "Preview screen: error of the plan over trials",
    ScreenTradeoff = "screen-tradeoff": "Trade-off screen: what more or less ε buys",
    ScreenRelease = "screen-release": "Release screen: draw, approve and export",
    OpenDataset = "open-dataset": "Open another dataset",
    CancelLoad = "cancel-load": "Stop loading a dataset",
    Up = "up": "Move the selection up",
    Down = "down": "Move the selection down",
    Left = "left": "Move left (previous level or column)",
    Right = "right": "Move right (next level or column)",
    PageUp = "page-up": "Move up one page",
    PageDown = "page-down": "Move down one page",
    First = "first": "Go to the first row",
    Last = "last": "Go to the last row",
    ToggleNode = "toggle-node": "Expand or collapse the selected region",
    Expand = "expand": "Expand the selected region (or go to its first child)",
    Collapse = "collapse": "Collapse the selected region (or go to its parent)",
    Search = "search": "Find a region by code, id or name",
    NextMatch = "next-match": "Go to the next region matching the search",
    LogScale = "log-scale": "Switch the histogram bars between linear and log scale",
    FewerSizes = "fewer-sizes": "Show fewer sizes (group the rest into \"N+\")",
    MoreSizes = "more-sizes": "Show more sizes before the \"N+\" row",
    EpsilonUp = "epsilon-up": "Raise the selected level's ε one step",
    EpsilonDown = "epsilon-down": "Lower the selected level's ε one step",
    TypeEpsilon = "type-epsilon": "Type the selected level's ε (decimal or fraction like 1/3)",
    TypeTotal = "type-total": "Type the total ε (the preset splits it over the levels)",
    HoldLevel = "hold-level": "Hold or release the selected level's share: changes elsewhere rebalance only the levels not held",
    ToggleMethod = "toggle-method": "Cycle the selected level's method: hc, hc+tail, hg",
    SetTail = "set-tail": "Type the selected level's tail: L or L,m (or none)",
    PresetUniform = "preset-uniform": "Split the total ε evenly over the levels",
    PresetGeometric = "preset-geometric": "Split the total ε geometrically (lower levels get more)",
    MethodsDefault = "methods-default": "Give every level the method coco chooses from public figures (as coco plan does)",
    RatioUp = "ratio-up": "Geometric preset: raise the ratio between levels",
    RatioDown = "ratio-down": "Geometric preset: lower the ratio between levels",
    SetMaxSize = "set-max-size": "Type the public bound K on a group's size",
    EstimateMaxSize = "estimate-max-size": "Estimate K privately instead, with its own ε",
    ToggleDefinition = "toggle-definition": "Switch the plan between pure ε-DP and ρ-zCDP (every budget keeps its value)",
    ToggleConsistency = "toggle-consistency": "Switch the consistency step (topdown / wls)",
    ToggleMerge = "toggle-merge": "Switch the topdown merge rule (weighted / average)",
    SavePlan = "save-plan": "Save the plan as a release TOML file",
    LoadPlan = "load-plan": "Load a plan from a release TOML file",
    Run = "run": "Start the run (latest request wins: a new run cancels the old)",
    Cancel = "cancel": "Cancel the work in progress",
    TypeTrials = "type-trials": "Type the number of trials",
    ToggleSeed = "toggle-seed": "Switch previews between a fixed seed and OS randomness",
    PrevNode = "prev-node": "Overlay the previous region",
    NextNode = "next-node": "Overlay the next region",
    ToggleView = "toggle-view": "Switch the view (bars / cumulative lines, sweep / frontier)",
    ApplyRecommendation = "apply-recommendation": "Apply the Trade-off search's recommended budgets and methods",
    ChooseProxy = "choose-proxy": "Preview on a public proxy (synthetic, or a dataset with the same hierarchy) or on the confidential data",
    Draw = "draw": "Draw one release with fresh OS randomness (spends ε)",
    Approve = "approve": "Approve the drawn release and export it to a directory",
    Discard = "discard": "Discard the drawn release (its ε stays spent)",
    ToggleFormat = "toggle-format": "Cycle the export's format: CSV, Parquet, or both (as coco release --format)",
    WriteReport = "write-report": "Write the exported release's public report beside its directory (as coco report)",
    Submit = "submit": "Accept",
    Complete = "complete": "Complete the path",
    Backspace = "backspace": "Delete the character before the cursor",
    Delete = "delete": "Delete the character under the cursor",
    CursorLeft = "cursor-left": "Move the cursor left",
    CursorRight = "cursor-right": "Move the cursor right",
    CursorHome = "cursor-home": "Move the cursor to the start",
    CursorEnd = "cursor-end": "Move the cursor to the end",
    WordLeft = "word-left": "Move the cursor to the start of the word",
    WordRight = "word-right": "Move the cursor past the end of the word",
    DeleteWord = "delete-word": "Delete the word before the cursor",
    DeleteToStart = "delete-to-start": "Delete everything before the cursor",
    DeleteToEnd = "delete-to-end": "Delete everything from the cursor to the end",
    Yes = "yes": "Confirm",
    No = "no": "Do not confirm",
    Close = "close": "Close",
    Glossary = "glossary": "Show the glossary of the words the screens use (or the keys again)",
}

impl Action {
    /// The bindable action with this name.
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A section of the keymap: where a key applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Everywhere no screen or overlay binding takes the key.
    Global,
    Dataset,
    Hierarchy,
    Budget,
    Preview,
    Tradeoff,
    Release,
    Help,
    /// Editing a text field: printable characters are typed, these keys edit.
    Input,
    /// The dataset picker (a text field with the recent datasets below it).
    Picker,
    /// A yes/no question.
    Confirm,
}

impl Context {
    pub const ALL: &'static [Context] = &[
        Context::Global,
        Context::Dataset,
        Context::Hierarchy,
        Context::Budget,
        Context::Preview,
        Context::Tradeoff,
        Context::Release,
        Context::Help,
        Context::Input,
        Context::Picker,
        Context::Confirm,
    ];

    /// The section name in `keymap.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Dataset => "dataset",
            Context::Hierarchy => "hierarchy",
            Context::Budget => "budget",
            Context::Preview => "preview",
            Context::Tradeoff => "tradeoff",
            Context::Release => "release",
            Context::Help => "help",
            Context::Input => "input",
            Context::Picker => "picker",
            Context::Confirm => "confirm",
        }
    }

    pub fn from_name(name: &str) -> Option<Context> {
        Context::ALL.iter().copied().find(|c| c.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, a) in Action::ALL.iter().enumerate() {
            assert_eq!(Action::from_name(a.name()), Some(*a));
            assert!(
                Action::ALL[..i].iter().all(|b| b.name() != a.name()),
                "{a} twice"
            );
            assert!(!a.description().is_empty());
        }
        assert_eq!(Action::from_name("insert"), None);
        for c in Context::ALL {
            assert_eq!(Context::from_name(c.name()), Some(*c));
        }
    }
}
