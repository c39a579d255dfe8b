import { faultRows } from './fault-rows.js';

// The fault rows on Drizzle ORM over a node-postgres pool (DrizzleStore): the same apps, scenarios and counts
// as node-postgres, the credit written with Drizzle's query builder through ctx.tx.
faultRows('drizzle');
