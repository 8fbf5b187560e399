use super::*;
use crate::data::tests::tiny;
use crate::wire::Named;

fn parse(text: &str) -> Result<ReleasePlan, PlanError> {
    ReleasePlan::parse(text, Path::new("plan.toml"))
}

const GOOD: &str = r#"max_size = 100  # K
[[level]]
name = "nation"
epsilon = 0.1
method = "hc"

[[level]]
name = "state"
epsilon = "1/3"
method = "hg"

[[level]]
name = "county"
epsilon = 0.3333333333333333
method = "hc"
"#;

#[test]
fn parses_the_contract_example() {
    let plan = parse(GOOD).unwrap();
    assert_eq!(plan.max_size, MaxSize::Fixed(100));
    assert_eq!(plan.levels.len(), 3);
    assert_eq!(
        plan.levels[0].budget,
        Epsilon::from_ratio(1, 10).unwrap().into()
    );
    assert_eq!(
        plan.levels[1].budget,
        Epsilon::from_ratio(1, 3).unwrap().into()
    );
    assert_eq!(plan.levels[2].budget.exact(), "0.3333333333333333");
    assert_eq!(plan.levels[1].method, Method::Hg);
    assert_eq!(plan.levels[1].line, 7);
    plan.validate(&tiny().hierarchy, Path::new("plan.toml"))
        .unwrap();
    let total = plan.total_epsilon().unwrap();
    assert_eq!(
        total,
        Epsilon::parse("0.1")
            .unwrap()
            .add(&Epsilon::parse("1/3").unwrap())
            .add(&Epsilon::parse("0.3333333333333333").unwrap())
    );
    // Round trip through text.
    let again = parse(&plan.to_toml()).unwrap();
    assert_eq!(
        again
            .levels
            .iter()
            .map(|l| (&l.name, &l.budget, l.method))
            .collect::<Vec<_>>(),
        plan.levels
            .iter()
            .map(|l| (&l.name, &l.budget, l.method))
            .collect::<Vec<_>>()
    );
    assert_eq!(again.max_size, plan.max_size);
}

#[test]
fn extensions() {
    let text = "max_size = { epsilon = 0.001 }\nconsistency = \"topdown\"\nmerge = \"average\"\nhc_fit = \"l2\"\n[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"naive\"\n";
    let plan = parse(text).unwrap();
    assert_eq!(
        plan.max_size,
        MaxSize::Estimate {
            budget: (Epsilon::from_ratio(1, 1000).unwrap()).into()
        }
    );
    assert_eq!(plan.merge, MergeRule::Average);
    assert_eq!(plan.hc_fit, IsotonicFit::L2);
    assert_eq!(plan.levels[0].method, Method::Naive);
    assert_eq!(
        plan.total_epsilon().unwrap(),
        Epsilon::parse("1.001").unwrap()
    );
    let again = parse(&plan.to_toml()).unwrap();
    assert_eq!(
        again,
        ReleasePlan {
            levels: again.levels.clone(),
            ..plan.clone()
        }
    );
}

#[test]
fn tuning_is_read_written_and_defaults_to_unknown() {
    let text = "max_size = 100\n[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"hc\"\n";
    let mut plan = parse(text).unwrap();
    assert_eq!(plan.tuning(), Tuning::Unknown);
    assert!(!plan.to_toml().contains("tuning"));
    for t in Tuning::all().into_iter() {
        plan.set_tuning(t);
        assert_eq!(parse(&plan.to_toml()).unwrap().tuning(), t);
    }
    let m = parse(&format!("tuning = \"confidential\"\n{text}"))
        .unwrap_err()
        .to_string();
    assert!(
        m.starts_with("plan.toml:1: tuning = \"confidential\": expected \"public-default\""),
        "{m}"
    );
}

#[test]
fn held_levels_and_the_tuning_source_survive_a_save_and_reload() {
    let text = "max_size = 100\n[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"hc\"\n";
    let mut plan = parse(text).unwrap();
    assert!(!plan.levels[0].held() && plan.tuning_source().is_none());
    assert!(!plan.to_toml().contains("held") && !plan.to_toml().contains("tuning_source"));
    plan.set_held(LevelId(0), true);
    plan.set_tuning(Tuning::Proxy);
    plan.set_tuning_source(TuningSource::new("synthetic"));
    let toml = plan.to_toml();
    assert!(
        toml.contains("held = true") && toml.contains("tuning_source = \"synthetic\""),
        "{toml}"
    );
    let again = parse(&toml).unwrap();
    assert!(again.levels[0].held());
    assert_eq!(
        again.tuning_source().map(TuningSource::as_str),
        Some("synthetic")
    );
    // Provenance and editing aids: the same plan for what it measures.
    assert_eq!(again, parse(text).unwrap());
    for (bad, says) in [
        (
            "held = \"yes\"",
            "plan.toml:6: held = \"yes\": expected held = true or false",
        ),
        (
            "tuning_source = \"\"",
            "tuning_source = \"\": expected the public proxy",
        ),
    ] {
        let text = if bad.starts_with("held") {
            format!("{text}{bad}\n")
        } else {
            format!("{bad}\n{text}")
        };
        let m = parse(&text).unwrap_err().to_string();
        assert!(m.contains(says), "{m}");
    }
}

#[test]
fn tails() {
    let text = GOOD.replace(
        "epsilon = 0.1\nmethod = \"hc\"",
        "epsilon = 0.1\nmethod = \"hc\"\ntail = { above = 20, groups = 500 }",
    );
    let plan = parse(&text).unwrap();
    assert_eq!(
        plan.levels[0].method,
        Method::HcTail(Tail {
            above: 20,
            groups: TailLength::Fixed(TailGroups::new(500).unwrap())
        })
    );
    assert_eq!(parse(&plan.to_toml()).unwrap().levels, {
        let mut l = plan.levels.clone();
        // Lines differ after rewriting; compare the rest.
        for (a, b) in l.iter_mut().zip(&parse(&plan.to_toml()).unwrap().levels) {
            a.line = b.line;
        }
        l
    });
    // `groups` has a default.
    let plan = parse(&GOOD.replace(
        "method = \"hc\"\n\n[[level]]\nname = \"state\"",
        "method = \"hc\"\ntail = { above = 7 }\n\n[[level]]\nname = \"state\"",
    ))
    .unwrap();
    assert_eq!(
        plan.levels[0].method,
        Method::HcTail(Tail {
            above: 7,
            groups: Tail::DEFAULT.groups
        })
    );
    let with = |tail: &str| {
        message(&GOOD.replace(
            "epsilon = 0.1\nmethod = \"hc\"",
            &format!("epsilon = 0.1\nmethod = \"hc\"\n{tail}"),
        ))
    };
    assert_eq!(
        with("tail = { above = 100 }"),
        "plan.toml:2: level \"nation\": a tail from L = 100 with K = 100: expected L below K (the tail lists the groups of size L or more; tail.above below max_size)"
    );
    assert!(with("tail = { groups = 5 }").starts_with("plan.toml:6: missing key \"tail.above\""));
    assert!(
        with("tail = { above = 5, groups = 0 }").starts_with(
            "plan.toml:6: tail.groups = 0: expected a whole number from 1 to 10000000"
        ),
        "{}",
        with("tail = { above = 5, groups = 0 }")
    );
    assert!(
        with("tail = { above = -1 }")
            .starts_with("plan.toml:6: tail.above = -1: expected a whole number from 0")
    );
    assert!(
        with("tail = { above = 5, size = 2 }").starts_with("plan.toml:6: unknown key \"size\"")
    );
    assert!(with("tail = 20").starts_with("plan.toml:6: tail = 20: expected tail = { above = 20"));
    let m = message(&GOOD.replace("method = \"hg\"", "method = \"hg\"\ntail = { above = 5 }"));
    assert_eq!(
        m,
        "plan.toml:11: tail = { above = 5 } with method = \"hg\": expected method = \"hc\" (the tail extends the cumulative histogram)"
    );
}

fn message(text: &str) -> String {
    match parse(text) {
        Err(e) => e.to_string(),
        Ok(plan) => plan
            .validate(&tiny().hierarchy, Path::new("plan.toml"))
            .unwrap_err()
            .to_string(),
    }
}

#[test]
fn errors_name_the_line() {
    let m = message(&GOOD.replace("method = \"hg\"", "method = \"hx\""));
    assert_eq!(
        m,
        "plan.toml:10: method = \"hx\": expected \"hc\" (cumulative) or \"hg\" (unattributed)"
    );
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = -0.1"));
    assert!(
        m.starts_with("plan.toml:4: ε \"-0.1\" is not positive"),
        "{m}"
    );
    // 0 is not refused: it leaves the level unmeasured (issue 36).
    let unmeasured = parse(&GOOD.replace("epsilon = 0.1", "epsilon = 0")).unwrap();
    assert!(!unmeasured.levels[0].is_measured());
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = nan"));
    assert!(
        m.starts_with("plan.toml:4: ε \"nan\" is not a number"),
        "{m}"
    );
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = inf"));
    assert!(
        m.starts_with("plan.toml:4: ε \"inf\" is not a number"),
        "{m}"
    );
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = 1e-300"));
    assert!(
        m.starts_with("plan.toml:4: ε \"1e-300\" is out of range"),
        "{m}"
    );
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = \"1/0\""));
    assert!(
        m.starts_with("plan.toml:4: ε \"1/0\" has a zero denominator"),
        "{m}"
    );
    let m = message(&GOOD.replace("epsilon = 0.1", "epsilon = 0.1\nepsilom = 2"));
    assert!(m.starts_with("plan.toml:5: unknown key \"epsilom\""), "{m}");
    let m = message(&GOOD.replace("max_size = 100", "max_size = 0"));
    assert_eq!(
        m,
        "plan.toml:1: max_size = 0: expected a whole number from 1 to 100000000"
    );
    let m = message(&GOOD.replace("max_size = 100", "max_size = 100000001"));
    assert!(m.starts_with("plan.toml:1: max_size = 100000001"), "{m}");
    let m = message(&GOOD.replace("max_size = 100  # K", "maxsize = 100"));
    assert!(m.starts_with("plan.toml:1: unknown key \"maxsize\""), "{m}");
    let m = message(&GOOD.replace("name = \"state\"", "name = \"nation\""));
    assert_eq!(
        m,
        "plan.toml:7: level \"nation\" appears twice (first at line 2)"
    );
    let m = message(&GOOD.replace("name = \"state\"", "name = \"province\""));
    assert_eq!(
        m,
        "plan.toml:7: level \"province\" is not in the hierarchy: expected one of nation, state, county"
    );
    let cut = GOOD.split("[[level]]\nname = \"county\"").next().unwrap();
    let m = message(cut);
    assert_eq!(
        m,
        "plan.toml: level \"county\" is missing: every level needs an ε and a method (nation, state, county)"
    );
    let swapped = GOOD
        .replace("name = \"nation\"", "name = \"X\"")
        .replace("name = \"state\"", "name = \"nation\"")
        .replace("name = \"X\"", "name = \"state\"");
    assert!(message(&swapped).starts_with("plan.toml:2: level \"state\" is out of order"));
    let m = message("max_size = 5\n[[level]\n");
    assert!(m.starts_with("plan.toml:2: not valid TOML"), "{m}");
    let m = message("max_size = 5\n");
    assert!(m.contains("no [[level]] tables"), "{m}");
    let m = message("[[level]]\nname = \"nation\"\nepsilon = 1\nmethod = \"hc\"\n");
    assert!(m.contains("missing key \"max_size\""), "{m}");
}

#[test]
fn allocations_sum_exactly() {
    let total = Epsilon::parse("1").unwrap();
    let u = allocate(&total, 3, Allocation::Uniform);
    assert_eq!(u, vec![Epsilon::from_ratio(1, 3).unwrap(); 3]);
    let g = allocate(
        &total,
        3,
        Allocation::Geometric {
            ratio: crate::privacy::Ratio::parse("2").unwrap(),
        },
    );
    assert_eq!(Epsilon::sum(&g).unwrap(), total);
    assert_eq!(g[0].to_string(), "0.142857");
    assert_eq!(g[1].to_string(), "0.285714");
    assert_eq!(g[2].to_string(), "0.571429");
    let third = Epsilon::parse("1/3").unwrap();
    let g = allocate(
        &third,
        4,
        Allocation::Geometric {
            ratio: crate::privacy::Ratio::parse("1.26").unwrap(),
        },
    );
    assert_eq!(Epsilon::sum(&g).unwrap(), third);
    assert!(g.iter().all(Epsilon::within_text_bounds));
    assert!(g.windows(2).all(|w| w[0] < w[1]));
}

/// A plan for the tiny hierarchy with these budget lines (`epsilon = …` or `rho = …`),
/// root first.
fn with_budgets(lines: [&str; 3]) -> String {
    let names = ["nation", "state", "county"];
    let mut s = String::from("max_size = 100\n");
    for (name, line) in names.iter().zip(lines) {
        s.push_str(&format!(
            "\n[[level]]\nname = \"{name}\"\n{line}\nmethod = \"hc\"\n"
        ));
    }
    s
}

#[test]
fn a_zero_budget_leaves_a_level_unmeasured_and_is_written_back_as_zero() {
    for zero in [
        "epsilon = \"0\"",
        "epsilon = 0",
        "epsilon = 0.0",
        "epsilon = \"0/3\"",
    ] {
        let plan = parse(&with_budgets([zero, zero, "epsilon = 1"])).unwrap();
        assert_eq!(
            plan.levels[0].budget,
            LevelBudget::Unmeasured(Definition::Pure),
            "{zero}"
        );
        assert!(!plan.levels[1].is_measured(), "{zero}");
        assert!(plan.levels[2].is_measured(), "{zero}");
        // It charges nothing: the total is the leaves' alone.
        assert_eq!(plan.total().unwrap().exact(), "1", "{zero}");
        let text = plan.to_toml();
        assert_eq!(text.matches("epsilon = \"0\"").count(), 2, "{text}");
        assert_eq!(parse(&text).unwrap(), plan, "{text}");
    }
    // In a zCDP plan, `rho = "0"`, written back as such.
    let plan = parse(&with_budgets([
        "rho = \"1/4\"",
        "rho = \"0\"",
        "rho = \"1/4\"",
    ]))
    .unwrap();
    assert_eq!(plan.definition(), Definition::Zcdp);
    assert_eq!(
        plan.levels[1].budget,
        LevelBudget::Unmeasured(Definition::Zcdp)
    );
    assert_eq!(plan.total().unwrap().exact(), "0.5");
    let text = plan.to_toml();
    assert!(text.contains("rho = \"0\""), "{text}");
    assert!(!text.contains("epsilon"), "{text}");
    assert_eq!(parse(&text).unwrap(), plan);
    // Restated in pure ε, the unmeasured level stays unmeasured.
    let mut pure = plan.clone();
    pure.set_definition(Definition::Pure).unwrap();
    assert_eq!(
        pure.levels[1].budget,
        LevelBudget::Unmeasured(Definition::Pure)
    );
}

#[test]
fn an_unmeasured_leaf_level_or_no_measured_level_is_refused_with_its_line() {
    let m = message(&with_budgets([
        "epsilon = 1",
        "epsilon = 1",
        "epsilon = \"0\"",
    ]));
    assert!(
        m.starts_with("plan.toml:13:")
            && m.contains("level \"county\"")
            && m.contains("the leaf level must be measured"),
        "{m}"
    );
    let m = message(&with_budgets(["epsilon = 0", "epsilon = 0", "epsilon = 0"]));
    assert!(
        m.contains("every level has budget 0") && m.contains("nothing would be measured"),
        "{m}"
    );
    // Every other non-positive value keeps its own message.
    let m = message(&with_budgets([
        "epsilon = -1",
        "epsilon = 1",
        "epsilon = 1",
    ]));
    assert!(
        m.starts_with("plan.toml:5:") && m.contains("ε \"-1\" is not positive"),
        "{m}"
    );
    let m = message(&with_budgets([
        "epsilon = 1",
        "rho = \"-0.5\"",
        "epsilon = 1",
    ]));
    assert!(m.contains("ρ \"-0.5\" is not positive"), "{m}");
    // Nor may an edit leave the leaves unmeasured.
    let mut plan = parse(GOOD).unwrap();
    assert!(matches!(
        plan.set_budget(LevelId(2), LevelBudget::Unmeasured(Definition::Pure)),
        Err(PlanRuleError::LeafUnmeasured { .. })
    ));
    plan.set_budget(LevelId(1), LevelBudget::Unmeasured(Definition::Pure))
        .unwrap();
    assert_eq!(plan.levels_total().unwrap().exact(), "0.4333333333333333");
}
