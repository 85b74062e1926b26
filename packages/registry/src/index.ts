/**
 * @packageDocumentation
 * `@paddock/registry`: who owns what, and how frees reach an owner. An agent takes an owner slot with
 * one fetch-add when it carves its first arena (an agent that only frees never takes one); slots count
 * up from 1, are never reused and have no cap. Each slot has an inbox, one atomic head word in the
 * buffer, onto which other agents push batches of freed blocks with one CAS and which the owner empties
 * with one exchange. Inboxes live in segments of 256 slot records, appended to a list by CAS; the loser
 * of an append race gives its segment back. Nothing here waits.
 *
 * ```ts
 * const registry = Registry.create(space);          // first agent; others: Registry.open(space)
 * const slot = registry.takeOwnerSlot();            // 1, 2, 3, ...
 * registry.pushInbox(slot, batch, batch + 8);       // another agent: link word at batch + 8
 * const list = registry.takeInbox(slot);            // the owner: whole list, 0 if empty
 * ```
 */
export {
  INBOXES_PER_SEGMENT,
  REGISTRY_ROOT,
  REGISTRY_ROOT_BYTES,
  Registry,
  SEGMENT_COMMIT_BYTES,
  SEGMENT_HEADER_BYTES,
  SEGMENT_RESERVE_BYTES,
  SLOT_RECORD_BYTES,
} from './registry.js';
