//! The cache lines of one registry bucket must not all share hashbrown's
//! tag, and a line's keys must sit side by side.
//!
//! A bucket is chosen by the top bits of the mix of the key's 64-byte line;
//! should each bucket's map hash the line with that same mix, every key of
//! a bucket would have the same tag (hashbrown's top 7 bits of the hash)
//! and probing would degenerate to key comparisons. The map's hash must
//! spread the lines of one bucket over the tags (and over the low bits
//! hashbrown probes by), and give a line's keys consecutive positions, so
//! that neighbouring elements are found in memory already in the cache.

use std::collections::HashSet;
use std::hash::BuildHasher;

use atomics_waitasync::registry::{BuildAddressHasher, Registry};

/// The first keys of `count` lines of `first`'s bucket, lines `stride`
/// bytes apart.
fn bucket_mates(first: usize, stride: usize, count: usize) -> Vec<usize> {
  (0..count * 512)
    .map(|i| first + i * stride)
    .filter(|&key| Registry::<()>::same_bucket(first, key))
    .take(count)
    .collect()
}

#[test]
fn lines_of_one_bucket_spread_over_tags_and_probe_positions() {
  let hasher = BuildAddressHasher::default();
  // Lines at a few bases.
  for base in [0x7f12_3456_0000, 0x5555_0000_1000, 0x1000] {
    let lines = bucket_mates(base, 64, 256);
    assert_eq!(lines.len(), 256, "enough lines share a bucket");
    let hashes: Vec<u64> = lines.iter().map(|key| hasher.hash_one(key)).collect();
    let tags: HashSet<u64> = hashes.iter().map(|hash| hash >> 57).collect();
    // 256 lines over 128 tags: about 110 distinct ones if they were random.
    assert!(
      tags.len() >= 64,
      "base {base:#x}: the bucket's 256 lines have {} distinct tags",
      tags.len()
    );
    // hashbrown's probe position: the low bits, for a table of 256 × 16.
    let positions: HashSet<u64> = hashes.iter().map(|hash| (hash >> 4) & 255).collect();
    assert!(
      positions.len() >= 128,
      "base {base:#x}: the bucket's 256 lines have {} distinct positions",
      positions.len()
    );
  }
}

#[test]
fn keys_of_one_line_share_a_bucket_start_at_consecutive_positions_with_tags_of_their_own() {
  let hasher = BuildAddressHasher::default();
  // Int32Array elements (4 bytes apart) and BigInt64Array ones (8).
  for (line, stride) in [
    (0x7f12_3456_0040usize, 4),
    (0x5555_0000_1000, 8),
    (0x1000, 4),
  ] {
    let first = hasher.hash_one(line);
    let (mut tags, mut tags32) = (HashSet::new(), HashSet::new());
    for key in (line..line + 64).step_by(stride) {
      let place = ((key - line) / 4) as u64;
      let hash = hasher.hash_one(key);
      assert!(
        Registry::<()>::same_bucket(line, key),
        "{key:#x} is in its line's bucket"
      );
      assert_eq!(
        hash & 0xfff,
        first.wrapping_add(place) & 0xfff,
        "{key:#x}'s probe start"
      );
      tags.insert(hash >> 57);
      tags32.insert((hash as u32) >> 25); // hashbrown's tag on 32-bit targets
    }
    assert_eq!(
      tags.len(),
      64 / stride,
      "{line:#x}: one tag per key of the line"
    );
    assert_eq!(
      tags32.len(),
      64 / stride,
      "{line:#x}: the same on 32-bit targets"
    );
  }
}
