//! Text from a `.lok` (possibly someone else's) is made safe before it reaches a
//! terminal: control characters, bidi overrides and zero-width characters are shown as
//! escapes instead of acting on the screen.

use std::borrow::Cow;

fn is_hazard(c: char) -> bool {
    (c.is_control() && c != '\t') || is_invisible(c)
}

/// Characters that change how a line reads without being seen: direction marks and
/// overrides, zero-width and invisible operators, line and paragraph separators, the soft
/// hyphen, interlinear annotations and tag characters.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

/// A JSON line made safe for a terminal as JSON itself allows: every control character,
/// DEL, C1 control and invisible character written as a `\uXXXX` escape (serde_json
/// escapes only those below U+0020), so the line is still the same JSON value.
pub fn json_for_terminal(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| (c.is_control() && c != '\t') || is_invisible(c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if (c.is_control() && c != '\t') || is_invisible(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", unit));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every hazardous character replaced by a visible `\u{..}` escape
/// (newlines as `\n`).
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hazard) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_hazard(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::for_terminal;

    #[test]
    fn escapes_and_bidi_become_visible() {
        assert_eq!(for_terminal("ls -la"), "ls -la");
        assert_eq!(for_terminal("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(for_terminal("x\u{202e}y\u{200b}"), "x\\u{202e}y\\u{200b}");
        assert_eq!(for_terminal("1\n2"), "1\\n2");
        assert_eq!(for_terminal("a\u{9b}b\u{2028}c\u{e0041}"), "a\\u{9b}b\\u{2028}c\\u{e0041}");
    }

    #[test]
    fn json_stays_json_and_shows_no_control() {
        let line = serde_json::json!({"t": "a\u{9b}2J\u{7f}\u{202e}x\u{e0041}"}).to_string();
        let safe = super::json_for_terminal(&line);
        assert!(!safe.chars().any(|c| c.is_control() || c == '\u{202e}' || c == '\u{e0041}'), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["t"], "a\u{9b}2J\u{7f}\u{202e}x\u{e0041}");
    }
}
