//! MCP-style namespace prefixes, added or removed on the way between a server and a model.
//!
//! Clients rewrite MCP tool names to keep them unique: Claude Code calls `mcp__github__create_issue`,
//! Gemini CLI `github__create_issue`, langchain-mcp-adapters `github_create_issue`; MCP itself
//! allows `github.create_issue` or `github/create_issue`. When a prefix collapses or appears on
//! one side only, the model calls a name that is the defined name with a prefix added or removed.

/// The name with every strong prefix (`__`, `.`, `/`, `:`) removed:
/// `mcp__github__create_issue` → `create_issue`. A separator at the very end is kept
/// (`trailing__`), so the base is never empty unless the name is.
pub(crate) fn base(name: &str) -> &str {
    // One pass: the earliest separator from `start` is also the one that ends first (`__`
    // cannot end after a one-byte separator that starts later), so cutting at the end of each
    // separator found in order is cutting at the nearest end each time. All separators are
    // ASCII, so every cut is on a character boundary.
    let bytes = name.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'.' | b'/' | b':' => i + 1,
            b'_' if bytes.get(i + 1) == Some(&b'_') => i + 2,
            _ => {
                i += 1;
                continue;
            }
        };
        if end >= bytes.len() {
            break;
        }
        start = end;
        i = end;
    }
    &name[start..]
}

/// Whether `a` and `b` are the same tool with a namespace prefix added, removed or replaced.
///
/// A single `_` or `-` counts as a separator only when the prefix is one word and what remains
/// has several (`github_create_issue` ~ `create_issue`), so `get_invoices` is not `invoices` in
/// another namespace.
#[cfg(test)]
pub(crate) fn relates(a: &str, b: &str) -> bool {
    relates_bases(a, base(a), b, base(b))
}

/// [`relates`] given each name's [`base`], for callers that compare one name with many.
pub(crate) fn relates_bases(a: &str, base_a: &str, b: &str, base_b: &str) -> bool {
    if a == b || a.is_empty() || b.is_empty() {
        return false;
    }
    if (base_a.len() != a.len() || base_b.len() != b.len()) && base_a == base_b {
        return true;
    }
    weak_prefix(base_a, base_b) || weak_prefix(base_b, base_a)
}

/// Whether `long` is `prefix_short` or `prefix-short` with a one-word prefix and a multi-word
/// `short` (both already reduced to their [`base`]).
fn weak_prefix(long: &str, short: &str) -> bool {
    let Some(prefix) = long.strip_suffix(short) else {
        return false;
    };
    let Some(word) = prefix
        .strip_suffix('_')
        .or_else(|| prefix.strip_suffix('-'))
    else {
        return false;
    };
    !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric())
        && short.contains(['_', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition `base` is an optimisation of: cut at the nearest separator end, again.
    fn base_by_definition(name: &str) -> &str {
        let mut rest = name;
        loop {
            let cut = ["__", ".", "/", ":"]
                .iter()
                .filter_map(|sep| rest.find(sep).map(|at| at + sep.len()))
                .min();
            match cut {
                Some(at) if at < rest.len() => rest = &rest[at..],
                _ => return rest,
            }
        }
    }

    #[test]
    fn base_agrees_with_its_definition() {
        let pieces = ["a", "_", "__", "___", ".", "/", ":", "::", "é", "x_y", ""];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let name = format!("{a}{b}{c}{b}{a}");
                    assert_eq!(base(&name), base_by_definition(&name), "{name:?}");
                }
            }
        }
    }

    #[test]
    fn strips_every_strong_prefix() {
        assert_eq!(base("mcp__github__create_issue"), "create_issue");
        assert_eq!(base("github.create_issue"), "create_issue");
        assert_eq!(base("fs/read_file"), "read_file");
        assert_eq!(base("create_issue"), "create_issue");
        assert_eq!(base("trailing__"), "trailing__");
    }

    #[test]
    fn relates_prefixed_and_bare_names_both_ways() {
        for prefixed in [
            "github__create_issue",
            "mcp__github__create_issue",
            "github.create_issue",
            "github/create_issue",
            "github_create_issue",
        ] {
            assert!(relates(prefixed, "create_issue"), "{prefixed}");
            assert!(relates("create_issue", prefixed), "{prefixed}");
        }
        assert!(relates("gh__create_issue", "github__create_issue"));
    }

    #[test]
    fn does_not_relate_unrelated_names() {
        assert!(!relates("get_invoices", "invoices"));
        assert!(!relates("create_issue", "create_issue"));
        assert!(!relates("github__create_issue", "close_issue"));
        assert!(!relates("get_balance", "balance"));
    }
}
