// SvelteKit 2 endpoint. The trap: `await request.json()` (or text()) anywhere before, e.g. in
// hooks.server.ts, consumes the body (500 RAW_BODY_UNAVAILABLE); the fix: hand the request over untouched.
import { lazyFetchHandler } from '../../../../../shared/webhook.js';

const handle = lazyFetchHandler(); // made on the first request: the build imports this module
export const POST = ({ request }: { request: Request }) => handle(request);
