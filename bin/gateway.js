#!/usr/bin/env node
// The CLI is compiled TypeScript; `npm run build` (run by npm start/test) produces dist/.
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    if (typeof code === 'number') process.exitCode = code;
  },
  (err) => {
    console.error(`gateway: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  },
);
