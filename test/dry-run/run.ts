// Runs the real binary's dry-run command; tests read its exit code, stdout and stderr.
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/endpoint-service.js', import.meta.url));
export const SHOP = fileURLToPath(new URL('../../fixtures/dry-run/shop/endpoints.xml', import.meta.url));
export const INVALID = fileURLToPath(new URL('../../fixtures/dry-run/invalid/endpoints.xml', import.meta.url));

export interface Run {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function dryRun(args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<Run> {
  const result = await execa('node', [BIN, 'dry-run', ...args], {
    ...(cwd !== undefined ? { cwd } : {}),
    reject: false,
    stripFinalNewline: false,
    // A clean environment: secrets the fixture reads are set per test.
    env: { PATH: process.env.PATH ?? '', ...env },
    extendEnv: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

export const SECRETS = { CRM_KEY: 'key-5f1e2d', CRM_PASSWORD: 'pw-9a8b7c' } as const;

export async function dryRunJson(args: readonly string[], env: Record<string, string> = { ...SECRETS }): Promise<{ run: Run; doc: PlanJson }> {
  const run = await dryRun([...args, '--format', 'json'], env);
  return { run, doc: JSON.parse(run.stdout) as PlanJson };
}

export interface PlanJson {
  endpoints: {
    name: string;
    response: { kind: string; status: number | null };
    tasks: {
      id: string;
      kind: string;
      line: number;
      dependsOn: string[];
      inputs: string[];
      outputs: string[];
      condition: string | null;
      ignoreIfError: boolean;
      willRun: boolean | null;
      request?: { method: string; url: string; headers: Record<string, string>; body: string | null };
      emails?: { from: string; to: string[]; subject: string; attachments: string[] }[];
    }[];
    stages: string[][];
  }[];
}
