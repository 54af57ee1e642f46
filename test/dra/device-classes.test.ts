// src/dra/device-classes.ts deviceClassInfo: what netattach keeps of a DeviceClass object (issue
// 30: mutation part `dra-view`). The watch itself is tested against a fake API server in
// cluster.test.ts.
import t from 'tap';
import { deviceClassInfo } from '../../src/dra/index.js';

const ATTR = 'device.attributes["k8s.cni.cncf.io"].resourceName';

t.test('deviceClassInfo: the name, a non-empty extendedResourceName, a string creation time, certain resourceNames', async (t) => {
  const cases: Array<[string, Record<string, unknown>, object | undefined]> = [
    ['no name', { metadata: {} }, undefined],
    ['no metadata', {}, undefined],
    ['an empty name', { metadata: { name: '' } }, undefined],
    ['a name only', { metadata: { name: 'c' } }, { name: 'c' }],
    [
      'everything',
      {
        metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z' },
        spec: { extendedResourceName: 'example.com/nic', selectors: [{ cel: { expression: `${ATTR} == "example.com/a"` } }] },
      },
      { name: 'c', extendedResourceName: 'example.com/nic', creationTimestamp: '2026-01-01T00:00:00Z', resourceNames: ['example.com/a'] },
    ],
    ['an empty extendedResourceName', { metadata: { name: 'c' }, spec: { extendedResourceName: '' } }, { name: 'c' }],
    ['a numeric extendedResourceName', { metadata: { name: 'c' }, spec: { extendedResourceName: 5 } }, { name: 'c' }],
    ['a numeric creation time', { metadata: { name: 'c', creationTimestamp: 5 } }, { name: 'c' }],
    ['a null spec', { metadata: { name: 'c' }, spec: null }, { name: 'c' }],
    ['a string spec', { metadata: { name: 'c' }, spec: 'x' }, { name: 'c' }],
    [
      'selectors saying nothing certain',
      { metadata: { name: 'c' }, spec: { selectors: [{ cel: { expression: `${ATTR} == "a" || true` } }] } },
      { name: 'c' },
    ],
  ];
  for (const [name, object, want] of cases) t.strictSame(deviceClassInfo(object as never), want, name);
});
