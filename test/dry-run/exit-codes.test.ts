// dry-run's exit codes and where it writes, in the test's process (the *.e2e files beside this
// one check the same through the built binary): 0 a plan, 1 an invalid configuration or a
// simulated request that fails, 2 a usage error or a file that cannot be read.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRun, type DryRunOptions } from '../../src/cli/dry-run.js';
import { collectingIo } from '../helpers/command-io.js';
import { INVALID, SECRETS, SHOP } from './run.js';

const options = (given: Partial<DryRunOptions> = {}): DryRunOptions => ({
  endpoint: [],
  param: undefined,
  format: 'json',
  body: undefined,
  contentType: undefined,
  header: undefined,
  ...given,
});

describe('dry-run in process', () => {
  it('0 for a plan: the plan on stdout, nothing on stderr when the secrets are set', () => {
    const io = collectingIo({ ...SECRETS });
    expect(dryRun(SHOP, options(), io)).toBe(0);
    expect((JSON.parse(io.out()) as { endpoints: { name: string }[] }).endpoints.map((e) => e.name)).toContain('signup');
    expect(io.err()).toBe('');
  });

  it('reads ${env:…} from the environment it is given: unset secrets are warned about on stderr', () => {
    const io = collectingIo({});
    expect(dryRun(SHOP, options(), io)).toBe(0);
    expect(io.err()).toContain('CRM_KEY');
  });

  it('1 for an invalid configuration, its diagnostics on stderr and nothing on stdout', () => {
    const io = collectingIo();
    expect(dryRun(INVALID, options(), io)).toBe(1);
    expect(io.out()).toBe('');
    expect(io.err()).toContain('2 errors, 0 warnings');
  });

  it('1 for a simulated request that fails, with the plan still printed', () => {
    const io = collectingIo({ ...SECRETS });
    expect(dryRun(SHOP, options({ endpoint: ['signup'], param: [['newsletter', 'yes']] }), io)).toBe(1);
    expect(io.err()).toContain('missing required parameter "email"');
    expect(JSON.parse(io.out())).toMatchObject({ endpoints: [{ name: 'signup', response: { status: 400 } }] });
  });

  it('2 for an unknown endpoint, with a did-you-mean', () => {
    const io = collectingIo({ ...SECRETS });
    expect(dryRun(SHOP, options({ endpoint: ['sigup'] }), io)).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toContain('Did you mean "signup"?');
  });

  it('2 for --content-type without --body', () => {
    const io = collectingIo({ ...SECRETS });
    expect(dryRun(SHOP, options({ contentType: 'application/json' }), io)).toBe(2);
    expect(io.err()).toContain('--content-type describes the --body file');
  });

  it('2 for a file that cannot be read', () => {
    const io = collectingIo();
    expect(dryRun(path.join(path.dirname(SHOP), '..', 'no-such-app', 'endpoints.xml'), options(), io)).toBe(2);
    expect(io.out()).toBe('');
    expect(io.err()).toContain('no-such-app');
  });
});
