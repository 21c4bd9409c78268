//! A wallet's recovery phrase (BIP-39): 12, 15, 18, 21 or 24 words, each from the
//! standard's English list of 2048. No name or shape beside it says "secret" (`MNEMONIC`
//! is no secret's name, and the phrase is lower-case words), but the phrase is the whole
//! wallet. Many common words are on the list, so the words must be the whole value: a run
//! of lower-case list words, one blank apart, with nothing of a sentence on either side
//! (a quote, `=`, `:`, a bracket or the line's end), on a line that names a mnemonic, a
//! seed or a phrase. The checksum is not verified: a phrase mistyped or made up for a
//! test wallet still leaks one.

use std::sync::LazyLock;

use super::span::Span;

/// The English list, one word a line, as the BIP-39 repository gives it (sorted).
static WORDS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| include_str!("bip39-english.txt").lines().collect());

/// The lengths the standard allows: 128 to 256 bits of entropy, by 32.
const LENGTHS: [usize; 5] = [12, 15, 18, 21, 24];

fn listed(word: &[u8]) -> bool {
    std::str::from_utf8(word).is_ok_and(|w| WORDS.binary_search(&w).is_ok())
}

/// A byte that would make a run of words part of a longer token.
fn joins(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b'@' | b'$')
}

/// What may stand before the phrase: a value's opening, never a sentence's word.
fn opens_value(before: &[u8]) -> bool {
    let b = before.trim_ascii_end();
    b.last().is_none_or(|c| b"\"'`=:([{>,".contains(c))
}

/// What may follow it: a value's close or the line's end.
fn closes_value(after: &[u8]) -> bool {
    let a = after.trim_ascii_start();
    a.first().is_none_or(|c| b"\"'`,;)]}<#\\".contains(c))
}

/// The recovery phrases standing as whole values in `line`.
pub(crate) fn spans(line: &[u8], out: &mut Vec<Span>) {
    // Eleven blanks at least between twelve words: most lines are turned away here.
    if memchr::memchr_iter(b' ', line).count() < LENGTHS[0] - 1 {
        return;
    }
    let mut i = 0;
    while i < line.len() {
        if !line[i].is_ascii_lowercase() || (i > 0 && joins(line[i - 1])) {
            i += 1;
            continue;
        }
        let (end, words, all_listed) = run(line, i);
        if all_listed
            && LENGTHS.contains(&words)
            && line.get(end).is_none_or(|&b| !joins(b))
            && opens_value(&line[..i])
            && closes_value(&line[end..])
        {
            out.push(Span { start: i, end, rule: "mnemonic" });
        }
        i = end.max(i + 1);
    }
}

/// The run of lower-case words one blank apart that starts at `start`: where it ends, how
/// many words it has, and whether every one is on the list.
fn run(line: &[u8], start: usize) -> (usize, usize, bool) {
    let (mut j, mut words, mut all) = (start, 0, true);
    loop {
        let w = j;
        while j < line.len() && line[j].is_ascii_lowercase() {
            j += 1;
        }
        words += 1;
        all &= listed(&line[w..j]);
        if line.get(j) == Some(&b' ') && line.get(j + 1).is_some_and(u8::is_ascii_lowercase) {
            j += 1;
        } else {
            return (j, words, all);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        spans(line.as_bytes(), &mut out);
        out.iter().map(|s| &line[s.start..s.end]).collect()
    }

    const TWELVE: &str =
        "velvet wagon salute nephew wagon velvet ripple voyage pioneer nephew humble gravity";

    #[test]
    fn the_list_is_the_standard_one() {
        assert_eq!(WORDS.len(), 2048);
        assert!(WORDS.windows(2).all(|w| w[0] < w[1]), "sorted, each word once");
        assert!(listed(b"abandon") && listed(b"zoo") && !listed(b"the"));
    }

    #[test]
    fn a_phrase_standing_as_a_whole_value_is_found() {
        assert_eq!(found(&format!("MNEMONIC=\"{TWELVE}\"")), [TWELVE]);
        assert_eq!(found(&format!("  mnemonic: {TWELVE}")), [TWELVE]);
        assert_eq!(found(&format!("{{\"seedPhrase\": \"{TWELVE}\"}}")), [TWELVE]);
        let long = format!("{TWELVE} {TWELVE}");
        assert_eq!(found(&format!("SEED_PHRASE='{long}'")), [long.as_str()]);
    }

    #[test]
    fn a_run_of_the_wrong_length_or_with_words_off_the_list_is_left() {
        let eleven = TWELVE.rsplit_once(' ').unwrap().0;
        let thirteen = format!("{TWELVE} oyster");
        assert!(found(&format!("MNEMONIC=\"{eleven}\"")).is_empty());
        assert!(found(&format!("MNEMONIC=\"{thirteen}\"")).is_empty());
        // "the" is on no list: a sentence's little words break the run.
        assert!(found(&format!("MNEMONIC=\"{eleven} the\"")).is_empty());
    }

    #[test]
    fn list_words_inside_a_sentence_are_prose() {
        // Twelve list words, but a sentence's words stand around them.
        let sentence = format!("the seed phrase is {TWELVE} according to the notes");
        assert!(found(&sentence).is_empty());
        assert!(found(&format!("Seed {TWELVE}")).is_empty());
        assert!(found(&format!("seed: {TWELVE} and more")).is_empty());
        // Part of a longer token: a path, a capitalised first word, a digit after.
        assert!(found(&format!("seed: \"x/{TWELVE}\"")).is_empty());
        assert!(found(&format!("seed: \"{TWELVE}2\"")).is_empty());
    }
}
