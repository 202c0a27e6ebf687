// An upload to the agent's workspace with its progress: fetch reports none for a request body, so
// this one request goes by XMLHttpRequest (same origin, the session cookie, the raw file as the body).
import { ApiError, errorFrom, query } from './api.ts';
import type { Uploaded } from './types.ts';

export function uploadFile(
  agentId: string,
  path: string,
  file: Blob,
  onProgress: (share: number) => void,
  signal?: AbortSignal,
): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `/api/files${query({ agentId, path })}`);
    request.withCredentials = true;
    request.setRequestHeader('accept', 'application/json');
    request.setRequestHeader('content-type', file.type || 'application/octet-stream');
    request.upload.onprogress = (event) => {
      const total = event.lengthComputable ? event.total : file.size;
      onProgress(total > 0 ? Math.min(1, event.loaded / total) : 0);
    };
    request.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        body = undefined;
      }
      if (request.status >= 200 && request.status < 300) {
        onProgress(1);
        resolve(body as Uploaded);
      } else reject(errorFrom(request.status, body));
    };
    request.onerror = () => reject(new ApiError(0, 'The server cannot be reached'));
    request.onabort = () => reject(new ApiError(0, 'Upload cancelled'));
    signal?.addEventListener('abort', () => request.abort(), { once: true });
    request.send(file);
  });
}
