//! A [`Transport`] for tests: fixed replies in, every request recorded, no network.

use std::collections::VecDeque;

use super::guard::Reply;
use super::runner::{Outgoing, Transport};

/// Returns a fixed sequence of replies, one per request, and records every request it was sent,
/// so a test can assert on exactly what the loop sent back.
///
/// Running out of script is an error ([`ScriptExhausted`]), not a panic.
#[derive(Clone, Debug, Default)]
pub struct ScriptedTransport {
    script: VecDeque<Reply>,
    scripted: usize,
    sent: Vec<Outgoing>,
}

impl ScriptedTransport {
    /// A transport that answers its requests with `replies`, in order: provider JSON bodies
    /// (`serde_json::Value`, format told from the shape), [`Reply::json`] values, or parsed
    /// [`crate::Response`]s.
    pub fn new<R: Into<Reply>>(replies: impl IntoIterator<Item = R>) -> ScriptedTransport {
        let script: VecDeque<Reply> = replies.into_iter().map(Into::into).collect();
        ScriptedTransport {
            scripted: script.len(),
            script,
            sent: Vec::new(),
        }
    }

    /// Adds a reply at the end of the script.
    pub fn push(&mut self, reply: impl Into<Reply>) {
        self.script.push_back(reply.into());
        self.scripted += 1;
    }

    /// Every request sent so far, in order.
    pub fn sent(&self) -> &[Outgoing] {
        &self.sent
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.script.len()
    }
}

impl Transport for ScriptedTransport {
    type Error = ScriptExhausted;

    fn send(&mut self, outgoing: &Outgoing) -> Result<Reply, ScriptExhausted> {
        self.sent.push(outgoing.clone());
        self.script.pop_front().ok_or(ScriptExhausted {
            request: self.sent.len(),
            scripted: self.scripted,
        })
    }
}

/// A [`ScriptedTransport`] was sent more requests than it had replies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the script ran out: request #{request} has no reply ({scripted} scripted); add a reply, or check why the loop did not end sooner")]
pub struct ScriptExhausted {
    /// The 1-based number of the request that found no reply.
    pub request: usize,
    /// How many replies were scripted.
    pub scripted: usize,
}
