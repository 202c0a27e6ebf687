import { HttpError } from '@agentyard/http';

/** Every error the trader service answers with, named once. */
export const TraderErrors = {
  needsKey: () => new HttpError(503, 'No trading-service key: add your own key', undefined, { needsKey: true }),
  upstreamFailed: (detail: string) => new HttpError(502, `Trading service unavailable: ${detail}`),
};
