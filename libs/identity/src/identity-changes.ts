/**
 * The Redis channel on which a service that revoked a caller tells every edge at once (sign-out,
 * password change, key deletion), so that the edges' memory of callers never outlives the change.
 * The database's notice of the same change (a trigger) follows it anyway; this one comes first.
 */
export const identityChangesChannel = (queuePrefix: string) => `${queuePrefix}:identity-changes`;

/** The payload that makes every edge forget what it knows of a user's sessions and keys. */
export const userChanged = (userId: string) => `user:${userId}`;

export interface IdentityChangePublisher {
  publish(channel: string, message: string): Promise<number>;
}

/**
 * Tells the edges the user's sessions or keys changed, after the change committed and before the
 * request that made it is answered: Redis hands the message to every subscribed edge before it
 * answers the publish, so it is there before the caller can make another request. A failure is the
 * caller's to log (the database's notice still reaches the edges, a few milliseconds later).
 */
export async function announceUserChanged(
  redis: IdentityChangePublisher,
  queuePrefix: string,
  userId: string,
): Promise<void> {
  await redis.publish(identityChangesChannel(queuePrefix), userChanged(userId));
}
