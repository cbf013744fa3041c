//! The source hash in the core's ABI marker (src/source_hash.rs, run by
//! build.rs): stable, and changed by any change to a source's contents or
//! path, or to the rustflags.

#[path = "../src/source_hash.rs"]
mod source_hash;

use std::fs;
use std::path::PathBuf;

use source_hash::{source_files, source_hash, Fnv1a64};

fn tree(name: &str) -> PathBuf {
  let dir = std::env::temp_dir().join(format!("awa-source-hash-{}-{name}", std::process::id()));
  let _ = fs::remove_dir_all(&dir);
  fs::create_dir_all(dir.join("src/napi")).unwrap();
  fs::write(dir.join("src/lib.rs"), "mod napi;\n").unwrap();
  fs::write(dir.join("src/napi/mod.rs"), "pub fn f() {}\n").unwrap();
  fs::write(dir.join("src/notes.txt"), "not a source\n").unwrap();
  fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
  fs::write(dir.join("Cargo.lock"), "version = 4\n").unwrap();
  fs::write(dir.join("build.rs"), "fn main() {}\n").unwrap();
  dir
}

#[test]
fn fnv1a64_known_values() {
  // The published FNV-1a 64 test vectors.
  let hash = |s: &str| {
    let mut h = Fnv1a64::default();
    h.write(s.as_bytes());
    h.finish()
  };
  assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
  assert_eq!(hash("a"), 0xaf63_dc4c_8601_ec8c);
  assert_eq!(hash("foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn the_files_are_the_rust_sources_and_the_manifests_sorted() {
  let dir = tree("files");
  assert_eq!(
    source_files(&dir).unwrap(),
    [
      "Cargo.lock",
      "Cargo.toml",
      "build.rs",
      "src/lib.rs",
      "src/napi/mod.rs"
    ]
  );
  fs::remove_dir_all(dir).unwrap();
}

#[test]
fn any_change_to_the_sources_or_flags_changes_the_hash() {
  let dir = tree("changes");
  let base = source_hash(&dir, "").unwrap();
  assert_eq!(base.len(), 16);
  assert_eq!(source_hash(&dir, "").unwrap(), base, "stable");
  assert_ne!(
    source_hash(&dir, "-Ctarget-cpu=native").unwrap(),
    base,
    "rustflags"
  );
  fs::write(dir.join("src/notes.txt"), "still not a source\n").unwrap();
  assert_eq!(source_hash(&dir, "").unwrap(), base, "not a source");
  fs::write(dir.join("src/napi/mod.rs"), "pub fn f() { }\n").unwrap();
  let changed = source_hash(&dir, "").unwrap();
  assert_ne!(changed, base, "contents");
  fs::rename(dir.join("src/napi/mod.rs"), dir.join("src/napi/other.rs")).unwrap();
  assert_ne!(source_hash(&dir, "").unwrap(), changed, "path");
  fs::write(dir.join("Cargo.lock"), "version = 3\n").unwrap();
  assert_ne!(source_hash(&dir, "").unwrap(), changed, "Cargo.lock");
  fs::remove_dir_all(dir).unwrap();
}
