//! Suggestions: which defined name an unknown name was likely meant to be.
//!
//! Three kinds of closeness, tried in this order, each ranked above the next:
//! 1. the same tool behind a namespace prefix (`github__create_issue` → `create_issue`, and the
//!    reverse), see [`crate::namespace`];
//! 2. the same words spelt differently (`getBalance`, `get-balance`, `GET_BALANCE`), or a small
//!    edit away (`get_invoices` → `get_invoice`);
//! 3. the same subject with another verb (`lookup_customer` → `find_customer`): the names share
//!    at least a third of their non-verb words; offered only when nothing closer is.
//!
//! Nothing is suggested when nothing is close: a wrong suggestion is worse than none.

use crate::Catalog;

/// How many suggestions at most.
const MAX_SUGGESTIONS: usize = 3;

/// Verbs that say little about *which* tool is meant; names that share only these are not close.
const GENERIC_WORDS: &[&str] = &[
    "get", "set", "list", "find", "lookup", "look", "search", "query", "fetch", "read", "write",
    "create", "add", "new", "make", "update", "edit", "modify", "patch", "delete", "remove", "del",
    "do", "run", "call", "invoke", "execute", "exec", "check", "show", "view", "describe", "by",
    "for", "to", "of", "the", "a", "all", "info", "details", "data", "tool", "api", "v1", "v2",
];

/// The defined names closest to `name`, closest first, at most three; empty when nothing is
/// close.
///
/// ```
/// use toolcall_score::{suggest, Catalog, Tool};
///
/// let catalog = Catalog::new([Tool::new("get_invoice", ""), Tool::new("create_issue", "")]);
/// assert_eq!(suggest("get_invoices", &catalog), ["get_invoice"]);
/// assert_eq!(suggest("github__create_issue", &catalog), ["create_issue"]);
/// assert!(suggest("send_fax", &catalog).is_empty());
/// ```
pub fn suggest(name: &str, catalog: &Catalog) -> Vec<String> {
    suggest_among(name, &prepare(catalog))
}

/// A defined name with the forms every comparison needs, computed once: a prepared
/// [`crate::Scorer`] keeps them for all the unknown names of all the responses it scores.
#[derive(Debug)]
pub(crate) struct Defined<'c> {
    name: &'c str,
    base: &'c str,
    words: Words,
}

impl<'c> Defined<'c> {
    fn of(name: &'c str) -> Defined<'c> {
        let base = crate::namespace::base(name);
        Defined {
            name,
            base,
            words: Words::of(base),
        }
    }

    /// The name as defined.
    pub(crate) fn name(&self) -> &'c str {
        self.name
    }

    /// Its [`crate::namespace::base`].
    pub(crate) fn base(&self) -> &'c str {
        self.base
    }
}

/// The catalog's names, prepared for [`suggest_among`], in definition order.
pub(crate) fn prepare(catalog: &Catalog) -> Vec<Defined<'_>> {
    catalog.names().map(Defined::of).collect()
}

/// [`suggest`] over names already prepared.
pub(crate) fn suggest_among(name: &str, defined: &[Defined<'_>]) -> Vec<String> {
    let base = crate::namespace::base(name);
    let wanted = Words::of(base);
    let mut ranked: Vec<(u8, usize, &str)> = defined
        .iter()
        .filter(|d| d.name != name)
        .filter_map(|d| closeness(name, base, &wanted, d).map(|(r, n)| (r, n, d.name)))
        .collect();
    ranked.sort();
    // A shared subject is weak evidence: offer it only when nothing closer exists.
    if ranked.first().is_some_and(|(rank, _, _)| *rank < 2) {
        ranked.retain(|(rank, _, _)| *rank < 2);
    }
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, _, defined)| defined.to_owned())
        .collect()
}

/// `(rank, distance)` when `defined` is close to `name` (whose base is `base`); lower is closer.
fn closeness(name: &str, base: &str, wanted: &Words, defined: &Defined<'_>) -> Option<(u8, usize)> {
    if crate::namespace::relates_bases(name, base, defined.name, defined.base) {
        return Some((0, 0));
    }
    // Spelling is compared without namespaces: a shared long prefix would otherwise make any
    // two tools of one server look a few edits apart.
    let words = &defined.words;
    if words.joined == wanted.joined {
        return Some((1, 0));
    }
    // One edit in a short name, about one in four in a longer one. The distance is at least
    // the difference in length, so it is not computed when that alone is too far.
    let limit = (wanted.chars.min(words.chars) / 4).max(1);
    if wanted.chars.abs_diff(words.chars) <= limit {
        if let Some(distance) = edit_distance_within(&wanted.joined, &words.joined, limit) {
            return Some((1, distance));
        }
    }
    let shared = wanted
        .subject
        .iter()
        .filter(|w| words.subject.contains(w))
        .count();
    let union = wanted.subject.len() + words.subject.len() - shared;
    if shared > 0 && shared * 3 >= union {
        // `shared` counts the unknown name's repeats, so it can exceed the union: none unshared.
        return Some((2, union.saturating_sub(shared)));
    }
    None
}

/// A name split into lower-case words (on `_ - . / :` and camelCase), with plurals folded.
#[derive(Debug)]
struct Words {
    /// All words joined by `_`: the spelling-independent form of the name.
    joined: String,
    /// `joined`'s length in characters.
    chars: usize,
    /// The words that are not generic verbs: what the tool is about.
    subject: Vec<String>,
}

impl Words {
    fn of(name: &str) -> Words {
        let words = split_words(name);
        let joined = words.join("_");
        let subject = words
            .iter()
            .filter(|w| !GENERIC_WORDS.contains(&w.as_str()))
            .map(|w| singular(w).to_owned())
            .collect();
        Words {
            chars: joined.chars().count(),
            joined,
            subject,
        }
    }
}

/// Splits an identifier into lower-case words.
pub(crate) fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn singular(word: &str) -> &str {
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// Levenshtein distance in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    edit_distance_within(a, b, usize::MAX).unwrap_or(usize::MAX)
}

/// The Levenshtein distance in characters, when it is at most `limit`.
fn edit_distance_within(a: &str, b: &str, limit: usize) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        levenshtein(a.as_bytes(), b.as_bytes(), limit)
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        levenshtein(&a, &b, limit)
    }
}

fn levenshtein<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Option<usize> {
    // Tool names are short: one row on the stack, on the heap only for long ones.
    let mut stack = [0usize; 64];
    let mut heap = Vec::new();
    let row = if b.len() < stack.len() {
        &mut stack[..=b.len()]
    } else {
        heap.resize(b.len() + 1, 0);
        &mut heap[..]
    };
    for (j, cell) in row.iter_mut().enumerate() {
        *cell = j;
    }
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        let mut best = row[0];
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
            best = best.min(row[j + 1]);
        }
        // A row's smallest entry never shrinks in the rows below it.
        if best > limit {
            return None;
        }
    }
    Some(row[b.len()]).filter(|&distance| distance <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tool;

    fn catalog(names: &[&str]) -> Catalog {
        Catalog::new(names.iter().map(|n| Tool::new(n, "")))
    }

    #[test]
    fn suggests_near_spellings() {
        let tools = catalog(&["get_invoice", "get_balance", "refund_payment"]);
        assert_eq!(suggest("get_invoices", &tools), ["get_invoice"]);
        assert_eq!(suggest("getBalance", &tools), ["get_balance"]);
        assert_eq!(suggest("GET-BALANCE", &tools), ["get_balance"]);
        assert_eq!(suggest("refund_paymnet", &tools), ["refund_payment"]);
    }

    #[test]
    fn suggests_across_namespaces_first() {
        let tools = catalog(&[
            "create_issue",
            "create_comment",
            "github__close_issue",
            "list_issues",
        ]);
        assert_eq!(suggest("github__create_issue", &tools), ["create_issue"]);
        assert_eq!(
            suggest("mcp__github__create_issue", &tools)[0],
            "create_issue"
        );
        assert_eq!(suggest("close_issue", &tools)[0], "github__close_issue");
    }

    #[test]
    fn suggests_the_same_subject_with_another_verb() {
        let tools = catalog(&["find_customer", "get_balance"]);
        assert_eq!(suggest("lookup_customer", &tools), ["find_customer"]);
        assert_eq!(suggest("fetch_customers", &tools), ["find_customer"]);
        let tools = catalog(&["escalate_ticket", "close_ticket"]);
        assert_eq!(suggest("escalate_to_human", &tools), ["escalate_ticket"]);
    }

    #[test]
    fn a_name_that_repeats_its_subject_still_suggests() {
        let tools = catalog(&["find_user", "get_balance"]);
        assert_eq!(suggest("get_user_user_user", &tools), ["find_user"]);
    }

    #[test]
    fn suggests_nothing_when_nothing_is_close() {
        let tools = catalog(&["get_balance", "get_invoice"]);
        assert!(suggest("send_fax", &tools).is_empty());
        assert!(suggest("get_weather", &tools).is_empty());
        assert!(suggest("x", &tools).is_empty());
        assert!(suggest("anything", &catalog(&[])).is_empty());
    }

    #[test]
    fn splits_identifiers_into_words() {
        assert_eq!(split_words("getHTTPStatus_v2"), ["get", "httpstatus", "v2"]);
        assert_eq!(
            split_words("mcp__github__create_issue"),
            ["mcp", "github", "create", "issue"]
        );
        assert_eq!(split_words("server.tool/name"), ["server", "tool", "name"]);
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("café", "cafe"), 1);
        let long = "x".repeat(100);
        assert_eq!(edit_distance(&long, &format!("{long}yz")), 2);
        assert_eq!(edit_distance(&format!("{long}yz"), &long), 2);
        for (a, b) in [
            ("kitten", "sitting"),
            ("get_invoice", "list_invoices"),
            ("", "ab"),
        ] {
            let distance = edit_distance(a, b);
            for limit in 0..6 {
                let within = edit_distance_within(a, b, limit);
                assert_eq!(
                    within,
                    (distance <= limit).then_some(distance),
                    "{a} {b} {limit}"
                );
            }
        }
    }
}
