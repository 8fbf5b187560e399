//! `coco release DIR --config PLAN --out OUT`: draw one release with fresh noise,
//! check it and write it atomically.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use coco::data::Dataset;
use coco::noise::NoiseSource;
use coco::privacy::{DEFAULT_DELTA, Loss, Rounding};
use coco::release::ledger::Tool;
use coco::release::outputs::export::{OutputFormat, WriteOptions};
use coco::release::pipeline::draw::DrawOptions;
use coco::release::plan::ReleasePlan;

use super::exit::FlagError;
use coco::release::plan::tuning::Tuning;
use coco::release::transaction::{
    ApproveError, LARGE_EPSILON, Reservation, ReserveOptions, is_large,
};

use super::progress::Progress;
use super::{load_plan, shown};

#[derive(Args, Debug)]
pub struct ReleaseArgs {
    /// Dataset directory.
    pub dir: PathBuf,
    /// Release plan (TOML).
    #[arg(long)]
    pub config: PathBuf,
    /// Output directory (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
    /// Seed the noise (for tests): anyone with the seed can regenerate the noise, so
    /// the release is NOT private. Refused unless --not-private is given too.
    #[arg(long)]
    pub seed: Option<u64>,
    /// With --seed: write the seeded release anyway, marked not private everywhere.
    #[arg(long, requires = "seed")]
    pub not_private: bool,
    /// Print one JSON object (output, ε, ledger id, checks) on standard output.
    #[arg(long)]
    pub json: bool,
    /// The files written: csv (counts.csv, tables/*.csv), parquet (counts.parquet,
    /// tables/*.parquet) or both; the same columns and rows either way.
    #[arg(long, value_enum, default_value_t = OutputFormat::Csv)]
    pub format: OutputFormat,
    /// How the plan was chosen, recorded in the ledger and the manifest: from public
    /// information, on a public proxy, or after previews of the confidential data.
    /// Default: what the plan file says (`tuning`), else unknown.
    #[arg(long, value_enum)]
    pub tuned: Option<Tuning>,
    /// Draw a total ε above 20 (refused without it: at such an ε the release is close
    /// to the confidential data itself). A warning is printed either way.
    #[arg(long)]
    pub allow_large_epsilon: bool,
    /// The confidence of the margins of error written beside the counts
    /// (uncertainty.csv, summary.csv), e.g. 0.95; `none` writes neither. Computed from
    /// the release alone: no ε. See docs/uncertainty.md.
    #[arg(long, default_value = "0.9", value_name = "LEVEL|none", value_parser = parse_confidence)]
    pub uncertainty: Margins,
    /// How many bootstrap replicates of the whole release the margins of error draw:
    /// `auto` (as many as fit about a second of work: 100 on small data, fewer as
    /// regions and noise samples grow, at least 1) or a number from 1 to 10,000. The
    /// levels with few regions are drawn again besides, on the hierarchy cut below them,
    /// up to 100 draws in all. See docs/uncertainty.md.
    #[arg(long, default_value = "auto", value_name = "auto|N", value_parser = parse_replicates)]
    pub replicates: ReplicatesArg,
    /// Also write measurements.jsonl: the noisy measurements the release was computed
    /// from (the differentially private outputs themselves: no extra ε). See
    /// docs/uncertainty.md.
    #[arg(long)]
    pub measurements: bool,
    /// Also write the bootstrap replicates of the margins of error (replicates.csv or
    /// .parquet: level,region,size,replicate,count), as the ACS publishes replicate
    /// weights: the standard error of any statistic is computed from them. Computed
    /// from the published tables alone: no ε. See docs/uncertainty.md.
    #[arg(long)]
    pub replicate_tables: bool,
}

/// `--uncertainty`: a confidence, or none.
#[derive(Clone, Copy, Debug)]
pub struct Margins(pub Option<coco::release::margins::Confidence>);

fn parse_confidence(text: &str) -> Result<Margins, String> {
    coco::release::margins::Confidence::parse(text)
        .map(Margins)
        .map_err(|e| e.to_string())
}

/// `--replicates`: auto, or a number of replicates.
#[derive(Clone, Copy, Debug)]
pub struct ReplicatesArg(pub coco::release::margins::Replicates);

fn parse_replicates(text: &str) -> Result<ReplicatesArg, String> {
    coco::release::margins::Replicates::parse(text)
        .map(ReplicatesArg)
        .map_err(|e| e.to_string())
}

/// The tuning to record: the plan's own label, checked where it can be (a plan that
/// says `public-default` must be coco's default: its levels, K, consistency and fits),
/// and the operator's `--tuned`, the worse of the two when both say something.
fn recorded_tuning(plan: &ReleasePlan, dataset: &Dataset, tuned: Option<Tuning>) -> Tuning {
    let own = coco::release::plan::defaults::checked(plan, dataset);
    if own != plan.tuning() {
        eprintln!(
            "note: the plan says tuning = \"public-default\" but is not coco's default plan for this dataset (its levels, K, consistency step or fits were set or edited by hand): recorded as unknown; --tuned public|proxy|confidential says how it was chosen"
        );
    }
    match (own, tuned) {
        (own, None) => own,
        (Tuning::Unknown, Some(t)) => t,
        (own, Some(t)) => {
            if own > t {
                eprintln!(
                    "note: --tuned {t} but the plan file says tuning = \"{own}\": recorded as {own}"
                );
            }
            own.worse(t)
        }
    }
}

pub fn run(args: ReleaseArgs) -> Result<()> {
    let ReleaseArgs {
        dir,
        config,
        out,
        seed,
        not_private,
        json,
        format,
        tuned,
        allow_large_epsilon,
        uncertainty,
        replicates,
        measurements,
        replicate_tables,
    } = args;
    if uncertainty.0.is_none() && replicate_tables {
        return Err(FlagError {
            flag: "--replicate-tables".into(),
            message: "publishes the margins' replicates, and --uncertainty none computes none"
                .into(),
        }
        .into());
    }
    if uncertainty.0.is_none() && !matches!(replicates.0, coco::release::margins::Replicates::Auto)
    {
        return Err(FlagError {
            flag: "--replicates".into(),
            message: "goes with margins of error, and --uncertainty none writes none".into(),
        }
        .into());
    }
    let phase = coco::timing::phase("load");
    let dataset = Arc::new(Dataset::load(&dir)?);
    phase.done();
    for w in coco::warning::Warning::of_dataset(&dataset) {
        eprintln!("warning: {w}");
    }
    let mut plan = load_plan(&dataset, &config)?;
    plan.set_tuning(recorded_tuning(&plan, &dataset, tuned));
    let ledger = super::open_ledger()?;
    if let Some(total) = plan.total_epsilon()
        && is_large(&total)
    {
        eprintln!(
            "warning: total ε = {total} is above {LARGE_EPSILON}: the noise hides almost nothing and the release is close to the confidential data itself{}",
            if allow_large_epsilon {
                " (drawn because --allow-large-epsilon was given)"
            } else {
                "; refused without --allow-large-epsilon"
            }
        );
    }
    // Locks the ledger until the draw is decided: concurrent releases queue here and
    // cannot both slip under a cap. Waiting is said, not silent.
    let mut waiting = |holder: &coco::release::ledger::LockHolder| {
        eprintln!(
            "waiting for the ledger: another coco session holds it ({}), e.g. a release under way or a terminal UI's draw awaiting its decision; this release goes on when it is released (ctrl-c stops waiting, nothing is drawn)",
            holder.text
        );
    };
    let reservation = Reservation::open(
        &ledger,
        dataset,
        plan,
        Tool::Release,
        ReserveOptions {
            output: Some(&out),
            allow_large_epsilon,
            allow_seeded: not_private,
            waiting: Some(&mut waiting),
        },
    )?;
    for note in reservation.notes() {
        eprintln!("note: {}", shown(note));
    }
    let spent_before = reservation.cap().spent.clone();
    let binding = reservation.cap().binding().cloned();
    let source = match seed {
        Some(s) => NoiseSource::seeded(s),
        None => NoiseSource::from_os()?,
    };
    let progress = Progress::new("release");
    let pending = reservation.draw(
        &source,
        &DrawOptions {
            cancel: None,
            progress: Some(&|done: usize, n: usize| {
                progress.update(done as u64, n as u64, "regions measured");
            }),
            keep_measurements: measurements,
        },
    )?;
    progress.finish();
    let options = WriteOptions {
        format,
        extras: coco::release::outputs::margins::Extras {
            uncertainty: uncertainty.0.map(|confidence| {
                coco::release::margins::UncertaintyOptions {
                    confidence,
                    replicates: replicates.0,
                    keep_replicates: replicate_tables,
                    ..Default::default()
                }
            }),
            computed: None,
        },
    };
    let approved = match pending.approve(&out, &options) {
        Ok(a) => a,
        Err(ApproveError::Refused { error, pending }) => {
            // Checked before the draw; something changed since. The draw is spent.
            let recorded = pending.discard(&format!("not written: {error}"))?;
            return Err(anyhow::Error::new(*error).context(format!(
                "the release was drawn but not written; recorded in the ledger as {} ({} {} spent)",
                recorded.status.label(),
                recorded.loss.definition().symbol(),
                match &recorded.loss {
                    Loss::Pure(e) => e.short(Rounding::Up),
                    Loss::Zcdp(r) => r.short(Rounding::Up),
                }
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let manifest = &approved.manifest;
    let guarantee = approved.draw.guarantee().clone();
    // What the dataset has spent with this draw: the ε of its pure draws, the ρ of all.
    let spent_after = spent_before.epsilon.as_ref().map_or_else(
        || guarantee.as_pure().cloned(),
        |s| Some(guarantee.as_pure().map_or_else(|| s.clone(), |e| s.add(e))),
    );
    let rho_after = match &spent_before.rho {
        Some(s) => s.add(&guarantee.to_rho()),
        None => guarantee.to_rho(),
    };
    // Said in ε while every draw is pure and no cap in another unit binds, else in ρ.
    let in_epsilon = spent_before.all_pure()
        && guarantee.as_pure().is_some()
        && binding
            .as_ref()
            .is_none_or(|b| b.cap.as_epsilon().is_some());
    for w in &manifest.warnings {
        eprintln!("warning: {w}");
    }
    if let Err(e) = &approved.recorded {
        eprintln!(
            "warning: the release was written, but the ledger could not record it as written ({e}); its pending line keeps its ε counted"
        );
    }
    if json {
        let value = serde_json::json!({
            "output": std::path::absolute(&approved.out).unwrap_or_else(|_| approved.out.clone()),
            "total_epsilon": guarantee.as_pure().map(|epsilon| serde_json::json!({
                "exact": epsilon.to_string(),
                "num": epsilon.numer().to_string(),
                "den": epsilon.denom().to_string(),
                "decimal": epsilon.to_f64(),
            })),
            "ledger_id": manifest.ledger_entry,
            "ledger_status": approved.recorded.as_ref().map(|r| r.status).ok(),
            "max_size": manifest.max_size,
            "checks": manifest.checks,
            "reproducible": manifest.reproducible,
            "for_publication": manifest.for_publication,
            "warnings": manifest.warnings,
            "tuning": manifest.tuning,
            "tuning_source": manifest.tuning_source,
            "spent_on_dataset": {
                "exact": spent_after.as_ref().map(|e| e.to_string()),
                "rho_exact": rho_after.to_string(),
                "draws": spent_before.draws + 1,
                "cap": binding.as_ref().map(|b| b.cap.value()),
                "cap_unit": binding.as_ref().map(|b| b.cap.unit()),
                "cap_rule": binding.as_ref().map(|b| b.describe()),
            },
        });
        let mut value = value;
        if let Loss::Zcdp(rho) = &guarantee {
            // A zCDP release states its ρ and definition; `total_epsilon` is left out.
            let object = value.as_object_mut().expect("an object");
            object.remove("total_epsilon");
            object.insert("definition".into(), serde_json::json!("zcdp"));
            object.insert(
                "total_rho".into(),
                serde_json::json!({
                    "exact": rho.to_string(),
                    "num": rho.numer().to_string(),
                    "den": rho.denom().to_string(),
                    "decimal": rho.to_f64(),
                }),
            );
            object.insert("delta".into(), serde_json::json!(DEFAULT_DELTA));
            object.insert(
                "epsilon_at_delta".into(),
                serde_json::json!(guarantee.epsilon_at(DEFAULT_DELTA)),
            );
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    match &guarantee {
        Loss::Pure(epsilon) => println!(
            "wrote {} (total ε = {}, K = {})",
            shown(out.display()),
            super::plan::with_exact(epsilon),
            coco::units::thousands(u128::from(manifest.max_size))
        ),
        Loss::Zcdp(rho) => println!(
            "wrote {} (total ρ = {}, ρ-zCDP; (ε = {:.2}, δ = {DEFAULT_DELTA:e})-DP; K = {})",
            shown(out.display()),
            rho,
            (guarantee.epsilon_at(DEFAULT_DELTA) * 100.0).ceil() / 100.0,
            coco::units::thousands(u128::from(manifest.max_size))
        ),
    }
    if let Some(u) = &manifest.uncertainty {
        let files: Vec<&str> = manifest
            .outputs
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| {
                p.starts_with("uncertainty.")
                    || p.starts_with("summary.")
                    || p.starts_with("replicates.")
            })
            .collect();
        println!(
            "margins of error: {}, {}% intervals from {} (computed from the published tables only; docs/uncertainty.md)",
            files.join(", "),
            (u.confidence * 1000.0).round() / 10.0,
            u.replicates_phrase()
        );
    }
    let c = &manifest.checks;
    println!(
        "checks: integral {}, nonnegative {}, group totals {}, consistent {}, within K {}",
        c.integral, c.nonnegative, c.group_totals, c.consistent, c.within_max_size
    );
    if let Some(t) = manifest.tuning {
        match &manifest.tuning_source {
            Some(source) => println!("plan tuning: {t} on {source} ({})", t.describe()),
            None => println!("plan tuning: {t} ({})", t.describe()),
        }
    }
    if manifest.reproducible {
        println!("seeded: reproducible, NOT PRIVATE, marked not for publication");
    }
    println!(
        "ledger: {} (draw {}; {} draw(s) of this dataset, {}{})",
        shown(ledger.path().display()),
        manifest.ledger_entry,
        spent_before.draws + 1,
        match (&spent_after, in_epsilon) {
            (Some(e), true) => format!("ε spent {}", e.short(Rounding::Up)),
            _ => format!(
                "ρ spent {} (pure draws counted as ρ = ε²/2)",
                rho_after.short(Rounding::Up)
            ),
        },
        binding
            .map(|b| format!(" of cap {} ({})", b.cap.short(Rounding::Down), b.describe()))
            .unwrap_or_default()
    );
    Ok(())
}
