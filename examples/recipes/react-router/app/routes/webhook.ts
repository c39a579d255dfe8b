// React Router 7 (framework mode) resource route: an action that returns the core's Response. The trap:
// reading `request.formData()`/`json()` in a parent route's action or a middleware first (500
// RAW_BODY_UNAVAILABLE); the fix: hand the request over untouched.
import { lazyFetchHandler } from '../../../shared/webhook.js';

const handle = lazyFetchHandler(); // made on the first request: the build imports this module
export async function action({ request }: { request: Request }) {
  if (process.env.RECIPE_VARIANT === 'trap') await request.json(); // the trap, shown by the recipe test
  return handle(request);
}
