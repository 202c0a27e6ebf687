import type { ChatTurn } from './providers/types.ts';

const PHASES = ['Observe', 'Think', 'Plan', 'Build', 'Execute', 'Verify', 'Learn'];

export const ALGORITHM_PROMPT = `Answer in the 7-phase format, one heading per phase, in this order:
1. Observe: restate the request and the facts given.
2. Think: reason about what matters and what is unknown.
3. Plan: the steps you will take.
4. Build: produce the parts of the answer.
5. Execute: carry the plan out and give the result.
6. Verify: check the result against the request.
7. Learn: what to remember or do differently next time.`;

/** Algorithm mode: the 7-phase system prompt goes first unless a system message already holds every phase. */
export function withAlgorithmMode(messages: ChatTurn[]): ChatTurn[] {
  const present = messages.some((m) => m.role === 'system' && PHASES.every((phase) => m.content.includes(phase)));
  return present ? messages : [{ role: 'system', content: ALGORITHM_PROMPT }, ...messages];
}
