#[path = "src/source_hash.rs"]
mod source_hash;

fn main() {
  napi_build::setup();
  // What a copy of the waiter core's ABI depends on besides the package
  // version: the compiler, the target and the profile (src/napi/shared.rs
  // puts them in the core's ABI marker).
  let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
  let version = std::process::Command::new(rustc)
    .arg("--version")
    .output()
    .ok()
    .and_then(|out| String::from_utf8(out.stdout).ok())
    .map_or_else(|| "unknown".into(), |v| v.trim().to_string());
  println!("cargo:rustc-env=ATOMICS_WAITASYNC_RUSTC={version}");
  let target = std::env::var("TARGET").unwrap_or_default();
  println!("cargo:rustc-env=ATOMICS_WAITASYNC_TARGET={target}");
  let profile = std::env::var("PROFILE").unwrap_or_default();
  let opt = std::env::var("OPT_LEVEL").unwrap_or_default();
  println!("cargo:rustc-env=ATOMICS_WAITASYNC_PROFILE={profile} opt-level {opt}");
  // And the sources themselves, with the flags they were compiled with:
  // two builds of one version from different sources must not share a core.
  let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
  let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
  let hash = source_hash::source_hash(&root, &rustflags).expect("the crate's sources are readable");
  println!("cargo:rustc-env=ATOMICS_WAITASYNC_SOURCE={hash}");
  // napi_build's rerun-if-env-changed lines turn off cargo's default (rerun
  // on any change in the package): name the sources so the hash follows them.
  for path in ["src", "build.rs", "Cargo.toml", "Cargo.lock"] {
    println!("cargo:rerun-if-changed={path}");
  }
  println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
}
