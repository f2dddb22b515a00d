//! Each format's [`Wire`], looked up from its [`Format`]: the provider layer's half of the
//! registry in `format.rs`, and the [`Format`] methods that answer from a format's `Wire`.

use serde_json::Value;

use super::live::RequestSettings;
use super::wire::{Members, Wire};
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

/// The format of a body or event, from the formats' predicates: the one that fits, else every
/// one that does (none, or several).
pub(crate) fn fitting(body: &dyn Members) -> Result<Format, Vec<Format>> {
    let mut fitting = Format::ALL.into_iter().filter(|f| (f.wire().fits)(body));
    match (fitting.next(), fitting.next()) {
        (Some(one), None) => Ok(one),
        (None, _) => Err(Vec::new()),
        (Some(first), Some(second)) => Err([first, second].into_iter().chain(fitting).collect()),
    }
}

/// The union of every format's `top_keys`, in registry order, without repeats: the members the
/// single-pass reader keeps. Computed at compile time.
pub(crate) const TOP_KEY_COUNT: usize = union_of_top_keys::<256>().1;

/// See [`TOP_KEY_COUNT`].
pub(crate) const TOP_KEYS: [&str; TOP_KEY_COUNT] = {
    let (all, _) = union_of_top_keys::<256>();
    let mut keys = [""; TOP_KEY_COUNT];
    let mut i = 0;
    while i < TOP_KEY_COUNT {
        keys[i] = all[i];
        i += 1;
    }
    keys
};

const fn union_of_top_keys<const MAX: usize>() -> ([&'static str; MAX], usize) {
    let mut keys = [""; MAX];
    let mut count = 0;
    let mut f = 0;
    while f < Format::ALL.len() {
        let own = Format::ALL[f].wire().top_keys;
        let mut k = 0;
        while k < own.len() {
            let mut seen = false;
            let mut j = 0;
            while j < count {
                if same(keys[j], own[k]) {
                    seen = true;
                }
                j += 1;
            }
            if !seen {
                keys[count] = own[k];
                count += 1;
            }
            k += 1;
        }
        f += 1;
    }
    (keys, count)
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The format of a JSON array of stream chunks (an SDK's dump of a stream), when it is one:
/// its first item is an event of a known kind (and not a call, which has a `name`).
pub(crate) fn chunk_array_format(items: &[Value]) -> Option<Format> {
    let first = items.first()?;
    if first.get("name").is_some() {
        return None;
    }
    event_format(first)
}

/// Whether `value` is one event of some format's stream (a body that fits no format may be one
/// chunk recorded on its own).
pub(crate) fn is_event(value: &Value) -> bool {
    event_format(value).is_some()
}

/// The format an event belongs to, told from its shape by each format's own predicate (its
/// `Wire::stream`), in the registry's order.
pub(crate) fn event_format(event: &Value) -> Option<Format> {
    let event = event.as_object()?;
    Format::ALL.into_iter().find(|f| {
        f.wire()
            .stream
            .is_some_and(|stream| (stream.is_event)(event))
    })
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
