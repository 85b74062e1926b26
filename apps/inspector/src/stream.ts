/**
 * What the page draws besides the snapshot itself, the same for both sources: the heap's figures over time and
 * the marks on that timeline (what a person or a program did, and what the snapshots show happened).
 */

/** One point of the timeline: when, and the heap's committed, resident (null in a browser) and live bytes. */
export interface Figures {
  t: number;
  committed: number;
  resident: number | null;
  live: number;
}

/**
 * A mark on the timeline: `action` for what the page's controls did, `program` for what a Node program marked
 * (`serveInspector(...).mark`), `heap` for what two snapshots in a row show (an owner taken over, an agent gone).
 */
export interface Mark {
  t: number;
  label: string;
  kind: 'action' | 'program' | 'heap';
}
