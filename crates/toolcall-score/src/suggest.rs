//! Suggestions: which defined name an unknown name was likely meant to be.
//!
//! The kinds of closeness are what renames do, measured on a set of real renames from the git
//! history of agent and MCP server repositories (`tests/data/renames.json`, whose test reports
//! top-1 and top-3 accuracy). Tried in this order, each ranked above the next:
//! 1. the same tool behind a namespace prefix (`github__create_issue` → `create_issue`, and the
//!    reverse), see [`crate::namespace`];
//! 2. the same words spelt differently (`getBalance`, `get-balance`, `GET_BALANCE`), or a typo
//!    away (`get_invoices` → `get_invoice`);
//! 3. the same words with one added or dropped (`read_file` → `read_text_file`, `Read`),
//!    reordered (`browser_close_tab` → `browser_tab_close`), or a verb swapped for one of its
//!    kind (`get_issue` → `issue_read`);
//! 4. a spelling further than a typo, within about one edit in four;
//! 5. the same subject with another verb (`lookup_customer` → `find_customer`): the names share
//!    at least a third of their non-verb words; offered only when nothing closer is.
//!
//! Nothing is suggested when nothing is close: a wrong suggestion is worse than none.
//!
//! The model picks the unknown names, so their number and length are the model's: the search is
//! bounded so that neither makes scoring slow (issue 17: a 10,000-character name, or 10,000
//! invented names against 1,000 tools, took seconds when every defined name was compared in
//! full). Namespaces, equal words and shared subject words are looked up in tables; near
//! spellings are looked for only among names of a compatible length, after two character-bag
//! bounds, by a bit-parallel distance that stops past its budget, and never for names longer
//! than [`MAX_EDIT_CHARS`]. Below that length the suggestions are the ones an exhaustive
//! comparison gives (a test holds the two equal).

use std::collections::BTreeMap;

use crate::Catalog;

/// How many suggestions at most.
const MAX_SUGGESTIONS: usize = 3;

/// The kinds of closeness, closest first: a suggestion's rank, then its distance within it.
const NAMESPACE: u8 = 0;
/// The same words spelt differently, or a typo away ([`TYPO`] edits at most).
const SPELLING: u8 = 1;
/// Words added, dropped, reordered or a verb swapped for another ([`word_edit`]).
const WORDS: u8 = 2;
/// More than a typo away, within about one edit in four.
const FAR_SPELLING: u8 = 3;
/// The same subject with another verb: offered only when nothing closer is.
const SUBJECT: u8 = 4;

/// The most edits a near spelling takes to rank as a typo (`refund_paymnet`), above a rename of
/// words: past it, `get_pull_request_comments` is nearer `get_pull_request_reviews` by
/// characters, and the rename was to `get_pull_request_review_comments`.
const TYPO: usize = 2;

/// Names of more words than this are compared by their words only through their subject
/// (see [`word_edit`]): no real tool name comes near it.
const MAX_WORDS: usize = 12;

/// Verbs renames swap for one another (`get_issue` → `issue_read`, `update_issue` →
/// `issue_write`): one of a group stands for another at less cost than an unrelated word, and
/// `list` for one of the first group (`get_notifications` → `list_notifications`) at a little
/// more.
const VERB_GROUPS: &[&[&str]] = &[
    &[
        "get", "read", "fetch", "retrieve", "view", "show", "describe", "load",
    ],
    &["create", "add", "new", "make", "insert", "write", "post"],
    &[
        "update", "edit", "modify", "patch", "set", "write", "change", "replace",
    ],
    &["delete", "remove", "del", "rm", "destroy"],
    &["search", "find", "query", "lookup", "grep"],
    &[
        "run", "execute", "exec", "invoke", "trigger", "start", "launch",
    ],
];

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

/// Names longer than this many characters (in their joined word form) are compared by their
/// words and namespaces only, never by edit distance: a near spelling of a name that long says
/// little, and one distance costs up to a quarter of its length squared. OpenAI, Anthropic and
/// Gemini cap tool names at 64 characters, so every real name is far below it.
const MAX_EDIT_CHARS: usize = 256;

/// A defined name with the forms every comparison needs, computed once: a prepared
/// [`crate::Scorer`] keeps them for all the unknown names of all the responses it scores.
#[derive(Debug)]
pub(crate) struct Defined<'c> {
    name: &'c str,
    base: &'c str,
    /// The words joined by `_` (see [`Words`]).
    joined: String,
    /// How many subject words, repeats included.
    subject_len: usize,
    /// Every word, plurals folded, in order (see [`Words::all`]); none past [`MAX_WORDS`].
    words: Vec<String>,
}

/// A defined name short enough for edit distance, with what the cheap filters read.
#[derive(Debug)]
struct Spelling {
    /// Its index in [`Prepared::defined`].
    index: u32,
    /// Its joined form's length in characters.
    chars: usize,
    /// Its joined form's characters by bucket ([`Bag`]).
    bag: Bag,
    /// Its joined form's adjacent pairs of characters by bucket ([`PairBag`]).
    pairs: PairBag,
}

/// The catalog's names prepared for [`suggest_among`]: each name's forms, and tables that find
/// the names related to an unknown one without comparing it with every name.
///
/// One comparison per defined name made did-you-mean cost (unknown names × defined names ×
/// length²): a response with 10,000 invented names against 1,000 tools took seconds. Now
/// namespaces and equal words are binary searches over sorted tables of borrowed names, shared
/// subject words one map look-up per word; only near spellings walk the names, and only those
/// of a compatible length, with character bags close enough, and at most [`MAX_EDIT_CHARS`]
/// long, with an edit distance that stops at its budget.
#[derive(Debug)]
pub(crate) struct Prepared<'c> {
    /// In definition order.
    defined: Vec<Defined<'c>>,
    /// `(base, index)`, sorted.
    by_base: Vec<(&'c str, u32)>,
    /// `(base without its one-word weak prefix, index)`, sorted: `github_create_issue` under
    /// `create_issue` (see [`weak_rest`]).
    by_weak_rest: Vec<(&'c str, u32)>,
    /// Indexes sorted by joined form.
    by_joined: Vec<u32>,
    /// The indexes of the names with each subject word, ascending, each once.
    /// Sorted, so the words a word begins can be found by range ([`stems`]).
    by_subject: BTreeMap<String, Vec<u32>>,
    /// The names short enough for edit distance, by length.
    spellings: Vec<Spelling>,
    /// The indexes of the names of at most [`MAX_WORDS`] words with each word (plurals folded),
    /// ascending, each once: where [`word_edits`] looks for a one-word unknown name.
    by_word: BTreeMap<String, Vec<u32>>,
    /// `(word, index)` of the one-word names (`Read`), sorted.
    by_single_word: Vec<(String, u32)>,
}

impl Prepared<'_> {
    /// The defined names at `indexes`.
    pub(crate) fn names(&self, indexes: &[u32]) -> Vec<String> {
        indexes
            .iter()
            .filter_map(|&i| self.defined.get(i as usize))
            .map(|d| d.name.to_owned())
            .collect()
    }

    /// Whether some defined name is `name` with a namespace prefix added, removed or replaced
    /// ([`crate::namespace::relates_bases`]).
    pub(crate) fn relates(&self, name: &str) -> bool {
        let base = crate::namespace::base(name);
        let mut related = false;
        self.for_each_related(name, base, |_| related = true);
        related
    }

    /// Calls `found` with every index whose name [`crate::namespace::relates_bases`] to `name`.
    /// A related name shares the base, or one of the two is the other behind a one-word weak
    /// prefix; the tables find exactly those, and the definition itself decides.
    fn for_each_related(&self, name: &str, base: &str, mut found: impl FnMut(u32)) {
        let rest = weak_rest(base);
        let candidates = equal_range(&self.by_base, base)
            .iter()
            .chain(rest.map_or(&[][..], |rest| equal_range(&self.by_base, rest)))
            .chain(equal_range(&self.by_weak_rest, base));
        for &(_, index) in candidates {
            let d = &self.defined[index as usize];
            if crate::namespace::relates_bases(name, base, d.name, d.base) {
                found(index);
            }
        }
    }
}

/// The entries of a table sorted by key whose key is `key`.
fn equal_range<'t, K: AsRef<str>>(table: &'t [(K, u32)], key: &str) -> &'t [(K, u32)] {
    let start = table.partition_point(|(k, _)| k.as_ref() < key);
    let len = table[start..].partition_point(|(k, _)| k.as_ref() == key);
    &table[start..start + len]
}

/// What is left of `base` after a one-word prefix and a single `_` or `-`, when it has one: the
/// only `short` that [`crate::namespace`]'s weak prefix can pair `base` with (the word is ASCII
/// alphanumeric, so the separator is the first character that is not).
fn weak_rest(base: &str) -> Option<&str> {
    let at = base.bytes().position(|b| !b.is_ascii_alphanumeric())?;
    (at > 0 && matches!(base.as_bytes()[at], b'_' | b'-')).then(|| &base[at + 1..])
}

/// The catalog's names, prepared for [`suggest_among`].
pub(crate) fn prepare(catalog: &Catalog) -> Prepared<'_> {
    let mut prepared = Prepared {
        defined: Vec::new(),
        by_base: Vec::new(),
        by_weak_rest: Vec::new(),
        by_joined: Vec::new(),
        by_subject: BTreeMap::new(),
        spellings: Vec::new(),
        by_word: BTreeMap::new(),
        by_single_word: Vec::new(),
    };
    // Indexes are u32 to keep the tables small; a catalog of four billion tools is not read.
    for (name, index) in catalog.names().zip(0u32..) {
        let base = crate::namespace::base(name);
        let words = Words::of(base);
        prepared.by_base.push((base, index));
        if let Some(rest) = weak_rest(base) {
            prepared.by_weak_rest.push((rest, index));
        }
        prepared.by_joined.push(index);
        let subject_len = words.subject.len();
        // Each word once per name: a long name repeats its words.
        let mut subject = words.subject;
        subject.sort_unstable();
        subject.dedup();
        for word in subject {
            prepared.by_subject.entry(word).or_default().push(index);
        }
        if words.chars <= MAX_EDIT_CHARS {
            prepared.spellings.push(Spelling {
                index,
                chars: words.chars,
                bag: Bag::of(&words.joined),
                pairs: PairBag::of(&words.joined),
            });
        }
        let all = if words.all.len() <= MAX_WORDS {
            let mut distinct = words.all.clone();
            distinct.sort_unstable();
            distinct.dedup();
            for word in distinct {
                prepared.by_word.entry(word).or_default().push(index);
            }
            if let [word] = words.all.as_slice() {
                prepared.by_single_word.push((word.clone(), index));
            }
            words.all
        } else {
            Vec::new()
        };
        prepared.defined.push(Defined {
            name,
            base,
            subject_len,
            joined: words.joined,
            words: all,
        });
    }
    prepared.by_base.sort_unstable();
    prepared.by_weak_rest.sort_unstable();
    prepared.by_single_word.sort_unstable();
    let defined = &prepared.defined;
    prepared
        .by_joined
        .sort_unstable_by(|&a, &b| defined[a as usize].joined.cmp(&defined[b as usize].joined));
    prepared.spellings.sort_by_key(|s| s.chars);
    prepared
}

/// [`suggest`] over names already prepared.
pub(crate) fn suggest_among(name: &str, prepared: &Prepared<'_>) -> Vec<String> {
    prepared.names(&suggestion_indexes(name, prepared))
}

/// [`suggest_among`] as indexes into the catalog's names: what a [`crate::Scorer`] caches.
pub(crate) fn suggestion_indexes(name: &str, prepared: &Prepared<'_>) -> Vec<u32> {
    let base = crate::namespace::base(name);
    let wanted = Words::of(base);
    // `(rank, distance, index)` from every kind of closeness that finds a name; a name's own
    // closeness is the least of its entries, as if its kinds were tried in order.
    let mut found: Vec<(u8, usize, u32)> = Vec::new();
    prepared.for_each_related(name, base, |index| found.push((NAMESPACE, 0, index)));
    let defined = &prepared.defined;
    let by_joined = &prepared.by_joined;
    let start = by_joined.partition_point(|&i| defined[i as usize].joined < wanted.joined);
    let equal =
        by_joined[start..].partition_point(|&i| defined[i as usize].joined == wanted.joined);
    found.extend(
        by_joined[start..start + equal]
            .iter()
            .map(|&i| (SPELLING, 0, i)),
    );
    near_spellings(&wanted, prepared, &mut found);
    let sharing = shared_subjects(&wanted, prepared, &mut found);
    word_edits(&wanted, prepared, sharing, &mut found);

    found.sort_unstable_by_key(|&(rank, distance, index)| (index, rank, distance));
    found.dedup_by_key(|&mut (_, _, index)| index);
    let mut ranked: Vec<(u8, usize, &str, u32)> = found
        .into_iter()
        .map(|(rank, distance, index)| (rank, distance, defined[index as usize].name, index))
        .filter(|&(_, _, defined, _)| defined != name)
        .collect();
    // By name after distance, as always; the index only orders equal names, which print alike.
    ranked.sort_unstable();
    // A shared subject is weak evidence: offer it only when nothing closer exists.
    if ranked.first().is_some_and(|(rank, ..)| *rank < SUBJECT) {
        ranked.retain(|(rank, ..)| *rank < SUBJECT);
    }
    ranked
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(.., index)| index)
        .collect()
}

/// Adds every defined name a small edit away from `wanted` (one edit in a short name, about one
/// in four in a longer one): as a [`SPELLING`] up to [`TYPO`] edits, a [`FAR_SPELLING`] past it.
fn near_spellings(wanted: &Words, prepared: &Prepared<'_>, found: &mut Vec<(u8, usize, u32)>) {
    let n = wanted.chars;
    if n > MAX_EDIT_CHARS {
        return;
    }
    // The distance is at least the difference in length, so only names within the budget of
    // `n` in length can be near; that is a range of the spellings sorted by length.
    let widest = (n / 4).max(1);
    let spellings = &prepared.spellings;
    let start = spellings.partition_point(|s| s.chars < n.saturating_sub(widest));
    let end = spellings.partition_point(|s| s.chars <= n + widest);
    let bag = Bag::of(&wanted.joined);
    let pairs = PairBag::of(&wanted.joined);
    let pattern = Pattern::of(&wanted.joined);
    for spelling in &spellings[start..end] {
        count(|w| w.pairs += 1);
        let limit = (n.min(spelling.chars) / 4).max(1);
        if n.abs_diff(spelling.chars) > limit
            || bag.distance(&spelling.bag) > limit
            || pairs.distance(&spelling.pairs) > limit
        {
            continue;
        }
        let joined = &prepared.defined[spelling.index as usize].joined;
        let distance = match &pattern {
            Some(pattern) => pattern.distance_within(joined, spelling.chars, limit),
            None => edit_distance_within(&wanted.joined, joined, limit),
        };
        if let Some(distance) = distance {
            let rank = if distance <= TYPO {
                SPELLING
            } else {
                FAR_SPELLING
            };
            found.push((rank, distance, spelling.index));
        }
    }
}

/// Adds `(WORDS, cost)` for every defined name whose words are `wanted`'s with the edits
/// renames make ([`word_edit`]). Such a name keeps a subject word of `wanted`, so it is among
/// `sharing` (the names [`shared_subjects`] found through the subject table), unless one of the
/// two is a single word: those are found through the tables of one-word names and of words.
fn word_edits(
    wanted: &Words,
    prepared: &Prepared<'_>,
    mut candidates: Vec<u32>,
    found: &mut Vec<(u8, usize, u32)>,
) {
    if wanted.all.is_empty() || wanted.all.len() > MAX_WORDS {
        return;
    }
    for word in &wanted.all {
        for &(_, index) in equal_range(&prepared.by_single_word, word) {
            count(|w| w.pairs += 1);
            candidates.push(index);
        }
    }
    if let [word] = wanted.all.as_slice() {
        for &index in prepared.by_word.get(word).into_iter().flatten() {
            count(|w| w.pairs += 1);
            candidates.push(index);
        }
    }
    candidates.sort_unstable();
    candidates.dedup();
    for index in candidates {
        if let Some(cost) = word_edit(&wanted.all, &prepared.defined[index as usize].words) {
            found.push((WORDS, cost, index));
        }
    }
}

/// The cost of turning the words of one name (`wanted`) into another's (`defined`) by the edits
/// renames make, when they are such a rename: words added or dropped (`read_file` ↔
/// `read_text_file`, `Read`), reordered (`browser_close_tab` → `browser_tab_close`), a verb
/// swapped for one of its group ([`VERB_GROUPS`]: `get_issue` → `issue_read`). Case, separators
/// and plurals are already folded. The names keep a word in common that is not generic (or one
/// of them is that one word: `Read`), and no more words are added and dropped than are kept.
///
/// The cost, in quarter-words: an added or dropped word 4 (3 if generic, as `details` or `to`),
/// a verb of the same group 2 (`get` for `list` 3), words both added and dropped 2 more (a
/// pure addition or removal is what renames mostly do), a new order 1. Then, of equal costs,
/// fewer words added and dropped, then more words kept.
fn word_edit(wanted: &[String], defined: &[String]) -> Option<usize> {
    if wanted.is_empty()
        || defined.is_empty()
        || defined.len() > MAX_WORDS
        || wanted.len() > MAX_WORDS
    {
        return None;
    }
    let generic = is_generic;
    // The words both have, as many times as both have them.
    let mut taken = [false; MAX_WORDS];
    let mut kept_in_wanted = [false; MAX_WORDS];
    let mut kept = 0;
    let mut specific = false;
    for (i, word) in wanted.iter().enumerate() {
        if let Some(j) = (0..defined.len()).find(|&j| !taken[j] && defined[j] == *word) {
            taken[j] = true;
            kept_in_wanted[i] = true;
            kept += 1;
            specific |= !generic(word);
        }
    }
    if kept == 0 || !(specific || wanted.len() == 1 || defined.len() == 1) {
        return None;
    }
    // Verbs swapped for one of their kind, among the words left.
    let mut swaps = 0;
    for (i, word) in wanted.iter().enumerate() {
        if kept_in_wanted[i] {
            continue;
        }
        let swap = (0..defined.len())
            .filter(|&j| !taken[j])
            .filter_map(|j| verb_swap(word, &defined[j]).map(|cost| (cost, j)))
            .min();
        if let Some((cost, j)) = swap {
            taken[j] = true;
            kept_in_wanted[i] = true;
            swaps += cost;
        }
    }
    let weight = |word: &String| if generic(word) { 3 } else { 4 };
    let dropped: Vec<&String> = (0..wanted.len())
        .filter(|&i| !kept_in_wanted[i])
        .map(|i| &wanted[i])
        .collect();
    let added: Vec<&String> = (0..defined.len())
        .filter(|&j| !taken[j])
        .map(|j| &defined[j])
        .collect();
    let changed = dropped.len() + added.len();
    if changed > kept {
        return None;
    }
    let mut cost = swaps
        + dropped
            .iter()
            .chain(&added)
            .map(|w| weight(w))
            .sum::<usize>();
    if !dropped.is_empty() && !added.is_empty() {
        cost += 2;
    }
    if longest_common_run(wanted, defined) < kept {
        cost += 1;
    }
    Some((cost * (MAX_WORDS * 2 + 1) + changed) * (MAX_WORDS + 1) + (MAX_WORDS - kept))
}

/// What swapping verb `a` for `b` costs in [`word_edit`], when they are of a kind.
fn verb_swap(a: &str, b: &str) -> Option<usize> {
    if VERB_GROUPS.iter().any(|g| g.contains(&a) && g.contains(&b)) {
        return Some(2);
    }
    let reads = |w: &str| VERB_GROUPS[0].contains(&w);
    ((a == "list" && reads(b)) || (b == "list" && reads(a))).then_some(3)
}

/// The length of the longest common subsequence of two word lists (at most [`MAX_WORDS`]
/// each): the words kept in their order.
fn longest_common_run(a: &[String], b: &[String]) -> usize {
    let mut row = [0usize; MAX_WORDS + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                row[j + 1].max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Adds `(SUBJECT, words not shared)` for every defined name that shares at least a third of its and
/// `wanted`'s subject words, counted as they always were: `wanted`'s words (repeats included)
/// that the other has, against the union of both lists.
fn shared_subjects(
    wanted: &Words,
    prepared: &Prepared<'_>,
    found: &mut Vec<(u8, usize, u32)>,
) -> Vec<u32> {
    let mut words: Vec<&str> = wanted.subject.iter().map(String::as_str).collect();
    words.sort_unstable();
    // `(index, word, shared)`: only the names that share a word (or its stem, see [`stems`]),
    // found through the word table; a wanted word counts once per name however it matched.
    let mut shared: Vec<(u32, usize, usize)> = Vec::new();
    for (word, group) in words.chunk_by(|a, b| a == b).enumerate() {
        for list in stems(group[0], &prepared.by_subject) {
            for index in list {
                count(|w| w.pairs += 1);
                shared.push((*index, word, group.len()));
            }
        }
    }
    shared.sort_unstable();
    shared.dedup_by_key(|&mut (index, word, _)| (index, word));
    let mut sharing = Vec::new();
    for group in shared.chunk_by(|a, b| a.0 == b.0) {
        let index = group[0].0;
        sharing.push(index);
        let shared: usize = group.iter().map(|(_, _, n)| n).sum();
        let union = wanted.subject.len() + prepared.defined[index as usize].subject_len - shared;
        if shared * 3 >= union {
            // `shared` counts `wanted`'s repeats, so it can exceed the union: none unshared.
            found.push((SUBJECT, union.saturating_sub(shared), index));
        }
    }
    sharing
}

/// The shortest word a stem match takes: `time` is the stem of `timezone`, `id` of nothing.
const MIN_STEM_CHARS: usize = 4;

/// The longest word looked up by its stems: the look-ups grow with the word.
const MAX_STEM_CHARS: usize = 32;

/// The index lists of the defined subject words that are `word`, begin with it, or that it
/// begins with (`time` and `timezone`, `invoice` and `invoices`): one word written whole in one
/// name and cut short in the other is the same subject (`convert_time` is closest to
/// `convert_timezone`, not to `add_time`). Stems shorter than [`MIN_STEM_CHARS`] match only
/// whole.
fn stems<'t>(word: &'t str, table: &'t BTreeMap<String, Vec<u32>>) -> Vec<&'t Vec<u32>> {
    let mut lists: Vec<&Vec<u32>> = Vec::new();
    let chars = word.chars().count();
    if !(MIN_STEM_CHARS..=MAX_STEM_CHARS).contains(&chars) {
        lists.extend(table.get(word));
        return lists;
    }
    // `word` itself and the words it begins.
    lists.extend(
        table
            .range::<str, _>((std::ops::Bound::Included(word), std::ops::Bound::Unbounded))
            .take_while(|(defined, _)| defined.starts_with(word))
            .map(|(_, list)| list),
    );
    // The words that begin it.
    for (at, _) in word.char_indices().skip(MIN_STEM_CHARS) {
        lists.extend(table.get(&word[..at]));
    }
    lists
}

/// How many characters of each kind a name has, in 64 buckets (letters, digits and `_` each
/// their own, everything else shared), saturating. The characters one name has in excess of the
/// other each need an edit, so the larger excess is a lower bound on the edit distance, which
/// rules out most names in 64 byte subtractions before any distance is computed. Sharing
/// buckets and saturating only lower the bound.
#[derive(Debug, Clone, Copy)]
struct Bag([u8; 64]);

impl Bag {
    fn of(joined: &str) -> Bag {
        let mut bag = [0u8; 64];
        for c in joined.chars() {
            let bucket = match c {
                'a'..='z' => c as usize - 'a' as usize,
                '0'..='9' => 26 + (c as usize - '0' as usize),
                '_' => 36,
                _ => 37 + c as usize % 27,
            };
            bag[bucket] = bag[bucket].saturating_add(1);
        }
        Bag(bag)
    }

    /// A lower bound on the edit distance between the two names.
    fn distance(&self, other: &Bag) -> usize {
        larger_excess(&self.0, &other.0)
    }
}

/// How many adjacent pairs of characters of each kind a name has, in 128 buckets, saturating:
/// names made of the same common letters in other words pass [`Bag`], and fail here. An edit
/// removes at most two pairs and adds at most two, so half the larger excess is a lower bound
/// on the edit distance.
#[derive(Debug, Clone, Copy)]
struct PairBag([u8; 128]);

impl PairBag {
    fn of(joined: &str) -> PairBag {
        let mut bag = [0u8; 128];
        let mut previous: Option<u32> = None;
        for c in joined.chars() {
            let c = c as u32;
            if let Some(p) = previous {
                // Fibonacci hashing of the pair into 7 bits.
                let bucket = (p.wrapping_mul(31).wrapping_add(c)).wrapping_mul(0x9E37_79B9) >> 25;
                let bucket = bucket as usize;
                bag[bucket] = bag[bucket].saturating_add(1);
            }
            previous = Some(c);
        }
        PairBag(bag)
    }

    /// A lower bound on the edit distance between the two names.
    fn distance(&self, other: &PairBag) -> usize {
        larger_excess(&self.0, &other.0).div_ceil(2)
    }
}

/// The larger of what each bag has in excess of the other: (Σ |a - b| + |Σ a - Σ b|) / 2, as
/// the two excesses sum to the first and differ by the second. Written so that it compiles to
/// sums of absolute differences, a few instructions for the whole bag.
fn larger_excess(a: &[u8], b: &[u8]) -> usize {
    let (mut apart, mut total_a, mut total_b) = (0u32, 0u32, 0u32);
    for (x, y) in a.iter().zip(b) {
        apart += u32::from(x.abs_diff(*y));
        total_a += u32::from(*x);
        total_b += u32::from(*y);
    }
    ((apart + total_a.abs_diff(total_b)) / 2) as usize
}

/// An ASCII name of 1 to 64 characters as the bit masks of Myers' bit-parallel edit distance
/// (Hyyrö's formulation for whole strings): one column of the table per machine word, so a
/// distance between two ordinary tool names costs one step per character of the other.
struct Pattern {
    /// Per ASCII character, the positions where the name has it.
    masks: [u64; 128],
    len: usize,
}

impl Pattern {
    fn of(name: &str) -> Option<Pattern> {
        if name.is_empty() || name.len() > 64 || !name.is_ascii() {
            return None;
        }
        let mut masks = [0u64; 128];
        for (i, b) in name.bytes().enumerate() {
            masks[usize::from(b)] |= 1 << i;
        }
        Some(Pattern {
            masks,
            len: name.len(),
        })
    }

    /// The edit distance to `text` (of `chars` characters), when it is at most `limit`.
    fn distance_within(&self, text: &str, chars: usize, limit: usize) -> Option<usize> {
        let last = 1u64 << (self.len - 1);
        // Vertical deltas of the current column, +1 and -1; the first column is 0, 1, 2, ….
        let (mut plus, mut minus) = (!0u64, 0u64);
        let mut distance = self.len;
        for (j, c) in text.chars().enumerate() {
            count(|w| w.cells += 1);
            let eq = self.masks.get(c as usize).copied().unwrap_or(0);
            let xv = eq | minus;
            let xh = ((eq & plus).wrapping_add(plus) ^ plus) | eq;
            let mut horizontal_plus = minus | !(xh | plus);
            let mut horizontal_minus = plus & xh;
            if horizontal_plus & last != 0 {
                distance += 1;
            } else if horizontal_minus & last != 0 {
                distance -= 1;
            }
            // The top row is 0, 1, 2, …: each column starts one higher.
            horizontal_plus = (horizontal_plus << 1) | 1;
            horizontal_minus <<= 1;
            plus = horizontal_minus | !(xv | horizontal_plus);
            minus = horizontal_plus & xv;
            // Each remaining character lowers the distance by at most one.
            if distance > limit + (chars - j - 1) {
                return None;
            }
        }
        Some(distance).filter(|&d| d <= limit)
    }
}

/// Work counters for the tests that bound it: no timed tests, so the tests count instead.
#[derive(Debug, Default, Clone, Copy)]
#[cfg_attr(not(test), allow(dead_code))]
struct Work {
    /// Defined names looked at one by one (near spellings, shared subject words).
    pairs: u64,
    /// Edit distance table cells (one machine word's column for the bit-parallel one).
    cells: u64,
}

#[cfg(test)]
thread_local! {
    static WORK: std::cell::Cell<Work> =
        const { std::cell::Cell::new(Work { pairs: 0, cells: 0 }) };
}

#[cfg(test)]
fn count(add: impl FnOnce(&mut Work)) {
    WORK.with(|work| {
        let mut w = work.get();
        add(&mut w);
        work.set(w);
    });
}

#[cfg(not(test))]
#[inline(always)]
fn count(_: impl FnOnce(&mut Work)) {}

/// A name split into lower-case words (on `_ - . / :` and camelCase), with plurals folded.
#[derive(Debug)]
struct Words {
    /// All words joined by `_`: the spelling-independent form of the name.
    joined: String,
    /// `joined`'s length in characters.
    chars: usize,
    /// The words that are not generic verbs: what the tool is about.
    subject: Vec<String>,
    /// Every word, plurals folded, in order: what [`word_edit`] compares.
    all: Vec<String>,
}

impl Words {
    fn of(name: &str) -> Words {
        let words = split_words(name);
        let joined = words.join("_");
        let subject = words
            .iter()
            .map(|w| singular(w))
            .filter(|w| !is_generic(w))
            .map(str::to_owned)
            .collect();
        let all = words.iter().map(|w| singular(w).to_owned()).collect();
        Words {
            chars: joined.chars().count(),
            joined,
            subject,
            all,
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

/// Whether a word (plurals folded) is one of [`GENERIC_WORDS`], or one of them folded.
fn is_generic(word: &str) -> bool {
    GENERIC_WORDS
        .iter()
        .any(|generic| *generic == word || singular(generic) == word)
}

fn singular(word: &str) -> &str {
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        &word[..word.len() - 1]
    } else {
        word
    }
}

/// Levenshtein distance in characters (the tests' reference for the bounded forms).
#[cfg(test)]
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
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    // Only the diagonal band |i - j| <= limit can hold a distance within the limit (a cell
    // off the diagonal by d is at least d): cells outside it count as `over`, which stands for
    // every value above the limit, so a bounded distance costs (2 × limit + 1) cells a row.
    let limit = limit.min(a.len().max(b.len()));
    let over = limit + 1;
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
        *cell = j.min(over);
    }
    for (i, ca) in a.iter().enumerate() {
        let row_number = i + 1;
        // The band's columns in this row, 1-based as the table's are.
        let first = row_number.saturating_sub(limit).max(1);
        let last = (row_number + limit).min(b.len());
        let mut diagonal = row[first - 1];
        let mut left = if first == 1 {
            row[0] = row_number.min(over);
            row[0]
        } else {
            over
        };
        let mut best = left;
        for j in first..=last {
            count(|w| w.cells += 1);
            let substitution = diagonal + usize::from(*ca != b[j - 1]);
            diagonal = row[j];
            let cell = substitution.min(row[j] + 1).min(left + 1).min(over);
            row[j] = cell;
            left = cell;
            best = best.min(cell);
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

    /// Issue 29, item 9: the catalog of a real Claude Code session (`system/init` of
    /// `crates/toolcall-traces/tests/fixtures/claude-code/cca_sample-turns.stream.jsonl`), and
    /// the names other agents give its tools. `read_file` suggested
    /// `mcp__github__create_or_update_file` and `mcp__github__get_file_contents`, not `Read`.
    #[test]
    fn a_word_dropped_or_added_is_a_rename() {
        let tools = catalog(&[
            "Task",
            "Bash",
            "Read",
            "Edit",
            "Write",
            "mcp__github__get_file_contents",
            "mcp__github__create_or_update_file",
            "mcp__github__add_pull_request_review_comment",
        ]);
        assert_eq!(suggest("read_file", &tools)[0], "Read");
        assert_eq!(suggest("write_file", &tools)[0], "Write");
        assert_eq!(suggest("edit_file", &tools)[0], "Edit");
        assert_eq!(suggest("run_bash", &tools)[0], "Bash");
        // The other way: a word added to a name (mcp-server-filesystem's `read_text_file`).
        let tools = catalog(&["read_text_file", "write_file", "edit_file", "get_file_info"]);
        assert_eq!(suggest("read_file", &tools)[0], "read_text_file");
        // Words reordered, a verb swapped for its kind (playwright-mcp, github-mcp-server).
        let tools = catalog(&["browser_tab_close", "browser_tab_list", "browser_close"]);
        assert_eq!(suggest("browser_close_tab", &tools)[0], "browser_tab_close");
        let tools = catalog(&[
            "issue_read",
            "issue_write",
            "list_issues",
            "add_issue_comment",
        ]);
        assert_eq!(suggest("get_issue", &tools)[0], "issue_read");
        assert_eq!(suggest("update_issue", &tools)[0], "issue_write");
        // A generic word alone is no rename: `get` is not `get_weather`'s tool.
        let tools = catalog(&["get_balance", "get_invoice"]);
        assert!(suggest("get_weather", &tools).is_empty());
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

    /// The suggestions as they were before the bounds: every defined name compared in turn, the
    /// whole edit distance table, at any length. The reference the bounded search must match.
    fn unbounded(name: &str, catalog: &Catalog) -> Vec<String> {
        fn full_distance(a: &str, b: &str) -> usize {
            let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            let mut row: Vec<usize> = (0..=b.len()).collect();
            for (i, ca) in a.iter().enumerate() {
                let mut diagonal = row[0];
                row[0] = i + 1;
                for (j, cb) in b.iter().enumerate() {
                    let substitution = diagonal + usize::from(ca != cb);
                    diagonal = row[j + 1];
                    row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
                }
            }
            row[b.len()]
        }
        let closeness = |defined: &str| -> Option<(u8, usize)> {
            let (base, defined_base) = (
                crate::namespace::base(name),
                crate::namespace::base(defined),
            );
            if crate::namespace::relates_bases(name, base, defined, defined_base) {
                return Some((0, 0));
            }
            let (wanted, words) = (Words::of(base), Words::of(defined_base));
            if words.joined == wanted.joined {
                return Some((SPELLING, 0));
            }
            // The least of the kinds that find it.
            let mut kinds: Vec<(u8, usize)> = Vec::new();
            let limit = (wanted.chars.min(words.chars) / 4).max(1);
            if wanted.chars.abs_diff(words.chars) <= limit && wanted.chars <= MAX_EDIT_CHARS {
                let distance = full_distance(&wanted.joined, &words.joined);
                if distance <= limit {
                    let rank = if distance <= TYPO {
                        SPELLING
                    } else {
                        FAR_SPELLING
                    };
                    kinds.push((rank, distance));
                }
            }
            if wanted.all.len() <= MAX_WORDS {
                kinds.extend(word_edit(&wanted.all, &words.all).map(|cost| (WORDS, cost)));
            }
            if let Some(closest) = kinds.into_iter().min() {
                return Some(closest);
            }
            // The same word, or one the stem of the other (see `stems`).
            let stem = |w: &str, d: &str| {
                let n = w.chars().count();
                w == d
                    || ((MIN_STEM_CHARS..=MAX_STEM_CHARS).contains(&n)
                        && (d.starts_with(w)
                            || (w.starts_with(d) && d.chars().count() >= MIN_STEM_CHARS)))
            };
            let shared = wanted
                .subject
                .iter()
                .filter(|w| words.subject.iter().any(|d| stem(w, d)))
                .count();
            let union = wanted.subject.len() + words.subject.len() - shared;
            (shared > 0 && shared * 3 >= union).then_some((SUBJECT, union.saturating_sub(shared)))
        };
        let mut ranked: Vec<(u8, usize, &str)> = catalog
            .names()
            .filter(|d| *d != name)
            .filter_map(|d| closeness(d).map(|(r, n)| (r, n, d)))
            .collect();
        ranked.sort();
        if ranked.first().is_some_and(|(rank, _, _)| *rank < SUBJECT) {
            ranked.retain(|(rank, _, _)| *rank < SUBJECT);
        }
        ranked
            .into_iter()
            .take(MAX_SUGGESTIONS)
            .map(|(_, _, d)| d.to_owned())
            .collect()
    }

    /// A small deterministic generator (xorshift): the tests need variety, not quality.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    const VERBS: &[&str] = &[
        "get", "list", "create", "update", "delete", "find", "search", "fetch", "send", "close",
        "open", "archive", "sync", "export", "lookup", "run",
    ];
    const NOUNS: &[&str] = &[
        "customer",
        "invoice",
        "invoices",
        "balance",
        "payment",
        "refund",
        "order",
        "ticket",
        "issue",
        "comment",
        "user",
        "account",
        "report",
        "event",
        "file",
        "folder",
        "page",
        "record",
        "item",
        "product",
        "price",
        "stock",
        "shipment",
        "address",
        "region",
        "employee",
        "schedule",
        "meeting",
        "message",
        "channel",
        "thread",
        "alert",
        "deploy",
        "build",
        "release",
        "commit",
        "review",
        "repository",
        "task",
        "label",
        "workflow",
        "job",
        "queue",
        "session",
        "token",
        "policy",
        "role",
        "group",
        "team",
        "contact",
        "deal",
        "café",
        "status",
        "by",
        "id",
        "v2",
    ];

    /// A tool name as catalogs spell them: a verb and one to four nouns, in snake, camel or
    /// kebab case, sometimes behind an MCP-style prefix.
    fn tool_name(random: &mut Random, nouns: usize) -> String {
        let mut words = vec![random.pick(VERBS).to_owned()];
        for _ in 0..nouns {
            words.push(random.pick(NOUNS).to_owned());
        }
        let name = match random.below(6) {
            0 => words
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if i == 0 {
                        w.clone()
                    } else {
                        w[..1].to_uppercase() + &w[1..]
                    }
                })
                .collect(),
            1 => words.join("-"),
            _ => words.join("_"),
        };
        match random.below(8) {
            0 => format!("mcp__{}__{name}", random.pick(&["github", "crm", "fs"])),
            1 => format!("{}.{name}", random.pick(&["github", "crm", "fs"])),
            2 => format!("{}_{name}", random.pick(&["github", "crm", "fs"])),
            _ => name,
        }
    }

    /// What a model calls: a defined name with typos, another verb, a prefix added or dropped,
    /// a plural, another case, or something new.
    fn called_name(random: &mut Random, defined: &[String]) -> String {
        let mut name: Vec<char> = defined[random.below(defined.len())].chars().collect();
        for _ in 0..=random.below(4) {
            let at = random.below(name.len() + 1);
            let letter = random.pick(&["a", "e", "s", "_", "x", "I", "é", "-"]);
            let letter = letter.chars().next().unwrap_or('a');
            match random.below(9) {
                0 | 1 if at < name.len() => name[at] = letter,
                2 | 3 => name.insert(at, letter),
                4 | 5 if at < name.len() => {
                    name.remove(at);
                }
                6 => name.push('s'),
                7 => {
                    name = format!("gh__{}", name.iter().collect::<String>())
                        .chars()
                        .collect()
                }
                _ => {}
            }
        }
        let name: String = name.into_iter().collect();
        match random.below(10) {
            0 => {
                let nouns = 1 + random.below(3);
                tool_name(random, nouns)
            }
            1 => crate::namespace::base(&name).to_owned(),
            2 => name.to_uppercase(),
            3 => format!(
                "{}_{}",
                random.pick(VERBS),
                name.split('_').skip(1).collect::<Vec<_>>().join("_")
            ),
            _ => name,
        }
    }

    /// A word cut short in one name is the same subject: against mcp-server-time's renamed
    /// tools, `convert_time` is `convert_timezone` first (it used to come last, after
    /// `add_time` and `compare_time`, which share only `time`).
    #[test]
    fn a_stem_is_the_same_subject() {
        let catalog = Catalog::new(
            [
                "get_current_time",
                "add_time",
                "compare_time",
                "convert_timezone",
            ]
            .map(|n| Tool::new(n, "")),
        );
        assert_eq!(suggest("convert_time", &catalog)[0], "convert_timezone");
        // Too short to be a stem: `id` is not `idle`.
        let catalog = Catalog::new(["set_idle"].map(|n| Tool::new(n, "")));
        assert!(suggest("delete_id", &catalog).is_empty());
    }

    #[test]
    fn the_bounds_do_not_change_what_is_suggested() {
        let mut random = Random(0x5eed_0017);
        let (mut compared, mut suggested) = (0, 0);
        for size in [3, 20, 150] {
            let names: Vec<String> = (0..size)
                .map(|_| {
                    let nouns = 1 + random.below(4);
                    tool_name(&mut random, nouns)
                })
                .collect();
            let tools = Catalog::new(names.iter().map(|n| Tool::new(n, "")));
            let prepared = prepare(&tools);
            let mut called: Vec<String> = (0..1500)
                .map(|_| called_name(&mut random, &names))
                .collect();
            called.extend(["", "_", "__", "a__", "x", "s", "-", "é"].map(String::from));
            called.extend(names.iter().take(20).cloned());
            for name in &called {
                let expected = unbounded(name, &tools);
                assert_eq!(
                    suggest_among(name, &prepared),
                    expected,
                    "{name:?} among {size}"
                );
                compared += 1;
                suggested += usize::from(!expected.is_empty());
            }
        }
        // The generated names exercise suggestions, not only their absence.
        assert!(
            suggested * 2 > compared,
            "{suggested} of {compared} suggested"
        );
    }

    #[test]
    fn the_bit_parallel_distance_is_the_table_s() {
        let mut random = Random(0xb17);
        let letters = ["a", "b", "c", "_", "é"];
        for _ in 0..20_000 {
            let word = |random: &mut Random, max: usize| -> String {
                (0..random.below(max))
                    .map(|_| random.pick(&letters[..4]))
                    .collect()
            };
            let pattern = word(&mut random, 65);
            let mut text = word(&mut random, 70);
            if random.below(4) == 0 {
                text.push_str(letters[4]);
            }
            let Some(bits) = Pattern::of(&pattern) else {
                continue;
            };
            let distance = edit_distance(&pattern, &text);
            let chars = text.chars().count();
            for limit in [0, 1, 3, distance.saturating_sub(1), distance, distance + 2] {
                assert_eq!(
                    bits.distance_within(&text, chars, limit),
                    (distance <= limit).then_some(distance),
                    "{pattern:?} {text:?} {limit}"
                );
            }
        }
    }

    /// The work suggestions for `called` cost, scored as one response by a [`crate::Scorer`]
    /// over `tools` (or, with `scorer` false, through [`suggest_among`] once each).
    fn work_for(tools: &[String], called: &[String]) -> (Work, usize) {
        let tools = Catalog::new(tools.iter().map(|n| Tool::new(n, "")));
        let case = crate::Case::from_catalog(tools);
        let mut response = crate::Response::empty(crate::Format::OpenaiChat);
        response.calls = called
            .iter()
            .map(|name| crate::ToolCall::new(None, name, serde_json::json!({})))
            .collect();
        WORK.with(|w| w.set(Work::default()));
        let verdict = crate::Scorer::new(&case).score(&response);
        let suggested = verdict
            .unknown()
            .filter(|f| !f.suggestions().is_empty())
            .count();
        (WORK.with(|w| w.get()), suggested)
    }

    /// A name of `len` characters made of words, as the hostile shapes in issue 17 were.
    fn long_name(random: &mut Random, len: usize) -> String {
        let mut name = String::from(random.pick(VERBS));
        while name.len() < len {
            name.push('_');
            name.push_str(random.pick(&NOUNS[..50]));
        }
        name.truncate(len);
        name
    }

    #[test]
    fn absurdly_long_names_cost_no_edit_distance() {
        let mut random = Random(0x10_000);
        // 200 tools of 10,000 characters and one unknown name as long: before the bounds every
        // pair filled rows of 10,000 cells until one exceeded the limit of 2,500 (13 s).
        let tools: Vec<String> = (0..200).map(|_| long_name(&mut random, 10_000)).collect();
        let (work, _) = work_for(&tools, &[long_name(&mut random, 10_000)]);
        assert_eq!(work.cells, 0, "{work:?}");
        // One entry per shared subject word and name: the 50 nouns the names are made of.
        assert!(work.pairs <= 200 * 50, "{work:?}");
    }

    #[test]
    fn a_huge_catalog_of_long_names_costs_no_edit_distance() {
        let mut random = Random(0x2_000);
        // Tools of 2,000 characters: before, rows of 2,000 cells for every pair, until one
        // exceeded the limit of 500 (over 60 s for 10,000 tools). A fifth of that catalog here,
        // to keep the debug build quick: no pair costs a cell, however many there are.
        let tools: Vec<String> = (0..2_000).map(|_| long_name(&mut random, 2_000)).collect();
        let (work, _) = work_for(&tools, &[long_name(&mut random, 2_000)]);
        assert_eq!(work.cells, 0, "{work:?}");
        // One entry per shared subject word (or stem: a noun and its longer forms) and name.
        assert!(work.pairs <= 2_000 * 60, "{work:?}");
    }

    #[test]
    fn many_unknown_names_cost_little_edit_distance_each() {
        let mut random = Random(0x1000);
        // 1,000 tools of 60 characters and a response of distinct unknown names. Before, every
        // pair filled at least 16 rows of 61 cells (no row's least entry can pass the limit of
        // 15 sooner): ≥ 976 cells a pair, 23 s for 10,000 names. A tenth of the names here, to
        // keep the debug build quick; the cost is per pair.
        let tools: Vec<String> = (0..1_000).map(|_| long_name(&mut random, 60)).collect();
        let mut called: Vec<String> = (0..1_000).map(|_| long_name(&mut random, 60)).collect();
        called.sort();
        called.dedup();
        assert!(called.len() > 990);
        let pairs = (called.len() * tools.len()) as u64;
        let (work, suggested) = work_for(&tools, &called);
        // Most pairs stop at a character bag; the rest cost one step per character.
        assert!(work.cells <= 10 * pairs, "{work:?} for {pairs} pairs");
        assert!(work.pairs <= 3 * pairs, "{work:?} for {pairs} pairs");
        assert!(suggested > 0);
        // The same names, each 100 times: worked out once each.
        let repeated: Vec<String> = called[..100]
            .iter()
            .flat_map(|n| vec![n.clone(); 100])
            .collect();
        let (again, _) = work_for(&tools, &repeated);
        let (once, _) = work_for(&tools, &called[..100]);
        assert_eq!((again.cells, again.pairs), (once.cells, once.pairs));
    }
}
