// Written by cloakbrowser-mcp: preloaded last into the driver's node (-r)
// when it runs with the default flags. Once the driver has started, V8's
// heap is run for memory rather than speed (--optimize-for-size: smaller
// steps of heap growth, collections that give memory back), as if node had
// been started with the flag, but without its cost to the start itself,
// when the heap grows from nothing while playwright-core's bundles load
// (measured, docs/benchmarks.md). V8 reads the flag at each collection.
//
// It comes after the code cache's own 3 s step (codecache.js writes a
// cache then; V8 records its flags in each cache, and one made after this
// change would be refused by the next start): both are 3,000 ms timers,
// which node runs in the order they were set, and this file is loaded after
// codecache.js.
'use strict';
setTimeout(() => {
  try { require('v8').setFlagsFromString('--optimize-for-size'); } catch {}
}, 3000).unref();
