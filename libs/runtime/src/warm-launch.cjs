// The first process of a warm container (a container started before any agent needs it): it waits,
// holding no secret, until the platform writes the agent's config file into the container's
// read-only config directory, then replaces itself (execve, same pid) with the image's own command.
// Run as `node -e <this source> <the image's command as JSON>`; the file is $OPENCLAW_CONFIG_PATH.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const configFile = process.env.OPENCLAW_CONFIG_PATH;
const command = JSON.parse(process.argv[1]);

function executable(name) {
  if (name.includes('/')) return name;
  for (const dir of (process.env.PATH || '/usr/local/bin:/usr/bin:/bin').split(':')) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {}
  }
  throw new Error(`${name} not found on PATH`);
}

let launched = false;
function launchWhenConfigured() {
  if (launched || !fs.existsSync(configFile)) return;
  launched = true;
  process.execve(executable(command[0]), command, process.env);
}

// The platform writes the file under another name and renames it into place, so it is whole when seen.
fs.watch(path.dirname(configFile), launchWhenConfigured);
launchWhenConfigured();
process.on('SIGTERM', () => process.exit(0));
