import { readJson, respond } from '../../lib/respond';
import { shop } from '../../lib/shop';

// Read the environment and the database on every request, never at build time.
export const dynamic = 'force-dynamic';
// PGlite (the embedded database) and pg need Node.js.
export const runtime = 'nodejs';

/** Places an order and asks the payment service for its payment: 201 `{ order, paymentId }`. */
export function POST(request: Request): Promise<Response> {
  return respond(async () => (await shop()).shop.placeOrder(await readJson(request)), 201);
}

export function GET(): Promise<Response> {
  return respond(async () => (await shop()).shop.book.list());
}
