// The cache of parsed annotations (src/admission/networks.ts) holds what requests send: its budget
// must bound the heap it really keeps, whatever the annotations hold (issue 24: state no request
// can inflate). The heap measured against that budget (3,600 parses of 1,000-selection values) is
// in test/heavy/admission/networks-cache.test.ts (npm run test:heavy).
import t from 'tap';
import { parsedSize, readPodNetworks } from '../../src/admission/networks.js';
import { POD_LOCATION } from '../../src/admission/object.js';
import type { AdmissionConfig } from '../../src/admission/types.js';

const config = { defaultNetworkNamespace: 'kube-system' } as AdmissionConfig;
const pod = (networks: string) => ({
  metadata: { name: 'p', namespace: 'default', annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
});

t.test('the estimate counts selections, not only text', async (t) => {
  const many = readPodNetworks(pod(Array.from({ length: 1000 }, () => 'a').join(',')), POD_LOCATION, 'default', config);
  t.equal(many.networks.length, 1000);
  t.ok(parsedSize(many, 'x'.repeat(2000)) >= 1000 * 190, 'a 1,000-selection result is estimated at its measured size or more');
});
