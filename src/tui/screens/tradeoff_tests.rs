use super::*;
use crate::preview::Stat;
use crate::tradeoff::Recommendation;

fn stat(mean: f64) -> Stat {
    Stat {
        mean,
        se: 0.0,
        trials: 10,
    }
}

fn point(x: f64, means: &[f64]) -> AllocationPoint {
    AllocationPoint {
        budgets: vec![],
        x,
        consistent: means.iter().map(|&m| stat(m)).collect(),
    }
}

#[test]
fn a_log_axis_spans_the_values_and_labels_them_in_real_units() {
    let (bounds, labels) = log_axis([10.0, 1000.0, 0.0, f64::NAN].into_iter());
    assert_eq!(bounds, [1.0, 3.0]);
    assert_eq!(labels, ["10.0", "100.0", "1,000"]);
    // One value: a decade around it.
    let (bounds, _) = log_axis([100.0].into_iter());
    assert_eq!(bounds, [1.5, 2.5]);
}

#[test]
fn the_sweep_chart_marks_the_current_plan_on_every_level() {
    let points: Vec<AllocationPoint> = SWEEP_FACTORS
        .iter()
        .map(|&(n, d)| {
            let x = n as f64 / d as f64;
            point(x, &[100.0 / x, 10.0 / x])
        })
        .collect();
    let sweep = SweepResult {
        level: 1,
        points,
        revision: 0,
        data: PreviewData::Confidential,
    };
    let data = sweep_chart(&sweep, 2);
    assert_eq!(data.lines.len(), 2);
    assert!(data.lines.iter().all(|l| l.len() == SWEEP_FACTORS.len()));
    // Factor 1: x = log10(1) = 0, errors 100 and 10.
    assert_eq!(data.marks, vec![vec![(0.0, 2.0)], vec![(0.0, 1.0)]]);
    assert!((data.x_bounds[0] - 0.25f64.log10()).abs() < 1e-12);
    assert!((data.y_bounds[1] - 400f64.log10()).abs() < 1e-12);
}

#[test]
fn the_frontier_chart_draws_bottom_up_flat_and_marks_the_recommendation() {
    let plan =
        crate::release::plan::ReleasePlan::parse("max_size = 10\n", std::path::Path::new("p.toml"))
            .unwrap();
    let f = Frontier {
        notice: String::new(),
        data: PreviewData::Confidential,
        total_epsilon: crate::tradeoff::Amount::parse("1").unwrap(),
        levels: vec!["a".into(), "b".into()],
        held: vec![false, false],
        points: vec![point(0.5, &[50.0, 30.0]), point(0.8, &[80.0, 12.0])],
        point_candidates: vec![0, 1],
        candidates: vec![],
        current: None,
        bottom_up: vec![stat(100.0), stat(10.0)],
        bottom_up_method: "hc".into(),
        bottom_up_variants: vec![],
        trials: 1,
        // Off the line (other methods), at a share of 60%.
        recommendation: Some(Recommendation {
            candidate: 2,
            x: 0.6,
            budgets: vec![],
            methods: vec![],
            consistent: vec![stat(70.0), stat(9.0)],
            mae_per_cell: vec![],
            relative_error: vec![],
            ratios: vec![],
            ratio_se: vec![],
            is_current: false,
            reason: String::new(),
            plan,
        }),
        verdict: None,
    };
    let data = frontier_chart(&f);
    assert_eq!(data.x_bounds, [50.0, 80.0]);
    assert_eq!(data.x_labels, ["50%", "80%"]);
    assert_eq!(data.marks[0], vec![(60.0, 70f64.log10())]);
    assert_eq!(data.marks[1], vec![(60.0, 9f64.log10())]);
    for (reference, b) in data.references.iter().zip([100.0f64, 10.0]) {
        assert_eq!(reference.first().unwrap().0, 50.0);
        assert_eq!(reference.last().unwrap().0, 80.0);
        assert!(reference.iter().all(|p| p.1 == b.log10()));
    }
}
