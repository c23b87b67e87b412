// The promise of dry-run: nothing goes over the network. A real HTTP server and a real SMTP
// server listen on loopback where the application's tasks and responses point, and must see
// no connection at all while every format is printed with a simulated request.
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dryRun } from './run.js';

let httpServer: http.Server;
let smtpServer: SMTPServer;
let httpPort = 0;
let smtpPort = 0;
let httpConnections = 0;
let smtpConnections = 0;
let directory = '';

const listen = (server: net.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));

beforeAll(async () => {
  httpServer = http.createServer((_req, res) => res.end('{"id":"42"}'));
  httpServer.on('connection', () => httpConnections++);
  httpPort = await listen(httpServer);

  smtpServer = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onConnect(_session, callback) {
      smtpConnections++;
      callback();
    },
  });
  smtpPort = await listen(smtpServer.server);

  directory = mkdtempSync(join(tmpdir(), 'dry-run-no-io-'));
  mkdirSync(join(directory, 'static'));
  writeFileSync(join(directory, 'static', 'terms.txt'), 'terms');
  writeFileSync(
    join(directory, 'email-sending-configuration.xml'),
    `<email-sending-configuration><server>127.0.0.1</server><port>${smtpPort}</port></email-sending-configuration>`,
  );
  writeFileSync(
    join(directory, 'endpoints.xml'),
    `<endpoint-folder>
  <endpoint name="order">
    <parameter name="email"/>
    <success>
      <response-from-url><url>http://127.0.0.1:${httpPort}/receipt?email=\${email}</url></response-from-url>
    </success>
    <task class="HttpRequest" id="create">
      <url>http://127.0.0.1:${httpPort}/orders</url>
      <json-body>{"email": "\${email}"}</json-body>
      <output-intermediate-value name="order-id" jsonpath="$.id"/>
    </task>
    <task class="Email" id="confirm">
      <input-intermediate-value name="order-id"/>
      <from>shop@example.com</from>
      <to>\${email}</to>
      <subject>Order \${order-id}</subject>
      <body>Thanks</body>
      <attachment-static filename="terms.txt"/>
    </task>
  </endpoint>
  <endpoint name="relay">
    <parameter name="email"/>
    <success><forward-to-endpoint endpoint-name="order"/></success>
  </endpoint>
</endpoint-folder>
`,
  );
});

afterAll(async () => {
  await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  await new Promise<void>((resolve) => smtpServer.close(() => resolve()));
  rmSync(directory, { recursive: true, force: true });
});

describe('dry-run performs no I/O', () => {
  it('connects to neither the HTTP nor the SMTP server, in any format', async () => {
    const file = join(directory, 'endpoints.xml');
    const env = { ENDPOINT_SERVICE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` };
    for (const format of ['text', 'json', 'mermaid', 'dot']) {
      const simulated = await dryRun([file, '--format', format, '--param', 'email=ann@example.com'], env);
      expect(simulated.exitCode, simulated.stderr).toBe(0);
      const plain = await dryRun([file, '--format', format], env);
      expect(plain.exitCode, plain.stderr).toBe(0);
    }
    const text = await dryRun([file, '--param', 'email=ann@example.com'], env);
    // The plan did describe the traffic it did not send.
    expect(text.stdout).toContain(`POST http://127.0.0.1:${httpPort}/orders`);
    expect(text.stdout).toContain('Subject: Order <from create>');

    // A connection that was being opened as a process exited would still arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(httpConnections).toBe(0);
    expect(smtpConnections).toBe(0);
  });

  it('would notice a connection (the counters work)', async () => {
    const before = { http: httpConnections, smtp: smtpConnections };
    await fetch(`http://127.0.0.1:${httpPort}/probe`).then((r) => r.text());
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(smtpPort, '127.0.0.1');
      socket.once('data', () => {
        socket.end('QUIT\r\n');
        resolve();
      });
      socket.once('error', reject);
    });
    expect(httpConnections).toBe(before.http + 1);
    expect(smtpConnections).toBe(before.smtp + 1);
  });
});
