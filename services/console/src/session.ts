import { useQuery } from '@tanstack/react-query';
import { get } from './api.ts';
import type { Session } from './types.ts';

export const SESSION_KEY = ['session'] as const;

/** Who is signed in (null: nobody), as the API's session route says. */
export function useSession() {
  return useQuery({ queryKey: SESSION_KEY, queryFn: () => get<Session>('/api/auth/session'), staleTime: 30_000 });
}
