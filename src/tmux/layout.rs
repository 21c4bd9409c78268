//! tmux window layouts (`#{window_layout}`), checked before tmux sees one from a file:
//! the grammar, the checksum tmux puts in front, and how many panes the layout holds.
//!
//! A layout is `CSUM,CELL` where a cell is `WxH,X,Y` followed by `,ID` (one pane), by
//! `{CELL,CELL…}` (side by side) or by `[CELL,CELL…]` (one above the other).

/// Longer than any layout of the 64×64 panes a file may hold.
const MAX_LEN: usize = 64 * 1024;
/// Nesting deeper than any real split; keeps the parser's recursion bounded.
const MAX_DEPTH: usize = 64;
/// tmux's own limit on a window's width and height (`WINDOW_MAXIMUM`): tmux would try to
/// allocate a larger layout whole, and die of it.
const MAX_SIZE: u32 = 10_000;

/// tmux's own checksum of a layout body (`layout_checksum` in tmux's layout-custom.c):
/// a 16-bit rotate right, then add each byte.
pub fn checksum(body: &str) -> u16 {
    body.bytes().fold(0u16, |csum, b| {
        let rotated = (csum >> 1) | ((csum & 1) << 15);
        rotated.wrapping_add(u16::from(b))
    })
}

/// How many panes `layout` lays out, when it is a layout tmux would accept: well formed
/// and with the checksum of its body. The error says what is wrong, for the warning.
pub fn panes(layout: &str) -> Result<usize, String> {
    if layout.len() > MAX_LEN {
        return Err(format!("longer than {MAX_LEN} bytes"));
    }
    let Some((sum, body)) = layout.split_once(',') else { return Err("no checksum".into()) };
    let sum = u16::from_str_radix(sum, 16)
        .ok()
        .filter(|_| sum.len() == 4)
        .ok_or_else(|| "the checksum is not four hex digits".to_string())?;
    if checksum(body) != sum {
        return Err(format!("the checksum {sum:04x} does not match its body ({:04x})", checksum(body)));
    }
    let mut parser = Parser { rest: body.as_bytes(), panes: 0 };
    parser.cell(0)?;
    if !parser.rest.is_empty() {
        return Err("text after the layout".into());
    }
    Ok(parser.panes)
}

/// The size of the whole window a layout was saved at (`WxH` of its outer cell).
pub fn size(layout: &str) -> Option<(u32, u32)> {
    let body = layout.split_once(',')?.1;
    let (w, rest) = body.split_once('x')?;
    let h = rest.split([',', '{', '[']).next()?;
    Some((w.parse().ok()?, h.parse().ok()?))
}

struct Parser<'a> {
    rest: &'a [u8],
    panes: usize,
}

impl Parser<'_> {
    fn cell(&mut self, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("nested too deep".into());
        }
        let w = self.number()?;
        self.expect(b'x')?;
        let h = self.number()?;
        self.expect(b',')?;
        let x = self.number()?;
        self.expect(b',')?;
        let y = self.number()?;
        if [w, h, x, y].iter().any(|&n| n > MAX_SIZE) {
            return Err(format!("a size or offset above tmux's limit of {MAX_SIZE}"));
        }
        match self.rest.first() {
            Some(&open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.rest = &self.rest[1..];
                loop {
                    self.cell(depth + 1)?;
                    match self.rest.first() {
                        Some(b',') => self.rest = &self.rest[1..],
                        Some(&c) if c == close => {
                            self.rest = &self.rest[1..];
                            return Ok(());
                        }
                        _ => return Err(format!("a split not closed with {:?}", close as char)),
                    }
                }
            }
            // `,ID` of a pane; a comma before a `{`/`[`-less sibling is the caller's.
            Some(b',') if self.rest.get(1).is_some_and(u8::is_ascii_digit) && self.pane_id_follows() => {
                self.rest = &self.rest[1..];
                self.number()?;
                self.panes += 1;
                Ok(())
            }
            _ => {
                self.panes += 1;
                Ok(())
            }
        }
    }

    /// After `WxH,X,Y`, a `,N` is the pane's id unless `N` starts the next sibling cell
    /// (`N` followed by `x`).
    fn pane_id_follows(&self) -> bool {
        let digits = self.rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        self.rest.get(1 + digits) != Some(&b'x')
    }

    fn number(&mut self) -> Result<u32, String> {
        let digits = self.rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return Err("a number was expected".into());
        }
        let n = std::str::from_utf8(&self.rest[..digits]).ok().and_then(|s| s.parse().ok());
        self.rest = &self.rest[digits..];
        n.ok_or_else(|| "a number was expected".into())
    }

    fn expect(&mut self, want: u8) -> Result<(), String> {
        match self.rest.split_first() {
            Some((&c, rest)) if c == want => {
                self.rest = rest;
                Ok(())
            }
            _ => Err(format!("{:?} was expected", want as char)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Saved by tmux 3.3a (see the research notes on whole sessions).
    const TWO: &str = "cf3a,200x50,0,0{100x50,0,0,0,99x50,101,0,1}";
    const FOUR: &str =
        "669b,200x50,0,0[200x25,0,0{100x25,0,0,2,99x25,101,0,5},200x24,0,26{100x24,0,26,3,99x24,101,26,4}]";

    #[test]
    fn tmux_checksums_are_reproduced() {
        assert_eq!(checksum(TWO.split_once(',').unwrap().1), 0xcf3a);
        assert_eq!(checksum(FOUR.split_once(',').unwrap().1), 0x669b);
    }

    #[test]
    fn panes_are_counted() {
        assert_eq!(panes(TWO), Ok(2));
        assert_eq!(panes(FOUR), Ok(4));
        let one = "b25d,80x24,0,0,0";
        assert_eq!(panes(one).map_err(|e| e.to_string()), Ok(1), "{}", checksum("80x24,0,0,0"));
        assert_eq!(size(FOUR), Some((200, 50)));
    }

    #[test]
    fn bad_layouts_are_refused_with_a_reason() {
        assert!(panes("ffff,200x50,0,0").unwrap_err().contains("checksum"));
        assert!(panes("cf3a").is_err());
        assert!(panes("zz,1x1,0,0").is_err());
        for body in ["200x50,0,0{100x50,0,0,0", "200x50,0,0{}", "1x1,0,0;rm", "1x1,0"] {
            let layout = format!("{:04x},{body}", checksum(body));
            assert!(panes(&layout).is_err(), "{body}");
        }
        let huge = "999999999x999999999,0,0{499999999x999999999,0,0,4,499999999x999999999,500000000,0,5}";
        assert!(panes(&format!("{:04x},{huge}", checksum(huge))).unwrap_err().contains("limit"));
        let deep = format!("{}1x1,0,0{}", "1x1,0,0{".repeat(100), "}".repeat(100));
        assert!(panes(&format!("{:04x},{deep}", checksum(&deep))).unwrap_err().contains("deep"));
    }
}
