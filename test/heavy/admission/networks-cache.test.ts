// The cache of parsed annotations (src/admission/networks.ts) holds what requests send: its budget
// must bound the heap it really keeps, whatever the annotations hold (issue 24: state no request
// can inflate). Heap is measured after a full GC, as a ratio to the cache's own budget. Heavy: a
// memory test (3,600 parses of 1,000-selection values). Moved from
// test/admission/networks-cache.test.ts, which keeps the size estimate's test.
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PARSED_CACHE_BYTES, readPodNetworks } from '../../../src/admission/networks.js';
import { POD_LOCATION } from '../../../src/admission/object.js';
import type { AdmissionConfig } from '../../../src/admission/types.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const config = { defaultNetworkNamespace: 'kube-system' } as AdmissionConfig;
const pod = (networks: string) => ({
  metadata: { name: 'p', namespace: 'default', annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
});

t.test('distinct 1,000-selection annotations, each sent twice, keep the heap within the cache budget', async (t) => {
  const before = heap();
  // Each text is under the 4,096-character limit of cached texts and seen twice (the second
  // sighting is what caches it); 1,200 of them held 183 MB if counted by text alone.
  for (let i = 0; i < 1200; i++) {
    const text = [`n${i}`, ...Array.from({ length: 999 }, () => 'a')].join(',');
    readPodNetworks(pod(text), POD_LOCATION, 'default', config);
    readPodNetworks(pod(`${text} `), POD_LOCATION, 'default', config); // breaks the last-read slot
    readPodNetworks(pod(text), POD_LOCATION, 'default', config);
  }
  const grown = heap() - before;
  t.ok(
    grown < 2 * PARSED_CACHE_BYTES,
    `heap grew ${(grown / 1048576).toFixed(1)} MB; the cache's budget is ${PARSED_CACHE_BYTES / 1048576} MB (bar 2x)`,
  );
});
