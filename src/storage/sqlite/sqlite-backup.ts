import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { BackupOutcome } from '../../domain/ports.js';
import { OWNER_ONLY_FILE } from './sqlite-connection.js';

/**
 * Pages to copy per step of the backup: all of them. SQLite restarts a backup from the first page
 * when another connection (a server) writes between two steps, so a copy made in small steps
 * might never finish while the service takes writes; one step copies one snapshot (a WAL read
 * transaction, which never blocks writers) and always finishes.
 */
const ALL_PAGES = 0x7fffffff;

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** Creates `path` readable by its owner only; false when it exists already. */
function createExclusive(path: string): boolean {
  try {
    closeSync(openSync(path, 'wx', OWNER_ONLY_FILE));
    return true;
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
}

function fsyncPath(path: string, flags: 'r' | 'r+'): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    const [x, y] = [statSync(a), statSync(b)];
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/** Whether `target` names the database or one of its companion files, by name or by inode. */
function isSource(raw: BetterSqlite3.Database, target: string): boolean {
  const source = resolve(raw.name);
  return (
    ['', '-wal', '-shm', '-journal'].some((suffix) => target === source + suffix) ||
    sameFile(target, source)
  );
}

/**
 * Copies the database behind `raw` to `destination` with SQLite's online backup API. The copy is
 * written to a temporary file beside the destination (created 0600; SQLite gives the journal it
 * uses the same mode), flushed to disk, then renamed into place: a reader never finds half a
 * copy, and with `overwrite` the previous copy stays whole until the new one is complete.
 */
export async function backupSqlite(
  raw: BetterSqlite3.Database,
  destination: string,
  options: { overwrite: boolean },
): Promise<BackupOutcome> {
  const target = resolve(destination);
  if (isSource(raw, target)) return { kind: 'is_source' };
  // Without overwrite the name is reserved first, atomically, so two backups never race for it.
  const reserved = !options.overwrite;
  if (reserved && !createExclusive(target)) return { kind: 'exists' };

  const temporary = join(
    dirname(target),
    `.${basename(target)}.partial-${randomBytes(6).toString('hex')}`,
  );
  let pages: number;
  try {
    if (!createExclusive(temporary)) throw new Error(`${temporary} exists`);
    ({ totalPages: pages } = await raw.backup(temporary, { progress: () => ALL_PAGES }));
    fsyncPath(temporary, 'r+');
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    rmSync(`${temporary}-journal`, { force: true });
    if (reserved) rmSync(target, { force: true });
    throw error;
  }
  try {
    // The rename itself on disk; a file system that cannot sync a folder still has the copy.
    fsyncPath(dirname(target), 'r');
  } catch {
    // Nothing to undo: the copy is complete under its name.
  }
  const pageSize = Number(raw.pragma('page_size', { simple: true }));
  return { kind: 'copied', pages, pageSize, bytes: statSync(target).size };
}
