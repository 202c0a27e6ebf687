// `npm run build -w @agentyard/console`: builds the console now (`--force`) or when its sources changed.
import { ensureConsoleBuilt } from './lib/console.ts';

ensureConsoleBuilt({ force: process.argv.includes('--force') });
