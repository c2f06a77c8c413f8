/**
 * `kura mcp`: a Model Context Protocol server over stdio (the official TypeScript SDK) for AI
 * assistants: Kura's MCP tools (@kura/server's mcp/tools.ts, which `/mcp` on `kura serve`
 * offers over HTTP too) on the store, every one of them (the client is on this machine). Uses
 * the local model when installed (hybrid search). stdout is the protocol's: nothing else is
 * written there.
 */
import type { Command } from 'commander';
import { configuredReranker } from '@kura/store';
import { embedderFor } from '../embedder.js';
import { openStore, storeDir } from '../store.js';
import { passwordConfigured, storePassword } from '../password.js';

/** Bytes of one JSON-RPC message read at most (see below). */
const MESSAGE_MAX = 112 << 20;

export function register(program: Command): void {
  program
    .command('mcp')
    .description('serve the store to an AI assistant over MCP (stdio): tools to add text and files, read, list, search, grep, diff and see versions, tag, set metadata and delete')
    .action(async (_opts: unknown, cmd: Command) => {
      // Loaded here, as `kura serve` loads it: the bundle keeps @kura/server outside (other verbs never load it).
      const { LOCAL_ACCESS, newMcpServer } = await import('@kura/server');
      const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
      const embedder = await embedderFor(undefined);
      const store = await openStore(storeDir(cmd), { readonly: false, requireEncryption: passwordConfigured(cmd) }, () => storePassword(cmd));
      if (embedder) store.useEmbedder(embedder);
      store.useReranker(configuredReranker(process.env)); // KURA_RERANK_URL: the first hits reranked
      const server = await newMcpServer(store, LOCAL_ACCESS);
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = () => resolve();
      });
      // Room for the largest message a tool takes: kura_add_text's 16 MiB of text, as JSON
      // writes it (a control character takes 6 bytes). The SDK's 10 MiB ended the session on a
      // text the tool accepts, without a word, exit 0 (a trial).
      const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: MESSAGE_MAX });
      let ended = false;
      let failure: Error | undefined;
      // Said on stderr (stdout is the protocol's): a message the server cannot read, or why it stopped.
      transport.onerror = (e: Error) => {
        failure = e;
        process.stderr.write(`kura: mcp: ${e.message}\n`);
      };
      await server.connect(transport);
      process.stdin.once('end', () => {
        ended = true;
        void server.close();
      });
      await closed;
      await store.close();
      await embedder?.close();
      // Closed before its client ended the input: the session failed (a message too large).
      if (!ended && failure) {
        process.stderr.write('kura: mcp: the session ended on that error\n');
        process.exitCode = 1;
      }
    });
}
