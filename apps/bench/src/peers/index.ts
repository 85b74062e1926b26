/**
 * The peers, in the order of the tables' columns (and of the programs' rows). A new peer: its file in this
 * folder (a `PeerDescriptor`) and its line here.
 */
import { asTlsf } from './as-tlsf.js';
import { floor } from './floor.js';
import { glibc } from './glibc.js';
import { js } from './js.js';
import { mimalloc } from './mimalloc.js';
import { paddock } from './paddock.js';
import { paddockClassic } from './paddock-classic.js';
import { paddockGlobal } from './paddock-global.js';
import type { PeerDescriptor } from './peer.js';
import { thing } from './thing.js';
import { wasiDlmalloc } from './wasi-dlmalloc.js';

export const PEERS: readonly PeerDescriptor[] = [
  floor,
  thing,
  asTlsf,
  wasiDlmalloc,
  paddock,
  paddockClassic,
  paddockGlobal,
  js,
  glibc,
  mimalloc,
];
