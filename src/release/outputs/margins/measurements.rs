//! The noisy measurements of a release (`coco release --measurements`):
//! `measurements.jsonl`, one JSON object per line.
//!
//! These are the differentially private outputs themselves — every table of the
//! release is post-processing of them — so publishing them costs no ε beyond the
//! release's. The first line, when `K` was estimated privately, is the probe:
//!
//! ```text
//! {"kind":"max_size_probe","epsilon":"1/1000","sensitivity":1,"mechanism":"discrete_laplace","scale":1000.0,"noisy":61,"max_size":7132}
//! ```
//!
//! then one line per measured region, in the order of `counts.csv`:
//!
//! ```text
//! {"kind":"region","level":"district","region":"P1/D1","method":"hc","tail_above":20,"epsilon":"1/3","sensitivity":1,"mechanism":"discrete_laplace","scale":3.0,"groups":412,"max_size":10000,"head":[…],"top":[…]}
//! ```
//!
//! `head` is the noisy cumulative histogram `Hc[0..L)` (`hc`: all of `Hc[0..=K]`,
//! and no `top`); `top` the noisy sorted sizes of the largest groups clamped at `L`
//! (a tail); `hg` the noisy sorted group sizes (`hg`); `naive` the noisy top-coded
//! histogram (`naive`). The noise of each value is independent, two-sided geometric
//! with `P(x) ∝ exp(−|x|/scale)`, `scale = sensitivity/ε`.

use std::io::Write;

use crate::data::{NodeId, PublicData};
use crate::estimate::max_size;
use crate::estimate::{NodeMeasurement, Noisy};
use crate::noise::{MechanismKind, Sensitivity};
use crate::privacy::Loss;
use crate::release::outputs::rows::DisplayIds;
use crate::release::pipeline::measurements::Measurements;

pub const FILE: &str = "measurements.jsonl";

/// A vector's budget and noise, in this order: for a pure ε, `"epsilon"` (exact text),
/// `"sensitivity"` (L1), `"mechanism": "discrete_laplace"` and `"scale"` (`Δ₁/ε`); for
/// a ρ, `"rho"` (exact text), `"sensitivity"` (L1, as for every line),
/// `"l2_sensitivity_squared"` (`Δ₂²`), `"mechanism": "discrete_gaussian"`, `"sigma2"`
/// (σ² = Δ₂²/(2ρ), exact text) and `"variance"` (σ² as a number).
pub fn noise_fields(
    o: &mut serde_json::Map<String, serde_json::Value>,
    loss: &Loss,
    sensitivity: Sensitivity,
) {
    match loss {
        Loss::Pure(epsilon) => {
            o.insert("epsilon".into(), epsilon.to_string().into());
            o.insert("sensitivity".into(), sensitivity.l1.into());
            o.insert(
                "mechanism".into(),
                MechanismKind::DiscreteLaplace.name().into(),
            );
            o.insert(
                "scale".into(),
                (f64::from(sensitivity.l1) / epsilon.to_f64()).into(),
            );
        }
        Loss::Zcdp(rho) => {
            o.insert("rho".into(), rho.to_string().into());
            o.insert("sensitivity".into(), sensitivity.l1.into());
            o.insert(
                "l2_sensitivity_squared".into(),
                sensitivity.l2_squared.into(),
            );
            o.insert(
                "mechanism".into(),
                MechanismKind::DiscreteGaussian.name().into(),
            );
            let sigma2 = crate::noise::mechanism::sigma2_for(rho, sensitivity.l2_squared);
            if let Ok(s) = sigma2 {
                o.insert("sigma2".into(), s.to_string().into());
                o.insert("variance".into(), s.to_f64().into());
            }
        }
    }
}

/// The JSON line of a region's measurement.
pub fn region_line(level: &str, region: &str, m: &NodeMeasurement) -> serde_json::Value {
    let mut v = serde_json::json!({
        "kind": "region",
        "level": level,
        "region": region,
        "method": m.method().name(),
    });
    let o = v.as_object_mut().expect("an object");
    noise_fields(o, m.loss(), m.method().sensitivity_norms());
    o.insert("groups".into(), m.groups().into());
    o.insert("max_size".into(), m.max_size().into());
    if let Some(t) = m.method().tail() {
        o.insert("tail_above".into(), t.above.into());
    }
    match m.noisy() {
        Noisy::Cumulative(c) => {
            o.insert("head".into(), c.clone().into());
        }
        Noisy::CumulativeTail { head, top } => {
            o.insert("head".into(), head.clone().into());
            o.insert("top".into(), top.clone().into());
        }
        Noisy::Unattributed(g) => {
            o.insert("hg".into(), g.clone().into());
        }
        Noisy::Naive(n) => {
            o.insert("naive".into(), n.clone().into());
        }
    }
    v
}

/// Writes `measurements.jsonl` (see the module docs); `levels` holds each level's
/// nodes in the order of `counts.csv`.
pub fn write<W: Write>(
    w: &mut W,
    public: PublicData<'_>,
    levels: &[Vec<NodeId>],
    m: &Measurements,
) -> std::io::Result<()> {
    let h = public.hierarchy;
    if let Some(p) = m.probe() {
        let mut line = serde_json::json!({ "kind": "max_size_probe" });
        let o = line.as_object_mut().expect("an object");
        noise_fields(o, &p.budget, max_size::SENSITIVITY);
        o.insert("noisy".into(), p.noisy.into());
        o.insert("max_size".into(), p.k().into());
        serde_json::to_writer(&mut *w, &line)?;
        w.write_all(b"\n")?;
    }
    for (l, ids) in levels.iter().enumerate() {
        let level = h.level_name(crate::data::LevelId(l));
        let mut regions = DisplayIds::new(h);
        for &id in ids {
            let region = regions.of(id).to_string();
            if let Some(node) = m.node(id) {
                serde_json::to_writer(&mut *w, &region_line(level, &region, node))?;
                w.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}
