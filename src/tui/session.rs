//! The open dataset and the plan being edited: what every screen shares.
//!
//! Every change to the plan goes through a method here that bumps
//! [`Session::revision`], so results computed from an older plan can say they are stale.

use std::path::PathBuf;
use std::sync::Arc;

use crate::consistency::{Consistency, MergeRule};
use crate::data::{Dataset, LevelId, NodeId};
use crate::estimate::{Method, Tail, noise_variance};
use crate::histogram::Size;
use crate::privacy::{DEFAULT_DELTA, Definition, Epsilon, Loss, Ratio, Rounding};
use crate::proxy::Proxy;
use crate::release::ledger::{DatasetIdentity, Ledger};
use crate::release::plan::tuning::Tuning;
use crate::release::plan::{Allocation, LevelBudget, MaxSize, ReleasePlan, allocate};
use crate::tradeoff::Amount;
use crate::tradeoff::PreviewData;

use super::overview::Overview;

/// The K of a new plan (the same default as `coco plan`).
pub const DEFAULT_MAX_SIZE: Size = crate::release::plan::defaults::DEFAULT_MAX_SIZE;

/// The ε that estimating K gets when the operator first asks for it.
pub const DEFAULT_MAX_SIZE_EPSILON: &str = "0.01";

/// How the total ε is split over the levels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preset {
    Uniform,
    /// Each level gets `ratio` times its parent's share (Qardaji et al. §3.5).
    Geometric {
        ratio: Ratio,
    },
    /// Budgets set level by level.
    Custom,
}

impl Preset {
    pub fn describe(&self) -> String {
        match self {
            Preset::Uniform => "uniform".into(),
            Preset::Geometric { ratio } => format!("geometric, ratio {ratio}"),
            Preset::Custom => "custom".into(),
        }
    }
}

/// The ledger's figures for the open dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerStatus {
    /// ε drawn so far on this dataset (every draw, written or not).
    pub spent: Option<Epsilon>,
    /// The part of `spent` drawn and not yet decided (recorded as pending).
    pub pending: Option<Epsilon>,
    pub releases: usize,
    /// The binding cap when it is an ε cap (the figures the Budget screen adds a pure
    /// plan's total to).
    pub cap: Option<Epsilon>,
    /// Which cap binds (the strictest that matches), when one does.
    pub cap_rule: Option<String>,
    /// ρ drawn so far on this dataset: every draw's, a pure draw's as ε²/2.
    pub spent_rho: Option<crate::privacy::Rho>,
    /// How many of the draws were zCDP draws (which no ε accounts).
    pub zcdp_draws: usize,
    /// The binding cap in its own unit (ε, ρ or (ε, δ)), when one binds.
    pub binding: Option<crate::release::ledger::CapLimit>,
    /// Why the ledger could not be read, or why it stops every draw (it needs repair).
    pub error: Option<String>,
    /// What the ledger records of losses the operator accepted (`coco ledger reanchor
    /// --accept-loss`): how many, the last, and the part of `spent` lost with them.
    pub losses: Option<String>,
}

impl LedgerStatus {
    pub fn read(ledger: Option<&Ledger>, identity: &DatasetIdentity) -> LedgerStatus {
        let Some(ledger) = ledger else {
            return LedgerStatus {
                error: Some("no coco home: set COCO_HOME to a writable directory".into()),
                ..LedgerStatus::default()
            };
        };
        let status = ledger.read_anchored().and_then(|(read, anchor)| {
            let caps = ledger.cap_status(&read, identity)?;
            // A defect, or a ledger that lost lines its anchor records: draws stop.
            let defect = read
                .fail_closed(&ledger.path())
                .and_then(|()| ledger.check_anchor(&read, anchor.as_ref()).map(|_| ()))
                .err();
            let losses = losses_text(&read, &caps.spent);
            Ok((defect, caps, losses))
        });
        match status {
            Ok((defect, caps, losses)) => LedgerStatus {
                spent: caps.spent.epsilon.clone(),
                pending: caps.spent.pending.clone(),
                releases: caps.spent.draws,
                // The TUI's warning speaks ε; a ρ or (ε, δ) cap still binds every draw
                // (Reservation::open checks it).
                cap: caps.binding().and_then(|r| r.cap.as_epsilon().cloned()),
                cap_rule: caps.binding().map(|r| r.kind().to_string()),
                spent_rho: caps.spent.rho.clone(),
                zcdp_draws: caps.spent.zcdp_draws,
                binding: caps.binding().map(|r| r.cap.clone()),
                error: defect.map(|e| e.to_string()),
                losses,
            },
            Err(e) => LedgerStatus {
                error: Some(e.to_string()),
                ..LedgerStatus::default()
            },
        }
    }

    /// Spent so far plus `more`.
    pub fn after(&self, more: &Epsilon) -> Epsilon {
        match &self.spent {
            Some(s) => s.add(more),
            None => more.clone(),
        }
    }

    /// Whether drawing `more` would take the dataset past its cap.
    pub fn exceeds_cap(&self, more: &Epsilon) -> bool {
        self.cap.as_ref().is_some_and(|cap| &self.after(more) > cap)
    }

    /// Whether the dataset's spending is stated in ρ: a zCDP draw was made, or the
    /// binding cap is a ρ or an (ε, δ) cap.
    pub fn in_rho(&self) -> bool {
        self.zcdp_draws > 0
            || self
                .binding
                .as_ref()
                .is_some_and(|c| c.as_epsilon().is_none())
    }

    /// `ε spent` or `ρ spent`, as [`LedgerStatus::spent_text`] states it.
    pub fn spent_label(&self) -> &'static str {
        if self.in_rho() {
            "ρ spent"
        } else {
            "ε spent"
        }
    }

    /// The binding cap and which it is, or `none`; a cap reads rounded down.
    pub fn cap_text(&self, exact: bool) -> String {
        let cap = |c: &Epsilon| show(c, exact, Rounding::Down);
        let text = match (&self.cap, &self.binding) {
            (Some(c), _) => cap(c),
            (None, Some(limit)) => limit.short(Rounding::Down),
            (None, None) => return "none".into(),
        };
        match &self.cap_rule {
            Some(rule) => format!("{text} ({rule})"),
            None => text,
        }
    }

    /// What was spent: ε (rounded up) and the part of it pending a decision; or, when
    /// the spending is stated in ρ ([`LedgerStatus::in_rho`]), ρ (rounded up) with the ε
    /// it implies at δ = 10⁻¹⁰ (or the binding cap's δ).
    pub fn spent_text(&self, exact: bool) -> String {
        if self.in_rho() {
            let Some(rho) = &self.spent_rho else {
                return "0".into();
            };
            let delta = self
                .binding
                .as_ref()
                .and_then(|c| c.delta())
                .unwrap_or(crate::privacy::DEFAULT_DELTA);
            return format!(
                "{} (as (ε, δ)-DP: ε = {:.2} at δ = {delta:e})",
                show(rho, exact, Rounding::Up),
                crate::privacy::epsilon_at_delta(rho, delta)
            );
        }
        let spent = self
            .spent
            .as_ref()
            .map_or_else(|| "0".to_string(), |s| show(s, exact, Rounding::Up));
        match &self.pending {
            Some(p) => format!("{spent} ({} pending)", show(p, exact, Rounding::Up)),
            None => spent,
        }
    }
}

/// What the ledger records of accepted losses, for the Release screen: how many, when
/// the last was accepted, and how much of what this dataset spent they still count.
fn losses_text(
    read: &crate::release::ledger::LedgerRead,
    spent: &crate::release::ledger::Spend,
) -> Option<String> {
    use crate::release::ledger::LedgerEvent;
    let losses: Vec<&LedgerEvent> = read
        .events
        .iter()
        .map(|e| &e.event)
        .filter(|e| matches!(e, LedgerEvent::LossAccepted(_)))
        .collect();
    let last = losses.last()?;
    let date = crate::release::ledger::format_time(last.time());
    let day = date.split('T').next().unwrap_or(&date);
    let mine = match &spent.lost {
        Some(lost) => format!(
            "; ε {} of this dataset's spending is from {} lost draw(s), still counted",
            lost.short(Rounding::Up),
            spent.lost_draws
        ),
        None => "; none of this dataset's draws were lost".into(),
    };
    Some(format!(
        "the ledger records {} accepted loss(es) of lines, the last on {day} (coco ledger verify){mine}",
        losses.len()
    ))
}

/// ε exactly, or short and rounded as `rounding` says.
pub fn show<U: crate::privacy::Unit>(
    epsilon: &crate::privacy::Budget<U>,
    exact: bool,
    rounding: Rounding,
) -> String {
    if exact {
        epsilon.to_string()
    } else {
        epsilon.short(rounding)
    }
}

/// A zCDP loss as the (ε, δ)-DP statement it implies at δ = 10⁻¹⁰ (the 2020 Census's
/// δ, coco's default), the ε rounded up to two decimals so that the text never states
/// less than the truth; `None` for a pure ε, which holds at δ = 0.
pub fn at_delta(loss: &Loss) -> Option<String> {
    match loss {
        Loss::Pure(_) => None,
        Loss::Zcdp(_) => {
            let epsilon = (loss.epsilon_at(DEFAULT_DELTA) * 100.0).ceil() / 100.0;
            Some(format!("as (ε, δ)-DP: ε = {epsilon:.2} at δ = 10⁻¹⁰"))
        }
    }
}

/// Per-level figures of the plan, recomputed when it changes.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelFigures {
    /// Noise samples the level costs (`None` for hc while K is estimated).
    pub noise_samples: Option<u64>,
    /// Standard deviation of the noise on one measured cell: √(2p)/(1−p), p = e^(−ε/Δ);
    /// `None` for a level left unmeasured.
    pub noise_sd: Option<f64>,
    /// Share of the plan's total, in percent.
    pub share: f64,
}

fn one() -> Epsilon {
    Epsilon::from_ratio(1, 1).expect("1 is positive")
}

/// The open dataset and the plan.
pub struct Session {
    pub dataset: Arc<Dataset>,
    pub overview: Overview,
    pub plan: ReleasePlan,
    /// Bumped on every change of the plan.
    pub revision: u64,
    pub preset: Preset,
    /// Where the plan was last saved or loaded.
    pub plan_file: Option<PathBuf>,
    pub figures: Vec<LevelFigures>,
    pub ledger: LedgerStatus,
    /// The public proxy previews and the trade-off search run on (`None`: none open).
    pub proxy: Option<Arc<Proxy>>,
    /// The operator chose the confidential data for previews (`p`, `none`). Without a
    /// proxy and without this choice, the first run opens the synthetic proxy: the
    /// screens default to public data.
    pub confidential_chosen: bool,
    /// Confidential figures (the Dataset screen's entities and sizes, the Hierarchy
    /// screen's true histograms) have been on screen: a K or a tail typed from then on
    /// may have been read off them, and is recorded as such.
    pub confidential_figures: bool,
    /// Results measured against the confidential data have been shown: from then on
    /// the plan is recorded as tuned on confidential previews.
    pub confidential_previews: bool,
    /// Results measured on a proxy have been shown: edits from then on are proxy tuning.
    pub proxy_previews: bool,
}

impl Session {
    /// A session with coco's public default plan (`coco plan` without options: total
    /// ε = 1 split evenly, each level's method from its public `G`, K = 10000).
    /// Computes the dataset's [`Overview`] first: at scale, call [`Session::open`] with
    /// an overview computed off the UI thread instead.
    pub fn new(dataset: Arc<Dataset>, ledger: Option<&Ledger>) -> Session {
        let overview = Overview::of(&dataset);
        Session::open(dataset, overview, ledger)
    }

    /// [`Session::new`] with the dataset's overview already computed.
    pub fn open(dataset: Arc<Dataset>, overview: Overview, ledger: Option<&Ledger>) -> Session {
        let plan = crate::release::plan::defaults::public_default(
            &dataset.hierarchy,
            |id| dataset.groups(id),
            Loss::Pure(one()),
            MaxSize::Fixed(DEFAULT_MAX_SIZE),
        )
        .expect("ε = 1 split over the levels, the default methods, K = 10000 keep every plan rule")
        .plan;
        let status = LedgerStatus::read(ledger, &overview.identity);
        let mut s = Session {
            overview,
            dataset,
            plan,
            revision: 0,
            preset: Preset::Uniform,
            plan_file: None,
            figures: Vec::new(),
            ledger: status,
            proxy: None,
            confidential_chosen: false,
            confidential_figures: false,
            confidential_previews: false,
            proxy_previews: false,
        };
        s.figures = s.compute_figures();
        s
    }

    /// The plan's total (levels and K's estimate), in its measure.
    pub fn loss(&self) -> Loss {
        self.plan
            .total()
            .expect("a plan has one level per level of the hierarchy")
    }

    /// The plan's total, as a value in its measure (see [`amount`]).
    pub fn total(&self) -> Amount {
        amount(&self.loss())
    }

    /// The levels' total, without the budget for estimating K (the plan rules keep
    /// the leaf level measured, so there is one).
    pub fn levels_total(&self) -> Amount {
        Amount::sum(self.level_amounts().iter().flatten()).expect("a measured level")
    }

    /// The plan's privacy definition (pure ε-DP or ρ-zCDP).
    pub fn definition(&self) -> Definition {
        self.plan.definition()
    }

    /// `ε` or `ρ`: what every budget on the screens is labelled with.
    pub fn symbol(&self) -> &'static str {
        self.definition().symbol()
    }

    /// Switches the plan between pure ε-DP and ρ-zCDP. Every budget keeps its value in
    /// the other measure (ε = 1/3 becomes ρ = 1/3), so switching twice gives the plan
    /// back; the operator then allocates in the new measure. Converting ε to ρ = ε²/2
    /// instead would not survive the way back (√(2ρ) is rarely rational).
    pub fn toggle_definition(&mut self) -> Result<(), String> {
        let other = match self.definition() {
            Definition::Pure => Definition::Zcdp,
            Definition::Zcdp => Definition::Pure,
        };
        self.plan.set_definition(other).map_err(|e| e.to_string())?;
        self.changed();
        Ok(())
    }

    /// Each level's budget as a value in the plan's measure, root first; `None` for a
    /// level left unmeasured.
    pub fn level_amounts(&self) -> Vec<Option<Amount>> {
        self.plan
            .levels()
            .iter()
            .map(|l| l.loss().map(amount))
            .collect()
    }

    /// A value typed or computed on the Budget screen as a budget of the plan's measure.
    pub fn in_measure(&self, value: &Amount) -> Loss {
        Loss::of(self.plan.definition(), value)
    }

    pub fn depth(&self) -> usize {
        self.dataset.hierarchy.depth()
    }

    /// K as known before any draw: the fixed bound, or `None` when it is estimated.
    pub fn fixed_max_size(&self) -> Option<Size> {
        match self.plan.max_size() {
            MaxSize::Fixed(k) => Some(*k),
            MaxSize::Estimate { .. } => None,
        }
    }

    fn changed(&mut self) {
        self.revision += 1;
        self.figures = self.compute_figures();
        let edited = self.plan.tuning().edited();
        self.plan.set_tuning(self.tuned(edited));
    }

    /// `tuning` made no better than what this session has shown the operator.
    fn tuned(&self, tuning: Tuning) -> Tuning {
        if self.confidential_previews {
            tuning.worse(Tuning::ConfidentialPreviews)
        } else if self.proxy_previews && tuning.is_public() {
            tuning.worse(Tuning::Proxy)
        } else {
            tuning
        }
    }

    /// What previews and searches run on: the proxy when one is chosen, else the
    /// confidential dataset.
    pub fn preview_target(&self) -> (Arc<Dataset>, PreviewData) {
        match &self.proxy {
            Some(p) => (p.dataset.clone(), p.preview_data()),
            None => (self.dataset.clone(), PreviewData::Confidential),
        }
    }

    /// What the next preview or search runs on, as its figures will be labelled: the
    /// proxy, the confidential data when the operator chose it, else the synthetic
    /// proxy (opened at the first run).
    pub fn target_data(&self) -> PreviewData {
        match (&self.proxy, self.confidential_chosen) {
            (Some(p), _) => p.preview_data(),
            (None, true) => PreviewData::Confidential,
            (None, false) => PreviewData::Proxy {
                label: crate::proxy::SYNTHETIC_LABEL.into(),
                source: crate::proxy::SYNTHETIC_SOURCE.into(),
            },
        }
    }

    /// Whether a preview may start now on what it should run on: a proxy is open, or
    /// the operator chose the confidential data.
    pub fn target_ready(&self) -> bool {
        self.proxy.is_some() || self.confidential_chosen
    }

    /// Chooses the proxy previews run on (`None`: the confidential data, chosen).
    pub fn set_proxy(&mut self, proxy: Option<Arc<Proxy>>) {
        self.confidential_chosen = proxy.is_none();
        self.proxy = proxy;
    }

    /// Notes that a screen of confidential figures (Dataset, Hierarchy) was shown.
    pub fn saw_confidential_figures(&mut self) {
        self.confidential_figures = true;
    }

    /// After an edit that sets a size (K, a tail) typed by the operator: tainted when
    /// confidential figures were on screen before it.
    fn typed_size(&mut self) {
        if self.confidential_figures {
            self.plan
                .set_tuning(self.plan.tuning().worse(Tuning::ConfidentialPreviews));
        }
    }

    /// Notes that results measured on `data` were shown: after confidential ones the
    /// plan is recorded as tuned on confidential previews (its results stay current).
    pub fn saw_results(&mut self, data: &PreviewData) {
        match data {
            PreviewData::Confidential => {
                self.confidential_previews = true;
                self.plan
                    .set_tuning(self.plan.tuning().worse(Tuning::ConfidentialPreviews));
            }
            PreviewData::Proxy { .. } => self.proxy_previews = true,
        }
    }

    /// Puts a recommended plan's budgets and methods into the plan (K, consistency
    /// and fits as they are), all or nothing; the tuning records where the
    /// recommendation was computed.
    pub fn apply_recommended(
        &mut self,
        recommended: &ReleasePlan,
        data: &PreviewData,
    ) -> Result<(), String> {
        let mut plan = self.plan.clone();
        let budgets = recommended
            .levels()
            .iter()
            .map(|l| l.budget().clone())
            .collect();
        plan.set_budgets(budgets).map_err(|e| e.to_string())?;
        for (i, l) in recommended.levels().iter().enumerate() {
            plan.set_method(LevelId(i), l.method())
                .map_err(|e| e.to_string())?;
        }
        self.plan = plan;
        self.preset = Preset::Custom;
        self.changed();
        data.label(&mut self.plan);
        Ok(())
    }

    fn compute_figures(&self) -> Vec<LevelFigures> {
        let h = &self.dataset.hierarchy;
        let total = self.levels_total().to_f64();
        let k = self.fixed_max_size();
        h.levels()
            .zip(self.plan.levels())
            .map(|(level, lp)| LevelFigures {
                noise_samples: match (lp.method(), k) {
                    _ if !lp.is_measured() => Some(0),
                    (Method::Hg, _) => Some(self.dataset.groups(NodeId::ROOT)),
                    (m @ Method::HcTail(_), Some(k)) => Some(
                        h.level_nodes(level)
                            .map(|id| m.noise_samples(self.dataset.groups(id), k))
                            .sum(),
                    ),
                    (m, Some(k)) => Some(h.level_len(level) as u64 * m.noise_samples(0, k)),
                    (_, None) => None,
                },
                noise_sd: lp
                    .loss()
                    .map(|b| noise_variance(lp.method().sensitivity_norms(), b).sqrt()),
                share: lp.budget().to_f64() / total * 100.0,
            })
            .collect()
    }

    /// Sets one level's budget, in the plan's measure (the preset becomes custom);
    /// `None` leaves the level unmeasured. With no level held the total moves with it;
    /// while a level is held the total stays, and the measured levels neither held nor
    /// edited give or take the difference in proportion to their budgets ([`rebalance`]).
    pub fn set_budget(
        &mut self,
        level: LevelId,
        value: impl Into<Option<Amount>>,
    ) -> Result<(), String> {
        let value = value.into();
        if self.held().iter().any(|&h| h) {
            let budgets = rebalance(
                &self.level_amounts(),
                &self.held(),
                Some((level.0, value)),
                &self.levels_total(),
            )?;
            self.set_budgets(budgets)?;
            self.preset = Preset::Custom;
            return Ok(());
        }
        let budget = self.level_budget(value);
        self.plan
            .set_budget(level, budget)
            .map_err(|e| e.to_string())?;
        self.preset = Preset::Custom;
        self.changed();
        Ok(())
    }

    /// Which levels the operator holds, root first.
    pub fn held(&self) -> Vec<bool> {
        self.plan.levels().iter().map(|l| l.held()).collect()
    }

    /// Holds or releases one level's share. Not an edit of what is measured: previews
    /// stay current and the tuning label stays; the plan file records it.
    pub fn toggle_held(&mut self, level: LevelId) -> Result<bool, String> {
        let held = self.held();
        let now = !held[level.0];
        if now
            && held
                .iter()
                .enumerate()
                .filter(|&(i, &h)| h || i == level.0)
                .count()
                == held.len()
        {
            return Err(
                "every level would be held: at least one level must stay free to rebalance"
                    .to_string(),
            );
        }
        self.plan.set_held(level, now);
        Ok(now)
    }

    /// Moves one level's budget to the next value of [`EPSILON_STEPS`] above or below it.
    pub fn step_budget(&mut self, level: LevelId, up: bool) -> Result<(), String> {
        let budget = self.plan.levels()[level.0].budget();
        let Some(loss) = budget.loss() else {
            // An unmeasured level steps up to the smallest step, and no lower.
            return match up {
                true => {
                    let first = EPSILON_STEPS[0];
                    self.set_budget(level, Amount::parse(first).expect("the steps parse"))
                }
                false => Err(format!("{budget}: the level is already not measured")),
            };
        };
        let next = step(&amount(loss), up).ok_or_else(|| {
            if up {
                format!("{budget} is already at the top of the steps")
            } else {
                format!("{budget} is already at the bottom of the steps")
            }
        })?;
        self.set_budget(level, next)
    }

    /// Sets the total: uniform and geometric presets split it again, custom budgets are
    /// scaled (rounded down to six significant digits, the leaves take the rest, so the
    /// sum is exact).
    pub fn set_total(&mut self, total: Amount) -> Result<(), String> {
        let levels = self.depth();
        let held = self.held();
        if held.iter().any(|&h| h) {
            // Held levels keep their share of the total; the rest is split over the
            // other measured levels by the preset (custom: in proportion to their
            // budgets). A level left unmeasured stays so.
            let old = self.levels_total();
            let now = self.level_amounts();
            let mut budgets = now.clone();
            for (b, _) in budgets.iter_mut().zip(&held).filter(|(_, h)| **h) {
                if let Some(b) = b {
                    let scaled = b.mul_big(&total).div_big(&old);
                    *b = if scaled.within_text_bounds() {
                        scaled
                    } else {
                        scaled.round_down_significant(6)
                    };
                }
            }
            let kept = Amount::sum(
                budgets
                    .iter()
                    .zip(&held)
                    .filter(|(_, h)| **h)
                    .filter_map(|(b, _)| b.as_ref()),
            );
            let rest = match kept {
                Some(kept) => total.checked_sub(&kept).ok_or_else(|| {
                    format!(
                        "cannot keep the held levels' shares within a total of {}",
                        self.in_measure(&total)
                    )
                })?,
                None => total.clone(),
            };
            let free: Vec<(usize, Amount)> = now
                .iter()
                .enumerate()
                .filter(|&(i, _)| !held[i])
                .filter_map(|(i, b)| Some((i, b.clone()?)))
                .collect();
            if free.is_empty() {
                return Err(
                    "every measured level is held: release one to change the total".to_string(),
                );
            }
            let split = match &self.preset {
                Preset::Uniform => allocate(&rest, free.len(), Allocation::Uniform),
                Preset::Geometric { ratio } => allocate(
                    &rest,
                    free.len(),
                    Allocation::Geometric {
                        ratio: ratio.clone(),
                    },
                ),
                Preset::Custom => {
                    let old_free: Vec<Amount> = free.iter().map(|(_, b)| b.clone()).collect();
                    proportional(&old_free, &rest).ok_or_else(|| {
                        format!(
                            "cannot scale the budgets to a total of {}",
                            self.in_measure(&total)
                        )
                    })?
                }
            };
            for ((i, _), b) in free.iter().zip(split) {
                budgets[*i] = Some(b);
            }
            return self.set_budgets(budgets);
        }
        let budgets = match &self.preset {
            Preset::Uniform => allocate(&total, levels, Allocation::Uniform)
                .into_iter()
                .map(Some)
                .collect(),
            Preset::Geometric { ratio } => allocate(
                &total,
                levels,
                Allocation::Geometric {
                    ratio: ratio.clone(),
                },
            )
            .into_iter()
            .map(Some)
            .collect(),
            Preset::Custom => {
                let old = self.levels_total();
                // A level left unmeasured stays so.
                let mut b: Vec<Option<Amount>> = self.plan.levels()[..levels - 1]
                    .iter()
                    .map(|l| {
                        l.loss().map(|loss| {
                            amount(loss)
                                .mul_big(&total)
                                .div_big(&old)
                                .round_down_significant(6)
                        })
                    })
                    .collect();
                let rest = match Amount::sum(b.iter().flatten()) {
                    Some(used) => total.checked_sub(&used).ok_or_else(|| {
                        format!(
                            "cannot scale the budgets to a total of {}",
                            self.in_measure(&total)
                        )
                    })?,
                    None => total.clone(),
                };
                b.push(Some(rest));
                b
            }
        };
        self.set_budgets(budgets)
    }

    /// A level's budget in the plan's measure: `None` is a level left unmeasured.
    fn level_budget(&self, value: Option<Amount>) -> LevelBudget {
        match value {
            Some(v) => LevelBudget::Measured(self.in_measure(&v)),
            None => LevelBudget::Unmeasured(self.plan.definition()),
        }
    }

    /// Sets every level's budget at once (root first; `None` for a level left
    /// unmeasured), keeping the preset.
    pub fn set_budgets(&mut self, budgets: Vec<Option<Amount>>) -> Result<(), String> {
        let budgets: Vec<LevelBudget> = budgets.into_iter().map(|b| self.level_budget(b)).collect();
        self.plan.set_budgets(budgets).map_err(|e| e.to_string())?;
        self.changed();
        Ok(())
    }

    /// Applies a preset to the current levels' total.
    pub fn apply_preset(&mut self, preset: Preset) -> Result<(), String> {
        let total = self.levels_total();
        let previous = std::mem::replace(&mut self.preset, preset);
        if let Err(e) = self.set_total(total) {
            self.preset = previous;
            return Err(e);
        }
        Ok(())
    }

    /// Steps the geometric ratio by 0.05 (at least 0.05) and applies it.
    pub fn step_ratio(&mut self, up: bool) -> Result<(), String> {
        let ratio = match &self.preset {
            Preset::Geometric { ratio } => ratio.clone(),
            _ => self.overview.default_ratio.clone(),
        };
        let step = Ratio::from_ratio(1, 20).expect("positive");
        let next = if up {
            ratio.add(&step)
        } else {
            ratio
                .checked_sub(&step)
                .filter(|r| *r >= step)
                .ok_or_else(|| format!("the ratio {ratio} cannot go lower"))?
        };
        self.apply_preset(Preset::Geometric { ratio: next })
    }

    /// hc → hc + tail → hg → hc at one level (a naive level becomes hc). The tail
    /// starts at [`Tail::AUTO`] (the default plan's), or just below K when K is smaller.
    pub fn toggle_method(&mut self, level: LevelId) -> Result<(), String> {
        let method = match self.plan.levels()[level.0].method() {
            Method::Hc => Method::HcTail(Tail::AUTO.below(self.plan.max_size().bound())),
            Method::HcTail(_) => Method::Hg,
            Method::Hg | Method::Naive => Method::Hc,
        };
        self.set_method(level, method)
    }

    /// coco's public default for one level under the plan's K: the method `coco plan`
    /// writes and why (from the level's public `G`s only).
    pub fn public_default(&self, level: LevelId) -> crate::release::plan::defaults::LevelDefault {
        let g = &self.overview.levels[level.0].groups;
        crate::release::plan::defaults::level_default(g.median, g.max, self.plan.max_size().bound())
    }

    /// Gives every level its public default method (budgets unchanged); all or nothing.
    pub fn apply_public_defaults(&mut self) -> Result<(), String> {
        let mut plan = self.plan.clone();
        for i in 0..self.depth() {
            let level = LevelId(i);
            plan.set_method(level, self.public_default(level).method)
                .map_err(|e| e.to_string())?;
        }
        self.plan = plan;
        self.changed();
        Ok(())
    }

    /// Gives one level a tail typed by the operator (method hc with a tail), or plain
    /// hc with `None`. A tail typed after confidential figures were on screen marks the
    /// plan `confidential-previews` (its `L` and `m` may have been read off them).
    pub fn set_tail(&mut self, level: LevelId, tail: Option<Tail>) -> Result<(), String> {
        self.set_method(level, tail.map_or(Method::Hc, Method::HcTail))?;
        if tail.is_some() {
            self.typed_size();
        }
        Ok(())
    }

    fn set_method(&mut self, level: LevelId, method: Method) -> Result<(), String> {
        self.plan
            .set_method(level, method)
            .map_err(|e| e.to_string())?;
        self.changed();
        Ok(())
    }

    /// Sets where K comes from; refused (the plan unchanged) if a level's tail would
    /// not lie below it. A K other than the default, typed after confidential figures
    /// were on screen (the Dataset screen shows the largest true size), marks the plan
    /// `confidential-previews`; K estimated privately does not.
    pub fn set_max_size(&mut self, max_size: MaxSize) -> Result<(), String> {
        let typed = matches!(max_size, MaxSize::Fixed(k) if k != DEFAULT_MAX_SIZE);
        self.plan
            .set_max_size(max_size)
            .map_err(|e| e.to_string())?;
        self.changed();
        if typed {
            self.typed_size();
        }
        Ok(())
    }

    pub fn toggle_consistency(&mut self) {
        self.plan.set_consistency(match self.plan.consistency() {
            Consistency::TopDown => Consistency::Wls,
            Consistency::Wls => Consistency::TopDown,
        });
        self.changed();
    }

    pub fn toggle_merge(&mut self) {
        self.plan.set_merge(match self.plan.merge() {
            MergeRule::Weighted => MergeRule::Average,
            MergeRule::Average => MergeRule::Weighted,
        });
        self.changed();
    }

    /// Replaces the plan (a validated plan read from a file, with the tuning it
    /// records, made no better than this session's previews allow).
    pub fn replace_plan(&mut self, plan: ReleasePlan, file: PathBuf) {
        // A file that says public-default is believed only if it is coco's default.
        let tuning = crate::release::plan::defaults::checked(&plan, &self.dataset);
        self.plan = plan;
        self.preset = Preset::Custom;
        self.plan_file = Some(file);
        self.changed();
        self.plan.set_tuning(self.tuned(tuning));
    }

    pub fn refresh_ledger(&mut self, ledger: Option<&Ledger>) {
        self.ledger = LedgerStatus::read(ledger, &self.overview.identity);
    }
}

/// `parts` scaled to sum to `total` exactly, in proportion: each rounded down to six
/// significant digits when its exact value is too long for a plan file, the last taking
/// what is left. `None` when nothing would be left for it.
pub fn proportional(parts: &[Amount], total: &Amount) -> Option<Vec<Amount>> {
    let old = Amount::sum(parts)?;
    let mut out: Vec<Amount> = parts[..parts.len() - 1]
        .iter()
        .map(|p| {
            let scaled = p.mul_big(total).div_big(&old);
            if scaled.within_text_bounds() {
                scaled
            } else {
                scaled.round_down_significant(6)
            }
        })
        .collect();
    let rest = match Amount::sum(&out) {
        Some(used) => total.checked_sub(&used)?,
        None => total.clone(),
    };
    out.push(rest);
    Some(out)
}

/// The budgets after `edited` (a level and its new value) with the total kept at
/// `total`: held levels keep their budgets, the edited level takes its value, and the
/// others share what is left in proportion to their budgets. Refused when no level is
/// left to rebalance, or nothing would be left for them.
pub fn rebalance(
    budgets: &[Option<Amount>],
    held: &[bool],
    edited: Option<(usize, Option<Amount>)>,
    total: &Amount,
) -> Result<Vec<Option<Amount>>, String> {
    let mut out = budgets.to_vec();
    let edited_level = edited.as_ref().map(|(i, _)| *i);
    if let Some((i, value)) = edited {
        out[i] = value;
    }
    // A level left unmeasured stays so: only measured levels rebalance.
    let free: Vec<(usize, Amount)> = budgets
        .iter()
        .enumerate()
        .filter(|&(i, _)| !held[i] && Some(i) != edited_level)
        .filter_map(|(i, b)| Some((i, b.clone()?)))
        .collect();
    if free.is_empty() {
        return Err(
            "every other level is held: release one to change this level, or change the total"
                .to_string(),
        );
    }
    let fixed = Amount::sum(
        out.iter()
            .enumerate()
            .filter(|(i, _)| !free.iter().any(|(f, _)| f == i))
            .filter_map(|(_, b)| b.as_ref()),
    );
    let rest = match fixed {
        Some(f) => total.checked_sub(&f),
        None => Some(total.clone()),
    }
    .ok_or_else(|| {
        format!(
            "the held and edited levels would take all of the total {total}: nothing left for the others"
        )
    })?;
    let old: Vec<Amount> = free.iter().map(|(_, b)| b.clone()).collect();
    let split = proportional(&old, &rest)
        .ok_or_else(|| format!("cannot rebalance the free levels to {rest}"))?;
    for ((i, _), b) in free.iter().zip(split) {
        out[*i] = Some(b);
    }
    Ok(out)
}

/// The ladder of values (an ε or a ρ, as the plan's measure says) that stepping moves
/// along.
pub const EPSILON_STEPS: &[&str] = &[
    "0.001", "0.002", "0.005", "0.01", "0.02", "0.03", "0.05", "0.075", "0.1", "0.125", "0.15",
    "0.2", "0.25", "0.3", "0.35", "0.4", "0.45", "0.5", "0.6", "0.7", "0.75", "0.8", "0.9", "1",
    "1.25", "1.5", "2", "2.5", "3", "4", "5", "6", "8", "10",
];

/// The next step strictly above (or below) `current`.
pub fn step(current: &Amount, up: bool) -> Option<Amount> {
    let steps = EPSILON_STEPS
        .iter()
        .map(|s| Amount::parse(s).expect("the steps parse"));
    if up {
        steps.into_iter().find(|s| s > current)
    } else {
        steps.rev().find(|s| s < current)
    }
}

/// A budget's value, whatever its measure: the Budget screen's arithmetic (steps,
/// totals, scaling) is the same for an ε and a ρ, and [`Session::in_measure`] puts a
/// value back into the plan's measure.
pub fn amount(budget: &Loss) -> Amount {
    budget.amount()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::tiny;

    fn e(s: &str) -> Epsilon {
        Epsilon::parse(s).unwrap()
    }

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    fn session() -> Session {
        Session::new(Arc::new(tiny()), None)
    }

    #[test]
    fn steps_move_along_the_ladder_from_any_value() {
        assert_eq!(step(&a("1/3"), true), Some(a("0.35")));
        assert_eq!(step(&a("1/3"), false), Some(a("0.3")));
        assert_eq!(step(&a("0.5"), true), Some(a("0.6")));
        assert_eq!(step(&a("0.001"), false), None);
        assert_eq!(step(&a("10"), true), None);
    }

    #[test]
    fn edits_bump_the_revision_and_keep_totals_exact() {
        let mut s = session();
        assert_eq!(s.total(), a("1"));
        let leaf = s.dataset.hierarchy.leaf_level();
        s.set_budget(leaf, a("0.5")).unwrap();
        assert_eq!(s.revision, 1);
        assert_eq!(s.preset, Preset::Custom);
        assert_eq!(s.total(), a("1/3").add(&a("1/3")).add(&a("0.5")));
        // Custom budgets scale to a new total exactly.
        s.set_total(a("2")).unwrap();
        assert_eq!(s.total(), a("2"));
        assert_eq!(s.revision, 2);
        s.apply_preset(Preset::Uniform).unwrap();
        assert!(
            s.plan
                .levels()
                .iter()
                .all(|l| l.loss().map(amount) == Some(a("2/3")))
        );
        s.step_ratio(true).unwrap();
        assert!(matches!(s.preset, Preset::Geometric { .. }));
        assert_eq!(s.total(), a("2"));
        // An ε the sampler cannot use is refused and changes nothing.
        let before = s.revision;
        assert!(s.set_budget(leaf, a("1/1000000000000000000")).is_err());
        assert_eq!(s.revision, before);
        s.set_max_size(MaxSize::Estimate {
            budget: Loss::Pure(e("0.01")),
        })
        .unwrap();
        assert_eq!(s.total(), a("2.01"));
        assert_eq!(s.figures[0].noise_samples, None);
        assert!(s.set_max_size(MaxSize::Fixed(0)).is_err());
    }

    /// Held levels beside a level left unmeasured: the unmeasured level stays so when
    /// the total or another level changes; only measured free levels rebalance.
    #[test]
    fn a_level_left_unmeasured_stays_so_while_others_are_held() {
        let mut s = session();
        s.set_budgets(vec![Some(a("0.4")), None, Some(a("0.6"))])
            .unwrap();
        s.preset = Preset::Custom;
        assert!(s.toggle_held(LevelId(0)).unwrap());
        s.set_total(a("2")).unwrap();
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.8")), None, Some(a("1.2"))]
        );
        s.set_budget(LevelId(1), a("0.2")).unwrap();
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.8")), Some(a("0.2")), Some(a("1"))]
        );
        s.set_budget(LevelId(1), None).unwrap();
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.8")), None, Some(a("1.2"))]
        );
        // The held level edited itself: the one free measured level takes the rest.
        assert!(s.set_budget(LevelId(0), a("0.5")).is_ok());
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.5")), None, Some(a("1.5"))]
        );
    }

    /// Issue 36: a held level keeps its budget when another level changes (the total
    /// stays) and its share when the total changes; the others rebalance.
    #[test]
    fn held_levels_stay_and_the_others_rebalance() {
        let mut s = session();
        let depth = s.depth();
        assert!(depth >= 3, "the tiny dataset has three levels");
        s.set_budgets(vec![Some(a("0.35")), Some(a("0.25")), Some(a("0.4"))])
            .unwrap();
        s.preset = Preset::Custom;
        assert!(s.toggle_held(LevelId(0)).unwrap());
        // Another level's step: the total stays 1, the root keeps 0.35.
        s.set_budget(LevelId(1), a("0.3")).unwrap();
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.35")), Some(a("0.3")), Some(a("0.35"))]
        );
        assert_eq!(s.total(), a("1"));
        // The total doubles: the root keeps its 35% share, the rest scales.
        s.set_total(a("2")).unwrap();
        assert_eq!(s.level_amounts()[0], Some(a("0.7")));
        assert_eq!(s.total(), a("2"));
        // Uniform with a held level: the rest split evenly over the others.
        s.apply_preset(Preset::Uniform).unwrap();
        assert_eq!(
            s.level_amounts(),
            vec![Some(a("0.7")), Some(a("0.65")), Some(a("0.65"))]
        );
        // All but one held: the last cannot be changed alone; all held is refused.
        assert!(s.toggle_held(LevelId(1)).unwrap());
        assert!(s.set_budget(LevelId(2), a("0.5")).is_err());
        assert!(s.toggle_held(LevelId(2)).is_err());
        // Released, a level moves the total again as before.
        assert!(!s.toggle_held(LevelId(0)).unwrap());
        assert!(!s.toggle_held(LevelId(1)).unwrap());
        s.set_budget(LevelId(2), a("1")).unwrap();
        assert_eq!(s.total(), a("2.35"));
        // A step that would leave nothing for the free levels is refused.
        s.toggle_held(LevelId(0)).unwrap();
        assert!(s.set_budget(LevelId(1), a("10")).is_err());
    }

    /// Issue 33: the toggle restates every budget in the other measure with its value,
    /// the Budget screen's arithmetic works on ρ as on ε, and toggling back gives the
    /// plan back.
    #[test]
    fn the_definition_toggles_and_back() {
        use crate::privacy::Rho;
        let mut s = session();
        let pure = s.plan.clone();
        s.toggle_definition().unwrap();
        assert_eq!((s.definition(), s.symbol()), (Definition::Zcdp, "ρ"));
        assert_eq!(s.loss(), Loss::Zcdp(Rho::parse("1").unwrap()));
        assert_eq!(s.revision, 1);
        s.set_total(a("1/2")).unwrap();
        assert!(
            s.plan
                .levels()
                .iter()
                .all(|l| l.loss() == Some(&Loss::Zcdp(Rho::parse("1/6").unwrap())))
        );
        // The noise column is the Gaussian's σ = √(Δ₂²/(2ρ)), not the Laplace's.
        let level = &s.plan.levels()[0];
        let sigma2 = f64::from(level.method().sensitivity_norms().l2_squared.max(1)) * 3.0;
        assert!((s.figures[0].noise_sd.unwrap() - sigma2.sqrt()).abs() < 1e-9 * sigma2);
        s.toggle_definition().unwrap();
        assert_eq!(s.loss(), Loss::Pure(e("1/2")));
        s.set_total(a("1")).unwrap();
        s.toggle_definition().unwrap();
        s.toggle_definition().unwrap();
        assert_eq!(s.plan.levels(), pure.levels());
    }

    /// The (ε, δ) a ρ implies, rounded up; the DAS's ρ = 2.556 is ε = 17.14 at
    /// δ = 10⁻¹⁰ to two decimals, never shown below it.
    #[test]
    fn a_rho_reads_as_epsilon_at_delta_rounded_up() {
        use crate::privacy::Rho;
        let das = Loss::Zcdp(Rho::parse("2.556").unwrap());
        let shown = at_delta(&das).unwrap();
        assert!(shown.starts_with("as (ε, δ)-DP: ε = 17.1"), "{shown}");
        assert!(shown.ends_with(" at δ = 10⁻¹⁰"), "{shown}");
        let value: f64 = shown["as (ε, δ)-DP: ε = ".len()..][..5].parse().unwrap();
        assert!(value >= das.epsilon_at(crate::privacy::DEFAULT_DELTA));
        assert_eq!(at_delta(&Loss::Pure(e("1"))), None);
    }

    /// Issue 23: a K typed by hand is `public` unless confidential figures were on screen
    /// before it; K estimated privately never taints.
    #[test]
    fn a_typed_k_is_tainted_only_after_confidential_figures() {
        let mut s = session();
        assert_eq!(s.plan.tuning(), Tuning::PublicDefault);
        s.set_max_size(MaxSize::Fixed(50)).unwrap();
        assert_eq!(s.plan.tuning(), Tuning::Public);
        s.saw_confidential_figures();
        s.set_max_size(MaxSize::Estimate {
            budget: Loss::Pure(e("0.01")),
        })
        .unwrap();
        assert_eq!(s.plan.tuning(), Tuning::Public);
        s.set_max_size(MaxSize::Fixed(40)).unwrap();
        assert_eq!(s.plan.tuning(), Tuning::ConfidentialPreviews);
    }

    #[test]
    fn the_cap_warning_counts_what_was_spent() {
        let status = LedgerStatus {
            spent: Some(e("1.5")),
            pending: None,
            releases: 2,
            cap: Some(e("2")),
            cap_rule: Some("default_cap".into()),
            error: None,
            losses: None,
            ..LedgerStatus::default()
        };
        assert!(!status.exceeds_cap(&e("0.5")));
        assert!(status.exceeds_cap(&e("0.6")));
        assert!(!LedgerStatus::default().exceeds_cap(&e("100")));
    }

    /// Issue 32: a loss the operator accepted shows on the Release screen, with the
    /// part of this dataset's spending it still counts.
    #[test]
    fn an_accepted_loss_shows_in_the_ledger_status() {
        use crate::noise::Randomness;
        use crate::release::ledger::{DrawSpend, LedgerEntry, Status, Tool, new_id};
        let home = tempfile::tempdir().unwrap();
        let ledger = Ledger::at(home.path());
        let s = session();
        let id = new_id();
        let entry = LedgerEntry::for_draw(
            &s.dataset,
            &s.plan,
            DrawSpend {
                id: &id,
                loss: &crate::privacy::Loss::Pure(e("1")),
                randomness: Randomness::Os,
                levels: true,
            },
            Status::Written,
            Tool::Tui,
        );
        let lock = ledger.lock().unwrap();
        ledger.append(&lock, entry).unwrap();
        drop(lock);
        let status = LedgerStatus::read(Some(&ledger), &s.overview.identity);
        assert_eq!(
            (status.losses.as_ref(), status.error.as_ref()),
            (None, None)
        );
        std::fs::remove_file(ledger.path()).unwrap();
        let status = LedgerStatus::read(Some(&ledger), &s.overview.identity);
        assert!(status.error.unwrap().contains("reanchor --accept-loss"));
        ledger.reanchor(true).unwrap();
        let status = LedgerStatus::read(Some(&ledger), &s.overview.identity);
        assert_eq!(status.error, None);
        assert_eq!(status.spent, Some(e("1")));
        let losses = status.losses.unwrap();
        assert!(
            losses.contains("1 accepted loss(es)")
                && losses.contains(
                    "ε 1 of this dataset's spending is from 1 lost draw(s), still counted"
                ),
            "{losses}"
        );
    }

    #[test]
    fn spent_reads_short_rounded_up_with_the_pending_part_and_caps_round_down() {
        let status = LedgerStatus {
            spent: Some(e("1/3")),
            pending: Some(e("1/3")),
            releases: 1,
            cap: Some(e("2/3")),
            cap_rule: None,
            error: None,
            losses: None,
            ..LedgerStatus::default()
        };
        assert_eq!(status.spent_text(false), "≈0.3334 (≈0.3334 pending)");
        assert_eq!(status.spent_text(true), "1/3 (1/3 pending)");
        assert_eq!(status.cap_text(false), "≈0.6666");
        assert_eq!(LedgerStatus::default().spent_text(false), "0");
    }
}
