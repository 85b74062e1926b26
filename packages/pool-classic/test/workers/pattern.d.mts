export function fillPattern(u8: Uint8Array, p: number, size: number, seed: number): void;
export function checkPattern(u8: Uint8Array, p: number, size: number, seed: number): number;
export function rng(seed: number): () => number;
