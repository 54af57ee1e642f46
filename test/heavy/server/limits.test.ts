// The server's answer budget against clients that do not read (issue 24, finding 2), in process
// over real HTTPS: 16 MB answers and a 3 s drain bound waited out twice, so about 8 s a run. Moved
// from test/server/limits.test.ts (the rest of the limits stay there, in npm test).
import t from 'tap';
import { connect, fakeCore, podReview, request } from '../../server/fixtures.js';
import { startServer } from '../../server/harness.js';

/** A core answering every review with `bytes` of warnings: a stand-in for any large answer. */
const bigAnswers = (bytes: number) => ({
  ...fakeCore,
  toResponse: (apiVersion: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1', uid: string) => ({
    apiVersion,
    kind: 'AdmissionReview' as const,
    response: { uid, allowed: true, warnings: Array.from({ length: bytes / 1024 }, (_, i) => `${i}`.padEnd(1024, 'w')) },
  }),
});

t.test(
  'answers a client does not read are counted in the budget: the oldest is dropped for room, any after answerDrainMs (issue 24, finding 2)',
  async (t) => {
    // 16 MB answers (more than the kernel's socket buffers take on loopback), a 24 MiB budget, a 3 s drain bound.
    const answerDrainMs = 3000;
    const size = 16 * 1024 * 1024;
    const { url, ca } = await startServer(t, {
      deps: { core: bigAnswers(size) },
      options: { limits: { inflightBytes: 24 * 1024 * 1024, answerDrainMs } },
    });
    const body = JSON.stringify(podReview());
    /** A connection that asks and does not read; `readNow` starts reading and resolves with the bytes it got before the server closed. */
    const ask = async () => {
      const s = await connect(url, ca);
      s.on('error', () => {});
      s.pause();
      s.write(
        `POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const readNow = () =>
        new Promise<number>((resolve) => {
          let got = 0;
          s.on('data', (d: Buffer) => (got += d.length));
          s.once('close', () => resolve(got));
          // A connection the server kept open: whole answer read, then closed here.
          const whole = setInterval(() => got >= size && s.destroy(), 50);
          s.once('close', () => clearInterval(whole));
          s.resume();
        });
      return { readNow };
    };
    const first = await ask();
    await new Promise((r) => setTimeout(r, 500));
    const second = await ask();
    await new Promise((r) => setTimeout(r, 500));
    // Two unread answers do not fit in 24 MiB: the oldest connection was dropped (on main, read whole now).
    const firstGot = await first.readNow();
    t.ok(firstGot < size, `the oldest unread answer was dropped when the newer one needed room: ${firstGot} of ${size} bytes arrived`);
    // The newer one fitted, but is dropped once it has waited answerDrainMs (slack for a loaded machine).
    await new Promise((r) => setTimeout(r, answerDrainMs * 2));
    const secondGot = await second.readNow();
    t.ok(
      secondGot < size,
      `an answer unread for ${answerDrainMs * 2} ms was dropped (bound ${answerDrainMs} ms): ${secondGot} of ${size} bytes arrived`,
    );
    // A client that reads gets the whole answer, however large.
    const read = await request(`${url}/validate`, body, { ca });
    t.equal(read.status, 200);
    t.equal(read.json.response.warnings.length, size / 1024);
  },
);
