// What every benchmark shares: the realistic deliveries and the hand-rolled verify every ratio is anchored
// to. The adapter load (`/bench/adapter-load`) and the SQL contest (`/bench/sql-contest`) are entries of
// their own: each brings a dependency (autocannon, the core's testing entry) the others do not need.
export { benchEvent, SECRET, type SignedDelivery, signedDeliveries } from './fixtures.js';
export { handRolledVerify } from './hand-rolled-verify.js';
