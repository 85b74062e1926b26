// The layer of every package that exists (bottom first; the README's layer table shows the same). A package
// may import only packages on a strictly lower layer, and only through their package name.
export const LAYERS = {
  '@paddock/platform': 1,
  '@paddock/profile': 2,
  '@paddock/region': 3,
  '@paddock/registry': 3,
  '@paddock/arena': 4,
  '@paddock/pool-classic': 4,
  '@paddock/pool-global': 4,
  '@paddock/thread-cache': 5,
  '@paddock/large': 5,
  '@paddock/allocator': 6,
  '@paddock/channel': 7,
};
