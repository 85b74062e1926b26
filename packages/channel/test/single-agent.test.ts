// A channel used from one agent, on each backend: every call, the end of a closed channel, drop, timeouts, and
// bad input (a pointer that is not a block, a closed channel, a handle from another heap), each refused with
// nothing changed.
import { describe, expect, it } from 'vitest';
import { HeapError, type Heap } from '@paddock/allocator';
import { TIMED_OUT, createChannel, openChannel, type Channel, type ChannelHandle } from '../src/index.js';
import { BACKENDS, heapOf } from './backends.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeapError) return err.code;
    if (err instanceof Error) return err.name;
    return String(err);
  }
  return 'none';
}

async function codeAsync(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof HeapError) return err.code;
    if (err instanceof Error) return err.name;
  }
  return 'none';
}

function blocks(heap: Heap, n: number, size = 64): number[] {
  return Array.from({ length: n }, () => heap.malloc(size));
}

describe.each(BACKENDS)('one agent: %s', (backend) => {
  const fresh = () => heapOf(backend, { maxBytes: 1 << 28 });

  it('trySend until full, tryRecv in order until empty; the handle is structured-cloneable and opens here too', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 8 });
    const ps = blocks(heap, 9);
    for (let k = 0; k < 8; k++) expect(ch.trySend(ps[k]!)).toBe(true);
    expect(ch.trySend(ps[8]!)).toBe(false);
    expect(ch.stats()).toMatchObject({ capacity: 8, queued: 8, sent: 8, received: 0, closed: false });
    const other = openChannel(heap, structuredClone(ch.handle) as ChannelHandle);
    expect(ch.tryRecv()).toBe(ps[0]);
    expect(other.tryRecv()).toBe(ps[1]);
    expect(other.trySend(ps[8]!)).toBe(true);
    const got: number[] = [];
    for (let p = ch.tryRecv(); p !== 0; p = ch.tryRecv()) got.push(p);
    expect(got).toEqual(ps.slice(2));
    expect(ch.tryRecv()).toBe(0);
    expect(ch.done).toBe(false);
    expect(ch.stats()).toMatchObject({ queued: 0, sent: 9, received: 9, agents: 2 });
    for (const p of ps) heap.free(p);
  });

  it('the ring goes round more than 2^20 positions (its stamps wrap) and keeps order', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 2 });
    const [a, b] = blocks(heap, 2);
    let wrong = 0;
    for (let k = 0; k < (1 << 20) + 1000; k++) {
      ch.trySend(a!);
      ch.trySend(b!);
      if (ch.tryRecv() !== a || ch.tryRecv() !== b) wrong++;
    }
    expect(wrong).toBe(0);
    expect(ch.stats().queued).toBe(0);
  });

  it('blocks and a channel above 2 GiB: pointers of 2^31 and more go through whole', async () => {
    const heap = await heapOf(backend, { maxBytes: 4 * 1024 ** 3 - 65536 });
    const big: number[] = [];
    while (big.length === 0 || big.at(-1)! < 2 ** 31) big.push(heap.malloc(256 << 20));
    const ch = createChannel(heap, { capacity: 4 });
    const high = big.at(-1)!;
    const small = heap.malloc(64);
    expect(ch.trySendBatch([high, small, big[0]!])).toBe(3);
    expect([ch.tryRecv(), ch.tryRecv()]).toEqual([high, small]);
    const out: number[] = [];
    expect(ch.tryRecvBatch(out, 4)).toBe(1);
    expect(out).toEqual([big[0]]);
    ch.trySend(high);
    ch.drop(); // frees the queued block above 2 GiB
    expect(code(() => heap.usableSize(high))).not.toBe('none');
  });

  it('recv and recvAsync give what is queued, TIMED_OUT when the time passes, 0 once closed and empty', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 4 });
    const [p, q, r] = blocks(heap, 3);
    ch.send(p!);
    await ch.sendAsync(q!);
    expect(ch.recv()).toBe(p);
    expect(await ch.recvAsync()).toBe(q);
    expect(ch.recv(5)).toBe(TIMED_OUT);
    expect(await ch.recvAsync(5)).toBe(TIMED_OUT);
    expect(ch.recv(0)).toBe(TIMED_OUT);
    ch.send(r!);
    ch.close();
    expect(ch.closed).toBe(true);
    expect(ch.done).toBe(false);
    expect(ch.recv()).toBe(r);
    expect(ch.done).toBe(true);
    expect(ch.recv()).toBe(0);
    expect(await ch.recvAsync()).toBe(0);
    expect(ch.tryRecv()).toBe(0);
    expect(code(() => ch.recv(-1))).toBe('RangeError');
    expect(code(() => ch.recv(Number.NaN))).toBe('RangeError');
  });

  it('a closed channel refuses every send with CHANNEL_CLOSED and queues nothing', async () => {
    const heap = await fresh();
    const ch = createChannel(heap);
    const [p] = blocks(heap, 1);
    ch.close();
    expect(code(() => ch.send(p!))).toBe('CHANNEL_CLOSED');
    expect(code(() => ch.trySend(p!))).toBe('CHANNEL_CLOSED');
    expect(await codeAsync(() => ch.sendAsync(p!))).toBe('CHANNEL_CLOSED');
    expect(code(() => ch.sendBatch([p!]))).toBe('CHANNEL_CLOSED');
    expect(code(() => ch.trySendBatch([p!]))).toBe('CHANNEL_CLOSED');
    expect(await codeAsync(() => ch.sendBatchAsync([p!]))).toBe('CHANNEL_CLOSED');
    expect(ch.stats()).toMatchObject({ sent: 0, queued: 0, closed: true });
    heap.free(p!);
  });

  it('a pointer that is not a live block of the heap is refused with BAD_POINTER before anything is queued', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 4 });
    const [good, freed] = blocks(heap, 2);
    heap.free(freed!);
    for (const bad of [0, -8, 1.5, Number.NaN, 2 ** 32, heap.space.maxBytes - 64, good! + 4, freed!] as number[]) {
      expect(code(() => ch.send(bad)), `send(${bad})`).toBe('BAD_POINTER');
      expect(code(() => ch.trySend(bad)), `trySend(${bad})`).toBe('BAD_POINTER');
    }
    expect(code(() => ch.send('8' as unknown as number))).toBe('BAD_POINTER');
    expect(await codeAsync(() => ch.sendAsync(good! + 4))).toBe('BAD_POINTER');
    // A batch with one bad pointer queues none of it.
    expect(code(() => ch.sendBatch([good!, good! + 4]))).toBe('BAD_POINTER');
    expect(code(() => ch.trySendBatch([good!, 0]))).toBe('BAD_POINTER');
    expect(await codeAsync(() => ch.sendBatchAsync([good!, -1]))).toBe('BAD_POINTER');
    expect(ch.stats()).toMatchObject({ sent: 0, queued: 0 });
    expect(ch.trySend(good!)).toBe(true);
    expect(ch.tryRecv()).toBe(good);
    heap.free(good!);
  });

  it('batches: every one sent in order, a prefix when full, up to max received, bad counts refused', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 8 });
    const ps = blocks(heap, 12);
    expect(ch.trySendBatch(ps)).toBe(8);
    const out = new Uint32Array(5);
    expect(ch.tryRecvBatch(out)).toBe(5);
    expect([...out]).toEqual(ps.slice(0, 5));
    expect(ch.recvBatch(out, 2)).toBe(2);
    expect([...out.subarray(0, 2)]).toEqual(ps.slice(5, 7));
    ch.sendBatch(ps.slice(8));
    const arr: number[] = [];
    expect(await ch.recvBatchAsync(arr, 100)).toBe(5);
    expect(arr).toEqual(ps.slice(7));
    expect(await ch.recvBatchAsync(arr, 100, 5)).toBe(TIMED_OUT);
    expect(ch.recvBatch(out, 5, 5)).toBe(TIMED_OUT);
    ch.close();
    expect(ch.recvBatch(out)).toBe(0);
    expect(code(() => ch.tryRecvBatch(out, 0))).toBe('RangeError');
    expect(code(() => ch.tryRecvBatch(out, 6))).toBe('RangeError');
    expect(code(() => ch.sendBatch(ps, 13))).toBe('RangeError');
    expect(code(() => ch.trySendBatch(ps, -1))).toBe('RangeError');
    expect(code(() => ch.tryRecvBatch({} as Uint32Array))).toBe('TypeError');
  });

  it('sendBatchAsync waits for room; a parked recvAsync is woken by a later send', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 2 });
    const ps = blocks(heap, 5);
    const waiting = ch.recvAsync();
    await new Promise((r) => setTimeout(r, 20));
    expect(ch.stats().parkedReceivers).toBe(1);
    expect(ch.trySend(ps[0]!)).toBe(true);
    expect(await waiting).toBe(ps[0]);
    expect(ch.stats().parkedReceivers).toBe(0);
    const sending = ch.sendBatchAsync(ps.slice(1));
    await new Promise((r) => setTimeout(r, 20));
    expect(ch.stats()).toMatchObject({ queued: 2, parkedSenders: 1 });
    const got: number[] = [];
    while (got.length < 4) {
      const p = await ch.recvAsync(1000);
      expect(p).toBeGreaterThan(0);
      got.push(p);
    }
    await sending;
    expect(got).toEqual(ps.slice(1));
  });

  it('a send parked on a full channel is refused when the channel closes, its block still the caller\'s', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 2 });
    const ps = blocks(heap, 3);
    ch.sendBatch(ps.slice(0, 2));
    const parked = ch.sendAsync(ps[2]!);
    await new Promise((r) => setTimeout(r, 20));
    expect(ch.stats().parkedSenders).toBe(1);
    ch.close();
    expect(await codeAsync(() => parked)).toBe('CHANNEL_CLOSED');
    expect(ch.stats()).toMatchObject({ sent: 2, parkedSenders: 0 });
    expect([ch.tryRecv(), ch.tryRecv(), ch.tryRecv()]).toEqual([ps[0], ps[1], 0]);
    expect(ch.done).toBe(true);
    heap.free(ps[2]!); // still a live block: the refused send left it with its caller
  });

  it('for await and for of end once the channel is closed and empty', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 8 });
    const ps = blocks(heap, 6);
    ch.sendBatch(ps.slice(0, 3));
    ch.close();
    const a: number[] = [];
    for await (const p of ch) a.push(p);
    expect(a).toEqual(ps.slice(0, 3));
    const ch2 = createChannel(heap, { capacity: 8 });
    ch2.sendBatch(ps.slice(3));
    ch2.close();
    expect([...ch2]).toEqual(ps.slice(3));
  });

  it('drop frees what is queued and the channel block; later use throws CHANNEL_DROPPED, opening BAD_HANDLE or CHANNEL_DROPPED', async () => {
    const heap = await fresh();
    heap.flushCache();
    const before = heap.stats().liveBytes;
    const ch = createChannel(heap, { capacity: 16 });
    const other = openChannel(heap, ch.handle);
    ch.sendBatch(blocks(heap, 10));
    ch.drop();
    heap.flushCache(); // blocks freed wait in this agent's cache (counted live) until flushed
    expect(heap.stats().liveBytes).toBe(before);
    expect(code(() => other.tryRecv())).toBe('CHANNEL_DROPPED');
    expect(code(() => ch.trySend(1))).toMatch(/^(CHANNEL_DROPPED|BAD_HANDLE)$/);
    expect(code(() => openChannel(heap, ch.handle))).toMatch(/^(CHANNEL_DROPPED|BAD_HANDLE)$/);
  });

  it('a handle from another heap, or no channel handle at all, is refused with BAD_HANDLE', async () => {
    const heap = await fresh();
    const elsewhere = await fresh();
    const theirs = createChannel(elsewhere, { capacity: 8 });
    const mine = createChannel(heap, { capacity: 8 });
    expect(code(() => openChannel(heap, theirs.handle))).toBe('BAD_HANDLE');
    // A handle naming a channel at the same address in this heap, but another channel: the id tells them apart.
    expect(code(() => openChannel(heap, { ...mine.handle, id: mine.handle.id ^ 2 }))).toBe('BAD_HANDLE');
    expect(code(() => openChannel(heap, { ...mine.handle, capacity: 16 }))).toBe('BAD_HANDLE');
    const p = heap.malloc(4096);
    heap.u32.fill(0, p >>> 2, (p >>> 2) + 1024);
    expect(code(() => openChannel(heap, { ...mine.handle, ptr: p }))).toBe('BAD_HANDLE');
    for (const junk of [null, 7, 'x', {}, { kind: 'paddock-channel' }, { ...mine.handle, version: 99 }, { ...mine.handle, ptr: 3 }]) {
      expect(code(() => openChannel(heap, junk as unknown as ChannelHandle))).toBe('BAD_HANDLE');
    }
  });

  it('options out of range are RangeErrors and allocate nothing', async () => {
    const heap = await fresh();
    const before = heap.stats().liveBytes;
    for (const capacity of [0, 1, 3, 100, 1 << 17, 2.5, Number.NaN]) expect(code(() => createChannel(heap, { capacity }))).toBe('RangeError');
    for (const agents of [0, -1, 4096, 1.5]) expect(code(() => createChannel(heap, { agents }))).toBe('RangeError');
    expect(code(() => createChannel(heap, null as unknown as object))).toBe('TypeError');
    expect(heap.stats().liveBytes).toBe(before);
  });

  it('agent records: the last one taken, opening another throws CHANNEL_AGENTS; leave gives one back', async () => {
    const heap = await fresh();
    const ch = createChannel(heap, { capacity: 4, agents: 2 });
    const second = openChannel(heap, ch.handle);
    expect(code(() => openChannel(heap, ch.handle))).toBe('CHANNEL_AGENTS');
    expect(ch.stats().agents).toBe(2);
    second.leave();
    second.leave();
    expect(code(() => second.tryRecv())).toBe('BAD_HANDLE');
    expect(ch.stats().agents).toBe(1);
    const third: Channel = openChannel(heap, ch.handle);
    expect(third.stats().agents).toBe(2);
  });
});
