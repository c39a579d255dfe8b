import { ShopError } from '@service-pay/example-shop-kit';

/** Runs a route's work and answers errors as the Express example does: `{ error, message }` with ShopError's status. */
export async function respond(work: () => Promise<unknown>, status = 200): Promise<Response> {
  try {
    return Response.json(await work(), { status });
  } catch (error) {
    if (error instanceof ShopError) {
      return Response.json({ error: error.code, message: error.message }, { status: error.status });
    }
    console.error(error);
    return Response.json({ error: 'INTERNAL', message: 'Internal error.' }, { status: 500 });
  }
}

/** The JSON body, or `{}` when there is none, as `express.json()` leaves it; anything but JSON is a coded 400. */
export async function readJson(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (text.trim() === '') return {};
  try {
    const body: unknown = JSON.parse(text);
    return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  } catch {
    throw new ShopError(400, 'INVALID_ORDER', 'The body is not JSON.');
  }
}
