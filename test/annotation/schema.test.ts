// The schema's errors in Kubernetes' words, one per field, on a normalized element.
import t from 'tap';
import { schemaErrors } from '../../src/annotation/schema.js';

t.test('schemaErrors: each keyword of the schema in our wording, one error per field', async (t) => {
  const cases: Array<[string, Record<string, unknown>, unknown[]]> = [
    ['valid', { name: 'a' }, []],
    ['no name', {}, [{ path: 'p.name', type: 'Required value', reason: '' }]],
    [
      'an empty name: one error, not also its format',
      { name: '' },
      [{ path: 'p.name', type: 'Required value', reason: 'must not be empty' }],
    ],
    ['a name that is no string', { name: 7 }, [{ path: 'p.name', type: 'Invalid value', value: 7, reason: 'must be a string' }]],
    [
      'ips that is no array',
      { name: 'a', ips: 'x' },
      [{ path: 'p.ips', type: 'Invalid value', value: 'x', reason: 'must be a JSON array' }],
    ],
    [
      'bandwidth that is no object',
      { name: 'a', bandwidth: 1 },
      [{ path: 'p.bandwidth', type: 'Invalid value', value: 1, reason: 'must be a JSON object' }],
    ],
    [
      'a port that is no integer',
      { name: 'a', portMappings: [{ hostPort: 1.5, containerPort: 1 }] },
      [{ path: 'p.portMappings[0].hostPort', type: 'Invalid value', value: 1.5, reason: 'must be an integer' }],
    ],
    [
      'a port mapping without containerPort',
      { name: 'a', portMappings: [{ hostPort: 1 }] },
      [{ path: 'p.portMappings[0].containerPort', type: 'Required value', reason: '' }],
    ],
    [
      'a port out of range',
      { name: 'a', portMappings: [{ hostPort: 1, containerPort: 65536 }] },
      [{ path: 'p.portMappings[0].containerPort', type: 'Invalid value', value: 65536, reason: 'must be between 1 and 65535' }],
    ],
    [
      'an unsupported protocol',
      { name: 'a', portMappings: [{ hostPort: 1, containerPort: 1, protocol: 'FTP' }] },
      [
        {
          path: 'p.portMappings[0].protocol',
          type: 'Unsupported value',
          value: 'FTP',
          reason: 'supported values: "TCP", "UDP", "SCTP" (any case)',
        },
      ],
    ],
    [
      "a bad format: the format's own reason",
      { name: 'a', interface: 'a:b' },
      [{ path: 'p.interface', type: 'Invalid value', value: 'a:b', reason: "must not contain '/' or ':'" }],
    ],
    // Callers drop unknown keys before the schema; called directly, it names them.
    ['an unknown key', { name: 'a', foo: 1 }, [{ path: 'p.foo', type: 'Invalid value', value: undefined, reason: 'unknown key' }]],
    [
      'an unknown key in a port mapping',
      { name: 'a', portMappings: [{ hostPort: 1, containerPort: 1, x: 1 }] },
      [{ path: 'p.portMappings[0].x', type: 'Invalid value', value: undefined, reason: 'unknown key' }],
    ],
    ['a dotted key is an extension', { name: 'a', 'x.y': { z: 1 } }, []],
  ];
  for (const [name, element, want] of cases) t.same(schemaErrors('p', element), want, name);
});
