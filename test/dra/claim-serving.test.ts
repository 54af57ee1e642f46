// src/dra/claim-serving.ts: whether a pod claim can hold a device with a network's resourceName,
// judged from the DeviceClasses and templates alone, and why not when netattach cannot tell.
import t from 'tap';
import { claimServes, deviceNamesOf, StaticDraView, type DraView, type TemplateDevices } from '../../src/dra/index.js';
import type { Nad } from '../../src/nads/index.js';

const A = 'example.com/nic_a';
const B = 'example.com/nic_b';
const C = 'example.com/nic_c';

const CLASSES = [
  { name: 'ext-a', extendedResourceName: A },
  { name: 'sel-a', resourceNames: [A] },
  { name: 'sel-b', resourceNames: [B] },
  // Its selectors allow either: a device of either resourceName.
  { name: 'sel-a-or-b', resourceNames: [A, B] },
  { name: 'by-driver' },
];

type Request = TemplateDevices['requests'][number];
const request = (...alternatives: Request['alternatives']): Request => ({ name: 'r', alternatives });
const byClass = (deviceClassName: string, resourceNames?: string[]) => ({ deviceClassName, ...(resourceNames ? { resourceNames } : {}) });

t.test('deviceNamesOf: the extended resource names, then the DRA-only ones', async (t) => {
  const nad = (resourceNames: string[], draOnlyResourceNames?: string[]): Nad =>
    ({
      namespace: 'ns',
      name: 'n',
      resourceNames,
      nodeSelector: {},
      problems: [],
      ...(draOnlyResourceNames ? { draOnlyResourceNames } : {}),
    }) as Nad;
  t.strictSame(deviceNamesOf(nad([A])), [A]);
  t.strictSame(deviceNamesOf(nad([A], [])), [A]);
  t.strictSame(deviceNamesOf(nad([A], [B, C])), [A, B, C]);
  t.strictSame(deviceNamesOf(nad([], [B])), [B]);
});

t.test('claimServes: one template, its requests and their alternatives', async (t) => {
  const cases: Array<{ name: string; requests: Request[]; wants?: string[]; serves: string; classes?: string[] }> = [
    { name: 'a class whose extendedResourceName is one of the names', requests: [request(byClass('ext-a'))], wants: [C, A], serves: 'yes' },
    { name: 'a class whose selectors require one of them', requests: [request(byClass('sel-a'))], serves: 'yes' },
    { name: 'a class allowing two resourceNames, one wanted', requests: [request(byClass('sel-a-or-b'))], serves: 'yes' },
    { name: 'the request narrows it to the other', requests: [request(byClass('sel-a-or-b', [B]))], serves: 'no' },
    { name: 'a class for other devices', requests: [request(byClass('sel-b'))], serves: 'no', classes: ['sel-b'] },
    { name: 'a class selecting by driver alone', requests: [request(byClass('by-driver'))], serves: 'unknown' },
    { name: 'a class not held', requests: [request(byClass('absent'))], serves: 'unknown' },
    { name: 'one alternative ruled out, one unknown', requests: [request(byClass('sel-b'), byClass('by-driver'))], serves: 'unknown' },
    { name: 'one alternative ruled out, one serving', requests: [request(byClass('sel-b'), byClass('sel-a'))], serves: 'yes' },
    { name: 'a request with no alternative', requests: [request()], serves: 'unknown' },
    { name: 'no request', requests: [], serves: 'unknown' },
    { name: 'one request ruled out, one unknown', requests: [request(byClass('sel-b')), request(byClass('by-driver'))], serves: 'unknown' },
    {
      name: 'every request ruled out',
      requests: [request(byClass('sel-b')), request(byClass('by-driver', [B]))],
      serves: 'no',
      classes: ['sel-b', 'by-driver'],
    },
    { name: 'one request ruled out, one serving', requests: [request(byClass('sel-b')), request(byClass('sel-a'))], serves: 'yes' },
  ];
  for (const c of cases) {
    const view = new StaticDraView(CLASSES, [{ namespace: 'ns', name: 'tpl', devices: { requests: c.requests } }]);
    const got = claimServes({ name: 'c', resourceClaimTemplateName: 'tpl' }, c.wants ?? [A], 'ns', view);
    const classes = [...new Set(c.requests.flatMap((r) => r.alternatives.map((a) => a.deviceClassName)))];
    if (c.serves === 'unknown') {
      t.strictSame(
        got,
        {
          serves: 'unknown',
          why: 'no request of ResourceClaimTemplate tpl names a DeviceClass known to select it',
          template: 'tpl',
          classes,
        },
        c.name,
      );
    } else t.strictSame(got, { serves: c.serves, template: 'tpl', classes }, c.name);
    if (c.classes) t.strictSame(got.classes, c.classes, `${c.name}: the classes named`);
  }
});

t.test('claimServes: what netattach cannot read, and why', async (t) => {
  const held = new StaticDraView(CLASSES, [{ namespace: 'ns', name: 'tpl', devices: { requests: [request(byClass('sel-a'))] } }]);
  const unknown = (why: string) => ({ serves: 'unknown', why });
  t.strictSame(claimServes({ name: 'c', resourceClaimName: 'shared' }, [A], 'ns', held), unknown('netattach does not read ResourceClaims'));
  t.strictSame(claimServes({ name: 'c' }, [A], 'ns', held), unknown('no resourceClaimTemplateName'));
  t.strictSame(claimServes({ name: 'c', resourceClaimTemplateName: 7 }, [A], 'ns', held), unknown('no resourceClaimTemplateName'));
  const entry = { name: 'c', resourceClaimTemplateName: 'tpl' };
  t.strictSame(claimServes(entry, [A], 'ns', undefined), unknown('netattach does not read templates here'));
  // A view without the template reads (a DraView of extended resources only).
  const classesOnly: DraView = { classesFor: () => [], template: () => ({ status: 'found' }) };
  t.strictSame(claimServes(entry, [A], 'ns', classesOnly), unknown('netattach does not read templates here'));
  t.strictSame(claimServes(entry, [A], 'other', held), unknown('no ResourceClaimTemplate tpl in namespace other'));
  // Held by name, its requests not read (a template added without them).
  const noRequests = new StaticDraView(CLASSES, [{ namespace: 'ns', name: 'tpl' }]);
  t.strictSame(claimServes(entry, [A], 'ns', noRequests), unknown('the requests of ResourceClaimTemplate tpl are unknown here'));
  const unavailable: DraView = {
    classesFor: () => [],
    template: () => ({ status: 'unavailable', reason: 'the ResourceClaimTemplate watch has not synced' }),
    deviceClass: () => undefined,
    templateDevices: () => undefined,
  };
  t.strictSame(claimServes(entry, [A], 'ns', unavailable), unknown('the ResourceClaimTemplate watch has not synced'));
  t.strictSame(claimServes(entry, [A], 'ns', held), { serves: 'yes', template: 'tpl', classes: ['sel-a'] });
});
