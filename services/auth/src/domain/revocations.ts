import { announceUserChanged, type IdentityChangePublisher } from '@agentyard/identity';
import type { Log } from '@agentyard/http';

/**
 * Tells the edges, once a user's session or key is gone, to forget what they remember of the user,
 * before the request that revoked it is answered (sign-out, password change or reset, key deletion).
 * Redis down: logged, and the database's notice of the same change reaches the edges a moment later.
 */
export class Revocations {
  private readonly redis: IdentityChangePublisher;
  private readonly queuePrefix: string;
  private readonly log: Pick<Log, 'warn'>;

  constructor(redis: IdentityChangePublisher, queuePrefix: string, log: Pick<Log, 'warn'>) {
    this.redis = redis;
    this.queuePrefix = queuePrefix;
    this.log = log;
  }

  async announce(userId: string): Promise<void> {
    try {
      await announceUserChanged(this.redis, this.queuePrefix, userId);
    } catch (error) {
      this.log.warn(
        { err: { message: (error as Error).message } },
        'revocation not announced to the edges: their database notice follows',
      );
    }
  }
}
