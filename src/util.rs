//! Small helpers shared by folders that must not depend on each other
//! (`pipeline` and `plot`). Reaches nothing in the crate.

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
