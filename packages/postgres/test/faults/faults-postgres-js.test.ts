import { faultRows } from './fault-rows.js';

// The fault rows on postgres.js (PostgresJsStore): the same apps, scenarios and counts as node-postgres.
faultRows('postgres-js');
