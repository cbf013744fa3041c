//! The source hash in the waiter core's ABI marker (src/napi/shared.rs):
//! two builds of one version from different sources must not share a core.
//! Used by build.rs (`#[path]`), and by tests/source_hash.rs; not part of
//! the library. FNV-1a 64, which is stable across Rust releases and
//! machines (std's `DefaultHasher` is neither).

use std::path::{Path, PathBuf};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64, fed piece by piece.
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
  fn default() -> Self {
    Self(FNV_OFFSET)
  }
}

impl Fnv1a64 {
  pub fn write(&mut self, bytes: &[u8]) {
    for &byte in bytes {
      self.0 ^= u64::from(byte);
      self.0 = self.0.wrapping_mul(FNV_PRIME);
    }
  }

  /// A piece with its length first, so that pieces cannot run together.
  pub fn write_piece(&mut self, bytes: &[u8]) {
    self.write(&(bytes.len() as u64).to_le_bytes());
    self.write(bytes);
  }

  pub fn finish(&self) -> u64 {
    self.0
  }
}

/// The files the crate is built from, relative to `root`, sorted, with `/`
/// separators: `src/**/*.rs`, `build.rs`, `Cargo.toml`, `Cargo.lock`
/// (those present).
pub fn source_files(root: &Path) -> std::io::Result<Vec<String>> {
  fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
      let path = entry?.path();
      if path.is_dir() {
        walk(root, &path, out)?;
      } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(relative(root, &path));
      }
    }
    Ok(())
  }
  fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel
      .components()
      .map(|c| c.as_os_str().to_string_lossy().into_owned())
      .collect::<Vec<_>>()
      .join("/")
  }
  let mut files = Vec::new();
  walk(root, &root.join("src"), &mut files)?;
  for file in ["build.rs", "Cargo.toml", "Cargo.lock"] {
    if root.join(file).is_file() {
      files.push(file.to_string());
    }
  }
  files.sort();
  Ok(files)
}

/// The hash of the sources under `root` (each file's path and contents,
/// in sorted order) and of the rustflags, as 16 hex digits.
pub fn source_hash(root: &Path, rustflags: &str) -> std::io::Result<String> {
  let mut hash = Fnv1a64::default();
  for file in source_files(root)? {
    let contents = std::fs::read(root.join(PathBuf::from(&file)))?;
    hash.write_piece(file.as_bytes());
    hash.write_piece(&contents);
  }
  hash.write_piece(rustflags.as_bytes());
  Ok(format!("{:016x}", hash.finish()))
}
