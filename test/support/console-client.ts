// A browser-like client of the console for black-box tests: keeps cookies, reads each page's CSRF
// token, submits forms, does not follow redirects (tests look at them).
import { inviteUser } from '../../src/usecases/console-auth.js';
import type { ConsoleKind, ConsoleRole } from '../../src/domain/console.js';
import type { TestGateway } from './gateway.js';

export interface Page {
  status: number;
  location: string | null;
  body: string;
  /** Content-Type */
  type: string | null;
}

export class ConsoleClient {
  private readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(
    readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async read(res: Response): Promise<Page> {
    this.remember(res);
    const body = await res.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body);
    if (token) this.csrf = token[1]!;
    return { status: res.status, location: res.headers.get('location'), body, type: res.headers.get('content-type') };
  }

  async get(path: string): Promise<Page> {
    return this.read(
      await fetch(this.baseUrl + path, {
        redirect: 'manual',
        headers: { ...this.headers, cookie: this.cookieHeader() },
      }),
    );
  }

  /** POSTs a form with the last CSRF token seen (unless the fields give `_csrf`, or `csrf: false`). */
  async post(path: string, fields: Record<string, string>, opts: { csrf?: boolean } = {}): Promise<Page> {
    const form = new URLSearchParams(opts.csrf === false ? fields : { _csrf: this.csrf, ...fields });
    return this.read(
      await fetch(this.baseUrl + path, {
        method: 'POST',
        redirect: 'manual',
        headers: { ...this.headers, cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      }),
    );
  }

  hasCookie(name: string): boolean {
    return this.cookies.has(name);
  }

  async signIn(email: string, password: string): Promise<Page> {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password });
  }
}

export const PASSWORD = 'correct horse battery staple';

/** A console user with a password set through their link, and a client signed in as them. */
export async function consoleUser(
  gw: TestGateway,
  kind: ConsoleKind,
  role: ConsoleRole,
  organisation_id: number | null = null,
  email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`,
): Promise<{ email: string; client: ConsoleClient; console_user_id: string }> {
  const made = await inviteUser(gw.ctx, { kind: 'cli', name: 'test' }, { email, kind, role, organisation_id });
  const client = new ConsoleClient(gw.url);
  const path = new URL(made.link).pathname;
  await client.get(path);
  const set = await client.post(path, { password: PASSWORD, confirm: PASSWORD });
  if (set.status !== 303) throw new Error(`setting the password answered ${set.status}: ${set.body.slice(0, 300)}`);
  const signedIn = await client.signIn(email, PASSWORD);
  if (signedIn.location !== '/console') throw new Error(`sign-in answered ${signedIn.status}`);
  return { email, client, console_user_id: made.user.console_user_id };
}
