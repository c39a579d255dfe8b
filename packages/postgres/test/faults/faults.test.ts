import { POSTGRES_CLIENTS } from '../clients/index.js';
import { faultRows } from './fault-rows.js';

// The fault rows on every client of the registry that has an app (clients/index.ts): the same apps,
// scenarios and counts, the credit written with each client's own query builder through ctx.tx.
for (const client of POSTGRES_CLIENTS) if (client.app !== undefined) faultRows(client);
