//! The fast path of a JSONL log line: a passing line counted in one pass over its bytes.
//!
//! Most lines of a production log pass, and a passing line adds only counts to the tally (a
//! response, its calls). What it costs to know that it passes is what this path cuts. The line
//! is read once, with no `Value` of the request (see [`toolcall_score::RequestReader`]): its
//! tools array, recognised by its bytes among those seen before, is cut out of the line before
//! it is read; its messages are read typed when they have the OpenAI Chat shape (else again,
//! as values with their texts dropped). The response is read by the scorer's single-pass
//! reader from the line's own bytes.
//!
//! **Invariant:** this path only ever says "this line passes". Anything else (an error, a
//! shape it does not read, a verdict with findings, whose causes need the texts it dropped)
//! sends the line to the general path in `scan.rs`, which reads it whole and says why, so a
//! line's contribution to the tally is the general path's on every input. The tests below
//! check that line by line, each way of reading messages on its own, over every recorded
//! response in the repository and a dozen mutations of each, and (CI tier, feature
//! `external-data`) over the Vercel AI SDK's recorded bodies and streams; the tau-bench tier
//! (`tests/tau_bench_rate.rs`) rates its 1,164 turns as a log against the imported tree.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use toolcall_score::{Case, Format, RequestReader, Response, Scorer};

use crate::tally::Tally;

thread_local! {
    /// One reader per worker thread: its tools arrays are that thread's lines'.
    static READER: RefCell<RequestReader> = RefCell::new(RequestReader::new());
}

/// The most `{` and `[` a response's text may hold to be read apart from its line: read on
/// its own, it has one more level of serde_json's depth limit (128) than inside the line.
const RESPONSE_BRACKETS: usize = 120;

/// Adds the line to `tally` and returns `true` when it passes; returns `false`, having added
/// nothing, for the general path to read it.
pub(crate) fn add_if_passing(tally: &mut Tally, bytes: &[u8], format: Option<Format>) -> bool {
    // Messages typed first (the OpenAI Chat shape); a line that does not read so is read again
    // with them as values (every shape), before the general path.
    add_if_passing_read(tally, bytes, format, &[true, false])
}

/// [`add_if_passing`], trying the request's messages typed or not in the order of `typed`.
fn add_if_passing_read(
    tally: &mut Tally,
    bytes: &[u8],
    format: Option<Format>,
    typed: &[bool],
) -> bool {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    READER.with_borrow_mut(|reader| {
        for &typed in typed {
            reader.set_typed_messages(typed);
            // `None`: not read here; `Some(None)`: read, not passing; else what it adds. The
            // tally is only touched after: the read may be made twice (see `with_tools_cut`).
            let read = reader.with_tools_cut(text, |reader, text| {
                let mut deserializer = serde_json::Deserializer::from_str(text);
                let line = (LineSeed { reader }).deserialize(&mut deserializer).ok()?;
                deserializer.end().ok()?;
                let format = line.format.or(format).or(line.case.format);
                let Some(response) = response(line.response, format) else {
                    return Some(None);
                };
                let passes = Scorer::new(&line.case)
                    .score(&response)
                    .findings()
                    .is_empty();
                let counts = passes.then_some((response.calls.len(), line.case.expect));
                // The next line's messages are read into this one's buffers.
                reader.recycle(line.case);
                Some(counts)
            });
            match read {
                Some(Some((calls, expect))) => {
                    tally.add_pass(calls, expect);
                    return true;
                }
                Some(None) => return false,
                None => {}
            }
        }
        false
    })
}

/// The response a line's `response` holds, as the general path reads it; `None` for what only
/// the general path reads.
fn response(raw: &RawValue, format: Option<Format>) -> Option<Response> {
    let text = raw.get();
    match text.as_bytes().first()? {
        // A string holds the body as it came, or the stream it came as: the general path reads
        // its content on its own, as here.
        b'"' => {
            let body: String = serde_json::from_str(text).ok()?;
            Response::from_json_str(&body, format).ok()
        }
        b'{' => {
            let brackets = text.bytes().filter(|&b| b == b'{' || b == b'[').count();
            if brackets > RESPONSE_BRACKETS {
                return None;
            }
            Response::from_json_str(text, format).ok()
        }
        _ => None,
    }
}

/// A line as this path reads it.
struct Line<'de> {
    case: Case,
    response: &'de RawValue,
    format: Option<Format>,
}

struct LineSeed<'r> {
    reader: &'r mut RequestReader,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'_> {
    type Value = Line<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Line<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// The line's members, as `scan::LogLine` names them; any other is skipped, as there.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Key {
    Request,
    Response,
    Format,
    Id,
    #[serde(other)]
    Other,
}

impl<'de> Visitor<'de> for LineSeed<'_> {
    type Value = Line<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a log line object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Line<'de>, A::Error> {
        let (mut case, mut response, mut format, mut id) = (None, None, None, None);
        let duplicate = |name| de::Error::custom(format_args!("duplicate field `{name}`"));
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Request if case.is_some() => return Err(duplicate("request")),
                Key::Request => case = Some(map.next_value_seed(self.reader.seed())?),
                Key::Response if response.is_some() => return Err(duplicate("response")),
                Key::Response => response = Some(map.next_value::<&'de RawValue>()?),
                Key::Format if format.is_some() => return Err(duplicate("format")),
                Key::Format => format = Some(map.next_value::<Option<Format>>()?),
                Key::Id if id.is_some() => return Err(duplicate("id")),
                Key::Id => id = Some(map.next_value::<Option<String>>()?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = |name| de::Error::custom(format_args!("missing field `{name}`"));
        Ok(Line {
            case: case.ok_or_else(|| missing("request"))?,
            response: response.ok_or_else(|| missing("response"))?,
            format: format.flatten(),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The invariant, checked line by line: a line this path counts is one the general path
    //! reads, passes and counts the same way. The corpus is every recorded response in the
    //! repository as a log line with its case as the request (seven wire formats, and requests
    //! of each provider's own shape), plus mutations of each line.
    use std::path::{Path, PathBuf};

    use serde_json::{json, Value};

    use super::*;
    use crate::tally::Origin;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Every recorded body with its case, as a log line (the request inline, and as a string).
    fn corpus() -> Vec<String> {
        let root = root();
        let mut recordings = Vec::new();
        let json = |p: &Path| p.extension().is_some_and(|e| e == "json" || e == "jsonl");
        crate::scan::walk(&root.join("recorded"), &json, &mut |path| {
            recordings.push(path);
            Ok(())
        })
        .unwrap();
        let mut lines = Vec::new();
        for path in recordings {
            let relative = path.strip_prefix(root.join("recorded")).unwrap();
            let id: PathBuf = relative.iter().skip(1).collect();
            let case = root.join("cases").join(id.with_extension("json"));
            let Ok(request) = std::fs::read_to_string(&case) else {
                continue;
            };
            let Ok(request) = serde_json::from_str::<Value>(&request) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).unwrap();
            let bodies: Vec<Value> = text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .chain(serde_json::from_str(&text).ok())
                .collect();
            for body in bodies {
                lines.push(json!({"request": request, "response": body}).to_string());
                lines.push(
                    json!({"id": "r1", "response": body.to_string(), "request": request.to_string()})
                        .to_string(),
                );
            }
        }
        assert!(lines.len() > 300, "only {} corpus lines", lines.len());
        lines
    }

    /// What a tally says, in a comparable form.
    fn summary(tally: &Tally) -> String {
        let mut names: Vec<_> = tally.names.iter().map(|(n, t)| (n, t.count)).collect();
        names.sort();
        let mut in_text: Vec<_> = tally.in_text.iter().map(|(n, t)| (n, t.count)).collect();
        in_text.sort();
        format!(
            "responses {} calls {} unknown {} no-call {}/{} other {:?} bad {} names {names:?} in text {in_text:?}",
            tally.responses,
            tally.calls,
            tally.unknown,
            tally.no_call_responses,
            tally.no_call_calls,
            tally.other_findings,
            tally.bad,
        )
    }

    fn general(line: &str) -> Tally {
        let mut tally = Tally::default();
        let origin = Origin {
            order: (0, 1),
            shown: "log:1".into(),
            file: None,
            line: Some(1),
        };
        if let Err(message) =
            crate::scan::score_line(&mut tally, line.as_bytes(), None, origin.clone())
        {
            tally.bad_input(origin, message);
        }
        tally
    }

    /// Returns whether the fast path counted the line, with the messages read typed, as
    /// values, and both ways in turn; panics where any disagrees with the general path.
    fn check(line: &str) -> bool {
        let mut counted = [false; 3];
        for (mode, typed) in [&[true][..], &[false], &[true, false]]
            .into_iter()
            .enumerate()
        {
            let mut fast = Tally::default();
            counted[mode] = add_if_passing_read(&mut fast, line.as_bytes(), None, typed);
            let expected = if counted[mode] {
                general(line)
            } else {
                Tally::default()
            };
            assert_eq!(
                summary(&fast),
                summary(&expected),
                "typed {typed:?}: {line}"
            );
        }
        assert_eq!(counted[2], counted[0] || counted[1], "{line}");
        counted[2]
    }

    /// How many of `lines` each way of reading messages counts (typed, as values).
    fn counted_by_mode(lines: &[String]) -> (usize, usize) {
        let count = |typed: &[bool]| {
            lines
                .iter()
                .filter(|l| add_if_passing_read(&mut Tally::default(), l.as_bytes(), None, typed))
                .count()
        };
        (count(&[true]), count(&[false]))
    }

    #[test]
    fn every_corpus_line_counts_as_the_general_path_counts_it() {
        let lines = corpus();
        let fast = lines.iter().filter(|line| check(line)).count();
        // Most real lines pass, and the fast path takes nearly all of those.
        let passing = lines
            .iter()
            .filter(|l| {
                let t = general(l);
                let passed = Tally {
                    responses: t.responses,
                    calls: t.calls,
                    no_call_responses: t.no_call_responses,
                    ..Tally::default()
                };
                summary(&t) == summary(&passed)
            })
            .count();
        assert!(
            fast * 10 >= passing * 9,
            "fast {fast} of {passing} passing lines"
        );
        // Both readers of messages are exercised: the typed one on the OpenAI-shaped lines, the
        // other on every shape.
        let (typed, values) = counted_by_mode(&lines);
        assert!(
            typed * 5 > passing && typed < values,
            "typed {typed}, values {values} of {passing}"
        );
    }

    /// A small deterministic generator (xorshift), so a failure names a reproducible line.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    /// Edits that keep most of a line's JSON and aim at what the two paths read differently.
    fn mutate(line: &str, rng: &mut Rng) -> String {
        const INSERTS: [&str; 14] = [
            "1e400",
            "\\ud800",
            "\"",
            "\\",
            "{",
            "]",
            ",",
            "null",
            "\"tools\":[],",
            "\"messages\":7,",
            "\"expect\":\"no_call\",",
            "\"request\":{},",
            "[[[[[[[[",
            "\u{1}",
        ];
        let mut bytes = line.as_bytes().to_vec();
        for _ in 0..=rng.below(2) {
            let at = rng.below(bytes.len());
            match rng.below(4) {
                0 => {
                    let end = (at + 1 + rng.below(12)).min(bytes.len());
                    bytes.drain(at..end);
                }
                1 => {
                    let insert = INSERTS[rng.below(INSERTS.len())];
                    bytes.splice(at..at, insert.bytes());
                }
                2 => bytes[at] = b" \"{}[]:,0e-ntu\\x"[rng.below(16)],
                _ => {
                    // Rename a tool or call where a name is: the verdict changes, not the JSON.
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    bytes = text.replacen("\"name\":\"", "\"name\":\"x", 1).into_bytes();
                }
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    #[test]
    fn mutated_lines_count_as_the_general_path_counts_them() {
        let lines = corpus();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut tried, mut fast) = (0, 0);
        for line in &lines {
            for _ in 0..12 {
                let mutated = mutate(line, &mut rng);
                tried += 1;
                fast += usize::from(check(&mutated));
            }
        }
        // The mutations must leave some lines passing, or this checks nothing.
        assert!(
            fast * 20 > tried,
            "only {fast} of {tried} mutated lines took the fast path"
        );
    }

    /// Real provider bodies and streams (the Vercel AI SDK's recorded fixtures, Apache-2.0, in
    /// `../shared/external/vercel-ai`): each as a log line with its tools as the request, as
    /// the object it is or as the string a logger keeps, and mutated. CI-only tier (feature
    /// `external-data`), reading `ATP_VERCEL_AI_DIR`; unset is a failure, never a skip.
    #[cfg(feature = "external-data")]
    #[test]
    fn real_provider_bodies_count_as_the_general_path_counts_them() {
        let dir = std::env::var_os("ATP_VERCEL_AI_DIR")
            .map(PathBuf::from)
            .expect("ATP_VERCEL_AI_DIR is not set: point it at shared/external/vercel-ai");
        let read = |path: &Path| {
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        let manifest: Value = serde_json::from_str(&read(&dir.join("manifest.json"))).unwrap();
        let mut lines = Vec::new();
        for pair in manifest.as_array().unwrap() {
            let pair_dir = dir.join(pair["dir"].as_str().unwrap());
            let tools: Value = serde_json::from_str(&read(&pair_dir.join("tools.json"))).unwrap();
            let text = read(&pair_dir.join(pair["response_file"].as_str().unwrap()));
            let request = json!({"tools": tools, "messages": [{"role": "user", "content": "go"}]});
            lines.push(json!({"request": request, "response": text}).to_string());
            if let Ok(body) = serde_json::from_str::<Value>(&text) {
                lines.push(json!({"request": request, "response": body}).to_string());
            }
        }
        assert!(lines.len() > 217, "{} lines", lines.len());
        let fast = lines.iter().filter(|line| check(line)).count();
        assert!(
            fast * 2 > lines.len(),
            "only {fast} of {} lines fast",
            lines.len()
        );
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for line in &lines {
            for _ in 0..8 {
                check(&mutate(line, &mut rng));
            }
        }
    }

    /// Found by review: a first `tools` replaced by a second was never checked.
    #[test]
    fn a_second_tools_key_is_left_to_the_general_path() {
        let response = r#"{"type":"message","role":"assistant","content":[]}"#;
        for first in ["1e400", r#""\ud800""#, "[1e400]"] {
            let line =
                format!(r#"{{"request":{{"tools":{first},"tools":null}},"response":{response}}}"#);
            assert!(!check(&line), "{line}");
        }
    }

    /// Found by review: a kept array cut out of a place other than the request's `tools`
    /// (nested deeper there) hid that the line is deeper than serde_json allows.
    #[test]
    fn a_kept_array_found_elsewhere_is_read_in_place() {
        let response = r#"{"type":"message","role":"assistant","content":[]}"#;
        let deep = format!(
            r#"[{{"name":"a","x":{}{}}}]"#,
            "[".repeat(98),
            "]".repeat(98)
        );
        let seed = format!(r#"{{"request":{{"tools":{deep}}},"response":{response}}}"#);
        assert!(check(&seed), "the seed line passes and keeps its array");
        for levels in [24, 25, 29] {
            let line = format!(
                r#"{{"request":{{"messages":[],"y":{}{{"tools":{deep}}}{}}},"response":{response}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            );
            assert!(check(&seed));
            let parses = serde_json::from_str::<Value>(&line).is_ok();
            assert_eq!(check(&line), parses, "{levels} levels");
        }
    }

    #[test]
    fn a_response_deeper_than_its_line_allows_is_left_to_the_general_path() {
        let deep = format!("{}1{}", "[".repeat(126), "]".repeat(126));
        let line = format!(
            r#"{{"request": {{"tools": [{{"name": "a"}}]}}, "response": {{"x": {deep}, "content": [], "role": "assistant", "type": "message"}}}}"#
        );
        assert!(serde_json::from_str::<Value>(&line).is_err());
        assert!(!check(&line));
    }
}
