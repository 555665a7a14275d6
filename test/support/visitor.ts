// A customer's browser on a hosted page, without a browser: the page's cookie kept, redirects not followed.
import type { TestGateway } from './gateway.js';

const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/** A customer's browser on the hosted page: keeps the page's visit cookie, follows nothing by itself. */
export class Visitor {
  private cookie = '';
  constructor(
    private readonly gw: TestGateway,
    readonly path: string,
  ) {}
  async get(query = ''): Promise<{ status: number; body: string; location: string | null }> {
    const res = await fetch(`${this.gw.url}${this.path}${query}`, {
      headers: { 'user-agent': DESKTOP, ...(this.cookie && { cookie: this.cookie }) },
      redirect: 'manual',
    });
    const set = res.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    return { status: res.status, body: await res.text(), location: res.headers.get('location') };
  }
  /** The address of the page's button to POLi. */
  async payButton(): Promise<string> {
    const page = await this.get();
    const href = /id="pay-button" href="([^"]+)"/.exec(page.body)?.[1];
    if (!href) throw new Error(`no button to POLi on the page: ${page.body.slice(0, 400)}`);
    return href.replaceAll('&amp;', '&');
  }
}
