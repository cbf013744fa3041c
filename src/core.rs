//! The waiter core: everything about waiting that is process-wide, in one
//! value ([`Core`]): the registry of wait queues, the notifier thread that
//! owns async deadlines, and the epoch those deadlines count from; and
//! what is done with them: queueing a waiter, a notify, a sync wait's
//! slices, a timeout, taking a waiter back, passing on a wake-up nobody
//! will see.
//!
//! Pure Rust, generic over how an env is signalled ([`Signal`]): the N-API
//! layer plugs in its ThreadsafeFunction and only decodes arguments, calls
//! in here and encodes results; `tests/core.rs` plugs in a plain signal.
//!
//! Every copy of the package in a process must use one core, or a notify
//! through one copy misses the waiters of another. The N-API layer reaches
//! its core only through [`CoreApi`], a trait object: a copy that adopts
//! another copy's core (src/napi/shared.rs) then runs that copy's code on
//! that copy's data, never its own code on another's data (which would be
//! unsound: parking_lot parks a thread that waits for a contended lock in
//! a table of its own, one per copy of the code, where another copy's
//! unlock would never find it).
//!
//! Invariants (beyond those of the registry and the wake-up core):
//! - **The notifier starts outside every lock.** It is started by
//!   [`CoreApi::async_deadline`], before the caller takes any lock (a
//!   thread spawn may fail or block), and a waiter with a deadline exists
//!   only once it runs.
//! - **A deadline is sent under the bucket lock** that queues its waiter,
//!   so the notifier sees its add before any notify's cancel.
//! - **One owner per outcome**, for sync waits too: a sync waiter whose
//!   deadline passed takes itself off its queue; if a notify took it
//!   first, the notify owns the outcome ("ok") and its unpark is imminent.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use once_cell::sync::OnceCell;

use crate::deadline::{deadline_after, When};
use crate::diag::{Closed, Diag, Inversion, Snapshot, Wait, Watched};
use crate::handshake::{self, Due};
use crate::parker::Parker;
use crate::registry::{Enqueued, Registry, WaiterId};
use crate::sync_wait;
use crate::timer::{Deadline, Timer};
use crate::wake::{self, Cancelled, Mailbox, Settled, Signal, Woken};

/// What a queue entry is: a parked thread, or an env's pending promise.
pub type Waiter<S> = wake::Waiter<S, Parker, When>;

pub use crate::sync_wait::{Slice, SyncWait};

/// The process-wide waiter state. See the module docs.
pub struct Core<S> {
  registry: Registry<Waiter<S>>,
  /// Started on the first async wait with a finite timeout.
  timer: OnceCell<Timer>,
  /// The origin of every [`When`] in the registry and in envs' slabs.
  epoch: Instant,
  /// Run once before the notifier thread starts (N-API: keep the code of
  /// the copy that owns this core mapped, since the thread runs it).
  before_timer_start: fn(),
  /// Test-only (`failNotifierStartForTesting`): starting the notifier
  /// thread fails, as when the system cannot make another thread.
  fail_timer_start: AtomicBool,
  /// Test-only ([`CoreApi::panic_for_testing`]): the method whose next
  /// calls panic, if any, and how many more of them; `armed` says whether
  /// to look.
  panic_in: std::sync::Mutex<Option<(String, u32)>>,
  armed: AtomicBool,
  /// Threads retrying a wake-up whose notify failed
  /// ([`CoreApi::notify_later`]), at most [`RETRIERS`].
  retriers: AtomicUsize,
  /// AsyncLock owners in use ([`CoreApi::claim_owner`]): the system
  /// thread of each, and how many envs (one per copy of the package) claim
  /// it there.
  owners: parking_lot::Mutex<std::collections::HashMap<u32, (std::thread::ThreadId, usize)>>,
  /// Who holds and who waits, for a snapshot from any thread.
  diag: Diag,
}

/// The most threads [`CoreApi::notify_later`] runs at once: a notify fails
/// only through a bug, and one that always fails must not keep making
/// threads.
pub const RETRIERS: usize = 8;

impl<S: Signal + Send + Sync + 'static> Core<S> {
  pub fn new(before_timer_start: fn()) -> Self {
    Core {
      registry: Registry::new(),
      timer: OnceCell::new(),
      epoch: Instant::now(),
      before_timer_start,
      fail_timer_start: AtomicBool::new(false),
      panic_in: std::sync::Mutex::new(None),
      armed: AtomicBool::new(false),
      retriers: AtomicUsize::new(0),
      owners: parking_lot::Mutex::new(std::collections::HashMap::new()),
      diag: Diag::new(),
    }
  }

  /// Runs the body of the [`CoreApi`] method `method` (its name in the
  /// trait), catching a panic (see [`CoreApi`]): what every method does.
  fn guarded<T>(&self, method: &str, body: impl FnOnce() -> T) -> Guarded<T> {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
      if self.armed.load(Ordering::Relaxed) {
        self.panic_if_armed(method);
      }
      body()
    }));
    outcome.map_err(|payload| {
      // Its Drop could panic, outside the catch.
      std::mem::forget(payload);
      Panicked
    })
  }

  /// Test-only: panics if `method` is the one armed to, disarming it
  /// after its last armed call.
  #[cold]
  fn panic_if_armed(&self, method: &str) {
    let mut armed = self.panic_in.lock().unwrap_or_else(|e| e.into_inner());
    let Some((name, times)) = armed.as_mut() else {
      return;
    };
    if name != method {
      return;
    }
    *times -= 1;
    if *times == 0 {
      *armed = None;
      self.armed.store(false, Ordering::Relaxed);
    }
    drop(armed);
    panic!("atomics-waitasync: panic_for_testing in {method}");
  }

  /// The notifier thread, started on first use; an error saying why when
  /// it cannot be. Call it before taking any registry lock.
  fn timer(&'static self) -> Result<&'static Timer, String> {
    self.timer.get_or_try_init(|| {
      let cannot =
        |why: &str| format!("atomics-waitasync: cannot start the notifier thread: {why}");
      if self.fail_timer_start.load(Ordering::Relaxed) {
        return Err(cannot("failNotifierStartForTesting"));
      }
      (self.before_timer_start)();
      Timer::start(move |due| self.expire(due)).map_err(|error| cannot(&error.to_string()))
    })
  }

  /// The notifier thread's expire callback: whichever deadline's waiter is
  /// still queued has timed out; the others were notified and are skipped.
  fn expire(&'static self, due: &mut Due<Deadline>) {
    // Every due waiter is taken off its queue first, one at a time: if a
    // removal panics, its deadline (in hand: taken only once the next is
    // asked for) and those not taken yet go back to the notifier (see
    // `handshake::Due`), and the waiters taken before it are still woken
    // (off their queues, they would be nobody's). Then they are woken: a
    // panic in `wake` (only a Signal that broke its must-not-panic
    // contract) loses every waiter of this batch not yet delivered, with
    // its outcome.
    let mut timed_out: Vec<(usize, WaiterId, Waiter<S>)> = Vec::with_capacity(due.len());
    let taking = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
      for d in due.by_ref() {
        if self.armed.load(Ordering::Relaxed) {
          self.panic_if_armed("expire");
        }
        if let Some(w) = self.registry.remove(d.key, d.id) {
          timed_out.push((d.key, d.id, w)); // within the capacity: no allocation
          if self.armed.load(Ordering::Relaxed) {
            self.panic_if_armed("expire_after_taking");
          }
        }
      }
    }));
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
      self.wake(timed_out, Settled::TimedOut)
    })) {
      std::mem::forget(payload); // its Drop could panic, outside the catch
    }
    if let Err(payload) = taking {
      // On to the notifier's loop, which puts back what was not taken.
      std::panic::resume_unwind(payload);
    }
  }

  /// A notified waiter's deadline goes. (A waiter with a deadline exists
  /// only once the timer does.)
  fn cancel_deadline(&self, at: When, id: WaiterId) {
    if let Some(timer) = self.timer.get() {
      timer.cancel(at.instant(self.epoch), id);
    }
  }

  /// Wakes waiters taken off their queues (see [`wake::wake`]).
  fn wake(&self, woken: impl IntoIterator<Item = (usize, WaiterId, Waiter<S>)>, how: Settled) {
    wake::wake(
      &self.registry,
      &|at, id| self.cancel_deadline(at, id),
      woken,
      how,
    );
  }
}

/// The deadline of an async wait, made only by
/// [`CoreApi::async_deadline`] once the notifier thread has started: a
/// deadline given to [`CoreApi::enqueue_async`] cannot be dropped for want
/// of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncDeadline(When);

impl AsyncDeadline {
  /// The deadline itself (what a waiter keeps, to withdraw or take it back).
  pub fn when(self) -> When {
    self.0
  }
}

/// A panic in the core's code, caught there: the call did not complete.
/// (The N-API layer throws it as the JS Error it makes of any panic.)
///
/// It does not always mean that nothing happened. What a `Panicked` from
/// each [`CoreApi`] method may leave behind, and what the caller does:
/// - `enqueue_async`, `enqueue_sync`: nothing; the waiter was not queued
///   (every step that can fail comes before it is, and waking the notifier
///   after it is caught inside). The caller frees what it set aside.
/// - `notify`: async waiters may have been taken off their queue without
///   being delivered, and lost with their outcome; every sync waiter it
///   took is unparked all the same (see [`wake::wake`]), so none is left
///   asleep. A retry (lib/atomics.js's slow path makes one) may then wake
///   more than `count`: a wake-up too many beats a lost one.
/// - `withdraw`, `take_back`: the waiter may or may not have left its queue.
/// - `pass_on`: some of the wake-ups may have gone on. The caller keeps the
///   keys and tries again later: a wake-up too many beats a lost one.
/// - `abandon_sync`, `wait_slice`: the wait is still in the caller's
///   `Option`, for another try (its waiter may still be queued).
/// - `drain`: the mailbox may still hold what it held, with no signal on
///   its way (it signals only when it goes from empty to not): the env's
///   thread signals itself, to drain again.
/// - `close`: the mailbox may still be open, and deliveries may still use
///   its signal: the caller must not free what the signal uses. It tries
///   again, and aborts the process if that fails too.
/// - the others: nothing to undo.
///
/// A panic injected by [`CoreApi::panic_for_testing`] comes before the
/// method does anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked;

/// What a [`CoreApi`] method returns: its result, or [`Panicked`].
pub type Guarded<T> = Result<T, Panicked>;

/// What the N-API layer (of any copy of the package) does with the core.
/// A trait object, so that every call runs the code of the copy that owns
/// the core (see the module docs); hence closures come as `dyn`.
///
/// **No method unwinds.** Each .node file has its own panic runtime: a
/// panic raised in the owner's code and unwinding into another copy's
/// frames is a foreign exception there, and its `catch_unwind` aborts the
/// process. So every method catches its own panics, in the owner's code,
/// and returns [`Panicked`] instead. The closures passed in (the
/// caller's code) must not panic either. A panic can come only from a bug;
/// the core's own state is then as the panic left it (the registry's locks
/// do not poison), and the caller undoes or retries its own part of the
/// call, as [`Panicked`] says for each method.
pub trait CoreApi<S>: Sync {
  /// The deadline of an async wait of `timeout_ms` (>= 0), if it has one;
  /// starts the notifier thread for it, which may fail. Call it before
  /// taking any lock.
  fn async_deadline(
    &'static self,
    timeout_ms: f64,
  ) -> Guarded<Result<Option<AsyncDeadline>, String>>;

  /// Queues an async waiter of `env` in `slot` at the tail of `key`'s
  /// queue, with its deadline (from [`async_deadline`](Self::async_deadline),
  /// the only maker of an [`AsyncDeadline`], so the notifier has started),
  /// if `still_expected()` holds under the bucket lock. `still_expected`
  /// must not panic or call into the core.
  fn enqueue_async(
    &'static self,
    key: usize,
    deadline: Option<AsyncDeadline>,
    still_expected: &mut dyn FnMut() -> bool,
    env: &Arc<Mailbox<S>>,
    slot: u32,
  ) -> Guarded<Enqueued>;

  /// `notify`: takes up to `count` waiters off `key`'s queue, oldest first,
  /// wakes them, and says how many.
  fn notify(&'static self, key: usize, count: usize) -> Guarded<usize>;

  /// Takes a pending async waiter off its queue, and its deadline off the
  /// notifier, unless a notify or a timeout took it first (and owns its
  /// outcome); says whether it did. For env teardown.
  fn withdraw(&'static self, key: usize, id: WaiterId, deadline: Option<When>) -> Guarded<bool>;

  /// Takes a pending async waiter back (`cancel`): as [`withdraw`](Self::withdraw),
  /// but one a notify took first is remembered in `cancelled`, so that its
  /// wake-up goes on when its outcome arrives.
  fn take_back(
    &'static self,
    cancelled: &mut Cancelled,
    key: usize,
    id: WaiterId,
    deadline: Option<When>,
  ) -> Guarded<()>;

  /// Passes on wake-ups nobody will see (see [`wake::pass_on`]).
  fn pass_on(&'static self, keys: &mut dyn Iterator<Item = usize>) -> Guarded<()>;

  /// A wake-up whose notify of `key` (for `count` waiters) failed, which
  /// the caller cannot pass on itself (AsyncLock's release, which has freed
  /// its word, and may be out of JavaScript stack): a thread of the core
  /// tries the notify again, backing off as the notifier does with a
  /// deadline that failed (`handshake::RETRY_FIRST`, doubling up to
  /// `handshake::RETRY_MAX`), until one returns. False, with nothing done, if no such thread
  /// can run ([`RETRIERS`] already do, or the system refuses one). (It
  /// keeps the key only, not the memory: should the waiters it was for be
  /// gone and another buffer reuse the address before a notify returns,
  /// it wakes that buffer's waiters instead. It takes a bug in the core,
  /// which made the notify fail, to get here.)
  fn notify_later(&'static self, key: usize, count: usize) -> Guarded<bool>;

  /// Queues a sync waiter on `key` with a timeout of `timeout_ms` (>= 0;
  /// +∞ for none), if `still_expected()` holds under the bucket lock;
  /// `None` for "not-equal". It parks on `parker`, the calling thread's
  /// own, reused by each of its waits (reset here: the thread's previous
  /// wait must have ended, through [`wait_slice`](Self::wait_slice) or
  /// [`abandon_sync`](Self::abandon_sync)). Then call `wait_slice`.
  fn enqueue_sync(
    &'static self,
    key: usize,
    timeout_ms: f64,
    still_expected: &mut dyn FnMut() -> bool,
    parker: &Arc<Parker>,
  ) -> Guarded<Option<SyncWait>>;

  /// Blocks for at most `slice` of the sync wait in `wait` and says how it
  /// stands; a wait that ended is taken out of `wait`.
  fn wait_slice(
    &'static self,
    wait: &mut Option<SyncWait>,
    slice: Duration,
  ) -> Guarded<Option<Slice>>;

  /// Ends a sync wait whose caller will see no outcome: its waiter leaves
  /// its queue. The key of a wake-up it already got, if one did: for the
  /// caller to pass on. `wait` is taken out only if this returns `Ok`: on [`Panicked`] it is
  /// still the caller's, to try again (its waiter may still be queued).
  fn abandon_sync(&'static self, wait: &mut Option<SyncWait>) -> Guarded<Option<usize>>;

  /// Moves what was delivered to `env` into `into` (which must be empty).
  fn drain(&'static self, env: &Mailbox<S>, into: &mut Vec<Woken>) -> Guarded<()>;

  /// Closes `env`'s mailbox for good; returns what it held (see
  /// [`Mailbox::close`]).
  fn close(&'static self, env: &Mailbox<S>) -> Guarded<Vec<Woken>>;

  /// Waiters queued on `key`, or in all if `None`.
  fn waiters(&'static self, key: Option<usize>) -> Guarded<usize>;

  /// Deadlines the notifier thread holds.
  fn deadlines(&'static self) -> Guarded<usize>;

  /// Threads of [`notify_later`](Self::notify_later) still retrying.
  fn retriers(&'static self) -> Guarded<usize>;

  /// The registry's "may be waiting" counts ([`Registry::may_wait_counts`]),
  /// for readers outside Rust: every copy of the package reads the owner's.
  fn may_wait_counts(&'static self) -> Guarded<(*const u8, usize)>;

  /// Claims the AsyncLock owner `owner` (see [`crate::robust`]: the
  /// thread's worker_threads `threadId` + 1, unique in the process and
  /// never reused) for an env of the calling system thread. False if an
  /// env of another system thread holds it: the runtime gave two threads
  /// one threadId, and their locks could not be told apart. Every copy of
  /// the package loaded in a thread claims the same owner there.
  fn claim_owner(&'static self, owner: u32) -> Guarded<bool>;

  /// An env that claimed `owner` has ended.
  fn forget_owner(&'static self, owner: u32) -> Guarded<()>;

  /// A number for a new env, the key of its rows in the table of who holds
  /// and waits ([`crate::diag`]).
  fn diag_new_env(&'static self) -> Guarded<u64>;

  /// `env`'s instance watched at `at` goes in the table (see
  /// [`Diag::watch`]).
  ///
  /// # Safety
  /// As [`Diag::watch`]: the memory the row names is live until the row
  /// leaves the table.
  unsafe fn diag_watch(&'static self, env: u64, at: usize, row: Watched) -> Guarded<()>;

  /// A page of waits of `env`'s thread `thread` at `at` goes in the table
  /// (see [`Diag::add_page`]).
  ///
  /// # Safety
  /// As [`Diag::add_page`]: the page is live until `env` is forgotten.
  unsafe fn diag_page(&'static self, env: u64, thread: f64, at: usize) -> Guarded<()>;

  /// `env`'s instance watched at `at` leaves the table.
  fn diag_unwatch(&'static self, env: u64, at: usize) -> Guarded<()>;

  /// `env` has ended: its rows and waits leave the table.
  fn diag_forget_env(&'static self, env: u64) -> Guarded<()>;

  /// A take of `env` starts to wait; its id, or the cycle it would close
  /// with deadlock detection on (see [`Diag::wait`]).
  fn diag_wait(&'static self, env: u64, wait: Wait) -> Guarded<Result<u64, Closed>>;

  /// The table's flags after setting them to `to`, if given (see
  /// [`Diag::flags`]).
  fn diag_flags(&'static self, to: Option<u32>) -> Guarded<u32>;

  /// A thread took a primitive (see [`Diag::took`]).
  fn diag_took(
    &'static self,
    thread: f64,
    word: usize,
    stack: Option<Box<str>>,
    within: Option<&[usize]>,
  ) -> Guarded<Vec<Inversion>>;

  /// The wait `id` has ended.
  fn diag_wait_end(&'static self, id: u64) -> Guarded<()>;

  /// Every row, as its memory reads now, and every wait.
  fn diag_snapshot(&'static self) -> Guarded<Snapshot>;

  /// Test-only: from now on, starting the notifier thread fails.
  fn fail_timer_start_for_testing(&'static self) -> Guarded<()>;

  /// Test-only: the next `times` calls of the method named `method` (as in
  /// this trait: `"notify"`, `"enqueue_async"`, …) panic in the core's
  /// code, before they do anything; they return [`Panicked`]. (None if
  /// `times` is 0.) `"expire"` names the notifier's expire callback: its
  /// next `times` due waiters each panic just before being taken off
  /// their queue; `"expire_after_taking"`, just after.
  fn panic_for_testing(&'static self, method: &str, times: u32) -> Guarded<()>;
}

// The bodies of `CoreApi`'s methods, run under `guarded` (below).
impl<S: Signal + Send + Sync + 'static> Core<S> {
  fn async_deadline(&'static self, timeout_ms: f64) -> Result<Option<AsyncDeadline>, String> {
    let Some(deadline) = When::after(self.epoch, timeout_ms) else {
      return Ok(None);
    };
    self.timer()?;
    Ok(Some(AsyncDeadline(deadline)))
  }

  fn enqueue_async(
    &'static self,
    key: usize,
    deadline: Option<AsyncDeadline>,
    still_expected: &mut dyn FnMut() -> bool,
    env: &Arc<Mailbox<S>>,
    slot: u32,
  ) -> Enqueued {
    // The deadline goes to the notifier thread under the bucket lock, so
    // its add precedes any notify's cancel; waking the thread for it (a
    // system call) waits until the lock is released. An `AsyncDeadline`
    // exists only once the notifier has started (`async_deadline`), and it
    // never stops: one from another core would be a bug, not a waiter that
    // silently never times out.
    let deadline = deadline.map(AsyncDeadline::when);
    let timer = deadline.map(|_| {
      self.timer.get().expect(
        "an AsyncDeadline comes from this core's async_deadline, which started the notifier",
      )
    });
    let mut wake_timer = false;
    let enqueued = self.registry.enqueue_if(key, still_expected, |id| {
      if let (Some(at), Some(timer)) = (deadline, timer) {
        wake_timer = timer.schedule(Deadline {
          at: at.instant(self.epoch),
          id,
          key,
        });
      }
      Waiter::Async {
        env: env.clone(),
        slot,
        deadline,
      }
    });
    if let (true, Some(timer)) = (wake_timer, timer) {
      // The waiter is queued: a panic here must not reach the caller, who
      // would take `Panicked` to mean it was not, free its slot, and so
      // strand the waiter. (Unparking a thread does not panic; should it,
      // the notifier wakes for its next deadline instead.)
      let wake = std::panic::AssertUnwindSafe(|| timer.wake());
      if let Err(payload) = std::panic::catch_unwind(wake) {
        std::mem::forget(payload); // its Drop could panic, outside the catch
      }
    }
    enqueued
  }

  fn notify(&'static self, key: usize, count: usize) -> usize {
    wake::notify(
      &self.registry,
      &|at, id| self.cancel_deadline(at, id),
      key,
      count,
    )
  }

  fn withdraw(&'static self, key: usize, id: WaiterId, deadline: Option<When>) -> bool {
    if self.registry.remove(key, id).is_none() {
      return false;
    }
    if let Some(at) = deadline {
      self.cancel_deadline(at, id);
    }
    true
  }

  fn take_back(
    &'static self,
    cancelled: &mut Cancelled,
    key: usize,
    id: WaiterId,
    deadline: Option<When>,
  ) {
    if cancelled.withdraw(&self.registry, key, id).is_some() {
      if let Some(at) = deadline {
        self.cancel_deadline(at, id);
      }
    }
  }

  fn pass_on(&'static self, keys: &mut dyn Iterator<Item = usize>) {
    wake::pass_on(&self.registry, &|at, id| self.cancel_deadline(at, id), keys);
  }

  fn notify_later(&'static self, key: usize, count: usize) -> bool {
    // The thread runs this copy's code, as the notifier thread does. (First:
    // a panic in here must not leave a retrier counted.)
    (self.before_timer_start)();
    if self.retriers.fetch_add(1, Ordering::Relaxed) >= RETRIERS {
      self.retriers.fetch_sub(1, Ordering::Relaxed);
      return false;
    }
    // Backing off as the notifier does with a deadline that failed.
    let retry = move || {
      let mut wait = Duration::from_nanos(handshake::RETRY_FIRST);
      loop {
        std::thread::sleep(wait);
        // Guarded: a panic comes back as Err, and is tried again.
        if CoreApi::notify(self, key, count).is_ok() {
          break;
        }
        wait = (wait * 2).min(Duration::from_nanos(handshake::RETRY_MAX));
      }
      self.retriers.fetch_sub(1, Ordering::Relaxed);
    };
    let spawned = std::thread::Builder::new()
      .name("atomics-waitasync-retry".into())
      .stack_size(256 * 1024)
      .spawn(retry);
    if spawned.is_err() {
      self.retriers.fetch_sub(1, Ordering::Relaxed);
      return false;
    }
    true
  }

  fn enqueue_sync(
    &'static self,
    key: usize,
    timeout_ms: f64,
    still_expected: &mut dyn FnMut() -> bool,
    parker: &Arc<Parker>,
  ) -> Option<SyncWait> {
    // Everything that can fail comes before the waiter is queued: a panic
    // after that would leave it queued with nobody to end its wait.
    let deadline = deadline_after(timeout_ms);
    sync_wait::enqueue(
      &self.registry,
      key,
      deadline,
      parker,
      still_expected,
      Waiter::Sync,
    )
  }

  fn wait_slice(&'static self, wait: &mut Option<SyncWait>, slice: Duration) -> Option<Slice> {
    sync_wait::slice(&self.registry, wait, slice)
  }

  fn abandon_sync(&'static self, wait: &mut Option<SyncWait>) -> Option<usize> {
    let sync = wait.as_ref()?;
    // Sync timeouts are taken by the waiting thread itself, so a waiter
    // gone from its queue was taken by a notify: `sync_wait::abandon` then
    // waits for its imminent unpark, so that the parker can be reused.
    let unseen = sync_wait::abandon(&self.registry, sync);
    // Only now: should anything above panic, the wait is still the
    // caller's, for another try.
    *wait = None;
    unseen
  }

  fn drain(&'static self, env: &Mailbox<S>, into: &mut Vec<Woken>) {
    env.drain_into(into);
  }

  fn close(&'static self, env: &Mailbox<S>) -> Vec<Woken> {
    env.close()
  }

  fn waiters(&'static self, key: Option<usize>) -> usize {
    match key {
      Some(key) => self.registry.waiters_on(key),
      None => self.registry.len(),
    }
  }

  fn deadlines(&'static self) -> usize {
    self.timer.get().map_or(0, Timer::pending)
  }

  fn may_wait_counts(&'static self) -> (*const u8, usize) {
    self.registry.may_wait_counts()
  }

  fn fail_timer_start_for_testing(&'static self) {
    self.fail_timer_start.store(true, Ordering::Relaxed);
  }

  fn claim_owner(&'static self, owner: u32) -> bool {
    let here = std::thread::current().id();
    let mut owners = self.owners.lock();
    let (thread, envs) = owners.entry(owner).or_insert((here, 0));
    if *thread != here {
      return false;
    }
    *envs += 1;
    true
  }

  fn forget_owner(&'static self, owner: u32) {
    let mut owners = self.owners.lock();
    if let Some((_, envs)) = owners.get_mut(&owner) {
      *envs -= 1;
      if *envs == 0 {
        owners.remove(&owner);
      }
    }
  }
}

impl<S: Signal + Send + Sync + 'static> CoreApi<S> for Core<S> {
  fn async_deadline(
    &'static self,
    timeout_ms: f64,
  ) -> Guarded<Result<Option<AsyncDeadline>, String>> {
    self.guarded("async_deadline", || Core::async_deadline(self, timeout_ms))
  }

  fn enqueue_async(
    &'static self,
    key: usize,
    deadline: Option<AsyncDeadline>,
    still_expected: &mut dyn FnMut() -> bool,
    env: &Arc<Mailbox<S>>,
    slot: u32,
  ) -> Guarded<Enqueued> {
    self.guarded("enqueue_async", || {
      Core::enqueue_async(self, key, deadline, still_expected, env, slot)
    })
  }

  fn notify(&'static self, key: usize, count: usize) -> Guarded<usize> {
    self.guarded("notify", || Core::notify(self, key, count))
  }

  fn withdraw(&'static self, key: usize, id: WaiterId, deadline: Option<When>) -> Guarded<bool> {
    self.guarded("withdraw", || Core::withdraw(self, key, id, deadline))
  }

  fn take_back(
    &'static self,
    cancelled: &mut Cancelled,
    key: usize,
    id: WaiterId,
    deadline: Option<When>,
  ) -> Guarded<()> {
    self.guarded("take_back", || {
      Core::take_back(self, cancelled, key, id, deadline)
    })
  }

  fn pass_on(&'static self, keys: &mut dyn Iterator<Item = usize>) -> Guarded<()> {
    self.guarded("pass_on", || Core::pass_on(self, keys))
  }

  fn notify_later(&'static self, key: usize, count: usize) -> Guarded<bool> {
    self.guarded("notify_later", || Core::notify_later(self, key, count))
  }

  fn enqueue_sync(
    &'static self,
    key: usize,
    timeout_ms: f64,
    still_expected: &mut dyn FnMut() -> bool,
    parker: &Arc<Parker>,
  ) -> Guarded<Option<SyncWait>> {
    self.guarded("enqueue_sync", || {
      Core::enqueue_sync(self, key, timeout_ms, still_expected, parker)
    })
  }

  fn wait_slice(
    &'static self,
    wait: &mut Option<SyncWait>,
    slice: Duration,
  ) -> Guarded<Option<Slice>> {
    self.guarded("wait_slice", || Core::wait_slice(self, wait, slice))
  }

  fn abandon_sync(&'static self, wait: &mut Option<SyncWait>) -> Guarded<Option<usize>> {
    self.guarded("abandon_sync", || Core::abandon_sync(self, wait))
  }

  fn drain(&'static self, env: &Mailbox<S>, into: &mut Vec<Woken>) -> Guarded<()> {
    self.guarded("drain", || Core::drain(self, env, into))
  }

  fn close(&'static self, env: &Mailbox<S>) -> Guarded<Vec<Woken>> {
    self.guarded("close", || Core::close(self, env))
  }

  fn waiters(&'static self, key: Option<usize>) -> Guarded<usize> {
    self.guarded("waiters", || Core::waiters(self, key))
  }

  fn deadlines(&'static self) -> Guarded<usize> {
    self.guarded("deadlines", || Core::deadlines(self))
  }

  fn retriers(&'static self) -> Guarded<usize> {
    self.guarded("retriers", || self.retriers.load(Ordering::Relaxed))
  }

  fn may_wait_counts(&'static self) -> Guarded<(*const u8, usize)> {
    self.guarded("may_wait_counts", || Core::may_wait_counts(self))
  }

  fn claim_owner(&'static self, owner: u32) -> Guarded<bool> {
    self.guarded("claim_owner", || Core::claim_owner(self, owner))
  }

  fn forget_owner(&'static self, owner: u32) -> Guarded<()> {
    self.guarded("forget_owner", || Core::forget_owner(self, owner))
  }

  fn diag_new_env(&'static self) -> Guarded<u64> {
    self.guarded("diag_new_env", || self.diag.new_env())
  }

  unsafe fn diag_watch(&'static self, env: u64, at: usize, row: Watched) -> Guarded<()> {
    // SAFETY: the caller keeps `Diag::watch`'s contract.
    self.guarded("diag_watch", || unsafe { self.diag.watch(env, at, row) })
  }

  unsafe fn diag_page(&'static self, env: u64, thread: f64, at: usize) -> Guarded<()> {
    // SAFETY: the caller keeps `Diag::add_page`'s contract.
    self.guarded("diag_page", || unsafe {
      self.diag.add_page(env, thread, at)
    })
  }

  fn diag_unwatch(&'static self, env: u64, at: usize) -> Guarded<()> {
    self.guarded("diag_unwatch", || self.diag.unwatch(env, at))
  }

  fn diag_forget_env(&'static self, env: u64) -> Guarded<()> {
    let forgot = self.guarded("diag_forget_env", || self.diag.forget_env(env));
    if forgot.is_err() {
      // Its rows stay, over memory its env's end may free (a buffer
      // made in that thread goes with its isolate): the table must not
      // read memory again.
      let _ = self.guarded("diag_blind", || self.diag.blind());
    }
    forgot
  }

  fn diag_wait(&'static self, env: u64, wait: Wait) -> Guarded<Result<u64, Closed>> {
    self.guarded("diag_wait", || self.diag.wait(env, wait))
  }

  fn diag_flags(&'static self, to: Option<u32>) -> Guarded<u32> {
    self.guarded("diag_flags", || self.diag.flags(to))
  }

  fn diag_took(
    &'static self,
    thread: f64,
    word: usize,
    stack: Option<Box<str>>,
    within: Option<&[usize]>,
  ) -> Guarded<Vec<Inversion>> {
    self.guarded("diag_took", || self.diag.took(thread, word, stack, within))
  }

  fn diag_wait_end(&'static self, id: u64) -> Guarded<()> {
    self.guarded("diag_wait_end", || self.diag.wait_end(id))
  }

  fn diag_snapshot(&'static self) -> Guarded<Snapshot> {
    self.guarded("diag_snapshot", || self.diag.snapshot())
  }

  fn fail_timer_start_for_testing(&'static self) -> Guarded<()> {
    self.guarded("fail_timer_start_for_testing", || {
      Core::fail_timer_start_for_testing(self)
    })
  }

  fn panic_for_testing(&'static self, method: &str, times: u32) -> Guarded<()> {
    self.guarded("panic_for_testing", || {
      let armed = (times > 0).then(|| (method.to_owned(), times));
      self.armed.store(armed.is_some(), Ordering::Relaxed);
      *self.panic_in.lock().unwrap_or_else(|e| e.into_inner()) = armed;
    })
  }
}
