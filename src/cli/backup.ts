import { backupSqlite, BackupError } from '../store/sqlite/backup.js';
import { isPostgresUrl } from '../store/open.js';
import { DATABASE_OPTION, UsageError, databaseOf, parse, required } from './args.js';

/** `gateway backup --to FILE`: exit 0 with where and how big, 2 when it cannot be done. */
export async function backupCommand(args: string[]): Promise<number> {
  const v = parse(args, { ...DATABASE_OPTION, to: { type: 'string' }, json: { type: 'boolean' } });
  const database = databaseOf(v);
  const to = required(v, 'to');
  if (isPostgresUrl(database))
    throw new UsageError(
      "backup copies a SQLite database; back PostgreSQL up with pg_dump or your provider's snapshots (README: Backups)",
    );
  try {
    const r = await backupSqlite(database, to);
    if (v.json) console.log(JSON.stringify(r, null, 2));
    else console.log(`backup of ${database} written to ${r.file}: ${r.bytes} bytes, ${r.pages} pages, ${r.ms} ms`);
    return 0;
  } catch (e) {
    if (e instanceof BackupError) {
      console.error(`gateway backup: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
