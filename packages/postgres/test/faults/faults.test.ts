import { faultRows } from './fault-rows.js';

// The fault rows on node-postgres (PostgresStore); faults-postgres-js.test.ts runs them on postgres.js.
faultRows('pg');
