import { faultRows } from './fault-rows.js';

// The fault rows on TypeOrmStore (TypeORM, type 'postgres'): the same apps, scenarios and counts as node-postgres, the credit written
// with the client's own query builder through ctx.tx.
faultRows('typeorm');
