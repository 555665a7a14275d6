import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

// An online copy of a live SQLite database through SQLite's backup API, from a connection of its
// own (read-only), so it runs beside a serving gateway without stopping it. The copy is a
// consistent snapshot: after the first step the rest is copied in one step, inside one read
// transaction, which in WAL mode never blocks the gateway's writes (a write by the gateway between
// steps restarts the copy, and that one step then takes it all). It is written beside the target,
// checked, and only then renamed into place, so a file at the target is always a whole backup.

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  ms: number;
}

export class BackupError extends Error {}

export async function backupSqlite(
  source: string,
  target: string,
  now: () => number = Date.now,
): Promise<BackupResult> {
  if (!existsSync(source)) throw new BackupError(`no database at ${source}`);
  if (existsSync(target)) throw new BackupError(`${target} exists: choose a new file (a backup never overwrites one)`);
  const started = now();
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const db = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  let pages = 0;
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(partial, {
      progress: ({ totalPages }) => {
        pages = totalPages;
        return Math.max(totalPages, 1);
      },
    });
  } catch (e) {
    rmSync(partial, { force: true });
    throw new BackupError(`the backup of ${source} failed: ${(e as Error).message}`);
  } finally {
    db.close();
  }
  const check = new BetterSqlite3(partial, { fileMustExist: true });
  try {
    const result = check.pragma('quick_check', { simple: true });
    if (result !== 'ok')
      throw new BackupError(`the copy failed its check (${String(result)}); nothing was written at ${target}`);
    // One file that needs nothing beside it: the copy's journal back to a rollback journal.
    check.pragma('journal_mode = DELETE');
  } catch (e) {
    check.close();
    rmSync(partial, { force: true });
    throw e;
  }
  check.close();
  renameSync(partial, target);
  return { file: target, bytes: statSync(target).size, pages, ms: now() - started };
}
