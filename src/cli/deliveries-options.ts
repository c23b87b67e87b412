// The delivery log's options: where the store is (serve, worker, and every `deliveries`
// command) and, for serve, what it keeps and for how long (docs/deliveries.md).
import { Option, type Command } from 'commander';
import { DEFAULT_NAMESPACE, DEFAULT_STATE_DIR, deliveryLocation, type DeliverySettings, type DeliveryStoreLocation } from '../deliveries/settings.js';
import { InvalidArgumentError } from 'commander';
import { age, portNumber, positiveNumber, size, type Usage } from './option-parsers.js';

export const DEFAULT_DELIVERIES_MAX_BODY = '1MiB';
export const DEFAULT_DELIVERIES_RETENTION = '7d';
export const DEFAULT_DELIVERIES_MAX = 100_000;

export interface DeliveryStoreFlags {
  deliveries?: string;
  stateDir: string;
  deliveriesNamespace: string;
}

export interface DeliveryRecordingFlags extends DeliveryStoreFlags {
  deliveriesMaxBody: number;
  deliveriesRetention: number;
  deliveriesMax: number;
}

export function addDeliveryStoreOptions(command: Command, what: string): Command {
  return command
    .option(
      '--deliveries <url>',
      `${what}: none, redis://…, rediss://… or postgres://… (default: $ENDPOINT_SERVICE_DELIVERIES_URL, else the --queue store, else SQLite in --state-dir)`,
    )
    .addOption(
      new Option('--state-dir <folder>', 'the folder of the embedded delivery log (deliveries.db) and its key')
        .env('ENDPOINT_SERVICE_STATE_DIR')
        .default(DEFAULT_STATE_DIR),
    )
    .addOption(
      new Option('--deliveries-namespace <name>', 'keeps apart deployments that share one Redis or PostgreSQL for their delivery logs')
        .env('ENDPOINT_SERVICE_DELIVERIES_NAMESPACE')
        .default(DEFAULT_NAMESPACE),
    );
}

export function addDeliveryRecordingOptions(command: Command): Command {
  return addDeliveryStoreOptions(command, 'where the delivery log is kept')
    .addOption(
      new Option('--deliveries-max-body <size>', 'a request larger than this is recorded without its headers and body (so it cannot be replayed)')
        .argParser(size)
        .default(size(DEFAULT_DELIVERIES_MAX_BODY), DEFAULT_DELIVERIES_MAX_BODY),
    )
    .addOption(
      new Option('--deliveries-retention <age>', 'how long deliveries are kept, such as 7d or 36h')
        .argParser(age)
        .default(age(DEFAULT_DELIVERIES_RETENTION), DEFAULT_DELIVERIES_RETENTION),
    )
    .addOption(
      new Option('--deliveries-max <n>', 'at most this many deliveries are kept, the oldest removed first')
        .argParser(positiveNumber)
        .default(DEFAULT_DELIVERIES_MAX),
    );
}

export interface AdminFlags {
  adminPort: number | 'none';
  adminHost: string;
}

/** serve's admin listener, where the deliveries page is (docs/deliveries.md, "The page"). */
export function addAdminOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--admin-port <n>', 'port of the deliveries page, never the public one: 0 for any free port, none for no page')
        .argParser((text: string) => {
          if (text === 'none') return 'none';
          try {
            return portNumber(text);
          } catch {
            throw new InvalidArgumentError('expected a port number, 0 for any free port, or none.');
          }
        })
        .default(0, 'any free port, logged after the ready line'),
    )
    .option('--admin-host <address>', 'address of the deliveries page', '127.0.0.1');
}

/** The store the flags name; null with --deliveries none. `queueUrl`: serve's or worker's --queue. */
export function resolveDeliveryStore(flags: DeliveryStoreFlags, queueUrl: string | null, usage: Usage): DeliveryStoreLocation | null {
  const fromEnv = process.env.ENDPOINT_SERVICE_DELIVERIES_URL;
  const given = flags.deliveries ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined);
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(flags.deliveriesNamespace)) usage('--deliveries-namespace takes 1 to 40 letters, digits, "-" or "_"');
  const location = deliveryLocation(given, flags.stateDir, queueUrl, flags.deliveriesNamespace);
  if (location !== null && 'problem' in location) return usage(location.problem);
  return location;
}

export function resolveDeliverySettings(flags: DeliveryRecordingFlags, queueUrl: string | null, usage: Usage): DeliverySettings | null {
  const store = resolveDeliveryStore(flags, queueUrl, usage);
  if (store === null) return null;
  return { store, maxBodyBytes: flags.deliveriesMaxBody, retentionMs: flags.deliveriesRetention, maxRecords: flags.deliveriesMax };
}
