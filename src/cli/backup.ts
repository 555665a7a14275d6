import { backupSqlite, BackupError } from '../store/sqlite/backup.js';
import { isPostgresUrl } from '../store/open.js';
import { UsageError, databaseOf, required } from './args.js';
import type { Command } from './command.js';
import { DATABASE_FLAG, JSON_FLAG } from './shared.js';

/** `gateway backup --to FILE`: exit 0 with where and how big, 2 when it cannot be done. */
export const backup: Command = {
  name: 'backup',
  summary: 'an online, consistent copy of the SQLite database while the gateway serves it',
  description:
    "SQLite only: back PostgreSQL up with pg_dump or your provider's snapshots (docs/operators.md, Backups).\nThe copy is checked before it is put in place; the target must not exist.",
  flags: [
    { name: 'to', type: 'string', value: 'FILE', help: 'where the copy is written', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway backup --database ./data/gateway.db --to /backups/gateway-$(date +%F).db'],
  async run(v) {
    const database = databaseOf(v);
    const to = required(v, 'to');
    if (isPostgresUrl(database))
      throw new UsageError(
        "backup copies a SQLite database; back PostgreSQL up with pg_dump or your provider's snapshots (docs/operators.md: Backups)",
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
  },
};
