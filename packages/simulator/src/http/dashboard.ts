import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatorError } from '../core/errors.js';

const ASSETS: Readonly<Record<string, readonly [file: string, type: string]>> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/dashboard.css': ['dashboard.css', 'text/css; charset=utf-8'],
  '/dashboard.js': ['dashboard.js', 'text/javascript; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
};

// The page talks to its own origin only and runs no inline code: whatever a webhook receiver answers is
// shown as text, and nothing on the page can send it anywhere else.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const cache = new Map<string, Buffer>();
let folder: string | undefined;

/** True when `path` is one of the dashboard's files. */
export function isDashboardPath(path: string): boolean {
  return Object.hasOwn(ASSETS, path);
}

/**
 * Serves the dashboard: plain files shipped in the package's `dashboard/` folder, read once and kept.
 * No build step and no CDN, so it works offline.
 */
export async function serveDashboard(
  method: string,
  path: string,
  res: ServerResponse,
  controlToken?: string,
): Promise<void> {
  if (method !== 'GET' && method !== 'HEAD')
    throw new SimulatorError('METHOD_NOT_ALLOWED', `${path} accepts GET, not ${method}.`);
  const [file, type] = ASSETS[path] as readonly [string, string];
  let body = cache.get(file);
  if (body === undefined) {
    body = await readFile(join(dashboardFolder(), file));
    cache.set(file, body);
  }
  if (file === 'index.html' && controlToken !== undefined) {
    // Same-origin hand-over: a meta tag the page's own script reads (no inline script, the CSP stays).
    body = Buffer.from(
      body.toString('utf8').replace('</head>', `<meta name="simulator-token" content="${controlToken}">\n</head>`),
    );
  }
  res.writeHead(200, {
    'content-type': type,
    'content-length': String(body.length),
    'cache-control': 'no-cache',
    ...SECURITY_HEADERS,
  });
  res.end(method === 'HEAD' ? undefined : body);
}

/**
 * The `dashboard/` folder at the package root, found from this module: one level up from `dist/` once
 * built, two from `src/http/` when the sources run directly (tests).
 */
function dashboardFolder(): string {
  if (folder !== undefined) return folder;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'dashboard', 'index.html'))) {
      folder = join(dir, 'dashboard');
      return folder;
    }
    dir = dirname(dir);
  }
  throw new SimulatorError(
    'INTERNAL_ERROR',
    `The dashboard's files are missing (no dashboard/index.html above ${fileURLToPath(import.meta.url)}); reinstall @service-pay/simulator.`,
  );
}
