import { HttpError } from '@agentyard/http';

/** Every error the edge answers with itself, named once. */
export const EdgeErrors = {
  bodyTooLarge: () => new HttpError(413, 'Request body too large'),
  notFound: () => new HttpError(404, 'Not found'),
  malformedPath: () => new HttpError(400, 'Malformed path'),
  consoleNotBuilt: () =>
    new HttpError(503, 'The console is not built: run npm start (or npm run build -w @agentyard/console)'),
  rateLimited: (message: string) => new HttpError(429, message),
  crossSite: () => new HttpError(403, 'Cross-site request refused', 'CSRF'),
  misconfigured: () => new HttpError(500, 'Server misconfigured'),
  unauthorized: () => new HttpError(401, 'Unauthorized'),
  forbidden: () => new HttpError(403, 'Forbidden'),
  notOriginForm: () => new HttpError(400, 'Request target must be a path'),
  tooManyStreams: (limit: number) => new HttpError(429, 'Too many open streams', 'TOO_MANY_STREAMS', { limit }),
  streamsFull: (limit: number) => new HttpError(429, 'Too many open streams on this server', 'STREAMS_FULL', { limit }),
};
