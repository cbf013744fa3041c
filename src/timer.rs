//! The notifier thread: one process-wide thread that owns every async
//! waiter's deadline.
//!
//! Deadlines arrive as messages on a crossbeam channel and live in an ordered
//! map keyed by `(deadline, id)`, which is both the heap (its first entry is
//! the next to expire) and the index a cancel needs (a notified waiter is
//! taken out in O(log n), so nothing is left behind until its deadline).
//! The thread sleeps until the earliest deadline or the next message that
//! must wake it, whichever comes first, and hands every entry that has come
//! due to the expire callback in one batch. The loop itself is
//! `handshake::run`, generic over its channel, clock and parking; this
//! module gives it the real ones ([`Thread`]).
//!
//! Invariant: an `Add` for a waiter is sent before any `Cancel` for it can
//! be (the caller sends `Add` under the registry lock that any notifier must
//! take first), and the channel keeps each sender's order, so a cancel never
//! overtakes its add.
//!
//! Waking: the thread does not block on the channel (a blocked receiver
//! costs every sender a futex wake, ~5 µs: 10,000 waitAsync calls with a
//! timeout then took 50 ms). It parks until its next deadline and publishes
//! that deadline in `sleep_until`; a sender unparks it only when its own
//! deadline is earlier, or when messages pile up. A cancel wakes it only
//! when it cancels the deadline the thread sleeps until (which then needs
//! not wake up for it); other cancelled deadlines are dropped when it next
//! wakes, at the latest when messages pile up. So an idle thread holding
//! deadlines sleeps until the first of them, and no longer wakes every
//! 50 ms to sweep.
//! After publishing, the thread looks at the channel once more before it
//! parks, and a sender reads `sleep_until` after sending, both with SeqCst
//! fences between, so one of them always sees the other (no lost wake-up):
//! `handshake.rs`, whose loop and handshake `tests/loom_handshake.rs`
//! model-checks.
//!
//! The timer owns no JS handles and knows no N-API: the expire callback
//! decides what a timeout means (usually: remove the waiter from the
//! registry; if that succeeds, the waiter timed out).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::handshake::{self, Due, Handshake, Message, Port, NO_DEADLINE};
use crate::registry::WaiterId;

/// One deadline: which waiter, on which key, expires when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
  pub at: Instant,
  pub id: WaiterId,
  pub key: usize,
}

/// Messages that may wait in the channel before a sender wakes the thread
/// to take them (bounds the memory cancels hold while it sleeps).
const BACKLOG: usize = 4096;

/// What the notifier thread shares with its senders.
struct Shared {
  /// When the parked thread will wake by itself, in nanoseconds after
  /// `epoch` (see `handshake.rs`).
  handshake: Handshake,
  epoch: Instant,
  /// Deadlines the thread holds (for tests and leak checks).
  pending: AtomicUsize,
  /// Times the thread came back from parking (for tests).
  wakes: AtomicUsize,
}

impl Shared {
  /// `at` in the deadlines' units: nanoseconds after the epoch, saturated
  /// to what a deadline can be. One before the epoch is due at once: 1,
  /// not `AWAKE` (0); one past `u64::MAX - 1` ns (584 years) is that: never
  /// earlier (a truncated `u128` would wrap round and fire it early), and
  /// not `NO_DEADLINE`.
  fn nanos(&self, at: Instant) -> u64 {
    let nanos = at.saturating_duration_since(self.epoch).as_nanos();
    u64::try_from(nanos)
      .unwrap_or(u64::MAX)
      .clamp(1, NO_DEADLINE - 1)
  }
}

/// The notifier thread's [`Port`]: its end of the channel, the clock as
/// nanoseconds after the epoch, and `std::thread::park`.
struct Thread {
  receiver: Receiver<Message<Deadline>>,
  shared: Arc<Shared>,
}

impl Port for Thread {
  type Item = Deadline;

  fn try_recv(&self) -> Option<Message<Deadline>> {
    self.receiver.try_recv().ok()
  }

  fn is_empty(&self) -> bool {
    self.receiver.is_empty()
  }

  fn now(&self) -> u64 {
    self.shared.nanos(Instant::now())
  }

  fn park(&self, until: u64) {
    if until == NO_DEADLINE {
      thread::park();
    } else {
      let at = self.shared.epoch + Duration::from_nanos(until);
      thread::park_timeout(at.saturating_duration_since(Instant::now()));
    }
  }

  fn alone(&self) -> bool {
    self.shared.handshake.closed()
  }

  fn held(&self, count: usize) {
    self.shared.pending.store(count, Ordering::Relaxed);
  }

  fn woke(&self) {
    self.shared.wakes.fetch_add(1, Ordering::Relaxed);
  }
}

/// Handle to the notifier thread. Dropping every handle ends the thread.
pub struct Timer {
  sender: Sender<Message<Deadline>>,
  receiver: Receiver<Message<Deadline>>,
  shared: Arc<Shared>,
  thread: thread::Thread,
}

impl Timer {
  /// Starts the notifier thread. `on_expire` runs on that thread with every
  /// deadline that has passed, earliest first, and takes them from the
  /// [`Due`] iterator. It should not panic: a panic is caught and the
  /// thread goes on; a deadline it had taken is lost (one counts as taken
  /// once the callback asks for the next, or returns: see [`Due`]), and
  /// those not yet taken, the one in hand included, are handed over again
  /// (the first a little later if it took none: see [`handshake::run`]).
  pub fn start(
    on_expire: impl FnMut(&mut Due<Deadline>) + Send + 'static,
  ) -> std::io::Result<Timer> {
    Timer::start_on(on_expire, |port| port)
  }

  /// [`start`](Timer::start), with the thread's port made by `port` from
  /// the real one (tests wrap it, to see how the thread parks).
  fn start_on<P: Port<Item = Deadline> + Send + 'static>(
    on_expire: impl FnMut(&mut Due<Deadline>) + Send + 'static,
    port: impl FnOnce(Thread) -> P,
  ) -> std::io::Result<Timer> {
    let (sender, receiver) = unbounded();
    let shared = Arc::new(Shared {
      handshake: Handshake::default(),
      epoch: Instant::now(),
      pending: AtomicUsize::new(0),
      wakes: AtomicUsize::new(0),
    });
    let port = port(Thread {
      receiver: receiver.clone(),
      shared: shared.clone(),
    });
    let own = shared.clone();
    let handle = thread::Builder::new()
      .name("atomics-waitasync-notifier".into())
      .spawn(move || handshake::run(&port, &own.handshake, on_expire))?;
    Ok(Timer {
      sender,
      receiver,
      shared,
      thread: handle.thread().clone(),
    })
  }

  /// Schedules `deadline`; wakes the thread if this deadline is earlier
  /// than the one it sleeps until.
  pub fn add(&self, deadline: Deadline) {
    if self.schedule(deadline) {
      self.wake();
    }
  }

  /// Sends `deadline` to the thread without waking it: cheap, non-blocking,
  /// no system call, so callable under a registry lock. True when the
  /// caller must [`wake`](Timer::wake) the thread (once the lock is gone):
  /// it sleeps until a later deadline.
  #[must_use]
  pub fn schedule(&self, deadline: Deadline) -> bool {
    let at = self.shared.nanos(deadline.at);
    // The receiver lives as long as any sender: send cannot fail.
    let _ = self.sender.send(Message::Add {
      at,
      id: deadline.id,
      item: deadline,
    });
    self.shared.handshake.wake_for_add(at) || self.receiver.len() > BACKLOG
  }

  /// Wakes the thread, to take what [`schedule`](Timer::schedule) sent.
  pub fn wake(&self) {
    self.thread.unpark();
  }

  /// Forgets a deadline (its waiter was notified). Unknown ones are ignored.
  /// Wakes the thread only if it sleeps until this very deadline (or
  /// messages pile up); returns whether it did.
  pub fn cancel(&self, at: Instant, id: WaiterId) -> bool {
    let at = self.shared.nanos(at);
    let _ = self.sender.send(Message::Cancel { at, id });
    let sleeps_until_this = self.shared.handshake.wake_for_cancel(at);
    let wake = sleeps_until_this || self.receiver.len() > BACKLOG;
    if wake {
      self.thread.unpark();
    }
    wake
  }

  /// How many times the thread has come back from parking (for tests).
  pub fn wakes_for_testing(&self) -> usize {
    self.shared.wakes.load(Ordering::Relaxed)
  }

  /// Deadlines the thread holds now (messages still in flight not counted).
  pub fn pending(&self) -> usize {
    self.shared.pending.load(Ordering::Relaxed)
  }
}

impl Drop for Timer {
  fn drop(&mut self) {
    // The thread ends once it sees the handshake closed.
    self.shared.handshake.close(|| self.thread.unpark());
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crossbeam_channel::{unbounded, Receiver, Sender};
  use std::time::Duration;

  fn deadline(ms: u64, id: WaiterId, base: Instant) -> Deadline {
    Deadline {
      at: base + Duration::from_millis(ms),
      id,
      key: id as usize * 4,
    }
  }

  /// Batches of expired deadlines, with the time each fired.
  type Batches = Receiver<(Instant, Vec<Deadline>)>;

  /// A timer held at a gate: its first expire call (a deadline due at
  /// once) blocks until `open` is sent. Meanwhile the thread reads no
  /// messages, so whatever the test sends before opening is read in one
  /// go, in order, however slow the machine. Later batches go to the
  /// returned receiver, with the time they fired.
  fn gated() -> (Timer, Sender<()>, Batches) {
    let (tx, rx) = unbounded();
    let (open, gate) = unbounded::<()>();
    let (entered, at_gate) = unbounded::<()>();
    let mut first = true;
    let timer = Timer::start(move |due| {
      if std::mem::take(&mut first) {
        entered.send(()).unwrap();
        gate.recv().unwrap();
      } else {
        tx.send((Instant::now(), due.collect::<Vec<_>>())).unwrap();
      }
    })
    .unwrap();
    timer.add(Deadline {
      at: Instant::now(),
      id: WaiterId::MAX,
      key: 0,
    });
    at_gate.recv().unwrap();
    (timer, open, rx)
  }

  #[test]
  fn expires_in_deadline_order_and_not_early() {
    let (timer, open, rx) = gated();
    let base = Instant::now();
    timer.add(deadline(30, 1, base));
    timer.add(deadline(10, 2, base));
    timer.add(deadline(20, 3, base));
    open.send(()).unwrap();
    let mut order = Vec::new();
    while order.len() < 3 {
      let (when, due) = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("deadline fired");
      for d in due {
        assert!(when >= d.at, "fired before its deadline");
        order.push(d.id);
      }
    }
    assert_eq!(order, [2, 3, 1]);
    assert_eq!(timer.pending(), 0);
  }

  #[test]
  fn cancelled_deadline_never_fires_and_leaves_nothing() {
    let (timer, open, rx) = gated();
    let base = Instant::now();
    // Due at once, and cancelled before the thread reads either message.
    let cancelled = deadline(0, 7, base);
    timer.add(cancelled);
    timer.cancel(cancelled.at, cancelled.id);
    timer.add(deadline(10, 8, base));
    open.send(()).unwrap();
    let (_, due) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [8]);
    assert_eq!(timer.pending(), 0);
  }

  /// Spins (yielding) until `done`, for at most 5 s.
  fn until(what: &str, done: impl Fn() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(5);
    while !done() {
      assert!(Instant::now() < give_up, "gave up waiting until {what}");
      std::thread::yield_now();
    }
  }

  /// The real thread's port, recording every `until` the thread parks
  /// with (before it parks).
  struct Recording {
    port: Thread,
    parks: Arc<std::sync::Mutex<Vec<u64>>>,
  }

  impl Port for Recording {
    type Item = Deadline;

    fn try_recv(&self) -> Option<Message<Deadline>> {
      self.port.try_recv()
    }

    fn is_empty(&self) -> bool {
      self.port.is_empty()
    }

    fn now(&self) -> u64 {
      self.port.now()
    }

    fn park(&self, until: u64) {
      self.parks.lock().unwrap().push(until);
      self.port.park(until);
    }

    fn alone(&self) -> bool {
      self.port.alone()
    }

    fn held(&self, count: usize) {
      self.port.held(count);
    }

    fn woke(&self) {
      self.port.woke();
    }
  }

  #[test]
  fn an_idle_thread_parks_with_no_deadline_then_until_its_first() {
    let parks = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, fired) = unbounded();
    let timer = Timer::start_on(
      move |due| tx.send(due.collect::<Vec<_>>()).unwrap(),
      |port| Recording {
        port,
        parks: parks.clone(),
      },
    )
    .unwrap();
    let parked = || parks.lock().unwrap().clone();
    // Holding nothing, it parks with no deadline: indefinitely. (Every
    // time: a park may return early for no reason, and the loop parks
    // again.)
    until("it parks", || !parked().is_empty());
    assert!(
      parked().iter().all(|&until| until == NO_DEADLINE),
      "an idle thread parked with a deadline: {:?}",
      parked()
    );
    let base = Instant::now();
    let first = deadline(3_600_000, 1, base);
    if timer.schedule(first) {
      timer.wake();
    }
    // Then until its first deadline, not sooner.
    let first_at = timer.shared.nanos(first.at);
    until("it parks until its first deadline", || {
      parked().last() == Some(&first_at)
    });
    // Neither a later deadline nor the cancel of one wakes it.
    let later = deadline(7_200_000, 2, base);
    assert!(!timer.schedule(later), "a later deadline woke it");
    assert!(
      !timer.cancel(later.at, later.id),
      "the cancel of a later deadline woke it"
    );
    // One due now does, and it then reads all three messages. (`schedule`
    // says false if the thread is awake already, back early from a park:
    // then it reads the channel before it parks again. Either way, that it
    // fires at all, and not in an hour, shows it was woken.)
    if timer.schedule(deadline(0, 3, base)) {
      timer.wake();
    }
    let due = fired
      .recv_timeout(Duration::from_secs(5))
      .expect("a due deadline did not wake it");
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [3]);
    until("it holds the first deadline only", || timer.pending() == 1);
    until("it parks until its first deadline again", || {
      parked().last() == Some(&first_at)
    });
    // Every park, however many times it came back early: indefinitely
    // while it held nothing, then until the first deadline, never sooner.
    let parks = parked();
    let with_deadline = parks.iter().position(|&u| u != NO_DEADLINE).unwrap();
    assert!(
      parks[with_deadline..]
        .iter()
        .all(|&until| until == first_at),
      "parked until something other than its first deadline: {parks:?}"
    );
    assert!(fired.try_recv().is_err(), "nothing else expired");
  }

  /// The thread's real park, seen from outside: over a window in which it
  /// has nothing to do (nothing scheduled, then only a deadline at the
  /// window's end), it parks once or twice, not over and over. A park
  /// that returned early every time (`park_timeout(1ms)` for `park`) parks
  /// hundreds of times in such a window. The window's end is an explicit
  /// signal: a deadline firing on another timer, or on this one.
  #[test]
  fn a_parked_thread_stays_parked_until_woken_or_due() {
    // A real park returns early only spuriously (std's futex park: never
    // in practice); generous, against a mutant's hundreds.
    const SLACK: usize = 10;
    const WINDOW_MS: u64 = 500;
    let parks = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, fired) = unbounded();
    let timer = Timer::start_on(
      move |due| tx.send(due.collect::<Vec<_>>()).unwrap(),
      |port| Recording {
        port,
        parks: parks.clone(),
      },
    )
    .unwrap();
    let count = || parks.lock().unwrap().len();
    until("it parks", || count() > 0);
    // Holding nothing: parked for the whole window, which a deadline on
    // another timer ends.
    let (clock_tx, clock_fired) = unbounded();
    let clock = Timer::start(move |due| {
      let _ = clock_tx.send(due.count());
    })
    .unwrap();
    let before = count();
    clock.add(deadline(WINDOW_MS, 1, Instant::now()));
    clock_fired.recv_timeout(Duration::from_secs(30)).unwrap();
    let idle = count() - before;
    assert!(
      idle <= SLACK,
      "an idle thread parked {idle} times while nothing was scheduled"
    );
    // Holding one deadline: parked until it, then once more (idle again).
    let before = count();
    timer.add(deadline(WINDOW_MS, 2, Instant::now()));
    let due = fired.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [2]);
    until("it parks again", || count() >= before + 2);
    let waiting = count() - before;
    assert!(
      waiting <= SLACK,
      "the thread parked {waiting} times waiting for its one deadline"
    );
  }

  #[test]
  fn nanos_saturate_and_never_wrap_round() {
    let timer = Timer::start(|_| {}).unwrap();
    let shared = &timer.shared;
    let epoch = shared.epoch;
    assert_eq!(shared.nanos(epoch), 1, "due at once, not AWAKE");
    assert_eq!(shared.nanos(epoch - Duration::from_secs(1)), 1);
    assert_eq!(shared.nanos(epoch + Duration::from_nanos(5)), 5);
    // More than 2^64 ns (584 years) after the epoch: the most a deadline
    // can be, short of NO_DEADLINE. Cast `as u64`, it was taken mod 2^64:
    // a deadline that could come due long before its time.
    let far = epoch + Duration::from_secs(1 << 40);
    assert_eq!(shared.nanos(far), NO_DEADLINE - 1);
    // The largest Instant there is, as near as this platform can get to
    // `epoch + Duration::MAX`.
    let mut step = Duration::MAX;
    let mut latest = epoch;
    while step > Duration::ZERO {
      if let Some(later) = latest.checked_add(step) {
        latest = later;
      } else {
        step /= 2;
      }
    }
    assert!(latest > far);
    assert_eq!(shared.nanos(latest), NO_DEADLINE - 1);
  }

  #[test]
  fn equal_deadlines_all_fire_once() {
    let (tx, rx) = unbounded();
    let timer = Timer::start(move |due| tx.send(due.collect::<Vec<_>>()).unwrap()).unwrap();
    let at = Instant::now() + Duration::from_millis(10);
    for id in 0..100 {
      timer.add(Deadline { at, id, key: 0 });
    }
    let mut fired: Vec<WaiterId> = Vec::new();
    while fired.len() < 100 {
      let batch = rx.recv_timeout(Duration::from_secs(5)).unwrap();
      fired.extend(batch.iter().map(|d| d.id));
    }
    fired.sort_unstable();
    assert_eq!(
      fired,
      (0..100).collect::<Vec<_>>(),
      "each fires exactly once"
    );
    assert!(rx.recv_timeout(Duration::from_millis(20)).is_err());
  }

  #[test]
  fn an_earlier_deadline_wakes_a_thread_sleeping_until_a_later_one() {
    let (tx, rx) = unbounded();
    let timer =
      Timer::start(move |due| tx.send((Instant::now(), due.collect::<Vec<_>>())).unwrap()).unwrap();
    let base = Instant::now();
    let far = deadline(60_000, 1, base);
    timer.add(far);
    let far_at = timer.shared.nanos(far.at);
    until("it sleeps until the far deadline", || {
      timer.shared.handshake.published() == far_at
    });
    timer.add(deadline(5, 2, base));
    let (when, due) = rx
      .recv_timeout(Duration::from_secs(5))
      .expect("the early deadline fired");
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [2]);
    assert!(when >= base + Duration::from_millis(5));
  }

  #[test]
  fn a_cancelled_far_deadline_is_dropped_long_before_it_would_expire() {
    let (tx, fired) = unbounded();
    let timer = Timer::start(move |due| tx.send(due.collect::<Vec<_>>()).unwrap()).unwrap();
    let far = deadline(3_600_000, 1, Instant::now());
    timer.add(far);
    let far_at = timer.shared.nanos(far.at);
    until("it sleeps until the far deadline", || {
      timer.shared.handshake.published() == far_at
    });
    timer.cancel(far.at, far.id);
    until("the cancelled deadline is dropped", || timer.pending() == 0);
    assert!(fired.try_recv().is_err(), "nothing may expire");
  }

  /// Sends on its channel when dropped: the expire callback owns one, and
  /// the thread drops the callback when it ends.
  struct Ended(Sender<()>);

  impl Drop for Ended {
    fn drop(&mut self) {
      let _ = self.0.send(());
    }
  }

  #[test]
  fn dropping_a_timer_ends_its_thread() {
    // Many times: the thread may be parked, about to park, or just woken
    // when the handle goes.
    for round in 0..2_000 {
      let (tx, ended) = unbounded();
      let guard = Ended(tx);
      let timer = Timer::start(move |_| {
        let _ = &guard;
      })
      .unwrap();
      if round % 2 == 0 {
        timer.add(deadline(3_600_000, 1, Instant::now()));
      }
      drop(timer);
      ended
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| panic!("round {round}: the thread outlived its Timer"));
    }
  }

  #[test]
  fn a_panicking_expire_callback_does_not_end_the_thread() {
    let (tx, rx) = unbounded();
    let (entered, panicking) = unbounded();
    let mut first = true;
    let timer = Timer::start(move |due: &mut Due<Deadline>| {
      if std::mem::take(&mut first) {
        let _ = due.next(); // in hand, not taken: it comes back
        entered.send(()).unwrap();
        panic!("the expire callback panics (on purpose, in this test)");
      }
      tx.send(due.collect::<Vec<_>>()).unwrap();
    })
    .unwrap();
    let base = Instant::now();
    timer.add(deadline(0, 1, base));
    panicking.recv().unwrap();
    // The deadline in hand comes back (a little later: the callback took
    // none), and the thread keeps serving deadlines, and the callback keeps
    // its state.
    let due = rx
      .recv_timeout(Duration::from_secs(5))
      .expect("the deadline in hand at the panic fired");
    assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [1]);
    for id in 2..5 {
      timer.add(deadline(0, id, base));
      let due = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("a deadline after the panic fired");
      assert_eq!(due.iter().map(|d| d.id).collect::<Vec<_>>(), [id]);
    }
  }

  /// A panic payload whose Drop panics too.
  struct PanicsOnDrop;

  impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
      panic!("the panic payload panics when dropped (on purpose, in this test)");
    }
  }

  /// A callback that panics before taking anything must not get the same
  /// batch back at once, to panic again, forever (that made 4,577 calls in
  /// 200 ms for one deadline), nor lose the first of each such batch (its
  /// waiter would never time out): that one comes back a little later.
  #[test]
  fn a_callback_that_panics_before_taking_anything_makes_progress() {
    let (tx, rx) = unbounded();
    let (open, gate) = unbounded::<()>();
    let (entered, at_gate) = unbounded::<()>();
    let mut calls = 0;
    let timer = Timer::start(move |due: &mut Due<Deadline>| {
      calls += 1;
      if calls == 1 {
        // Held at the gate, so that the next three come in one batch.
        entered.send(()).unwrap();
        gate.recv().unwrap();
      } else if calls <= 4 {
        // Panics before taking anything (reports what it was handed).
        let ids = due.len();
        let _ = tx.send(ids);
        panic!("the expire callback panics before taking anything (on purpose, in this test)");
      } else {
        for d in due {
          let _ = tx.send(100 + d.id as usize);
        }
      }
    })
    .unwrap();
    let base = Instant::now();
    timer.add(deadline(0, 0, base));
    at_gate.recv().unwrap();
    for id in 1..=3 {
      timer.add(deadline(0, id, base));
    }
    open.send(()).unwrap();
    let next = || {
      rx.recv_timeout(Duration::from_secs(5))
        .expect("the expire callback was called")
    };
    // The first failed batch holds all three. The first of each failed
    // batch goes back for a millisecond or more, so what the next two get
    // depends on the clock. (A callback that gets the same batch back at
    // once, forever, fails a_deadline_whose_callback_always_panics_is_retried_slowly.)
    assert_eq!(next(), 3);
    for _ in 0..2 {
      assert!((1..=3).contains(&next()));
    }
    // Then each of them comes back, and is taken, once.
    let mut back = vec![next(), next(), next()];
    back.sort_unstable();
    assert_eq!(back, [101, 102, 103], "no deadline is dropped");
    // Nothing left to hand over; the thread lives on.
    timer.add(deadline(0, 7, base));
    assert_eq!(next(), 107);
  }

  /// A deadline whose callback always panics before taking it is handed
  /// over again and again (never dropped), but ever more slowly, not in a
  /// hot loop.
  #[test]
  fn a_deadline_whose_callback_always_panics_is_retried_slowly() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let timer = Timer::start(move |_: &mut Due<Deadline>| {
      counted.fetch_add(1, Ordering::Relaxed);
      panic!("the expire callback always panics (on purpose, in this test)");
    })
    .unwrap();
    timer.add(deadline(0, 1, Instant::now()));
    until("the deadline is handed over again", || {
      calls.load(Ordering::Relaxed) >= 3
    });
    let start = Instant::now();
    let before = calls.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    let during = calls.load(Ordering::Relaxed) - before;
    // 1, 2, 4, ... ms apart: about 8 calls in the first 300 ms, fewer
    // after; a hot loop makes thousands.
    assert!(
      during < 50,
      "{during} calls in {:?}: a hot loop",
      start.elapsed()
    );
    until("it is still held, never dropped", || timer.pending() == 1);
  }

  #[test]
  fn a_panic_loses_no_deadline_the_callback_had_not_taken() {
    let (tx, rx) = unbounded();
    let (open, gate) = unbounded::<()>();
    let (entered, at_gate) = unbounded::<()>();
    let mut calls = 0;
    let timer = Timer::start(move |due: &mut Due<Deadline>| {
      calls += 1;
      match calls {
        // Held at the gate, so that the next three come in one batch.
        1 => {
          entered.send(()).unwrap();
          gate.recv().unwrap();
        }
        // Takes the first of them, has the second in hand, then panics,
        // with a payload that panics again when dropped.
        2 => {
          let taken = due.next().map(|d| d.id);
          tx.send((taken, due.len())).unwrap();
          let _ = due.next(); // the first is taken now; the second in hand
          std::panic::panic_any(PanicsOnDrop);
        }
        _ => {
          for d in due {
            tx.send((Some(d.id), 0)).unwrap();
          }
        }
      }
    })
    .unwrap();
    let base = Instant::now();
    timer.add(deadline(0, 0, base));
    at_gate.recv().unwrap();
    for id in 1..=3 {
      timer.add(deadline(0, id, base));
    }
    open.send(()).unwrap();
    let next = || {
      rx.recv_timeout(Duration::from_secs(5))
        .expect("the deadlines not taken before the panic fired")
    };
    assert_eq!(next(), (Some(1), 2), "the panicking call got all three");
    // The one in hand and the one not handed out come back, at once (the
    // callback took one); the one taken does not.
    assert_eq!(next(), (Some(2), 0));
    assert_eq!(next(), (Some(3), 0));
    // And the thread lives on.
    timer.add(deadline(0, 4, base));
    assert_eq!(next(), (Some(4), 0));
  }

  #[test]
  fn a_backlog_past_the_bound_loses_nothing_and_blocks_nobody() {
    let (timer, open, rx) = gated();
    let timer = Arc::new(timer);
    let base = Instant::now();
    // While the thread is held, nothing but the backlog asks for a wake-up:
    // the first add that passes the bound does. (On a thread of its own,
    // as every sender here: a send that blocked would fail the test, not
    // hang it.)
    let (finished, done) = unbounded();
    let first = {
      let (timer, finished) = (timer.clone(), finished.clone());
      std::thread::spawn(move || {
        let wakes: Vec<bool> = (0..=BACKLOG as u64)
          .map(|id| timer.schedule(deadline(0, id, base)))
          .collect();
        finished.send(()).unwrap();
        wakes
      })
    };
    done
      .recv_timeout(Duration::from_secs(5))
      .expect("a sender blocked while the thread was held");
    let wakes = first.join().unwrap();
    assert_eq!(wakes.iter().position(|&w| w), Some(BACKLOG));
    assert_eq!(wakes.iter().filter(|&&w| w).count(), 1);
    // Two more senders, adding and cancelling three times the bound each:
    // none blocks on the held thread.
    const EACH: u64 = 3 * BACKLOG as u64;
    for sender in 1..=2 {
      let (timer, finished) = (timer.clone(), finished.clone());
      std::thread::spawn(move || {
        for i in 0..EACH {
          let d = deadline(0, sender * EACH + i, base);
          timer.add(d);
          if i % 2 == 1 {
            timer.cancel(d.at, d.id);
          }
        }
        finished.send(()).unwrap();
      });
    }
    for _ in 1..=2 {
      done
        .recv_timeout(Duration::from_secs(5))
        .expect("a sender blocked while the thread was held");
    }
    assert!(timer.receiver.len() > 3 * BACKLOG, "messages piled up");
    // Once free, the thread reads them all in one go: every deadline not
    // cancelled fires once, no cancelled one does.
    open.send(()).unwrap();
    let mut expected: Vec<WaiterId> = (0..=BACKLOG as u64).collect();
    expected.extend((EACH..3 * EACH).filter(|id| id % 2 == 0));
    let mut fired = Vec::new();
    while fired.len() < expected.len() {
      let (_, due) = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("deadlines keep firing");
      fired.extend(due.iter().map(|d| d.id));
    }
    fired.sort_unstable();
    assert_eq!(fired, expected);
    until("the thread holds nothing", || timer.pending() == 0);
    assert!(rx.try_recv().is_err(), "a cancelled deadline fired");
  }

  #[test]
  fn a_backlog_wakes_a_thread_that_sleeps_until_a_far_deadline() {
    let (tx, fired) = unbounded();
    let timer = Timer::start(move |due| tx.send(due.collect::<Vec<_>>()).unwrap()).unwrap();
    let base = Instant::now();
    let first = deadline(3_600_000, 0, base);
    timer.add(first);
    let first_at = timer.shared.nanos(first.at);
    until("it sleeps until its first deadline", || {
      timer.shared.handshake.published() == first_at
    });
    // Later deadlines: none wakes it, but past the bound they do together.
    let later: Vec<Deadline> = (1..=BACKLOG as u64 + 1)
      .map(|id| deadline(7_200_000, id, base))
      .collect();
    for &d in &later {
      timer.add(d);
    }
    until("it took every later deadline", || {
      timer.pending() == later.len() + 1
    });
    // The same for their cancels.
    until("it sleeps until its first deadline again", || {
      timer.shared.handshake.published() == first_at
    });
    for d in &later {
      timer.cancel(d.at, d.id);
    }
    until("it dropped every later deadline", || timer.pending() == 1);
    assert!(fired.try_recv().is_err(), "nothing may expire");
  }

  #[test]
  fn many_adds_from_many_threads_all_fire() {
    let (tx, rx) = unbounded();
    let timer = Arc::new(Timer::start(move |due| tx.send(due.count()).unwrap()).unwrap());
    let base = Instant::now();
    let senders: Vec<_> = (0..4u64)
      .map(|t| {
        let timer = timer.clone();
        std::thread::spawn(move || {
          for i in 0..2_000u64 {
            timer.add(deadline((i * 7 + t) % 30, t * 10_000 + i, base));
          }
        })
      })
      .collect();
    senders.into_iter().for_each(|s| s.join().unwrap());
    let mut fired = 0;
    while fired < 8_000 {
      fired += rx
        .recv_timeout(Duration::from_secs(5))
        .expect("deadlines keep firing");
    }
    assert_eq!(fired, 8_000);
  }
}
