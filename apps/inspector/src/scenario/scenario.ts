/**
 * The scenario's driver, the same for the page's Web Workers and the demo workload's worker threads: it starts
 * the consumer and producers (all on the one channel the host made in the heap), starts, pauses and idles
 * them, and kills a producer without warning (the host's spawn has the heap watch every worker, so a killed one
 * is reaped and its owner slot taken over). Each action returns the label of its timeline mark.
 */
import type { Command, Report, Setup } from './agent.js';

/** A started agent as its host holds it. */
export interface AgentWorker {
  post(message: unknown): void;
  onReport(on: (r: Report) => void): void;
  terminate(): void;
}

/** What a host gives the driver: a worker running `startAgent` on `setup` (the host adds the heap's and the channel's handles), watched. */
export interface Host {
  spawn(setup: Omit<Setup, 'handle' | 'channel'>): AgentWorker;
}

interface Agent {
  worker: AgentWorker;
  role: 'producer' | 'consumer';
  id: number;
  agentId: number;
  alive: boolean;
}

export class Scenario {
  private readonly agents: Agent[] = [];
  private consumer: Agent | null = null;
  private nextId = 1;
  private running = false;

  constructor(private readonly host: Host) {}

  private spawn(role: Agent['role']): Agent {
    const worker = this.host.spawn({ role, id: role === 'consumer' ? 0 : this.nextId });
    const agent: Agent = { worker, role, id: role === 'consumer' ? 0 : this.nextId++, agentId: 0, alive: true };
    worker.onReport((r) => {
      if (r.kind === 'attached') agent.agentId = r.agentId;
    });
    this.agents.push(agent);
    return agent;
  }

  private producers(): Agent[] {
    return this.agents.filter((a) => a.alive && a.role === 'producer');
  }

  /** A producer on the channel; started at once when the scenario runs. */
  addProducer(): string {
    this.consumer ??= this.spawn('consumer');
    const p = this.spawn('producer');
    if (this.running) p.worker.post('start' satisfies Command);
    return `producer ${p.id} added`;
  }

  /** Starts (or resumes) production: the consumer and two producers the first time. */
  start(): string {
    const first = this.agents.length === 0;
    if (first) {
      this.addProducer();
      this.addProducer();
    }
    this.running = true;
    this.send('start');
    return first ? 'start: 2 producers -> consumer through one channel' : 'start';
  }

  pause(): string {
    this.running = false;
    this.send('pause');
    return 'pause';
  }

  /** Every agent goes idle: producers stop, the consumer frees what it holds, the idle ticks hand memory back. */
  idle(): string {
    this.running = false;
    this.send('idle');
    return 'idle';
  }

  /** Terminates the oldest live producer without warning (the host's watch reaps it); null when none runs. */
  kill(): string | null {
    const victim = this.producers()[0];
    if (!victim) return null;
    victim.alive = false;
    victim.worker.terminate();
    return `kill producer ${victim.id} (agent ${victim.agentId})`;
  }

  /** Terminates every worker (the end of a run). */
  stop(): void {
    for (const a of this.agents) if (a.alive) a.worker.terminate();
    this.agents.length = 0;
  }

  private send(c: Command): void {
    for (const a of this.agents) if (a.alive) a.worker.post(c);
  }
}
