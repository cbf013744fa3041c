//! A slab: values stored in a `Vec` under stable small indexes, freed slots
//! reused first (LIFO), so the entries in use stay dense and cache-warm.
//!
//! Each env keeps its pending async waiters in one: the index travels with
//! the waiter through the registry and the mailbox, and settling is an
//! index into a vector rather than a hash lookup.

enum Slot<T> {
  Used(T),
  /// Free; links to the next free slot.
  Free(Option<u32>),
}

pub struct Slab<T> {
  slots: Vec<Slot<T>>,
  free: Option<u32>,
  len: usize,
}

impl<T> Default for Slab<T> {
  fn default() -> Self {
    Slab {
      slots: Vec::new(),
      free: None,
      len: 0,
    }
  }
}

impl<T> Slab<T> {
  /// Stores `value` and returns its index.
  pub fn insert(&mut self, value: T) -> u32 {
    self.len += 1;
    match self.free {
      Some(index) => {
        let slot = &mut self.slots[index as usize];
        if let Slot::Free(next) = *slot {
          self.free = next;
        }
        *slot = Slot::Used(value);
        index
      }
      None => {
        self.slots.push(Slot::Used(value));
        (self.slots.len() - 1) as u32
      }
    }
  }

  /// Removes and returns the value at `index`, if that slot is in use.
  pub fn take(&mut self, index: u32) -> Option<T> {
    let slot = self.slots.get_mut(index as usize)?;
    if let Slot::Free(_) = slot {
      return None;
    }
    let Slot::Used(value) = std::mem::replace(slot, Slot::Free(self.free)) else {
      unreachable!("checked above");
    };
    self.free = Some(index);
    self.len -= 1;
    if self.len == 0 && self.slots.len() > 1024 {
      // A burst is over: give its memory back.
      *self = Slab::default();
    }
    Some(value)
  }

  pub fn get_mut(&mut self, index: u32) -> Option<&mut T> {
    match self.slots.get_mut(index as usize) {
      Some(Slot::Used(value)) => Some(value),
      _ => None,
    }
  }

  pub fn len(&self) -> usize {
    self.len
  }

  pub fn is_empty(&self) -> bool {
    self.len == 0
  }

  /// Removes and returns every value.
  pub fn drain(&mut self) -> impl Iterator<Item = T> {
    let slots = std::mem::take(self).slots;
    slots.into_iter().filter_map(|slot| match slot {
      Slot::Used(value) => Some(value),
      Slot::Free(_) => None,
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn insert_take_and_reuse() {
    let mut slab = Slab::default();
    let a = slab.insert("a");
    let b = slab.insert("b");
    assert_ne!(a, b);
    assert_eq!(slab.len(), 2);
    assert_eq!(slab.take(a), Some("a"));
    assert_eq!(slab.take(a), None, "taken once");
    let c = slab.insert("c");
    assert_eq!(c, a, "freed slot reused first");
    assert_eq!(slab.get_mut(b), Some(&mut "b"));
    assert_eq!(slab.take(99), None);
    let mut rest: Vec<_> = slab.drain().collect();
    rest.sort_unstable();
    assert_eq!(rest, ["b", "c"]);
    assert!(slab.is_empty());
  }

  #[test]
  fn shrinks_after_a_burst() {
    let mut slab = Slab::default();
    let ids: Vec<u32> = (0..5000).map(|n| slab.insert(n)).collect();
    for id in ids {
      assert!(slab.take(id).is_some());
    }
    assert!(slab.slots.is_empty());
    assert_eq!(slab.insert(1), 0);
  }
}
