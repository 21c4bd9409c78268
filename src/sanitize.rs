//! Text from a `.lok` (possibly someone else's) is made safe before it reaches a
//! terminal: control characters, bidi overrides and zero-width characters are shown as
//! escapes instead of acting on the screen.

use std::borrow::Cow;

fn is_hazard(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
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
    }
}
