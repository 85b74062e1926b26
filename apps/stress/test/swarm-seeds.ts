// The swarm's fixed seeds: the CI slice replays them in Node (swarm.test.ts), and a few of them in Chromium
// (swarm-browser.test.ts).

/**
 * Fixed seeds, drawn as before the swarm drew pool_global runs (`--no-global`): arena w8 all-to-all with 2 kills, a detach and a departure by process.exit; classic w7 ring
 * with 2 detaches and a departure whose event loop runs dry with its last sends in transit; arena w7
 * producer-consumer with a consumer leaving the same way; arena w4 producer-consumer with a kill and an
 * early departure (256 MiB heap); arena w4 ring with an early kill reaped by watch (256 MiB heap); arena w4
 * with oversized blocks; classic w4 all-to-all with realloc chains and a departure; arena w6
 * producer-consumer with a kill reaped by watch and two producers leaving (one by process.exit after
 * freeing what it held, one by closing its ports after handing everything it held to the consumers, in
 * transit): the consumers hold a few hundred of their blocks when they are gone and free them into owners
 * that left.
 */
export const FIXED_SEEDS = ['0x8d4a852a', '0xc4f57283', '0x906019aa', '0x7b071649', '0x036d820c', '0x2d6bc794', '0xc4986e4e', '0xb9426376'];

/**
 * Fixed seeds on pool_global: two of the seeds above as fresh seeds draw them now (three of the eight draw
 * pool_global). Global w8 all-to-all with two workers killed in the middle of their churn (never reaped), a
 * detach and a departure by process.exit; global w4 producer-consumer on a 256 MiB heap with realloc chains,
 * a consumer killed a third of the way, a detach and a departure by process.exit after handing everything on.
 */
export const GLOBAL_SEEDS = ['0x8d4a852a', '0x7b071649'];

/**
 * Seeds whose runs fill their heap to the limit (a `Fill`): the arena on 4 GiB heaps with 64 KiB, 1 MiB (a worker
 * killed and reaped by watch too) and 1.5 MiB blocks and on a 1 GiB heap with 256 KiB blocks, the classic pool
 * and the global pool on 4 GiB heaps with 64 KiB blocks.
 */
export const FILL_SEEDS = ['0x89d900a8', '0xb65a8385', '0xe81f131b', '0x14f4d814', '0xed267aaa', '0x1554c798'];
