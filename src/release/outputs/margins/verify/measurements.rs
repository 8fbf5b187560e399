//! `coco verify`'s check of `measurements.jsonl` against the manifest's plan and the
//! regions the release publishes.
//!
//! Every line is what the writer
//! ([`crate::release::outputs::margins::measurements`]) writes, field for field (no
//! field besides). The first line is the `K` probe exactly when the manifest says `K`
//! was estimated privately: its ε is the manifest's `max_size_epsilon`, its scale
//! `sensitivity/ε`, and its `max_size` the manifest's `K` and the one its noisy value
//! gives ([`max_size::estimate`]). Then one line per region, level by level, each
//! level's lines exactly its regions in the order of its table (none missing, none
//! twice, none unknown), each with (a level the manifest marks `"measured": false`
//! has no lines at all):
//!
//! - the level's method (`hc`, `hg`, `naive`) and tail (`tail_above` = `L`) as the
//!   manifest gives them, and that method's sensitivity;
//! - the level's ε exactly, the mechanism `discrete_laplace` and `scale =
//!   sensitivity/ε` (as the writer computes it in 64-bit floating point; it is read
//!   back to within a few units in the last place);
//! - the region's public `G` (its table's `groups`) and the manifest's `K`;
//! - vectors of the lengths the method measures given `K`, `G` and the tail: `hc`'s
//!   `head` `K + 1` values; `naive`'s `K + 1`; `hg`'s `G`; with a tail a `head` of
//!   `min(L, K)` values and a `top` of `min(m, G)` (an `auto` tail: of the length
//!   [`tail::auto_rest`] chooses from the line's own noisy head, or no `top` and a
//!   `head` of all `K + 1` values when it chose the rest of `Hc`).
//!
//! What it cannot find: the values are noisy draws, so any values of the right shape
//! are possible — a vector zeroed, or replaced by another draw's, with its length and
//! every other field intact, verifies. The parameters that say how much privacy a
//! value has (ε, scale, sensitivity, mechanism), which region it is of and how many
//! values there are are what is checked.

use std::io::BufRead;
use std::path::Path;

use serde::Deserialize;

use crate::estimate::{Method, MethodKind, Tail, TailLength, max_size, tail};
use crate::histogram::{Count, Size};
use crate::noise::MechanismKind;
use crate::noise::Sensitivity;
use crate::noise::mechanism::sigma2_for;
use crate::privacy::{Epsilon, Loss, Rho};
use crate::release::outputs::manifest::{Manifest, ManifestLevel, MaxSizeSource};
use crate::release::outputs::margins::measurements::FILE;
use crate::wire::Named;

use super::MAX_PROBLEMS;
use super::regions::LevelTable;

/// A vector's budget and noise, as [`crate::release::outputs::margins::measurements::noise_fields`]
/// writes them: a pure ε's `epsilon`, `sensitivity`, `mechanism` and `scale`, or a ρ's
/// `rho`, `sensitivity`, `l2_sensitivity_squared`, `mechanism`, `sigma2` and `variance`.
#[derive(Debug, Deserialize)]
struct NoiseFields {
    #[serde(default)]
    epsilon: Option<String>,
    #[serde(default)]
    rho: Option<String>,
    sensitivity: u32,
    #[serde(default)]
    l2_sensitivity_squared: Option<u32>,
    mechanism: String,
    #[serde(default)]
    scale: Option<f64>,
    #[serde(default)]
    sigma2: Option<String>,
    #[serde(default)]
    variance: Option<f64>,
}

impl NoiseFields {
    /// What is wrong with these fields for a vector of this sensitivity measured at
    /// `expected` (`whose` names where `expected` comes from, for the message).
    fn problems(
        &self,
        expected: &Loss,
        sensitivity: Sensitivity,
        whose: &str,
        quoted: bool,
    ) -> Vec<String> {
        let shown = |text: &Option<String>| match (text, quoted) {
            (None, _) => "absent".to_string(),
            (Some(t), true) => format!("{t:?}"),
            (Some(t), false) => t.clone(),
        };
        let mut problems = Vec::new();
        let mut absent = |name: &str, present: bool| {
            if present {
                problems.push(format!(
                    "it has \"{name}\", which a vector measured under {} does not",
                    expected.definition().describe()
                ));
            }
        };
        match expected {
            Loss::Pure(_) => {
                absent("rho", self.rho.is_some());
                absent(
                    "l2_sensitivity_squared",
                    self.l2_sensitivity_squared.is_some(),
                );
                absent("sigma2", self.sigma2.is_some());
                absent("variance", self.variance.is_some());
            }
            Loss::Zcdp(_) => {
                absent("epsilon", self.epsilon.is_some());
                absent("scale", self.scale.is_some());
            }
        }
        let mechanism = MechanismKind::of(expected).name();
        if self.mechanism != mechanism {
            problems.push(format!(
                "mechanism is {:?}, expected {mechanism:?}",
                self.mechanism
            ));
        }
        if self.sensitivity != sensitivity.l1 {
            problems.push(format!(
                "sensitivity is {}, expected {}",
                self.sensitivity, sensitivity.l1
            ));
        }
        match expected {
            Loss::Pure(epsilon) => {
                let read = self.epsilon.as_deref().map(Epsilon::parse_unbounded);
                if !matches!(&read, Some(Ok(e)) if e == epsilon) {
                    problems.push(format!(
                        "ε is {}, expected {epsilon} ({whose})",
                        shown(&self.epsilon)
                    ));
                }
                let scale = f64::from(sensitivity.l1) / epsilon.to_f64();
                if !self.scale.is_some_and(|s| same_scale(s, scale)) {
                    problems.push(format!(
                        "scale is {}, expected {scale} (sensitivity/ε)",
                        self.scale.map_or("absent".to_string(), |s| s.to_string())
                    ));
                }
            }
            Loss::Zcdp(rho) => {
                let read = self.rho.as_deref().map(Rho::parse_unbounded);
                if !matches!(&read, Some(Ok(r)) if r == rho) {
                    problems.push(format!(
                        "ρ is {}, expected {rho} ({whose})",
                        shown(&self.rho)
                    ));
                }
                if self.l2_sensitivity_squared != Some(sensitivity.l2_squared) {
                    problems.push(format!(
                        "l2_sensitivity_squared is {}, expected {}",
                        self.l2_sensitivity_squared
                            .map_or("absent".to_string(), |s| s.to_string()),
                        sensitivity.l2_squared
                    ));
                }
                match sigma2_for(rho, sensitivity.l2_squared) {
                    Ok(sigma2) => {
                        if self.sigma2.as_deref() != Some(sigma2.to_string().as_str()) {
                            problems.push(format!(
                                "sigma2 is {}, expected {sigma2} (Δ₂²/(2ρ))",
                                shown(&self.sigma2)
                            ));
                        }
                        let v = sigma2.to_f64();
                        if !self.variance.is_some_and(|x| same_scale(x, v)) {
                            problems.push(format!(
                                "variance is {}, expected {v} (σ²)",
                                self.variance
                                    .map_or("absent".to_string(), |s| s.to_string())
                            ));
                        }
                    }
                    Err(e) => problems.push(format!("ρ = {rho} gives no σ²: {e}")),
                }
            }
        }
        problems
    }
}

/// A region's line, as the writer writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionLine {
    #[serde(rename = "kind")]
    _kind: serde::de::IgnoredAny,
    level: String,
    region: String,
    method: String,
    #[serde(default)]
    tail_above: Option<Size>,
    #[serde(flatten)]
    noise: NoiseFields,
    groups: Count,
    max_size: Size,
    #[serde(default)]
    head: Option<Vec<i64>>,
    #[serde(default)]
    top: Option<Vec<i64>>,
    #[serde(default)]
    hg: Option<Vec<i64>>,
    #[serde(default)]
    naive: Option<Vec<i64>>,
}

/// The `K` probe's line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeLine {
    #[serde(rename = "kind")]
    _kind: serde::de::IgnoredAny,
    #[serde(flatten)]
    noise: NoiseFields,
    noisy: i64,
    max_size: Size,
}

/// A line read.
enum Line {
    Region(RegionLine),
    Probe(ProbeLine),
}

/// The lines of the file, one looked ahead.
struct Lines {
    reader: std::io::BufReader<std::fs::File>,
    text: String,
    /// The number of the last line read.
    number: u64,
    peeked: Option<(u64, Result<Line, String>)>,
    done: bool,
}

impl Lines {
    fn open(path: &Path) -> Result<Lines, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("{FILE}: cannot be read: {e}"))?;
        Ok(Lines {
            reader: std::io::BufReader::new(file),
            text: String::new(),
            number: 0,
            peeked: None,
            done: false,
        })
    }

    /// The next line (its number and what it holds), without taking it.
    fn peek(&mut self) -> Option<&(u64, Result<Line, String>)> {
        if self.peeked.is_none() && !self.done {
            self.text.clear();
            match self.reader.read_line(&mut self.text) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.number += 1;
                    self.peeked = Some((self.number, parse(&self.text)));
                }
                Err(e) => {
                    self.number += 1;
                    self.done = true;
                    self.peeked = Some((self.number, Err(format!("cannot be read: {e}"))));
                }
            }
        }
        self.peeked.as_ref()
    }

    /// Takes the next line.
    fn take(&mut self) -> Option<(u64, Result<Line, String>)> {
        self.peek();
        self.peeked.take()
    }
}

/// A line's JSON, by its `kind`.
fn parse(text: &str) -> Result<Line, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not a JSON object: {e}"))?;
    match value.get("kind").and_then(|k| k.as_str()) {
        Some("region") => serde_json::from_value(value)
            .map(Line::Region)
            .map_err(|e| format!("not a region's measurement as coco writes it: {e}")),
        Some("max_size_probe") => serde_json::from_value(value)
            .map(Line::Probe)
            .map_err(|e| format!("not the K probe as coco writes it: {e}")),
        _ => Err("its \"kind\" is neither \"region\" nor \"max_size_probe\"".into()),
    }
}

/// Whether `scale` is `expected` as the writer computed it, read back through JSON.
fn same_scale(scale: f64, expected: f64) -> bool {
    (scale - expected).abs() <= 4.0 * f64::EPSILON * expected.abs()
}

/// The method a manifest level was measured with.
fn method_of(level: &ManifestLevel) -> Result<Method, String> {
    match (level.method, level.tail) {
        (MethodKind::Hc, Some(t)) => Ok(Method::HcTail(Tail {
            above: t.above,
            groups: t.groups,
        })),
        (MethodKind::Hc, None) => Ok(Method::Hc),
        (MethodKind::Hg, None) => Ok(Method::Hg),
        (MethodKind::Naive, None) => Ok(Method::Naive),
        (kind, Some(_)) => Err(format!(
            "manifest.json: level {} has a tail but is measured with {}: only hc takes one",
            level.name,
            kind.name()
        )),
    }
}

/// What the manifest says a level's lines hold.
struct Level<'a> {
    name: &'a str,
    method: Method,
    budget: Loss,
    k: Size,
}

/// A manifest level's budget: its `rho` for a zCDP level, else its `epsilon_exact`.
fn budget_of(level: &ManifestLevel) -> Result<Loss, String> {
    match &level.rho {
        Some(rho) => Rho::parse_unbounded(rho)
            .map(Loss::Zcdp)
            .map_err(|e| format!("manifest.json: level {}'s rho {rho:?}: {e}", level.name)),
        None => Epsilon::parse_unbounded(&level.epsilon_exact)
            .map(Loss::Pure)
            .map_err(|e| {
                format!(
                    "manifest.json: level {}'s epsilon_exact {:?}: {e}",
                    level.name, level.epsilon_exact
                )
            }),
    }
}

/// The problems of `measurements.jsonl` in release `out`, if the manifest lists it
/// (`lists`).
pub(super) fn check(out: &Path, manifest: &Manifest, lists: &dyn Fn(&str) -> bool) -> Vec<String> {
    if !lists(FILE) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    let mut lines = match Lines::open(&out.join(FILE)) {
        Ok(l) => l,
        Err(e) => return vec![e],
    };
    problems.extend(check_probe(&mut lines, manifest));
    for (i, level) in manifest.levels.iter().enumerate() {
        if !level.measured {
            // A level the manifest says was left unmeasured has no lines: a line of it
            // is found out of place by the next level's check.
            continue;
        }
        let setting = method_of(level).and_then(|method| {
            Ok(Level {
                name: &level.name,
                method,
                budget: budget_of(level)?,
                k: manifest.max_size,
            })
        });
        let checked = setting.and_then(|setting| {
            let table = LevelTable::open(out, manifest, i, lists)?;
            Ok(check_level(
                out,
                &mut lines,
                &setting,
                table,
                manifest,
                &mut problems,
            ))
        });
        match checked {
            Ok(true) => {}
            Ok(false) => return problems,
            Err(e) => {
                problems.push(format!("{FILE}: not checked: {e}"));
                return problems;
            }
        }
    }
    if let Some((n, line)) = lines.take() {
        let mut more = 0u64;
        while lines.take().is_some() {
            more += 1;
        }
        problems.push(format!(
            "{FILE}: line {n}: {} after the last region of the last level{}",
            match line {
                Ok(Line::Region(r)) => format!("region {} of level {}", r.region, r.level),
                Ok(Line::Probe(_)) => "a K probe".into(),
                Err(e) => e,
            },
            match more {
                0 => String::new(),
                m => format!(", and {m} more lines"),
            }
        ));
    }
    problems
}

/// The K probe's budget as the manifest states it, for a message.
fn probe_budget_text(manifest: &Manifest) -> String {
    match (&manifest.max_size_epsilon, &manifest.max_size_rho) {
        (Some(e), _) => format!("ε = {e}"),
        (None, Some(r)) => format!("ρ = {r}"),
        (None, None) => "its budget not given".into(),
    }
}

/// The probe line, first when the manifest says `K` was estimated (and only then).
fn check_probe(lines: &mut Lines, manifest: &Manifest) -> Vec<String> {
    let estimated = manifest.max_size_source == MaxSizeSource::Estimated;
    let is_probe = matches!(lines.peek(), Some((_, Ok(Line::Probe(_)))));
    if !is_probe {
        return if estimated {
            vec![format!(
                "{FILE}: line 1: expected the K probe: manifest.json says K was estimated privately ({})",
                probe_budget_text(manifest)
            )]
        } else {
            Vec::new()
        };
    }
    let Some((n, Ok(Line::Probe(p)))) = lines.take() else {
        return Vec::new();
    };
    let at = |what: String| format!("{FILE}: line {n}: the K probe's {what}");
    if !estimated {
        return vec![format!(
            "{FILE}: line {n}: a K probe, but manifest.json says K was set by the operator (no ε spent on it)"
        )];
    }
    let budget = match (&manifest.max_size_epsilon, &manifest.max_size_rho) {
        (Some(e), None) => Epsilon::parse_unbounded(e).ok().map(Loss::Pure),
        (None, Some(r)) => Rho::parse_unbounded(r).ok().map(Loss::Zcdp),
        _ => None,
    };
    let Some(budget) = budget else {
        return vec![format!(
            "manifest.json: max_size_epsilon {:?} and max_size_rho {:?}: expected one budget, to check the K probe of {FILE} against",
            manifest.max_size_epsilon, manifest.max_size_rho
        )];
    };
    let whose = match budget {
        Loss::Pure(_) => "manifest.json's max_size_epsilon",
        Loss::Zcdp(_) => "manifest.json's max_size_rho",
    };
    let mut problems: Vec<String> = p
        .noise
        .problems(&budget, max_size::SENSITIVITY, whose, false)
        .into_iter()
        .map(at)
        .collect();
    let k = max_size::estimate(p.noisy, &budget);
    if p.max_size != manifest.max_size || p.max_size != k {
        problems.push(at(format!(
            "max_size is {}, expected {} (manifest.json's K, and what its noisy value {} gives: {k})",
            p.max_size, manifest.max_size, p.noisy
        )));
    }
    problems
}

/// The lines of one level against its table's regions, taking them from `lines`.
/// Problems go to `problems`; `false` when checking stops here.
fn check_level(
    out: &Path,
    lines: &mut Lines,
    level: &Level<'_>,
    mut table: LevelTable,
    manifest: &Manifest,
    problems: &mut Vec<String>,
) -> bool {
    let later = |name: &str| {
        manifest
            .levels
            .iter()
            .skip_while(|l| l.name != level.name)
            .skip(1)
            .any(|l| l.name == name)
    };
    // The region whose line comes next, and its G.
    let mut pending: Option<(String, Count)> = None;
    loop {
        if problems.len() >= MAX_PROBLEMS {
            problems.push(format!("{FILE}: further lines not checked"));
            return false;
        }
        let (region, groups) = match pending.take() {
            Some(p) => p,
            None => match table.next() {
                None => return true,
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    problems.push(format!("{FILE}: not checked further: {e}"));
                    return false;
                }
            },
        };
        let missing = |table: &mut LevelTable, why: &str| {
            let mut after = 0u64;
            while let Some(Ok(_)) = table.next() {
                after += 1;
            }
            format!(
                "{FILE}: no line for region {region} of level {}{} ({why})",
                level.name,
                match after {
                    0 => String::new(),
                    n => format!(", nor for the {n} regions after it in {}", table.file),
                }
            )
        };
        let Some((n, next)) = lines.peek() else {
            problems.push(missing(&mut table, "the file ends before it"));
            return false;
        };
        let n = *n;
        match next {
            Err(e) => {
                problems.push(format!("{FILE}: line {n}: {e}"));
                lines.take();
                pending = Some((region, groups));
            }
            Ok(Line::Probe(_)) => {
                problems.push(format!(
                    "{FILE}: line {n}: a K probe, expected region {region} of level {} (the probe is line 1 or nowhere)",
                    level.name
                ));
                lines.take();
                pending = Some((region, groups));
            }
            Ok(Line::Region(line)) if line.level == level.name && line.region == region => {
                let Some((_, Ok(Line::Region(line)))) = lines.take() else {
                    return false;
                };
                problems.extend(
                    check_line(&line, level, groups, &table.file)
                        .into_iter()
                        .map(|p| {
                            format!(
                                "{FILE}: line {n}: region {region} of level {}: {p}",
                                level.name
                            )
                        }),
                );
            }
            Ok(Line::Region(line)) if line.level == level.name => {
                let found = line.region.clone();
                let position = match table.position(out, &found) {
                    Ok(p) => p,
                    Err(e) => {
                        problems.push(format!("{FILE}: not checked further: {e}"));
                        return false;
                    }
                };
                match position {
                    // Regions before the line's have none: the line is checked as its
                    // region's.
                    Some(p) if p > table.read => {
                        let skipped = p - table.read;
                        problems.push(format!(
                            "{FILE}: no line for region {region} of level {}{} (line {n} is region {found}'s)",
                            level.name,
                            match skipped {
                                1 => String::new(),
                                s => format!(" nor for the {} regions after it", s - 1),
                            }
                        ));
                        let mut next = None;
                        for _ in 0..skipped {
                            next = table.next();
                        }
                        match next {
                            Some(Ok(r)) => pending = Some(r),
                            Some(Err(e)) => {
                                problems.push(format!("{FILE}: not checked further: {e}"));
                                return false;
                            }
                            None => return true,
                        }
                    }
                    Some(_) => {
                        problems.push(format!(
                            "{FILE}: line {n}: region {found} of level {} a second time or out of order (expected region {region}'s line)",
                            level.name
                        ));
                        lines.take();
                        pending = Some((region, groups));
                    }
                    None => {
                        problems.push(format!(
                            "{FILE}: line {n}: region {found} is not a region of level {} ({})",
                            level.name, table.file
                        ));
                        lines.take();
                        pending = Some((region, groups));
                    }
                }
            }
            Ok(Line::Region(line)) if later(&line.level) => {
                let why = format!("line {n} is of level {}", line.level);
                problems.push(missing(&mut table, &why));
                return true;
            }
            Ok(Line::Region(line)) => {
                problems.push(format!(
                    "{FILE}: line {n}: level {}, expected level {} (region {region}): a level manifest.json does not have, or out of order",
                    line.level, level.name
                ));
                lines.take();
                pending = Some((region, groups));
            }
        }
    }
}

/// What is wrong with one region's line (of a region of `G` groups), if anything.
fn check_line(line: &RegionLine, level: &Level<'_>, groups: Count, table: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let method = level.method;
    let kind = MethodKind::of(method).name();
    if line.method != kind {
        problems.push(format!(
            "method is {:?}, expected {kind:?} (the level's in manifest.json)",
            line.method
        ));
    }
    let above = method.tail().map(|t| t.above);
    if line.tail_above != above {
        let shown = |a: Option<Size>| a.map_or("none".to_string(), |a| a.to_string());
        problems.push(format!(
            "tail_above is {}, expected {} (the level's tail in manifest.json)",
            shown(line.tail_above),
            shown(above)
        ));
    }
    problems.extend(line.noise.problems(
        &level.budget,
        method.sensitivity_norms(),
        match level.budget {
            Loss::Pure(_) => "the level's ε in manifest.json",
            Loss::Zcdp(_) => "the level's ρ in manifest.json",
        },
        true,
    ));
    if line.groups != groups {
        problems.push(format!(
            "groups is {}, expected {groups} (its G in {table})",
            line.groups
        ));
    }
    if line.max_size != level.k {
        problems.push(format!(
            "max_size is {}, expected {} (manifest.json's K)",
            line.max_size, level.k
        ));
    }
    problems.extend(check_vectors(line, level, groups));
    problems
}

/// The line's vectors against what `method` measures for `G` groups under `K`.
fn check_vectors(line: &RegionLine, level: &Level<'_>, groups: Count) -> Vec<String> {
    let mut problems = Vec::new();
    let k = level.k;
    let all = u64::from(k) + 1;
    let mut want =
        |name: &str, vector: &Option<Vec<i64>>, length: Option<(u64, &str)>| match (vector, length)
        {
            (None, None) => {}
            (Some(_), None) => problems.push(format!(
                "it has \"{name}\", which a level measured with {} does not",
                level.method.label()
            )),
            (None, Some((n, why))) => {
                problems.push(format!("no \"{name}\", expected {n} values ({why})"))
            }
            (Some(v), Some((n, why))) if v.len() as u64 != n => problems.push(format!(
                "\"{name}\" holds {} values, expected {n} ({why})",
                v.len()
            )),
            (Some(_), Some(_)) => {}
        };
    match level.method {
        Method::Hc => {
            want("head", &line.head, Some((all, "K + 1: Hc[0..=K]")));
            want("top", &line.top, None);
            want("hg", &line.hg, None);
            want("naive", &line.naive, None);
        }
        Method::Naive => {
            want("head", &line.head, None);
            want("top", &line.top, None);
            want("hg", &line.hg, None);
            want("naive", &line.naive, Some((all, "K + 1: H[0..=K]")));
        }
        Method::Hg => {
            want("head", &line.head, None);
            want("top", &line.top, None);
            want("hg", &line.hg, Some((groups, "G: one per group")));
            want("naive", &line.naive, None);
        }
        Method::HcTail(t) => {
            want("hg", &line.hg, None);
            want("naive", &line.naive, None);
            let l = t.above.min(k);
            let head = u64::from(l);
            let rest = match t.groups {
                TailLength::Fixed(m) => Some(tail::Rest::Top(groups.min(u64::from(m)) as usize)),
                // Chosen from the noisy head's first L values, as the draw chose it.
                TailLength::Auto => line
                    .head
                    .as_deref()
                    .filter(|h| h.len() as u64 >= head)
                    .map(|h| tail::auto_rest(&h[..l as usize], groups, l, k, &level.budget)),
            };
            match rest {
                Some(tail::Rest::Top(n)) => {
                    want("head", &line.head, Some((head, "min(L, K): Hc[0..L)")));
                    let why = match t.groups {
                        TailLength::Fixed(_) => "min(m, G): the largest groups",
                        TailLength::Auto => "what the auto tail chooses from the line's noisy head",
                    };
                    want("top", &line.top, Some((n as u64, why)));
                }
                Some(tail::Rest::Cumulative) => {
                    want(
                        "head",
                        &line.head,
                        Some((
                            all,
                            "K + 1: the auto tail chose the rest of Hc from the line's noisy head",
                        )),
                    );
                    want("top", &line.top, None);
                }
                None => want(
                    "head",
                    &line.head,
                    Some((
                        head,
                        "at least min(L, K): the auto tail chooses its length from them",
                    )),
                ),
            }
        }
    }
    problems
}
