/**
 * @packageDocumentation
 * `@paddock/large`: everything above 1 MiB. Large objects (up to an arena's usable size, rounded to 1 KiB)
 * live on a run of arena units, one object each; a freed one the ledger admits is parked whole (its units
 * and records kept) for the next large object of its span, or its units stay committed. Oversized objects
 * get their own range from the address space, sized to the next power of two of (size + 16 KiB) and at
 * least one arena, with a 16 KiB header area in front so that masking a pointer finds the header; any agent
 * may free one, into its own stash keyed by reservation size.
 *
 * Each agent keeps one retention ledger: retained large units, parked blocks and the committed bytes of its
 * stashed mappings, bounded by the profile's large-retention budget. Admission is all or nothing, but for a
 * mapping of which at least half fits: it is stashed with its payload to be cut to what fits, the cut put
 * off until the next oversized operation that does not take it back. The one eviction is of the oldest
 * stashed mapping when its reservation size differs and evicting it lets the free fit. A purge returns
 * everything and leaves the ledger at 0. See docs/design/large.md.
 */
export { LargeTier, MAPPING_HEADER_BYTES, PARK_CAPACITY, mappingPictures, type LargeStats, type MappingPicture } from './large-tier.js';
