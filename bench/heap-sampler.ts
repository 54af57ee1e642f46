// Preloaded (`--import`) into a server by bench/alloc.ts: V8's sampling heap profiler, objects the
// GC already collected included, so it counts what a request allocates, not what it keeps. The
// bench drives it through files next to $NETATTACH_HEAP_SAMPLE (signals are the server's own):
// `<path>.start` starts sampling, `<path>.stop` writes the profile to `<path>`.
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.NETATTACH_HEAP_SAMPLE;
if (out) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  let state: 'idle' | 'sampling' | 'done' = 'idle';
  setInterval(() => {
    if (state === 'idle' && existsSync(`${out}.start`)) {
      state = 'sampling';
      const options = { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
      session.post('HeapProfiler.startSampling', options, () => writeFileSync(`${out}.started`, ''));
    } else if (state === 'sampling' && existsSync(`${out}.stop`)) {
      state = 'done';
      session.post('HeapProfiler.stopSampling', (err, r) => writeFileSync(out, err ? '' : JSON.stringify(r.profile)));
    }
  }, 50).unref();
}
