// Astro 5 endpoint (on-demand, @astrojs/node). The trap: `await request.json()` in middleware first
// (500 RAW_BODY_UNAVAILABLE); the fix: hand the request over untouched.
import { lazyFetchHandler } from '../../../../shared/webhook.js';

const handle = lazyFetchHandler(); // made on the first request: the build imports this module
export const prerender = false;
export const POST = ({ request }: { request: Request }) => handle(request);
