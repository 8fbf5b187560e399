//! The names of coco's enums on every wire — plan files, the ledger, the manifest, JSON
//! output and the command line — spelled once, by each enum's serde attributes. The
//! command line's `clap::ValueEnum` derive on the same enum must agree; the tests below
//! check every named enum.

use serde::de::{DeserializeOwned, IntoDeserializer, Visitor};
use serde::{Deserializer, Serialize};

/// An enum of unit variants with one name each on every wire: derive `Serialize` and
/// `Deserialize` (the names), and `clap::ValueEnum` where the command line takes it (in
/// the same spelling; skipped variants aside), and [`Named`] comes with them.
pub trait Named: Sized + Copy + PartialEq + 'static {
    /// Every variant, in declaration order.
    fn all() -> Vec<Self>;

    /// The variant's name on the wire.
    fn name(self) -> &'static str;

    /// The variant named `text`.
    fn parse(text: &str) -> Option<Self>;
}

impl<T> Named for T
where
    T: Serialize + DeserializeOwned + Copy + PartialEq + 'static,
{
    fn all() -> Vec<Self> {
        variant_names::<T>()
            .iter()
            .filter_map(|n| T::parse(n))
            .collect()
    }

    fn name(self) -> &'static str {
        let written = serde_json::to_value(self).ok();
        let text = written
            .as_ref()
            .and_then(|v| v.as_str())
            .unwrap_or_default();
        variant_names::<T>()
            .iter()
            .find(|n| **n == text)
            .copied()
            .unwrap_or("?")
    }

    fn parse(text: &str) -> Option<Self> {
        let de: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            text.into_deserializer();
        T::deserialize(de).ok()
    }
}

/// The names serde gives `T`'s variants, in declaration order (what its derived
/// `Deserialize` passes to `deserialize_enum`).
pub fn variant_names<T: DeserializeOwned>() -> &'static [&'static str] {
    match T::deserialize(VariantNames) {
        Err(Captured(names)) => names,
        Ok(_) => &[],
    }
}

/// A deserializer that only answers `deserialize_enum`, with the variants' names.
struct VariantNames;

#[derive(Debug)]
struct Captured(&'static [&'static str]);

impl std::fmt::Display for Captured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "variant names: {:?}", self.0)
    }
}

impl std::error::Error for Captured {}

impl serde::de::Error for Captured {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Captured(&[])
    }
}

impl<'de> Deserializer<'de> for VariantNames {
    type Error = Captured;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Captured> {
        Err(Captured(&[]))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Captured> {
        Err(Captured(variants))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consistency::{Consistency, MergeRule};
    use crate::estimate::MethodKind;
    use crate::generate::shapes::Shape;
    use crate::release::outputs::export::OutputFormat;
    use crate::release::plan::tuning::Tuning;

    /// serde and clap spell every variant alike; names round-trip; JSON writes them.
    fn agree<T>(names: &[&str])
    where
        T: Named + clap::ValueEnum + serde::Serialize + DeserializeOwned + std::fmt::Debug,
    {
        let serde_names = variant_names::<T>();
        assert_eq!(serde_names, names);
        assert_eq!(T::all().len(), names.len());
        for (v, &n) in T::all().into_iter().zip(names) {
            assert_eq!(v.name(), n);
            assert_eq!(T::parse(n), Some(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{n}\""));
            if let Some(p) = v.to_possible_value() {
                assert_eq!(
                    p.get_name(),
                    n,
                    "{v:?}: the command line spells it otherwise"
                );
            }
        }
        assert_eq!(T::parse("no such name"), None);
    }

    /// An enum named on files only (not on the command line): serde's names
    /// round-trip.
    fn named<T>(names: &[&str])
    where
        T: Named + serde::Serialize + DeserializeOwned + std::fmt::Debug,
    {
        assert_eq!(variant_names::<T>(), names);
        for (v, &n) in T::all().into_iter().zip(names) {
            assert_eq!(v.name(), n);
            assert_eq!(T::parse(n), Some(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{n}\""));
        }
    }

    #[test]
    fn enums_on_files_only_have_one_spelling() {
        named::<crate::warning::WarningKind>(&[
            "wls_needs_fits",
            "saturated_tail",
            "joined_runs",
            "look_alike_labels",
        ]);
        named::<crate::release::margins::MarginsMethod>(&["parametric-bootstrap-pooled"]);
        named::<crate::privacy::Definition>(&["pure", "zcdp"]);
    }

    #[test]
    fn every_named_enum_has_one_spelling() {
        agree::<Consistency>(&["topdown", "wls"]);
        agree::<MergeRule>(&["weighted", "average"]);
        agree::<MethodKind>(&["hc", "hg", "naive"]);
        agree::<Tuning>(&[
            "public-default",
            "public",
            "proxy",
            "unknown",
            "confidential-previews",
        ]);
        agree::<OutputFormat>(&["csv", "parquet", "both"]);
        agree::<Shape>(&[
            "group-quarters",
            "dense",
            "skewed",
            "chain",
            "giant",
            "heavy-tail",
            "many-tiny",
            "sparse",
            "deep",
            "threshold",
        ]);
    }
}
