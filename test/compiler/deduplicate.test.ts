// <deduplicate key for>: compiled once, inherited from folders (an endpoint's own replaces it),
// and refused or warned about where it could never work as meant.
import { describe, expect, it } from 'vitest';
import { compileOk, compileXml, endpointOf, param, parts } from './helpers.js';

const codes = (xml: string) => compileXml(xml).diagnostics.map((d) => `${d.line}:${d.column} ${d.severity} ${d.code}`);
const app = (inner: string) => `<endpoint-folder>\n<endpoint name="e">\n<parameter name="id" header="X-Id"/>\n${inner}\n</endpoint>\n</endpoint-folder>\n`;

describe('<deduplicate>', () => {
  it('compiles its key and window (default 24h)', () => {
    const e = endpointOf('<parameter name="id" header="X-Id"/><deduplicate key="${id}" for="3d"/>');
    expect(parts(e.deduplicate!.key)).toEqual([param('id')]);
    expect(e.deduplicate!.forMs).toBe(3 * 86_400_000);
    expect(endpointOf('<parameter name="id"/><deduplicate key="${id}"/>').deduplicate!.forMs).toBe(86_400_000);
    expect(endpointOf('<parameter name="id"/>').deduplicate).toBeNull();
  });

  it('is inherited from a folder, and an endpoint’s own replaces it', () => {
    const application = compileOk(`<endpoint-folder>
  <parameter name="idem" header="Idempotency-Key" default-value=""/>
  <deduplicate key="\${idem}" for="10m"/>
  <endpoint name="a"/>
  <endpoint name="b"><parameter name="d" header="X-D"/><deduplicate key="\${d}" for="5m"/></endpoint>
</endpoint-folder>`);
    const [a, b] = application.endpoints;
    expect(parts(a!.deduplicate!.key)).toEqual([param('idem')]);
    expect(a!.deduplicate!.forMs).toBe(600_000);
    expect(parts(b!.deduplicate!.key)).toEqual([param('d')]);
    expect(b!.deduplicate!.forMs).toBe(300_000);
  });

  it('a key the same for every request is an error; one with ${request-id} a warning', () => {
    expect(codes(app('<deduplicate key="always"/>'))).toEqual(['4:14 error constant-deduplication-key']);
    expect(codes(app('<deduplicate key="${endpoint}-${environment}"/>'))).toEqual(['4:14 error constant-deduplication-key']);
    expect(codes(app('<deduplicate key="${request-id}"/>'))).toEqual(['4:14 warning deduplication-key-never-repeats']);
    expect(codes(app('<deduplicate key="${client-ip}"/>'))).toEqual([]);
  });

  it('refuses a window that is not 1s to 30d with a unit', () => {
    for (const bad of ['60', '0s', '31d', '500ms', 'soon'])
      expect(codes(app(`<deduplicate key="\${id}" for="${bad}"/>`)), bad).toEqual(['4:26 error invalid-deduplication-window']);
    expect(codes(app('<deduplicate key="${id}" for="30d"/>'))).toEqual([]);
  });

  it('needs a key of known names, and only one <deduplicate>', () => {
    expect(codes(app('<deduplicate for="1h"/>'))).toEqual(['4:1 error missing-attribute']);
    expect(codes(app('<deduplicate key="${nope}"/>'))).toEqual(['4:19 error unknown-placeholder']);
    expect(codes(app('<deduplicate key="${id}"/><deduplicate key="${id}"/>'))).toEqual(['4:27 error duplicate-element']);
  });
});
