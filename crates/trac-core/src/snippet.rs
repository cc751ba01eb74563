//! Snippets of input quoted back in messages: an echoed label, field name or formula line is cut
//! to a bounded length (a 50 MB label or a 200 KB formula line must not be copied whole into a
//! warning), with `…` where it was cut.

use std::borrow::Cow;

/// The most characters of an input echoed in a message ([`snippet`]).
pub const SNIPPET_CHARS: usize = 80;

/// `s` if it has at most `max` characters (`max` ≥ 1); else its first `max - 1` characters and
/// `…`. Control characters are kept (callers quote). O(min(len(s), max)).
pub fn snippet(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let cut = s
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(s.len(), |(i, _)| i);
            Cow::Owned(format!("{}…", &s[..cut]))
        }
    }
}

/// A window of at most about `max` characters of `line` around byte `at` (a caret's place), for
/// a source line shown under an error: `(text, column)` where `text` is the window with `…` on
/// each side that was cut, and `column` the character column of `at` in `text` (where the caret
/// goes). The caret keeps up to a third of the window before it. `at` is clamped to the line
/// and floored to a character boundary. O(len(line)).
pub fn window(line: &str, at: usize, max: usize) -> (String, usize) {
    let mut at = at.min(line.len());
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    let col = line[..at].chars().count();
    let total = col + line[at..].chars().count();
    if total <= max {
        return (line.to_string(), col);
    }
    let first = col.saturating_sub(max / 3).min(total.saturating_sub(max));
    let mut text = String::new();
    if first > 0 {
        text.push('…');
    }
    text.extend(line.chars().skip(first).take(max));
    if first + max < total {
        text.push('…');
    }
    (text, col - first + usize::from(first > 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_keeps_short_texts_and_cuts_long_ones() {
        assert_eq!(snippet("abc", 3), "abc");
        let long = "é".repeat(1000);
        let s = snippet(&long, 10);
        assert_eq!(s.chars().count(), 10);
        assert!(s.ends_with('…') && s.starts_with("ééé"));
    }

    #[test]
    fn window_keeps_the_caret_under_its_character() {
        let line = format!("{}X{}", "a".repeat(5000), "b".repeat(5000));
        let (text, col) = window(&line, 5000, 100);
        assert!(text.chars().count() <= 102, "{}", text.len());
        assert_eq!(text.chars().nth(col), Some('X'));
        assert!(text.starts_with('…') && text.ends_with('…'));
        // A caret near the start: nothing cut before it.
        let (text, col) = window(&line, 3, 100);
        assert_eq!(
            (text.chars().nth(col), text.starts_with('a')),
            (Some('a'), true)
        );
        assert_eq!(col, 3);
        // Near the end: the window ends with the line.
        let (text, col) = window(&line, line.len() - 1, 100);
        assert!(text.ends_with('b') && text.starts_with('…'));
        assert_eq!(text.chars().nth(col), Some('b'));
        // At the very end (an error after the last character).
        let (text, col) = window(&line, line.len(), 100);
        assert_eq!(col, text.chars().count());
        assert_eq!(window("short", 2, 100), ("short".to_string(), 2));
    }
}
