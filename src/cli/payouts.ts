import { existsSync, renameSync, writeFileSync } from 'node:fs';
import type { AutoPayoutSetting } from '../domain/auto-payout.js';
import { maskedAccount, type BankAccount } from '../domain/bank-account.js';
import { exponentOf, formatAmount } from '../domain/money.js';
import { PAYOUT_STATUSES, type Payout, type PayoutStatus } from '../domain/payout.js';
import { AdminError } from '../usecases/administration.js';
import {
  addBankAccount,
  batchFile,
  batchPayouts,
  movePayout,
  requestPayout,
  verifyBankAccount,
  type BankFile,
  type BankFileSettings,
} from '../usecases/payouts.js';
import { setAutoPayout } from '../usecases/auto-payouts.js';
import { required } from './args.js';
import { print } from './books.js';
import type { Command, EnvSetting } from './command.js';
import { auditCli, osUser } from './console-users.js';
import { ENVIRONMENT } from './environment.js';
import { DATABASE_FLAG, JSON_FLAG, withStore } from './shared.js';

// Bank accounts and payouts from the command line (usecases/payouts.ts): what a merchant owner and
// an operator do in the console, for scripts and for the operator's first days.

const by = () => `cli:${osUser()}`;

function accountView(a: BankAccount) {
  return {
    id: a.bank_account_id,
    wallet_id: a.wallet_id,
    currency: a.currency,
    holder: a.holder,
    // Shown whole until an operator has checked it against the merchant's proof; masked after.
    account: a.verified_at === null ? [a.bsb, a.account_number].filter(Boolean).join(' ') : maskedAccount(a),
    verified: a.verified_at !== null,
    verified_at: a.verified_at === null ? null : new Date(a.verified_at).toISOString(),
    verified_by: a.verified_by,
  };
}

function payoutView(p: Payout) {
  const e = exponentOf(p.currency);
  return {
    id: p.payout_id,
    wallet_id: p.wallet_id,
    bank_account_id: p.bank_account_id,
    currency: p.currency,
    amount: formatAmount(p.amount, e),
    fee: formatAmount(p.fee, e),
    status: p.payout_status,
    batch_id: p.batch_id,
    return_reason: p.return_reason,
    requested_at: new Date(p.requested_at).toISOString(),
    requested_by: p.requested_by,
    updated_at: new Date(p.updated_at).toISOString(),
    updated_by: p.updated_by,
  };
}

export const bankAccountAdd: Command = {
  name: 'bank-account add',
  summary: "a bank account for a wallet's payouts, in its currency (AUD: BSB and account; NZD: NZ account)",
  description:
    'An operator verifies it (gateway bank-account verify) before its first payout. A New Zealand\nnumber is checked by its bank, branch and check digits.',
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'the wallet', required: true },
    { name: 'holder', type: 'string', value: 'NAME', help: "the account's name (up to 32 characters)", required: true },
    { name: 'bsb', type: 'string', value: 'BSB', help: 'AUD: the BSB, 123-456' },
    { name: 'account-number', type: 'string', value: 'N', help: 'AUD: the account number' },
    { name: 'nz-account', type: 'string', value: 'NN-NNNN-NNNNNNN-NN[N]', help: 'NZD: the bank account number' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway bank-account add --wallet-id W00000002 --holder "Kiwi Cafe Ltd" --nz-account 01-0902-0068389-00',
    'gateway bank-account add --wallet-id W00000003 --holder "Roo Pty Ltd" --bsb 062-000 --account-number 12345678',
  ],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const a = await addBankAccount(store, {
        wallet_id: required(v, 'wallet-id'),
        holder: required(v, 'holder'),
        ...(typeof v.bsb === 'string' && { bsb: v.bsb }),
        ...(typeof v['account-number'] === 'string' && { account_number: v['account-number'] }),
        ...(typeof v['nz-account'] === 'string' && { nz_account: v['nz-account'] }),
        by: by(),
        now: Date.now(),
      });
      const shown = accountView(a);
      await auditCli(store, {
        action: 'cli.bank_account.add',
        object: a.bank_account_id,
        after: JSON.stringify(shown),
      });
      return shown;
    });
    print(v, view);
    return 0;
  },
};

export const bankAccountVerify: Command = {
  name: 'bank-account verify',
  summary: "an operator's check of a bank account against the merchant's proof: payouts may go to it",
  flags: [
    { name: 'id', type: 'string', value: 'B', help: 'the bank account', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway bank-account verify --id B0123456789'],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const a = await verifyBankAccount(store, required(v, 'id'), by(), Date.now());
      const shown = accountView(a);
      await auditCli(store, {
        action: 'cli.bank_account.verify',
        object: a.bank_account_id,
        after: JSON.stringify(shown),
      });
      return shown;
    });
    print(v, view);
    return 0;
  },
};

export const bankAccountList: Command = {
  name: 'bank-account list',
  summary: 'the bank accounts of one wallet or of all (masked once verified)',
  flags: [{ name: 'wallet-id', type: 'string', value: 'W', help: 'only this wallet' }, DATABASE_FLAG, JSON_FLAG],
  examples: ['gateway bank-account list --wallet-id W00000002'],
  async run(v) {
    const views = await withStore(v, async (store) =>
      (await store.payouts.listBankAccounts(typeof v['wallet-id'] === 'string' ? v['wallet-id'] : undefined)).map(
        accountView,
      ),
    );
    if (v.json) console.log(JSON.stringify(views, null, 2));
    else if (views.length === 0) console.log('no bank accounts');
    else
      for (const a of views)
        console.log(`${a.id} ${a.wallet_id} ${a.holder}: ${a.account}${a.verified ? '' : ' (not verified)'}`);
    return 0;
  },
};

export const payoutRequest: Command = {
  name: 'payout request',
  summary: "a payout of a wallet's available money to its verified bank account",
  description:
    "The amount and the payout fee (the wallet's fee plan for --method payout, if any) are held back\nfrom available until the payout is paid, returned or canceled. An operator approves it.",
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'the wallet', required: true },
    { name: 'amount', type: 'string', value: 'A', help: "the amount, in the wallet's currency", required: true },
    { name: 'bank-account-id', type: 'string', value: 'B', help: 'the account (the latest verified one by default)' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway payout request --wallet-id W00000002 --amount 250.00'],
  async run(v) {
    const view = await withStore(v, async (store) => {
      const p = await requestPayout(store, {
        wallet_id: required(v, 'wallet-id'),
        amount: required(v, 'amount'),
        ...(typeof v['bank-account-id'] === 'string' && { bank_account_id: v['bank-account-id'] }),
        by: by(),
        now: Date.now(),
      });
      const shown = payoutView(p);
      await auditCli(store, { action: 'cli.payout.request', object: p.payout_id, after: JSON.stringify(shown) });
      return shown;
    });
    print(v, view);
    return 0;
  },
};

function moveCommand(
  word: 'approve' | 'cancel' | 'paid' | 'returned',
  to: 'approved' | 'canceled' | 'paid' | 'returned',
  summary: string,
): Command {
  return {
    name: `payout ${word}`,
    summary,
    flags: [
      { name: 'id', type: 'string', value: 'P', help: 'the payout', required: true },
      ...(to === 'returned'
        ? [{ name: 'reason', type: 'string' as const, value: 'TEXT', help: 'why the bank returned it', required: true }]
        : []),
      DATABASE_FLAG,
      JSON_FLAG,
    ],
    examples: [`gateway payout ${word} --id P0123456789${to === 'returned' ? ' --reason "account closed"' : ''}`],
    async run(v) {
      const view = await withStore(v, async (store) => {
        const p = await movePayout(
          store,
          required(v, 'id'),
          to,
          by(),
          Date.now(),
          typeof v.reason === 'string' ? v.reason : undefined,
        );
        const shown = payoutView(p);
        await auditCli(store, { action: `cli.payout.${to}`, object: p.payout_id, after: JSON.stringify(shown) });
        return shown;
      });
      print(v, view);
      return 0;
    },
  };
}

export const payoutApprove = moveCommand('approve', 'approved', "an operator's approval of a requested payout");
export const payoutCancel = moveCommand(
  'cancel',
  'canceled',
  'cancels a payout before its bank file: back to available',
);
export const payoutPaid = moveCommand('paid', 'paid', 'the bank paid the payout');
export const payoutReturned = moveCommand(
  'returned',
  'returned',
  'the bank returned the payout: its amount and fee back to available',
);

/** The bank files' settings, as `gateway serve --help` lists them. */
const FILE_ENV: EnvSetting[] = ENVIRONMENT.filter((e) => e.name.startsWith('PAYOUT_'));

/** The bank files' settings from the environment. */
export function bankFileSettings(env: NodeJS.ProcessEnv = process.env): BankFileSettings {
  return {
    aba: {
      user_id: env.PAYOUT_ABA_USER_ID,
      bank: env.PAYOUT_ABA_BANK,
      user_name: env.PAYOUT_ABA_USER_NAME,
      remitter: env.PAYOUT_ABA_REMITTER,
      trace_bsb: env.PAYOUT_ABA_TRACE_BSB,
      trace_account: env.PAYOUT_ABA_TRACE_ACCOUNT,
      self_balance: env.PAYOUT_ABA_SELF_BALANCE === 'true',
    },
    nz: { account: env.PAYOUT_NZ_ACCOUNT, name: env.PAYOUT_NZ_NAME },
  };
}

/** Writes the file whole or not at all (a partial bank file must never be uploaded). */
function writeBankFile(out: string, content: string): void {
  const tmp = `${out}.partial`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, out);
}

function fileView(f: BankFile, out: string) {
  const e = exponentOf(f.batch.currency);
  return {
    batch_id: f.batch.batch_id,
    currency: f.batch.currency,
    format: f.format,
    payouts: f.batch.payout_count,
    total: formatAmount(f.batch.total, e),
    file: out,
  };
}

export const payoutBatch: Command = {
  name: 'payout batch',
  summary: 'every approved payout of a currency into a batch and its bank file (AUD: ABA; NZD: Kiwibank/BNZ IB4B CSV)',
  description:
    "The payouts move to in_batch (their money leaves the wallets' reserved balance, in transit).\nUpload the file to the bank, then mark each payout paid or returned. `gateway payout file` writes\na batch's file again.",
  flags: [
    { name: 'currency', type: 'string', value: 'AUD|NZD', help: 'the currency', required: true },
    {
      name: 'out',
      type: 'string',
      value: 'FILE',
      help: 'where to write the bank file (must not exist)',
      required: true,
    },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  environment: FILE_ENV,
  examples: ['gateway payout batch --currency AUD --out payouts-2026-11-30.aba'],
  async run(v) {
    const out = required(v, 'out');
    if (existsSync(out)) throw new AdminError(`${out} exists: name a new file`);
    const view = await withStore(v, async (store) => {
      const f = await batchPayouts(store, {
        currency: required(v, 'currency'),
        settings: bankFileSettings(),
        by: by(),
        now: Date.now(),
      });
      if (!f) return undefined;
      writeBankFile(out, f.content);
      const shown = fileView(f, out);
      await auditCli(store, { action: 'cli.payout.batch', object: f.batch.batch_id, after: JSON.stringify(shown) });
      return shown;
    });
    if (!view) {
      console.log(v.json ? JSON.stringify({ payouts: 0 }) : 'no approved payouts in that currency: no file written');
      return 0;
    }
    print(v, view);
    return 0;
  },
};

export const payoutFile: Command = {
  name: 'payout file',
  summary: "a batch's bank file, written again",
  flags: [
    { name: 'batch-id', type: 'string', value: 'PB', help: 'the batch', required: true },
    { name: 'out', type: 'string', value: 'FILE', help: 'where to write it (must not exist)', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  environment: FILE_ENV,
  examples: ['gateway payout file --batch-id PB0123456789 --out again.aba'],
  async run(v) {
    const out = required(v, 'out');
    if (existsSync(out)) throw new AdminError(`${out} exists: name a new file`);
    const view = await withStore(v, async (store) => {
      const f = await batchFile(store, required(v, 'batch-id'), bankFileSettings());
      writeBankFile(out, f.content);
      return fileView(f, out);
    });
    print(v, view);
    return 0;
  },
};

function autoView(
  wallet_id: string,
  currency: string,
  s: AutoPayoutSetting | undefined,
): Record<string, string | boolean> {
  const e = exponentOf(currency);
  return s
    ? {
        wallet_id,
        currency,
        auto_payout: true,
        above: formatAmount(s.above, e),
        keep: formatAmount(s.keep, e),
        updated_at: new Date(s.updated_at).toISOString(),
        updated_by: s.updated_by,
      }
    : { wallet_id, currency, auto_payout: false };
}

export const payoutAuto: Command = {
  name: 'payout auto',
  summary: "a wallet's automatic payout: once a day, when available is above a threshold (off by default)",
  description:
    "Once a day (UTC) the settlement job requests a payout of what is available above --keep (the\npayout's fee included), when available is more than --above, to the wallet's latest verified bank\naccount; an operator approves it as any other. --above off turns it off; without --above, prints\nthe setting.",
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'the wallet', required: true },
    {
      name: 'above',
      type: 'string',
      value: 'A|off',
      help: "the threshold, in the wallet's currency; off: no automatic payout",
    },
    { name: 'keep', type: 'string', value: 'K', help: 'what stays available after it (0 by default; at most --above)' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: [
    'gateway payout auto --wallet-id W00000002 --above 1000.00',
    'gateway payout auto --wallet-id W00000002 --above 1000.00 --keep 200.00',
    'gateway payout auto --wallet-id W00000002 --above off',
  ],
  async run(v) {
    const wallet_id = required(v, 'wallet-id');
    const above = typeof v.above === 'string' ? v.above : undefined;
    if (above === undefined && typeof v.keep === 'string') throw new AdminError('--keep goes with --above');
    const view = await withStore(v, async (store) => {
      const wallet = await store.accounts.findWallet(wallet_id);
      if (!wallet) throw new AdminError(`no wallet ${wallet_id}`);
      if (above === undefined)
        return autoView(wallet.wallet_id, wallet.currency, await store.payouts.autoPayout(wallet.wallet_id));
      const set = await setAutoPayout(store, {
        wallet_id,
        above,
        ...(typeof v.keep === 'string' && { keep: v.keep }),
        by: by(),
        now: Date.now(),
      });
      const shown = autoView(wallet.wallet_id, wallet.currency, set);
      await auditCli(store, { action: 'cli.payout.auto', object: wallet.wallet_id, after: JSON.stringify(shown) });
      return shown;
    });
    print(v, view);
    return 0;
  },
};

export const payoutList: Command = {
  name: 'payout list',
  summary: 'payouts, newest first, of one wallet or all, in one state or all',
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'only this wallet' },
    { name: 'status', type: 'string', value: PAYOUT_STATUSES.join('|'), help: 'only payouts in this state' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway payout list --status approved', 'gateway payout list --wallet-id W00000002 --json'],
  async run(v) {
    const status = typeof v.status === 'string' ? v.status : undefined;
    if (status !== undefined && !(PAYOUT_STATUSES as readonly string[]).includes(status))
      throw new AdminError(`--status must be one of ${PAYOUT_STATUSES.join(', ')}`);
    const views = await withStore(v, async (store) =>
      (
        await store.payouts.list({
          ...(typeof v['wallet-id'] === 'string' && { wallet_id: v['wallet-id'] }),
          ...(status !== undefined && { status: status as PayoutStatus }),
        })
      ).map(payoutView),
    );
    if (v.json) console.log(JSON.stringify(views, null, 2));
    else if (views.length === 0) console.log('no payouts');
    else
      for (const p of views) console.log(`${p.id} ${p.wallet_id} ${p.amount} ${p.currency} (fee ${p.fee}) ${p.status}`);
    return 0;
  },
};
