//! Finding every occurrence of the rules' keywords, overlapping ones included.
//!
//! Each keyword is anchored on its rarest three bytes. The scan tests every position's
//! three bytes against a 32 KiB bitmap of hashed anchors, positions independent of each
//! other, and checks the few that pass against the keywords anchored there.
//!
//! Why not an Aho-Corasick automaton: over the rules' 500-odd keywords its DFA takes
//! 800 KiB, and its scan is a chain of dependent table loads, one per byte, mostly from
//! L2. On this project's transcripts it ran at about 500 MB/s and this at about 900 MB/s,
//! and the scan is the whole cost of text without secrets. The tests check this finder
//! against the aho-corasick crate's on every rule example, the corpus and random text.

/// Bits of the anchor hash: 2^18 bits is a 32 KiB bitmap, which stays in L1 and leaves
/// few false candidates for the few hundred anchors.
const HASH_BITS: u32 = 18;
/// Anchors are grouped by the hash's top bits, one bitmap word's worth per group.
const GROUP_SHIFT: u32 = 6;

/// A keyword anchored at `offset` on `trigram` (three bytes, little-endian).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    trigram: u32,
    keyword: u16,
    offset: u8,
}

pub(crate) struct Keywords {
    keywords: Vec<Box<[u8]>>,
    bits: Box<[u64]>,
    /// `anchors[groups[g]..groups[g + 1]]` are the anchors whose hash is in group `g`.
    groups: Box<[u32]>,
    anchors: Box<[Anchor]>,
}

#[inline(always)]
fn hash(trigram: u32) -> u32 {
    trigram.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)
}

/// How often a byte turns up in text, roughly: English letter frequencies for lower case,
/// rarer for the rest. Only the order matters, to pick each keyword's rarest bytes.
fn commonness(b: u8) -> f64 {
    const LOWER: [f64; 26] = [
        8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4, 6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1,
        2.8, 1.0, 2.4, 0.15, 2.0, 0.07,
    ];
    match b {
        b'a'..=b'z' => LOWER[(b - b'a') as usize],
        b'A'..=b'Z' => 0.3,
        b'0'..=b'9' => 0.5,
        b' ' => 15.0,
        _ => 1.0,
    }
}

impl Keywords {
    /// Every keyword must be 3 to 255 bytes long; there may be at most 65,536.
    pub(crate) fn new<K: AsRef<[u8]>>(keywords: &[K]) -> Keywords {
        assert!(keywords.len() <= usize::from(u16::MAX) + 1, "too many keywords");
        let groups_len = 1usize << (HASH_BITS - GROUP_SHIFT);
        let mut bits = vec![0u64; groups_len].into_boxed_slice();
        let mut anchored: Vec<(u32, Anchor)> = Vec::with_capacity(keywords.len());
        for (id, kw) in keywords.iter().enumerate() {
            let kw = kw.as_ref();
            assert!((3..=255).contains(&kw.len()), "keyword {kw:?} is not 3 to 255 bytes long");
            let rarity = |i: usize| kw[i..i + 3].iter().map(|&b| commonness(b)).product::<f64>();
            let offset = (0..kw.len() - 2).min_by(|&a, &b| rarity(a).total_cmp(&rarity(b))).unwrap_or(0);
            let trigram = u32::from_le_bytes([kw[offset], kw[offset + 1], kw[offset + 2], 0]);
            let h = hash(trigram);
            bits[(h >> GROUP_SHIFT) as usize] |= 1 << (h & 63);
            anchored.push((h >> GROUP_SHIFT, Anchor { trigram, keyword: id as u16, offset: offset as u8 }));
        }
        anchored.sort_by_key(|(g, _)| *g);
        let mut groups = vec![0u32; groups_len + 1];
        for (g, _) in &anchored {
            groups[*g as usize + 1] += 1;
        }
        for i in 1..groups.len() {
            groups[i] += groups[i - 1];
        }
        Keywords {
            keywords: keywords.iter().map(|k| k.as_ref().into()).collect(),
            bits,
            groups: groups.into_boxed_slice(),
            anchors: anchored.into_iter().map(|(_, a)| a).collect(),
        }
    }

    /// Calls `found(start, end, keyword)` for every occurrence of every keyword in
    /// `text`, in the order of their anchors: by line, since no keyword holds a newline.
    #[inline]
    pub(crate) fn each(&self, text: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        let bits = &*self.bits;
        let mut at = 0;
        // Six positions per eight-byte load; the bitmap tests do not wait on each other.
        while at + 8 <= text.len() {
            let word = u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or([0; 8]));
            let mut marked = 0u32;
            for k in 0..6 {
                let h = hash((word >> (8 * k)) as u32 & 0xFF_FFFF);
                marked |= (((bits[(h >> GROUP_SHIFT) as usize] >> (h & 63)) & 1) as u32) << k;
            }
            while marked != 0 {
                let k = marked.trailing_zeros() as usize;
                marked &= marked - 1;
                self.check(text, at + k, (word >> (8 * k)) as u32 & 0xFF_FFFF, &mut found);
            }
            at += 6;
        }
        while at + 3 <= text.len() {
            let trigram = u32::from_le_bytes([text[at], text[at + 1], text[at + 2], 0]);
            let h = hash(trigram);
            if bits[(h >> GROUP_SHIFT) as usize] >> (h & 63) & 1 != 0 {
                self.check(text, at, trigram, &mut found);
            }
            at += 1;
        }
    }

    /// The keywords anchored on `trigram`, which is at `at` in `text`.
    #[inline(never)]
    fn check(&self, text: &[u8], at: usize, trigram: u32, found: &mut impl FnMut(usize, usize, usize)) {
        let g = (hash(trigram) >> GROUP_SHIFT) as usize;
        for a in &self.anchors[self.groups[g] as usize..self.groups[g + 1] as usize] {
            let offset = usize::from(a.offset);
            if a.trigram != trigram || at < offset {
                continue;
            }
            let kw = &self.keywords[usize::from(a.keyword)];
            let start = at - offset;
            if text.get(start..start + kw.len()) == Some(&kw[..]) {
                found(start, start + kw.len(), usize::from(a.keyword));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::tests::Rng;

    fn ours(k: &Keywords, text: &[u8]) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        k.each(text, |s, _, id| v.push((s, id)));
        v.sort();
        v
    }

    fn theirs(ac: &aho_corasick::AhoCorasick, text: &[u8]) -> Vec<(usize, usize)> {
        let mut v: Vec<_> =
            ac.find_overlapping_iter(text).map(|m| (m.start(), m.pattern().as_usize())).collect();
        v.sort();
        v
    }

    #[test]
    fn finds_what_aho_corasick_finds() {
        let words = super::super::scan::keywords();
        let k = Keywords::new(&words);
        let ac = aho_corasick::AhoCorasick::new(&words).unwrap();
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for rule in super::super::RULES {
            texts.extend(rule.positives.iter().chain(rule.negatives).map(|t| t.as_bytes().to_vec()));
        }
        texts.extend(
            include_str!("../../fixtures/redaction/corpus.jsonl").lines().map(|l| l.as_bytes().to_vec()),
        );
        // Random text with keywords spliced in anywhere: at the ends, overlapping,
        // across the scan's eight-byte steps, in texts shorter than a step.
        let mut r = Rng(7);
        for _ in 0..3000 {
            let mut t = Vec::new();
            for _ in 0..r.below(12) {
                if r.below(2) == 0 {
                    let w = words[r.below(words.len())].as_bytes();
                    t.extend_from_slice(&w[r.below(3).min(w.len() - 1)..]);
                } else {
                    t.extend((0..r.below(9)).map(|_| b" aeks-_.:/Ab9\"="[r.below(15)]));
                }
            }
            texts.push(t);
        }
        let mut found = 0;
        for t in &texts {
            let want = theirs(&ac, t);
            assert_eq!(ours(&k, t), want, "{:?}", String::from_utf8_lossy(t));
            found += want.len();
        }
        assert!(found > 10_000, "{found}");
    }

    #[test]
    fn short_texts_and_edges() {
        let k = Keywords::new(&["abc", "bcd", "xyzzy"]);
        assert!(ours(&k, b"").is_empty());
        assert!(ours(&k, b"ab").is_empty());
        assert_eq!(ours(&k, b"abc"), [(0, 0)]);
        assert_eq!(ours(&k, b"abcd"), [(0, 0), (1, 1)]);
        assert_eq!(ours(&k, b"12345678abcd"), [(8, 0), (9, 1)]);
        assert_eq!(ours(&k, b"1234567xyzzy"), [(7, 2)]);
    }
}
