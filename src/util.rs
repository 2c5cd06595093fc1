//! Small helpers shared by folders that must not depend on each other
//! (`pipeline` and `plot`). Reaches nothing in the crate.

/// `part` of `whole` as a percentage with one decimal (`1.5%`; `0.0%` of
/// nothing), for reports.
pub fn percent(part: u64, whole: u64) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole.max(1) as f64)
}

/// `n` with thousands separators (`16000` → `16,000`), for messages.
pub fn thousands(n: u128) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
