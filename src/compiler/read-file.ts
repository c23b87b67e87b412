// Reading a configuration file (endpoints.xml, security.xml, email-sending-configuration.xml):
// the one place every command (validate, dry-run, serve, worker, --watch reloads) reads them.
//
// Only a regular file of at most MAX_CONFIGURATION_FILE_BYTES is read. readFileSync would read
// /dev/zero until memory ran out (6 GB before Node gave up) and block for ever opening a named
// pipe nobody writes to; the largest application measured (10,000 endpoints) is 19 MB.

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { formatSize } from '../units.js';

export const MAX_CONFIGURATION_FILE_BYTES = 64 * 1024 * 1024;

export type FileRead = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly reason: string };

export function readConfigurationFile(file: string): FileRead {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, reason: readFailure(error) };
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) return { ok: false, reason: readFailure({ code: 'EISDIR' }) };
    if (!stats.isFile()) return { ok: false, reason: `it is ${kindOf(stats)}, not a regular file` };
    if (stats.size > MAX_CONFIGURATION_FILE_BYTES) return { ok: false, reason: tooLarge(stats.size) };
    // Read to the end, but never more than the limit: the file may grow while it is read. One
    // byte of room beyond its size, so the end is seen without growing the buffer.
    let buffer = Buffer.allocUnsafe(Math.min(Math.max(stats.size + 1, 64 * 1024), MAX_CONFIGURATION_FILE_BYTES + 1));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > MAX_CONFIGURATION_FILE_BYTES) return { ok: false, reason: tooLarge(null) };
        const larger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_CONFIGURATION_FILE_BYTES + 1));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_CONFIGURATION_FILE_BYTES) return { ok: false, reason: tooLarge(null) };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, reason: readFailure(error) };
  } finally {
    closeSync(fd);
  }
}

/** `size`: as the file system gave it; null for a file that grew beyond the limit while it was read. */
function tooLarge(size: number | null): string {
  const limit = formatSize(MAX_CONFIGURATION_FILE_BYTES);
  const shown = size === null ? `larger than ${limit}` : `${(size / 1024 ** 2).toFixed(1)} MiB`;
  return `it is ${shown}; a configuration file may hold at most ${limit}`;
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** Why a file could not be read, in words rather than Node's "EISDIR: illegal operation...". */
function readFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a directory: give the path of the endpoints.xml inside it';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return (error as Error).message;
}
