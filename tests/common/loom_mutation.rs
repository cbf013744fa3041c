//! The mutation tests of the word-protocol models (tests/loom_robust.rs,
//! loom_latch.rs, loom_semaphore.rs, loom_barrier.rs): each runs its model
//! with one step weakened, in a child process of the test binary (loom
//! aborts the process on a deadlock), and checks that it failed, and why.
//! The child is the model file's own ignored `mutated_model` test, which
//! reads the mutation's name from `var` and prints "model held" if the
//! model held.

/// Runs the model with the mutation named `name` in a child process;
/// returns whether it held, and what the child printed.
pub fn run_mutated(var: &str, name: &str) -> (bool, String) {
  let output = std::process::Command::new(std::env::current_exe().unwrap())
    .args(["--ignored", "--exact", "mutated_model", "--nocapture"])
    .env(var, name)
    .output()
    .unwrap();
  let printed =
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
  (
    output.status.success() && printed.contains("model held"),
    printed,
  )
}

/// The model fails with the mutation named `name`, for the reason
/// `expected` says.
pub fn fails_with(var: &str, name: &str, expected: &str) {
  let (held, printed) = run_mutated(var, name);
  assert!(!held, "the model held with {name}");
  assert!(
    printed.contains(expected),
    "{name} failed, but not with {expected:?}:\n{printed}"
  );
}
