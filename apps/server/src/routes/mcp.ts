/**
 * `/mcp`: Kura's MCP tools over Streamable HTTP (the official SDK's transport; decision 0057),
 * for assistants that reach the store over the network instead of spawning `kura mcp` each:
 * every client shares this server's store and its one loaded model.
 *
 * Stateless: each POST is answered by a server of its own (taken from a pool), offering the
 * tools its token's scopes allow (a read token sees the read-only tools alone, a write-only
 * token the tools that add: any token may come — a write-only one was refused, though
 * kura_add_text is what an ingesting agent needs), as JSON. Nothing
 * lives between requests, so any server of a store on a shared bucket answers any request,
 * and a session cannot outlive the token that opened it. No stream is offered for the
 * server's own messages (it sends none): GET and DELETE are 405.
 *
 * The Host and Origin headers are checked before the token (access/rebinding.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerConfig } from '../config.js';
import { HttpError } from '../errors.js';
import { McpServerPool } from '../mcp/server.js';
import { toolRefusal, type ToolAccess } from '../mcp/tools.js';
import { rebindingPolicy, refusal } from '../access/rebinding.js';

/** A request's JSON body at most: kura_add_text takes up to 16 MiB of text, escaped in JSON. */
export const MCP_BODY_MAX = 40 << 20;

export default async function mcp(app: FastifyInstance, opts: { config: Pick<ServerConfig, 'host' | 'allowedHosts' | 'corsOrigins'> }) {
  const policy = rebindingPolicy(opts.config);
  const servers = new McpServerPool(app.store);
  const guard = async (request: FastifyRequest) => {
    const origin = request.headers.origin;
    const why = refusal(policy, request.headers.host, typeof origin === 'string' ? origin : undefined);
    if (why) throw new HttpError('FORBIDDEN', why, {});
  };
  app.post('/mcp', { config: { scope: 'any' }, bodyLimit: MCP_BODY_MAX, onRequest: guard, schema: { hide: true } }, async (request, reply) => {
    const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
    const access: ToolAccess = { scopes: request.access?.scopes ?? new Set(), ...(request.access?.prefixes ? { prefixes: request.access.prefixes } : {}), localFiles: false };
    const server = await servers.take(access);
    // A call of a tool this token's scopes hide: refused with why, as a tool error whose text
    // starts with its code (the SDK, which no longer knows the tool, says "not found").
    const call = request.body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { name?: unknown } } | undefined;
    const why = call?.method === 'tools/call' && typeof call.params?.name === 'string' ? toolRefusal(call.params.name, access) : undefined;
    // A call whose arguments are no object (`"arguments": [1]`) is the client's mistake,
    // -32602 as MCP has it: the SDK answered -32603 (internal error) with zod's dump.
    const args = (call?.params as { arguments?: unknown } | undefined)?.arguments;
    if (call?.method === 'tools/call' && args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args)) && (typeof call.id === 'string' || typeof call.id === 'number')) {
      void servers.give(server, access);
      return reply.type('application/json').send({ jsonrpc: '2.0', id: call.id, error: { code: -32602, message: 'params.arguments must be an object of the tool\'s arguments (tools/list gives each tool\'s inputSchema)' } });
    }
    if (why !== undefined && (typeof call!.id === 'string' || typeof call!.id === 'number')) {
      void servers.give(server, access);
      return reply.type('application/json').send({ jsonrpc: '2.0', id: call!.id, result: { isError: true, content: [{ type: 'text', text: `FORBIDDEN: ${why}` }], _meta: { code: 'FORBIDDEN' } } });
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the answer itself: fastify leaves the response alone from here.
    reply.hijack();
    reply.raw.on('close', () => void servers.give(server, access));
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (e) {
      request.log.error({ err: e }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
      } else reply.raw.destroy();
    }
  });
  const notAllowed = async (_request: FastifyRequest, _reply: FastifyReply) => {
    throw new HttpError('METHOD_NOT_ALLOWED', 'MCP here is stateless JSON over POST: no stream for server messages, no session to end', {}, { allow: 'POST' });
  };
  // Every other method is 405 with `Allow: POST` (the generic 405 listed these as allowed).
  app.route({ method: ['GET', 'DELETE', 'PUT', 'PATCH'], url: '/mcp', config: { scope: 'any' }, onRequest: guard, schema: { hide: true }, handler: notAllowed });
}
