// Temporary files for uploads (docs/behaviour.md, "Request bodies and uploads"): one private
// folder per process, made with mkdtemp (mode 0700) in --upload-dir or the system's temporary
// folder, files inside it created with mode 0600 under names the service picks, never the
// client's. A file is removed when the last holder of its request's uploads lets go (upload.ts),
// the folder when the process exits; folders that a process killed without a chance to clean up
// (SIGKILL, the OOM killer) left behind are removed by the next process that starts with the
// same folder.

import { mkdtempSync, readdirSync, readFileSync, rmSync, lstatSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Folders are named PREFIX + pid + '-' + the process's start time + '-' + mkdtemp's random tail. */
const PREFIX = 'endpoint-service-uploads-';
const NAME = /^endpoint-service-uploads-(\d+)-(\d+)-[A-Za-z0-9]+$/;
/** The folders of this process (one per spool; tests open several). */
const OWN = new Set<string>();

export class UploadSpool {
  private nextFile = 0;
  private files = 0;
  private closed = false;

  private constructor(
    /** This process's own folder. */
    readonly dir: string,
    /** Leftover folders of ended processes removed when this one started. */
    readonly sweptLeftovers: number,
  ) {}

  /**
   * Removes what ended processes left in `base` (default: the system's temporary folder) and
   * makes this process's folder there. Synchronous: it runs once, before the process listens.
   */
  static open(base: string | null): UploadSpool {
    const parent = base ?? tmpdir();
    const swept = sweepLeftovers(parent);
    const dir = mkdtempSync(path.join(parent, `${PREFIX}${process.pid}-${startTime(process.pid) ?? 0}-`));
    OWN.add(dir);
    return new UploadSpool(dir, swept);
  }

  /** Temporary files that exist now. */
  get fileCount(): number {
    return this.files;
  }

  /** A new file's path in this process's folder; the caller creates it (flag 'wx', mode 0600). */
  newFile(): string {
    this.files++;
    return path.join(this.dir, String(this.nextFile++));
  }

  /** Removes files made with newFile (created or not: a failed create leaves nothing to remove). */
  remove(paths: readonly string[]): void {
    for (const file of paths) {
      rm(file, { force: true })
        .catch(() => {
          // The folder goes when the process exits; a file that cannot be removed now goes with it.
        })
        .finally(() => this.files--);
    }
  }

  /** Removes the folder and everything in it; for the end of the process (synchronous, so an 'exit' handler can call it). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    OWN.delete(this.dir);
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // Nothing more can be done at exit; the next start removes it.
    }
  }
}

/**
 * Removes the folders of processes that no longer run: a folder whose process id is not alive,
 * or is alive but started at another time (the id was reused). Only folders of this user are
 * touched, never followed through a symbolic link.
 */
function sweepLeftovers(parent: string): number {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return 0;
  }
  let swept = 0;
  const uid = process.getuid?.();
  for (const name of names) {
    const match = NAME.exec(name);
    if (match === null || OWN.has(path.join(parent, name))) continue;
    const pid = Number(match[1]);
    const started = Number(match[2]);
    if (processRuns(pid, started)) continue;
    const full = path.join(parent, name);
    try {
      const stat = lstatSync(full);
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
      rmSync(full, { recursive: true, force: true });
      swept++;
    } catch {
      // Another process removed it first, or it is not ours to remove.
    }
  }
  return swept;
}

function processRuns(pid: number, started: number): boolean {
  // Not one of this process's own folders (see OWN), so one with our id is left from an earlier process.
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const now = startTime(pid);
  return now === null || started === 0 || now === started;
}

/** When the process started, in clock ticks since boot (Linux /proc); null where unknown. */
function startTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22, counted after the command name, which may itself hold spaces and parentheses.
    const value = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(value) ? value : null;
  } catch {
    return null;
  }
}
