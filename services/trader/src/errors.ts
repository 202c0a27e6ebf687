import { HttpError } from '@agentyard/http';

/** Every error the trader service answers with, named once. */
export const TraderErrors = {
  needsKey: () =>
    new HttpError(503, 'No trading-service key: add your own key (the platform key is for paid plans)', undefined, {
      needsKey: true,
    }),
  jobNotFound: () => new HttpError(404, 'Job not found'),
  threadNotFound: () => new HttpError(404, 'Thread not found'),
  upstreamFailed: (detail: string) => new HttpError(502, `Trading service unavailable: ${detail}`),
};
