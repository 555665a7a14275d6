// CPU profiles (node --cpu-prof) of create, query and gateway data, with a summary of each.
import { randomInt } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeProfile, formatProfileSummary } from '../lib/cpuprofile.mjs';
import { freshDatabase, startGw } from '../lib/gateways.mjs';
import { DURATION, TMP, WARMUP, log } from '../lib/options.mjs';
import { createReq, measure, preCreate, queryPath } from '../lib/requests.mjs';
import { extra } from '../lib/results.mjs';

export async function profileRuns(engine) {
  const database = await freshDatabase(engine);
  const dirs = {
    create: join(TMP, `profile-${engine}-create`),
    query: join(TMP, `profile-${engine}-query`),
    gatewaydata: join(TMP, `profile-${engine}-gatewaydata`),
  };
  let m;
  const refs = [];
  let nonces = [];
  {
    const gw = await startGw(database, { execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.create}`] });
    m = gw.merchant;
    await measure(`${engine} create hosted (profiled)`, {
      url: gw.url,
      next: createReq(m),
      onOk: (tag) => refs.push(tag),
    });
    // Nonces for the gateway data profile (a few seconds of merchant-hosted creates in this profile too).
    nonces = (await preCreate(gw.url, m, Math.ceil((DURATION + WARMUP) * 400), { mh: true })).nonces;
    await gw.stop();
  }
  {
    const gw = await startGw(database, { merchant: m, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.query}`] });
    const paths = Array.from({ length: 20_000 }, () => queryPath(m, refs[randomInt(refs.length)]));
    let i = 0;
    await measure(`${engine} query (profiled)`, {
      url: gw.url,
      next: () => ({ method: 'GET', path: paths[i++ % paths.length] }),
    });
    await gw.stop();
  }
  {
    const gw = await startGw(database, { merchant: m, execArgv: ['--cpu-prof', `--cpu-prof-dir=${dirs.gatewaydata}`] });
    await measure(`${engine} gateway data (profiled)`, {
      url: gw.url,
      next: () => {
        const n = nonces.pop();
        return n ? { path: `/v2/merchanthosted/gatewaydata/${n}` } : null;
      },
    });
    await gw.stop();
  }
  for (const [what, dir] of Object.entries(dirs)) {
    const file = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(dir, f))[0];
    if (!file) {
      log(`no profile written in ${dir}`);
      continue;
    }
    const summary = summarizeProfile(file);
    const text = formatProfileSummary(summary, `${engine} ${what}`);
    writeFileSync(join(dir, 'summary.txt'), text);
    extra[`profile_${engine}_${what}`] = { file, summary };
    console.log(text);
  }
}
