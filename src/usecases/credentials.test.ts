import { describe, expect, it } from 'vitest';
import { CredentialCache } from './credentials.js';
import type { User, UserStatus } from '../domain/account.js';
import type { AccountsRepo } from '../ports/accounts.js';

function fakeStore() {
  const state: { version: string; reads: number; status: UserStatus } = { version: 'v1', reads: 0, status: 'active' };
  const store = {
    get version() {
      return state.version;
    },
    async findUser(user_id: string): Promise<User | undefined> {
      state.reads++;
      if (user_id === 'missing') return undefined;
      return { user_id, user_name: 'u', user_status: state.status, organisation_id: 1, organisation_name: 'o' };
    },
    async findRate() {
      state.reads++;
      return undefined;
    },
  } as unknown as AccountsRepo;
  return { store, state };
}

describe('CredentialCache', () => {
  it('reuses a value within the TTL and reads again after it', async () => {
    const { store, state } = fakeStore();
    let now = 1000;
    const cache = new CredentialCache(store, 500, () => now);
    await cache.user('U1');
    await cache.user('U1');
    expect(state.reads).toBe(1);
    now += 501;
    await cache.user('U1');
    expect(state.reads).toBe(2);
  });

  it('forgets everything when the store says credentials changed', async () => {
    const { store, state } = fakeStore();
    const cache = new CredentialCache(store, 60_000, () => 0);
    expect((await cache.user('U1'))?.user_status).toBe('active');
    state.status = 'disabled';
    expect((await cache.user('U1'))?.user_status).toBe('active');
    state.version = 'v2';
    expect((await cache.user('U1'))?.user_status).toBe('disabled');
  });

  it('reads fresh on demand and never caches an unknown user', async () => {
    const { store, state } = fakeStore();
    const cache = new CredentialCache(store, 60_000, () => 0);
    await cache.user('missing');
    await cache.user('missing');
    expect(state.reads).toBe(2);
    await cache.user('U1');
    await cache.user('U1', true);
    expect(state.reads).toBe(4);
  });

  it('caches a missing rate, and caches nothing with a TTL of 0', async () => {
    const { store, state } = fakeStore();
    const cache = new CredentialCache(store, 60_000, () => 0);
    await cache.rate('AUD', 'CNY');
    await cache.rate('AUD', 'CNY');
    expect(state.reads).toBe(1);
    const off = new CredentialCache(store, 0, () => 0);
    await off.user('U1');
    await off.user('U1');
    expect(state.reads).toBe(3);
  });
});
