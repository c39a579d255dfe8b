/**
 * The error a store gives when its inbox table (or what its claim needs) is not there: a setup step, not
 * an outage. With `autoMigrate` on, the store creates what is missing and tries once more.
 *
 * @example
 * ```ts
 * throw new MissingTableError('KyselyStore: the inbox table service_pay_inbox does not exist; ...', { cause });
 * ```
 */
export class MissingTableError extends Error {
  override readonly name = 'MissingTableError';
}

/**
 * The error a store gives when its inbox table is there but is not the store's: other columns than the ones
 * `migrate()` makes (a table of the same name made by something else). `migrate()` keeps an existing table,
 * so it cannot fix this: another `tableName`, or that table renamed, does.
 *
 * @example
 * ```ts
 * throw new InboxTableMismatchError('KyselyStore: the inbox table service_pay_inbox has other columns ...', { cause });
 * ```
 */
export class InboxTableMismatchError extends Error {
  override readonly name = 'InboxTableMismatchError';

  /** The message for `table`, met by `store`: `what` is wrong with it, `ddl` the file with the columns. */
  static of(store: string, table: string, what: string, ddl: string, cause?: unknown): InboxTableMismatchError {
    return new InboxTableMismatchError(
      `${store}: the table ${table} is not an inbox the store made (${what}), and migrate() keeps an existing ` +
        'table as it is. Give the store another tableName, or rename that table; the columns are in ' +
        `${ddl} of the service-pay repository.`,
      cause === undefined ? undefined : { cause },
    );
  }
}

/**
 * The `autoMigrate` option, as every SQL store's options take it.
 *
 * @example
 * ```ts
 * interface KyselyStoreOptions<DB> extends AutoMigrateOption { db: Kysely<DB> }
 * ```
 */
export interface AutoMigrateOption {
  /**
   * Creates the inbox table when a delivery finds it missing (default `true`), so the first delivery on an
   * empty database is credited. `false`: a missing table answers 503 with how to create it
   * (`await store.migrate()`).
   */
  autoMigrate?: boolean | undefined;
}

/**
 * `autoMigrate`, checked: `true` when not given, a TypeError naming the store when not a boolean.
 *
 * @example
 * ```ts
 * autoMigrateOption(options.autoMigrate, 'KyselyStore'); // true
 * ```
 */
export function autoMigrateOption(value: unknown, store: string): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') {
    throw new TypeError(`${store}: autoMigrate must be true or false, got ${JSON.stringify(value)}.`);
  }
  return value;
}

const AUTO_MIGRATE_HINT = 'or leave autoMigrate on (the default) and the store creates it';

/** How the missing-table advice ends, by whether the store would have created the table itself. */
export function migrateAdvice(autoMigrate: boolean): string {
  return autoMigrate
    ? 'run await store.migrate() once at start-up'
    : `run await store.migrate() once at start-up, ${AUTO_MIGRATE_HINT}`;
}

/**
 * Runs `attempt`; when it fails for a missing table and `enabled`, runs `migrate` (once, however many
 * attempts meet the missing table at the same time) and `attempt` again. The first delivery on an empty
 * database is then credited instead of answered 503 until someone calls `migrate()`.
 *
 * @example
 * ```ts
 * const auto = new AutoMigration(true, () => store.migrate());
 * const claim = await auto.run(() => store.beginOnce(key, fingerprint));
 * ```
 */
export class AutoMigration {
  #migrating: Promise<void> | undefined;

  constructor(
    readonly enabled: boolean,
    private readonly migrate: () => Promise<void>,
  ) {}

  async run<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      return await this.recover(error, attempt);
    }
  }

  /**
   * What `run` does once `attempt` has failed with `error`: for a missing table, migrate (when enabled) and
   * run `retry` once; anything else is thrown as it is. For a caller on a hot path that catches the error
   * itself, where `run`'s extra async frame on every call was measurable.
   */
  async recover<T>(error: unknown, retry: () => Promise<T>): Promise<T> {
    if (!(error instanceof MissingTableError)) throw error;
    if (!this.enabled) {
      if (error.message.includes('autoMigrate')) throw error;
      throw new MissingTableError(`${error.message.replace(/\.$/, '')}, ${AUTO_MIGRATE_HINT}.`, {
        cause: error.cause,
      });
    }
    this.#migrating ??= this.migrate().finally(() => {
      this.#migrating = undefined;
    });
    await this.#migrating;
    return await retry();
  }
}
