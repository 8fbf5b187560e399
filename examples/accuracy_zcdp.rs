//! Pure ε against ρ-zCDP at equal footing: the tables of `docs/accuracy.md`
//! ("Pure ε against ρ-zCDP").
//!
//! ```sh
//! cargo run --release --example accuracy_zcdp            # every dataset, 10 trials
//! TRIALS=4 DATA=sample,dense cargo run --release --example accuracy_zcdp
//! ```
//!
//! For each dataset and each total budget ε (1 and 17), coco's default plan (`coco plan
//! DIR`: `hc` with a tail above 20, groups "auto", K = 10,000, the budget split evenly
//! over the levels) is drawn three ways:
//!
//! * **pure ε**: the plan at total ε, discrete Laplace noise of scale Δ₁/ε per cell;
//! * **zCDP at equal (ε, δ)**: the plan at the total ρ whose (ε, δ)-DP statement at
//!   δ = 10⁻¹⁰ (Canonne, Kamath and Steinke 2020, Corollary 13, as coco states it) is
//!   at most ε: the largest `n / 10⁸` with `epsilon_at_delta(n / 10⁸, 10⁻¹⁰) ≤ ε`, found
//!   by bisection on the integer `n` (so ρ is an exact rational, and the zCDP plan never
//!   states more than ε); discrete Gaussian noise of σ² = Δ₂²/(2ρ) per cell;
//! * **pure ε at equal ρ**: the pure plan with ε = √(2ρ) for that same ρ (pure ε is
//!   ε²/2-zCDP), rounded down to a multiple of 10⁻⁸ so the pure plan never spends more
//!   ρ than the zCDP one.
//!
//! The error of a level is the mean over its regions of the earth mover's distance of
//! the released (consistent) histogram to the truth; each figure is its mean over
//! `TRIALS` seeded draws (seeds 1, 2, …, the same for every plan) ± its standard error.
//! The draws run below the ledger (`release::pipeline::draw`): nothing is recorded.

use coco::data::{Dataset, NodeId};
use coco::emd::emd;
use coco::generate::shapes::Shape;
use coco::generate::{Preset, generate_into};
use coco::noise::NoiseSource;
use coco::privacy::{DEFAULT_DELTA, Diagnostic, Epsilon, Loss, Rho, epsilon_at_delta};
use coco::release::pipeline::draw::draw;
use coco::release::plan::defaults::public_default;
use coco::release::plan::{MaxSize, ReleasePlan};
use coco::wire::Named;

/// The denominator of the ρ and ε found here.
const GRID: u64 = 100_000_000;
/// The total budgets, as pure ε.
const BUDGETS: [u64; 2] = [1, 17];
/// The public bound on a group's size in every plan.
const K: coco::histogram::Size = 10_000;

/// The largest ρ = n / GRID whose ε at δ = 10⁻¹⁰ is at most `epsilon`.
fn rho_at_equal_epsilon_delta(epsilon: f64) -> Rho {
    let at = |n: u64| epsilon_at_delta(&Rho::from_ratio(n, GRID).unwrap(), DEFAULT_DELTA);
    // ρ ≤ ε: the statement's ε is at least ρ (α → 1 in Corollary 13 gives more).
    let (mut lo, mut hi) = (1u64, (epsilon.ceil() as u64) * GRID);
    assert!(at(lo) <= epsilon && at(hi) > epsilon);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(mid) <= epsilon {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Rho::from_ratio(lo, GRID).unwrap()
}

/// The largest ε = m / GRID with ε ≤ √(2ρ), exactly: `m² ≤ 2ρ·GRID²`.
fn epsilon_at_equal_rho(rho: &Rho) -> Epsilon {
    use num_bigint::BigUint;
    // 2ρ·GRID² = 2·numer·GRID² / denom: m is the integer square root of its floor
    // (flooring the square first does not change the root of an integer bound).
    let bound: BigUint =
        (rho.numer() * 2u32 * BigUint::from(GRID) * BigUint::from(GRID)) / rho.denom();
    let m = bound.sqrt();
    Epsilon::from_parts(m, BigUint::from(GRID)).unwrap()
}

fn plan(d: &Dataset, total: Loss) -> ReleasePlan {
    public_default(&d.hierarchy, |id| d.groups(id), total, MaxSize::Fixed(K))
        .unwrap()
        .plan
}

/// Per level, the mean and standard error over the trials of the level's mean per-region
/// EMD of the released histograms to the truth.
fn errors(d: &Dataset, plan: &ReleasePlan, trials: u64) -> Vec<(f64, f64)> {
    let h = &d.hierarchy;
    let truth = d.truth().for_diagnostic(Diagnostic::Preview);
    let mut per_trial = vec![Vec::new(); h.depth()];
    for t in 1..=trials {
        let released = draw(d, plan, &NoiseSource::seeded(t), &Default::default()).unwrap();
        for l in h.levels() {
            let total: u128 = h
                .level_range(l)
                .map(|i| {
                    u128::from(emd(
                        released.histograms().get(i as usize),
                        truth.node(NodeId(i)),
                    ))
                })
                .sum();
            per_trial[l.0].push(total as f64 / h.level_len(l) as f64);
        }
    }
    per_trial
        .iter()
        .map(|v| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
            (mean, (var / n).sqrt())
        })
        .collect()
}

/// Three significant figures, thousands separated.
fn fmt(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.digits$}");
    let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(a, b)| (a, b));
    let mut out = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if frac.is_empty() {
        out
    } else {
        format!("{out}.{frac}")
    }
}

/// `a ÷ b` to two decimals; a dash where `b` is 0 (no error to compare with).
fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        "—".into()
    } else {
        format!("{:.2}", a / b)
    }
}

fn cell((mean, se): (f64, f64)) -> String {
    format!("{} ± {}", fmt(mean), fmt(se))
}

fn datasets(keep: &std::path::Path) -> Vec<(String, Dataset)> {
    let mut out = vec![(
        "sample".to_string(),
        Dataset::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/households"),
        )
        .unwrap(),
    )];
    for (preset, name, scale) in [
        (Preset::UsCounties, "us-counties", None),
        (Preset::UsBlocks, "us-blocks at 1%", Some(0.01)),
    ] {
        let dir = keep.join(name.replace([' ', '%'], "-"));
        generate_into(preset, &dir, 1, scale, &mut |_, _| {}).unwrap();
        out.push((name.to_string(), Dataset::load(&dir).unwrap()));
    }
    for shape in [Shape::GroupQuarters, Shape::Skewed, Shape::Dense] {
        let d = shape.build(1, 1.0).unwrap().to_dataset().unwrap();
        out.push((shape.name().to_string(), d));
    }
    out
}

fn main() {
    let trials: u64 = std::env::var("TRIALS")
        .ok()
        .map(|s| s.parse().expect("TRIALS=n"))
        .unwrap_or(10);
    let only = std::env::var("DATA").ok();
    let keep = tempfile::tempdir().unwrap();
    let budgets: Vec<(Epsilon, Rho, Epsilon)> = BUDGETS
        .iter()
        .map(|&e| {
            let rho = rho_at_equal_epsilon_delta(e as f64);
            let pure_at_rho = epsilon_at_equal_rho(&rho);
            (Epsilon::from_ratio(e, 1).unwrap(), rho, pure_at_rho)
        })
        .collect();
    println!("{trials} seeded trials per figure; δ = 10⁻¹⁰");
    for (e, rho, e_rho) in &budgets {
        println!(
            "ε = {e}: equal (ε, δ) ρ = {rho} (ε at δ = {:.6}); equal ρ: pure ε = {e_rho} (ρ = {:.8})",
            epsilon_at_delta(rho, DEFAULT_DELTA),
            e_rho.to_f64().powi(2) / 2.0
        );
    }
    for (name, d) in datasets(keep.path()) {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|x| x == name))
        {
            continue;
        }
        let start = std::time::Instant::now();
        println!(
            "\n**{name}** ({} regions, {} levels)\n",
            d.hierarchy.len(),
            d.hierarchy.depth()
        );
        println!(
            "| budget | level | pure ε | zCDP, equal (ε, δ) | zCDP ÷ pure | pure, equal ρ | zCDP ÷ pure |"
        );
        println!("|---|---|---|---|---|---|---|");
        for (e, rho, e_rho) in &budgets {
            let pure = errors(&d, &plan(&d, Loss::Pure(e.clone())), trials);
            let zcdp = errors(&d, &plan(&d, Loss::Zcdp(rho.clone())), trials);
            let pure_rho = errors(&d, &plan(&d, Loss::Pure(e_rho.clone())), trials);
            for l in d.hierarchy.levels() {
                let (p, z, q) = (pure[l.0], zcdp[l.0], pure_rho[l.0]);
                println!(
                    "| ε = {e} | {} | {} | {} | {} | {} | {} |",
                    d.hierarchy.level_name(l),
                    cell(p),
                    cell(z),
                    ratio(z.0, p.0),
                    cell(q),
                    ratio(z.0, q.0)
                );
            }
        }
        eprintln!("{name}: {:.0} s", start.elapsed().as_secs_f64());
    }
}
