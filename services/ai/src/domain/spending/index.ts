/**
 * Spending: the credits ledger, plan allowances, user limits and the spend reserved at admission.
 * For GET /api/billing (each takes a database handle first: the user's transaction or the system connection):
 *   creditBalanceUsd(db, userId) → number
 *   monthUsage(db, userId, {admin?, activeStatuses?, allowances?}) → {monthUsd, includedUsd}
 *   spendingLimits(db, userId) → {monthlyUsd: number | null, agents: [{agentId, monthlyUsd}]}
 *   addCreditEntry(db, {userId, kind, amountUsd, note, source}) → {id, added}; idempotent on `source`,
 *     `amountUsd` is the size (purchase/grant add it, usage/refund take it)
 */
export { addCreditEntry, creditBalanceUsd, creditEntriesPage, creditPoolUsd, type NewCreditEntry } from './ledger.ts';
export { allowanceOf, DEFAULT_PLAN_ALLOWANCES, monthStart, parseAllowances, type Allowances } from './allowance.ts';
export { monthUsage, type MonthUsageOptions } from './month-usage.ts';
export { setSpendingLimits, spendingLimits, type Limits } from './limits.ts';
