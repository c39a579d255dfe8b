import { ShopError } from '@service-pay/example-shop-kit';
import { respond } from '../../../lib/respond';
import { shop } from '../../../lib/shop';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function GET(_request: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return respond(async () => {
    const { id } = await params;
    const order = await (await shop()).shop.book.get(id);
    if (order === undefined) throw new ShopError(404, 'ORDER_NOT_FOUND', `No order ${id}.`);
    return order;
  });
}
