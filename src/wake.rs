//! The wake-up core: what happens to waiters once a notify or a timeout has
//! taken them off their queues. Sync waiters are unparked; async ones are
//! delivered, in one batch per env, to their env's [`Mailbox`], to be
//! settled on the env's own thread. A wake-up that a notify counted but
//! whose env is going away (its mailbox is closed) is passed on to the next
//! waiter on the same key ([`pass_on`]), as if the dead waiter had never
//! been queued.
//!
//! Pure Rust, generic over how an env is signalled ([`Signal`]), how a
//! sync waiter is unparked ([`Unpark`]) and what a deadline is: the N-API
//! layer plugs in its ThreadsafeFunction, `Parker` and deadline encoding;
//! `tests/wake.rs` and `tests/loom_wake.rs` plug in plain ones, so that
//! pass-on and close-against-deliver are tested without Node and
//! model-checked with loom.
//!
//! Invariants:
//! - **Every counted wake-up reaches someone.** A notify's wake-up is
//!   delivered to a live env, or unparks a sync waiter, or goes on to the
//!   next waiter; a closed mailbox takes nothing, and whatever it held
//!   when it closed is handed back ([`Mailbox::close`]) to be passed on.
//! - **No recursion.** Passing on is a work list: a chain of any number of
//!   dead waiters costs no stack.
//! - **Signals only while open.** The env's signal is given only under the
//!   mailbox lock, while open: once `close` returns, it is never given
//!   again (for N-API: a released ThreadsafeFunction is never called).

use std::sync::Arc;

use smallvec::SmallVec;

use crate::registry::{Registry, WaiterId};
use crate::sync::Mutex;

/// How an async wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
  Woken,
  TimedOut,
}

/// A waiter taken off its queue, on its way to its env's thread: its slot
/// in the env's table of pending waiters, its registry id (the slot may
/// hold a later waiter by the time this arrives, if the first was
/// cancelled), and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Woken {
  pub slot: u32,
  pub id: WaiterId,
  /// The key it was queued on: where its wake-up goes on if its env dies
  /// before settling it.
  pub key: usize,
  pub how: Settled,
}

impl Woken {
  /// Where this wake-up goes if its thread never sees it (see [`pass_on`]):
  /// its key, for a notify's; none for a timeout's, which was meant for
  /// nobody else.
  pub fn unseen_key(&self) -> Option<usize> {
    (self.how == Settled::Woken).then_some(self.key)
  }
}

/// Tells an env's thread that its mailbox has something (N-API: calls its
/// ThreadsafeFunction). Called under the mailbox lock, while it is open;
/// must not block, panic or call into the registry. Returns whether the
/// signal was given: if not, nothing will ever drain the mailbox for it,
/// so the batch that was to be signalled is taken back ([`Mailbox::deliver`]).
pub trait Signal {
  #[must_use]
  fn signal(&self) -> bool;
}

/// Wakes a parked sync waiter. Must not panic: it also runs while a
/// panic unwinds ([`wake`]'s guard), where a second panic aborts.
pub trait Unpark {
  fn unpark(&self);
}

/// What a queue entry is: a parked thread, or an env's pending async wait.
pub enum Waiter<S, P, D> {
  Sync(Arc<P>),
  Async {
    env: Arc<Mailbox<S>>,
    /// Its slot in the env's table of pending waiters.
    slot: u32,
    /// Its deadline, if it has one: cancelled when a notify wakes it.
    deadline: Option<D>,
  },
}

/// The part of an env that other threads touch: woken waiters on their way
/// to the env's thread.
pub struct Mailbox<S> {
  /// Guarded by the mutex: every field of `Inbox`.
  inbox: Mutex<Inbox<S>>,
}

struct Inbox<S> {
  /// Set once, when the env goes away; after that nothing is delivered.
  closed: bool,
  signal: S,
  /// Waiters taken off their queues, not yet settled on the env's thread.
  woken: Vec<Woken>,
}

impl<S: Signal> Mailbox<S> {
  pub fn new(signal: S) -> Self {
    Mailbox {
      inbox: Mutex::new(Inbox {
        closed: false,
        signal,
        woken: Vec::new(),
      }),
    }
  }

  /// Hands woken waiters to the env's thread; signals it on the transition
  /// from empty, so every waiter woken before it gets round to it is
  /// settled in one go. Callable from any thread. False when the env is
  /// going away, or its signal could not be given, and it took nothing:
  /// the caller passes the wake-ups on. (A mailbox left non-empty with no
  /// signal on its way would hold every later wake-up for its env until
  /// teardown: only the transition from empty signals.)
  #[must_use]
  pub fn deliver(&self, batch: &[Woken]) -> bool {
    if batch.is_empty() {
      return true;
    }
    let mut inbox = self.inbox.lock();
    if inbox.closed {
      return false;
    }
    let was_empty = inbox.woken.is_empty();
    if let [one] = batch {
      inbox.woken.push(*one); // (no call of memcpy, as for a slice)
    } else {
      inbox.woken.extend_from_slice(batch);
    }
    if was_empty && !inbox.signal.signal() {
      // It held nothing but this batch: take it back.
      inbox.woken.clear();
      return false;
    }
    true
  }

  /// Moves the mailbox's contents into `into` (which must be empty): for
  /// the env's thread, to settle them.
  pub fn drain_into(&self, into: &mut Vec<Woken>) {
    let mut inbox = self.inbox.lock();
    std::mem::swap(&mut inbox.woken, into);
  }

  /// Closes the mailbox for good and returns what was delivered but never
  /// settled: the caller passes those wake-ups on. After this, the signal
  /// is never given again.
  pub fn close(&self) -> Vec<Woken> {
    let mut inbox = self.inbox.lock();
    inbox.closed = true;
    std::mem::take(&mut inbox.woken)
  }
}

/// `notify`: takes up to `count` waiters off `key`'s queue, oldest first,
/// and wakes them ([`wake`]); says how many.
pub fn notify<S: Signal, P: Unpark, D: Copy>(
  registry: &Registry<Waiter<S, P, D>>,
  cancel_deadline: &impl Fn(D, WaiterId),
  key: usize,
  count: usize,
) -> usize {
  let mut woken = registry.dequeue(key, count);
  let n = woken.len();
  if n == 1 {
    if let Some((id, waiter)) = woken.pop() {
      wake_one(registry, cancel_deadline, key, id, waiter);
      return 1;
    }
  }
  wake(
    registry,
    cancel_deadline,
    woken.into_iter().map(|(id, w)| (key, id, w)),
    Settled::Woken,
  );
  n
}

/// [`wake`] for a notify's one waiter (a lock's, a job's element's: most
/// notifies that wake anyone): the same steps, without the batching.
fn wake_one<S: Signal, P: Unpark, D: Copy>(
  registry: &Registry<Waiter<S, P, D>>,
  cancel_deadline: &impl Fn(D, WaiterId),
  key: usize,
  id: WaiterId,
  waiter: Waiter<S, P, D>,
) {
  match waiter {
    Waiter::Sync(parker) => parker.unpark(),
    Waiter::Async {
      env,
      slot,
      deadline,
    } => {
      if let Some(at) = deadline {
        cancel_deadline(at, id);
      }
      let how = Settled::Woken;
      if !env.deliver(&[Woken { slot, id, key, how }]) {
        pass_on(registry, cancel_deadline, [key]);
      }
    }
  }
}

/// Wakes waiters taken off their queues, after the registry lock is gone:
/// unparks sync ones, and delivers async ones to their envs, one batch per
/// run of the same env. Each comes with the key it was queued on. A notify
/// (`Settled::Woken`) cancels the waiter's deadline through
/// `cancel_deadline`. Wake-ups whose env is going away go on to the next
/// waiters ([`pass_on`]).
///
/// Every sync waiter in `woken` is unparked even if something here panics
/// part-way (`cancel_deadline`, a [`Signal`] that breaks its contract, an
/// allocation): one left asleep would sleep for good, since a sync wait
/// whose deadline passes and that finds itself gone from its queue waits
/// for its unpark with no bound (`crate::sync_wait::abandon`). Async
/// waiters not yet delivered are lost with their outcome.
pub fn wake<S: Signal, P: Unpark, D: Copy>(
  registry: &Registry<Waiter<S, P, D>>,
  cancel_deadline: &impl Fn(D, WaiterId),
  woken: impl IntoIterator<Item = (usize, WaiterId, Waiter<S, P, D>)>,
  how: Settled,
) {
  // Empty, so free, unless a waiter's env is going away.
  let mut unseen = Vec::new();
  wake_into(cancel_deadline, woken, how, &mut unseen);
  if !unseen.is_empty() {
    pass_on(registry, cancel_deadline, unseen);
  }
}

/// [`wake`], leaving the keys of wake-ups no env took in `unseen`.
fn wake_into<S: Signal, P: Unpark, D: Copy>(
  cancel_deadline: &impl Fn(D, WaiterId),
  woken: impl IntoIterator<Item = (usize, WaiterId, Waiter<S, P, D>)>,
  how: Settled,
  unseen: &mut Vec<usize>,
) {
  // One env per batch, usually one waiter: no allocation for it.
  let mut batch: SmallVec<[Woken; 1]> = SmallVec::new();
  let mut batch_env: Option<Arc<Mailbox<S>>> = None;
  // Should anything below panic, the guard unparks, as it unwinds, the
  // sync waiters not reached yet (see `wake`).
  let mut rest = UnparkRest(woken.into_iter());
  for (key, id, waiter) in &mut rest.0 {
    match waiter {
      Waiter::Sync(parker) => parker.unpark(),
      Waiter::Async {
        env,
        slot,
        deadline,
      } => {
        if how == Settled::Woken {
          if let Some(at) = deadline {
            cancel_deadline(at, id);
          }
        }
        if let Some(current) = &batch_env {
          if !Arc::ptr_eq(current, &env) {
            deliver(current, &batch, unseen);
            batch.clear();
            batch_env = Some(env);
          }
        } else {
          batch_env = Some(env);
        }
        batch.push(Woken { slot, id, key, how });
      }
    }
  }
  if let Some(current) = batch_env {
    deliver(&current, &batch, unseen);
  }
}

/// Waiters taken off their queues and not woken yet: when dropped, any
/// left (a panic cut the wake short) that are sync are unparked.
struct UnparkRest<I, S, P: Unpark, D>(I)
where
  I: Iterator<Item = (usize, WaiterId, Waiter<S, P, D>)>;

impl<I, S, P: Unpark, D> Drop for UnparkRest<I, S, P, D>
where
  I: Iterator<Item = (usize, WaiterId, Waiter<S, P, D>)>,
{
  fn drop(&mut self) {
    for (_, _, waiter) in &mut self.0 {
      if let Waiter::Sync(parker) = waiter {
        parker.unpark();
      }
    }
  }
}

/// Hands a batch to its env; if the env is going away, the keys of its
/// notified waiters go into `unseen`, for their wake-ups to be passed on.
fn deliver<S: Signal>(env: &Mailbox<S>, batch: &[Woken], unseen: &mut Vec<usize>) {
  if !env.deliver(batch) {
    unseen.extend(batch.iter().filter_map(Woken::unseen_key));
  }
}

/// Wake-ups that a notify counted but that their waiter's thread will never
/// see (it is being terminated or is exiting): each goes to the next waiter
/// on the same key, if there is one, as if the dead waiter had never been
/// queued. Native Atomics lose these (Node 20, a worker terminated while
/// blocked, then a notify: the next waiter sleeps on); a lock whose unlock
/// wakes a dying thread would leave its other waiters asleep.
///
/// A work list, not recursion: the next waiter may be dead too, and so may
/// the hundreds of thousands behind it (a terminated worker's pending
/// waits, until its teardown has withdrawn them); recursing once per dead
/// waiter overflowed the stack.
pub fn pass_on<S: Signal, P: Unpark, D: Copy>(
  registry: &Registry<Waiter<S, P, D>>,
  cancel_deadline: &impl Fn(D, WaiterId),
  keys: impl IntoIterator<Item = usize>,
) {
  let mut work: Vec<usize> = keys.into_iter().collect();
  while let Some(key) = work.pop() {
    // Wake-ups for the same key, together: one dequeue for all of them.
    let mut count = 1;
    while work.last() == Some(&key) {
      work.pop();
      count += 1;
    }
    let next = registry.dequeue(key, count);
    wake_into(
      cancel_deadline,
      next.into_iter().map(|(id, w)| (key, id, w)),
      Settled::Woken,
      &mut work,
    );
  }
}

/// Waiters an env took back (cancelled) too late: a notify or a timeout
/// had already taken them off their queue, so their outcome is on its way
/// to the env, for a slot that no longer holds them. When it arrives
/// ([`Cancelled::arrived`]), a notify's wake-up must go on to the next
/// waiter ([`pass_on`]): the notify counted it, and nobody will see it.
#[derive(Default)]
pub struct Cancelled {
  /// Their ids; few, and each leaves when its outcome arrives.
  ids: Vec<WaiterId>,
}

impl Cancelled {
  /// Takes the waiter `id` off `key`'s queue, if it is still there: then
  /// it is gone for good and `Some` returns it. Otherwise its outcome is on
  /// its way, and is remembered as arriving for nobody.
  pub fn withdraw<W>(&mut self, registry: &Registry<W>, key: usize, id: WaiterId) -> Option<W> {
    let waiter = registry.remove(key, id);
    if waiter.is_none() {
      self.ids.push(id);
    }
    waiter
  }

  /// An outcome arrived for `id`, whose slot no longer holds it: whether
  /// it was cancelled too late (and its wake-up, if a notify's, goes on).
  pub fn arrived(&mut self, id: WaiterId) -> bool {
    match self.ids.iter().position(|&c| c == id) {
      Some(at) => {
        self.ids.swap_remove(at);
        true
      }
      None => false,
    }
  }
}
