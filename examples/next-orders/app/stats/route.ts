import { respond } from '../../lib/respond';
import { shop } from '../../lib/shop';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** What the credit did so far in this process: credited, caught by the database, rejected. */
export function GET(): Promise<Response> {
  return respond(async () => (await shop()).tally);
}
