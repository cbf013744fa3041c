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
}
