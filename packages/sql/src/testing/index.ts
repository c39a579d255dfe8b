export { autoMigrateCases, type EmptyDatabaseSubject } from './auto-migrate-cases.js';
export { type RegisteredClient, type RegisteredFixture, registeredGuardCases } from './client-registry.js';
export { deadlockTables, deadlockWithDelivery, type OtherConnection } from './deadlock.js';
export {
  answerBeforeRollback,
  appReadRoundTrips,
  assertMissingInbox,
  beginFailures,
  type CreditingStore,
  creditOnce,
  type DeliveryRoundTrips,
  deliveryRoundTrips,
  ormRoundTripSubject,
  type RoundTripSubject,
  roundTripCases,
} from './deliveries.js';
export {
  type GuardCase,
  type GuardSubject,
  namedOwnTransactions,
  typeOrmGuardWrites,
  writeGuardCases,
} from './guard-cases.js';
export { type LateUseCase, type LateUseSubject, lateUseCases } from './late-use-cases.js';
export { type OrmClient, type OrmDatabase, type OrmStore, ormStoreCases, ormStoreSuite } from './orm-store-cases.js';
export { proxyServerOf, type RoundTripProxy, startRoundTripProxy, type WireProtocol } from './round-trip-proxy.js';
export {
  MYSQL_TALK_AROUND,
  POSTGRES_TALK_AROUND,
  type TalkAroundForm,
  talkAroundSetup,
  talkAroundTeardown,
} from './talk-around.js';
