-- service-pay's inbox for PostgreSQL: what PostgresStore's migrate() creates (and what every store of
-- @service-pay/postgres reads: node-postgres, PGlite, postgres.js, Prisma, Drizzle, Kysely, Knex, TypeORM),
-- for the default table name `service_pay_inbox`. For teams that own their schema: run it in a migration
-- and give the store `autoMigrate: false`. Idempotent. Another table name: replace every
-- `service_pay_inbox` (the table, its two indexes, its two claim functions).
--
-- Upgrading from a version before service_pay_inbox_take_v2: earlier versions called
-- service_pay_inbox_take (it answered a record). Keep it while processes of an earlier version run (both
-- functions take the same lock, so old and new processes exclude each other on a key); then
-- `DROP FUNCTION service_pay_inbox_take(text, text, text, text, text);`.

CREATE TABLE IF NOT EXISTS "service_pay_inbox" (
  key text PRIMARY KEY,
  fingerprint text NOT NULL,
  payment_id text NOT NULL,
  delivery_id text,
  source text NOT NULL CHECK (source IN ('webhook', 'reconciliation')),
  outcome text NOT NULL CHECK (outcome IN ('credited', 'rejected')),
  reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS "service_pay_inbox_created_at_idx" ON "service_pay_inbox" (created_at);

CREATE INDEX IF NOT EXISTS "service_pay_inbox_payment_id_idx" ON "service_pay_inbox" (payment_id);

CREATE OR REPLACE FUNCTION "service_pay_inbox_claim"(claim_key text, OUT locked boolean, OUT fingerprint text, OUT pid integer, OUT xact_us text)
LANGUAGE plpgsql VOLATILE AS $service_pay$
BEGIN
  locked := false;
  SELECT inbox.fingerprint INTO fingerprint FROM "service_pay_inbox" AS inbox WHERE inbox.key = claim_key;
  IF NOT FOUND THEN
    locked := pg_try_advisory_xact_lock(hashtextextended('service_pay_inbox:' || claim_key, 0));
    IF locked THEN
      SELECT inbox.fingerprint INTO fingerprint FROM "service_pay_inbox" AS inbox WHERE inbox.key = claim_key;
    END IF;
  END IF;
  pid := pg_backend_pid();
  xact_us := (date_part('epoch', now()) * 1000000)::bigint::text;
END
$service_pay$;

CREATE OR REPLACE FUNCTION "service_pay_inbox_take_v2"(claim_key text, claim_fingerprint text, claim_payment_id text, claim_delivery_id text, claim_source text)
RETURNS text LANGUAGE plpgsql VOLATILE AS $service_pay$
DECLARE
  recorded text;
BEGIN
  IF pg_try_advisory_xact_lock(hashtextextended('service_pay_inbox:' || claim_key, 0)) THEN
    INSERT INTO "service_pay_inbox" AS inbox (key, fingerprint, payment_id, delivery_id, source, outcome)
      VALUES (claim_key, claim_fingerprint, claim_payment_id, claim_delivery_id, claim_source, 'credited')
      ON CONFLICT (key) DO NOTHING;
    IF FOUND THEN
      RETURN 'w,' || pg_backend_pid() || ',' || (date_part('epoch', now()) * 1000000)::bigint;
    END IF;
  END IF;
  SELECT inbox.fingerprint INTO recorded FROM "service_pay_inbox" AS inbox WHERE inbox.key = claim_key;
  IF FOUND THEN
    RETURN 'r,' || recorded;
  END IF;
  RETURN 'h';
END
$service_pay$;
