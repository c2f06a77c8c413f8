/** @kura/server: the Kura HTTP API (docs/HTTP.md). */
export { build, API_VERSION, DEFAULT_WEB_ROOT, type BuildOptions } from './app.js';
export { serve, type Running } from './serve.js';
export { ServerConfig, ConfigError, parseConfig, parseTokens, configFromEnv, SCOPES, type Scope, type Token, type ServerConfigInput } from './config.js';
export { STATUS_OF, HttpError } from './errors.js';
