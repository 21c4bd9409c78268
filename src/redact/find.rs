//! Finding the next `"` or `\` inside a JSON string, and decoding one to its end.
//!
//! A transcript's strings are cut into short stretches by their escapes: a line of code
//! between two `\n`, a key, a UUID. memchr's search is built for long haystacks, and
//! setting it up again after every escape cost as much as the search itself (a third of
//! the JSON walk); copying each stretch with its own `memcpy` call cost as much again.
//! This looks at 32 bytes per step with AVX2 where the processor has it, with nothing to
//! set up, and copies them in the same step; elsewhere memchr and `extend` do the work.

/// The first `"` or `\` in `b`.
#[inline]
pub(crate) fn quote_or_backslash(b: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if super::keywords::simd::available() {
        // SAFETY: the processor has AVX2.
        return unsafe { avx2::first_of(b, b'"', b'\\') };
    }
    memchr::memchr2(b'"', b'\\', b)
}

/// [`decode_to_quote`] with AVX2: appends the text of a string literal
/// from `b[from..]` up to its closing quote to `out`, and returns where that quote is.
///
/// # Safety
///
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn decode_to_quote_avx2(b: &[u8], from: usize, out: &mut Vec<u8>) -> Result<usize, NotJson> {
    use std::arch::x86_64::*;
    // The text is never longer than what it is read from: an escape of two to twelve
    // bytes stands for one to four. So every write below, whole 32-byte blocks included,
    // lands inside this reservation, at or before the place of the bytes read.
    out.reserve(b.len() - from + 32);
    let base = out.len();
    let mut written = 0;
    let mut at = from;
    // SAFETY: reads stay inside `b` (`at + 32 <= b.len()` for a block); writes go to
    // `base + written` with `written <= at - from`, so a block's 32 bytes end by
    // `base + b.len() - from` and an escape's four by `base + b.len() - from + 3`, both
    // inside the capacity reserved above. `set_len` covers only bytes written.
    unsafe {
        let dst = out.as_mut_ptr().add(base);
        let quotes = _mm256_set1_epi8(b'"' as i8);
        let slashes = _mm256_set1_epi8(b'\\' as i8);
        loop {
            // The next quote or backslash, copying what comes before it.
            let mut found = false;
            while at + 32 <= b.len() {
                let v = _mm256_loadu_si256(b.as_ptr().add(at).cast());
                _mm256_storeu_si256(dst.add(written).cast(), v);
                let stops = _mm256_or_si256(_mm256_cmpeq_epi8(v, quotes), _mm256_cmpeq_epi8(v, slashes));
                let mask = _mm256_movemask_epi8(stops) as u32;
                if mask != 0 {
                    let k = mask.trailing_zeros() as usize;
                    at += k;
                    written += k;
                    found = true;
                    break;
                }
                at += 32;
                written += 32;
            }
            if !found {
                // Under 32 bytes left: byte by byte (a `memcpy` call costs more).
                while at < b.len() && !matches!(b[at], b'"' | b'\\') {
                    *dst.add(written) = b[at];
                    at += 1;
                    written += 1;
                }
                if at == b.len() {
                    out.set_len(base + written);
                    return Err(NotJson);
                }
            }
            if b[at] == b'"' {
                out.set_len(base + written);
                return Ok(at);
            }
            // A one-letter escape (`\\n`, `\\t`, `\\"`: nearly all of them in code) here;
            // `\\u` and what is not an escape in the decoder proper.
            let letter = b.get(at + 1).copied().unwrap_or(0);
            let simple = SIMPLE_ESCAPE[usize::from(letter)];
            if simple != 0 {
                *dst.add(written) = simple;
                written += 1;
                at += 2;
                continue;
            }
            let decoded = escape(&b[at..]);
            let Ok((bytes, len, used)) = decoded else {
                out.set_len(base + written);
                return Err(NotJson);
            };
            // What keeps every write inside the reservation: an escape never stands for
            // more bytes than it takes, nor for more than four.
            debug_assert!(len <= used && len <= 4, "escape of {used} bytes decoded to {len}");
            // All four bytes, whatever `len` is: one store, not a `memcpy` call.
            std::ptr::write_unaligned(dst.add(written).cast::<[u8; 4]>(), bytes);
            written += len;
            at += used;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// The first byte of `b` equal to `x` or `y`.
    ///
    /// # Safety
    ///
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn first_of(b: &[u8], x: u8, y: u8) -> Option<usize> {
        let mut at = 0;
        // SAFETY: every load reads the 32 bytes at `at`, which the loop's condition
        // keeps inside `b`; unaligned loads are allowed.
        unsafe {
            let xs = _mm256_set1_epi8(x as i8);
            let ys = _mm256_set1_epi8(y as i8);
            while at + 32 <= b.len() {
                let v = _mm256_loadu_si256(b.as_ptr().add(at).cast());
                let hits = _mm256_or_si256(_mm256_cmpeq_epi8(v, xs), _mm256_cmpeq_epi8(v, ys));
                let mask = _mm256_movemask_epi8(hits) as u32;
                if mask != 0 {
                    return Some(at + mask.trailing_zeros() as usize);
                }
                at += 32;
            }
        }
        b[at..].iter().position(|&c| c == x || c == y).map(|i| at + i)
    }
}

/// The text is not JSON; the caller redacts it as plain text instead.
#[derive(Debug)]
pub(crate) struct NotJson;

/// Appends the text of a string literal from `b[from..]` (inside the literal) up to its
/// closing quote to `out`, and returns where that quote is. A lone surrogate stands for
/// U+FFFD (see [`unicode_escape`]); an escape no reader takes, or no closing quote, is
/// not JSON.
pub(crate) fn decode_to_quote(b: &[u8], from: usize, out: &mut Vec<u8>) -> Result<usize, NotJson> {
    #[cfg(target_arch = "x86_64")]
    if super::keywords::simd::available() {
        // SAFETY: the processor has AVX2.
        return unsafe { decode_to_quote_avx2(b, from, out) };
    }
    decode_to_quote_portable(b, from, out)
}

pub(crate) fn decode_to_quote_portable(b: &[u8], from: usize, out: &mut Vec<u8>) -> Result<usize, NotJson> {
    let mut at = from;
    loop {
        let stop = at + memchr::memchr2(b'"', b'\\', &b[at..]).ok_or(NotJson)?;
        out.extend_from_slice(&b[at..stop]);
        if b[stop] == b'"' {
            return Ok(stop);
        }
        let (bytes, len, used) = escape(&b[stop..])?;
        out.extend_from_slice(&bytes[..len]);
        at = stop + used;
    }
}

/// What each one-letter escape stands for (`\\n` → newline); 0 for none. A table, not a
/// `match`: code is full of `\\n` and `\\t`, and the jump a `match` compiles to was
/// mispredicted often enough to show.
const SIMPLE_ESCAPE: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[b'/' as usize] = b'/';
    table[b'b' as usize] = 0x08;
    table[b'f' as usize] = 0x0c;
    table[b'n' as usize] = b'\n';
    table[b'r' as usize] = b'\r';
    table[b't' as usize] = b'\t';
    table
};

/// The escape at the start of `s` (which starts with `\\`): the UTF-8 it stands for (up
/// to four bytes, and how many), and how many bytes of `s` it took.
#[inline]
fn escape(s: &[u8]) -> Result<([u8; 4], usize, usize), NotJson> {
    let letter = *s.get(1).ok_or(NotJson)?;
    match SIMPLE_ESCAPE[usize::from(letter)] {
        0 if letter == b'u' => {
            let (c, used) = unicode_escape(s)?;
            let mut utf8 = [0u8; 4];
            let len = c.encode_utf8(&mut utf8).len();
            Ok((utf8, len, used))
        }
        0 => Err(NotJson),
        byte => Ok(([byte, 0, 0, 0], 1, 2)),
    }
}

/// The character of a `\uXXXX` escape (or a surrogate pair of two) at the start of `s`,
/// and how many bytes it took.
///
/// A lone surrogate (broken UTF-16: a tool output cut in the middle of an emoji, once
/// serialised) stands for U+FFFD, as JavaScript's and the WHATWG decoders read it. The
/// record is still JSON to Claude Code and to every reader but serde_json; refusing it
/// sent the whole record to the plain-text reading, where a secret spelled with escapes
/// in any other string of it passed. A string kept as it was keeps its escape; one that
/// has a secret redacted is written back with U+FFFD in its place.
fn unicode_escape(s: &[u8]) -> Result<(char, usize), NotJson> {
    let hex = |at: usize| -> Result<u32, NotJson> {
        let digits = s.get(at..at + 4).ok_or(NotJson)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(NotJson);
        }
        Ok(digits.iter().fold(0, |n, d| n * 16 + (*d as char).to_digit(16).unwrap_or(0)))
    };
    let first = hex(2)?;
    if !(0xD800..0xE000).contains(&first) {
        return char::from_u32(first).map(|c| (c, 6)).ok_or(NotJson);
    }
    let low = |n: u32| (0xDC00..0xE000).contains(&n);
    // A high surrogate and a low one after it make one character; anything else is
    // U+FFFD for this escape, and the next escape is read on its own.
    if !low(first) && s.get(6..8) == Some(b"\\u") {
        let second = hex(8)?;
        if low(second) {
            let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            return char::from_u32(c).map(|c| (c, 12)).ok_or(NotJson);
        }
    }
    Ok((char::REPLACEMENT_CHARACTER, 6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::tests::Rng;

    #[test]
    fn finds_what_memchr_finds() {
        let mut r = Rng(0x6a50);
        for _ in 0..20_000 {
            let len = r.below(200);
            // Mostly plain bytes, so that the first hit lands anywhere, often past 32.
            let text: Vec<u8> = (0..len)
                .map(|_| match r.below(60) {
                    0 => b'"',
                    1 => b'\\',
                    _ => b"ab \n\x00\xff{}:"[r.below(9)],
                })
                .collect();
            for from in [0, len / 3, len.saturating_sub(1)] {
                let t = &text[from.min(len)..];
                assert_eq!(quote_or_backslash(t), memchr::memchr2(b'"', b'\\', t), "{t:?}");
            }
        }
    }
}
