/**
 * Strings in heap memory, as UTF-8 records: a Uint32 byte length (the host's byte order, little-endian wherever
 * JavaScript runs), then the bytes. Encoding follows `TextEncoder` exactly (a lone surrogate becomes U+FFFD, three
 * bytes); decoding is `TextDecoder`'s (invalid bytes become U+FFFD). Short strings are encoded and ASCII read by
 * hand (a call into the encoder or decoder costs more than the loop); longer ones go through `encodeInto` and
 * `decode`, over a copy where the host's decoder refuses shared memory (Chromium's does).
 */
import type { AddressSpace } from '@paddock/platform';

/** Bytes of a string record before its UTF-8: the byte length, a Uint32. */
export const STRING_HEADER_BYTES = 4;

/** Strings up to this many UTF-16 units are encoded by hand; longer ones by `TextEncoder.encodeInto`. */
const HAND_ENCODE_UNITS = 32;
/** Records up to this many bytes are read by hand when all ASCII; longer ones (or any other) by `TextDecoder`. */
const HAND_DECODE_BYTES = 32;

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

/** Whether this host's `TextDecoder.decode` takes a view of shared memory (Node's does; Chromium's throws). */
const DECODES_SHARED = ((): boolean => {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  try {
    return DECODER.decode(new Uint8Array(new SharedArrayBuffer(1))) === '\0';
  } catch {
    return false;
  }
})();

/** Whether this host's `TextEncoder.encodeInto` writes into a view of shared memory (the standard allows it). */
const ENCODES_SHARED = ((): boolean => {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  try {
    const into = new Uint8Array(new SharedArrayBuffer(4));
    return ENCODER.encodeInto('\u00e9', into).written === 2 && into[0] === 0xc3 && into[1] === 0xa9;
  } catch {
    return false;
  }
})();

/** The UTF-8 bytes `TextEncoder` makes of `s` (a lone surrogate takes 3, as U+FFFD). */
export function utf8Length(s: string): number {
  const n = s.length;
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      bytes += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: 2 units, 4 bytes
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/** Writes `s` as UTF-8 at `at` by hand (exactly `TextEncoder`'s bytes); returns the end. */
function encodeByHand(u8: Uint8Array, at: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      u8[at++] = c;
      continue;
    }
    if (c < 0x800) {
      u8[at++] = 0xc0 | (c >> 6);
      u8[at++] = 0x80 | (c & 0x3f);
      continue;
    }
    if ((c & 0xf800) === 0xd800) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && (d & 0xfc00) === 0xdc00) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        u8[at++] = 0xf0 | (cp >> 18);
        u8[at++] = 0x80 | ((cp >> 12) & 0x3f);
        u8[at++] = 0x80 | ((cp >> 6) & 0x3f);
        u8[at++] = 0x80 | (cp & 0x3f);
        i++;
        continue;
      }
      c = 0xfffd; // a lone surrogate
    }
    u8[at++] = 0xe0 | (c >> 12);
    u8[at++] = 0x80 | ((c >> 6) & 0x3f);
    u8[at++] = 0x80 | (c & 0x3f);
  }
  return at;
}

/** Writes the record of `s` (`bytes` of UTF-8, from {@link utf8Length}) at `ptr`; the caller checked it fits. */
export function encodeString(space: AddressSpace, s: string, ptr: number, bytes: number): void {
  const end = ptr + STRING_HEADER_BYTES + bytes;
  if (end > space.viewBytes) space.covers(end);
  space.u32[ptr >>> 2] = bytes;
  const at = ptr + STRING_HEADER_BYTES;
  if (s.length <= HAND_ENCODE_UNITS || !ENCODES_SHARED) {
    encodeByHand(space.u8, at, s);
  } else {
    ENCODER.encodeInto(s, space.u8.subarray(at, end));
  }
}

/** The string of `bytes` UTF-8 bytes at `at` of `u8` (a view of shared memory), as `TextDecoder` reads them. */
export function decodeUtf8(u8: Uint8Array, at: number, bytes: number): string {
  if (bytes <= HAND_DECODE_BYTES) {
    let s = '';
    let i = 0;
    for (; i < bytes; i++) {
      const c = u8[at + i]!;
      if (c >= 0x80) break;
      s += String.fromCharCode(c);
    }
    if (i === bytes) return s;
  }
  const end = at + bytes;
  return DECODER.decode(DECODES_SHARED ? u8.subarray(at, end) : u8.slice(at, end));
}
