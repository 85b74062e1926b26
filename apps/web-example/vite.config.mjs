// Vite's settings for the example page, with the backend `use=` (PADDOCK_USE) names: see scripts/bundlers.mjs.
import { readUse, viteConfig } from './scripts/bundlers.mjs';

export default viteConfig(readUse());
