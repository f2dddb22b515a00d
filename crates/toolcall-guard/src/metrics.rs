//! `/metrics`: the guard's counters and the time it added, in the Prometheus text format
//! (`prometheus-client`, the Prometheus project's own crate). An unknown name is a label only
//! for the first [`NAME_LABELS`] distinct names: a model's inventions are unbounded, a
//! scrape's series must not be.

use std::collections::HashSet;
use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// How many distinct unknown names get a label of their own; the rest count as `other`.
pub(crate) const NAME_LABELS: usize = 500;

type Labels = Vec<(&'static str, String)>;

/// The guard's metrics.
pub(crate) struct Metrics {
    registry: Registry,
    responses: Family<Labels, Counter>,
    calls: Family<Labels, Counter>,
    unknown: Family<Labels, Counter>,
    actions: Family<Labels, Counter>,
    added: Histogram,
    names: Mutex<HashSet<String>>,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("toolcall_guard");
        let responses = Family::<Labels, Counter>::default();
        let calls = Family::<Labels, Counter>::default();
        let unknown = Family::<Labels, Counter>::default();
        let actions = Family::<Labels, Counter>::default();
        // 10 µs to about 5 s.
        let added = Histogram::new(exponential_buckets(0.000_01, 2.0, 20));
        registry.register(
            "responses",
            "Responses seen, by route and verdict (pass, findings, unknown, unread)",
            responses.clone(),
        );
        registry.register("calls", "Tool calls seen, by route", calls.clone());
        registry.register(
            "unknown_calls",
            "Calls naming a tool the request did not define, by name and cause",
            unknown.clone(),
        );
        registry.register(
            "actions",
            "What the guard did about an exchange (block, fail_closed, pass_unread)",
            actions.clone(),
        );
        registry.register(
            "added_seconds",
            "Time the guard's own work added to an exchange",
            added.clone(),
        );
        Metrics {
            registry,
            responses,
            calls,
            unknown,
            actions,
            added,
            names: Mutex::new(HashSet::new()),
        }
    }

    pub(crate) fn response(&self, route: &str, verdict: &str) {
        self.responses
            .get_or_create(&vec![
                ("route", route.to_owned()),
                ("verdict", verdict.to_owned()),
            ])
            .inc();
    }

    pub(crate) fn calls(&self, route: &str, n: usize) {
        self.calls
            .get_or_create(&vec![("route", route.to_owned())])
            .inc_by(n as u64);
    }

    pub(crate) fn unknown(&self, route: &str, name: &str, cause: &str) {
        let name = match self.names.lock() {
            Ok(mut names) if names.contains(name) || names.len() < NAME_LABELS => {
                names.insert(name.to_owned());
                name.to_owned()
            }
            _ => "other".to_owned(),
        };
        self.unknown
            .get_or_create(&vec![
                ("route", route.to_owned()),
                ("name", name),
                ("cause", cause.to_owned()),
            ])
            .inc();
    }

    pub(crate) fn action(&self, action: &str) {
        self.actions
            .get_or_create(&vec![("action", action.to_owned())])
            .inc();
    }

    pub(crate) fn added(&self, seconds: f64) {
        self.added.observe(seconds);
    }

    /// The text exposition.
    pub(crate) fn render(&self) -> String {
        let mut text = String::new();
        // Writing into a String does not fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}
