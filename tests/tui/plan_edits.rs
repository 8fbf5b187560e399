//! One validated plan model (the accounting issue, part 4): random sequences of the
//! edits the TUI's Budget screen makes, through the same session API. After every
//! edit the plan keeps every rule; an accepted edit's plan saves as TOML and loads back
//! (parsed and checked against the hierarchy) as the same plan; a refused edit leaves
//! the plan exactly as it was.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;

use coco::data::{Dataset, LevelId};
use coco::estimate::{Tail, TailGroups};
use coco::privacy::Epsilon;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::tui::session::{Preset, Session};

fn sample() -> Arc<Dataset> {
    static SAMPLE: OnceLock<Arc<Dataset>> = OnceLock::new();
    SAMPLE
        .get_or_init(|| {
            Arc::new(
                Dataset::load(
                    &Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
                )
                .unwrap(),
            )
        })
        .clone()
}

#[derive(Clone, Debug)]
enum Edit {
    Epsilon(usize, &'static str),
    Step(usize, bool),
    Total(&'static str),
    Preset(u8),
    Ratio(bool),
    ToggleMethod(usize),
    Tail(usize, Option<(u32, u32)>),
    MaxSize(u32),
    EstimateMaxSize(&'static str),
    Consistency,
    Merge,
}

/// ε values an operator may type, including some the noise cannot use.
const EPSILONS: &[&str] = &[
    "1",
    "0.5",
    "1/3",
    "0.001",
    "10",
    "2.5",
    "0.30000000000000004",
    "1/7",
    "1e-30",
    "1000000",
    "123456789/1000000000000000000000",
];

fn edit() -> impl Strategy<Value = Edit> {
    let level = 0usize..4; // one past the sample's three levels
    let eps = proptest::sample::select(EPSILONS);
    prop_oneof![
        (level.clone(), eps.clone()).prop_map(|(l, e)| Edit::Epsilon(l, e)),
        (level.clone(), any::<bool>()).prop_map(|(l, u)| Edit::Step(l, u)),
        eps.clone().prop_map(Edit::Total),
        (0u8..3).prop_map(Edit::Preset),
        any::<bool>().prop_map(Edit::Ratio),
        level.clone().prop_map(Edit::ToggleMethod),
        (
            level,
            proptest::option::of((
                prop_oneof![0u32..40, 9_990u32..10_010, Just(u32::MAX)],
                prop_oneof![0u32..5, Just(1_000), Just(10_000_001)]
            ))
        )
            .prop_map(|(l, t)| Edit::Tail(l, t)),
        prop_oneof![0u32..50, 9_990u32..10_010, Just(100_000_001)].prop_map(Edit::MaxSize),
        eps.prop_map(Edit::EstimateMaxSize),
        Just(Edit::Consistency),
        Just(Edit::Merge),
    ]
}

fn apply(s: &mut Session, e: &Edit) -> Result<(), String> {
    let eps = |t: &str| coco::tradeoff::Amount::parse(t).map_err(|e| e.to_string());
    // The TUI only offers existing levels; an index past them must still be refused, not
    // panic, when it reaches the plan.
    let level = |l: usize| -> Result<LevelId, String> {
        if l < 3 {
            Ok(LevelId(l))
        } else {
            Err("no such level".into())
        }
    };
    match e {
        Edit::Epsilon(l, t) => s.set_budget(level(*l)?, eps(t)?),
        Edit::Step(l, up) => s.step_budget(level(*l)?, *up),
        Edit::Total(t) => s.set_total(eps(t)?),
        Edit::Preset(p) => s.apply_preset(match p {
            0 => Preset::Uniform,
            1 => Preset::Geometric {
                ratio: coco::privacy::Ratio::parse("1.5").unwrap(),
            },
            _ => Preset::Custom,
        }),
        Edit::Ratio(up) => s.step_ratio(*up),
        Edit::ToggleMethod(l) => s.toggle_method(level(*l)?),
        Edit::Tail(l, t) => {
            let level = level(*l)?;
            // The Budget screen refuses an m out of range before the plan sees it.
            let tail = t
                .map(|(above, groups)| {
                    TailGroups::new(groups).map(|groups| Tail {
                        above,
                        groups: groups.into(),
                    })
                })
                .transpose()
                .map_err(|e| e.to_string())?;
            s.set_tail(level, tail)
        }
        Edit::MaxSize(k) => s.set_max_size(MaxSize::Fixed(*k)),
        Edit::EstimateMaxSize(t) => s.set_max_size(MaxSize::Estimate {
            budget: s.in_measure(&eps(t)?),
        }),
        Edit::Consistency => {
            s.toggle_consistency();
            Ok(())
        }
        Edit::Merge => {
            s.toggle_merge();
            Ok(())
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(96))]

    #[test]
    fn every_plan_the_editor_accepts_saves_and_loads_back(
        edits in proptest::collection::vec(edit(), 1..16)
    ) {
        let dataset = sample();
        let mut s = Session::new(dataset.clone(), None);
        let file = Path::new("plan.toml");
        for e in &edits {
            let before = s.plan.clone();
            match apply(&mut s, e) {
                Ok(()) => {}
                Err(message) => {
                    prop_assert!(!message.is_empty());
                    prop_assert_eq!(&s.plan, &before, "refused {:?} ({}) changed the plan", e, message);
                }
            }
            prop_assert!(s.plan.check_rules().is_ok(), "{:?} broke a rule: {:?}", e, s.plan.check_rules());
            let text = s.plan.to_toml();
            let loaded = ReleasePlan::parse(&text, file)
                .map_err(|err| TestCaseError::fail(format!("after {e:?}: {err}\n{text}")))?;
            loaded
                .validate(&dataset.hierarchy, file)
                .map_err(|err| TestCaseError::fail(format!("after {e:?}: {err}\n{text}")))?;
            prop_assert_eq!(&loaded, &s.plan, "after {:?}:\n{}", e, text);
        }
    }
}

/// The rules hold for plans built in code too: a constructor refuses what the loader
/// would refuse.
#[test]
fn constructors_refuse_what_the_loader_refuses() {
    let d = sample();
    let h = &d.hierarchy;
    let one = Epsilon::parse("1").unwrap();
    let tail = coco::estimate::Method::HcTail(Tail {
        above: 20,
        groups: coco::estimate::TailLength::Fixed(TailGroups::new(100).unwrap()),
    });
    assert!(ReleasePlan::uniform(h, &one, tail, MaxSize::Fixed(10)).is_err());
    assert!(ReleasePlan::uniform(h, &one, tail, MaxSize::Fixed(21)).is_ok());
    assert!(ReleasePlan::uniform(h, &one, coco::estimate::Method::Hc, MaxSize::Fixed(0)).is_err());
    assert!(
        ReleasePlan::with_budgets(
            h,
            vec![one.clone()],
            coco::estimate::Method::Hc,
            MaxSize::Fixed(5)
        )
        .is_err()
    );
    let mut plan =
        ReleasePlan::uniform(h, &one, coco::estimate::Method::Hc, MaxSize::Fixed(10)).unwrap();
    let before = plan.clone();
    assert!(plan.set_method(LevelId(1), tail).is_err());
    assert!(plan.set_budget(LevelId(7), one.clone()).is_err());
    assert!(plan.set_budgets(vec![one]).is_err());
    assert_eq!(plan, before);
}
