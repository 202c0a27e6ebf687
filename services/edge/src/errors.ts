import { HttpError } from '@agentyard/http';

/** Every error the edge answers with itself, named once. */
export const EdgeErrors = {
  bodyTooLarge: () => new HttpError(413, 'Request body too large'),
  notFound: () => new HttpError(404, 'Not found'),
  rateLimited: (message: string) => new HttpError(429, message),
  crossSite: () => new HttpError(403, 'Cross-site request refused', 'CSRF'),
  misconfigured: () => new HttpError(500, 'Server misconfigured'),
  unauthorized: () => new HttpError(401, 'Unauthorized'),
  forbidden: () => new HttpError(403, 'Forbidden'),
};
