/** @kura/server: the Kura HTTP API (docs/HTTP.md). */
export { build, API_VERSION, DEFAULT_WEB_ROOT, type BuildOptions } from './app.js';
export { serve, type Running } from './serve.js';
export { ServerConfig, ConfigError, parseConfig, parseTokens, configFromEnv, SCOPES, type Scope, type Token, type ServerConfigInput } from './config.js';
export { STATUS_OF, HttpError } from './errors.js';
export { VERSION } from './version.js';
export { newMcpServer } from './mcp/server.js';
export { LOCAL_ACCESS, RESULT_CHARS, TEXT_CHARS, type ToolAccess } from './mcp/tools.js';
