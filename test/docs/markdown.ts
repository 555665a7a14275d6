// Reading Markdown as GitHub renders it (links and heading anchors), and reading the environment
// variables a source file reads, for the coverage test.

/** The relative links of a Markdown text (not in code), in order. */
export function linksOf(markdown: string): string[] {
  const links: string[] = [];
  for (const line of withoutCode(markdown).split('\n')) {
    for (const m of line.replaceAll(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

/** The anchors of a Markdown text's headings, by GitHub's rules (a repeated one gets -1, -2, ...). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of withoutCode(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .replaceAll(/`/g, '')
      .replaceAll(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{N}\s_-]/gu, '')
      .replaceAll(' ', '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function withoutCode(markdown: string): string {
  return markdown.replaceAll(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/**
 * The environment variables a source file reads: `process.env.X`, `env.X`, `env['X']`, and a name
 * handed to a reader of the environment (a function whose name ends in `Env`: `positiveEnv('X')`),
 * and a CLI flag's variable (`env: 'X'` in its table, src/cli/command.ts).
 */
export function variablesReadIn(source: string): string[] {
  const names: string[] = [];
  const pattern =
    /\benv(?:\.([A-Z][A-Z0-9_]+)|\[['"]([A-Z][A-Z0-9_]+)['"]\]|: ['"]([A-Z][A-Z0-9_]+)['"])|\w+Env\(\s*['"]([A-Z][A-Z0-9_]+)['"]/g;
  for (const m of source.matchAll(pattern)) {
    const name = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}
