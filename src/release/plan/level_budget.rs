//! A level's budget: measured with an ε or a ρ, or left unmeasured (`epsilon = "0"`).

use std::fmt;

use super::*;
use crate::privacy::{BudgetError, BudgetProblem, Epsilon, Rho};

/// What a level spends. A [`Loss`] is positive by construction, so a level that gets no
/// budget is not a zero `Loss` but [`LevelBudget::Unmeasured`]: its regions get no
/// noisy measurement and their estimates come from their children (a bottom-up plan
/// leaves every level above the leaves unmeasured). It keeps the plan's definition, so
/// the plan file writes it back as `epsilon = "0"` or `rho = "0"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LevelBudget {
    Measured(Loss),
    Unmeasured(Definition),
}

impl LevelBudget {
    /// Reads a budget of `definition`: an exact zero (`0`, `0.0`, `"0"`, `"0/3"`) is
    /// [`LevelBudget::Unmeasured`]; anything else must be a positive budget, and a
    /// negative one is refused with the budget's own message.
    pub fn parse(definition: Definition, text: &str) -> Result<LevelBudget, BudgetError> {
        match Loss::parse(definition, text) {
            Ok(loss) => Ok(LevelBudget::Measured(loss)),
            Err(e) if e.problem == BudgetProblem::NotPositive && !text.trim().starts_with('-') => {
                Ok(LevelBudget::Unmeasured(definition))
            }
            Err(e) => Err(e),
        }
    }

    /// The level's loss, when it is measured.
    pub fn loss(&self) -> Option<&Loss> {
        match self {
            LevelBudget::Measured(l) => Some(l),
            LevelBudget::Unmeasured(_) => None,
        }
    }

    pub fn is_measured(&self) -> bool {
        matches!(self, LevelBudget::Measured(_))
    }

    pub fn definition(&self) -> Definition {
        match self {
            LevelBudget::Measured(l) => l.definition(),
            LevelBudget::Unmeasured(d) => *d,
        }
    }

    /// The same budget restated in `definition` (its value kept).
    pub fn restated(&self, definition: Definition) -> LevelBudget {
        match self {
            LevelBudget::Measured(l) => LevelBudget::Measured(Loss::of(definition, &l.amount())),
            LevelBudget::Unmeasured(_) => LevelBudget::Unmeasured(definition),
        }
    }

    /// The exact value as text: the loss's (`"1/2"`), or `"0"`.
    pub fn exact(&self) -> String {
        match self {
            LevelBudget::Measured(l) => l.exact(),
            LevelBudget::Unmeasured(_) => "0".to_string(),
        }
    }

    /// `ε = 1/2`, or `ε = 0 (not measured)`.
    pub fn labelled(&self) -> String {
        match self {
            LevelBudget::Measured(l) => l.labelled(),
            LevelBudget::Unmeasured(d) => format!("{} = 0 (not measured)", d.symbol()),
        }
    }

    /// An approximation for display and shares: 0 when unmeasured.
    pub fn to_f64(&self) -> f64 {
        self.loss().map_or(0.0, Loss::to_f64)
    }
}

impl fmt::Display for LevelBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.labelled())
    }
}

impl From<Loss> for LevelBudget {
    fn from(l: Loss) -> LevelBudget {
        LevelBudget::Measured(l)
    }
}

impl From<&Loss> for LevelBudget {
    fn from(l: &Loss) -> LevelBudget {
        LevelBudget::Measured(l.clone())
    }
}

impl From<Epsilon> for LevelBudget {
    fn from(e: Epsilon) -> LevelBudget {
        LevelBudget::Measured(e.into())
    }
}

impl From<&Epsilon> for LevelBudget {
    fn from(e: &Epsilon) -> LevelBudget {
        LevelBudget::Measured(e.into())
    }
}

impl From<Rho> for LevelBudget {
    fn from(r: Rho) -> LevelBudget {
        LevelBudget::Measured(r.into())
    }
}

impl From<&LevelBudget> for LevelBudget {
    fn from(b: &LevelBudget) -> LevelBudget {
        b.clone()
    }
}

/// Written as its loss is (`{"epsilon": "1/2"}`, flattened into a record), and an
/// unmeasured level as `{"epsilon": "0", "measured": false}` (`"rho"` in a zCDP plan).
impl serde::Serialize for LevelBudget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            LevelBudget::Measured(l) => l.serialize(s),
            LevelBudget::Unmeasured(d) => {
                let mut map = s.serialize_map(Some(2))?;
                map.serialize_entry(d.budget_name(), "0")?;
                map.serialize_entry("measured", &false)?;
                map.end()
            }
        }
    }
}
