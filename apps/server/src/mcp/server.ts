/**
 * An MCP server (the official SDK's) offering Kura's tools on a store, for one client at a
 * time: over stdio for the life of `kura mcp`, over HTTP for one request (routes/mcp.ts). The
 * SDK is loaded on first use: a server that never answers MCP does not pay for it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Store } from '@kura/store';
import { VERSION } from '../version.js';
import { limitStore } from '../access/limited-store.js';
import { registerTools, type ToolAccess } from './tools.js';

/** An MCP server whose tools reach what `access` allows: a token's prefixes limit the store they are given. */
export async function newMcpServer(store: Store, access: ToolAccess): Promise<McpServer> {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const server = new McpServer({ name: 'kura', version: VERSION });
  registerTools(server, access.prefixes ? limitStore(store, access.prefixes) : store, access);
  // The SDK advertises tools/list_changed once a tool is registered; this server never sends
  // it (its tools are fixed for the session: decision 0057), so it says so.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

/** Idle servers kept per kind of access at most. */
const IDLE_MAX = 16;

/**
 * Servers for requests, reused: making one (its tools' schemas, the SDK's validator) took
 * ~1.4 ms here, more than a keyword search. A server answers one request at a time (the SDK
 * ties it to one transport, and request ids from two clients would collide) and, once closed,
 * waits here for the next request with the same access.
 */
export class McpServerPool {
  private readonly idle = new Map<string, McpServer[]>();

  constructor(private readonly store: Store) {}

  /** A server offering what `access` allows, not connected to a transport. */
  async take(access: ToolAccess): Promise<McpServer> {
    return this.idle.get(keyOf(access))?.pop() ?? (await newMcpServer(this.store, access));
  }

  /** Closes `server` (its transport with it) and keeps it for the next request like it. */
  async give(server: McpServer, access: ToolAccess): Promise<void> {
    await server.close();
    const key = keyOf(access);
    const idle = this.idle.get(key) ?? [];
    if (idle.length < IDLE_MAX) idle.push(server);
    this.idle.set(key, idle);
  }
}

function keyOf(access: ToolAccess): string {
  return `${[...access.scopes].sort().join(',')}${access.localFiles ? '+files' : ''}${access.prefixes ? ` ${JSON.stringify(access.prefixes)}` : ''}`;
}
