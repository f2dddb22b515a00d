//! Suggestions: which defined name an unknown name was likely meant to be.

use crate::Catalog;

/// The defined names closest to `name`, closest first; empty when nothing is close.
pub fn suggest(name: &str, catalog: &Catalog) -> Vec<String> {
    let _ = (name, catalog);
    Vec::new()
}

/// Levenshtein distance in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
