import { fileURLToPath } from 'node:url';

/** The repository root (this file lives in libs/config/src). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
