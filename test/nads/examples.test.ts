import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderError } from '../../src/field/index.js';
import { DirectoryNadSource, nadObjectsFromText, validateNadObject } from '../../src/nads/index.js';

const dir = fileURLToPath(new URL('../../examples/nads/', import.meta.url));

t.test('every example NAD passes validation without warnings', async (t) => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    const parsed = nadObjectsFromText(readFileSync(join(dir, file), 'utf8'), false);
    if (!parsed.ok) {
      t.fail(`${file}: ${parsed.error}`);
      continue;
    }
    for (const obj of parsed.nads) {
      const { errors, warnings } = validateNadObject(obj);
      t.same([...errors, ...warnings].map(renderError), [], `${file}: ${String((obj.metadata as { name: string }).name)}`);
    }
  }
});

t.test('the examples as `npm start` serves them', async (t) => {
  const src = new DirectoryNadSource(dir, { resyncIntervalMs: 0 });
  t.teardown(() => src.stop());
  await src.start();
  const caps = (ns: string, name: string): string[] | undefined => {
    const nad = src.get(ns, name);
    return nad?.cni ? [...nad.cni.capabilities].sort() : undefined;
  };
  t.same(
    src
      .list()
      .map((n) => `${n.namespace}/${n.name}`)
      .sort(),
    [
      'default/ipoib',
      'default/macvlan-dhcp',
      'default/macvlan-static',
      'default/roce-shared',
      'default/sriov-dpdk',
      'default/sriov-net',
      'kube-system/ib-sriov',
      'kube-system/node-local',
    ],
  );
  t.same(caps('default', 'macvlan-static'), ['ips', 'mac']);
  t.same(caps('default', 'macvlan-dhcp'), []);
  t.same(caps('kube-system', 'ib-sriov'), ['infinibandGUID']);
  t.same(src.get('kube-system', 'ib-sriov')?.resourceNames, ['mellanox.com/mlnx_sriov_ib']);
  t.same(src.get('default', 'roce-shared')?.resourceNames, ['rdma/hpc_shared_devices_ens13f1np1']);
  t.same(src.get('default', 'sriov-dpdk')?.nodeSelector, { 'feature.node.kubernetes.io/network-sriov.capable': 'true', dpdk: '' });
  t.equal(src.get('kube-system', 'node-local')?.cni, undefined, 'empty config: capabilities unknown');
  t.same(
    src.list().flatMap((n) => n.problems),
    [],
  );
});
