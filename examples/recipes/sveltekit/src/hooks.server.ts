// The trap, shown by the recipe test (RECIPE_VARIANT=trap): a hook that reads the body before the route.
import type { Handle } from '@sveltejs/kit';

export const handle: Handle = async ({ event, resolve }) => {
  if (process.env.RECIPE_VARIANT === 'trap' && event.request.method === 'POST') await event.request.text();
  return resolve(event);
};
