#!/usr/bin/env node
/** `kura-server`: the API on the settings of the KURA_* environment (kura serve adds flags). */
import { ConfigError, configFromEnv } from './config.js';
import { serve } from './serve.js';

try {
  await serve(configFromEnv());
} catch (e) {
  const msg = e instanceof ConfigError ? `invalid configuration: ${e.message}` : e instanceof Error ? e.message : String(e);
  process.stderr.write(`kura-server: ${msg}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
}
