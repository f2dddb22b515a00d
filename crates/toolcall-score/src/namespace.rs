//! MCP-style namespace prefixes, added or removed on the way between a server and a model.
//!
//! Clients rewrite MCP tool names to keep them unique: Claude Code calls `mcp__github__create_issue`,
//! Gemini CLI `github__create_issue`, langchain-mcp-adapters `github_create_issue`; MCP itself
//! allows `github.create_issue` or `github/create_issue`. When a prefix collapses or appears on
//! one side only, the model calls a name that is the defined name with a prefix added or removed.

/// Separators that always mark a namespace.
const STRONG: [&str; 4] = ["__", ".", "/", ":"];

/// The name with every strong prefix removed: `mcp__github__create_issue` → `create_issue`.
pub(crate) fn base(name: &str) -> &str {
    let mut rest = name;
    loop {
        let cut = STRONG
            .iter()
            .filter_map(|sep| rest.find(sep).map(|at| at + sep.len()))
            .min();
        match cut {
            Some(at) if at < rest.len() => rest = &rest[at..],
            _ => return rest,
        }
    }
}

/// Whether `a` and `b` are the same tool with a namespace prefix added, removed or replaced.
///
/// A single `_` or `-` counts as a separator only when the prefix is one word and what remains
/// has several (`github_create_issue` ~ `create_issue`), so `get_invoices` is not `invoices` in
/// another namespace.
pub(crate) fn relates(a: &str, b: &str) -> bool {
    if a == b || a.is_empty() || b.is_empty() {
        return false;
    }
    let (base_a, base_b) = (base(a), base(b));
    if (base_a != a || base_b != b) && base_a == base_b {
        return true;
    }
    weak_prefix(a, b) || weak_prefix(b, a)
}

/// Whether `long` is `prefix_short` or `prefix-short` with a one-word prefix and a multi-word
/// `short`.
fn weak_prefix(long: &str, short: &str) -> bool {
    let short = base(short);
    let long = base(long);
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
