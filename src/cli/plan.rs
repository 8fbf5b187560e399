//! `coco plan DIR`: write a release plan from an allocation rule and show its cost.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use coco::data::Dataset;
use coco::estimate::{Method, MethodKind, TailLength};
use coco::preview;
use coco::privacy::{Definition, Epsilon, Loss, Ratio, Rho, Rounding};
use coco::release::plan::defaults::DEFAULT_MAX_SIZE;
use coco::release::plan::tuning::Tuning;
use coco::release::plan::{Allocation, LevelBudget, MAX_K, MaxSize, ReleasePlan, allocate};
use coco::wire::Named;

use super::exit::FlagError;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Dataset directory.
    pub dir: PathBuf,
    /// Total ε to split over the levels (decimal or fraction like 1/3).
    #[arg(long, default_value = "1", allow_negative_numbers = true)]
    pub total: Epsilon,
    /// A ρ-zCDP plan instead (discrete Gaussian noise): the total ρ to split over the
    /// levels, an exact rational such as 1/2 (the 2020 Census's definition). Every
    /// budget of the plan, --estimate-max-size's too, is then a ρ.
    #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["total", "budgets"])]
    pub rho: Option<Rho>,
    /// How to split it (or give --budgets for a custom allocation).
    #[arg(long, value_enum, default_value_t = AllocationArg::Uniform)]
    pub allocation: AllocationArg,
    /// For geometric: each level's share over its parent's (default: cube root of the mean branching factor).
    #[arg(long, allow_negative_numbers = true)]
    pub ratio: Option<Ratio>,
    /// Custom allocation: one ε per level, root first (e.g. 0.1,0.2,1/3); replaces --total.
    /// 0 leaves a level unmeasured, its regions estimated from their children (0,0,1 is
    /// bottom-up); the leaf level must be measured.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, conflicts_with_all = ["total", "ratio"], value_parser = level_epsilon)]
    pub budgets: Option<Vec<LevelBudget>>,
    /// Method at every level. Without it (and without --tail), each level gets the
    /// method coco chooses from public figures only (the hierarchy, each region's G and
    /// K): hc with a tail listing at least 1% of the largest region's groups; the plan's
    /// comments and the table say why.
    #[arg(long, value_enum)]
    pub method: Option<MethodKind>,
    /// With hc: measure sizes below N as cumulative counts and groups of size N or more as
    /// the sorted sizes of the largest groups, at no
    /// extra ε (for a few large groups, e.g. group quarters among households).
    #[arg(long, value_name = "N")]
    pub tail: Option<coco::histogram::Size>,
    /// With --tail: how many of the largest groups each region lists, or `auto`: each
    /// region as many as its noisy head says lie above N (with a margin), at no extra ε.
    #[arg(long, value_name = "M|auto", default_value = "auto", requires = "tail")]
    pub tail_groups: TailLength,
    /// The public bound K on a group's size.
    #[arg(long, default_value_t = DEFAULT_MAX_SIZE, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_K)), conflicts_with = "estimate_max_size")]
    pub max_size: u32,
    /// Estimate K privately with this budget instead (added to the total; a ρ with
    /// --rho).
    #[arg(long, allow_negative_numbers = true)]
    pub estimate_max_size: Option<Ratio>,
    /// Write the plan here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum AllocationArg {
    Uniform,
    Geometric,
}

pub fn run(args: PlanArgs) -> Result<()> {
    let PlanArgs {
        dir,
        total,
        rho,
        allocation,
        ratio,
        budgets,
        method,
        tail,
        tail_groups,
        max_size,
        estimate_max_size,
        out,
    } = args;
    let dataset = Dataset::load(&dir)?;
    let h = &dataset.hierarchy;
    let chosen = Chosen {
        allocation: matches!(allocation, AllocationArg::Geometric),
        ratio: ratio.clone(),
        budgets: budgets.as_ref().map(|b| {
            b.iter()
                .map(LevelBudget::exact)
                .collect::<Vec<_>>()
                .join(",")
        }),
        method,
        tail: tail.map(|above| (above, tail_groups)),
        max_size,
        estimate_max_size: estimate_max_size.clone(),
        rho: rho.clone(),
    };
    // The plan's definition and total: pure ε unless --rho says ρ-zCDP.
    let (definition, total) = match &rho {
        Some(r) => (Definition::Zcdp, Loss::Zcdp(r.clone())),
        None => (Definition::Pure, Loss::Pure(total)),
    };
    let allocation = match allocation {
        AllocationArg::Uniform => {
            if let Some(r) = &ratio {
                return Err(FlagError {
                    flag: format!("--ratio {r}"),
                    message: "goes with --allocation geometric (the uniform split has no ratio)"
                        .into(),
                }
                .into());
            }
            Allocation::Uniform
        }
        AllocationArg::Geometric => {
            let ratio = ratio.unwrap_or_else(|| {
                coco::release::plan::defaults::geometric_ratio(&dataset.hierarchy)
            });
            Allocation::Geometric { ratio }
        }
    };
    // None: each level's method from public figures (release::plan::defaults).
    let method = match (method, tail) {
        (None, None) => None,
        (Some(MethodKind::Hc), None) => Some(Method::Hc),
        (Some(MethodKind::Hg), None) => Some(Method::Hg),
        (None | Some(MethodKind::Hc), Some(above)) => Some(Method::HcTail(coco::estimate::Tail {
            above,
            groups: tail_groups,
        })),
        (Some(MethodKind::Hg), Some(_)) => {
            return Err(FlagError {
                flag: format!("--tail {}", tail.unwrap_or_default()),
                message: "goes with --method hc (it extends the cumulative histogram)".into(),
            }
            .into());
        }
        // Not offered by `--method` (clap refuses it first); a plan file may name it.
        (Some(MethodKind::Naive), _) => bail!("--method: expected hc or hg"),
    };
    let budgets: Vec<LevelBudget> = match budgets {
        Some(list) => list,
        None => allocate(&total.amount(), h.depth(), allocation)
            .iter()
            .map(|b| LevelBudget::Measured(Loss::of(definition, b)))
            .collect(),
    };
    let max_size = match estimate_max_size {
        Some(amount) => MaxSize::Estimate {
            budget: Loss::of(definition, &amount),
        },
        None => MaxSize::Fixed(max_size),
    };
    // The plan model checks every rule; the CLI only says which flag broke it.
    let made = match method {
        Some(method) => ReleasePlan::with_budgets(h, budgets, method, max_size).map(|p| (p, None)),
        None => coco::release::plan::defaults::public_default(
            h,
            |id| dataset.groups(id),
            &total,
            max_size,
        )
        .and_then(|mut d| {
            d.plan.set_budgets(budgets)?;
            Ok((d.plan.clone(), Some(d)))
        }),
    };
    // A flag that breaks a rule of the plan is a bad command line (exit code 2).
    let (mut plan, defaults) = made.map_err(|e| -> anyhow::Error {
        use coco::release::plan::PlanRuleError as R;
        let flag = |flag: String, message: String| FlagError { flag, message }.into();
        match e {
            R::TailNotBelowK { above, k, .. } => flag(
                format!("--tail {above}"),
                format!("expected a size below --max-size ({k})"),
            ),
            R::TailAbove { above, .. } => flag(
                format!("--tail {above}"),
                format!("expected a size below {}", MAX_K),
            ),
            R::MaxSize { k } => flag(
                format!("--max-size {k}"),
                format!("expected a whole number from 1 to {MAX_K}"),
            ),
            R::MaxSizeEpsilon { reason, .. } => {
                flag("--estimate-max-size".into(), reason.to_string())
            }
            e @ (R::LeafUnmeasured { .. } | R::NothingMeasured { .. }) => flag(
                format!("--budgets {}", chosen.budgets.clone().unwrap_or_default()),
                e.to_string(),
            ),
            R::LevelCount { given, levels, names } => flag(
                "--budgets".into(),
                format!(
                    "{given} value(s) but the hierarchy has {levels} levels ({names}): give one ε per level, root first"
                ),
            ),
            e => anyhow!("{e}"),
        }
    })?;
    // Every input of `coco plan` is public: its flags, the hierarchy and each G. Only
    // coco's default plan (its split, methods and K) is `public-default`: the options
    // that make it another are the label's reason and the header's claim, so both are
    // decided here, once.
    let default_k = matches!(
        plan.max_size(),
        MaxSize::Fixed(k) if *k == coco::release::plan::defaults::DEFAULT_MAX_SIZE
    );
    let options = chosen_options(&chosen, default_k);
    plan.set_tuning(if options.is_empty() {
        Tuning::PublicDefault
    } else {
        Tuning::Public
    });
    if let MaxSize::Fixed(k) = plan.max_size()
        && !default_k
    {
        eprintln!(
            "note: K = {k} set by hand: the plan is recorded as tuning = \"public\" (chosen from public information), not coco's default; if K came from a confidential figure (coco inspect shows the largest true size), say so when releasing: coco release --tuned confidential"
        );
    }
    let notes: Vec<String> = match &defaults {
        Some(d) => d.levels.iter().map(|l| l.reason.clone()).collect(),
        None => Vec::new(),
    };
    let text = plan.to_plan_file(&options, &notes);
    match &out {
        Some(path) => std::fs::write(path, &text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => print!("{text}"),
    }
    // The cost table goes to stderr so stdout stays a valid plan.
    let k_for_cost = match plan.max_size() {
        MaxSize::Fixed(k) => *k,
        MaxSize::Estimate { .. } => DEFAULT_MAX_SIZE,
    };
    let samples = plan.noise_samples(h, |id| dataset.groups(id), k_for_cost);
    let total_samples = samples.iter().fold(0u64, |a, &s| a.saturating_add(s));
    let plan_total = plan.total().expect("levels");
    eprintln!(
        "\nlevel          nodes        {}    share  method           noise samples",
        plan.definition().symbol()
    );
    for ((l, level), s) in plan.levels().iter().zip(h.levels()).zip(samples) {
        let share = l.budget().to_f64() / plan_total.to_f64() * 100.0;
        eprintln!(
            "{:<12} {:>7} {:>8} {:>7.1}%  {:<14} {:>15}",
            l.name(),
            h.level_len(level),
            l.loss()
                .map_or_else(|| "0".to_string(), |b| b.amount().short(Rounding::Nearest)),
            share,
            l.method().label(),
            match l.is_measured() {
                // No measurement, no noise: its regions are their children's sums.
                false => "not measured".to_string(),
                true => format!(
                    "{}{}",
                    if l.method().samples_are_a_bound() {
                        "≤ "
                    } else {
                        ""
                    },
                    preview::fmt_num(s as f64)
                ),
            }
        );
    }
    let limit = coco::release::pipeline::resources::sample_limit();
    if total_samples > limit.samples {
        eprintln!(
            "\nwarning: this plan draws {} noise samples, more than the {} a run may draw ({}): coco preview and coco release will refuse it (exit code 5). Lower max_size (K), use a tail (--tail) or hg where regions hold few groups",
            coco::units::thousands(u128::from(total_samples)),
            coco::units::thousands(u128::from(limit.samples)),
            limit.source
        );
    }
    if let Some(d) = &defaults {
        eprintln!("\nwhy (public figures only: the hierarchy, each region's G and K):");
        for (l, why) in plan.levels().iter().zip(&d.levels) {
            eprintln!("  {:<12} {}", l.name(), why.reason);
        }
    }
    let total_text = match &plan_total {
        Loss::Pure(e) => format!("total ε = {}", with_exact(e)),
        Loss::Zcdp(r) => format!(
            "total ρ = {} (zCDP; as (ε, δ)-DP: ε = {:.2} at δ = 10⁻¹⁰)",
            with_exact(&r.as_unit()),
            plan_total.epsilon_at(coco::privacy::DEFAULT_DELTA)
        ),
    };
    eprintln!(
        "{total_text}{}",
        match &out {
            Some(path) => format!("; plan written to {}", super::shown(path.display())),
            None => String::new(),
        }
    );
    Ok(())
}

/// The flags of `coco plan` as given, for the plan file's header and its label.
struct Chosen {
    allocation: bool,
    ratio: Option<Ratio>,
    budgets: Option<String>,
    method: Option<MethodKind>,
    tail: Option<(coco::histogram::Size, TailLength)>,
    max_size: u32,
    estimate_max_size: Option<Ratio>,
    /// `--rho`: a total like `--total`, so not an option that makes a plan other than
    /// coco's default; kept for the record.
    #[allow(dead_code)]
    rho: Option<Rho>,
}

/// The options that make a plan other than coco's default, as flags (none for the
/// default): its own split of ε, methods set by hand, a K other than the default.
/// `--total` is not among them: the default splits any total evenly.
fn chosen_options(chosen: &Chosen, default_k: bool) -> Vec<String> {
    let mut options = Vec::new();
    if chosen.allocation {
        options.push(match &chosen.ratio {
            Some(r) => format!("--allocation geometric --ratio {r}"),
            None => "--allocation geometric".into(),
        });
    }
    if let Some(b) = &chosen.budgets {
        options.push(format!("--budgets {b}"));
    }
    if let Some(m) = chosen.method {
        options.push(format!("--method {}", m.name()));
    }
    if let Some((above, groups)) = &chosen.tail {
        options.push(format!("--tail {above} --tail-groups {groups}"));
    }
    match &chosen.estimate_max_size {
        Some(e) => options.push(format!("--estimate-max-size {e}")),
        None if !default_k => options.push(format!("--max-size {}", chosen.max_size)),
        None => {}
    }
    options
}

/// One value of `--budgets`: an ε, or 0 for a level left unmeasured.
fn level_epsilon(text: &str) -> Result<LevelBudget, coco::privacy::BudgetError> {
    LevelBudget::parse(Definition::Pure, text)
}

/// ε as a short decimal, followed by its exact value when the decimal is rounded.
pub fn with_exact(epsilon: &Epsilon) -> String {
    let short = epsilon.short(Rounding::Nearest);
    if short.starts_with('≈') {
        format!("{short} (exactly {epsilon})")
    } else {
        short
    }
}
