/**
 * Waking an idle arena agent when frees reach it. Between idle visits the agent waits (`Atomics.waitAsync`, which
 * keeps no process alive) on its inbox word while the inbox is empty, marked parked in the registry; the agent that
 * pushes the first batch into the empty inbox notifies the word (the registry's `pushInbox`), and the next visit runs
 * at once. So the frees another agent sends an idle agent go back to the OS within milliseconds rather than at its
 * next visit, up to 500 ms away. See docs/design/allocator.md, the idle tick.
 */
import type { ArenaHeap } from '@paddock/arena';
import type { Registry } from '@paddock/registry';

/**
 * An idle agent that finds frees already waiting when it starts waiting on its inbox runs its next visit this many
 * ms later (not at once: a stream of frees would keep it draining back to back, without a pause for its event loop).
 */
const IDLE_REDRAIN_MS = 1;

/** One agent's wait on its inbox between idle visits. */
export class InboxWake {
  private readonly arena: ArenaHeap;
  private readonly registry: Registry;
  private readonly detached: () => boolean;
  /** Counts the wakes armed: a wait that settles after a newer arming (or a disarming) does nothing. */
  private armings = 0;

  constructor(arena: ArenaHeap, registry: Registry, detached: () => boolean) {
    this.arena = arena;
    this.registry = registry;
    this.detached = detached;
  }

  /** Between two idle visits `delay` ms apart: calls `wake` (at most once) when frees reach the empty inbox. */
  arm(delay: number, wake: () => void): void {
    const waitAsync = (Atomics as { waitAsync?: typeof Atomics.waitAsync }).waitAsync;
    const slot = this.arena.slot;
    if (typeof waitAsync !== 'function' || slot === 0 || this.detached()) return;
    // The inbox word through views that reach it (takeSlot brought them up; this keeps the wait from ever
    // indexing past them).
    if (!this.arena.cover((this.arena.inbox << 2) + 4)) return;
    const armed = ++this.armings;
    this.registry.setParked(slot, true);
    const waiting = waitAsync(this.arena.i32, this.arena.inbox, 0, delay);
    if (!waiting.async) {
      // A batch came in since the visit drained: the next visit comes after IDLE_REDRAIN_MS instead.
      this.registry.setParked(slot, false);
      if (delay > IDLE_REDRAIN_MS) setTimeout(() => armed === this.armings && !this.detached() && wake(), IDLE_REDRAIN_MS).unref?.();
      return;
    }
    waiting.value.then((result) => {
      if (armed !== this.armings || this.detached()) return;
      this.registry.setParked(slot, false);
      if (result === 'ok') wake();
    });
  }

  /** Cancels what {@link arm} armed and clears the parked mark. */
  disarm(): void {
    this.armings++;
    if (this.arena.slot !== 0 && !this.detached()) this.registry.setParked(this.arena.slot, false);
  }
}
