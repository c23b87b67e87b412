// --otel, shared by serve and worker so that both read the same option and the same OTEL_*
// variables the same way: a worker continues the traces that serve's requests began, and an
// operator's environment should turn both on, or both off, at once.

import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Logger } from '../server/log.js';
import type { Tracing } from '../tracing.js';

export function addOtelOption(command: Command): Command {
  return command.option(
    '--otel',
    'export OpenTelemetry traces over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318 (on by itself when that variable is set)',
  );
}

/**
 * --otel; without it, an OTLP endpoint in the environment (as an operator's platform sets it),
 * unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, the standard ways to say no. The
 * command line wins over the environment, as for --port and --smtp-url.
 */
export function tracingWanted(flag: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  if (flag) return true;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  const set = (name: string) => (env[name] ?? '').trim() !== '';
  return set('OTEL_EXPORTER_OTLP_ENDPOINT') || set('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
}

/** The SDK-backed Tracing, or undefined when tracing is off: the SDK is imported only in the first case. */
export async function startTracingIfWanted(wanted: boolean, logger: Logger): Promise<Tracing | undefined> {
  if (!wanted) return undefined;
  const { startTracing } = await import('../server/otel.js');
  return startTracing({ serviceVersion: packageVersion(), warn: (message) => logger.log('warn', message) });
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
