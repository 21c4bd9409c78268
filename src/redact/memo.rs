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
