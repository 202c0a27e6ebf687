export {
  createAppDb,
  lockForTransaction,
  withTransactionLock,
  withUser,
  withUserStatement,
  type AppDb,
  type UserTx,
} from './app.ts';
export { prepared } from './pipelined-driver.ts';
export type { Database } from './tables/index.ts';
export * from './tables/index.ts';
export { isUniqueViolation } from './errors.ts';
export { sql, type Kysely, type Transaction, type Selectable, type Insertable, type Updateable } from 'kysely';
export { FreshCache } from './fresh-cache.ts';
export { listenForNotices, type NoticeHandlers, type NoticeListener, type NoticeOptions } from './notices.ts';
export {
  decodeCursor,
  encodeCursor,
  pageOf,
  pastPosition,
  positionAt,
  type PageIdKind,
  type PagePosition,
} from './list-pages.ts';
export {
  activeStatusesOf,
  currentPlan,
  currentPlans,
  DEFAULT_ACTIVE_STATUSES,
  isPlan,
  lowerPlan,
  PLANS,
  planRank,
  type Plan,
  type PlanOptions,
} from './plans.ts';
