//! What the loop guard counts, per turn and in total, so an agent can report how often its model
//! reached for tools that do not exist (and which ones) without parsing logs.

use std::collections::HashMap;

/// Counters for one turn, or for every turn so far.
///
/// Unknown names are kept distinct, with a count each, in the order they first appeared: a single
/// name repeated is a plumbing bug to fix, a long tail of one-offs is model behaviour.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Counts {
    steps: usize,
    calls: usize,
    unknown_calls: usize,
    invalid_arguments: usize,
    duplicate_ids: usize,
    unknown_names: Vec<(String, usize)>,
    /// Position of each name in `unknown_names`, so counting stays linear in the calls.
    #[cfg_attr(feature = "serde", serde(skip))]
    index: HashMap<String, usize>,
}

impl Counts {
    /// Model responses handled.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Tool calls received, known or not.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// Calls that named a tool the catalog does not define.
    pub fn unknown_calls(&self) -> usize {
        self.unknown_calls
    }

    /// Calls to a defined tool whose arguments were not valid JSON (answered with an error, never
    /// executed).
    pub fn invalid_arguments(&self) -> usize {
        self.invalid_arguments
    }

    /// Calls whose id an earlier call in the same response already used. Each such call is
    /// still answered, in its place, with the id it carried.
    pub fn duplicate_ids(&self) -> usize {
        self.duplicate_ids
    }

    /// The distinct unknown names, in the order they first appeared, each with how often it was
    /// called.
    pub fn unknown_names(&self) -> impl ExactSizeIterator<Item = (&str, usize)> {
        self.unknown_names.iter().map(|(n, c)| (n.as_str(), *c))
    }

    /// How many distinct unknown names were called.
    pub fn distinct_unknown_names(&self) -> usize {
        self.unknown_names.len()
    }

    pub(super) fn record_unknown(&mut self, name: &str) {
        self.unknown_calls += 1;
        match self.index.get(name) {
            Some(&at) => self.unknown_names[at].1 += 1,
            None => {
                self.index.insert(name.to_owned(), self.unknown_names.len());
                self.unknown_names.push((name.to_owned(), 1));
            }
        }
    }

    pub(super) fn names(&self) -> Vec<String> {
        self.unknown_names.iter().map(|(n, _)| n.clone()).collect()
    }
}

/// The loop's counters: the current (or last finished) turn, and all turns together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LoopMetrics {
    turns: usize,
    turn: Counts,
    total: Counts,
}

impl LoopMetrics {
    /// Turns started.
    pub fn turns(&self) -> usize {
        self.turns
    }

    /// The turn in progress, or the last one once it has ended (until the next one starts).
    pub fn turn(&self) -> &Counts {
        &self.turn
    }

    /// Every turn so far, the current one included.
    pub fn total(&self) -> &Counts {
        &self.total
    }

    pub(super) fn begin_turn(&mut self) {
        self.turns += 1;
        self.turn = Counts::default();
    }

    pub(super) fn step(&mut self, calls: usize) {
        for counts in [&mut self.turn, &mut self.total] {
            counts.steps += 1;
            counts.calls += calls;
        }
    }

    pub(super) fn unknown(&mut self, name: &str) {
        self.turn.record_unknown(name);
        self.total.record_unknown(name);
    }

    pub(super) fn invalid_arguments(&mut self) {
        self.turn.invalid_arguments += 1;
        self.total.invalid_arguments += 1;
    }

    pub(super) fn duplicate_id(&mut self) {
        self.turn.duplicate_ids += 1;
        self.total.duplicate_ids += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::LoopMetrics;

    #[test]
    fn a_new_turn_resets_the_turn_but_not_the_total() {
        let mut metrics = LoopMetrics::default();
        metrics.begin_turn();
        metrics.step(3);
        metrics.unknown("b");
        metrics.unknown("a");
        metrics.unknown("b");
        let turn: Vec<_> = metrics.turn().unknown_names().collect();
        assert_eq!(turn, [("b", 2), ("a", 1)]);
        assert_eq!(metrics.turn().unknown_calls(), 3);

        metrics.begin_turn();
        metrics.step(1);
        metrics.unknown("c");
        assert_eq!(metrics.turns(), 2);
        assert_eq!(metrics.turn().steps(), 1);
        assert_eq!(metrics.turn().distinct_unknown_names(), 1);
        assert_eq!(metrics.total().steps(), 2);
        assert_eq!(metrics.total().calls(), 4);
        let total: Vec<_> = metrics.total().unknown_names().collect();
        assert_eq!(total, [("b", 2), ("a", 1), ("c", 1)]);
    }
}
