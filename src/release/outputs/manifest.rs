//! `manifest.json`: what a release is, how it was made, and what it was checked for.

use serde::{Deserialize, Serialize};

use crate::consistency::{Consistency, MergeRule};
use crate::data::Dataset;
use crate::estimate::{IsotonicFit, TailLength};
use crate::histogram::Size;
use crate::noise::Randomness;
use crate::privacy::{DEFAULT_DELTA, Definition, Epsilon, Loss};
use crate::release::ledger::MethodKind;
use crate::release::pipeline::checks::Checks;
use crate::release::pipeline::draw::Draw;
use crate::release::plan::tuning::Tuning;
use crate::release::plan::{LevelBudget, MaxSize, ReleasePlan};
use crate::warning::Warning;

/// The manifest's format version. Version 2 dropped `inputs` and `dataset` (digests of
/// the confidential input files and the operator's directory): a published file holds
/// nothing computed from the confidential data but the noisy tables. That provenance
/// is in the ledger entry named by `ledger_entry`.
pub const MANIFEST_VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileDigest {
    pub path: String,
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestLevel {
    pub name: String,
    /// ε as a number (exact when it is a terminating decimal; see `epsilon_exact`). For
    /// a zCDP level, the ε of its ρ's (ε, δ) statement at `privacy.delta`, rounded up.
    pub epsilon: f64,
    /// ε exactly, as a decimal or `a/b` (absent for a zCDP level: see `rho`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub epsilon_exact: String,
    /// A zCDP level's ρ exactly (absent for a pure level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<String>,
    /// `false` for a level the plan left unmeasured (`epsilon = "0"`): its budget is
    /// written as 0, its regions got no noisy measurement (no line of
    /// measurements.jsonl) and were estimated from their children. Absent, and read as
    /// `true`, for a measured level and in manifests written before coco allowed it.
    #[serde(default = "measured", skip_serializing_if = "is_measured")]
    pub measured: bool,
    pub method: MethodKind,
    /// For `method = "hc"` with a tail: sizes below `above` were measured as `Hc`, groups
    /// of size `above` or more as the sorted sizes of each region's `groups` largest groups (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<ManifestTail>,
    pub nodes: usize,
    pub noise_samples: u64,
    /// For the levels above the leaves with `wls`: how much the regions' consistent
    /// estimates leaned on their own measurements (absent otherwise, and in manifests
    /// written before coco reported it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaning: Option<ManifestLeaning>,
    /// Regions of this level whose `wls` runs were joined to stay within memory (their
    /// released counts are approximate; absent when none were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_joined: Option<u64>,
}

/// How much a level leaned on its own measurements ([`crate::consistency::guard`]),
/// averaged over its regions' sizes `0..K`; computed from the noisy measurements only.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestLeaning {
    /// The weight of the regions' own measurements in their consistent estimates
    /// (1: their own measurement alone; 0: their children's sum alone).
    pub own_weight: f64,
    /// The same weight as the variance model alone would have given it.
    pub model_own_weight: f64,
    /// The share of the sizes where the measurements showed that the children's sum
    /// deserved less weight than the model gave it.
    pub checked_share: f64,
}

impl ManifestLeaning {
    /// From a level's [`crate::consistency::guard::Leaning`], to three decimals.
    pub fn of(l: &crate::consistency::guard::Leaning) -> Option<ManifestLeaning> {
        let (own, model) = l.means()?;
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        Some(ManifestLeaning {
            own_weight: round(own),
            model_own_weight: round(model),
            checked_share: round(l.raised / l.cells),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestTail {
    /// `L`.
    pub above: Size,
    /// `m`: a number, or `"auto"` (each region's list sized from its own noisy head).
    pub groups: TailLength,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestPrivacy {
    /// `"pure"` (ε-DP, discrete Laplace) or `"zcdp"` (ρ-zCDP, discrete Gaussian).
    pub definition: Definition,
    /// The definition in words, with its citation.
    #[serde(default)]
    pub description: String,
    pub unit: String,
    pub public: String,
    /// A pure release's total ε, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<String>,
    /// A zCDP release's total ρ, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<String>,
    /// Each level's budget (`{"name", "epsilon"}` or `{"name", "rho"}`), root first.
    #[serde(default)]
    pub levels: Vec<PrivacyLevel>,
    /// The δ the guarantee is also stated at (10⁻¹⁰, the 2020 Census's).
    #[serde(default)]
    pub delta: f64,
    /// The guarantee as (ε, δ)-DP at `delta`: a pure release's ε itself (it holds at
    /// δ = 0); for zCDP, Canonne, Kamath and Steinke 2020 Corollary 13, rounded up.
    #[serde(default)]
    pub epsilon_at_delta: f64,
}

fn measured() -> bool {
    true
}

fn is_measured(measured: &bool) -> bool {
    *measured
}

/// One level's budget in the manifest's `privacy` object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivacyLevel {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rho: Option<String>,
    /// `false` for a level left unmeasured (its budget written as `"0"`); absent, and
    /// read as `true`, otherwise.
    #[serde(default = "measured", skip_serializing_if = "is_measured")]
    pub measured: bool,
}

impl PrivacyLevel {
    fn of(name: &str, budget: &LevelBudget) -> PrivacyLevel {
        let exact = budget.exact();
        PrivacyLevel {
            name: name.to_string(),
            epsilon: (budget.definition() == Definition::Pure).then(|| exact.clone()),
            rho: (budget.definition() == Definition::Zcdp).then_some(exact),
            measured: budget.is_measured(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestRandomness {
    /// `"source": "os"`, or `"source": "seeded"` with its `seed`.
    #[serde(flatten)]
    pub source: Randomness,
    pub generator: String,
    pub sampler: String,
}

/// Where `K` came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxSizeSource {
    /// Set by the operator (public).
    Operator,
    /// Estimated privately; its ε is `max_size_epsilon`.
    Estimated,
}

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub coco_version: String,
    /// UTC, RFC 3339.
    pub created: String,
    /// Total ε (sequential composition over levels, and `K` if estimated) as a number;
    /// for a zCDP release, the ε of its (ε, δ) statement at `privacy.delta`.
    pub total_epsilon: f64,
    /// Total ε exactly (absent for a zCDP release: see `total_rho`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub total_epsilon_exact: String,
    /// A zCDP release's total ρ exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_rho: Option<String>,
    pub privacy: ManifestPrivacy,
    pub max_size: Size,
    pub max_size_source: MaxSizeSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size_epsilon: Option<String>,
    /// A zCDP release's budget for estimating `K`, exactly (`max_size_epsilon` is then
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size_rho: Option<String>,
    /// The consistency step that ran.
    pub consistency: Consistency,
    /// The step the plan asked for, when another ran instead (a fallback: `wls` needs
    /// a fit at every level, which `naive` does not give); why is among `warnings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency_planned: Option<Consistency>,
    pub merge: MergeRule,
    pub hc_fit: IsotonicFit,
    pub hg_fit: IsotonicFit,
    pub levels: Vec<ManifestLevel>,
    pub outputs: Vec<FileDigest>,
    pub checks: Checks,
    pub randomness: ManifestRandomness,
    /// True for a seeded draw: reproducible, and therefore not for publication.
    pub reproducible: bool,
    pub for_publication: bool,
    /// The ledger line that records this draw.
    pub ledger_entry: String,
    /// What the operator was warned of when the draw was made (a consistency step that
    /// fell back, saturated tails).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Each of `warnings`' kind, in the same order (absent in manifests written before
    /// coco recorded them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warning_kinds: Vec<crate::warning::WarningKind>,
    /// How the plan's published parameters were chosen (see [`Tuning`]): a fact about
    /// how the operator worked, nothing computed from the data. Absent in manifests
    /// written before coco recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<Tuning>,
    /// The public proxy the plan was tuned on, as the plan file names it
    /// (`tuning_source`: `synthetic` or a proxy dataset's name). Absent when the plan
    /// names none, and in manifests written before coco recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning_source: Option<crate::release::plan::TuningSource>,
    /// How the margins of error in `uncertainty.csv` were computed (absent when none
    /// were written, and in manifests written before coco wrote them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<ManifestUncertainty>,
}

/// Builds the manifest of a release (outputs and checks filled in by the writer).
pub fn build(dataset: &Dataset, plan: &ReleasePlan, draw: &Draw) -> Manifest {
    let h = &dataset.hierarchy;
    let guarantee = draw.guarantee();
    let samples = plan.noise_samples(h, |id| dataset.groups(id), draw.max_size());
    let levels = plan
        .levels()
        .iter()
        .zip(h.levels())
        .zip(samples)
        .map(|((l, level), noise_samples)| ManifestLevel {
            name: l.name().to_string(),
            epsilon: l.loss().map_or(0.0, |b| b.epsilon_at(DEFAULT_DELTA)),
            epsilon_exact: match l.budget().definition() {
                Definition::Pure => l.budget().exact(),
                Definition::Zcdp => String::new(),
            },
            rho: (l.budget().definition() == Definition::Zcdp).then(|| l.budget().exact()),
            measured: l.is_measured(),
            method: MethodKind::of(l.method()),
            tail: l.method().tail().map(|t| ManifestTail {
                above: t.above,
                groups: t.groups,
            }),
            nodes: h.level_len(level),
            noise_samples,
            leaning: draw.leaning().get(level.0).and_then(ManifestLeaning::of),
            runs_joined: draw.runs_joined().get(level.0).copied().filter(|&n| n > 0),
        })
        .collect();
    let (max_size_source, max_size_epsilon) = match &plan.max_size() {
        MaxSize::Fixed(_) => (MaxSizeSource::Operator, None),
        MaxSize::Estimate { budget } => (MaxSizeSource::Estimated, Some(budget.clone())),
    };
    let randomness = ManifestRandomness {
        source: draw.randomness(),
        generator: "ChaCha20, one stream per measured region, keyed from the operating system (getrandom) unless seeded".into(),
        sampler: match guarantee.definition() {
            Definition::Pure => "exact two-sided geometric (discrete Laplace), integer arithmetic only".into(),
            Definition::Zcdp => "exact discrete Gaussian (Canonne, Kamath and Steinke 2020, Algorithm 3), integer arithmetic only".into(),
        },
    };
    Manifest {
        version: MANIFEST_VERSION,
        coco_version: env!("CARGO_PKG_VERSION").to_string(),
        created: crate::release::ledger::format_time(crate::release::ledger::now()),
        total_epsilon: guarantee.epsilon_at(DEFAULT_DELTA),
        total_epsilon_exact: guarantee.as_pure().map(|e| e.to_string()).unwrap_or_default(),
        total_rho: guarantee.as_zcdp().map(|r| r.to_string()),
        privacy: ManifestPrivacy {
            definition: guarantee.definition(),
            description: match guarantee.definition() {
                Definition::Pure => "pure ε-differential privacy (Kuo et al. 2018, Definition 1), discrete Laplace noise".into(),
                Definition::Zcdp => "ρ-zero-concentrated differential privacy (Bun and Steinke 2016, Definition 1.1), discrete Gaussian noise (Canonne, Kamath and Steinke 2020)".into(),
            },
            unit: "one entity: neighbouring datasets differ by one entity added to or removed from one group".into(),
            public: "the hierarchy and the number of groups in each region".into(),
            epsilon: guarantee.as_pure().map(|e| e.to_string()),
            rho: guarantee.as_zcdp().map(|r| r.to_string()),
            levels: plan
                .levels()
                .iter()
                .map(|l| PrivacyLevel::of(l.name(), l.budget()))
                .collect(),
            delta: DEFAULT_DELTA,
            epsilon_at_delta: guarantee.epsilon_at(DEFAULT_DELTA),
        },
        max_size: draw.max_size(),
        max_size_source,
        max_size_epsilon: max_size_epsilon
            .as_ref()
            .and_then(|b| b.as_pure().map(|e| e.to_string())),
        max_size_rho: match &max_size_epsilon {
            Some(Loss::Zcdp(r)) => Some(r.to_string()),
            _ => None,
        },
        consistency: draw.consistency(),
        consistency_planned: (draw.consistency() != plan.consistency())
            .then_some(plan.consistency()),
        merge: plan.merge(),
        hc_fit: plan.hc_fit(),
        hg_fit: plan.hg_fit(),
        levels,
        outputs: Vec::new(),
        checks: draw.checks().clone(),
        reproducible: draw.randomness().is_reproducible(),
        warnings: draw
            .fallback()
            .into_iter()
            .chain(draw.warnings())
            .map(Warning::to_string)
            .collect(),
        warning_kinds: draw
            .fallback()
            .into_iter()
            .chain(draw.warnings())
            .map(Warning::kind)
            .collect(),
        tuning: Some(plan.tuning()),
        tuning_source: plan.tuning_source().cloned(),
        for_publication: !draw.randomness().is_reproducible(),
        randomness,
        ledger_entry: draw.id().to_string(),
        uncertainty: None,
    }
}

/// Exact total of a manifest's level budgets (for verification tools).
pub fn level_total(manifest: &Manifest) -> Option<Epsilon> {
    let parsed: Option<Vec<Epsilon>> = manifest
        .levels
        .iter()
        .map(|l| Epsilon::parse(&l.epsilon_exact).ok())
        .collect();
    Epsilon::sum(&parsed?)
}

/// The manifest's `uncertainty`: how the margins of error were computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestUncertainty {
    /// The confidence of every interval (e.g. 0.9).
    pub confidence: f64,
    /// `parametric-bootstrap-pooled` (see `docs/uncertainty.md`).
    pub method: crate::release::margins::MarginsMethod,
    /// Bootstrap replicates drawn.
    pub replicates: u32,
    /// Top replicates drawn besides, in all, and the most levels one drew (the first
    /// `top_levels`): those with few regions, drawn again on the hierarchy cut below them
    /// ([`crate::release::margins::top_runs`]; `top_runs` says how many drew how many
    /// levels). Absent when none were drawn (and in manifests written before coco drew
    /// them; a manifest without `top_runs` drew `top_replicates` of its first
    /// `top_levels` levels).
    /// regions, drawn again on the hierarchy cut below them
    /// ([`crate::release::margins::top_cut`]). Absent when none were drawn (and in
    /// manifests written before coco drew them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub top_replicates: u32,
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub top_levels: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_runs: Vec<crate::release::margins::TopRun>,
    /// How an interval is read from the pooled differences.
    pub rule: crate::release::margins::Rule,
    /// The bootstrap's key, 64 hexadecimal digits
    /// ([`crate::release::margins::BootstrapKey`]): `coco margins` re-runs the
    /// bootstrap with it, so that a statistic it answers has the interval the release's
    /// files give it. It keys post-processing noise only (`docs/privacy.md`). Absent in
    /// manifests written before coco published it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
}

impl ManifestUncertainty {
    /// "100 bootstrap replicates of the release", or with top replicates "2 bootstrap
    /// replicates of the release and 98 more of its first level, the one with few
    /// regions".
    pub fn replicates_phrase(&self) -> String {
        let mut out = format!(
            "{} bootstrap replicate{} of the release",
            self.replicates,
            if self.replicates == 1 { "" } else { "s" }
        );
        let first = |n: usize| match n {
            1 => "its first level".to_string(),
            n => format!("its first {n} levels"),
        };
        match self.runs().as_slice() {
            [] => {}
            [run] => {
                let levels = match run.levels {
                    1 => "its first level, the one with few regions".to_string(),
                    n => format!("its first {n} levels, those with few regions"),
                };
                out.push_str(&format!(" and {} more of {levels}", run.replicates));
            }
            runs => {
                let each: Vec<String> = runs
                    .iter()
                    .map(|run| format!("{} of {}", run.replicates, first(run.levels)))
                    .collect();
                out.push_str(&format!(
                    " and {} more of its levels with few regions ({})",
                    self.top_replicates,
                    each.join(", ")
                ));
            }
        }
        out
    }

    /// The runs of top replicates drawn: `top_runs`, or in a manifest written before
    /// coco recorded them, `top_replicates` of the first `top_levels` levels.
    pub fn runs(&self) -> Vec<crate::release::margins::TopRun> {
        if !self.top_runs.is_empty() {
            return self.top_runs.clone();
        }
        if self.top_replicates == 0 {
            return Vec::new();
        }
        vec![crate::release::margins::TopRun {
            levels: self.top_levels,
            replicates: self.top_replicates,
        }]
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}
