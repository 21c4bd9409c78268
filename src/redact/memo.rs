//! A verdict remembered per short name, per thread: transcripts repeat the same keys and
//! the same variable names line after line, and judging a name costs more than finding
//! it again. Used for JSON keys (`json.rs`) and for the names the gates judge (`gate.rs`).

use std::cell::RefCell;
use std::thread::LocalKey;

/// Names up to this long are remembered; longer ones are judged each time.
pub(crate) const MAX: usize = 32;

#[derive(Clone, Copy)]
struct Slot<V> {
    len: u8,
    /// The first and the last eight bytes (fewer, zero-padded, for a shorter name): a name
    /// of up to 16 bytes is these, and most names are that short.
    ends: (u64, u64),
    name: [u8; MAX],
    value: V,
}

/// Slots in pairs: a name may sit in either of its pair, so two names used on every line
/// do not push each other out by sharing a slot.
pub(crate) struct Memo<V: Copy> {
    slots: Box<[Option<Slot<V>>]>,
}

impl<V: Copy> Memo<V> {
    /// A memo of at least `pairs` pairs of slots (a power of two, so that a pair is
    /// picked with a mask, not a division).
    pub(crate) fn new(pairs: usize) -> Memo<V> {
        Memo { slots: vec![None; 2 * pairs.max(1).next_power_of_two()].into_boxed_slice() }
    }

    fn pair(&self, ends: (u64, u64), len: usize) -> usize {
        let h = (ends.0 ^ ends.1.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> 32) as usize & (self.slots.len() / 2 - 1)) * 2
    }

    /// The value remembered for `name`, if any.
    pub(crate) fn get(&self, name: &[u8]) -> Option<V> {
        let ends = name_ends(name);
        let at = self.pair(ends, name.len());
        self.slots[at..at + 2]
            .iter()
            .flatten()
            .find(|s| {
                usize::from(s.len) == name.len()
                    && s.ends == ends
                    && (name.len() <= 16 || s.name[..name.len()] == *name)
            })
            .map(|s| s.value)
    }

    /// Remembers `value` for `name` (at most [`MAX`] bytes long).
    pub(crate) fn put(&mut self, name: &[u8], value: V) {
        let ends = name_ends(name);
        let at = self.pair(ends, name.len());
        let mut bytes = [0; MAX];
        bytes[..name.len()].copy_from_slice(name);
        let slot = Slot { len: name.len() as u8, ends, name: bytes, value };
        // An empty slot of the pair; else the older name goes and the newer moves up.
        let to = match (self.slots[at], self.slots[at + 1]) {
            (None, _) => at,
            (Some(_), None) => at + 1,
            (Some(_), Some(newer)) => {
                self.slots[at] = Some(newer);
                at + 1
            }
        };
        self.slots[to] = Some(slot);
    }
}

/// `judge()`'s verdict on `name`, remembered in this thread's `memo`. The memo is not
/// borrowed while `judge` runs, so a judge may use another memo, or this one.
pub(crate) fn remembered<V: Copy>(
    memo: &'static LocalKey<RefCell<Memo<V>>>,
    name: &[u8],
    judge: impl FnOnce() -> V,
) -> V {
    if name.len() > MAX {
        return judge();
    }
    if let Some(value) = memo.with_borrow(|m| m.get(name)) {
        return value;
    }
    let value = judge();
    memo.with_borrow_mut(|m| m.put(name, value));
    value
}

/// The first and the last eight bytes of `name`, without a call to `memcpy`.
fn name_ends(name: &[u8]) -> (u64, u64) {
    match name.len() {
        8.. => (
            u64::from_le_bytes(name[..8].try_into().unwrap_or_default()),
            u64::from_le_bytes(name[name.len() - 8..].try_into().unwrap_or_default()),
        ),
        _ => {
            let word = name.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
            (word, word)
        }
    }
}

/// Lines up to this long are remembered with what was found in them; longer ones are
/// read each time (a line's engines cost more the longer it is, but long lines rarely
/// come twice).
pub(crate) const LINE_MAX: usize = 256;

/// What the engines found in a line, remembered per thread with what else decided it
/// (`tag`: the rules woken, how the line was read). A transcript shows the same lines
/// again and again: a file read plain and numbered, then whole in an edit's result; the
/// same code line in several hunks. The engines cost thousands of instructions a line,
/// a lookup a few dozen.
pub(crate) struct Lines<T: Copy + Eq, V: Clone> {
    slots: Box<[Option<Line<T, V>>]>,
}

struct Line<T, V> {
    hash: u64,
    tag: T,
    line: Box<[u8]>,
    value: V,
}

impl<T: Copy + Eq, V: Clone> Lines<T, V> {
    /// A memo of at least `pairs` pairs of slots, as [`Memo`].
    pub(crate) fn new(pairs: usize) -> Lines<T, V> {
        Lines { slots: (0..2 * pairs.max(1).next_power_of_two()).map(|_| None).collect() }
    }

    fn pair(&self, hash: u64) -> usize {
        ((hash >> 32) as usize & (self.slots.len() / 2 - 1)) * 2
    }

    /// The value remembered for `line` with `tag`, if any.
    pub(crate) fn get(&self, line: &[u8], tag: T) -> Option<V> {
        let hash = line_hash(line);
        let at = self.pair(hash);
        self.slots[at..at + 2]
            .iter()
            .flatten()
            .find(|s| s.hash == hash && s.tag == tag && *s.line == *line)
            .map(|s| s.value.clone())
    }

    /// Remembers `value` for `line` (at most [`LINE_MAX`] bytes long) with `tag`.
    pub(crate) fn put(&mut self, line: &[u8], tag: T, value: V) {
        let hash = line_hash(line);
        let at = self.pair(hash);
        let slot = Line { hash, tag, line: line.into(), value };
        // As in `Memo::put`: an empty slot of the pair, else the older line goes.
        let to = if self.slots[at].is_none() {
            at
        } else {
            if self.slots[at + 1].is_some() {
                self.slots[at] = self.slots[at + 1].take();
            }
            at + 1
        };
        self.slots[to] = Some(slot);
    }
}

/// A hash of a line, eight bytes a step.
fn line_hash(line: &[u8]) -> u64 {
    let mut h = line.len() as u64;
    let mut words = line.chunks_exact(8);
    for w in &mut words {
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w.try_into().unwrap_or_default())).wrapping_mul(K);
    }
    let rest = words.remainder().iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
    (h.rotate_left(5) ^ rest).wrapping_mul(K)
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart_by_bytes_and_tag() {
        let mut m: Lines<u8, u32> = Lines::new(2);
        m.put(b"password: x", 1, 10);
        m.put(b"password: y", 1, 11);
        assert_eq!(m.get(b"password: x", 1), Some(10));
        assert_eq!(m.get(b"password: y", 1), Some(11));
        assert_eq!(m.get(b"password: x", 2), None);
        assert_eq!(m.get(b"password: z", 1), None);
        // Four slots: later lines push earlier ones out, never answer for them.
        for i in 0..100u32 {
            m.put(format!("line {i}").as_bytes(), 1, i);
        }
        for i in 0..100u32 {
            assert!(m.get(format!("line {i}").as_bytes(), 1).is_none_or(|v| v == i));
        }
        assert_eq!(m.get(b"line 99", 1), Some(99));
    }
}
