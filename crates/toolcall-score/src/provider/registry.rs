//! Each format's [`Wire`], looked up from its [`Format`]: the provider layer's half of the
//! registry in `format.rs`, and the [`Format`] methods that answer from a format's `Wire`.

use super::live::RequestSettings;
use super::wire::Wire;
use crate::{Case, Example, Format};

macro_rules! wire_lookup {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident, $name:literal, [$($alias:literal),*]; )*) => {
        impl Format {
            /// Everything the shared layers need to know about this format.
            pub(crate) const fn wire(self) -> &'static Wire {
                match self {
                    $( Format::$variant => &super::$module::WIRE, )*
                }
            }
        }
    };
}
crate::format::formats!(wire_lookup);

impl Format {
    /// The stop reason this format's provider reports for a turn that ends with tool calls
    /// (`called`) or in text; `None` where the format has no such field (call lists).
    pub fn stop_reason(self, called: bool) -> Option<&'static str> {
        let reasons = self.wire().stop_reasons;
        if called {
            reasons.calls
        } else {
            reasons.text
        }
    }

    /// This format's [`Example`].
    pub fn example(self) -> Example {
        self.wire().example
    }

    /// Whether a response in this format can be read from a recorded stream (server-sent
    /// events, one JSON chunk per line, a JSON array of chunks).
    pub fn streams(self) -> bool {
        self.wire().stream.is_some()
    }

    /// The request body live mode sends for `case` in this format (`raw` is the case file's
    /// JSON, sent as written when it already is this format's request), or `None` when no live
    /// transport speaks this format.
    pub fn request_body(
        self,
        raw: &serde_json::Value,
        case: &Case,
        settings: &RequestSettings,
    ) -> Option<serde_json::Value> {
        self.wire().live.map(|body| body(raw, case, settings))
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for crate::SchemaDialect {
    /// `json_schema`, or the name of a format's own schema language (`gemini_open_api`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match self {
            crate::SchemaDialect::JsonSchema => "json_schema",
            crate::SchemaDialect::Native(format) => format
                .wire()
                .request
                .native_schema
                .map_or(format.as_str(), |native| native.name),
        })
    }
}
