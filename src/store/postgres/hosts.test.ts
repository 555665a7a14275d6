import { describe, expect, it } from 'vitest';
import { splitPostgresHosts } from './hosts.js';

describe('DATABASE_URL with several hosts', () => {
  it('gives one URL per host, everything else kept, target_session_attrs taken out', () => {
    const h = splitPostgresHosts(
      'postgres://gw:s%40cret@db1:5432,db2:5433,db3/payments?sslmode=require&target_session_attrs=read-write',
    );
    expect(h.urls).toEqual([
      'postgres://gw:s%40cret@db1:5432/payments?sslmode=require',
      'postgres://gw:s%40cret@db2:5433/payments?sslmode=require',
      'postgres://gw:s%40cret@db3/payments?sslmode=require',
    ]);
    expect(h.labels).toEqual(['db1:5432', 'db2:5433', 'db3:5432']);
  });

  it('leaves a one-host URL exactly as it was', () => {
    const url = 'postgresql://u@127.0.0.1:6543/gw?options=-c%20search_path%3Dx';
    expect(splitPostgresHosts(url)).toEqual({ urls: [url], labels: ['127.0.0.1:6543'] });
  });

  it('refuses a target_session_attrs that would send writes to a standby, and an empty host', () => {
    expect(() => splitPostgresHosts('postgres://u@h1,h2/db?target_session_attrs=standby')).toThrow(
      /target_session_attrs=standby cannot be used/,
    );
    expect(() => splitPostgresHosts('postgres://u@h1,,h2/db')).toThrow(/empty host/);
    expect(splitPostgresHosts('postgres://u@h1,h2/db?target_session_attrs=primary').urls).toEqual([
      'postgres://u@h1/db',
      'postgres://u@h2/db',
    ]);
  });
});
