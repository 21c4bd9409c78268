//! Finding every occurrence of the rules' keywords, overlapping ones included.
//!
//! Each keyword is anchored on its rarest three bytes. The scan tests every position's
//! three bytes against a table of hashed anchors, a byte per hash so that a test
//! is one load, positions independent of each other, and checks the few that pass
//! against the keywords anchored there, eight bytes at a time. Where the processor has
//! AVX2, eight positions are hashed, looked up and tested in one step, the byte after
//! each position's three included: three bytes are a loose anchor on real text, where
//! three candidates in five were false ("ssi" of "session" in "missing"), and the
//! fourth byte turns most of those away (the only `unsafe` here, checked at run time
//! and against the portable test by a test).
//!
//! Why not an Aho-Corasick automaton: over the rules' 500-odd keywords its DFA takes
//! 800 KiB, and its scan is a chain of dependent table loads, one per byte, mostly from
//! L2. On this project's transcripts it ran at about 500 MB/s and this at about 900 MB/s,
//! and the scan is the whole cost of text without secrets. The tests check this finder
//! against the aho-corasick crate's on every rule example, the corpus and random text.

/// Bits of the anchor hash. A byte per hash, not a bit, so that testing a position is
/// one load without a shift; 2^17 of them (128 KiB, in L2, the hot part in L1) leave
/// about one false candidate in a thousand positions. On real transcripts 2^15 (all
/// in L1) was slower: its false candidates cost more than the misses.
const HASH_BITS: u32 = 17;
const TABLE: usize = 1 << HASH_BITS;
/// Anchors are listed by the hash's top bits; the check compares the trigram itself.
const GROUP_SHIFT: u32 = 6;
/// Positions the AVX2 scan tests before it looks at any candidate among them.
#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 64;

/// A keyword anchored at `offset` on `trigram` (three bytes, little-endian).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    /// The keyword's first eight bytes (fewer for a shorter one, the rest zero) and the
    /// mask of those that count: most keywords are compared with one load.
    head: u64,
    mask: u64,
    trigram: u32,
    keyword: u16,
    offset: u8,
    len: u8,
}

pub(crate) struct Keywords {
    keywords: Vec<Box<[u8]>>,
    /// Where some anchor hashes, the classes ([`class`]) of the bytes that follow it in
    /// its keywords, a bit each, all eight when it ends one; else 0. The AVX2 scan tests
    /// the byte after a position's three too: "session" is anchored on "ssi", which
    /// "missing", "possible" and "assign" hold as well.
    marks: Box<[u8; TABLE]>,
    /// `anchors[groups[g]..groups[g + 1]]` are the anchors whose hash is in group `g`
    /// (its top bits): a few kilobytes to build at start-up, not a slot per hash.
    groups: Box<[u32]>,
    anchors: Box<[Anchor]>,
}

#[inline(always)]
fn hash(trigram: u32) -> u32 {
    trigram.wrapping_mul(MULTIPLIER) >> (32 - HASH_BITS)
}

/// Fibonacci hashing's multiplier, 2^32 over the golden ratio.
const MULTIPLIER: u32 = 0x9E37_79B1;

/// One of eight classes of a byte, for the test of the byte after an anchor: the low
/// bits mixed with the next three, so that the lower-case letters spread over all eight.
#[inline(always)]
fn class(b: u8) -> u32 {
    u32::from(b ^ (b >> 3)) & 7
}

/// Up to eight bytes as a little-endian word, zero above them.
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    bytes.iter().take(8).rev().fold(0, |w, &b| w << 8 | u64::from(b))
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
        let mut marks = Box::new([0u8; TABLE]);
        let mut anchored: Vec<(u32, Anchor)> = Vec::with_capacity(keywords.len());
        for (id, kw) in keywords.iter().enumerate() {
            let kw = kw.as_ref();
            assert!((3..=255).contains(&kw.len()), "keyword {kw:?} is not 3 to 255 bytes long");
            // Case ignored: code writes `Session` as often as `session`. Anchored on its
            // capital, `Session` also woke `session`'s check at every "ssi" it holds, a
            // candidate in vain; now both share one anchor and one check.
            let rarity =
                |i: usize| kw[i..i + 3].iter().map(|&b| commonness(b.to_ascii_lowercase())).product::<f64>();
            let offset = (0..kw.len() - 2).min_by(|&a, &b| rarity(a).total_cmp(&rarity(b))).unwrap_or(0);
            let trigram = u32::from_le_bytes([kw[offset], kw[offset + 1], kw[offset + 2], 0]);
            let h = hash(trigram);
            marks[h as usize] |= match kw.get(offset + 3) {
                Some(&next) => 1 << class(next),
                None => u8::MAX,
            };
            let n = kw.len().min(8);
            let mut head = [0u8; 8];
            head[..n].copy_from_slice(&kw[..n]);
            let anchor = Anchor {
                head: u64::from_le_bytes(head),
                mask: if n == 8 { u64::MAX } else { (1 << (8 * n)) - 1 },
                trigram,
                keyword: id as u16,
                offset: offset as u8,
                len: kw.len() as u8,
            };
            anchored.push((h >> GROUP_SHIFT, anchor));
        }
        anchored.sort_by_key(|(g, _)| *g);
        let mut groups = vec![0u32; (TABLE >> GROUP_SHIFT) + 1];
        for (g, _) in &anchored {
            groups[*g as usize + 1] += 1;
        }
        for i in 1..groups.len() {
            groups[i] += groups[i - 1];
        }
        Keywords {
            keywords: keywords.iter().map(|k| k.as_ref().into()).collect(),
            marks,
            groups: groups.into_boxed_slice(),
            anchors: anchored.into_iter().map(|(_, a)| a).collect(),
        }
    }

    /// Calls `found(start, end, keyword)` for every occurrence of every keyword in
    /// `text`, in the order of their anchors: by line, since no keyword holds a newline.
    #[inline]
    pub(crate) fn each(&self, text: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        // A fixed length, so that the hash's range proves every index in bounds.
        let marks: &[u8; TABLE] = &self.marks;
        let mut at = 0;
        #[cfg(target_arch = "x86_64")]
        if simd::available() {
            // SAFETY: the processor has AVX2.
            at = unsafe { self.each_avx2(text, &mut found) };
        }
        // Six positions per eight-byte load; the table tests do not wait on each other.
        while at + 8 <= text.len() {
            let word = u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or([0; 8]));
            let mut marked = 0u32;
            for k in 0..6 {
                marked |= u32::from(marks[hash((word >> (8 * k)) as u32 & 0xFF_FFFF) as usize] != 0) << k;
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
            if marks[hash(trigram) as usize] != 0 {
                self.check(text, at, trigram, &mut found);
            }
            at += 1;
        }
    }

    /// [`Keywords::each`] over `text`, eight positions hashed at once and 64 tested before
    /// the candidates among them are checked; returns where it stopped (the end).
    ///
    /// # Safety
    ///
    /// The processor must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn each_avx2(&self, text: &[u8], found: &mut impl FnMut(usize, usize, usize)) -> usize {
        let marks: &[u8; TABLE] = &self.marks;
        let mut at = 0;
        // Eight steps' marks collected into one mask before any is looked at: a branch
        // after each step waited on its loads and was mispredicted one step in eight,
        // as often as a candidate turns up.
        while at + BLOCK + 8 <= text.len() {
            let block: &[u8; BLOCK + 8] = text[at..at + BLOCK + 8].try_into().unwrap_or(&[0; BLOCK + 8]);
            let mut marked = 0u64;
            for step in 0..BLOCK / 8 {
                let bytes: &[u8; 16] = block[8 * step..8 * step + 16].try_into().unwrap_or(&[0; 16]);
                // SAFETY: this function runs only where AVX2 is.
                marked |= u64::from(unsafe { simd::marked(bytes, marks) }) << (8 * step);
            }
            while marked != 0 {
                let k = marked.trailing_zeros() as usize;
                marked &= marked - 1;
                let trigram = u32::from_le_bytes([block[k], block[k + 1], block[k + 2], 0]);
                self.check(text, at + k, trigram, found);
            }
            at += BLOCK;
        }
        while at + 16 <= text.len() {
            let bytes: &[u8; 16] = text[at..at + 16].try_into().unwrap_or(&[0; 16]);
            // SAFETY: this function runs only where AVX2 is.
            let mut marked = unsafe { simd::marked(bytes, marks) };
            while marked != 0 {
                let k = marked.trailing_zeros() as usize;
                marked &= marked - 1;
                let trigram = u32::from_le_bytes([bytes[k], bytes[k + 1], bytes[k + 2], 0]);
                self.check(text, at + k, trigram, found);
            }
            at += 8;
        }
        // The last positions, and every position of a text under 16 bytes (most strings
        // of a transcript: a type, a name, a timestamp), zero-padded in registers: one
        // position at a time cost more than the rest of the scan of such a string. A
        // position whose three bytes run into the padding is masked off; the byte after
        // the last real one reads as padding, which only lets more candidates through,
        // and `check` compares them with the text itself.
        let rest = &text[at..];
        if rest.len() >= 3 {
            let (low, high) = match rest.split_at_checked(8) {
                Some((first, second)) => {
                    (u64::from_le_bytes(first.try_into().unwrap_or([0; 8])), word(second))
                }
                None => (word(rest), 0),
            };
            let positions = rest.len() - 2;
            // SAFETY: this function runs only where AVX2 is.
            let mut marked = unsafe { simd::marked_words(low, high, marks) };
            if positions > 8 {
                // SAFETY: as above.
                marked |= unsafe { simd::marked_words(high, 0, marks) } << 8;
            }
            marked &= (1 << positions) - 1;
            while marked != 0 {
                let k = marked.trailing_zeros() as usize;
                marked &= marked - 1;
                let trigram = u32::from_le_bytes([rest[k], rest[k + 1], rest[k + 2], 0]);
                self.check(text, at + k, trigram, found);
            }
        }
        text.len()
    }

    /// The keywords anchored on `trigram`, which is at `at` in `text`.
    #[inline(never)]
    fn check(&self, text: &[u8], at: usize, trigram: u32, found: &mut impl FnMut(usize, usize, usize)) {
        let g = (hash(trigram) >> GROUP_SHIFT) as usize;
        for a in &self.anchors[self.groups[g] as usize..self.groups[g + 1] as usize] {
            let offset = usize::from(a.offset);
            let len = usize::from(a.len);
            if a.trigram != trigram || at < offset || at - offset + len > text.len() {
                continue;
            }
            let start = at - offset;
            let head = match text.get(start..start + 8) {
                Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
                None => {
                    let mut b = [0u8; 8];
                    b[..text.len() - start].copy_from_slice(&text[start..]);
                    u64::from_le_bytes(b)
                }
            };
            if head & a.mask == a.head
                && (len <= 8 || text[start + 8..start + len] == self.keywords[usize::from(a.keyword)][8..])
            {
                found(start, start + len, usize::from(a.keyword));
            }
        }
    }
}

/// The anchor hashes of eight positions at once with AVX2, where the processor has it:
/// the scan is the whole cost of text without secrets, and hashing was most of the scan.
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    pub(crate) fn available() -> bool {
        static AVX2: OnceLock<bool> = OnceLock::new();
        *AVX2.get_or_init(|| is_x86_feature_detected!("avx2"))
    }

    /// Bit `k` set, for `k` in `0..8`, when the anchor hash of `bytes[k..k + 3]` is
    /// marked with the class of `bytes[k + 3]`: eight positions hashed, their marks
    /// looked up and tested in a few instructions.
    ///
    /// # Safety
    ///
    /// The processor must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn marked(bytes: &[u8; 16], marks: &[u8; super::TABLE]) -> u32 {
        // SAFETY: the load reads the 16 bytes of `bytes`; AVX2 is there, as the caller
        // promised.
        unsafe { marked_in(_mm_loadu_si128(bytes.as_ptr().cast()), marks) }
    }

    /// [`marked`] of the 16 bytes held in `low` and `high` (little-endian): a text's last
    /// bytes assembled in registers, since storing them to a buffer and loading that
    /// as a vector stalls the load until the stores land.
    ///
    /// # Safety
    ///
    /// The processor must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn marked_words(low: u64, high: u64, marks: &[u8; super::TABLE]) -> u32 {
        // SAFETY: AVX2 is there, as the caller promised.
        unsafe { marked_in(_mm_set_epi64x(high as i64, low as i64), marks) }
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn marked_in(bytes: __m128i, marks: &[u8; super::TABLE]) -> u32 {
        // SAFETY: AVX2 is there, as the caller promised; the one store writes the eight
        // lanes of `index`.
        unsafe {
            let v = _mm256_broadcastsi128_si256(bytes);
            // Lane k of the 32-bit lanes holds bytes k, k + 1, k + 2 (each 128-bit half
            // shuffles its own copy of the 16 bytes; -1 writes a zero).
            #[rustfmt::skip]
            let trigrams = _mm256_setr_epi8(
                0, 1, 2, -1, 1, 2, 3, -1, 2, 3, 4, -1, 3, 4, 5, -1,
                4, 5, 6, -1, 5, 6, 7, -1, 6, 7, 8, -1, 7, 8, 9, -1,
            );
            // And byte k + 3, the one after.
            #[rustfmt::skip]
            let after = _mm256_setr_epi8(
                3, -1, -1, -1, 4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1,
                7, -1, -1, -1, 8, -1, -1, -1, 9, -1, -1, -1, 10, -1, -1, -1,
            );
            let t = _mm256_shuffle_epi8(v, trigrams);
            let h = _mm256_srli_epi32::<{ 32 - super::HASH_BITS as i32 }>(_mm256_mullo_epi32(
                t,
                _mm256_set1_epi32(super::MULTIPLIER as i32),
            ));
            // Each lane's mark, looked up one lane at a time: on the AMD processors this
            // runs on, a gather instruction cost more than eight loads (the keyword scan
            // was a tenth faster on the real transcripts). The mask proves each index in
            // bounds.
            let mut index = [0u32; 8];
            _mm256_storeu_si256(index.as_mut_ptr().cast(), h);
            let mark = |lane: usize| i32::from(marks[index[lane] as usize & (super::TABLE - 1)]);
            let got =
                _mm256_setr_epi32(mark(0), mark(1), mark(2), mark(3), mark(4), mark(5), mark(6), mark(7));
            let next = _mm256_shuffle_epi8(v, after);
            let class =
                _mm256_and_si256(_mm256_xor_si256(next, _mm256_srli_epi32::<3>(next)), _mm256_set1_epi32(7));
            let bit = _mm256_sllv_epi32(_mm256_set1_epi32(1), class);
            let miss = _mm256_cmpeq_epi32(_mm256_and_si256(got, bit), _mm256_setzero_si256());
            !(_mm256_movemask_ps(_mm256_castsi256_ps(miss)) as u32) & 0xFF
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
        // across the scan's eight-byte steps and 64-byte blocks, in texts shorter than a
        // step and in texts of several blocks.
        let mut r = Rng(7);
        for round in 0..4000 {
            let mut t = Vec::new();
            for _ in 0..r.below(if round % 4 == 0 { 80 } else { 12 }) {
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
        assert!(found > 5_000, "{found}");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn eight_positions_at_once_are_the_positions_one_at_a_time() {
        if !simd::available() {
            eprintln!("no AVX2 here: the scan runs the portable loop only");
            return;
        }
        let mut r = Rng(3);
        for round in 0..10_000 {
            // Sparse and dense tables, and marks at the table's last indices.
            let mut marks = Box::new([0u8; TABLE]);
            for _ in 0..[16, 4096, 100_000][round % 3] {
                marks[r.below(TABLE)] = r.below(256) as u8;
            }
            marks[TABLE - 3..TABLE].fill(0xFF);
            let bytes: [u8; 16] = std::array::from_fn(|_| r.below(256) as u8);
            // SAFETY: AVX2 is present.
            let got = unsafe { simd::marked(&bytes, &marks) };
            let mut want = 0;
            for k in 0..8 {
                let h = hash(u32::from_le_bytes([bytes[k], bytes[k + 1], bytes[k + 2], 0]));
                want |= u32::from(marks[h as usize] & (1 << class(bytes[k + 3])) != 0) << k;
            }
            assert_eq!(got, want, "{bytes:?}");
        }
        // A position whose hash is the table's last index.
        let last =
            (0u32..1 << 24).find(|t| hash(*t) as usize == TABLE - 1).expect("some trigram hashes there");
        let mut bytes = [b' '; 16];
        bytes[..3].copy_from_slice(&last.to_le_bytes()[..3]);
        bytes[3] = b'o';
        let mut marks = Box::new([0u8; TABLE]);
        // SAFETY: AVX2 is present.
        assert_eq!(unsafe { simd::marked(&bytes, &marks) } & 1, 0);
        marks[TABLE - 1] = 1 << class(b'o');
        // SAFETY: as above.
        assert_eq!(unsafe { simd::marked(&bytes, &marks) } & 1, 1);
    }

    #[test]
    fn classes_spread_the_letters() {
        let mut seen = [0; 8];
        for b in b'a'..=b'z' {
            seen[class(b) as usize] += 1;
        }
        assert!(seen.iter().all(|n| (2..=5).contains(n)), "{seen:?}");
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
