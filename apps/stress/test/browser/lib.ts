// Paddock as a swarm page loads it: bundled once per backend under that backend's export condition and served
// as pool-arena.js, pool-classic.js and pool-global.js, the layout of the allocator's dist (what `--lib` names).
export * from '@paddock/allocator';
