//! ρ-zCDP through the measurement path and the release (issue 33): the noise a level's
//! vectors get has the discrete Gaussian's variance `σ² = Δ₂²/(2ρ)`, and a zCDP plan
//! releases tables that pass every check, with the guarantee stated in ρ.

use coco::data::{Dataset, NodeId};
use coco::estimate::{self, Method, Noisy};
use coco::generate::shapes::Shape;
use coco::histogram::Size;
use coco::noise::{NoiseSource, Purpose};
use coco::privacy::{Diagnostic, Loss, Rho};
use coco::release::pipeline::draw as run;
use coco::release::plan::{MaxSize, ReleasePlan};

const K: Size = 200;

fn rho(s: &str) -> Loss {
    Loss::Zcdp(Rho::parse(s).unwrap())
}

/// Sample variance of `noisy − truth` over many nodes and seeds, with its standard
/// error (the fourth moment of a Gaussian: `Var(s²) ≈ 2σ⁴/n`).
fn noise_variance_of(method: Method, loss: &Loss, nodes: u32) -> (f64, usize) {
    let d = Shape::Chain.build(3, 1.0).unwrap().to_dataset().unwrap();
    let truth = d.truth().for_diagnostic(Diagnostic::Oracle);
    let source = NoiseSource::seeded(11);
    let (mut sum2, mut n) = (0f64, 0usize);
    for i in 0..nodes {
        let id = NodeId(i % d.hierarchy.len() as u32);
        let groups = d.groups(id);
        let exact = estimate::true_vector(method, truth.node(id), groups, K);
        let m = estimate::measure(
            method,
            truth.node(id),
            id,
            groups,
            K,
            loss,
            &mut source.stream(Purpose::Test.index(i)),
        )
        .unwrap();
        let noisy: Vec<i64> = match m.noisy().clone() {
            Noisy::Cumulative(v) | Noisy::Naive(v) => v,
            Noisy::Unattributed(v) => v.into_iter().map(i64::from).collect(),
            Noisy::CumulativeTail { head, top } => head.into_iter().chain(top).collect(),
        };
        assert_eq!(noisy.len(), exact.len());
        for (a, b) in noisy.iter().zip(&exact) {
            sum2 += ((a - b) as f64).powi(2);
            n += 1;
        }
    }
    (sum2 / n as f64, n)
}

#[test]
fn measured_noise_has_the_variance_of_the_discrete_gaussian() {
    // hc: Δ₂² = 1, ρ = 1/8 gives σ² = 4; naive: Δ₂² = 2 gives σ² = 8.
    for (method, sigma2) in [(Method::Hc, 4.0), (Method::Naive, 8.0)] {
        let (v, n) = noise_variance_of(method, &rho("1/8"), 60);
        // Five standard errors of the sample variance: a false failure below 10⁻⁶.
        let se = sigma2 * (2.0 / n as f64).sqrt();
        assert!(
            (v - sigma2).abs() < 5.0 * se,
            "{method:?}: variance {v} from {n} cells, expected σ² = {sigma2} ± {se}"
        );
        // A σ 30% too small (σ² × 0.49) or an L1 calibration of naive (σ² = 4) would be
        // far outside.
        assert!((v - 0.49 * sigma2).abs() > 20.0 * se);
    }
}

#[test]
fn a_zcdp_plan_releases_checked_tables_under_its_rho() {
    let d = Dataset::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
    )
    .unwrap();
    let plan = coco::release::plan::defaults::public_default(
        &d.hierarchy,
        |id| d.groups(id),
        rho("1/2"),
        MaxSize::Fixed(1_000),
    )
    .unwrap()
    .plan;
    assert_eq!(plan.total().unwrap(), rho("1/2"));
    let draw = run::draw(&d, &plan, &NoiseSource::seeded(3), &Default::default()).unwrap();
    assert!(draw.checks().passed(), "{:?}", draw.checks());
    assert_eq!(draw.guarantee(), &rho("1/2"));
    // The same plan in ε at the same value is another guarantee entirely.
    let mut pure = plan.clone();
    pure.set_definition(coco::privacy::Definition::Pure)
        .unwrap();
    assert_ne!(pure, plan);
    assert_eq!(pure.total().unwrap().exact(), "0.5");
}

#[test]
fn a_plan_is_in_one_definition() {
    let d = Shape::Chain.build(3, 0.2).unwrap().to_dataset().unwrap();
    let mut plan =
        ReleasePlan::uniform(&d.hierarchy, rho("1/2"), Method::Hc, MaxSize::Fixed(K)).unwrap();
    let epsilon = Loss::Pure(coco::privacy::Epsilon::parse("1").unwrap());
    let before = plan.clone();
    let refused = plan.set_budget(coco::data::LevelId(0), epsilon.clone());
    assert!(refused.unwrap_err().to_string().contains("one definition"));
    assert_eq!(plan, before);
    let refused = plan.set_max_size(MaxSize::Estimate { budget: epsilon });
    assert!(refused.is_err());
    assert_eq!(plan, before);
}
