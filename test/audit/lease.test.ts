// The audit's Lease (src/audit/lease.ts), through a scripted transport: what it reads and writes,
// who holds it at each side of `renewTime + leaseDurationSeconds`, the transitions counted, a lost
// race (409) as "not the holder", and every other API error thrown. It imports the module alone
// (no I/O, no timers): each mutant of the module runs it in about a second.
import t from 'tap';
import { APPLY_PATCH, FIELD_MANAGER, Lease, microTime } from '../../src/audit/lease.js';
import { KubeRequestError, type KubeTransport } from '../../src/kube/transport.js';

const PATH = '/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases/netattach-audit';
const T0 = Date.UTC(2026, 11, 2, 12, 0, 0, 0);

interface Call {
  method: 'get' | 'patch';
  path: string;
  body?: unknown;
  contentType?: string;
}

/** The server-side apply of the Lease with `spec` (and the resourceVersion it was read at, if any), as the transport sees it. */
const applied = (spec: Record<string, unknown>, resourceVersion?: string): Call => ({
  method: 'patch',
  path: `${PATH}?fieldManager=netattach&force=true`,
  contentType: 'application/apply-patch+yaml',
  body: {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'netattach-audit', namespace: 'netattach-system', ...(resourceVersion ? { resourceVersion } : {}) },
    spec,
  },
});

/** A transport that answers `get` from `current` (a 404 when undefined) and records every call. */
function scripted(current: unknown, patchError?: Error, getError?: Error) {
  const calls: Call[] = [];
  const transport: KubeTransport = {
    getJson: async (path, query) => {
      calls.push({ method: 'get', path });
      if (Object.keys(query).length !== 0) throw new Error(`unexpected query ${JSON.stringify(query)}`);
      if (getError) throw getError;
      if (current === undefined) throw new KubeRequestError(404, 'not found');
      return current;
    },
    patchJson: async (path, body, contentType) => {
      calls.push({ method: 'patch', path, body, contentType });
      if (patchError) throw patchError;
      return body;
    },
    watch: async () => {
      throw new Error('no watch');
    },
  };
  return { transport, calls };
}

const lease = (transport: KubeTransport, now = T0, identity = 'me', durationSeconds = 30): Lease =>
  new Lease(transport, { namespace: 'netattach-system', name: 'netattach-audit', identity, durationSeconds, now: () => now });

/** What a call rejected with (undefined when it resolved). */
const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

const stored = (spec: Record<string, unknown>, resourceVersion: string | null = '7') => ({
  metadata: resourceVersion ? { resourceVersion } : {},
  spec,
});

t.test('the constants: server-side apply as netattach', async (t) => {
  t.equal(APPLY_PATCH, 'application/apply-patch+yaml');
  t.equal(FIELD_MANAGER, 'netattach');
});

t.test('microTime: RFC 3339 with exactly six fractional digits, in UTC', async (t) => {
  t.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
  t.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 0)), '2026-01-02T03:04:05.000000Z');
  t.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 7)), '2026-01-02T03:04:05.007000Z');
});

t.test('no Lease yet (404): created, with this replica as holder and no transition', async (t) => {
  const { transport, calls } = scripted(undefined);
  t.equal(await lease(transport).acquire(), true);
  t.strictSame(calls, [
    { method: 'get', path: PATH },
    applied({ holderIdentity: 'me', leaseDurationSeconds: 30, acquireTime: microTime(T0), renewTime: microTime(T0), leaseTransitions: 0 }),
  ]);
});

t.test('the path escapes the namespace and the name', async (t) => {
  const { transport, calls } = scripted(undefined);
  await new Lease(transport, { namespace: 'a b', name: 'x/y', identity: 'me', durationSeconds: 1 }).acquire();
  t.equal(calls[0]!.path, '/apis/coordination.k8s.io/v1/namespaces/a%20b/leases/x%2Fy');
});

t.test('renewing its own Lease: the acquire time and transitions kept, the resourceVersion sent', async (t) => {
  const { transport, calls } = scripted(
    stored({ holderIdentity: 'me', leaseDurationSeconds: 30, acquireTime: 'then', renewTime: microTime(T0 - 5000), leaseTransitions: 4 }),
  );
  t.equal(await lease(transport).acquire(), true);
  t.strictSame(calls[1]!.body, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'netattach-audit', namespace: 'netattach-system', resourceVersion: '7' },
    spec: { holderIdentity: 'me', leaseDurationSeconds: 30, acquireTime: 'then', renewTime: microTime(T0), leaseTransitions: 4 },
  });
  // Its own Lease without an acquire time gets one now; without a resourceVersion none is sent.
  const bare = scripted(stored({ holderIdentity: 'me' }, null));
  t.equal(await lease(bare.transport).acquire(), true);
  t.strictSame((bare.calls[1]!.body as { metadata: unknown }).metadata, { name: 'netattach-audit', namespace: 'netattach-system' });
  t.match((bare.calls[1]!.body as { spec: unknown }).spec, { acquireTime: microTime(T0), leaseTransitions: 0 });
});

t.test('another holder: kept until renewTime + leaseDurationSeconds, taken over from then on', async (t) => {
  const theirs = (renewMs: number, duration?: number) =>
    stored({
      holderIdentity: 'other',
      ...(duration === undefined ? {} : { leaseDurationSeconds: duration }),
      acquireTime: 'theirs',
      renewTime: microTime(renewMs),
      leaseTransitions: 2,
    });
  // Renewed 30 s ago with 30 s: expired at exactly now.
  for (const [why, renew, want] of [
    ['1 ms before it expires', T0 - 29_999, false],
    ['when it expires', T0 - 30_000, true],
    ['long expired', T0 - 600_000, true],
    ['renewed in the future', T0 + 10_000, false],
  ] as const) {
    const { transport, calls } = scripted(theirs(renew, 30));
    t.equal(await lease(transport).acquire(), want, why);
    t.equal(calls.length, want ? 2 : 1, `${why}: ${want ? 'written' : 'nothing written'}`);
    if (want) {
      t.strictSame(
        (calls[1]!.body as { spec: unknown }).spec,
        { holderIdentity: 'me', leaseDurationSeconds: 30, acquireTime: microTime(T0), renewTime: microTime(T0), leaseTransitions: 3 },
        `${why}: a transition counted, acquired now`,
      );
    }
  }
  // The holder's own duration counts, not this replica's; without one, this replica's.
  t.equal(await lease(scripted(theirs(T0 - 30_000, 60)).transport).acquire(), false, 'their 60 s: still theirs');
  t.equal(await lease(scripted(theirs(T0 - 59_999, 60)).transport, T0, 'me', 30).acquire(), false);
  t.equal(await lease(scripted(theirs(T0 - 60_000, 60)).transport).acquire(), true, 'their 60 s passed');
  t.equal(await lease(scripted(theirs(T0 - 29_999)).transport, T0, 'me', 30).acquire(), false, "no duration: this replica's 30 s");
  t.equal(await lease(scripted(theirs(T0 - 30_000)).transport, T0, 'me', 30).acquire(), true);
  t.equal(await lease(scripted(theirs(T0 - 30_000)).transport, T0, 'me', 31).acquire(), false, "no duration: this replica's 31 s");
});

t.test('another holder without a readable renew time, or no holder: taken at once', async (t) => {
  for (const [why, spec, transitions] of [
    ['no renewTime', { holderIdentity: 'other', leaseDurationSeconds: 30, leaseTransitions: 1 }, 2],
    ['a renewTime that is no time', { holderIdentity: 'other', leaseDurationSeconds: 30, renewTime: 'soon', leaseTransitions: 1 }, 2],
    ['released (holder empty)', { holderIdentity: '', leaseDurationSeconds: 30, renewTime: microTime(T0), leaseTransitions: 1 }, 2],
    ['no spec', undefined, 1],
  ] as const) {
    const { transport, calls } = scripted(spec === undefined ? { metadata: { resourceVersion: '3' } } : stored(spec));
    t.equal(await lease(transport).acquire(), true, why);
    t.equal((calls[1]!.body as { spec: { leaseTransitions: number } }).spec.leaseTransitions, transitions, `${why}: transitions`);
  }
});

t.test('a lost race (409) is not holding it; other write errors and read errors are thrown', async (t) => {
  t.equal(await lease(scripted(undefined, new KubeRequestError(409, 'conflict')).transport).acquire(), false);
  t.match(await rejection(lease(scripted(undefined, new KubeRequestError(422, 'invalid')).transport).acquire()), { statusCode: 422 });
  t.match(await rejection(lease(scripted(undefined, new Error('reset')).transport).acquire()), { message: 'reset' });
  t.match(await rejection(lease(scripted(undefined, undefined, new KubeRequestError(403, 'forbidden')).transport).acquire()), {
    statusCode: 403,
  });
  t.match(await rejection(lease(scripted(undefined, undefined, new Error('reset')).transport).acquire()), { message: 'reset' });
  // 409 on the read is an error too (only a missing Lease is an answer there).
  t.match(await rejection(lease(scripted(undefined, undefined, new KubeRequestError(409, 'conflict')).transport).acquire()), {
    statusCode: 409,
  });
  // A 404 on the write is an error (the namespace is gone), not a lost race.
  t.match(await rejection(lease(scripted(undefined, new KubeRequestError(404, 'no namespace')).transport).acquire()), { statusCode: 404 });
});

t.test('release: only by the holder, an empty holder written with the resourceVersion read', async (t) => {
  const mine = scripted(stored({ holderIdentity: 'me', leaseDurationSeconds: 30, renewTime: microTime(T0 - 1000) }));
  await lease(mine.transport, T0 + 5).release();
  t.strictSame(mine.calls, [
    { method: 'get', path: PATH },
    applied({ holderIdentity: '', leaseDurationSeconds: 30, renewTime: microTime(T0 + 5) }, '7'),
  ]);
  const noVersion = scripted(stored({ holderIdentity: 'me' }, null));
  await lease(noVersion.transport).release();
  t.strictSame((noVersion.calls[1]!.body as { metadata: unknown }).metadata, { name: 'netattach-audit', namespace: 'netattach-system' });
  const theirs = scripted(stored({ holderIdentity: 'other' }));
  await lease(theirs.transport).release();
  t.strictSame(
    theirs.calls.map((c) => c.method),
    ['get'],
    'another holder: nothing written',
  );
  const empty = scripted({});
  await lease(empty.transport).release();
  t.strictSame(
    empty.calls.map((c) => c.method),
    ['get'],
    'no holder: nothing written',
  );
});

t.test('the clock defaults to Date.now', async (t) => {
  const { transport, calls } = scripted(undefined);
  const before = Date.now();
  await new Lease(transport, { namespace: 'n', name: 'l', identity: 'me', durationSeconds: 30 }).acquire();
  const after = Date.now();
  const renew = Date.parse((calls[1]!.body as { spec: { renewTime: string } }).spec.renewTime);
  t.ok(renew >= before && renew <= after, `${renew} within [${before}, ${after}]`);
});

t.test('a Lease read without metadata: taken or released without a resourceVersion', async (t) => {
  const expired = scripted({ spec: { holderIdentity: 'other', leaseDurationSeconds: 30, renewTime: microTime(T0 - 60_000) } });
  t.equal(await lease(expired.transport).acquire(), true);
  t.strictSame((expired.calls[1]!.body as { metadata: unknown }).metadata, { name: 'netattach-audit', namespace: 'netattach-system' });
  const mine = scripted({ spec: { holderIdentity: 'me' } });
  await lease(mine.transport).release();
  t.strictSame((mine.calls[1]!.body as { metadata: unknown }).metadata, { name: 'netattach-audit', namespace: 'netattach-system' });
});
