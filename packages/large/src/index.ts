/**
 * @packageDocumentation
 * `@paddock/large`: everything above 1 MiB. Large objects (up to an arena's usable size, rounded to 1 KiB, of a
 * span that packs an arena to at least 15/16) live on a run of arena units, one object each; a freed one the
 * ledger admits is parked whole (its units and records kept) for the next large object of its span, or its units
 * stay committed. Oversized objects (every other size) get their own range from the address space, of exactly
 * size + 16 KiB rounded up to 64 KiB, with the header 16 KiB before the payload, outside every region (the heap's
 * region map tells a free which it is); any agent may free one, into its own stash keyed by exact reservation, and
 * realloc grows or shrinks one in place where the address space allows.
 *
 * Each agent keeps one retention ledger: retained large units, parked blocks and the committed bytes of its
 * stashed mappings, bounded by the profile's large-retention budget. Admission is all or nothing, but for a
 * mapping of which at least half fits: it is stashed with its payload to be cut to what fits, the cut put
 * off until the next oversized operation that does not take it back. The one eviction is of the oldest
 * stashed mapping when its reservation size differs and evicting it lets the free fit. A purge returns
 * everything and leaves the ledger at 0. See docs/design/large.md.
 */
export { LargeTier, PARK_CAPACITY, type LargeStats } from './large-tier.js';
export { MAPPING_HEADER_BYTES, mappingPictures, type MappingPicture } from './mapping.js';
