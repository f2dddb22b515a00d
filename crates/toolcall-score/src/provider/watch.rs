//! A stream read as it passes: bytes in as they arrive, and at each whole event whether a tool
//! call's name is complete, for a proxy that must decide before it forwards the rest.
//!
//! There is no second model of any stream here: the events are framed by `stream.rs`'s framing,
//! and after an event that may touch a call they are folded by the format's own assembly and read
//! by its reader, exactly as a recorded stream is. A call's name is **complete** once it cannot
//! change any more: a later call exists, or an event after it changed the response elsewhere (its
//! arguments, the text, the stop reason) and left the name as it was, or the stream ended. That
//! rule holds for a format whose names arrive whole (Anthropic, Responses, Gemini) and for Chat
//! Completions, whose `function.name` may be split across deltas, so a name is never judged on a
//! prefix of itself.

use serde_json::Value;

use super::stream::{ndjson_payloads, response, sse_payloads, Framing};
use crate::errors::ParseError;
use crate::{Format, Response, ToolCall};

/// A stream of `format`'s events, fed as its bytes arrive.
///
/// ```
/// use toolcall_score::provider::{Framing, StreamWatch};
/// use toolcall_score::Format;
///
/// let mut watch = StreamWatch::new(Format::Anthropic, Framing::Sse);
/// watch.push(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,")?;
/// watch.push(b"\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{}}}\n\n")?;
/// assert!(watch.calls().is_empty(), "not complete until something after it is seen");
/// watch.push(b"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\"\"}}\n\n")?;
/// assert_eq!(watch.calls()[0].name, "get_weather");
/// # Ok::<(), toolcall_score::ParseError>(())
/// ```
#[derive(Debug)]
pub struct StreamWatch {
    format: Format,
    framing: Framing,
    /// Bytes after the last whole event.
    tail: Vec<u8>,
    /// Where in `tail` the search for the next event's end resumes.
    scanned: usize,
    /// Bytes of the stream consumed into whole events.
    consumed: usize,
    /// Bytes up to which every call's name is complete.
    checked: usize,
    events: Vec<Value>,
    /// The response the events so far assemble into, when an event could touch a call.
    last: Option<Response>,
    /// How many of `last`'s calls have a complete name.
    complete: usize,
    /// Where the first call's name was complete: the end of that event.
    first: Option<usize>,
    /// Where each call's first event began.
    starts: Vec<usize>,
}

impl StreamWatch {
    /// A watch over a stream of `format`'s events, framed as `framing`.
    pub fn new(format: Format, framing: Framing) -> StreamWatch {
        StreamWatch {
            format,
            framing,
            tail: Vec::new(),
            scanned: 0,
            consumed: 0,
            checked: 0,
            events: Vec::new(),
            last: None,
            complete: 0,
            first: None,
            starts: Vec::new(),
        }
    }

    /// Feeds the next bytes of the stream; every whole event among them is read. An event that
    /// is not JSON, or not UTF-8, is an error (the stream cannot be watched further).
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), ParseError> {
        self.tail.extend_from_slice(bytes);
        while let Some(end) = event_end(self.framing, &self.tail, self.scanned) {
            let event: Vec<u8> = self.tail.drain(..end).collect();
            self.scanned = 0;
            let start = self.consumed;
            self.consumed += end;
            self.read_event(&event, start)?;
        }
        self.scanned = self.tail.len().saturating_sub(3);
        Ok(())
    }

    /// Bytes from the stream's start up to which every event is read and every call's name in
    /// them is complete: what a proxy may forward knowing all it holds.
    pub fn checked(&self) -> usize {
        self.checked
    }

    /// Bytes fed so far.
    pub fn received(&self) -> usize {
        self.consumed + self.tail.len()
    }

    /// The calls whose names are complete, in order (their arguments may still be arriving).
    pub fn calls(&self) -> &[ToolCall] {
        self.last
            .as_ref()
            .map_or(&[][..], |r| &r.calls[..self.complete])
    }

    /// The byte offset at which the first call's name was complete (the end of the event that
    /// made it so), once one is.
    pub fn first_complete_at(&self) -> Option<usize> {
        self.first
    }

    /// The byte offset where the event that first carried call `index` began: what a proxy
    /// that will not forward the call sends up to.
    pub fn call_start(&self, index: usize) -> Option<usize> {
        self.starts.get(index).copied()
    }

    /// The stream's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The response of the whole stream (a last event without its blank line included), as
    /// [`Response::from_json_str`] reads the same text.
    pub fn finish(mut self) -> Result<Response, ParseError> {
        if !self.tail.is_empty() {
            let event = std::mem::take(&mut self.tail);
            self.read_payloads(&event)?;
        }
        response(&self.events, Some(self.format)).map_err(|fault| fault.error)
    }

    fn read_event(&mut self, event: &[u8], start: usize) -> Result<(), ParseError> {
        let touches = self.read_payloads(event)?;
        let pending = self
            .last
            .as_ref()
            .is_some_and(|r| r.calls.len() > self.complete);
        if touches || pending {
            self.update();
            let calls = self.last.as_ref().map_or(0, |r| r.calls.len());
            while self.starts.len() < calls {
                self.starts.push(start);
            }
        }
        if self.complete > 0 && self.first.is_none() {
            self.first = Some(self.consumed);
        }
        if self
            .last
            .as_ref()
            .is_none_or(|r| r.calls.len() == self.complete)
        {
            self.checked = self.consumed;
        }
        Ok(())
    }

    /// Reads one event's payloads into `events`; whether one may name a call.
    fn read_payloads(&mut self, event: &[u8]) -> Result<bool, ParseError> {
        let text = std::str::from_utf8(event).map_err(|e| ParseError::Stream {
            why: format!("an event is not UTF-8 text ({e})"),
        })?;
        let payloads = match self.framing {
            Framing::Sse => sse_payloads(text),
            Framing::Ndjson => ndjson_payloads(text),
        }
        .map_err(|(_, error)| ParseError::Stream {
            why: format!("an event is not JSON: {error}"),
        })?;
        let touches = !payloads.is_empty() && text.contains("\"name\"");
        self.events
            .extend(payloads.into_iter().map(|(value, _)| value));
        Ok(touches)
    }

    /// Assembles the events so far and moves the count of complete names on.
    fn update(&mut self) {
        // A stream cut short or not yet assembling (an error event, a first event of no known
        // kind) leaves what was known; `finish` says what is wrong with it.
        let Ok(now) = response(&self.events, Some(self.format)) else {
            return;
        };
        let mut complete = self.complete.max(now.calls.len().saturating_sub(1));
        if let (Some(last), Some(before)) = (now.calls.last(), self.last.as_ref()) {
            let index = now.calls.len() - 1;
            let same_name = before.calls.get(index).is_some_and(|b| b.name == last.name);
            if same_name && before != &now {
                complete = now.calls.len();
            }
        }
        self.complete = complete.min(now.calls.len());
        self.last = Some(now);
    }
}

/// The end (one past its blank line, or its line's `\n`) of the first whole event in `bytes`,
/// searching from `from`.
fn event_end(framing: Framing, bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            match framing {
                Framing::Ndjson => return Some(i + 1),
                Framing::Sse => {
                    // A blank line: `\n\n` or `\n\r\n`.
                    if bytes.get(i + 1) == Some(&b'\n') {
                        return Some(i + 2);
                    }
                    if bytes.get(i + 1) == Some(&b'\r') && bytes.get(i + 2) == Some(&b'\n') {
                        return Some(i + 3);
                    }
                }
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Let me\"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_\",\"arguments\":\"\"}}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"weather\"}}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );

    fn ends(text: &str) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut from = 0;
        while let Some(end) = event_end(Framing::Sse, &text.as_bytes()[from..], 0) {
            from += end;
            ends.push(from);
        }
        ends
    }

    #[test]
    fn a_split_name_is_complete_only_once_something_after_it_arrives() {
        let at = ends(CHAT);
        let mut watch = StreamWatch::new(Format::OpenaiChat, Framing::Sse);
        watch.push(&CHAT.as_bytes()[..at[1]]).expect("push");
        assert!(watch.calls().is_empty(), "`get_` is a prefix");
        assert_eq!(watch.checked(), at[0], "the event naming a call is held");
        watch.push(&CHAT.as_bytes()[at[1]..at[2]]).expect("push");
        assert!(
            watch.calls().is_empty(),
            "the name changed, so it may go on"
        );
        watch.push(&CHAT.as_bytes()[at[2]..at[3]]).expect("push");
        assert_eq!(watch.calls()[0].name, "get_weather");
        assert_eq!(watch.checked(), at[3]);
        assert_eq!(watch.first_complete_at(), Some(at[3]));
        assert_eq!(watch.call_start(0), Some(at[0]), "the event naming `get_`");
        let whole = Response::from_json_str(CHAT, Some(Format::OpenaiChat)).expect("whole");
        watch.push(&CHAT.as_bytes()[at[3]..]).expect("push");
        assert_eq!(watch.finish().expect("finish"), whole);
    }

    #[test]
    fn bytes_in_any_pieces_read_as_the_whole_text() {
        let whole = Response::from_json_str(CHAT, None).expect("whole");
        for size in [1, 2, 3, 7, 64] {
            let mut watch = StreamWatch::new(Format::OpenaiChat, Framing::Sse);
            for piece in CHAT.as_bytes().chunks(size) {
                watch.push(piece).expect("push");
            }
            assert_eq!(watch.calls().len(), 1, "pieces of {size}");
            assert_eq!(watch.received(), CHAT.len());
            assert_eq!(watch.finish().expect("finish"), whole, "pieces of {size}");
        }
    }

    #[test]
    fn a_name_in_the_last_event_is_complete_when_the_stream_ends() {
        let text = "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"get_time\",\"arguments\":{}}}]},\"done\":false}\n";
        let mut watch = StreamWatch::new(Format::Ollama, Framing::Ndjson);
        watch.push(text.as_bytes()).expect("push");
        assert!(watch.calls().is_empty());
        assert_eq!(watch.checked(), 0);
        let response = watch.finish().expect("finish");
        assert_eq!(response.calls[0].name, "get_time");
    }

    #[test]
    fn a_crlf_blank_line_ends_an_event_and_text_alone_is_checked_at_once() {
        let text = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\r\n\r\n";
        let mut watch = StreamWatch::new(Format::OpenaiChat, Framing::Sse);
        watch.push(text.as_bytes()).expect("push");
        assert_eq!(watch.checked(), text.len());
    }

    #[test]
    fn an_event_that_is_not_json_is_an_error_not_a_panic() {
        let mut watch = StreamWatch::new(Format::OpenaiChat, Framing::Sse);
        assert!(watch.push(b"data: {nope\n\n").is_err());
        let mut watch = StreamWatch::new(Format::OpenaiChat, Framing::Sse);
        assert!(watch.push(b"data: \xff\xfe\n\n").is_err());
    }
}
