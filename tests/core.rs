//! The waiter core (`src/core.rs`) without Node, through the same trait
//! object the N-API layer uses: async waits with and without deadlines,
//! notify against timeout, sync waits in slices, taking a waiter back, and
//! an env that goes away. The races of the parts it is made of are
//! model-checked in loom_registry.rs, loom_wake.rs and loom_handshake.rs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use atomics_waitasync::core::{Core, CoreApi, Panicked, Slice};
use atomics_waitasync::parker::Parker;
use atomics_waitasync::registry::Enqueued;
use atomics_waitasync::wake::{Cancelled, Mailbox, Settled, Signal, Woken};

/// Counts how many times its env was signalled.
#[derive(Clone, Default)]
struct Signals(Arc<AtomicUsize>);

impl Signal for Signals {
  fn signal(&self) -> bool {
    self.0.fetch_add(1, Ordering::Relaxed);
    true
  }
}

type Api = dyn CoreApi<Signals>;
type Env = Arc<Mailbox<Signals>>;

const KEY: usize = 0x1000;

/// A fresh core of its own for each test (the N-API layer has one per
/// process), leaked: the notifier thread needs it for good.
fn core() -> &'static Api {
  Box::leak(Box::new(Core::<Signals>::new(|| {})))
}

/// A thread's parker, for one test's sync waits.
fn parker() -> Arc<Parker> {
  Arc::new(Parker::new())
}

fn env() -> Env {
  Arc::new(Mailbox::new(Signals::default()))
}

fn queue(core: &'static Api, env: &Env, slot: u32, timeout_ms: f64) -> u64 {
  let deadline = core
    .async_deadline(timeout_ms)
    .unwrap()
    .expect("the notifier starts");
  match core
    .enqueue_async(KEY, deadline, &mut || true, env, slot)
    .unwrap()
  {
    Enqueued::Queued(id) => id,
    Enqueued::NotEqual => unreachable!("the check passed"),
  }
}

fn drain(core: &'static Api, env: &Env) -> Vec<Woken> {
  let mut woken = Vec::new();
  core.drain(env, &mut woken).unwrap();
  woken
}

/// Waits until `done()`, or fails after 10 s (a deadline fires on another
/// thread; how soon depends on the machine).
fn until(what: &str, mut done: impl FnMut() -> bool) {
  let give_up = Instant::now() + Duration::from_secs(10);
  while !done() {
    assert!(
      Instant::now() < give_up,
      "{what}: still not done after 10 s"
    );
    thread::yield_now();
  }
}

#[test]
fn notify_wakes_async_waiters_oldest_first_in_one_batch() {
  let core = core();
  let signals = Signals::default();
  let env = Arc::new(Mailbox::new(signals.clone()));
  let ids: Vec<u64> = (0..3)
    .map(|slot| queue(core, &env, slot, f64::INFINITY))
    .collect();
  assert_eq!(core.waiters(Some(KEY)).unwrap(), 3);
  assert_eq!(core.notify(KEY, 2).unwrap(), 2);
  let woken = drain(core, &env);
  assert_eq!(woken.iter().map(|w| w.id).collect::<Vec<_>>(), ids[..2]);
  assert!(woken.iter().all(|w| w.how == Settled::Woken));
  assert_eq!(
    signals.0.load(Ordering::Relaxed),
    1,
    "one signal for the batch"
  );
  assert_eq!(core.waiters(None).unwrap(), 1);
}

#[test]
fn a_deadline_times_the_waiter_out_and_leaves_nothing() {
  let core = core();
  let env = env();
  let id = queue(core, &env, 7, 1.0);
  let mut woken = Vec::new();
  until("the timeout", || {
    core.drain(&env, &mut woken).unwrap();
    !woken.is_empty()
  });
  assert_eq!(woken.len(), 1);
  assert_eq!((woken[0].slot, woken[0].id), (7, id));
  assert_eq!(woken[0].how, Settled::TimedOut);
  assert_eq!(
    woken[0].unseen_key(),
    None,
    "a timeout is passed on to nobody"
  );
  assert_eq!(core.waiters(None).unwrap(), 0);
  until("the notifier forgets it", || core.deadlines().unwrap() == 0);
}

#[test]
fn a_notify_cancels_the_deadline() {
  let core = core();
  let env = env();
  queue(core, &env, 0, 3_600_000.0);
  until("the notifier holds it", || core.deadlines().unwrap() == 1);
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  until("the notifier drops it", || core.deadlines().unwrap() == 0);
  let woken = drain(core, &env);
  assert_eq!(woken.len(), 1);
  assert_eq!(woken[0].how, Settled::Woken);
}

#[test]
fn the_value_check_runs_under_the_lock_and_a_failed_one_queues_nothing() {
  let core = core();
  let env = env();
  let enqueued = core
    .enqueue_async(KEY, None, &mut || false, &env, 0)
    .unwrap();
  assert_eq!(enqueued, Enqueued::NotEqual);
  assert_eq!(core.waiters(None).unwrap(), 0);
  assert!(core
    .enqueue_sync(KEY, f64::INFINITY, &mut || false, &parker())
    .unwrap()
    .is_none());
  assert_eq!(core.waiters(None).unwrap(), 0);
}

#[test]
fn a_notifier_that_cannot_start_fails_the_wait_before_anything_is_queued() {
  let core = core();
  core.fail_timer_start_for_testing().unwrap();
  let error = core.async_deadline(10.0).unwrap().unwrap_err();
  assert!(
    error.contains("cannot start the notifier thread"),
    "{error}"
  );
  // Waits without a deadline need no notifier.
  assert_eq!(core.async_deadline(f64::INFINITY).unwrap(), Ok(None));
  assert_eq!(core.waiters(None).unwrap(), 0);
}

/// The notifier starts first and notifies until it finds the waiter, so
/// its notify races with the wait: before it is queued (counts none, and
/// tries again), while it spins, or while it sleeps.
#[test]
fn a_sync_wait_is_woken_by_a_notify_from_another_thread() {
  let core = core();
  let start = Arc::new(std::sync::Barrier::new(2));
  let notifier = {
    let start = start.clone();
    thread::spawn(move || {
      start.wait();
      while core.notify(KEY, 1).unwrap() == 0 {
        thread::yield_now();
      }
    })
  };
  start.wait();
  let mut wait = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker())
    .unwrap();
  assert!(wait.is_some());
  let mut slices = 0;
  let end = loop {
    match core
      .wait_slice(&mut wait, Duration::from_millis(10))
      .unwrap()
    {
      Some(Slice::Pending) => slices += 1,
      other => break other,
    }
  };
  notifier.join().unwrap();
  assert_eq!(
    end,
    Some(Slice::Woken { key: KEY }),
    "after {slices} slices"
  );
  assert!(wait.is_none(), "an ended wait is taken out");
  assert_eq!(
    core
      .wait_slice(&mut wait, Duration::from_millis(10))
      .unwrap(),
    None
  );
}

#[test]
fn a_sync_wait_times_out_and_leaves_its_queue() {
  let core = core();
  let mut wait = core
    .enqueue_sync(KEY, 1.0, &mut || true, &parker())
    .unwrap();
  let end = loop {
    match core
      .wait_slice(&mut wait, Duration::from_millis(10))
      .unwrap()
    {
      Some(Slice::Pending) => continue,
      other => break other,
    }
  };
  assert_eq!(end, Some(Slice::TimedOut));
  assert_eq!(core.waiters(None).unwrap(), 0);
  // Nothing left for a notify to count.
  assert_eq!(core.notify(KEY, 1).unwrap(), 0);
}

#[test]
fn a_sync_wait_with_a_zero_timeout_is_still_woken_if_notified_first() {
  let core = core();
  let mut wait = core
    .enqueue_sync(KEY, 0.0, &mut || true, &parker())
    .unwrap();
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  // Its deadline has passed, but the notify owns the outcome.
  let end = core
    .wait_slice(&mut wait, Duration::from_millis(10))
    .unwrap();
  assert_eq!(end, Some(Slice::Woken { key: KEY }));
}

#[test]
fn an_abandoned_sync_wait_that_was_notified_passes_its_wake_up_on() {
  let core = core();
  let env = env();
  let mut dying = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker())
    .unwrap();
  assert!(dying.is_some());
  queue(core, &env, 3, f64::INFINITY);
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  // The thread never saw its wake-up (it was terminated, say).
  let unseen = core.abandon_sync(&mut dying).unwrap();
  assert_eq!(unseen, Some(KEY));
  assert!(dying.is_none(), "ended");
  core.pass_on(&mut unseen.into_iter()).unwrap();
  let woken = drain(core, &env);
  assert_eq!(woken.iter().map(|w| w.slot).collect::<Vec<_>>(), [3]);
}

/// A thread reuses one parker for all its sync waits: a wait that a
/// notify woke, or that was abandoned after a notify took it, leaves
/// nothing behind that ends the next wait early.
#[test]
fn a_reused_parker_starts_each_wait_unwoken() {
  let core = core();
  let parker = parker();
  let mut woken = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker)
    .unwrap();
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  assert_eq!(
    core
      .wait_slice(&mut woken, Duration::from_millis(10))
      .unwrap(),
    Some(Slice::Woken { key: KEY })
  );
  let mut next = core.enqueue_sync(KEY, 1.0, &mut || true, &parker).unwrap();
  let end = loop {
    match core
      .wait_slice(&mut next, Duration::from_millis(10))
      .unwrap()
    {
      Some(Slice::Pending) => continue,
      other => break other,
    }
  };
  assert_eq!(end, Some(Slice::TimedOut), "after a woken wait");
  let mut abandoned = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker)
    .unwrap();
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  assert_eq!(core.abandon_sync(&mut abandoned).unwrap(), Some(KEY));
  let mut next = core.enqueue_sync(KEY, 1.0, &mut || true, &parker).unwrap();
  let end = loop {
    match core
      .wait_slice(&mut next, Duration::from_millis(10))
      .unwrap()
    {
      Some(Slice::Pending) => continue,
      other => break other,
    }
  };
  assert_eq!(end, Some(Slice::TimedOut), "after an abandoned wait");
  assert_eq!(core.waiters(None).unwrap(), 0);
}

#[test]
fn an_abandoned_sync_wait_not_yet_notified_just_leaves() {
  let core = core();
  let mut wait = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker())
    .unwrap();
  assert_eq!(core.abandon_sync(&mut wait).unwrap(), None);
  assert!(wait.is_none(), "ended");
  assert_eq!(core.waiters(None).unwrap(), 0);
}

#[test]
fn taking_back_a_waiter_a_notify_took_first_passes_its_wake_up_on_when_it_arrives() {
  let core = core();
  let (first, second) = (env(), env());
  let id = queue(core, &first, 0, f64::INFINITY);
  queue(core, &second, 0, f64::INFINITY);
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  let mut cancelled = Cancelled::default();
  core.take_back(&mut cancelled, KEY, id, None).unwrap();
  // Its outcome arrives for a slot that no longer holds it.
  let woken = drain(core, &first);
  assert_eq!(woken.len(), 1);
  assert!(cancelled.arrived(id));
  core
    .pass_on(&mut woken.iter().filter_map(Woken::unseen_key))
    .unwrap();
  assert_eq!(drain(core, &second).len(), 1, "the next waiter got it");
  assert_eq!(core.waiters(None).unwrap(), 0);
}

#[test]
fn taking_back_a_queued_waiter_removes_it_and_its_deadline() {
  let core = core();
  let env = env();
  let deadline = core.async_deadline(3_600_000.0).unwrap().unwrap();
  let Enqueued::Queued(id) = core
    .enqueue_async(KEY, deadline, &mut || true, &env, 0)
    .unwrap()
  else {
    unreachable!()
  };
  until("the notifier holds it", || core.deadlines().unwrap() == 1);
  let mut cancelled = Cancelled::default();
  core
    .take_back(&mut cancelled, KEY, id, deadline.map(|d| d.when()))
    .unwrap();
  assert!(!cancelled.arrived(id), "not remembered: it never left");
  assert_eq!(core.waiters(None).unwrap(), 0);
  until("the notifier drops it", || core.deadlines().unwrap() == 0);
  assert_eq!(core.notify(KEY, 1).unwrap(), 0);
}

#[test]
fn a_closed_env_hands_back_what_it_held_and_later_wake_ups_go_on() {
  let core = core();
  let (dying, live) = (env(), env());
  let held = queue(core, &dying, 0, f64::INFINITY);
  let behind = queue(core, &dying, 1, f64::INFINITY);
  queue(core, &live, 9, f64::INFINITY);
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  let undelivered = core.close(&dying).unwrap();
  assert_eq!(undelivered.iter().map(|w| w.id).collect::<Vec<_>>(), [held]);
  // The dying env's other waiter is withdrawn by its teardown...
  assert!(core.withdraw(KEY, behind, None).unwrap());
  // ...and what it never saw goes to the live one.
  core
    .pass_on(&mut undelivered.iter().filter_map(Woken::unseen_key))
    .unwrap();
  assert_eq!(
    drain(core, &live)
      .iter()
      .map(|w| w.slot)
      .collect::<Vec<_>>(),
    [9]
  );
  assert!(!core.withdraw(KEY, behind, None).unwrap(), "withdrawn once");
}

#[test]
fn many_threads_notify_many_waiters_and_every_wake_up_arrives() {
  let core = core();
  let env = env();
  for slot in 0..1000 {
    queue(core, &env, slot, 3_600_000.0);
  }
  let notifiers: Vec<_> = (0..4)
    .map(|_| {
      thread::spawn(move || {
        let mut woke = 0;
        while woke < 250 {
          woke += core.notify(KEY, 1).unwrap();
        }
      })
    })
    .collect();
  notifiers.into_iter().for_each(|n| n.join().unwrap());
  let mut slots: Vec<u32> = drain(core, &env).iter().map(|w| w.slot).collect();
  slots.sort_unstable();
  assert_eq!(slots, (0..1000).collect::<Vec<_>>());
  until("every deadline is cancelled", || {
    core.deadlines().unwrap() == 0
  });
}

#[test]
fn a_deadline_given_to_enqueue_async_is_never_dropped() {
  // Only async_deadline makes one (an AsyncDeadline), and it starts the
  // notifier: enqueue_async cannot be handed a deadline with no notifier
  // to hold it (it used to drop it silently: a waiter that never timed out).
  let core = core();
  let env = env();
  assert_eq!(core.deadlines().unwrap(), 0);
  let deadline = core.async_deadline(3_600_000.0).unwrap().unwrap();
  let Enqueued::Queued(id) = core
    .enqueue_async(KEY, deadline, &mut || true, &env, 0)
    .unwrap()
  else {
    unreachable!("the check passed");
  };
  until("the notifier holds it", || core.deadlines().unwrap() == 1);
  assert!(core.withdraw(KEY, id, deadline.map(|d| d.when())).unwrap());
  until("and lets it go", || core.deadlines().unwrap() == 0);
}

/// Another copy of the package calls the core through the trait object, and
/// a panic unwinding into that copy's frames would abort the process: every
/// method catches its own and says so, and the core goes on working.
#[test]
fn a_panic_in_a_core_method_is_caught_there_and_the_core_goes_on() {
  let core = core();
  let env = env();
  queue(core, &env, 0, f64::INFINITY);
  core.panic_for_testing("notify", 1).unwrap();
  assert_eq!(core.notify(KEY, 1), Err(Panicked));
  assert_eq!(core.waiters(None).unwrap(), 1, "still queued");
  assert_eq!(core.notify(KEY, 1).unwrap(), 1, "only the next call panics");
  assert_eq!(drain(core, &env).len(), 1);

  core.panic_for_testing("waiters", 2).unwrap();
  assert_eq!(core.waiters(None), Err(Panicked));
  assert_eq!(core.deadlines(), Ok(0), "only that method panics");
  assert_eq!(core.waiters(None), Err(Panicked));
  assert_eq!(core.waiters(None), Ok(0), "only the next two calls panic");

  core.panic_for_testing("enqueue_async", 1).unwrap();
  let enqueued = core.enqueue_async(KEY, None, &mut || true, &env, 1);
  assert_eq!(enqueued, Err(Panicked));
  assert_eq!(core.waiters(None).unwrap(), 0, "nothing queued");
  queue(core, &env, 1, f64::INFINITY);
  assert_eq!(core.notify(KEY, 1).unwrap(), 1);
  assert_eq!(drain(core, &env).len(), 1);

  // A sync wait whose slice panics is still the caller's, to end.
  let mut wait = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker())
    .unwrap();
  core.panic_for_testing("wait_slice", 1).unwrap();
  let slice = core.wait_slice(&mut wait, Duration::from_millis(10));
  assert_eq!(slice, Err(Panicked));
  assert_eq!(core.abandon_sync(&mut wait).unwrap(), None);
  assert_eq!(core.waiters(None).unwrap(), 0, "nothing queued");

  // So is one whose abandon panics: it is still queued, and ending it
  // again takes it off its queue, so that it takes no later wake-up.
  let mut wait = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker())
    .unwrap();
  core.panic_for_testing("abandon_sync", 1).unwrap();
  assert_eq!(core.abandon_sync(&mut wait), Err(Panicked));
  assert!(wait.is_some(), "still the caller's");
  assert_eq!(core.waiters(None).unwrap(), 1, "still queued");
  assert_eq!(core.abandon_sync(&mut wait).unwrap(), None);
  assert!(wait.is_none(), "ended");
  assert_eq!(core.waiters(None).unwrap(), 0, "nothing queued");
}

/// Review (expire-fix, item 1): the expire callback took a due deadline
/// from the notifier (`Due::next`) before taking its waiter off its queue;
/// a panic in between lost the deadline, and the waitAsync never timed out.
/// The deadline in hand when the callback panics goes back to the notifier,
/// which hands it over again a little later.
#[test]
fn a_deadline_whose_expire_panicked_before_taking_its_waiter_still_fires() {
  let core = core();
  let env = env();
  core.panic_for_testing("expire", 1).unwrap();
  let id = queue(core, &env, 3, 1.0);
  let mut woken = Vec::new();
  until("the timeout, after the panic", || {
    core.drain(&env, &mut woken).unwrap();
    !woken.is_empty()
  });
  assert_eq!(woken.len(), 1);
  assert_eq!((woken[0].slot, woken[0].id), (3, id));
  assert_eq!(woken[0].how, Settled::TimedOut);
  assert_eq!(core.waiters(None).unwrap(), 0);
  until("the notifier holds nothing", || {
    core.deadlines().unwrap() == 0
  });
}

/// A panic in the notifier's expire callback after it took a waiter off
/// its queue (as when the removal of the next one panics): the waiter it
/// took is still timed out, not dropped with the half-built batch.
#[test]
fn a_waiter_taken_before_a_panic_in_expire_still_times_out() {
  let core = core();
  let env = env();
  core.panic_for_testing("expire_after_taking", 1).unwrap();
  let id = queue(core, &env, 4, 1.0);
  let mut woken = Vec::new();
  until("the timeout, after the panic", || {
    core.drain(&env, &mut woken).unwrap();
    !woken.is_empty()
  });
  assert_eq!(woken.len(), 1);
  assert_eq!((woken[0].slot, woken[0].id), (4, id));
  assert_eq!(woken[0].how, Settled::TimedOut);
  assert_eq!(core.waiters(None).unwrap(), 0);
  until("the notifier holds nothing", || {
    core.deadlines().unwrap() == 0
  });
}

/// A sync wait whose abandon panicked is still queued with the thread's
/// parker; a notify that takes it meanwhile unparks that parker. The retry
/// hands the wake-up back (waiting for that unpark), after which the same
/// parker starts the thread's next wait unwoken.
#[test]
fn an_abandon_retried_after_a_panic_leaves_the_parker_reusable() {
  let core = core();
  let env = env();
  let parker = parker();
  let mut stale = core
    .enqueue_sync(KEY, f64::INFINITY, &mut || true, &parker)
    .unwrap();
  queue(core, &env, 3, f64::INFINITY);
  core.panic_for_testing("abandon_sync", 1).unwrap();
  assert_eq!(core.abandon_sync(&mut stale), Err(Panicked));
  assert_eq!(core.notify(KEY, 1).unwrap(), 1, "the stale waiter");
  assert_eq!(core.abandon_sync(&mut stale).unwrap(), Some(KEY));
  assert!(stale.is_none(), "ended");
  core.pass_on(&mut std::iter::once(KEY)).unwrap();
  assert_eq!(
    drain(core, &env).iter().map(|w| w.slot).collect::<Vec<_>>(),
    [3]
  );
  let mut next = core
    .enqueue_sync(KEY + 4, 1.0, &mut || true, &parker)
    .unwrap();
  let end = loop {
    match core
      .wait_slice(&mut next, Duration::from_millis(10))
      .unwrap()
    {
      Some(Slice::Pending) => continue,
      other => break other,
    }
  };
  assert_eq!(end, Some(Slice::TimedOut), "woken by the stale notify");
  assert_eq!(core.waiters(None).unwrap(), 0);
}

/// A signal that panics, breaking its must-not-panic contract: for a
/// panic part-way through a notify.
struct PanickingSignal;

impl Signal for PanickingSignal {
  fn signal(&self) -> bool {
    panic!("the signal panics");
  }
}

/// Review item 1: a notify that panics part-way through waking what it
/// dequeued (here in the first env's signal) used to leave the sync
/// waiter behind the panic dequeued but never unparked. Its wait has a
/// timeout: the last slice finds it gone from its queue and waits for the
/// notify's unpark, with no bound, so the thread (a main thread, or a
/// worker whose teardown then hangs process exit) slept for good. The
/// wait ends "ok", on another thread, within a bounded time.
#[test]
fn a_sync_waiter_behind_a_panic_in_notify_still_wakes() {
  let core: &'static dyn CoreApi<PanickingSignal> =
    Box::leak(Box::new(Core::<PanickingSignal>::new(|| {})));
  let (panics, other) = (
    Arc::new(Mailbox::new(PanickingSignal)),
    Arc::new(Mailbox::new(PanickingSignal)),
  );
  for (env, slot) in [(&panics, 0), (&other, 1)] {
    let queued = core.enqueue_async(KEY, None, &mut || true, env, slot);
    assert!(matches!(queued, Ok(Enqueued::Queued(_))));
  }
  let mut wait = core
    .enqueue_sync(KEY, 50.0, &mut || true, &parker())
    .unwrap();
  assert!(wait.is_some());
  // Delivering to the first env panics when the second env's waiter comes
  // up, before the sync waiter behind them is reached.
  assert_eq!(core.notify(KEY, 3), Err(Panicked));
  assert_eq!(core.waiters(None).unwrap(), 0, "all three dequeued");
  let (done, ended) = std::sync::mpsc::channel();
  thread::spawn(move || {
    let end = loop {
      match core.wait_slice(&mut wait, Duration::from_millis(10)) {
        Ok(Some(Slice::Pending)) => continue,
        other => break other,
      }
    };
    let _ = done.send(end);
  });
  let end = ended
    .recv_timeout(Duration::from_secs(10))
    .expect("the sync waiter is still asleep after 10 s");
  assert_eq!(end, Ok(Some(Slice::Woken { key: KEY })));
}

/// A wake-up whose notify failed, handed to the core (an AsyncLock release
/// that has freed its word): a thread of the core retries the notify,
/// backing off, until one returns; at most `RETRIERS` such threads at once.
#[test]
fn notify_later_retries_until_a_notify_returns() {
  use atomics_waitasync::core::RETRIERS;
  let core = core();
  let env = env();
  queue(core, &env, 0, f64::INFINITY);
  core.panic_for_testing("notify", 3).unwrap();
  assert_eq!(core.notify_later(KEY, 1), Ok(true));
  // (A notify takes the waiter off its queue before it delivers it: wait
  // for the delivery.)
  let mut woken = Vec::new();
  until("the retrying thread to wake it", || {
    core.drain(&env, &mut woken).unwrap();
    !woken.is_empty()
  });
  assert_eq!(woken.len(), 1);
  assert_eq!(core.waiters(None).unwrap(), 0);
  until("the thread to end", || core.retriers().unwrap() == 0);

  // Every notify failing: RETRIERS threads, then no more.
  core.panic_for_testing("notify", u32::MAX).unwrap();
  for _ in 0..RETRIERS {
    assert_eq!(core.notify_later(KEY, 1), Ok(true));
  }
  assert_eq!(core.notify_later(KEY, 1), Ok(false));
  assert_eq!(core.retriers(), Ok(RETRIERS));
  core.panic_for_testing("notify", 0).unwrap();
  until("every thread to end", || core.retriers().unwrap() == 0);
}
