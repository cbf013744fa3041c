//! AsyncLock's word (src/robust.rs): who holds it, and the releases the
//! addon makes. (tests/loom_robust.rs checks them against every
//! interleaving with the lock's JavaScript steps.)

use std::sync::atomic::AtomicI32;
use std::sync::atomic::Ordering::SeqCst;

use atomics_waitasync::robust::{
  held_by, owner_of, release, release_dead, ABANDONED, FREE, MAX_OWNER, WAITERS,
};

#[test]
fn a_word_names_its_owner_and_free_words_none() {
  assert_eq!(owner_of(FREE), 0);
  assert_eq!(owner_of(ABANDONED), 0);
  assert_eq!(owner_of(held_by(7)), 7);
  assert_eq!(owner_of(held_by(7) | WAITERS), 7);
  assert_eq!(owner_of(held_by(MAX_OWNER) | WAITERS), MAX_OWNER);
  assert_eq!(
    held_by(MAX_OWNER) | WAITERS,
    i32::MAX,
    "the largest word is an i32"
  );
}

#[test]
fn a_dead_owners_word_becomes_abandoned_and_says_whether_to_wake() {
  let word = AtomicI32::new(held_by(3));
  assert_eq!(release_dead(&word, 3), Some(false));
  assert_eq!(word.load(SeqCst), ABANDONED);

  let word = AtomicI32::new(held_by(3) | WAITERS);
  assert_eq!(release_dead(&word, 3), Some(true));
  assert_eq!(word.load(SeqCst), ABANDONED);
}

#[test]
fn another_owners_word_and_free_words_are_left_alone() {
  for value in [FREE, ABANDONED, held_by(4), held_by(4) | WAITERS] {
    let word = AtomicI32::new(value);
    assert_eq!(release_dead(&word, 3), None);
    assert_eq!(word.load(SeqCst), value);
  }
}

#[test]
fn a_contended_release_frees_only_the_callers_hold() {
  let word = AtomicI32::new(held_by(3) | WAITERS);
  assert_eq!(release(&word, held_by(3) | WAITERS), held_by(3) | WAITERS);
  assert_eq!(word.load(SeqCst), FREE);

  let word = AtomicI32::new(held_by(4) | WAITERS);
  assert_eq!(release(&word, held_by(3) | WAITERS), held_by(4) | WAITERS);
  assert_eq!(word.load(SeqCst), held_by(4) | WAITERS);
}
