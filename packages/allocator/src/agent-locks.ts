/**
 * Agent locks, how an arena heap learns in a browser that another agent is gone: a Web Worker has no exit
 * event, so every agent holds a Web Lock for as long as it is attached (the browser lets it go when the worker
 * is terminated or closes itself), and an agent that watches waits on the others' locks. Where the host has no
 * Web Locks (Node), nothing is held and nothing is watched: `worker.once('exit')` says it there.
 */
import { AGENT_CRASHED, AGENT_LIVE, G_AGENT_ID, G_LOCK, G_STATE, type ArenaHeap } from '@paddock/arena';
import { hasAgentLocks, holdAgentLock, whenAgentLockFree, type AddressSpace } from '@paddock/platform';
import type { Regions } from '@paddock/region';

/** One agent's lock, and its watch over the other agents' locks. */
export class AgentLocks {
  /** Lets this agent's lock go (null where the host has none). */
  private readonly release: (() => void) | null;
  /** Locks this agent waits on, by name (null until it first watches). */
  private awaited: Set<string> | null;
  /** Agents opened when this agent last looked for agents to wait on. */
  private seenAgents: number;

  /**
   * Takes this agent's lock; its agent area's lock word says so once the lock is held.
   * @param nonce the heap's random number, which names its locks apart from other heaps'.
   * @param isGone whether this agent has left the heap (it then reaps nothing).
   * @param reap reaps the agent with that id (RangeError: another agent reaped it first).
   * @param report takes any other error of such a reap (it runs from a lock's callback, where nobody could catch it).
   */
  constructor(
    private readonly space: AddressSpace,
    private readonly regions: Regions,
    private readonly arena: ArenaHeap,
    private readonly nonce: number,
    private readonly isGone: () => boolean,
    private readonly reap: (agentId: number) => void,
    private readonly report: (err: unknown) => void,
  ) {
    const area = arena.agentArea >>> 2;
    this.release = holdAgentLock(this.lockName(space.agentId), () => Atomics.store(arena.i32, area + G_LOCK, 1));
    this.awaited = null;
    this.seenAgents = 0;
  }

  private lockName(agentId: number): string {
    return `paddock:${this.nonce >>> 0}:${agentId}`;
  }

  /**
   * Waits on the lock of every other agent that holds one and that it does not wait on yet; when one is let go
   * and its agent has not left the heap, the agent is gone (terminated, or it closed itself) and is reaped
   * (live blocks kept). Returns false where the host has no Web Locks.
   */
  watch(): boolean {
    if (!hasAgentLocks()) return false;
    const awaited = (this.awaited ??= new Set());
    this.seenAgents = this.space.agentsOpened;
    const areas = this.arena.agentAreas(); // first: the walk brings the views up to every area
    const i32 = this.arena.i32;
    for (const area of areas) {
      const w = area >>> 2;
      if (area === this.arena.agentArea || Atomics.load(i32, w + G_STATE) !== AGENT_LIVE || Atomics.load(i32, w + G_LOCK) !== 1) continue;
      const id = i32[w + G_AGENT_ID]!;
      const name = this.lockName(id);
      if (awaited.has(name)) continue;
      awaited.add(name);
      whenAgentLockFree(name, () => {
        awaited.delete(name);
        const state = Atomics.load(this.arena.i32, w + G_STATE);
        if (this.isGone() || this.arena.i32[w + G_AGENT_ID] !== id || (state !== AGENT_LIVE && state !== AGENT_CRASHED)) return;
        try {
          this.reap(id);
        } catch (err) {
          if (!(err instanceof RangeError)) this.report(err); // a RangeError: another agent reaped it first
        }
      });
    }
    return true;
  }

  /** For the idle tick: once watching, waits on the locks of agents that attached since it last looked. */
  watchNewcomers(): void {
    if (this.awaited !== null && this.space.agentsOpened !== this.seenAgents) this.watch();
  }

  /** Lets this agent's lock go: it has left the heap. */
  letGo(): void {
    this.release?.();
  }
}
