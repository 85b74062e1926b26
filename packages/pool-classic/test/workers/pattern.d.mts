export function fillPattern(u8: Uint8Array, p: number, size: number, seed: number): void;
export function checkPattern(u8: Uint8Array, p: number, size: number, seed: number): number;
export { mulberry32 as rng } from '../../../../tools/test-utils/prng.mjs';
