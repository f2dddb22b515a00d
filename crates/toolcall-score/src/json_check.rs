//! Checking that text is JSON without building a value of it.
//!
//! Arguments sent as a JSON string (OpenAI Chat and Responses) are kept as text
//! ([`crate::JsonText`]); most are only ever asked "is this JSON, and an object?", which
//! [`is_json`] answers without allocating a `Value` tree. The fast body reader skips the members
//! it does not read with the same [`Skip`].
//!
//! **Invariant:** [`is_json`] accepts exactly what `serde_json::from_str::<Value>` accepts.
//! [`Skip`] goes through `deserialize_any`, not `IgnoredAny`, because serde_json's `IgnoredAny`
//! applies neither the recursion limit nor the f64 range check: `{"n": 1e400}` would be JSON
//! here and not there. A property test holds the two equal.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Whether `text` is one JSON value (surrounding whitespace allowed), as parsing it into a
/// `serde_json::Value` would decide (the same nesting limit, numbers in range), without
/// building it.
pub fn is_json(text: &str) -> bool {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Skip::deserialize(&mut deserializer).is_ok() && deserializer.end().is_ok()
}

/// Any JSON value, validated exactly as parsing it into a `Value` would, and dropped.
pub(crate) struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Skip, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_key::<Skip>()?.is_some() {
            map.next_value::<Skip>()?;
        }
        Ok(Skip)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::is_json;

    fn parses(text: &str) -> bool {
        serde_json::from_str::<Value>(text).is_ok()
    }

    #[test]
    fn decides_as_a_value_parse_does_at_the_edges() {
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        for text in [
            "{}",
            " {\"a\": [1, 2.5, -3e10, true, null, \"x\\u00e9\"]} ",
            "{\"n\": 1e400}",
            "{\"a\": 1,}",
            "{\"a\": 1} x",
            "\"\\ud800\"",
            "\"\\ud83d\\ude00\"",
            "{\"a\":\"\u{1}\"}",
            "",
            "   ",
            "[1] [2]",
            "-",
            "01",
            "1.",
            &deep_ok,
            &too_deep,
        ] {
            assert_eq!(is_json(text), parses(text), "{text:?}");
        }
        assert!(
            !is_json("{\"n\": 1e400}"),
            "out of f64's range is not a Value"
        );
        assert!(
            !is_json(&too_deep),
            "past the recursion limit is not a Value"
        );
    }

    proptest! {
        #[test]
        fn agrees_with_a_value_parse_on_any_text(text in "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ \t\n]{0,40}") {
            prop_assert_eq!(is_json(&text), parses(&text));
        }

        #[test]
        fn agrees_with_a_value_parse_on_mutated_json(value in any_json(), cut in 0usize..64, insert in "[\\[\\]{}\",:0-9ex\\\\ ]{0,2}") {
            let text = value.to_string();
            let cut = cut.min(text.len());
            if text.is_char_boundary(cut) {
                let mutated = format!("{}{}{}", &text[..cut], insert, &text[cut..]);
                prop_assert_eq!(is_json(&mutated), parses(&mutated));
            }
            prop_assert!(is_json(&text));
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            ".{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,4}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
