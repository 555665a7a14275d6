// Browser-test helpers: Debian's chromium through playwright-core, a merchant site that receives
// the result redirection, and the user agents the gateway tells apart.
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}

export const UA = {
  desktop: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  wechat:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.49(0x18003137) NetType/WIFI Language/en',
};

export const DESKTOP: BrowserContextOptions = {
  viewport: { width: 1280, height: 860 },
  userAgent: UA.desktop,
  deviceScaleFactor: 1,
};
export const MOBILE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  userAgent: UA.iphone,
  isMobile: true,
  hasTouch: true,
  deviceScaleFactor: 2,
};
export const WECHAT: BrowserContextOptions = { ...MOBILE, userAgent: UA.wechat };

export async function newContext(browser: Browser, options: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(20_000);
  return context;
}

/**
 * Screenshots go to docs/screenshots when UPDATE_SCREENSHOTS=1 (to refresh the docs'
 * pictures), otherwise to a temporary directory: a normal test run leaves the tree unchanged.
 */
export function screenshotPath(name: string): string {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? join(process.cwd(), 'docs', 'screenshots')
      : join(tmpdir(), 'gateway-screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

export interface MerchantSite {
  url: string;
  /** Resolves with the query of the next request to `path` (e.g. /return) that has not been taken yet. */
  next(path: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

/** The merchant's web site: return_url and backPage_url land here. */
export async function startMerchantSite(): Promise<MerchantSite> {
  const arrived = new Map<string, URLSearchParams[]>();
  const waiting = new Map<string, ((q: URLSearchParams) => void)[]>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://merchant.test');
    const waiter = waiting.get(url.pathname)?.shift();
    if (waiter) waiter(url.searchParams);
    else arrived.set(url.pathname, [...(arrived.get(url.pathname) ?? []), url.searchParams]);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Merchant</title><h1 id="merchant-page">Merchant ${url.pathname}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    next(path: string) {
      const early = arrived.get(path)?.shift();
      if (early) return Promise.resolve(early);
      return new Promise((resolve) => waiting.set(path, [...(waiting.get(path) ?? []), resolve]));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A browser context signed in as a console client's user: its cookies (the session and the language) handed over. */
export async function signedInContext(
  browser: Browser,
  options: BrowserContextOptions,
  baseUrl: string,
  cookieHeader: string,
): Promise<BrowserContext> {
  const context = await newContext(browser, options);
  const url = new URL(baseUrl);
  await context.addCookies(
    cookieHeader
      .split('; ')
      .filter(Boolean)
      .map((pair) => {
        const at = pair.indexOf('=');
        return { name: pair.slice(0, at), value: pair.slice(at + 1), domain: url.hostname, path: '/' };
      }),
  );
  return context;
}
