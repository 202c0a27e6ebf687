import { guardedFetch, GuardedFetchError, type GuardedFetchOptions } from '@agentyard/http';
import type { AiConfig } from '../../config.ts';
import { AiErrors } from '../../errors.ts';

/** What the summarizer reads: HTML only. */
const HTML_TYPES = ['text/html', 'application/xhtml+xml'];
const MAX_REDIRECTS = 5;

export interface FetchedPage {
  url: string;
  html: string;
  fetchedAt: string;
}

/** The fetcher's settings from config (the test hosts only outside production: loadAiConfig refuses them there). */
export function pageFetchOptions(
  config: Pick<AiConfig, 'PAGE_FETCH_TIMEOUT_MS' | 'PAGE_FETCH_MAX_BYTES' | 'PAGE_FETCH_TEST_HOSTS'>,
): GuardedFetchOptions {
  const testHosts = config.PAGE_FETCH_TEST_HOSTS.split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  return {
    timeoutMs: config.PAGE_FETCH_TIMEOUT_MS,
    maxBytes: config.PAGE_FETCH_MAX_BYTES,
    maxRedirects: MAX_REDIRECTS,
    contentTypes: HTML_TYPES,
    loopbackTestHosts: new Set(testHosts),
  };
}

/** Fetches a page a user named through the guarded fetcher; every refusal is the caller's 4xx/5xx with its reason. */
export async function fetchPage(url: string, options: GuardedFetchOptions): Promise<FetchedPage> {
  try {
    const document = await guardedFetch(url, options);
    return { url: document.url, html: document.body, fetchedAt: new Date().toISOString() };
  } catch (error) {
    if (!(error instanceof GuardedFetchError)) throw error;
    switch (error.reason) {
      case 'scheme':
      case 'address':
        throw AiErrors.urlRefused(error.message);
      case 'size':
        throw AiErrors.pageTooLarge(error.message);
      case 'type':
        throw AiErrors.pageNotHtml(error.message);
      case 'timeout':
        throw AiErrors.pageTimeout(error.message);
      default:
        throw AiErrors.pageUnreachable(error.message);
    }
  }
}
