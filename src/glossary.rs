//! The words coco's screens, outputs and manual use, one or two sentences each, for a
//! data user as much as for the operator.
//!
//! One source: the TUI's help renders [`GLOSSARY`] (`?`, then `g`), and
//! `docs/glossary.md` holds the same entries word for word between its markers
//! (`src/docs.rs` tests it; `COCO_UPDATE_DOCS=1 cargo test --lib docs` rewrites that
//! part of the file from this table). The text is plain: no Markdown, so both
//! renderings read the same.

/// One entry of the glossary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term {
    /// The word as the screens and outputs spell it.
    pub term: &'static str,
    /// What it means, in one or two sentences.
    pub text: &'static str,
}

/// The glossary, in alphabetical order (ε under E).
pub const GLOSSARY: &[Term] = &[
    Term {
        term: "abs. error per cell",
        text: "What a reader of the released tables sees on average in one cell: per level, \
               the sum over its regions and sizes of |released count − true count| divided by \
               the number of cells either table lists (sizes with a count above 0 in the \
               release or in the truth, top-coded at K). Shown beside the EMD in previews \
               and the search; CONFIDENTIAL like every error against the truth.",
    },
    Term {
        term: "bottom-up",
        text: "A baseline the previews show beside the plan: the whole ε spent on the leaf \
               regions, and every region above them the sum of its leaves' estimates. It is \
               usually the best at the leaves and worse, often far worse, at the levels above.",
    },
    Term {
        term: "cap",
        text: "The most ε the agency allows to be spent on a dataset over all its releases \
               (coco ledger set-cap, or default_cap in config.toml). A draw that would go past \
               the strictest cap covering the dataset is refused before anything is measured.",
    },
    Term {
        term: "checks",
        text: "What coco verifies in every release before it is written: whole, \
               nonnegative counts, each region's total equal to its public G, every parent \
               the sum of its children, no size above K. The files are read back and re-checked \
               before they are put in place; coco verify checks a release directory later.",
    },
    Term {
        term: "CONFIDENTIAL",
        text: "Marks a figure computed from the true data: entities, group sizes, true \
               histograms, errors measured against the truth. Such figures are for the \
               operator's decisions only, are not differentially private, and must never be \
               published.",
    },
    Term {
        term: "consistent",
        text: "A release is consistent when every region's table adds up exactly to the sum of \
               its children's and holds exactly the region's public number of groups G, in \
               whole nonnegative counts. In previews, consistent is the error of that released \
               table, after the consistency step (wls or topdown).",
    },
    Term {
        term: "count-of-counts",
        text: "For one region, the number of groups of each size: how many households have 0, \
               1, 2, … members. coco releases one such table for every region of every level.",
    },
    Term {
        term: "covered",
        text: "The Preview's share of cells whose 90% margin of error, computed as a release \
               would publish it, held the true count in the trials (CONFIDENTIAL: compared \
               with the truth). Near 90% or above means the margins can be trusted; well below, \
               that they are too narrow for this plan and data.",
    },
    Term {
        term: "EMD",
        text: "Earth mover's distance, the error every preview reports: how many entities must \
               be added to or taken from groups to turn a region's estimated table into its true \
               one (Kuo et al. §3.1), averaged over a level's regions. Smaller is better; 0 is \
               exact.",
    },
    Term {
        term: "entity, group",
        text: "A group is what is counted (a household, a group quarters, a taxi) and its size \
               is its number of entities (people, trips). One entity is the privacy unit: a \
               release hides whether any one entity is in the data and in which group.",
    },
    Term {
        term: "ε (epsilon)",
        text: "The privacy-loss budget of differential privacy: a smaller ε means more noise and \
               stronger protection. A plan gives each level its own ε and a release costs their \
               sum (plus the ε for estimating K, if asked); coco refuses a total above 20 \
               unless told to allow it.",
    },
    Term {
        term: "ε spent",
        text: "The sum of the ε of every draw the ledger records against a dataset, approved, \
               discarded or still pending. The status bar rounds it up and caps down, so it \
               never shows more budget left than there is.",
    },
    Term {
        term: "G",
        text: "A region's number of groups. It is public: every release reproduces it exactly, \
               and coco's default plan is chosen from it, the hierarchy and K alone.",
    },
    Term {
        term: "groups in the wrong size cell",
        text: "The error relative to a region's groups: Σ over sizes of |released count − \
               true count| divided by 2·G, the share of the region's G groups that would have \
               to move to another size cell to make the release true (0 exact, 100% none \
               where it belongs), averaged over the level's regions with groups. Unlike the \
               EMD it does not grow with the region's size; relative_error in preview JSON.",
    },
    Term {
        term: "hc, hg, naive",
        text: "The ways a level can be measured: hc adds noise to each region's cumulative \
               counts (groups of size at most j, for every j up to K), hg to each group's size, \
               sorted. naive adds noise to each cell of the table and is there for comparison \
               only.",
    },
    Term {
        term: "held level",
        text: "A level whose share of the total the operator holds on the Budget screen (h): \
               changing the total keeps its share, changing another level keeps its budget and \
               the total, and only the levels not held rebalance. The plan file records it \
               (held = true); it changes nothing that is measured.",
    },
    Term {
        term: "independent",
        text: "In previews, the error of each region's own estimate from its own noisy \
               measurement, before the consistency step makes the levels add up. Set beside \
               consistent, it shows what consistency buys.",
    },
    Term {
        term: "K",
        text: "The public bound on a group's size (10,000 by default): a larger group is counted \
               as size K. It is published with the release; a plan fixes it or estimates it \
               privately with a little ε of its own.",
    },
    Term {
        term: "leaning, own weight",
        text: "How far a level's consistent estimates rest on the level's own measurement (own \
               weight 1) rather than on the sum of its children's (0). The preview and the \
               manifest report it per level, beside the weight the variance model alone would \
               have given (model_own_weight).",
    },
    Term {
        term: "ledger",
        text: "coco's record of every release drawn: the dataset's keys, the plan, ε and the \
               decision, hash-chained and anchored so that spending is counted and caps bind. It \
               names the confidential data's files and digests, so it is confidential too.",
    },
    Term {
        term: "level, region",
        text: "The hierarchy's levels run from the root (a nation) down to the leaves (counties, \
               blocks); a region is one node of it. Each level has its own ε and method.",
    },
    Term {
        term: "manifest",
        text: "manifest.json in a release directory: the plan, ε, K, methods, checks, warnings \
               and the digest of every output file, with the id of the draw's ledger entry. \
               Nothing in it is computed from the confidential data but the noisy tables it \
               describes.",
    },
    Term {
        term: "margin of error",
        text: "The interval from lower to upper published beside each released count in \
               uncertainty.csv: at 90% confidence by default, the range in which the true number \
               of groups is likely to lie. It is computed from the published tables only, by \
               re-running the plan's noise and post-processing on them (bootstrap replicates), \
               and costs no ε.",
    },
    Term {
        term: "noise",
        text: "The random whole numbers added to every measured value: discrete Laplace \
               (two-sided geometric) noise of scale 1/ε, drawn exactly with integer arithmetic \
               from fresh operating-system randomness for every release.",
    },
    Term {
        term: "noise samples",
        text: "How many noisy values a plan draws, a public figure shown per level: K + 1 per \
               region for hc, G for hg, L plus the groups listed for a tail. It sets the time and \
               memory a release takes.",
    },
    Term {
        term: "omniscient reference",
        text: "In previews, a yardstick from Kuo et al. §6.2: the error of an estimator that \
               knew which group sizes occur in each region and only had to estimate how many \
               groups have each (distinct sizes × √2/ε per region). It is computed from the true \
               data; it is not a bound, and consistent releases often beat it.",
    },
    Term {
        term: "pending",
        text: "A draw recorded in the ledger before anyone sees it, awaiting the operator's \
               approval or discard. Its ε counts as spent from that moment, whatever is decided.",
    },
    Term {
        term: "proxy",
        text: "Data with the same hierarchy whose group sizes are public, for previews and the \
               Trade-off search, so that tuning the plan on it publishes nothing about the \
               confidential data: synthetic (each region's public G filled from a fixed public \
               size model) or a directory (an earlier census in coco's format).",
    },
    Term {
        term: "recommendation",
        text: "The plan the Trade-off search proposes: better than bottom-up at some level by \
               more than two standard errors, and not matched at every level by another plan \
               tried. Its errors are shown as ratios to bottom-up's, ± a standard error; a \
               applies it. When no plan qualifies there is none, and coco says why.",
    },
    Term {
        term: "runs joined",
        text: "Where memory is short, wls joins the most alike neighbouring runs of a region's \
               combined estimate, so its released counts are approximate. The release warns, and \
               the manifest records runs_joined per level.",
    },
    Term {
        term: "saturated tail",
        text: "A tail that lists a fixed number of groups is saturated in a region when every \
               listed group is estimated above L, so more may exist unlisted; coco puts those \
               at L and warns. A tail with groups = auto sizes its list from the region's noisy \
               head, so it practically never saturates.",
    },
    Term {
        term: "seed",
        text: "A fixed seed makes previews reproducible; the status bar says whether previews \
               use one or OS randomness. A release always uses fresh OS randomness: a seeded \
               release (coco release --seed, for tests) is marked not private and refused \
               unless --not-private is given.",
    },
    Term {
        term: "sweep, frontier",
        text: "The Trade-off screen's two views. The sweep shows how one level's error changes \
               as its ε goes from a quarter to four times the plan's; the frontier shows each \
               level's error as the leaves' share of the total ε grows, beside bottom-up, \
               with the search over methods and splits (coco preview --sweep).",
    },
    Term {
        term: "tail (L, groups, auto)",
        text: "hc with a tail measures the sizes below L as cumulative counts and lists the \
               sizes of the region's groups of size L or more, at the same ε. groups is how many \
               are listed: a number, or auto (coco's default) for as many as the region's noisy \
               head says there are, or the rest of the cumulative counts where that costs fewer \
               noise samples.",
    },
    Term {
        term: "topdown",
        text: "The paper's consistency step (Kuo et al. Algorithm 1): from the root down, each \
               region's groups are matched to its children's and the two estimates of each group \
               merged. The alternative to wls.",
    },
    Term {
        term: "tuning",
        text: "How the plan was chosen, recorded with every release: public-default (coco's \
               default, from public figures only), public (chosen from public figures), proxy \
               (tuned on a public proxy), confidential-previews (after looking at errors \
               against the confidential data, which leaks outside ε) or unknown.",
    },
    Term {
        term: "wls",
        text: "coco's consistency step, the default: every size's counts combined across the \
               tree by weighted least squares so that parents equal the sum of their children, \
               checked against the measurements so that no level leans on its children further \
               than its own noisy cells show helps, then made whole and nonnegative from the top \
               down.",
    },
];

/// The glossary as the Markdown of `docs/glossary.md` between its markers: one heading
/// and one paragraph per entry.
pub fn markdown() -> String {
    let mut s = String::new();
    for t in GLOSSARY {
        s.push_str(&format!("### {}\n\n{}\n\n", t.term, t.text));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_plain_short_and_in_order() {
        let key = |t: &Term| t.term.replace('ε', "epsilon").to_lowercase();
        for w in GLOSSARY.windows(2) {
            assert!(
                key(&w[0]) < key(&w[1]),
                "{} before {}",
                w[1].term,
                w[0].term
            );
        }
        for t in GLOSSARY {
            for c in ['`', '*', '[', '<'] {
                assert!(!t.text.contains(c), "{}: {c:?} would be Markdown", t.term);
            }
            // One or two sentences: a screen's worth at most.
            assert!(t.text.chars().count() <= 400, "{}: too long", t.term);
        }
    }
}
