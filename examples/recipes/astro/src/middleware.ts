// The trap, shown by the recipe test (RECIPE_VARIANT=trap): middleware that reads the body before the route.
import { defineMiddleware } from 'astro:middleware';

export const onRequest = defineMiddleware(async (context, next) => {
  if (process.env.RECIPE_VARIANT === 'trap' && context.request.method === 'POST') await context.request.text();
  return next();
});
