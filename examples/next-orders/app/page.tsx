import type { BootedShop, Order } from '@service-pay/example-shop-kit';
import { shop } from '../lib/shop';

// Rendered on every request from the database, never at build time.
export const dynamic = 'force-dynamic';

const cell = { border: '1px solid #ccc', padding: '0.25rem 0.5rem', textAlign: 'left' } as const;

export default async function OrdersPage() {
  let orders: Order[];
  let tally: BootedShop['tally'];
  let storeKind: BootedShop['storeKind'];
  try {
    const booted = await shop();
    orders = await booted.shop.book.list();
    tally = booted.tally;
    storeKind = booted.storeKind;
  } catch (error) {
    return (
      <main>
        <h1>Orders</h1>
        <p>The shop could not start: {(error as Error).message}</p>
      </main>
    );
  }
  return (
    <main>
      <h1>Orders</h1>
      <p>
        Credited {tally.credited}, {storeKind === 'lease' ? `stopped by the database ${tally.caughtByDatabase}, ` : ''}
        rejected {tally.rejected}. Place an order with <code>POST /orders</code>{' '}
        <code>{'{"amount":"42.00","tokenSymbol":"USDT"}'}</code>.
      </p>
      {orders.length === 0 ? (
        <p>No orders yet.</p>
      ) : (
        <table style={{ borderCollapse: 'collapse' }}>
          <thead>
            <tr>
              {['Order', 'Amount', 'Status', 'Credits', 'Credited by', 'Payment'].map((h) => (
                <th key={h} style={cell}>
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {orders.map((o) => (
              <tr key={o.id}>
                <td style={cell}>{o.id}</td>
                <td style={cell}>
                  {o.amount} {o.tokenSymbol}
                </td>
                <td style={cell}>{o.status}</td>
                <td style={cell}>{o.credits}</td>
                <td style={cell}>{o.creditedBy ?? '-'}</td>
                <td style={cell}>{o.paymentId ?? '-'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
