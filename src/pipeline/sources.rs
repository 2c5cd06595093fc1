//! The published works that `report.md` compares with: the short name a
//! claim's `source` column cites each by, and the full reference a reader
//! can find. Each game lists the works it cites in its folder
//! (`src/games/<game>/sources.rs`); [`Registry::works`](super::registry::Registry::works)
//! joins them.
//!
//! A claim's source is free text that contains one or more of these names
//! (e.g. "A 1974, as cited in the B article" names works `A 1974` and `B article`); `report.md`
//! ends with the full reference of every work named in its claims or notes
//! ([`cited`]). Keep the names in a game's works and in its claim sources the same
//! text, and never cite an internal name (a file of this repository or of
//! the development machine) in a source.

/// One published work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// The short name claims cite it by (a substring of their `source`).
    pub name: &'static str,
    /// Author, title, where it was published, and a URL where there is one.
    pub reference: &'static str,
}

impl Work {
    /// The work cited as `name`, with its full `reference`.
    pub const fn new(name: &'static str, reference: &'static str) -> Work {
        Work { name, reference }
    }
}

/// The start of a claim source that is no published work but an
/// independent computation of ours (e.g. a naive search), named in the rest
/// of the source.
pub const OWN_CHECK: &str = "independent check";

/// The works among `works` named in `texts` (claim sources, report notes),
/// in the order of `works`, each once.
pub fn cited<'a>(texts: impl IntoIterator<Item = &'a str>, works: &[Work]) -> Vec<Work> {
    let texts: Vec<&str> = texts.into_iter().collect();
    works
        .iter()
        .filter(|w| texts.iter().any(|t| t.contains(w.name)))
        .copied()
        .collect()
}

/// The `## Sources` section of `report.md` for the works among `works`
/// named in `texts` (empty if none).
pub fn sources_section<'a>(texts: impl IntoIterator<Item = &'a str>, works: &[Work]) -> String {
    let works = cited(texts, works);
    if works.is_empty() {
        return String::new();
    }
    let mut md = String::from("## Sources\n\n");
    for w in works {
        md.push_str(&format!("- **{}**: {}\n", w.name, w.reference));
    }
    md
}
