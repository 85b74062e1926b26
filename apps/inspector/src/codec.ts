/**
 * How a snapshot travels from a Node process to the page as text (one server-sent event each): JSON, with each
 * typed array (the unit map) as its kind and its bytes in base64. Both sides use it: the server encodes, the page
 * decodes; it needs nothing but the globals both hosts have (`btoa`, `atob`), and takes Node's `Buffer` where
 * there is one (ten times faster on a big unit map).
 */
import type { HeapSnapshot } from '@paddock/allocator';

const KINDS = { Uint8Array, Uint16Array, Uint32Array, Int32Array } as const;
type Kind = keyof typeof KINDS;

interface Packed {
  $typed: Kind;
  base64: string;
}

/** Node's Buffer, when the host has it (read from the global object: this file is also bundled for the page). */
const NodeBuffer = (globalThis as { Buffer?: { from(b: ArrayBufferLike, offset: number, length: number): { toString(enc: 'base64'): string } } }).Buffer;

function toBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fromBase64(base64: string): Uint8Array {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** A snapshot as one line of text. */
export function encodeSnapshot(snapshot: HeapSnapshot): string {
  return JSON.stringify(snapshot, (_key, value: unknown) => {
    if (ArrayBuffer.isView(value) && value.constructor.name in KINDS) {
      const packed: Packed = { $typed: value.constructor.name as Kind, base64: toBase64(new Uint8Array(value.buffer, value.byteOffset, value.byteLength)) };
      return packed;
    }
    return value;
  });
}

/** The snapshot {@link encodeSnapshot} wrote, its typed arrays restored. */
export function decodeSnapshot(text: string): HeapSnapshot {
  return JSON.parse(text, (_key, value: unknown) => {
    const packed = value as Packed | null;
    if (packed !== null && typeof packed === 'object' && typeof packed.$typed === 'string' && packed.$typed in KINDS) {
      return new KINDS[packed.$typed](fromBase64(packed.base64).buffer as ArrayBuffer);
    }
    return value;
  }) as HeapSnapshot;
}
