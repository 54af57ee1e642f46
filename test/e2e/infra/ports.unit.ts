// Unit checks of the port picker: no cluster needed.
import t from 'tap';
import net from 'node:net';
import { distinctFreePorts, ephemeralLow } from './ports.js';

t.test('ports come from below the ephemeral range, are distinct, and can be listened on', async (t) => {
  const low = ephemeralLow();
  const ports = await distinctFreePorts(40);
  t.equal(new Set(ports).size, 40, 'no port handed out twice');
  t.ok(
    ports.every((p) => p >= 10_000 && p < low),
    `all in 10000-${low - 1}: ${ports.join(' ')}`,
  );
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(ports[0], '127.0.0.1', resolve);
  });
  t.equal((srv.address() as net.AddressInfo).port, ports[0], 'the first one is bound');
  await new Promise<void>((resolve) => srv.close(() => resolve()));
});
