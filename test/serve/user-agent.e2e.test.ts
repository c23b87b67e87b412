// The User-Agent of the service's own requests, through the binary: HttpRequest tasks (relays
// included) and <response-from-url> send `endpoint-service/<version>`, not the HTTP client
// library's name; a task that sets its own User-Agent header sends that one
// (docs/behaviour.md, "Tasks").
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempApp } from '../cli/helpers.js';
import { HttpPeer } from '../helpers/http-peer.js';
import { ROOT, StartedServices, type RunningService } from '../helpers/serve.js';

const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const OURS = `endpoint-service/${version}`;

const APP = `<endpoint-folder>
  <endpoint name="relay">
    <task class="HttpRequest" id="plain"><url>\${env:PEER}/plain</url><forward-request-body/></task>
    <task class="HttpRequest" id="own"><url>\${env:PEER}/own</url><request-header name="User-Agent">shop-sync/2.1</request-header></task>
  </endpoint>
  <endpoint name="page">
    <success><response-from-url><url>\${env:PEER}/page</url></response-from-url></success>
  </endpoint>
</endpoint-folder>`;

const services = new StartedServices();
let peer: HttpPeer;
let dir: string;
let service: RunningService;
beforeAll(async () => {
  peer = await HttpPeer.start();
  for (const p of ['/plain', '/own']) peer.route(p, { status: 200, body: 'ok' });
  peer.route('/page', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'page' });
  dir = tempApp({ 'endpoints.xml': APP });
  service = await services.start(path.join(dir, 'endpoints.xml'), [], { PEER: peer.origin });
});
afterAll(async () => {
  await services.stopAll();
  await peer?.close();
  if (dir !== undefined) removeDir(dir);
});

describe('the User-Agent of requests the service makes', () => {
  it("an HttpRequest task sends the product's own, unless the task sets one", async () => {
    const r = await fetch(`${service.url}/relay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'the-client/1' },
      body: '{}',
    });
    expect(r.status).toBe(200);
    expect(OURS).toMatch(/^endpoint-service\/\d+\.\d+\.\d+/);
    expect(peer.requestsTo('/plain')[0]!.headers['user-agent']).toBe(OURS);
    expect(peer.requestsTo('/own')[0]!.headers['user-agent']).toBe('shop-sync/2.1');
  });

  it("<response-from-url> sends the product's own", async () => {
    const r = await fetch(`${service.url}/page`);
    expect(await r.text()).toBe('page');
    expect(peer.requestsTo('/page')[0]!.headers['user-agent']).toBe(OURS);
  });
});
