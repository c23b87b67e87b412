// A secret written into the file is never quoted back by validate: the source line it prints
// under secret-in-file and invalid-signing-secret shows the value as *** (CI logs keep reports).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { validate } from '../../src/cli/validate.js';
import { maskAttributeValue } from '../../src/cli/formatters/text.js';
import { collectingIo } from '../helpers/command-io.js';
import { removeDir, tempApp } from './helpers.js';

const FILE = `<endpoint-folder>
  <endpoint name="hook">
    <signature scheme="github" secret="gh-literal-s3cret"/>
    <handshake scheme="meta" verify-token='meta-literal-t0ken'/>
    <captcha provider="altcha" hmac-key="altcha-literal-k3y"/>
    <success/>
    <task class="HttpRequest">
      <url>https://example.org/hook</url>
      <sign scheme="standard" secret="relay-literal-n0t-whsec"/>
    </task>
  </endpoint>
</endpoint-folder>
`;

let dir: string;
beforeAll(() => {
  dir = tempApp({ 'endpoints.xml': FILE });
});
afterAll(() => removeDir(dir));

describe('a literal secret in the source excerpt', () => {
  it('is masked in the text report, and the diagnostics are still reported there', async () => {
    const io = collectingIo({});
    await validate([path.join(dir, 'endpoints.xml')], { format: 'text' }, io);
    const report = io.out() + io.err();
    expect(report).toContain('secret-in-file');
    expect(report).toContain('invalid-signing-secret');
    for (const secret of ['gh-literal-s3cret', 'meta-literal-t0ken', 'altcha-literal-k3y', 'relay-literal-n0t-whsec']) expect(report).not.toContain(secret);
    expect(report).toContain('<signature scheme="github" secret="***"/>');
    expect(report).toContain(`<handshake scheme="meta" verify-token='***'/>`);
  });

  it('is masked in every report format', async () => {
    for (const format of ['json', 'github'] as const) {
      const io = collectingIo({});
      await validate([path.join(dir, 'endpoints.xml')], { format }, io);
      expect(io.out() + io.err()).not.toMatch(/literal/);
    }
  });

  it('masks the value of the attribute at the column, to the line end when it goes on', () => {
    expect(maskAttributeValue('  <x secret="abc" other="d"/>', 6)).toBe('  <x secret="***" other="d"/>');
    expect(maskAttributeValue('  <x secret = "abc', 6)).toBe('  <x secret = "***');
    expect(maskAttributeValue('  <x/>', 3)).toBe('  <x/>');
  });
});
