// The small test interface that cases shared by Node and the browser are written against: a case is a name and
// a function, checked with a few `expect` matchers, and it starts agents through an `AgentHost`. Under vitest
// the interface is vitest's own `it` and `expect` and agents are worker_threads Workers; in a browser page it is
// `PageSuite` below (run in order, every result recorded) and agents are module Web Workers. Nothing here
// imports a Node module: the page bundles this file.

/** The matchers shared cases use (a subset of vitest's `expect`, with the same meaning). */
export interface Matchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeGreaterThan(n: number): void;
  toBeGreaterThanOrEqual(n: number): void;
  toBeUndefined(): void;
  toThrow(type?: abstract new (...args: never[]) => unknown): void;
}

export interface Suite {
  /** Registers a case (its name is unique in its group). */
  it(name: string, fn: () => unknown): void;
  expect(actual: unknown): Matchers;
}

/** An agent a case started, as the case sees it. */
export interface Agent {
  post(message: unknown): void;
  /** The next message of the agent that `match` accepts; rejects if the agent fails first. */
  next<T>(match: (m: T) => boolean): Promise<T>;
  /** Ends the agent; resolves once it is gone. */
  terminate(): Promise<void>;
}

/** Starts `script`'s agent built for `variant` (a backend) with `data`. */
export type AgentHost = (script: string, variant: string, data: unknown) => Agent;

/** What an agent script sees of its host: its start data and the thread that started it. */
export interface AgentEndpoint {
  data: unknown;
  post(message: unknown): void;
  onMessage(fn: (message: unknown) => void): void;
  /** Lets the agent's thread end (Node: the port closes; a Web Worker closes itself). */
  close(): void;
}

// ---- in a browser page ------------------------------------------------------------------------------

/** One case as it ran in the page. */
export interface CaseResult {
  name: string;
  ok: boolean;
  /** The failure: the message (which matcher, which assertion of the case) and the stack in the bundle. */
  error?: string;
  /** What a passing case returned when it returned a string (its figures, for the log). */
  note?: string;
  ms: number;
}

class AssertionFailure extends Error {
  override name = 'AssertionError';
}

const show = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(show).join(', ')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${k}: ${show(x)}`).join(', ')}}`;
  return Object.is(v, -0) ? '-0' : String(v);
};

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** The cases of a page, registered by the same functions that register them under vitest, run in order. */
export class PageSuite {
  private readonly cases: { name: string; fn: () => unknown }[] = [];
  /** Assertions made so far in the running case (a failure says which one it was). */
  private assertions = 0;

  /** A group: its cases are named `${title} > ${name}`, as vitest names a case inside `describe(title)`. */
  group(title: string): Suite {
    return {
      it: (name, fn) => {
        this.cases.push({ name: `${title} > ${name}`, fn });
      },
      expect: (actual) => this.expect(actual),
    };
  }

  /** Cases registered. */
  get size(): number {
    return this.cases.length;
  }

  private expect(actual: unknown): Matchers {
    const n = ++this.assertions;
    const check = (ok: boolean, matcher: string, says: () => string) => {
      if (!ok) throw new AssertionFailure(`assertion ${n} of the case, ${matcher}: ${says()}`);
    };
    return {
      toBe: (e) => check(Object.is(actual, e), 'toBe', () => `expected ${show(actual)} to be ${show(e)}`),
      toEqual: (e) => check(deepEqual(actual, e), 'toEqual', () => `expected ${show(actual)} to equal ${show(e)}`),
      toBeGreaterThan: (x) => check((actual as number) > x, 'toBeGreaterThan', () => `expected ${show(actual)} to be greater than ${x}`),
      toBeGreaterThanOrEqual: (x) => check((actual as number) >= x, 'toBeGreaterThanOrEqual', () => `expected ${show(actual)} to be at least ${x}`),
      toBeUndefined: () => check(actual === undefined, 'toBeUndefined', () => `expected ${show(actual)} to be undefined`),
      toThrow: (type) => {
        let thrown: unknown = null;
        let threw = false;
        try {
          (actual as () => unknown)();
        } catch (err) {
          threw = true;
          thrown = err;
        }
        const what = type ? `a ${type.name}` : 'an error';
        check(threw, 'toThrow', () => `expected the call to throw ${what}; it returned`);
        check(!type || thrown instanceof type, 'toThrow', () => `expected the call to throw ${what}; it threw ${(thrown as Error)?.name}: ${(thrown as Error)?.message}`);
      },
    };
  }

  /** Runs every case in order (`onCase` is told each name first); a failing case does not stop the rest. */
  async run(onCase: (name: string) => void = () => {}): Promise<CaseResult[]> {
    const results: CaseResult[] = [];
    for (const c of this.cases) {
      onCase(c.name);
      this.assertions = 0;
      const t0 = performance.now();
      try {
        const note = await c.fn();
        results.push({ name: c.name, ok: true, ms: performance.now() - t0, ...(typeof note === 'string' ? { note } : {}) });
      } catch (err) {
        const e = err as Error;
        const error = e instanceof Error ? (e.stack?.includes(e.message) ? e.stack : `${e.name}: ${e.message}\n${e.stack ?? ''}`) : String(err);
        results.push({ name: c.name, ok: false, error, ms: performance.now() - t0 });
      }
    }
    return results;
  }
}

/**
 * Agents as module Web Workers: `script` built for `variant` is served as `/${script}-${variant}.js`; it gets
 * `data` as its first message (a Web Worker has no start data).
 */
export const pageAgents: AgentHost = (script, variant, data) => {
  const w = new Worker(`/${script}-${variant}.js`, { type: 'module', name: `${script}-${variant}` });
  let failure: Error | null = null;
  const failed: ((e: Error) => void)[] = [];
  w.addEventListener('error', (e) => {
    e.preventDefault(); // the case that waits on it reports it
    failure = new Error(`agent ${script}-${variant}: ${e.message} (${e.filename}:${e.lineno})`);
    for (const f of failed.splice(0)) f(failure);
  });
  w.postMessage(data);
  return {
    post: (m) => w.postMessage(m),
    next: <T>(match: (m: T) => boolean) =>
      new Promise<T>((resolve, reject) => {
        if (failure) return reject(failure);
        const on = (e: MessageEvent) => {
          if (!match(e.data as T)) return;
          w.removeEventListener('message', on);
          resolve(e.data as T);
        };
        w.addEventListener('message', on);
        failed.push(reject);
      }),
    terminate: async () => w.terminate(),
  };
};

/** An agent script's endpoint in a module Web Worker: resolves once its start data has come. */
export function pageEndpoint(): Promise<AgentEndpoint> {
  const scope = globalThis as unknown as {
    onmessage: ((e: MessageEvent) => void) | null;
    postMessage(m: unknown): void;
    close(): void;
  };
  return new Promise((resolve) => {
    scope.onmessage = (first) => {
      let listener: (m: unknown) => void = () => {};
      scope.onmessage = (e) => listener(e.data);
      resolve({
        data: first.data,
        post: (m) => scope.postMessage(m),
        onMessage: (fn) => {
          listener = fn;
        },
        close: () => scope.close(),
      });
    };
  });
}
