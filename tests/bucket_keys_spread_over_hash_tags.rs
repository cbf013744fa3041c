//! The keys of one registry bucket must not all share hashbrown's tag.
//!
//! A bucket is chosen by the top bits of the key's mix; should each
//! bucket's map hash the key with that same mix, every key of a bucket
//! would have the same tag (hashbrown's top 7 bits of the hash) and probing
//! would degenerate to key comparisons. The map's hash must spread the keys
//! of one bucket over the tags (and over the low bits hashbrown probes by).

use std::collections::HashSet;
use std::hash::BuildHasher;

use atomics_waitasync::registry::{BuildAddressHasher, Registry};

/// The keys of `first`'s bucket among element addresses `stride` apart.
fn bucket_mates(first: usize, stride: usize, count: usize) -> Vec<usize> {
  (0..count * 512)
    .map(|i| first + i * stride)
    .filter(|&key| Registry::<()>::same_bucket(first, key))
    .take(count)
    .collect()
}

#[test]
fn keys_of_one_bucket_spread_over_tags_and_probe_positions() {
  let hasher = BuildAddressHasher::default();
  // Int32Array and BigInt64Array elements of a buffer, at a few bases.
  for (base, stride) in [(0x7f12_3456_0000, 4), (0x5555_0000_1000, 8), (0x1000, 4)] {
    let keys = bucket_mates(base, stride, 256);
    assert_eq!(keys.len(), 256, "enough keys share a bucket");
    let hashes: Vec<u64> = keys.iter().map(|key| hasher.hash_one(key)).collect();
    let tags: HashSet<u64> = hashes.iter().map(|hash| hash >> 57).collect();
    // 256 keys over 128 tags: about 110 distinct ones if they were random.
    assert!(
      tags.len() >= 64,
      "base {base:#x}: the bucket's 256 keys have {} distinct tags",
      tags.len()
    );
    // hashbrown's probe position: the low bits, for a table of 256.
    let positions: HashSet<u64> = hashes.iter().map(|hash| hash & 255).collect();
    assert!(
      positions.len() >= 128,
      "base {base:#x}: the bucket's 256 keys have {} distinct positions",
      positions.len()
    );
  }
}
