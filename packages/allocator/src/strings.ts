/**
 * Strings in heap memory, as UTF-8 records: a Uint32 byte length (the host's byte order, little-endian wherever
 * JavaScript runs), then the bytes. Encoding follows `TextEncoder` exactly (a lone surrogate becomes U+FFFD, three
 * bytes); decoding is `TextDecoder`'s (invalid bytes become U+FFFD). Short strings are encoded and (when well-formed)
 * read by hand: a call into the encoder or decoder costs more than the loop. Longer ones are encoded into place
 * (`encodeInto`) or, longer still, by `encode` and a copy, and read by `decode`, over a copy where the host's
 * decoder refuses shared memory (Chromium's does).
 */
import type { AddressSpace } from '@paddock/platform';

/** Bytes of a string record before its UTF-8: the byte length, a Uint32. */
export const STRING_HEADER_BYTES = 4;

/*
 * The thresholds, measured in Node 20 (docs/design/allocator.md, "Strings"): encoding by hand costs about 3 ns a
 * UTF-16 unit and nothing more; `encodeInto` about 100 ns a call but less a unit, and it needs the byte count first
 * (a loop over the string); `encode` and a copy count nothing but allocate, about 300 ns a call and the least a
 * unit. `TextDecoder.decode` costs about 75 ns a call for short text, which a hand-written decoder (6 ns or more a
 * byte) beats only up to about 12 bytes.
 */
/** Strings up to this many UTF-16 units are encoded by hand. */
const HAND_ENCODE_UNITS = 64;
/** Strings up to this many units (and past {@link HAND_ENCODE_UNITS}) are counted, then `encodeInto` their record. */
const ENCODE_INTO_UNITS = 192;
/** Records up to this many bytes are read by hand when well-formed; longer ones (or any other) by `TextDecoder`. */
const HAND_DECODE_BYTES = 12;

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
  if (s.length <= HAND_ENCODE_UNITS || !ENCODES_SHARED) encodeByHand(space.u8, at, s);
  else ENCODER.encodeInto(s, space.u8.subarray(at, end));
}

/**
 * Writes the record of `encoded` (UTF-8 from `TextEncoder.encode`) at `ptr`; the caller checked it fits. Strings
 * longer than {@link ENCODE_INTO_UNITS} go this way: `encode` and a copy cost less than counting the bytes first
 * (a loop over the string) and encoding into place.
 */
export function writeEncoded(space: AddressSpace, encoded: Uint8Array, ptr: number): void {
  const end = ptr + STRING_HEADER_BYTES + encoded.length;
  if (end > space.viewBytes) space.covers(end);
  space.u32[ptr >>> 2] = encoded.length;
  space.u8.set(encoded, ptr + STRING_HEADER_BYTES);
}

/** Whether `s` is long enough to go through `TextEncoder.encode` ({@link writeEncoded}) rather than be counted first. */
export function encodesWhole(s: string): boolean {
  return s.length > ENCODE_INTO_UNITS;
}

/** `s` as UTF-8, by `TextEncoder`. */
export function encodeUtf8(s: string): Uint8Array {
  return ENCODER.encode(s);
}

/**
 * The string of `bytes` bytes of well-formed UTF-8 at `at`, decoded by hand; null at the first ill-formed sequence
 * (the caller then asks `TextDecoder`, whose replacement of ill-formed bytes this need not copy).
 */
function decodeByHand(u8: Uint8Array, at: number, bytes: number): string | null {
  let s = '';
  const end = at + bytes;
  while (at < end) {
    const b = u8[at]!;
    if (b < 0x80) {
      s += String.fromCharCode(b);
      at += 1;
      continue;
    }
    const b1 = at + 1 < end ? u8[at + 1]! : 0;
    if (b >= 0xc2 && b <= 0xdf) {
      if ((b1 & 0xc0) !== 0x80) return null;
      s += String.fromCharCode(((b & 0x1f) << 6) | (b1 & 0x3f));
      at += 2;
      continue;
    }
    const b2 = at + 2 < end ? u8[at + 2]! : 0;
    if (b >= 0xe0 && b <= 0xef) {
      // E0 needs A0..BF next (no overlong form), ED 80..9F (no surrogate); the rest 80..BF.
      const lo = b === 0xe0 ? 0xa0 : 0x80;
      const hi = b === 0xed ? 0x9f : 0xbf;
      if (b1 < lo || b1 > hi || (b2 & 0xc0) !== 0x80) return null;
      s += String.fromCharCode(((b & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f));
      at += 3;
      continue;
    }
    const b3 = at + 3 < end ? u8[at + 3]! : 0;
    if (b >= 0xf0 && b <= 0xf4) {
      // F0 needs 90..BF next (no overlong form), F4 80..8F (no code point past U+10FFFF).
      const lo = b === 0xf0 ? 0x90 : 0x80;
      const hi = b === 0xf4 ? 0x8f : 0xbf;
      if (b1 < lo || b1 > hi || (b2 & 0xc0) !== 0x80 || (b3 & 0xc0) !== 0x80) return null;
      const cp = (((b & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f)) - 0x10000;
      s += String.fromCharCode(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      at += 4;
      continue;
    }
    return null;
  }
  return s;
}

/** The string of `bytes` UTF-8 bytes at `at` of `u8` (a view of shared memory), as `TextDecoder` reads them. */
export function decodeUtf8(u8: Uint8Array, at: number, bytes: number): string {
  if (bytes <= HAND_DECODE_BYTES) {
    const s = decodeByHand(u8, at, bytes);
    if (s !== null) return s;
  }
  const end = at + bytes;
  return DECODER.decode(DECODES_SHARED ? u8.subarray(at, end) : u8.slice(at, end));
}
