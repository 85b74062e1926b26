/**
 * The workloads, in the order they run and print. A new workload: its file in this folder (a
 * `WorkloadDescriptor`) and its line here.
 */
import { capacity } from './capacity.js';
import { channels } from './channels.js';
import { cross } from './cross.js';
import { hold } from './hold.js';
import { programs } from './programs.js';
import { realloc } from './realloc.js';
import { scopes } from './scopes.js';
import { snapshots } from './snapshots.js';
import { timed } from './timed.js';
import { views } from './views.js';
import type { WorkloadDescriptor } from './workload.js';

export const WORKLOADS: readonly WorkloadDescriptor<unknown>[] = [timed, hold, cross, realloc, programs, scopes, snapshots, views, channels, capacity];
