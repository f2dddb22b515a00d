//! The records of a source that is not spans: one JSON document, or JSON Lines.

use serde_json::Value;

use crate::Bad;

/// A file's JSON values with where each is: the whole document (`file`), or each line of a JSON
/// Lines file (`file:line`). A line that is not JSON is in `bad`, and the others are kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    /// The values, in order, with where each is.
    pub values: Vec<(String, Value)>,
    /// Lines that are not JSON.
    pub bad: Vec<Bad>,
    /// Whether the file is JSON Lines (else one document).
    pub lines: bool,
}

impl Records {
    /// Parses `text`, the content of `path`.
    pub fn parse(text: &str, path: &str) -> Records {
        let text = text.trim_start_matches('\u{feff}');
        if let Ok(doc) = serde_json::from_str::<Value>(text) {
            return Records {
                values: vec![(path.to_owned(), doc)],
                bad: Vec::new(),
                lines: false,
            };
        }
        let mut records = Records {
            lines: true,
            ..Records::default()
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{path}:{}", i + 1);
            match serde_json::from_str::<Value>(line) {
                Ok(v) => records.values.push((at, v)),
                Err(e) => records.bad.push(Bad {
                    at,
                    why: format!("not JSON: {e}"),
                }),
            }
        }
        records
    }

    /// The first value, which a source's claim is judged on.
    pub fn first(&self) -> Option<&(String, Value)> {
        self.values.first()
    }
}
